"""FULLY_CONNECTED (firmware: core/ops/eb_op_fully_connected.c; level 2).

LiteRT's reference FULLY_CONNECTED rescales in double precision, ``round(acc * (in *
filter / out))``, not with a fixed-point multiplier: the blob carries each unit's binary64
factor (low, high word) and the engine reproduces the double multiply and ``round()`` in
integers. The weights are stored blocked, as CONV_2D's, with the bytes of even depth
positions biased (``w ^ 0x80``, blob format 2) and ``bias'`` raised by 128 times the sum of the
odd-position weights: the engine's dot product then needs one SXTB16 per weight word instead
of two (firmware/BLOB.md, "Filter layouts"). No scratch.
"""
from __future__ import annotations

from math import prod

import numpy as np

from edgebench.mcu import blob_quant as q
from edgebench.mcu.ops.common import (
    Layer,
    UnsupportedError,
    biased_filter_bias,
    const_bias,
    fused_activation,
    weight_scales,
    wrap32,
)

OPTIONS = {"FULLY_CONNECTED": "FullyConnectedOptionsT"}
NEEDS_OPTIONS: frozenset = frozenset()
ALIASES: dict = {}


def lower(op: str, opts, ins: list, outs: list) -> Layer:
    if len(ins) < 2 or ins[1] is None:
        raise UnsupportedError("missing the filter (weights) input")
    x, w, b, y = ins[0], ins[1], ins[2] if len(ins) > 2 else None, outs[0]
    in_s, in_z = x.qparams("input")
    out_s, out_z = y.qparams("output")
    if int(getattr(opts, "weightsFormat", 0) or 0) != 0:
        raise UnsupportedError("shuffled weights format is not supported")
    if len(w.shape) != 2:
        raise UnsupportedError(f"weights of shape {w.shape} (expected [units, depth])")
    units, depth = w.shape
    n_in, n_out = prod(x.shape), prod(y.shape)
    if n_in % depth or (n_in // depth) * units != n_out:
        raise UnsupportedError(f"input {x.shape}, weights {w.shape} and output {y.shape} disagree")
    scales = weight_scales(w, units, 0, "weights")
    rows = w.data.reshape(units, depth).astype(np.int64)
    sums = rows.sum(axis=1)
    try:
        factors = np.array([q.fc_rescale(in_s, fs, out_s) for fs in scales], dtype="<f8")
    except ValueError as exc:
        raise UnsupportedError(str(exc)) from None
    words = factors.view("<u4").reshape(units, 2)
    chan = np.concatenate([wrap32(const_bias(b, units) + (-in_z) * sums + biased_filter_bias(rows, units)),
                           words[:, 0].view("<i4"), words[:, 1].view("<i4")]).astype(np.int32)
    return Layer("FULLY_CONNECTED", [x.index, w.index], y.index, {},
                 fused_activation(opts, out_s, out_z), [-in_z, out_z, int(len(set(factors.tolist())) == 1)], chan,
                 macs=(n_in // depth) * units * depth, blocked_filter=True, biased_filter=True)
