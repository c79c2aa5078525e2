"""The embedded results store at scale, and a real series with a model swapped under its name.

1. scale (``--sizes 10000,100000``): an index (:mod:`edgebench.store.embedded`) holding N
   simulated runs (1,000 series of N/1,000 runs, their rows made by
   :func:`edgebench.store.rows.result_rows` from a real run.json and bulk-loaded), then:
   the cost of appending one more real run folder (median of ``--appends``), of reading one
   series' trend (``read_series``, median of 20; the goal is <= 1 s at 100k runs), of a
   refresh that finds nothing new, and the index's size on disk. Labelled: measured (the
   store's own cost; the runs are simulated).
2. real series (``--real``): one model name benchmarked ``--each`` times on ``--board host``
   (digits_fp32's file), then its file swapped for a slower model (MLPerf Tiny's KWS FP32)
   under the same name and benchmarked ``--each`` times more; ``edgebench history --changes
   --json`` must find the change at the swap. Labelled: measured.

Run: .venv/bin/python benchmarks/store_scale.py [--sizes 10000,100000] [--real] [--each 6]
     ... --backend postgres: the same sizes on the shared store (benchmarks/store_pg_scale.py)
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "tests" / "data" / "runs" / "bench-host-fp32.json"
SLOWER = Path(os.environ.get("EDGEBENCH_SHARED_MODELS", ROOT.parent.parent / "shared" / "models")) / \
    "mlperf-tiny" / "kws_ref_model_float32.tflite"


def simulated_rows(n: int, series: int = 1000):
    """Run and figure rows of ``n`` simulated runs over ``series`` series (as the store keeps them)."""
    import numpy as np

    from edgebench.results.model import RunResult
    from edgebench.store.rows import RUN_COLUMNS, result_rows

    rows = result_rows(RunResult.from_dict(json.loads(TEMPLATE.read_text())), "x", "")
    rng = np.random.default_rng(0)
    runs, figures = [], []
    for i in range(n):
        run = dict(rows.run)
        run.update(run_id=f"{i:012x}", created_utc="2026-01-01T00:00:00+00:00", model=f"model{i % series:04d}",
                   labels=json.dumps({"commit": f"{i:040x}"}))
        folder = f"sim-{i:07d}"
        runs.append([folder, 1.7e9 + i, "{}", *[run[c] for c in RUN_COLUMNS if c != "path"]])
        for f in rows.figures:
            figures.append([folder, run["run_id"], f["metric"], f["value"] * float(np.exp(rng.normal(0, 0.03))),
                            f["ci_low"], f["ci_high"], f["se_log"], f["df"], f["figure_label"]])
    return runs, figures


def scale(n: int, appends: int) -> None:
    import pandas as pd

    from edgebench.store.base import SeriesKey
    from edgebench.store.embedded import INDEX, EmbeddedStore
    from edgebench.store.rows import RUN_COLUMNS
    from tests.store_runs import make_run

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        runs, figures = simulated_rows(n)
        with EmbeddedStore(root) as s:
            run_cols = ["folder", "created_epoch", "flat", *[c for c in RUN_COLUMNS if c != "path"]]
            rf = pd.DataFrame(runs, columns=run_cols)
            ff = pd.DataFrame(figures, columns=["folder", "run_id", "metric", "value", "ci_low", "ci_high", "se_log",
                                                "df", "figure_label"])
            s.db.register("rf", rf)
            s.db.register("ff", ff)
            s.db.execute("INSERT INTO run_rows SELECT * FROM rf")
            s.db.execute("INSERT INTO figure_rows SELECT * FROM ff")
            s.db.unregister("rf")
            s.db.unregister("ff")
        load_s = time.perf_counter() - t0
        costs = []
        with EmbeddedStore(root) as s:
            s.refresh()
            for i in range(appends):
                d = make_run(root, n + i)
                t = time.perf_counter()
                s.append(d)
                costs.append(time.perf_counter() - t)
            key = SeriesKey("model0007", "host", "ai-edge-litert", "xnnpack", "1", "single-stream")
            q = []
            for _ in range(20):
                t = time.perf_counter()
                pts = s.read_series(key, "e2e")
                q.append(time.perf_counter() - t)
            t = time.perf_counter()
            s.refresh()
            refresh_s = time.perf_counter() - t
        t = time.perf_counter()
        with EmbeddedStore(root) as s:
            s.read_series(key, "e2e")
        cold_s = time.perf_counter() - t
        size = (root / INDEX).stat().st_size
        print(f"measured (simulated runs): N={n:,} runs in the index ({len(figures):,} figure rows; bulk load "
              f"{load_s:.1f} s): append one run folder median {statistics.median(costs) * 1e3:.1f} ms "
              f"(max {max(costs) * 1e3:.1f} ms, {appends} appends); trend query of one series ({len(pts)} points) "
              f"median {statistics.median(q) * 1e3:.1f} ms (max {max(q) * 1e3:.1f} ms); open + query "
              f"{cold_s * 1e3:.0f} ms; refresh finding nothing new {refresh_s * 1e3:.1f} ms; index "
              f"{size / 2 ** 20:.1f} MB", flush=True)


def real(each: int, board: str) -> None:
    digits = ROOT / "models" / "digits" / "digits_fp32.tflite"
    if not SLOWER.is_file():
        sys.exit(f"no slower model at {SLOWER} (set EDGEBENCH_SHARED_MODELS)")
    fast = ["--min-samples", "200", "--min-time", "0.5", "--max-time", "3", "--repeat", "3", "--max-repeats", "3",
            "-q", "--json"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "swapped.tflite"
        runs = Path(tmp) / "runs"
        t0 = time.perf_counter()
        for i in range(2 * each):
            shutil.copyfile(digits if i < each else SLOWER, model)
            p = subprocess.run([sys.executable, "-m", "edgebench", "bench", str(model), "--board", board,
                                "--runs-dir", str(runs), "--label", f"commit={'before' if i < each else 'after'}{i:02d}",
                                *fast], capture_output=True, text=True, env=env, cwd=tmp)
            if p.returncode not in (0, 2):
                sys.exit(f"bench {i} failed: {p.stderr.strip()[-400:]}")
        p = subprocess.run([sys.executable, "-m", "edgebench", "history", "swapped", "--board", board,
                            "--runs-dir", str(runs), "--changes", "--json"], capture_output=True, text=True,
                           env=env, cwd=tmp)
        if p.returncode != 0:
            sys.exit(f"history failed: {p.stderr.strip()}")
        h = json.loads(p.stdout)
        meds = [pt["value"] for pt in h["points"]]
        marks = [i for i, pt in enumerate(h["points"]) if "model" in pt["changed"]]
        print(f"measured: {len(meds)} runs of one model name on {board} ({time.perf_counter() - t0:.0f} s); e2e medians "
              + ", ".join(f"{m * 1e6:.0f}" for m in meds) + " µs; model file changed at point(s) "
              + f"{marks}; change points: "
              + ("; ".join(f"at point {c['index']} ({c['commit_before']}..{c['commit_after']}) ×{c['ratio']:.2f} "
                           f"(95% CI {c['ci_low']:.2f}-{c['ci_high']:.2f}, permutation p={c['p_value']:.3g})"
                           for c in h["changes"]) or "none"))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--appends", type=int, default=30)
    ap.add_argument("--real", action="store_true", help="also the real series with a swapped model")
    ap.add_argument("--only-real", action="store_true")
    ap.add_argument("--each", type=int, default=6)
    ap.add_argument("--board", default="host")
    ap.add_argument("--backend", choices=("duckdb", "postgres"), default="duckdb",
                    help="postgres: the shared store on a throwaway server (benchmarks/store_pg_scale.py)")
    a = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if a.backend == "postgres":
        sys.path.insert(0, str(ROOT / "benchmarks"))
        import store_pg_scale

        store_pg_scale.main(["--scales", *(x for x in a.sizes.split(",") if x)])
        return
    if not a.only_real:
        for n in (int(x) for x in a.sizes.split(",") if x):
            scale(n, a.appends)
    if a.real or a.only_real:
        real(a.each, a.board)


if __name__ == "__main__":
    main()
