"""Footprint of the firmware's Cortex-M4F build, and the peak arena of each model.

Builds ``firmware`` for ``mps2-an386`` (and, for comparison, ``mps2-an500``) with a
linker map, then reports:

* ``arm-none-eabi-size``: text / data / bss of the image;
* where the text comes from (engine, protocol core, port, newlib-nano, libgcc),
  from the linker map after section garbage collection;
* what the bss is: the core's three static buffers (model blob, tensor arena,
  input; sized by the port: firmware/ports/mps2-common/mps2.mk) and the rest;
* per model (the three bundled INT8 models), from the host-side blob converter
  (``edgebench.mcu.convert``): blob bytes (what sits in the model buffer: flash on
  a board that links it in), planned peak arena, the lower bound no plan can beat,
  and the RAM a build sized exactly for that model would need;
* the stack's high-water mark after running all three models under QEMU (the
  port paints the unused stack at reset; the QEMU monitor reads it back).

    .venv/bin/python benchmarks/firmware_footprint.py [--json] [--build DIR]
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from mcu_models import MODELS as ALL_MODELS
from mcu_models import ROOT

sys.path.insert(0, str(ROOT))

from edgebench.mcu import convert  # noqa: E402
from edgebench.mcu.protocol import DutClient  # noqa: E402
from edgebench.mcu.qemu import QemuBoard  # noqa: E402

MODELS = {name: ALL_MODELS[name] for name in ("digits", "kws (DS-CNN)", "resnet8")}
BUFFERS = ("eb_model_buf", "eb_arena", "eb_input_buf")
STACK_BYTES = 0x10000  # __stack_size in firmware/ports/mps2-common/mps2_sections.ld
STACK_PAINT = bytes.fromhex("c35ac35a")  # 0x5AC35AC3 little-endian, painted at reset (startup.c)

_OUT_SECTION = re.compile(r"^(\.\S+)\s+0x[0-9a-f]+\s+0x[0-9a-f]+")
_INPUT = re.compile(r"^ (\.\S+|COMMON)\s*(?:\n\s+)?\s*0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", re.M)


def build(port: str, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run(["make", "-s", "-C", str(ROOT / "firmware"), "-j2", f"PORT={port}", f"BUILD={out}",
                    f"LDFLAGS=-Wl,-Map={out}/eb-firmware.map"], check=True, stdout=subprocess.DEVNULL)
    # LDFLAGS changes nothing the Makefile tracks: relink if the map is older than the image.
    elf = out / "eb-firmware.elf"
    if not (out / "eb-firmware.map").is_file():
        elf.unlink()
        return build(port, out)
    return elf


def size(elf: Path) -> dict:
    text = subprocess.run(["arm-none-eabi-size", "-A", "-d", str(elf)], check=True, capture_output=True,
                          text=True).stdout
    berkeley = subprocess.run(["arm-none-eabi-size", str(elf)], check=True, capture_output=True,
                              text=True).stdout.splitlines()[1].split()
    sections = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0].startswith(".") and parts[1].isdigit():
            sections[parts[0]] = int(parts[1])
    return {"text": int(berkeley[0]), "data": int(berkeley[1]), "bss": int(berkeley[2]),
            "sections": sections}


def group_of(obj: str) -> str:
    if "libgcc.a" in obj:
        return "libgcc (soft double, 64-bit division)"
    if "libc_nano.a" in obj or "libc.a" in obj or "libm.a" in obj:
        return "newlib-nano"
    name = Path(obj.split("(")[0]).name
    if "/core/ops/" in obj or "/core/kernels/" in obj or name.startswith(("eb_engine", "eb_layer", "eb_ops",
                                                                           "eb_conv_util", "eb_rescale")):
        return "engine (eb_engine, eb_layer, eb_ops, ops/, kernels/)"
    if "/ports/" in obj:
        return "port (mps2-common)"
    if name.startswith("eb_"):
        return "protocol core (eb_proto, eb_main, eb_crc32)"
    return "other"


def text_by_group(map_path: Path) -> dict:
    """Bytes of each group in the image's code RAM (.text incl. rodata, vectors, exidx)."""
    body = map_path.read_text(errors="replace")
    body = body[body.index("Linker script and memory map"):]
    groups: dict = defaultdict(int)
    current = None
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _OUT_SECTION.match(line)
        if m or (line.startswith(".") and i + 1 < len(lines) and lines[i + 1].startswith(" " * 16 + "0x")):
            current = line.split()[0]
        elif line.startswith(" ."):
            joined = line if len(line.split()) >= 4 else line + "\n" + (lines[i + 1] if i + 1 < len(lines) else "")
            mi = _INPUT.match(joined)
            if mi and current in (".text", ".ARM.exidx", ".ARM.extab", ".init_array", ".fini_array",
                                  ".preinit_array"):
                groups[group_of(mi.group(4))] += int(mi.group(3), 16)
            if len(line.split()) < 4:
                i += 1
        i += 1
    return dict(groups)


def symbols(elf: Path) -> dict:
    out = subprocess.run(["arm-none-eabi-nm", "-S", str(elf)], check=True, capture_output=True,
                         text=True).stdout
    sizes = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4:
            sizes[parts[3]] = int(parts[1], 16)
    return sizes


def stack_high_water(elf: Path, blobs: dict) -> dict:
    """Deepest stack use under QEMU after loading and running each model (with
    per-layer timing): the unpainted part of the stack region, read with the QEMU
    monitor. Returns {model: bytes used so far} (cumulative maximum)."""
    syms = {}
    out = subprocess.run(["arm-none-eabi-nm", str(elf)], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            syms[parts[2]] = int(parts[0], 16)
    limit, top = syms["__stack_limit"], syms["__stack_top"]
    used = {}
    with QemuBoard("mps2-an386", elf, icount_shift=0) as board:
        client = DutClient(board.pty_path, timeout_s=120)
        try:
            client.sync()
            for name, blob in blobs.items():
                client.upload("model", blob.data)
                client.load_model()
                client.upload("input", bytes(blob.input["bytes"]))
                client.eb_infer(1, 0, layers=True)
                client.output()
                mem = board.read_memory(limit, top - limit)
                untouched = 0
                while mem[untouched:untouched + 4] == STACK_PAINT:
                    untouched += 4
                used[name] = (top - limit) - untouched
        finally:
            client.close()
    return used


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", type=Path, help="build directory (default: a temporary one)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    doc: dict = {"ports": {}, "models": {}}
    with tempfile.TemporaryDirectory() as tmp:
        base = args.build or Path(tmp)
        for port in ("mps2-an386", "mps2-an500"):
            elf = build(port, base / f"footprint-{port}")
            sz = size(elf)
            syms = symbols(elf)
            buffers = {b: syms.get(b, 0) for b in BUFFERS}
            doc["ports"][port] = {
                **sz, "text_by_group": text_by_group(elf.with_suffix(".map")),
                "buffers": buffers, "bss_other": sz["bss"] - sum(buffers.values()),
                "stack_reserved": STACK_BYTES}

        blobs = {name: convert(path) for name, path in MODELS.items()}
        stack_used = stack_high_water(base / "footprint-mps2-an386" / "eb-firmware.elf", blobs)

    m4 = doc["ports"]["mps2-an386"]
    m4["stack_high_water"] = stack_used
    stack_need = -(-max(stack_used.values()) // 1024) * 1024  # measured high-water, rounded up to 1 KiB
    fixed_ram = m4["data"] + m4["bss_other"] + stack_need
    for name, blob in blobs.items():
        doc["models"][name] = {
            "blob_bytes": blob.flash_bytes, "constant_bytes": blob.constant_bytes,
            "peak_arena_bytes": blob.peak_arena_bytes, "arena_lower_bound_bytes": blob.arena_lower_bound_bytes,
            "input_bytes": blob.input["bytes"], "output_bytes": blob.output["bytes"], "macs": blob.macs,
            # RAM of an M4 build with its three buffers sized exactly for this model
            # and the stack cut to its measured high-water mark (rounded up to 1 KiB).
            "right_sized_ram_bytes": fixed_ram + blob.flash_bytes + blob.peak_arena_bytes + blob.input["bytes"],
        }
    if args.json:
        print(json.dumps(doc, indent=2))
        return 0

    for port, p in doc["ports"].items():
        print(f"{port}: text {p['text']:,}  data {p['data']:,}  bss {p['bss']:,} bytes "
              f"(arm-none-eabi-size; -O2, gc-sections, newlib-nano)")
        if port != "mps2-an386":
            continue
        for group, n in sorted(p["text_by_group"].items(), key=lambda kv: -kv[1]):
            print(f"    text  {n:>8,}  {group}")
        for b, n in p["buffers"].items():
            print(f"    bss   {n:>8,}  {b}")
        print(f"    bss   {p['bss_other']:>8,}  everything else (protocol state, layer timings, reply buffer)")
        print(f"    stack {STACK_BYTES:>8,}  reserved at the top of data RAM (not in bss); deepest use "
              f"measured under QEMU: {max(p['stack_high_water'].values()):,} bytes "
              f"(after {', '.join(p['stack_high_water'])})")
    print(f"\nper model (edgebench.mcu.convert; right-sized RAM = data + other bss + measured stack "
          f"rounded up to 1 KiB = {fixed_ram:,}, + blob + arena + input):")
    print(f"  {'model':14s} {'blob':>9s} {'peak arena':>11s} {'lower bound':>12s} {'input':>6s} {'right-sized RAM':>16s}")
    for name, m in doc["models"].items():
        print(f"  {name:14s} {m['blob_bytes']:>9,} {m['peak_arena_bytes']:>11,} "
              f"{m['arena_lower_bound_bytes']:>12,} {m['input_bytes']:>6,} {m['right_sized_ram_bytes']:>16,}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
