"""Start-up time of the CLI: `edgebench --help` and `edgebench boards` (goal < 0.3 s each).

Runs each command as a whole process several times and prints min / median / max,
plus which heavy modules (tensorflow, matplotlib, pandas, scipy, numpy) got imported.

    .venv/bin/python benchmarks/startup.py [--runs 15]
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

HEAVY = ("tensorflow", "matplotlib", "pandas", "scipy", "numpy", "ai_edge_litert")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    for argv in (["--help"], ["boards"], ["boards", "--json"]):
        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "edgebench", *argv], capture_output=True, check=True)
            times.append(time.perf_counter() - t0)
        code = ("import sys\nfrom edgebench.cli.app import main\ntry:\n    main(%r)\nexcept SystemExit:\n    pass\n"
                "print('HEAVY:' + ','.join(m for m in %r if m in sys.modules))" % (argv, HEAVY))
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
        heavy = next((ln[6:] for ln in out.splitlines() if ln.startswith("HEAVY:")), "?")
        print(f"edgebench {' '.join(argv):14s} min {min(times):.3f} s  median {statistics.median(times):.3f} s  "
              f"max {max(times):.3f} s  (goal < 0.3 s; heavy imports: {heavy or 'none'})")


if __name__ == "__main__":
    main()
