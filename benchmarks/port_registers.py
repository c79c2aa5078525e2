"""The registers each firmware port touches, each checked against the vendor SVD or named by its manual.

Reads the register headers of the ports (``firmware/ports/**/*_regs.h``): every ``#define`` of
an address (``REG32(0x...)``) or a bit field (``(N << P)``) carries a trailing comment that says
where it was checked:

* ``svd <file> <PERIPHERAL>.<REGISTER>[.<FIELD>]``: checked here against that SVD in pyOCD's
  ``pyocd/debug/svd/svd_data.zip`` (the address is the peripheral's base plus the register's
  offset; a field's mask is its bit offset and width, or the union of ``<FIELD>0``, ``<FIELD>1``…
  where the SVD splits it into numbered bits);
* ``rm <manual> <section>``, ``arm <manual> <section>``, ``ds <datasheet>``: not in that SVD (an
  L4+/F446-only bit, an Armv7-M core register): listed with its source.

Prints one line per define and exits 1 when a define has no source or an SVD check fails
(``tests/test_port_registers.py`` runs :func:`check`). Usage: ``python benchmarks/port_registers.py``.

``--model``: builds the NUCLEO-L4R5ZI image of this tree and of main ``3bb8176`` (the port before
issue 31 item 5, plus the ``eb_port_clock`` the core now calls), boots each on the unicorn board's
register model (``edgebench/mcu/l4r5_model.py``), with and without the LSE crystal, and prints
what ``eb-info`` says (clock, counter-hz, temperature sensor), the model's violations and the
host seconds from start to the answer: emulated, a register model, not silicon
(``tests/test_unicorn_l4r5_model.py`` uses :func:`build_l4r5_images` and :func:`boot_info`).
"""
from __future__ import annotations

import re
import sys
import zipfile
from pathlib import Path
from xml.etree import ElementTree as ET

PORTS = Path(__file__).resolve().parents[1] / "firmware" / "ports"
_DEFINE = re.compile(r"^#define\s+(\w+)\s+(.*?)\s*(?:/\*\s*(.*?)\s*\*/)?\s*$")
_ADDRESS = re.compile(r"REG32\((0x[0-9A-Fa-f]+)u?\)")
_FIELD = re.compile(r"^\((0x[0-9A-Fa-f]+|\d+)u\s*<<\s*(\d+)\)$")


def _svd(name: str, cache: dict):
    if name not in cache:
        import pyocd

        archive = Path(pyocd.__file__).parent / "debug" / "svd" / "svd_data.zip"
        with zipfile.ZipFile(archive) as z:
            root = ET.fromstring(z.read(f"{name}.svd"))
        cache[name] = {p.findtext("name"): p for p in root.iter("peripheral")}
    return cache[name]


def _register(periphs: dict, periph: str, reg: str):
    p = periphs[periph]
    src = periphs[p.get("derivedFrom")] if p.get("derivedFrom") else p
    for r in src.iter("register"):
        if r.findtext("name") == reg:
            return int(p.findtext("baseAddress"), 0), r
    raise KeyError(f"{periph}.{reg}")


def _field_mask(reg, field: str) -> int:
    fields = {f.findtext("name"): (int(f.findtext("bitOffset")), int(f.findtext("bitWidth")))
              for f in reg.iter("field")}
    chosen = [fields[field]] if field in fields else \
        [v for k, v in fields.items() if re.fullmatch(re.escape(field) + r"\d+", k)]
    if not chosen:
        raise KeyError(field)
    mask = 0
    for offset, width in chosen:
        mask |= ((1 << width) - 1) << offset
    return mask


def headers() -> list:
    """The register headers of the ports for real chips (the MPS2 ports' CMSDK peripherals are
    QEMU's FPGA images, documented in docs/firmware-ports.md, with no vendor SVD)."""
    return [h for h in sorted(PORTS.glob("**/*_regs.h")) if "mps2" not in h.parent.name]


def rows():
    """(header, define, value text, source, verdict) for every address or field define."""
    cache: dict = {}
    for header in headers():
        for line in header.read_text().splitlines():
            m = _DEFINE.match(line)
            if not m:
                continue
            name, value, note = m.group(1), m.group(2), m.group(3) or ""
            address, field = _ADDRESS.search(value), _FIELD.match(value)
            if not address and not field:
                continue
            where = str(header.relative_to(PORTS))
            if not note.startswith(("svd ", "rm ", "arm ", "ds ")):
                yield where, name, value, note, "NO SOURCE"
                continue
            if not note.startswith("svd "):
                yield where, name, value, note, "manual"
                continue
            svd, path = note.split()[1], note.split()[2].rstrip(":")
            parts = path.split(".")
            try:
                base, reg = _register(_svd(svd, cache), parts[0], parts[1])
                if address:
                    want = base + int(reg.findtext("addressOffset"), 0)
                    got = int(address.group(1), 16)
                    ok = got == want if "(n)" not in name else True
                    yield where, name, value, note, "ok" if ok else f"MISMATCH: SVD address {want:#010x}"
                else:
                    got = int(field.group(1), 0) << int(field.group(2))
                    want = _field_mask(reg, parts[2])
                    yield where, name, value, note, "ok" if got == want else f"MISMATCH: SVD mask {want:#010x}"
            except (KeyError, IndexError) as exc:
                yield where, name, value, note, f"MISMATCH: not in {svd}: {exc}"


def check() -> list:
    """The rows that failed (no source, or an SVD mismatch)."""
    return [r for r in rows() if r[4] not in ("ok", "manual")]


OLD_PORT = "3bb8176"
ROOT = PORTS.parents[1]
_CLOCK_SHIM = ('\nconst char *eb_port_clock(uint32_t *ppm, const char **fallback)\n'
               '{\n    *ppm = 0u;\n    *fallback = "none";\n    return "hsi";\n}\n')


def _make(port_dir: Path, build: Path) -> Path:
    import subprocess

    subprocess.run(["make", "-s", "-C", str(ROOT / "firmware"), "PORT=nucleo-l4r5zi", f"PORT_DIR={port_dir}",
                    f"BUILD={build}", "-j2"], check=True, capture_output=True, timeout=900)
    return build / "eb-firmware.elf"


def build_l4r5_images(tmp: Path) -> dict:
    """{"new": this tree's NUCLEO-L4R5ZI image, "old": OLD_PORT's port built against this core} in ``tmp``."""
    import subprocess

    ports = tmp / "ports"
    (ports / "l4r5-old").mkdir(parents=True, exist_ok=True)
    for shared in ("stm32-common", "cortex-m"):
        if not (ports / shared).exists():
            (ports / shared).symlink_to(PORTS / shared)
    for name in ("eb_port_l4r5.c", "stm32l4r5_regs.h", "port.mk", "memory.ld"):
        text = subprocess.run(["git", "-C", str(ROOT), "show", f"{OLD_PORT}:firmware/ports/nucleo-l4r5zi/{name}"],
                              check=True, capture_output=True, text=True).stdout
        (ports / "l4r5-old" / name).write_text(text + (_CLOCK_SHIM if name.endswith(".c") else ""))
    return {"new": _make(PORTS / "nucleo-l4r5zi", tmp / "new"), "old": _make(ports / "l4r5-old", tmp / "old")}


def boot_info(elf, **options):
    """(eb-info as a dict, the board's register model, host seconds) of ``elf`` on the unicorn board.
    The reply is read raw: the old image polls its ADC for seconds in the middle of it."""
    import time

    import serial

    from edgebench.mcu.protocol import _KV_RE
    from edgebench.mcu.unicorn_board import UnicornBoard

    board = UnicornBoard(elf, model_options=options)
    t0 = time.monotonic()
    pty = board.start()
    try:
        with serial.Serial(pty, 115200, timeout=0.2) as port:
            port.write(b"eb-info%")
            out, deadline = b"", time.monotonic() + 120
            while b"m-eb-loaded-" not in out and time.monotonic() < deadline:
                out += port.read(4096)
        info = {}
        for line in out.decode(errors="replace").splitlines():
            hit = _KV_RE.match(line.strip())
            if hit:
                info[hit.group(1)] = int(hit.group(2)) if hit.group(2).isdigit() else hit.group(2)
        return info, board.model, time.monotonic() - t0
    finally:
        board.stop()


def model_table() -> int:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        images = build_l4r5_images(Path(tmp))
        print("image  LSE      clock    fallback  counter-hz   temp  violations  host s  (emulated: unicorn "
              "register model, not silicon)")
        for which in ("old", "new"):
            for lse, options in (("2 ms", {}), ("absent", {"lse_startup_us": None})):
                info, model, secs = boot_info(images[which], **options)
                print(f"{which:6} {lse:8} {info.get('clock', '?'):8} {info.get('clock-fallback', '?'):9} "
                      f"{info.get('counter-hz', 0):>11,}  {info.get('temp', '?'):5} {len(model.violations):>10}  "
                      f"{secs:6.1f}")
                for v in dict.fromkeys(model.violations):
                    print(f"{'':17}- {v}")
    return 0


def main() -> int:
    if "--model" in sys.argv[1:]:
        return model_table()
    bad = 0
    for where, name, value, note, verdict in rows():
        bad += verdict not in ("ok", "manual")
        print(f"{where:32} {name:26} {value:22} {verdict:8} {note}")
    print(f"{bad} problem(s)", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
