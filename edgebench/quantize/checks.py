"""Checks on calibration data and converted models, each giving a warning with a remedy.

* ``calibration-too-small``: fewer than :data:`MIN_CALIBRATION_SAMPLES` samples.
  Ranges estimated from a handful of samples clip the activations of real inputs.
* ``calibration-unscaled``: integer data (or decoded images) used as they are, with
  no declared ``scale``; models trained on [0, 1] inputs then see 0..255.
* ``degenerate-scales``: activation tensors of the INT8 model whose scale is below
  :data:`DEGENERATE_SCALE` (or zero, or not finite). The converter gives a tensor
  whose calibration range collapsed to zero a scale of ~1e-8: every real input then
  quantizes to the zero point, and some kernels refuse the model (XNNPACK fails to
  prepare it; reference kernels compute multipliers out of range).
* ``collapsed-output``: running the FP32 baseline on the calibration samples and
  quantizing its outputs with the INT8 model's output scale and zero point gives
  one single value for every sample: the INT8 model cannot tell inputs apart.
  (The FP32 model is run, not the INT8 one, because the INT8 one may crash.)
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from edgebench.quantize.result import QuantizeWarning

MIN_CALIBRATION_SAMPLES = 100
DEGENERATE_SCALE = 1e-6
_QUANT_DTYPES = ("int8", "uint8", "int16")
_RANGES = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767)}


def calibration_warnings(calib, declared_scale: bool) -> list:
    out = []
    if calib.count < MIN_CALIBRATION_SAMPLES:
        out.append(QuantizeWarning(
            "calibration-too-small",
            f"only {calib.count} calibration sample(s) (fewer than {MIN_CALIBRATION_SAMPLES}): activation "
            "ranges may not cover real inputs, which then clip",
            f"calibrate with {MIN_CALIBRATION_SAMPLES}-500 representative samples", "int8"))
    stored = calib.stored_dtype
    integer_stored = stored == "image" or np.dtype(stored).kind in "iu"
    if integer_stored and not declared_scale:
        hi = float(np.max(calib.x)) if calib.count else 0.0
        out.append(QuantizeWarning(
            "calibration-unscaled",
            f"calibration data ({'decoded images' if stored == 'image' else 'stored as ' + stored}) is used "
            f"unscaled, values up to {hi:g}",
            "declare the model's input scaling, e.g. --preprocess scale=1/255, unless the model "
            "rescales its input itself", "int8"))
    return out


def degenerate_scale_warning(tensors, role: str = "int8", threshold: float = DEGENERATE_SCALE) -> Optional[QuantizeWarning]:
    """``tensors``: TensorReport-like objects (name, dtype, constant, scale) of a converted model."""
    bad = []
    for t in tensors:
        if t.constant or t.dtype not in _QUANT_DTYPES or not t.scale:
            continue
        worst = min(float(s) for s in t.scale)
        if not math.isfinite(worst) or worst < threshold:
            bad.append((t.name, worst))
    if not bad:
        return None
    names = ", ".join(f"{_short(n)} (scale {s:.3g})" for n, s in bad[:3])
    more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
    return QuantizeWarning(
        "degenerate-scales",
        f"{len(bad)} activation tensor(s) of the {role.upper()} model have degenerate scales < {threshold:g}: "
        f"{names}{more}; the activations collapsed to (near) zero during calibration, so the model "
        "outputs a constant and some kernels (XNNPACK, reference) fail on it",
        "check that the model is trained and that the calibration data is preprocessed as in training",
        role, tuple({"tensor": n, "scale": s} for n, s in bad))


def collapsed_output_warning(fp32_outputs: list, int8_outputs, role: str = "int8") -> Optional[QuantizeWarning]:
    """``fp32_outputs``: per model output, an array (samples, ...) of float outputs on the calibration data.
    ``int8_outputs``: TensorInfo-like (name, dtype, scale, zero_point) of the INT8 model's outputs."""
    found: list[tuple[str, Optional[int], np.ndarray]] = []   # (tensor, its one value or None: no scale, outputs)
    for y, t in zip(fp32_outputs, int8_outputs):
        if t.dtype not in _RANGES or not t.scale:
            continue
        scale, zp = float(t.scale[0]), int(t.zero_point[0]) if t.zero_point else 0
        if not math.isfinite(scale) or scale <= 0:
            found.append((t.name, None, y))
            continue
        lo, hi = _RANGES[t.dtype]
        q = np.clip(np.round(np.asarray(y, dtype=np.float64) / scale) + zp, lo, hi)
        values = np.unique(q)
        if values.size == 1:
            found.append((t.name, int(values[0]), y))
    if not found:
        return None
    name, value, y = found[0]
    n = int(np.asarray(y).shape[0]) if np.asarray(y).ndim else 0
    what = f"the single value {value}" if value is not None else "no usable value (scale <= 0)"
    return QuantizeWarning(
        "collapsed-output",
        f"all {n} calibration samples quantize to {what} at output {_short(name)} "
        f"(FP32 outputs span [{float(np.min(y)):.3g}, {float(np.max(y)):.3g}]): the {role.upper()} "
        "model cannot tell inputs apart",
        "an untrained or badly calibrated model; train it, or calibrate with data preprocessed as in training",
        role, tuple({"output": nm, "value": v} for nm, v, _ in found))


def _short(name: str) -> str:
    return repr(name.split(";")[0])


def run_tflite(model_bytes: bytes, x: np.ndarray, batch: int, with_names: bool = False):
    """Outputs of a .tflite model on float samples ``x`` in batches of ``batch``: one float array per model
    output. A quantized input is quantized with its scale and zero point, a quantized output dequantized,
    so an INT8 model's outputs compare with its FP32 baseline's. ``with_names``: also the output names."""
    try:
        # optional dependency: its absence is handled here
        from ai_edge_litert.interpreter import Interpreter, OpResolverType

        interp = Interpreter(model_content=model_bytes, num_threads=1,
                             experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    except ImportError:  # pragma: no cover - ai-edge-litert is a dependency on Linux/macOS
        import tensorflow as tf  # optional dependency: its absence is handled here

        interp = tf.lite.Interpreter(model_content=model_bytes, num_threads=1)
    interp.allocate_tensors()
    inp = interp.get_input_details()[0]
    outs = interp.get_output_details()
    results: list[list[np.ndarray]] = [[] for _ in outs]
    for i in range(0, x.shape[0] - batch + 1, batch):
        interp.set_tensor(inp["index"], _to_input(x[i:i + batch], inp))
        interp.invoke()
        for k, o in enumerate(outs):
            results[k].append(_from_output(interp.get_tensor(o["index"]), o))
    arrays = [np.concatenate(r, axis=0) if r else np.zeros((0,)) for r in results]
    return (arrays, [o["name"] for o in outs]) if with_names else arrays


run_fp32 = run_tflite       # the FP32 baseline's outputs (float I/O: no quantization)


def _to_input(x: np.ndarray, detail: dict) -> np.ndarray:
    dtype = np.dtype(detail["dtype"])
    scale, zp = detail.get("quantization", (0.0, 0))
    if dtype.kind in "iu" and scale and np.asarray(x).dtype.kind == "f":
        info = np.iinfo(dtype)
        return np.clip(np.round(x / scale) + zp, info.min, info.max).astype(dtype)
    return x.astype(dtype, copy=False)


def _from_output(y: np.ndarray, detail: dict) -> np.ndarray:
    scale, zp = detail.get("quantization", (0.0, 0))
    if np.asarray(y).dtype.kind in "iu" and scale:
        return (np.asarray(y, dtype=np.float64) - zp) * scale
    return np.array(y)
