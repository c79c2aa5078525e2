"""The shared store on PostgreSQL at lab scale: bulk append, trend query, one push, 8 concurrent writers.

Starts a throwaway PostgreSQL server (tests/pg_fixture.py: Debian's initdb/pg_ctl on 127.0.0.1, run by an
unprivileged user; fsync off, as in the tests) and, at each scale (default 10,000 and 100,000 runs):

* bulk append: simulated runs (100 series of one model name each on one board; 2 figures and a
  ``commit`` label per run; a small run.json) loaded with COPY, runs/s (simulated);
* trend query: :meth:`PostgresStore.read_series` of one series (scale / 100 points), median of 11
  (measured on simulated rows) - target <= 1 s at 100k;
* push: :meth:`PostgresStore.append` of a real run folder (run.json + 400-sample Parquet, samples to a
  folder bucket) over TCP on 127.0.0.1, median of 20 pushes of new runs - target <= 0.2 s; and the whole
  ``python -m edgebench push`` process once (start-up included);
* 8 concurrent writers: 8 ``python -m edgebench push`` processes pushing 9 of 24 run folders each,
  overlapping (each run by 2 to 3 writers): how many added / already, rows in the store (must be 24).

Usage:  python benchmarks/store_pg_scale.py [--scales 10000 100000] [--json]
        (or python benchmarks/store_scale.py --backend postgres [--sizes 10000,100000])
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

SERIES = 100


def bulk_load(url: str, start: int, stop: int) -> float:
    """COPY runs start..stop-1 (simulated) into the store; seconds taken."""
    import psycopg

    t0 = time.perf_counter()
    with psycopg.connect(url) as conn, conn.cursor() as cur:
        with cur.copy("COPY runs (run_id, created_utc, kind, status, figure_label, model, board, runtime, kernels, "
                      "threads, scenario, model_sha256, conditions_digest, samples_digest, run_json) FROM STDIN") as cp:
            for i in range(start, stop):
                s, k = i % SERIES, i // SERIES
                cp.write_row((f"sim{i:07d}", f"2026-01-01T00:00:00+00:00#{k:07d}", "bench", "complete", "simulated",
                              f"model{s:03d}", "pi5", "ai-edge-litert", "xnnpack", "1", "single-stream", "a" * 64,
                              "c" * 16, f"{i:064x}", '{"simulated": true}'))
        with cur.copy("COPY figures (run_id, metric, value, ci_low, ci_high, se_log, df, figure_label) FROM STDIN") as cp:
            for i in range(start, stop):
                v = 1e-3 * (1 + 0.01 * ((i * 7919) % 13) / 13)
                for metric, f in (("e2e", 1.0), ("invoke", 0.8)):
                    cp.write_row((f"sim{i:07d}", metric, v * f, v * f * 0.98, v * f * 1.02, 0.01, 4.0, "simulated"))
        with cur.copy("COPY labels (run_id, name, value) FROM STDIN") as cp:
            for i in range(start, stop):
                cp.write_row((f"sim{i:07d}", "commit", f"{i:040x}"))
        conn.commit()
        conn.execute("ANALYZE")
    return time.perf_counter() - t0


def trend_query(url: str) -> tuple:
    """(median seconds, points) of read_series of one series, 11 reads on one connection."""
    from edgebench.store.base import SeriesKey
    from edgebench.store.open import open_store

    key = SeriesKey("model042", "pi5", "ai-edge-litert", "xnnpack", "1", "single-stream")
    st = open_store(url)
    try:
        times, n = [], 0
        for _ in range(11):
            t0 = time.perf_counter()
            n = len(st.read_series(key, "e2e"))
            times.append(time.perf_counter() - t0)
    finally:
        st.close()
    return statistics.median(times), n


def pushes(url: str, work: Path, tag: str, count: int = 20) -> float:
    """Median seconds of one append of a real run folder (samples into a folder bucket)."""
    from test_store_postgres import make_run

    from edgebench.store.open import open_store

    dirs = [make_run(work / f"push-{tag}", f"push-{tag}-{i}", seed=i) for i in range(count + 1)]
    st = open_store(f"{url}?samples={(work / 'bucket').as_uri()}")
    try:
        st.append(dirs[0])        # warm: imports, prepared statements
        times = []
        for d in dirs[1:]:
            t0 = time.perf_counter()
            st.append(d)
            times.append(time.perf_counter() - t0)
    finally:
        st.close()
    return statistics.median(times)


def env() -> dict:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("EDGEBENCH_STORE")}, "PYTHONPATH": str(ROOT)}


def cli_push(url: str, work: Path) -> float:
    from test_store_postgres import make_run

    d = make_run(work / "cli", "cli-push", seed=99)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "edgebench", "push", str(d), "--store", url, "--runs-dir", str(work / "cli")],
                   check=True, capture_output=True, env=env(), timeout=300)
    return time.perf_counter() - t0


def concurrent(url: str, work: Path) -> dict:
    from test_store_postgres import make_run

    dirs = [make_run(work / "conc", f"conc-{i:02d}", seed=i) for i in range(24)]
    plans = [[dirs[(3 * w + k) % 24] for k in range(9)] for w in range(8)]
    t0 = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-m", "edgebench", "push", *map(str, p), "--store", url, "--json",
                               "--runs-dir", str(work / f"q{w}")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env()) for w, p in enumerate(plans)]
    outs = [p.communicate(timeout=900) for p in procs]
    wall = time.perf_counter() - t0
    statuses = [r["status"] for out, _ in outs if out for r in json.loads(out)["runs"]]
    import psycopg

    with psycopg.connect(url) as conn:
        stored = conn.execute("SELECT count(*), count(DISTINCT run_id) FROM runs WHERE run_id LIKE 'conc-%'").fetchone()
    return {"writers": 8, "runs": 24, "pushes": len(statuses), "added": statuses.count("added"),
            "already": statuses.count("already"), "failed_processes": sum(p.returncode != 0 for p in procs),
            "rows_stored": stored[0], "distinct_stored": stored[1], "wall_s": round(wall, 2)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scales", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    from pg_fixture import PgServer

    from edgebench.store.open import open_store

    server = PgServer().start()
    work = Path(tempfile.mkdtemp(prefix="edgebench-pgscale-"))
    out: dict = {"label": "simulated rows, measured timings (PostgreSQL 15 on 127.0.0.1, fsync off)", "scales": []}
    try:
        url = server.create_database("scale")
        open_store(url).close()           # the schema
        loaded = 0
        for scale in sorted(args.scales):
            secs = bulk_load(url, loaded, scale)
            rate = (scale - loaded) / secs
            loaded = scale
            q, points = trend_query(url)
            p = pushes(url, work, str(scale))
            out["scales"].append({"runs": scale, "bulk_append_runs_per_s": round(rate), "trend_query_s": round(q, 4),
                                  "trend_points": points, "push_s": round(p, 4)})
        out["cli_push_process_s"] = round(cli_push(url, work), 2)
        out["concurrent"] = concurrent(url, work)
    finally:
        server.stop()
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(out["label"])
    print(f"{'runs':>8} {'bulk append':>14} {'trend query':>12} {'points':>7} {'push (append)':>14}")
    for s in out["scales"]:
        print(f"{s['runs']:>8} {s['bulk_append_runs_per_s']:>10} r/s {s['trend_query_s'] * 1000:>9.1f} ms "
              f"{s['trend_points']:>7} {s['push_s'] * 1000:>11.1f} ms")
    print(f"one `python -m edgebench push` process (start-up included): {out['cli_push_process_s']} s")
    c = out["concurrent"]
    print(f"8 concurrent push processes, 24 runs pushed {c['pushes']} times: {c['added']} added, {c['already']} "
          f"already, {c['failed_processes']} failed; {c['rows_stored']} rows stored ({c['distinct_stored']} distinct) "
          f"in {c['wall_s']} s")


if __name__ == "__main__":
    main()
