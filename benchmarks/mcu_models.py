"""The models the firmware benchmarks run (engine_instructions.py, firmware_footprint.py): the bundled
digits model and the MLPerf Tiny reference models, from $EDGEBENCH_MLPERF_TINY_DIR when set, else
shared/models/mlperf-tiny beside the clone or ~/.cache/edgebench/mlperf-tiny (tests/mlperf_models.py,
which the tests read too)."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from mlperf_models import FIRMWARE_MODELS  # noqa: E402

#: the names the benchmarks' tables give them
TITLES = {"kws": "kws (DS-CNN)", "vww": "vww (MobileNetV1 0.25)", "ad": "ad (FC autoencoder)"}
#: name -> .tflite, smallest first
MODELS = {TITLES.get(key, key): path for key, path in FIRMWARE_MODELS.items()}
