"""Real end to end: does `edgebench check --max-slowdown 1.05` fail a 10% regression measured over
separate invocations, and leave an A/A pair alone?

Builds seeded INT8 conv nets with :mod:`benchmarks.ab_real`'s builder: the base (160 channels in
the middle, seed 7), a +9.9% MACs one (176 channels, seed 7) and an A/A twin (160 channels, seed 8:
the same architecture and MACs, other weights, so another model file and another measurement), and
with ``--pairs`` also a +5% MACs one (168 channels, seed 7).
For each pair it runs, as a user would type them, ``--invocations`` alternating invocations of
each model (A B A B ...) into one runs folder per pair, every one pinned with ``taskset -c 0``:

    taskset -c 0 python -m edgebench bench MODEL --runs-dir R --repeat 3 --max-time T --json

then ``edgebench check LAST_A LAST_B --runs-dir R --max-slowdown 1.05 --json`` (every session on
record of each side combined) and the same with ``--only-these`` (the last two runs alone), and
prints the exit status, the slowdown with its interval, the sessions per side and the MDE. Every
figure is ``measured`` on this machine (host board, one thread, CPU 0). Expected: the +10% pair
exits 2 (gate failed), the A/A pair exits 0 or 3 (never 2), the +5% pair exits 2 or prints an MDE above
5% (exit 3: the gate cannot decide).

With the base run twice (once per pair) its sessions on record differ between folders: each pair has
a runs folder of its own, as two unrelated CI pipelines would.

Run: .venv/bin/python benchmarks/check_real.py [--invocations 3] [--max-time 3] [--pairs +10%,A/A,+5%] [--out DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ab_real import build, gate_state, macs  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def edgebench(args: list, pin: bool = False) -> subprocess.CompletedProcess:
    cmd = (["taskset", "-c", "0"] if pin else []) + [sys.executable, "-m", "edgebench", *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)


def bench(model: Path, runs: Path, args) -> str:
    p = edgebench(["bench", str(model), "--runs-dir", str(runs), "--repeat", "3", "--max-time", str(args.max_time),
                   "--json"], pin=True)
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        raise SystemExit(f"bench failed ({p.returncode}): {p.stderr[-2000:]}") from None
    return doc["run_id"]


def check(a: str, b: str, runs: Path, only_these: bool) -> tuple:
    p = edgebench(["check", a, b, "--runs-dir", str(runs), "--max-slowdown", "1.05", "--json",
                   *(["--only-these"] if only_these else [])])
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        raise SystemExit(f"check failed ({p.returncode}): {p.stderr[-2000:]}") from None
    return p.returncode, doc["comparisons"][0]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--invocations", type=int, default=3, help="invocations of each model, alternating")
    ap.add_argument("--max-time", type=float, default=3.0)
    ap.add_argument("--out", default=None, help="folder for the models and the runs (default: a temporary one)")
    ap.add_argument("--pairs", default="+10%,A/A", help="comma-separated, of +10%, A/A, +5%")
    args = ap.parse_args(argv)
    out = Path(args.out or tempfile.mkdtemp(prefix="check-real-"))
    (out / "twin").mkdir(parents=True, exist_ok=True)
    base = out / "conv160_int8.tflite"
    slow = out / "conv176_int8.tflite"
    five = out / "conv168_int8.tflite"
    twin = out / "twin" / "conv160_int8.tflite"
    # name: (A, B, B's middle width, B's seed, the pair's runs folder)
    pairs = {"+10%": (base, slow, 176, 7, "runs-ab"), "A/A": (base, twin, 160, 8, "runs-aa"),
             "+5%": (base, five, 168, 7, "runs-ab5")}
    chosen = [x.strip() for x in args.pairs.split(",") if x.strip()]
    unknown = [x for x in chosen if x not in pairs]
    if unknown:
        raise SystemExit(f"--pairs: unknown {', '.join(unknown)}; choose from {', '.join(pairs)}")
    todo = [(base, 160, 7)] + [(pairs[x][1], pairs[x][2], pairs[x][3]) for x in chosen]
    for p, w, seed in todo:
        if not p.exists():
            build(w, p.parent, seed=seed)
    print(f"models in {out}; MACs " + " / ".join(f"{p.name} {macs(p):,}" for p, _w, _s in todo) +
          f"; {args.invocations} alternating "
          f"invocations of each, --repeat 3, --max-time {args.max_time} s, taskset -c 0 (measured, host board)")
    for name in chosen:
        a, b = pairs[name][:2]
        runs = out / pairs[name][4]
        load0 = os.getloadavg()[0]
        ids = []
        for _ in range(args.invocations):
            ids.append((bench(a, runs, args), bench(b, runs, args)))
        load1 = os.getloadavg()[0]
        for only in (False, True):
            rc, c = check(ids[-1][0], ids[-1][1], runs, only)
            g, s = c["gate"], c["speedup"]
            na, nb = (len(c["sessions"]["baseline"]), len(c["sessions"]["candidate"])) if c["sessions"] else (1, 1)
            state = gate_state(g)
            print(f"{name:5s} {'--only-these' if only else 'all sessions'}: exit {rc}; slowdown B/A {g['slowdown']:.4f} "
                  f"(95% CI {g['slowdown_ci_low']:.4f}-{g['slowdown_ci_high']:.4f}) {s['verdict']}; {na} vs {nb} "
                  f"sessions; MDE {100 * (g['mde'] - 1):.1f}%; gate 1.05 {state}; load avg {load0:.2f} -> {load1:.2f}")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
