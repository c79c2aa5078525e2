"""Where the tests and the benchmarks find the MLPerf Tiny reference models, and the five models the
firmware runs. Plain Python (no pytest): tests/conftest.py and tests/test_firmware_qemu.py import it, and
so does benchmarks/mcu_models.py, so that both look in the same places and run the same models."""
from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The bundled digits models (models/digits/build.py makes them; model_card.md has their figures).
DIGITS_INT8 = ROOT / "models" / "digits" / "digits_int8.tflite"
DIGITS_FP32 = ROOT / "models" / "digits" / "digits_fp32.tflite"

# The MLPerf Tiny reference models (kws_ref_model.tflite, pretrainedResnet_quant.tflite, ...):
# $EDGEBENCH_MLPERF_TINY_DIR if set, else the first folder holding them of shared/ beside the clone
# (here, and in CI) and ~/.cache/edgebench/mlperf-tiny.
MLPERF_CANDIDATES = [Path(os.environ["EDGEBENCH_MLPERF_TINY_DIR"])] if os.environ.get("EDGEBENCH_MLPERF_TINY_DIR") \
    else [ROOT.parent / "shared" / "models" / "mlperf-tiny", Path.home() / ".cache" / "edgebench" / "mlperf-tiny"]
MLPERF_DIR = next((p for p in MLPERF_CANDIDATES if (p / "kws_ref_model.tflite").is_file()), MLPERF_CANDIDATES[0])

#: key -> .tflite, smallest first: the bundled digits model and the four MLPerf Tiny reference models
FIRMWARE_MODELS = {
    "digits": DIGITS_INT8,
    "kws": MLPERF_DIR / "kws_ref_model.tflite",
    "resnet8": MLPERF_DIR / "pretrainedResnet_quant.tflite",
    "vww": MLPERF_DIR / "vww_96_int8.tflite",
    "ad": MLPERF_DIR / "ad01_int8.tflite",
}
