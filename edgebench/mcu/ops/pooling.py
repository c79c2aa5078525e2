"""AVERAGE_POOL_2D and MAX_POOL_2D (firmware: core/ops/eb_op_pooling.c; level 2).

Input and output quantization must be equal (TFLite requires it); the fused activation is
the clamp after the average or maximum. No scratch, no MACs counted.
"""
from __future__ import annotations

import numpy as np

from edgebench.mcu.ops.common import Layer, UnsupportedError, fused_activation, window_padding

OPTIONS = {"AVERAGE_POOL_2D": "Pool2DOptionsT", "MAX_POOL_2D": "Pool2DOptionsT"}
NEEDS_OPTIONS = frozenset(OPTIONS)
ALIASES: dict = {}


def lower(op: str, opts, ins: list, outs: list) -> Layer:
    x, y = ins[0], outs[0]
    in_s, in_z = x.qparams("input")
    out_s, out_z = y.qparams("output")
    if (np.float32(in_s), in_z) != (np.float32(out_s), out_z):
        raise UnsupportedError("input and output quantization differ (TFLite requires them equal)")
    if len(x.shape) != 4 or len(y.shape) != 4 or x.shape[0] != y.shape[0] or x.shape[3] != y.shape[3]:
        raise UnsupportedError(f"input {x.shape} and output {y.shape} must be NHWC with equal N and C")
    kh, kw = int(opts.filterHeight), int(opts.filterWidth)
    sh, sw = int(opts.strideH), int(opts.strideW)
    ph = window_padding(x.shape[1], kh, sh, 1, int(opts.padding), y.shape[1])
    pw = window_padding(x.shape[2], kw, sw, 1, int(opts.padding), y.shape[2])
    return Layer(op, [x.index], y.index,
                 dict(stride=(sh, sw), dilation=(1, 1), pad=(ph, pw), filter=(kh, kw), depth_mult=1),
                 fused_activation(opts, out_s, out_z))
