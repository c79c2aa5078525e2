"""Progress in logs: what a default `edgebench bench` writes to stderr when stderr is a file, not a terminal.

Runs ``edgebench bench MODEL --board host`` (defaults otherwise) with stderr on a pipe (not a terminal, as
in a CI log), stamps each line as it arrives, and prints the number of lines on stderr and stdout, the
seconds between consecutive stderr lines (first line, median gap, longest gap, time to the end) and the
lines themselves. A stuck job and a slow one look alike when the longest gap is the whole run.

    .venv/bin/python benchmarks/progress_lines.py [--model models/digits/digits_int8.tflite] [--tree DIR]

``--tree DIR`` runs another checkout's code (``PYTHONPATH=DIR``), e.g. main's, for a before/after figure.
The machine may be shared: the load average is printed with the figures.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(model: Path, tree: Path, extra: list) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    env.pop("COLUMNS", None)
    with tempfile.TemporaryDirectory() as runs:
        argv = [sys.executable, "-m", "edgebench", "bench", str(model), "--board", "host", "--runs-dir", runs, *extra]
        t0 = time.monotonic()
        # cwd: not a checkout (``-m`` puts the current folder first on sys.path, before PYTHONPATH)
        p = subprocess.Popen(argv, env=env, cwd=runs, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        stamped: list = []

        def read_err():
            for line in p.stderr:
                stamped.append((time.monotonic() - t0, line.rstrip("\n")))

        reader = threading.Thread(target=read_err)
        reader.start()
        out = p.stdout.read()
        p.wait()
        reader.join()
        end = time.monotonic() - t0
    times = [t for t, _ in stamped]
    gaps = [b - a for a, b in zip([0.0] + times, times + [end])]
    return {"rc": p.returncode, "stderr_lines": len(stamped), "stdout_lines": len(out.splitlines()),
            "first_s": times[0] if times else None, "median_gap_s": statistics.median(gaps),
            "longest_gap_s": max(gaps), "total_s": end, "lines": stamped}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", type=Path, default=ROOT / "models/digits/digits_int8.tflite")
    ap.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose edgebench runs")
    ap.add_argument("extra", nargs="*", help="more bench options (after --)")
    a = ap.parse_args()
    r = run(a.model.resolve(), a.tree.resolve(), a.extra)
    print(f"tree {a.tree}, load average {os.getloadavg()[0]:.2f}, exit code {r['rc']}")
    print(f"stderr lines {r['stderr_lines']}, stdout lines {r['stdout_lines']}, run {r['total_s']:.1f} s")
    first = "none" if r["first_s"] is None else f"{r['first_s']:.1f} s"
    print(f"first stderr line at {first}; gaps between stderr lines (and to the end): median "
          f"{r['median_gap_s']:.1f} s, longest {r['longest_gap_s']:.1f} s")
    for t, line in r["lines"]:
        print(f"  {t:6.1f} s  {line}")


if __name__ == "__main__":
    main()
