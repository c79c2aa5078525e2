"""What ``quantize`` did: options, outputs, warnings (data model, no I/O)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

from edgebench.errors import ModelError, UsageError

RESULT_FORMAT = "edgebench-quantize-result"
RESULT_VERSION = 1
IO_TYPES = ("int8", "uint8")
ROLES = ("fp32", "int8", "fp16", "dynamic-range")


@dataclass(frozen=True)
class QuantizeOptions:
    """How to convert. Every field is recorded in the sidecars."""

    io: str = "int8"                  # dtype of the INT8 model's input and output: int8 | uint8
    per_channel: bool = True          # per-channel weight scales (per-tensor when False)
    batch: int = 1                    # fixed batch size of the exported models
    float16: bool = False             # also write a float16-weights model
    dynamic_range: bool = False       # also write a dynamic-range (int8 weights, float activations) model
    calib_count: Optional[int] = None  # samples to calibrate with (None: all), evenly spaced
    calib_preprocess: dict = field(default_factory=dict)
    calib_key: Optional[str] = None   # array name inside a .npz
    onnx_rtol: float = 1e-3           # ONNX: FP32 model vs onnxruntime, max abs error / largest output
    min_agreement: float = 0.80       # INT8 vs FP32 top-1 agreement below which quantize refuses (agreement.py)
    min_sqnr_db: float = 10.0         # INT8 vs FP32 SQNR (non-classifier outputs) below which it refuses

    def __post_init__(self):
        if self.io not in IO_TYPES:
            raise UsageError(f"--io must be int8 or uint8, got {self.io!r}")
        if isinstance(self.batch, bool) or not isinstance(self.batch, int) or self.batch < 1:
            raise UsageError(f"--batch must be a whole number >= 1, got {self.batch!r}")
        if self.calib_count is not None and (isinstance(self.calib_count, bool) or self.calib_count < 1):
            raise UsageError(f"--calib-count must be at least 1, got {self.calib_count!r}")
        if not (isinstance(self.onnx_rtol, (int, float)) and 0 < self.onnx_rtol <= 1):
            raise UsageError(f"--onnx-rtol must be in (0, 1], got {self.onnx_rtol!r}")
        if not (isinstance(self.min_agreement, (int, float)) and 0 <= self.min_agreement <= 1):
            raise UsageError(f"--min-agreement must be in [0, 1], got {self.min_agreement!r}")
        if not (isinstance(self.min_sqnr_db, (int, float)) and math.isfinite(self.min_sqnr_db)):
            raise UsageError(f"--min-sqnr must be a finite number of dB, got {self.min_sqnr_db!r}")

    def to_dict(self) -> dict:
        pre = {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.calib_preprocess.items()}
        return {"io": self.io, "per_channel": self.per_channel, "batch": self.batch,
                "float16": self.float16, "dynamic_range": self.dynamic_range,
                "calib_count": self.calib_count, "calib_preprocess": pre, "calib_key": self.calib_key,
                "onnx_rtol": self.onnx_rtol, "min_agreement": self.min_agreement, "min_sqnr_db": self.min_sqnr_db}


@dataclass(frozen=True)
class QuantizeWarning:
    """Something the user should know about a model before trusting it, with a remedy."""

    code: str                 # calibration-too-small | degenerate-scales | collapsed-output | ...
    message: str
    remedy: Optional[str] = None
    model: Optional[str] = None   # the output role it concerns (None: all)
    details: tuple = ()

    def one_line(self) -> str:
        return self.message + (f" ({self.remedy})" if self.remedy else "")

    def to_dict(self) -> dict:
        return {"code": self.code, "message": self.message, "remedy": self.remedy,
                "model": self.model, "details": list(self.details)}


@dataclass(frozen=True)
class OutputModel:
    """One written .tflite file and its sidecar."""

    role: str
    path: str
    sidecar_path: str
    sha256: str
    bytes: int
    precision: str
    weights_bits: int
    activations_bits: int
    input_dtype: str
    output_dtype: str
    input_shape: list
    output_shape: list
    input_quantization: Optional[list]
    output_quantization: Optional[list]
    convert_s: float

    def to_dict(self) -> dict:
        return {"role": self.role, "path": self.path, "sidecar": self.sidecar_path, "sha256": self.sha256,
                "bytes": self.bytes, "precision": self.precision, "weights_bits": self.weights_bits,
                "activations_bits": self.activations_bits, "input_dtype": self.input_dtype,
                "output_dtype": self.output_dtype, "input_shape": list(self.input_shape),
                "output_shape": list(self.output_shape), "input_quantization": self.input_quantization,
                "output_quantization": self.output_quantization, "convert_s": self.convert_s}


@dataclass(frozen=True)
class QuantizeResult:
    source: dict                 # SourceModel.to_dict() + loader
    input: dict                  # name, model shape, export shape, dtype
    export: str                  # how the fixed-shape copy was converted
    calibration: dict            # CalibrationData.to_dict()
    options: QuantizeOptions
    outputs: tuple               # OutputModel, int8 last
    warnings: tuple              # QuantizeWarning
    versions: dict               # tensorflow, keras, edgebench
    timings_s: dict              # step -> seconds (wall clock)
    lowering: Optional[dict] = None  # ONNX: layouts, operators, faithfulness against onnxruntime
    agreement: Optional[dict] = None  # INT8 vs FP32 on calibration samples (quantize.agreement.compare)

    def output(self, role: str) -> Optional[OutputModel]:
        for o in self.outputs:
            if o.role == role:
                return o
        return None

    def _written(self, role: str) -> OutputModel:
        found = self.output(role)
        if found is None:
            raise ModelError(f"the quantization wrote no {role} model")
        return found

    @property
    def int8(self) -> OutputModel:
        return self._written("int8")

    @property
    def fp32(self) -> OutputModel:
        return self._written("fp32")

    def to_dict(self) -> dict:
        return {
            "format": RESULT_FORMAT, "version": RESULT_VERSION,
            "source": dict(self.source), "input": dict(self.input), "export": self.export,
            "calibration": dict(self.calibration), "options": self.options.to_dict(),
            "outputs": [o.to_dict() for o in self.outputs],
            "warnings": [w.to_dict() for w in self.warnings],
            "versions": dict(self.versions), "timings_s": dict(self.timings_s),
            **({"lowering": self.lowering} if self.lowering is not None else {}),
            **({"agreement": self.agreement} if self.agreement is not None else {}),
        }
