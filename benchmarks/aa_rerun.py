"""A/A on this machine: does `compare` call differences between invocations of the same bench?

Runs ``--invocations`` separate ``edgebench bench`` commands of one model (each a new process, as
a user re-running a command would type it) into ONE runs folder, then compares every consecutive
pair with ``edgebench compare A B --max-slowdown 1.05 --json`` and counts, over all consecutive
pairs and over the disjoint ones (1-2, 3-4, ...: consecutive pairs share a run, so only the
disjoint ones are independent trials),

- verdicts that call a difference ("faster"/"slower") between runs that differ in nothing
  (goal: at most 1 of 9 with ten invocations);
- ``--max-slowdown 1.05`` gates that fail (goal: 0);
- after exactly two invocations: the second's headline interval width against the spread of the
  two medians and against the first invocation's own width (goal: at most 3x either);
- the throughput each run stores against completed inferences / wall time recomputed from its
  ``samples.parquet`` (goal: within 1%).
- how far p50, p90 and p99 move between the repeats of one invocation (SD of the log figure, the
  median over invocations): whether this machine's tails move more than its medians.

Compares run after all invocations are on record (the between-invocation variation pooled from
all of them), as a CI job comparing a new build with the last one would.

Run: .venv/bin/python benchmarks/aa_rerun.py [--invocations 10] [--cpus 0] [--model M] [--runs-dir D]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def parquet_throughput(run_dir: Path) -> float:
    """Completed inferences / wall time of the measured windows, from the samples alone."""
    import pandas as pd

    f = pd.read_parquet(run_dir / "samples.parquet")
    f = f[f["phase"] == "measure"]
    wall = 0.0
    for _, g in f.groupby("repeat"):
        t = g["t_start_ns"].to_numpy()
        wall += (t[-1] + g["e2e_s"].to_numpy()[-1] * 1e9 - t[0]) / 1e9
    return len(f) / wall


QUANTILES = (0.5, 0.9, 0.99)


def repeat_spread(run_dir: Path) -> list:
    """Standard deviation over the run's repeats of the log p50, p90 and p99 (each repeat's measured
    samples): how much a tail moves between repeats against the median."""
    import numpy as np
    import pandas as pd

    f = pd.read_parquet(run_dir / "samples.parquet")
    per = f[f["phase"] == "measure"].groupby("repeat")["e2e_s"].quantile(list(QUANTILES)).unstack()
    return [float(v) for v in np.log(per).std(ddof=1).to_numpy()]


def row_of(r: dict, run_dir: Path) -> dict:
    """What the script keeps of one bench run: its headline and own intervals, throughput (stored and
    from the samples), sessions, load, and how its repeats' quantiles spread."""
    e2e = r["latency"]["e2e"]
    inv = e2e.get("invocation") or e2e
    return {"id": r["run_id"], "median": e2e["median_s"], "lo": e2e["ci_low_s"], "hi": e2e["ci_high_s"],
            "inv_lo": inv["ci_low_s"], "inv_hi": inv["ci_high_s"], "tp": r["throughput"]["per_s"],
            "tp_parquet": parquet_throughput(run_dir), "spread": repeat_spread(run_dir),
            "sessions": e2e.get("sessions"), "load": r["extra"].get("load_at_start")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--invocations", type=int, default=10)
    ap.add_argument("--model", default=str(ROOT / "models" / "digits" / "digits_int8.tflite"))
    ap.add_argument("--cpus", default="0")
    ap.add_argument("--runs-dir", default=None, help="default: a fresh temporary folder")
    ap.add_argument("--max-slowdown", type=float, default=1.05)
    ap.add_argument("--compare-only", action="store_true",
                    help="compare the bench runs already in --runs-dir (oldest first) instead of running new ones")
    args = ap.parse_args(argv)
    exe = Path(sys.executable).with_name("edgebench")
    tmp = tempfile.TemporaryDirectory() if args.runs_dir is None else None
    runs_dir = Path(args.runs_dir or tmp.name)
    rows = []
    if args.compare_only:
        for p in sorted(runs_dir.glob("*/run.json")):
            r = json.loads(p.read_text())
            if r["kind"] != "bench" or r["status"] != "complete":
                continue
            rows.append(row_of(r, p.parent))
    for i in range(0 if args.compare_only else args.invocations):
        t0 = time.monotonic()
        out = subprocess.run([str(exe), "bench", args.model, "--board", "host", "--cpus", args.cpus, "--json",
                              "--runs-dir", str(runs_dir)], capture_output=True, text=True, check=True)
        r = json.loads(out.stdout)
        e2e = r["latency"]["e2e"]
        inv = e2e.get("invocation") or e2e
        d = next(p.parent for p in runs_dir.glob("*/run.json") if json.loads(p.read_text())["run_id"] == r["run_id"])
        rows.append(row_of(r, d))
        pq = rows[-1]["tp_parquet"]
        print(f"invocation {i + 1}: median {e2e['median_s'] * 1e6:.3f} µs, headline {e2e['ci_low_s'] * 1e6:.3f}–"
              f"{e2e['ci_high_s'] * 1e6:.3f} µs ({e2e.get('sessions')} sessions), own {inv['ci_low_s'] * 1e6:.3f}–"
              f"{inv['ci_high_s'] * 1e6:.3f} µs; throughput {r['throughput']['per_s']:,.0f}/s vs parquet "
              f"{pq:,.0f}/s; load {rows[-1]['load']}; {time.monotonic() - t0:.0f} s", flush=True)
    verdicts = gates = 0
    own_verdicts = own_gates = 0      # pairs 1-2, 3-4, ...: no run in two of them, independent trials
    for i, (a, b) in enumerate(zip(rows, rows[1:])):
        out = subprocess.run([str(exe), "compare", a["id"], b["id"], "--runs-dir", str(runs_dir), "--json",
                              "--max-slowdown", str(args.max_slowdown)], capture_output=True, text=True)
        c = json.loads(out.stdout)
        s = c["speedup"]
        called, failed = s["verdict"] != "no difference resolved", out.returncode == 2
        verdicts += called
        gates += failed
        if i % 2 == 0:
            own_verdicts += called
            own_gates += failed
        sess = c["variation"].get("session")
        print(f"compare {a['id'][:8]} {b['id'][:8]}: speed-up {s['ratio']:.3f} "
              f"({s['ci_low']:.3f}–{s['ci_high']:.3f}) "
              f"{s['verdict']}; gate {'FAILED' if out.returncode == 2 else 'passed'} (exit {out.returncode}); "
              f"between-invocation {sess['description'] if sess else '-'}",
              flush=True)
    pairs, own = len(rows) - 1, len(rows) // 2
    print(f"\nA/A: {verdicts} of {pairs} consecutive pairs called a difference; {gates} of {pairs} "
          f"--max-slowdown {args.max_slowdown:g} gates failed (consecutive pairs share a run: not independent)")
    print(f"A/A, disjoint pairs (1-2, 3-4, ...; independent): {own_verdicts} of {own} called a difference; "
          f"{own_gates} of {own} gates failed")
    if len(rows) >= 2:
        a, b = rows[0], rows[1]
        width = b["hi"] - b["lo"]
        spread = abs(a["median"] - b["median"])
        own = a["inv_hi"] - a["inv_lo"]
        print(f"after exactly two invocations: headline width {width * 1e6:.3f} µs = "
              f"{width / spread if spread else float('inf'):.1f}x the spread of the two medians "
              f"({spread * 1e6:.3f} µs), {width / own:.1f}x the first invocation's own width ({own * 1e6:.3f} µs), "
              f"{width / (a['hi'] - a['lo']):.2f}x the first invocation's headline width")
    dev = [abs(r["tp"] / r["tp_parquet"] - 1) for r in rows]
    print(f"throughput vs samples/wall time from the Parquet: largest difference {100 * max(dev):.3f}%")
    import numpy as np

    spread = np.median([r["spread"] for r in rows], axis=0)
    print("between-repeat SD of the log figure, median over the invocations (does a tail move more than the "
          "median?): " + ", ".join(f"p{100 * q:g} {v:.3f}" for q, v in zip(QUANTILES, spread)))
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
