"""SOFTMAX (firmware: core/ops/eb_op_softmax.c; level 2).

int8 -> int8 over the last dimension, as LiteRT's BUILTIN_REF runs it (gemmlowp fixed
point); the output must be scale 1/256 and zero point -128.
"""
from __future__ import annotations

from edgebench.mcu import blob_quant as q
from edgebench.mcu.ops.common import Layer, UnsupportedError

OPTIONS = {"SOFTMAX": "SoftmaxOptionsT"}
NEEDS_OPTIONS = frozenset(OPTIONS)
ALIASES: dict = {}


def lower(op: str, opts, ins: list, outs: list) -> Layer:
    x, y = ins[0], outs[0]
    in_s, _ = x.qparams("input")
    out_s, out_z = y.qparams("output")
    if out_z != -128 or abs(out_s - 1.0 / 256) > 1e-8:
        raise UnsupportedError(f"output quantization (scale {out_s}, zero point {out_z}) must be "
                               "1/256 and -128, as TFLite's int8 softmax requires")
    if tuple(x.shape) != tuple(y.shape):
        raise UnsupportedError(f"input {x.shape} and output {y.shape} differ")
    beta = float(getattr(opts, "beta", 0.0) or 0.0)
    try:
        params = q.softmax_params(beta, in_s)
    except ValueError as exc:
        raise UnsupportedError(str(exc)) from None
    return Layer("SOFTMAX", [x.index], y.index, params=params)
