"""The models the firmware benchmarks run (engine_instructions.py, firmware_footprint.py): the bundled
digits model and the MLPerf Tiny reference models, from $EDGEBENCH_MLPERF_TINY_DIR when set, else
shared/models/mlperf-tiny beside the clone (as tests/conftest.py looks for them)."""
from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MLPERF_TINY = Path(os.environ.get("EDGEBENCH_MLPERF_TINY_DIR") or ROOT.parent / "shared" / "models" / "mlperf-tiny")
#: name -> .tflite, smallest first
MODELS = {
    "digits": ROOT / "models" / "digits" / "digits_int8.tflite",
    "kws (DS-CNN)": MLPERF_TINY / "kws_ref_model.tflite",
    "resnet8": MLPERF_TINY / "pretrainedResnet_quant.tflite",
    "vww (MobileNetV1 0.25)": MLPERF_TINY / "vww_96_int8.tflite",
    "ad (FC autoencoder)": MLPERF_TINY / "ad01_int8.tflite",
}
