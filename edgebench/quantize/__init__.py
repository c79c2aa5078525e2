"""Post-training quantization with provenance (level 2).

    from edgebench.quantize import QuantizeOptions, quantize_model

    result = quantize_model("model.keras", "calib.npz", out="model_int8.tflite",
                            options=QuantizeOptions(io="int8", float16=True))
    result.int8.path, result.int8.sha256, result.warnings

Inputs: a Keras model (.keras, .h5) or a SavedModel directory, and calibration
data (.npz/.npy, an image folder with declared preprocessing, or ``digits``).
Outputs: an FP32 .tflite baseline and a full-integer INT8 .tflite (int8 or uint8
input/output, per-channel weights, batch fixed to 1 by default), optionally
float16 and dynamic-range variants, each with an ``edgebench-model-sidecar`` JSON.
See docs/quantize.md.

TensorFlow is imported inside functions only; importing this package is cheap.
"""
from __future__ import annotations

from edgebench.quantize._tf import TensorFlowMissing
from edgebench.quantize.calibration import CalibrationData, load_calibration, parse_preprocess
from edgebench.quantize.checks import DEGENERATE_SCALE, MIN_CALIBRATION_SAMPLES
from edgebench.quantize.convert import output_paths, quantize_model
from edgebench.quantize.result import OutputModel, QuantizeOptions, QuantizeResult, QuantizeWarning
from edgebench.quantize.source import SourceModel, identify

__all__ = [
    "CalibrationData", "DEGENERATE_SCALE", "MIN_CALIBRATION_SAMPLES", "OutputModel", "QuantizeOptions",
    "QuantizeResult", "QuantizeWarning", "SourceModel", "TensorFlowMissing", "identify",
    "load_calibration", "output_paths", "parse_preprocess", "quantize_model",
]
