"""Write the fixture runs of tests/data/runs/ again: one run.json of every kind, made by the verbs.

    python tests/data/runs/make_runs.py          # about three minutes; needs make, gcc, qemu-system-arm

Each command below runs ``python -m edgebench`` into a fresh runs folder; its run.json is copied
here as ``NAME.json`` (the temporary folder's path replaced by ``runs``), and for the runs the
comparison tests use, the first 40 samples of each repeat and phase as ``NAME.samples.parquet``.
tests/test_run_schema.py checks that every fixture validates, and tampers each field of them.
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
INT8 = "models/digits/digits_int8.tflite"
FP32 = "models/digits/digits_fp32.tflite"
FAST = ["--min-samples", "50", "--min-time", "0.3", "--max-time", "3", "--repeat", "2", "--max-repeats", "2"]

RUNS = {   # name -> (arguments, keep samples)
    "bench-host-int8": (["bench", INT8, "--board", "host", *FAST], True),
    "bench-host-fp32": (["bench", FP32, "--board", "host", *FAST], True),
    "bench-sim-fixed-rate": (["bench", INT8, "--board", "sim-pi5", "--scenario", "fixed-rate", "--rate", "50",
                              *FAST], False),
    "bench-qemu-m4": (["bench", INT8, "--board", "qemu-m4", "--min-samples", "20", "--max-time", "3",
                       "--repeat", "1", "--max-repeats", "1"], False),
    "accuracy-host": (["accuracy", INT8, "--baseline", FP32, "--data", "digits"], False),
    "soak-sim": (["soak", INT8, "--board", "sim-pi5", "--max-duration", "120"], False),
    "sweep-sim": (["sweep", INT8, "--board", "sim-pi5", "--duty", "0.5,1", "--variant", FP32, "--window", "20",
                   "--max-duration-per-point", "60"], False),
    "energy-sim": (["energy", INT8, "--board", "sim-pi5", "--rate", "20"], False),
    "verify-posix": (["verify", INT8, "--board", "posix-sim"], False),
    "mlperf-posix": (["bench", INT8, "--board", "posix-sim", "--mlperf"], False),
}


def main() -> None:
    import pandas as pd

    for name, (args, keep_samples) in RUNS.items():
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, "-m", "edgebench", *args, "--runs-dir", tmp]
            print(" ".join(cmd[2:]), file=sys.stderr)
            subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
            run_dir = next(p.parent for p in Path(tmp).glob("*/run.json"))
            text = (run_dir / "run.json").read_text().replace(tmp, "runs")
            json.loads(text)
            (HERE / f"{name}.json").write_text(text)
            if keep_samples:
                s = pd.read_parquet(run_dir / "samples.parquet")
                s = s.groupby(["repeat", "phase"], sort=False).head(40).reset_index(drop=True)
                s.to_parquet(HERE / f"{name}.samples.parquet", index=False)


if __name__ == "__main__":
    main()
