"""Quantization of model inputs and dequantization of outputs (standard library + numpy).

The agent's timed loops (:mod:`.loop`) and the host (the MCU board client, the
MLPerf mode) convert tensors the same way, so the conversions live here, in a
module the host may import without the agent's hot loop. Python 3.9 or newer.

Quantization of a float input: ``q = clip(round(x / scale) + zero_point)`` with
numpy's rounding half to even (``np.rint``), then cast to the tensor's integer
type. Dequantization of an output: ``(q - zero_point) * scale`` in float32.
A tensor ``detail`` is the agent's description: ``{"dtype": ..., "quant":
None or {"scale": s, "zero_point": z}, ...}``.
"""
from __future__ import annotations

from typing import Callable, List

import numpy as np

from .protocol import DataFailure


def make_quantizer(detail: dict, batch_shape: List[int]) -> Callable[[np.ndarray], np.ndarray]:
    """A function float32 array (batch_shape) -> tensor-typed array (reuses one buffer)."""
    dtype = np.dtype(detail["dtype"])
    quant = detail["quant"]
    if quant is None or dtype.kind == "f":
        if dtype == np.float32:
            return lambda x: x
        return lambda x: x.astype(dtype)
    if dtype.kind not in "iu":
        raise DataFailure(f"input tensor type {dtype.name} is not supported")
    scale, zp = np.float32(quant["scale"]), np.float32(quant["zero_point"])
    info = np.iinfo(dtype)
    lo, hi = np.float32(info.min), np.float32(info.max)
    tmp = np.empty(batch_shape, np.float32)
    out = np.empty(batch_shape, dtype)
    # Plain ufuncs only: np.round and np.clip are Python-level wrappers that cost
    # microseconds per call, as much as a small model's invoke. np.rint rounds half
    # to even, exactly like np.round with 0 decimals.
    divide, rint, add, maximum, minimum, copyto = (np.divide, np.rint, np.add, np.maximum,
                                                   np.minimum, np.copyto)

    def quantize(x: np.ndarray) -> np.ndarray:
        divide(x, scale, out=tmp)
        rint(tmp, out=tmp)
        add(tmp, zp, out=tmp)
        maximum(tmp, lo, out=tmp)
        minimum(tmp, hi, out=tmp)
        copyto(out, tmp, casting="unsafe")
        return out

    return quantize


def dequantize(detail: dict, y: np.ndarray) -> np.ndarray:
    """``y`` as float32: ``(y - zero_point) * scale`` for an integer tensor, else a float32 copy."""
    quant = detail["quant"]
    if quant is None or y.dtype.kind == "f":
        return y.astype(np.float32)
    return ((y.astype(np.float32) - np.float32(quant["zero_point"])) * np.float32(quant["scale"]))
