"""What a labgrid farm costs: the same board reached through a farm against reached directly (issue 13).

A real labgrid farm on 127.0.0.1 (tests/labgrid_fixture.py: labgrid-coordinator, one
labgrid-exporter per place, Debian's ser2net serving the posix firmware's pseudo-terminal over
RFC 2217). The board is posix-sim: the edgebench firmware core compiled for this computer.

1. Time to first sample, ``--trials`` times each, alternating: from nothing to the first timed
   inference (resolve the board, open the link, upload and load the digits INT8 model, one
   inference). Direct: ``posix-sim`` at the pty (``--url /dev/pts/N``). Farm: ``labgrid:pa``
   (coordinator session, reservation, acquisition, ser2net started by the exporter, RFC 2217),
   then the place released (not counted).
2. Latency of the same firmware process through RFC 2217 against the pty directly: ``edgebench
   bench --json`` (default stop rule, 3 repeats), ``--benches`` times each, alternating. Reported:
   the e2e median (device-timed: the firmware's clock) with its 95% interval, and the throughput
   achieved (completed inferences over wall time: every request crosses the link).
3. Fan-out: ``edgebench bench --farm board=posix`` over N = 1, 2, 4 places, a fixed amount of work
   per place (one run of 2,000 inferences): total wall time, ``--fanouts`` times each.

Usage:  python benchmarks/farm_overhead.py [--trials 10] [--benches 3] [--fanouts 3] [--json FILE]
Every figure is measured on this computer over loopback (no network, no real board): it is the
cost of the farm's software path (gRPC, ser2net, RFC 2217), not of a lab network.
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

DIGITS = ROOT / "models" / "digits" / "digits_int8.tflite"
TAGS = {"edgebench-profile": "posix-sim", "board": "posix"}


def first_sample_s(board: str, url: str | None) -> float:
    """Seconds from nothing to the first timed inference on ``board`` (a fresh process)."""
    code = f"""
import time, sys
t0 = time.perf_counter()
import numpy as np
from edgebench.boards.registry import get_profile
from edgebench.boards.connect import open_client
from edgebench.modelfile import read_model
from edgebench.farm import lease as _lease
profile = get_profile({board!r})
client = open_client(profile, {url!r})
model = read_model({str(DIGITS)!r})
sha = client.ensure_model(model)
info = client.load(sha, kernels="reference", threads=1)
shape = [1] + list(info["inputs"][0]["shape"])[1:]
client.set_inputs(np.zeros(shape, dtype=np.int8))
client.run("single-stream", count=1, max_time_s=30)
print(time.perf_counter() - t0)
client.close()
_lease.release_all()
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ))
    if out.returncode != 0:
        raise RuntimeError(f"first sample on {board} failed: {out.stderr[-1500:]}")
    return float(out.stdout.strip().splitlines()[-1])


def bench(board: str, url: str | None, runs_dir: Path, *extra: str) -> dict:
    args = [sys.executable, "-m", "edgebench", "bench", str(DIGITS), "--board", board, "--runs-dir", str(runs_dir),
            "--json", *extra]
    if url:
        args += ["--url", url]
    out = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"bench on {board} failed: {out.stderr[-1500:]}")
    return json.loads(out.stdout)


def summary(values: list) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--benches", type=int, default=3)
    ap.add_argument("--fanouts", type=int, default=3)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    from fw_util import build_firmware
    from labgrid_fixture import Farm

    work = Path(tempfile.mkdtemp(prefix="farm-overhead-"))
    fw = build_firmware("posix", work / "fw")
    farm = Farm(work / "farm").start()
    out: dict = {"label": "measured", "where": "this computer, loopback (127.0.0.1), posix-sim firmware",
                 "cpus": os.cpu_count()}
    try:
        places = {}
        for name in ("pa", "pb", "pc", "pd"):
            places[name] = farm.add_posix_place(name, fw, TAGS)
        os.environ["LG_COORDINATOR"] = farm.address
        os.environ["EDGEBENCH_FARM_WAIT"] = "30"
        # the pty the exporter serves for place pa (the same firmware process both ways)
        pty = str(next(iter(places["pa"].groups["serial"].values()))["port"])

        # 1. time to first sample
        direct, farmed = [], []
        for _ in range(args.trials):
            direct.append(first_sample_s("posix-sim", pty))
            farmed.append(first_sample_s("labgrid:pa", None))
        out["first_sample_s"] = {"direct_pty": summary(direct), "farm_rfc2217": summary(farmed),
                                 "extra_median_s": statistics.median(farmed) - statistics.median(direct)}

        # 2. latency and throughput through RFC 2217 vs the pty
        rows = {"direct_pty": [], "farm_rfc2217": []}
        for i in range(args.benches):
            for key, board, url in (("direct_pty", "posix-sim", pty), ("farm_rfc2217", "labgrid:pa", None)):
                r = bench(board, url, work / "runs" / f"{key}-{i}")
                e2e = r["latency"]["e2e"]
                rows[key].append({"median_s": e2e["median_s"], "ci_low_s": e2e["ci_low_s"],
                                  "ci_high_s": e2e["ci_high_s"], "n": e2e["n"],
                                  "throughput_per_s": r["throughput"]["per_s"], "label": r["label"],
                                  "transport": r["board"]["transport"]})
        out["bench"] = rows

        # 3. fan-out over N places
        fixed = ["--repeat", "1", "--max-repeats", "1", "--min-samples", "2000", "--min-time", "0.01",
                 "--target-ci", "0.5", "--max-time", "120"]
        fan = {}
        for n in (1, 2, 4):
            tags = f"board=posix,fan{n}=yes"
            for name in list(places)[:n]:
                farm.client("-p", name, "set-tags", f"fan{n}=yes")
            totals = []
            for i in range(args.fanouts):
                t0 = time.perf_counter()
                res = subprocess.run([sys.executable, "-m", "edgebench", "bench", str(DIGITS), "--farm", tags,
                                      "--runs-dir", str(work / "fan" / f"n{n}-{i}"), "--json", *fixed],
                                     capture_output=True, text=True, timeout=900)
                totals.append(time.perf_counter() - t0)
                if res.returncode != 0:
                    raise RuntimeError(f"fan-out N={n} failed: {res.stderr[-1500:]}")
                done = json.loads(res.stdout)
                assert done["counts"] == {"ok": n}, done["counts"]
            fan[str(n)] = summary(totals)
        out["fanout_total_s"] = fan
    finally:
        farm.stop()
    report(out)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")


def report(out: dict) -> None:
    us = 1e6
    print(f"farm overhead ({out['label']}: {out['where']}, {out['cpus']} CPUs)")
    fs = out["first_sample_s"]
    for key in ("direct_pty", "farm_rfc2217"):
        s = fs[key]
        print(f"  time to first sample, {key:13s}: median {s['median']:.3f} s (range {s['min']:.3f}-{s['max']:.3f}, "
              f"{s['n']} trials)")
    print(f"  farm adds {fs['extra_median_s']:.3f} s to the first sample (median)")
    for key, rows in out["bench"].items():
        for r in rows:
            print(f"  bench {key:13s}: e2e median {r['median_s'] * us:.1f} us (95% CI {r['ci_low_s'] * us:.1f}-"
                  f"{r['ci_high_s'] * us:.1f}, n={r['n']}), throughput {r['throughput_per_s']:.0f}/s [{r['label']}]")
    for n, s in out["fanout_total_s"].items():
        print(f"  fan-out N={n}: total {s['median']:.2f} s (range {s['min']:.2f}-{s['max']:.2f}, {s['n']} times)")


if __name__ == "__main__":
    main()
