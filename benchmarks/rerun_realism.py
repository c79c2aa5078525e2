"""Does the headline interval contain what a re-run gives? Separate `edgebench bench` invocations.

Runs ``--runs`` separate default ``edgebench bench`` commands (each a new process, as a user
would type them) on the host board pinned to one CPU, then counts in how many the printed
95% interval of the end-to-end median contains the median of the other runs' medians, and
compares the interval widths with the spread of the medians. ``--repeat 1`` shows what a
single run's interval (within-run uncertainty only) would claim.

By default every invocation uses one runs folder, as a user re-running a command does, so
invocation i combines the i - 1 before it (sessions, docs/statistics.md); ``--fresh`` gives
each invocation a folder of its own (nothing on record: the invocation's interval alone).
Also counted: whether each invocation's re-run prediction interval holds the next
invocation's median.

Run: .venv/bin/python benchmarks/rerun_realism.py [--runs 8] [--repeat 3] [--fresh] [--model M]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=None, help="pass --repeat to bench (default: bench's own)")
    ap.add_argument("--model", default=str(ROOT / "models" / "digits" / "digits_int8.tflite"))
    ap.add_argument("--cpus", default="0")
    ap.add_argument("--fresh", action="store_true", help="a new runs folder per invocation (no earlier sessions)")
    args = ap.parse_args(argv)
    exe = Path(sys.executable).with_name("edgebench")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            runs_dir = Path(tmp) / (str(i) if args.fresh else "runs")
            cmd = [str(exe), "bench", args.model, "--board", "host", "--cpus", args.cpus, "--json",
                   "--runs-dir", str(runs_dir)]
            if args.repeat:
                cmd += ["--repeat", str(args.repeat)]
            t0 = time.monotonic()
            out = subprocess.run(cmd, capture_output=True, text=True, check=True)
            wall = time.monotonic() - t0
            e2e = json.loads(out.stdout)["latency"]["e2e"]
            rows.append((e2e["median_s"], e2e["ci_low_s"], e2e["ci_high_s"], e2e.get("runs", 1), wall,
                         e2e.get("rerun_low_s"), e2e.get("rerun_high_s")))
            print(f"invocation {i + 1}: median {e2e['median_s'] * 1e6:.3f} µs, CI {e2e['ci_low_s'] * 1e6:.3f}–"
                  f"{e2e['ci_high_s'] * 1e6:.3f} µs ({e2e.get('runs', 1)} runs, {e2e.get('sessions', 1)} sessions), "
                  f"{wall:.1f} s", flush=True)
    hits = 0
    for i, (_m, lo, hi, *_rest) in enumerate(rows):
        others = statistics.median(r[0] for j, r in enumerate(rows) if j != i)
        hits += lo <= others <= hi
    pred = [(r[5] <= nxt[0] <= r[6]) for r, nxt in zip(rows, rows[1:]) if r[5] is not None]
    medians = [r[0] for r in rows]
    spread = (max(medians) - min(medians)) / statistics.median(medians)
    widths = [(r[2] - r[1]) / r[0] for r in rows]
    print(f"\n{hits} of {len(rows)} intervals contain the median of the other {len(rows) - 1} invocations")
    if pred:
        print(f"{sum(pred)} of {len(pred)} re-run prediction intervals contain the next invocation's median")
    print(f"medians spread {100 * spread:.2f}% (max-min over median); interval widths (high-low over median) "
          f"median {100 * statistics.median(widths):.2f}%, range {100 * min(widths):.2f}–{100 * max(widths):.2f}%")
    walls = [r[4] for r in rows]
    print(f"time to answer: median {statistics.median(walls):.1f} s, max {max(walls):.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
