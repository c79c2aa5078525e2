"""Time of `edgebench report` and the size of the HTML it writes: one soak run, and 20 runs.

Makes the runs first (in a temporary folder, or reuses --runs-dir): one soak on the
simulated board (sim-pi5) and 20 short bench runs of the bundled digits models on this
computer (FP32 and INT8 alternating, pinned to one CPU). Then runs `edgebench report`
as a whole process (start-up, reading the runs, plots, writing) --repeat times for each
set and prints min / median / max wall time, the HTML size and the number of inline
figures, and the same for `--md`.

    .venv/bin/python benchmarks/report_time.py [--repeat 5] [--runs-dir DIR] [--keep]

Wall times on a shared 2-core VM move with whatever else runs: read the spread.
"""
from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "models" / "digits"


def eb(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "edgebench", *map(str, args)], capture_output=True, text=True,
                          check=True, cwd=ROOT)


def make_runs(root: Path, n_bench: int) -> tuple:
    from edgebench.results.store import find_runs, read_result

    have = [(d, read_result(d)) for d in find_runs(root)] if root.is_dir() else []
    soak = [d for d, r in have if r.kind == "soak" and r.status == "complete"]
    bench = [d for d, r in have if r.kind == "bench" and r.status == "complete"]
    if not soak:
        eb("soak", MODELS / "digits_int8.tflite", "--board", "sim-pi5", "--window", "20", "--runs-dir", root)
    for i in range(len(bench), n_bench):
        model = MODELS / ("digits_fp32.tflite" if i % 2 == 0 else "digits_int8.tflite")
        eb("bench", model, "--runs-dir", root, "--repeat", "2", "--max-repeats", "2", "--min-time", "0.2",
           "--max-time", "1", "--cpus", "0")
    have = [(d, read_result(d)) for d in find_runs(root)]
    soak = [d for d, r in have if r.kind == "soak" and r.status == "complete"][:1]
    bench = [d for d, r in have if r.kind == "bench" and r.status == "complete"][:n_bench]
    return soak, bench


def time_report(dirs: list, out: Path, repeat: int, md: bool = False) -> dict:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        eb("report", *dirs, "-o", out, *(["--md"] if md else []))
        times.append(time.perf_counter() - t0)
    text = out.read_text(encoding="utf-8")
    return {"min_s": min(times), "median_s": statistics.median(times), "max_s": max(times),
            "bytes": out.stat().st_size, "figures": len(re.findall(r'src="data:image/png;base64,', text))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="report runs per set (default 5)")
    ap.add_argument("--runs", type=int, default=20, help="bench runs in the large set (default 20)")
    ap.add_argument("--runs-dir", type=Path, help="reuse (and complete) the runs in this folder")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (runs and reports)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="eb-report-time-"))
    root = args.runs_dir or work / "runs"
    try:
        t0 = time.perf_counter()
        soak, bench = make_runs(root, args.runs)
        print(f"runs ready in {time.perf_counter() - t0:.0f} s under {root}: 1 soak (sim-pi5, simulated), "
              f"{len(bench)} bench (host, measured)")
        for name, dirs in (("1 soak run", soak), (f"{len(bench)} bench runs", bench)):
            for md in (False, True):
                r = time_report(dirs, work / ("r.md" if md else "r.html"), args.repeat, md)
                what = "--md" if md else "HTML"
                figs = "" if md else f", {r['figures']} inline figures"
                print(f"report {name:15s} {what:4s}: min {r['min_s']:.2f} s  median {r['median_s']:.2f} s  "
                      f"max {r['max_s']:.2f} s  ({args.repeat} runs); {r['bytes'] / 1024:,.0f} KiB{figs}")
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
