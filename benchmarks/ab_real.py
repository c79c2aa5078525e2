"""Real A/B across invocations: does `bench A B --rounds 4` see a 5% and a 10% regression, and not an A/A?

Builds three seeded conv nets with Keras (16x16x3 input, conv 16 -> conv C -> conv 32, 3x3, same
padding, global pooling, dense 10), converts each to full-integer INT8 with the TFLite converter
(seeded calibration), and counts their MACs with ``edgebench inspect``'s counter. C = 160 is the
base; C = 168 and 176 are 5.0% and 9.9% more MACs (multiples of 8: a first try with C = 64 / 67 /
71 measured +14.5% latency for +4.6% MACs, XNNPACK's kernels padding the odd channel count). Then runs, as a user would type them, in one
runs folder:

- ``bench BASE C168 --rounds 4 --cpus 0 --max-slowdown 1.05 --json``
- ``bench BASE C176 --rounds 4 --cpus 0 --max-slowdown 1.05 --json``
- ``bench BASE BASE --rounds 4 --cpus 0 --max-slowdown 1.05 --json`` (A/A: the same model twice)

and prints per pair: the MAC ratio, the B/A ratio with its interval, the verdict, the minimum
detectable ratio, the gate's state and exit status, and the load average (1 min) before and after.
Every figure is ``measured`` on this machine (host board, XNNPACK, 1 thread, pinned to CPU 0).

Run: .venv/bin/python benchmarks/ab_real.py [--rounds 4] [--cpus 0] [--max-time 6] [--out DIR] [--aa-only]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tflite_int8 import int8_tflite

ROOT = Path(__file__).resolve().parents[1]
BASE, WIDTHS = 160, (160, 168, 176)   # multiples of 8: XNNPACK's kernels pad odd channel counts
SIDE = 16


def build(width: int, out: Path, seed: int = 7) -> Path:
    """A seeded conv net with ``width`` channels in the middle, as INT8 .tflite."""
    import numpy as np
    import tensorflow as tf

    tf.keras.utils.set_random_seed(seed)
    inp = tf.keras.Input((SIDE, SIDE, 3))
    x = tf.keras.layers.Conv2D(16, 3, padding="same", activation="relu")(inp)
    x = tf.keras.layers.Conv2D(width, 3, padding="same", activation="relu")(x)
    x = tf.keras.layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = tf.keras.layers.GlobalAveragePooling2D()(x)
    model = tf.keras.Model(inp, tf.keras.layers.Dense(10)(x))
    calib = np.random.default_rng(seed).random((32, SIDE, SIDE, 3), dtype=np.float32)
    path = out / f"conv{width}_int8.tflite"
    path.write_bytes(int8_tflite(model, calib))
    return path


def gate_state(gate: dict) -> str:
    """How a `--max-slowdown` gate of edgebench's --json ended, in words."""
    return "FAILED" if gate["failed"] else "CANNOT DECIDE" if gate["undecided"] else "passed"


def macs(path: Path) -> int:
    from edgebench.runtime.inspect import inspect_model

    return inspect_model(path).macs


def rounds(a: Path, b: Path, args, runs: Path) -> dict:
    cmd = [sys.executable, "-m", "edgebench", "bench", str(a), str(b), "--rounds", str(args.rounds),
           "--max-slowdown", "1.05", "--json", "--runs-dir", str(runs), "--max-time", str(args.max_time),
           "--repeat", "3", "--seed", "0"]
    if args.cpus:
        cmd += ["--cpus", args.cpus]
    load0 = os.getloadavg()[0]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    load1 = os.getloadavg()[0]
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        raise SystemExit(f"bench failed ({p.returncode}): {p.stderr[-2000:]}") from None
    return {"doc": doc, "rc": p.returncode, "load": (load0, load1), "err": p.stderr.strip().splitlines()[-1:]}


def aa_sets(model: Path, args, runs: Path) -> int:
    """``args.aa_sets`` A/A round sets of one model: how many are called different, how many gates fail."""
    called = failed = undecided = 0
    print(f"A/A: {args.aa_sets} sets of {args.rounds} rounds of {model.name} against itself (measured, host board, "
          f"cpus {args.cpus})")
    for k in range(1, args.aa_sets + 1):
        res = rounds(model, model, args, runs)
        r, g = res["doc"]["result"], res["doc"]["gate"]
        called += r["verdict"] in ("B larger", "B smaller")
        failed += g["failed"]
        undecided += g["undecided"]
        print(f"set {k}: B/A {r['ratio']:.4f} (95% CI {r['ci_low']:.4f}-{r['ci_high']:.4f}) {r['verdict']}; "
              f"MDE {r['mde']['percent']:.1f}%; gate 1.05 exit {res['rc']}; load avg {res['load'][0]:.2f} -> "
              f"{res['load'][1]:.2f}")
        sys.stdout.flush()
    print(f"A/A sets called different: {called} of {args.aa_sets}; gates failed: {failed}; cannot decide: {undecided}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--cpus", default="0")
    ap.add_argument("--max-time", type=float, default=6.0)
    ap.add_argument("--out", default=None, help="folder for the models and the runs (default: a temporary one)")
    ap.add_argument("--aa-only", action="store_true", help="the A/A pair only")
    ap.add_argument("--aa-sets", type=int, default=0,
                    help="instead: this many A/A round sets of the base model, counting verdicts and failed gates")
    args = ap.parse_args(argv)
    out = Path(args.out or tempfile.mkdtemp(prefix="ab-real-"))
    out.mkdir(parents=True, exist_ok=True)
    models = {w: out / f"conv{w}_int8.tflite" for w in WIDTHS}
    for w, p in models.items():
        if not p.exists():
            build(w, out)
    base_macs = macs(models[BASE])
    if args.aa_sets:
        return aa_sets(models[BASE], args, out / "runs")
    pairs = [("A/A", BASE, BASE)] if args.aa_only else [("+10%", BASE, 176), ("+5%", BASE, 168), ("A/A", BASE, BASE)]
    print(f"models in {out}; base {base_macs:,} MACs; rounds {args.rounds}, cpus {args.cpus}, "
          f"max-time {args.max_time} s per side per round (measured, host board)")
    for name, wa, wb in pairs:
        res = rounds(models[wa], models[wb], args, out / "runs")
        r, g = res["doc"]["result"], res["doc"]["gate"]
        state = gate_state(g)
        print(f"{name:5s} MACs B/A {macs(models[wb]) / base_macs:.3f}: B/A latency {r['ratio']:.4f} "
              f"(95% CI {r['ci_low']:.4f}-{r['ci_high']:.4f}) {r['verdict']}; MDE {r['mde']['percent']:.1f}%; "
              f"gate 1.05 {state} (exit {res['rc']}); blocks {', '.join(f'{x:.3f}' for x in r['block_ratios'])}; "
              f"load avg {res['load'][0]:.2f} -> {res['load'][1]:.2f}; {res['doc']['elapsed_s']:.0f} s")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
