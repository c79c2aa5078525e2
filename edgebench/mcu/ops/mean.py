"""MEAN over any set of axes of a rank <= 4 input (firmware: core/ops/eb_op_mean.c; level 2).

LiteRT's reference ``QuantizedMeanOrSum``: the multiplier of double(in) / double(out), then
1/count folded in: shifted left by floor(log2(count)) (at most 32 and 31 + shift) and
integer-divided by count. MACs counted as one per input element.
"""
from __future__ import annotations

from math import prod

import numpy as np

from edgebench.mcu import blob_quant as q
from edgebench.mcu.ops.common import Layer, UnsupportedError, arg, const_ints

OPTIONS = {"MEAN": "ReducerOptionsT"}
NEEDS_OPTIONS: frozenset = frozenset()
ALIASES: dict = {}


def lower(op: str, opts, ins: list, outs: list) -> Layer:
    x, axis_t, y = ins[0], arg(ins, 1), outs[0]
    in_s, in_z = x.qparams("input")
    out_s, out_z = y.qparams("output")
    rank = len(x.shape)
    if not 1 <= rank <= 4:
        raise UnsupportedError(f"input of rank {rank}")
    axes = [int(v) for v in const_ints(axis_t, "the axis")]
    resolved = sorted({a + rank if a < 0 else a for a in axes})
    if not axes or any(not 0 <= a < rank for a in resolved) or len(resolved) != len(axes):
        raise UnsupportedError(f"axes {axes} of a rank-{rank} input")
    mask = sum(1 << (a + 4 - rank) for a in resolved)
    kept = [d for i, d in enumerate(x.shape) if i not in resolved]
    if prod(y.shape) != prod(kept):
        raise UnsupportedError(f"output {y.shape} does not match the mean of {x.shape} over {axes}")
    count = prod(x.shape) // max(prod(kept), 1)
    m, s = q.quantize_multiplier(float(in_s) / float(out_s))
    n = min(count.bit_length() - 1, 32, 31 + s)
    m, s = int(np.int64((m << n) // count).astype(np.int32)), s - n
    if not -31 <= s <= 30:
        raise UnsupportedError("mean rescale factor out of range")
    params = [0, mask, in_z, out_z, m, s]
    return Layer("MEAN", [x.index], y.index, {}, (q.INT8_MIN, q.INT8_MAX), params,
                 macs=count * prod(kept))
