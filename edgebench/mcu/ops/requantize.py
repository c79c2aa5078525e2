"""QUANTIZE (int8 to int8), RELU, RELU6, RELU_N1_TO_1, LEAKY_RELU: one rescale each side of
the input zero point, then a clamp (firmware: core/ops/eb_op_requantize.c; level 2).

Multipliers as LiteRT's ``Prepare`` computes them: QUANTIZE in double, the ReLUs from the
float32 ratio of the scales, LEAKY_RELU's negative side with alpha folded in.
"""
from __future__ import annotations

from math import prod

import numpy as np

from edgebench.mcu import blob_quant as q
from edgebench.mcu.ops.common import TYPE_INT8, Layer, UnsupportedError

OPTIONS = {"QUANTIZE": "QuantizeOptionsT", "LEAKY_RELU": "LeakyReluOptionsT"}
NEEDS_OPTIONS: frozenset = frozenset()
ALIASES: dict = {}
_RELU_ACT = {"RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}


def lower(op: str, opts, ins: list, outs: list) -> Layer:
    x, y = ins[0], outs[0]
    if op == "QUANTIZE" and x.type != TYPE_INT8:
        raise UnsupportedError("QUANTIZE of a non-int8 tensor inside the model")
    in_s, in_z = x.qparams("input")
    out_s, out_z = y.qparams("output")
    if prod(x.shape) != prod(y.shape):
        raise UnsupportedError(f"input {x.shape} and output {y.shape} differ in size")
    f_in, f_out = np.float32(in_s), np.float32(out_s)
    act = (q.INT8_MIN, q.INT8_MAX)
    if op == "QUANTIZE":           # quantize.cc: double(in) / double(out)
        m, s = q.quantize_multiplier(float(in_s) / float(out_s))
        neg = (m, s)
    elif op == "LEAKY_RELU":       # activations.cc: float arithmetic, then double
        alpha = np.float32(getattr(opts, "alpha", 0.0) or 0.0)
        if not alpha > 0:
            raise UnsupportedError(f"LEAKY_RELU alpha {float(alpha)} (only positive alphas are supported)")
        m, s = q.quantize_multiplier(float(f_in / f_out))
        neg = q.quantize_multiplier(float(f_in * alpha / f_out))
    else:                          # RELU, RELU6, RELU_N1_TO_1: float(in / out)
        m, s = q.quantize_multiplier(float(f_in / f_out))
        neg = (m, s)
        act = q.activation_range(_RELU_ACT[op], out_s, out_z)
    if not (-31 <= s <= 30 and -31 <= neg[1] <= 30):
        raise UnsupportedError("rescale factor out of range")
    return Layer(op, [x.index], y.index, {}, act, [in_z, out_z, m, s, neg[0], neg[1]])
