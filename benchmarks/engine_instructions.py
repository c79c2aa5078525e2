"""Engine efficiency: emulated instructions per MAC on the Cortex-M4F build under QEMU.

Builds the firmware for ``mps2-an386`` (and the port's smoke program), runs it under
``qemu-system-arm -icount shift=0`` and, for each of the three bundled INT8 models,
uploads the model and a seeded input, runs ``eb-infer N W layers`` and converts the
25 MHz counter's ticks into emulated instructions:

    with -icount shift=S each emulated instruction advances virtual time by 2**S ns;
    one tick of the 25 MHz counter is 40 ns; so 1 tick = 40 / 2**S instructions
    (40 at shift 0).

That relation is checked first with a loop of known length (``cal N`` of the smoke
program runs exactly 2*N Thumb instructions between two counter reads). MACs come
from ``edgebench.runtime.inspect.inspect_model`` (total and per layer). Targets (issue
12, with the DSP kernel set of firmware/core/kernels/dsp/): at most 2.0 instructions
per MAC for the whole KWS and ResNet-8 models, at most 3.0 for the depthwise layers
(hand-tuned SIMD libraries such as CMSIS-NN reach about 1 on convolutions).

These are EMULATED instruction counts: QEMU neither models the M4's pipeline,
wait states nor multi-cycle instructions, so they are not cycles of a real board.

    .venv/bin/python benchmarks/engine_instructions.py [--json] [--build DIR] [--port mps2-an386]

(--port mps2-an500: the Cortex-M7 build; netduinoplus2: the qemu-f405 build, whose 48 KiB
upload buffer takes digits and KWS only, without the loop calibration. --all-rows: the pointwise
kernel executes the output channels whose weights are all zero too, which it otherwise skips
(their outputs are constants); MACs are the model's in both cases.)
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

import numpy as np
from mcu_models import MODELS, ROOT

sys.path.insert(0, str(ROOT))

from edgebench.mcu import OP_NAMES, convert  # noqa: E402
from edgebench.mcu.protocol import DutClient  # noqa: E402
from edgebench.mcu.qemu import QemuBoard  # noqa: E402
from edgebench.runtime.inspect import inspect_model  # noqa: E402

SHIFT = 0
#: instructions per MAC: whole models, and per operator (all its layers together)
MODEL_TARGETS = {"kws (DS-CNN)": 2.0, "resnet8": 2.0}
OP_TARGETS = {"DEPTHWISE_CONV_2D": 3.0}


#: ports without the MPS2 smoke program: the -icount relation is taken as QEMU documents it
#: (the TIM2 counter of netduinoplus2 is prescaled to 25 MHz of virtual time), not re-checked
UNCALIBRATED = ("netduinoplus2",)


def build(port: str, build_dir: Path, cppflags: str = "") -> dict:
    """The firmware (and smoke program) of ``port``; ``cppflags`` (--all-rows) goes to make as
    CPPFLAGS only when given: a command-line CPPFLAGS overrides the port's and the environment's."""
    fw, smoke = build_dir / port, build_dir / f"{port}-smoke"
    extra = [f"CPPFLAGS={cppflags}"] if cppflags else []
    subprocess.run(["make", "-s", "-C", str(ROOT / "firmware"), "-j2", f"PORT={port}", f"BUILD={fw}", *extra],
                   check=True, stdout=subprocess.DEVNULL)
    if port in UNCALIBRATED:
        return {"firmware": fw / "eb-firmware.elf", "smoke": None}
    subprocess.run(["make", "-s", "-C", str(ROOT / "firmware/ports/mps2-common/smoke"), f"PORT={port}",
                    f"BUILD={smoke}"], check=True, stdout=subprocess.DEVNULL)
    return {"firmware": fw / "eb-firmware.elf", "smoke": smoke / "smoke.elf"}


def calibrate(port: str, smoke_elf: Path | None) -> dict:
    """Instructions per tick from two loops of 2*N instructions (the slope removes overheads)."""
    import serial

    if smoke_elf is None:
        expected = QemuBoard(port, "unused.elf", icount_shift=SHIFT).instructions_per_tick
        return {"loop_instructions": {}, "instructions_per_tick": expected, "expected": expected,
                "calibrated": False}

    with QemuBoard(port, smoke_elf, icount_shift=SHIFT) as board:
        with serial.Serial(board.pty_path, 115200, timeout=30) as tty:
            ticks = {}
            for n in (1_000_000, 5_000_000):
                tty.write(b"cal %d%%" % n)
                m = re.search(rb"m-smoke-cal-\[(\d+),(\d+)\]", tty.read_until(b"m-ready\r\n"))
                ticks[n] = int(m.group(2))
    (n1, t1), (n2, t2) = sorted(ticks.items())
    measured = 2 * (n2 - n1) / (t2 - t1)
    return {"loop_instructions": {str(2 * n): t for n, t in ticks.items()},
            "instructions_per_tick": measured,
            "expected": board.instructions_per_tick}


def measure(port: str, elf: Path, ipt: float, n: int, warmup: int) -> list:
    results = []
    with QemuBoard(port, elf, icount_shift=SHIFT) as board:
        client = DutClient(board.pty_path, timeout_s=120, name=port)
        try:
            client.sync()
            limit = client.info()["model-max-bytes"]
            for name, path in MODELS.items():
                blob = convert(path)
                if len(blob.data) > limit:
                    print(f"{name}: blob of {len(blob.data):,} bytes > the {port} upload buffer of {limit:,}: "
                          "skipped", file=sys.stderr)
                    continue
                report = inspect_model(str(path))
                client.upload("model", blob.data)
                client.load_model()
                x = np.random.default_rng(1).integers(-128, 128, blob.input["bytes"], dtype=np.int8)
                client.upload("input", x.tobytes())
                run = client.eb_infer(n, warmup, layers=True)
                results.append(summarise(name, blob, report, run, ipt))
        finally:
            client.close()
    return results


def summarise(name, blob, report, run, ipt) -> dict:
    ticks = run["ticks"]
    insp = [(layer.op, int(layer.macs or 0)) for layer in report.layers]
    engine_ops = [layer["op"] for layer in blob.layers]
    if [op for op, _ in insp] != engine_ops:
        raise SystemExit(f"{name}: layer lists differ between inspect_model ({insp}) and the blob "
                         f"({engine_ops}); cannot attribute MACs per layer")
    if len(run["layers"]) != len(insp):
        raise SystemExit(f"{name}: the device timed {len(run['layers'])} layers, the model has {len(insp)}")
    per_layer, by_op = [], defaultdict(lambda: {"ticks": 0, "macs": 0, "layers": 0})
    for dev, (op, macs) in zip(run["layers"], insp):
        dev_op = OP_NAMES.get(int(dev["op"]), dev["op"]) if str(dev["op"]).isdigit() else dev["op"]
        if dev_op != op:
            raise SystemExit(f"{name}: device layer {dev['layer']} is {dev_op}, expected {op}")
        insns = dev["ticks"] * ipt
        per_layer.append({"layer": dev["layer"], "op": op, "macs": macs, "ticks": dev["ticks"],
                          "instructions": insns, "instructions_per_mac": insns / macs if macs else None})
        agg = by_op[op]
        agg["ticks"] += dev["ticks"]
        agg["macs"] += macs
        agg["layers"] += 1
    for agg in by_op.values():
        agg["instructions"] = agg["ticks"] * ipt
        agg["instructions_per_mac"] = agg["instructions"] / agg["macs"] if agg["macs"] else None
    total_insns = min(ticks) * ipt
    return {"model": name, "macs": report.macs, "ticks_per_inference": ticks,
            "instructions_per_inference": total_insns,
            "instructions_per_mac": total_insns / report.macs,
            "layers_ticks_sum": sum(x["ticks"] for x in per_layer),
            "by_op": dict(by_op), "layers": per_layer,
            "peak_arena_bytes": blob.peak_arena_bytes, "blob_bytes": blob.flash_bytes}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", default="mps2-an386", choices=["mps2-an386", "mps2-an500", "netduinoplus2"])
    ap.add_argument("--build", type=Path, help="build directory (default: a temporary one)")
    ap.add_argument("-n", type=int, default=3, help="timed inferences per model")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--all-rows", action="store_true",
                    help="a measurement build (-DEB_PW_ALL_ROWS=1) whose pointwise kernel treats no output channel "
                         "as dead (all-zero weights), so every MAC of the model is executed")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        elves = build(args.port, args.build or Path(tmp), "-DEB_PW_ALL_ROWS=1" if args.all_rows else "")
        cal = calibrate(args.port, elves["smoke"])
        ipt = cal["instructions_per_tick"]
        results = measure(args.port, elves["firmware"], ipt, args.n, args.warmup)

    doc = {"port": args.port, "timing": "emulated", "qemu_icount_shift": SHIFT, "all_rows": args.all_rows,
           "counter_hz": 25_000_000, "calibration": cal, "models": results,
           "targets": {"models": MODEL_TARGETS, "ops": OP_TARGETS}}
    if args.json:
        print(json.dumps(doc, indent=2))
        return 0
    print(f"{args.port} under qemu-system-arm -icount shift={SHIFT} (EMULATED instruction counts, "
          f"not cycles of a real board)")
    if cal.get("calibrated", True):
        print(f"calibration: a loop of known length gives {ipt:.3f} instructions per 25 MHz tick "
              f"(expected {cal['expected']:g}); {cal['loop_instructions']}")
    else:
        print(f"calibration: none on {args.port} (no smoke program): {ipt:g} instructions per 25 MHz tick "
              "as QEMU's -icount defines it")
    def mark(value, target):
        if target is None or value is None:
            return ""
        return f"  ok (<= {target:g})" if value <= target else f"  ABOVE TARGET {target:g}"

    for r in results:
        spread = max(r["ticks_per_inference"]) - min(r["ticks_per_inference"])
        print(f"\n{r['model']}: {r['macs']:,} MACs, {r['instructions_per_inference']:,.0f} instructions "
              f"per inference = {r['instructions_per_mac']:.2f} instructions/MAC"
              f"{mark(r['instructions_per_mac'], MODEL_TARGETS.get(r['model']))} "
              f"(ticks {r['ticks_per_inference']}, spread {spread}; per-layer sum {r['layers_ticks_sum']})")
        for op, agg in sorted(r["by_op"].items(), key=lambda kv: -kv[1]["ticks"]):
            ipm = agg["instructions_per_mac"]
            per = f"{ipm:6.2f} instr/MAC" if ipm is not None else "      (no MACs)"
            print(f"  {op:18s} x{agg['layers']:<2d} {agg['macs']:>10,} MACs {agg['instructions']:>13,.0f} instr "
                  f"{per}{mark(ipm, OP_TARGETS.get(op))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
