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


def main() -> int:
    bad = 0
    for where, name, value, note, verdict in rows():
        bad += verdict not in ("ok", "manual")
        print(f"{where:32} {name:26} {value:22} {verdict:8} {note}")
    print(f"{bad} problem(s)", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
