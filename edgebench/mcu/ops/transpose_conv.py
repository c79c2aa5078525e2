"""TRANSPOSE_CONV (firmware: core/ops/eb_op_transpose_conv.c; level 2).

``reference_integer_ops::TransposeConv`` per channel: every output is the sum of the taps
that reach it, plus the bias (not folded: the taps that reach an output vary), requantised
with the channel's multiplier and shift, then clamped to the fused activation's range (a
Keras Conv2DTranspose followed by ReLU is fused by the converter; LiteRT applies the clamp
after requantisation, and so does the engine).
"""
from __future__ import annotations

import numpy as np

from edgebench.mcu.ops.common import (
    Layer,
    UnsupportedError,
    const_bias,
    conv_multipliers,
    fused_activation,
    weight_scales,
)

OPTIONS = {"TRANSPOSE_CONV": "TransposeConvOptionsT"}
NEEDS_OPTIONS = frozenset(OPTIONS)
ALIASES: dict = {}


def _tconv_pad(out_size: int, k: int, stride: int, padding: int) -> int:
    """TFLite's ComputePaddingHeightWidth applied to the transposed convolution's output."""
    if padding == 0:      # SAME
        conv_out = (out_size + stride - 1) // stride
    elif padding == 1:    # VALID
        conv_out = (out_size - k + stride) // stride
    else:
        raise UnsupportedError(f"padding type {padding}")
    return max((conv_out - 1) * stride + k - out_size, 0) // 2


def lower(op: str, opts, ins: list, outs: list) -> Layer:
    if len(ins) < 3 or ins[1] is None or ins[2] is None:
        raise UnsupportedError("TRANSPOSE_CONV needs output_shape, weights and input")
    shape_t, w, x, b, y = ins[0], ins[1], ins[2], ins[3] if len(ins) > 3 else None, outs[0]
    in_s, in_z = x.qparams("input")
    out_s, out_z = y.qparams("output")
    if len(x.shape) != 4 or len(w.shape) != 4 or len(y.shape) != 4:
        raise UnsupportedError("input, filter and output must be 4-D (NHWC)")
    oc, kh, kw, ic = w.shape
    if ic != x.shape[3] or oc != y.shape[3] or x.shape[0] != y.shape[0]:
        raise UnsupportedError(f"filter {w.shape} does not fit input {x.shape} and output {y.shape}")
    if shape_t is not None and shape_t.constant and tuple(int(v) for v in shape_t.data) != tuple(y.shape):
        raise UnsupportedError(f"output_shape {list(shape_t.data)} differs from the output tensor {y.shape}")
    scales = weight_scales(w, oc, 0, "filter")
    sh, sw = int(opts.strideH), int(opts.strideW)
    if sh < 1 or sw < 1:
        raise UnsupportedError(f"stride {sh}x{sw}")
    ph = _tconv_pad(y.shape[1], kh, sh, int(opts.padding))
    pw = _tconv_pad(y.shape[2], kw, sw, int(opts.padding))
    mults, shifts = conv_multipliers(in_s, scales, out_s)
    chan = np.concatenate([const_bias(b, oc), mults, shifts]).astype(np.int64)
    if (np.abs(chan[:oc]) >= 2 ** 31).any():
        raise UnsupportedError("bias outside int32")
    macs = x.shape[0] * x.shape[1] * x.shape[2] * ic * kh * kw * oc
    return Layer("TRANSPOSE_CONV", [x.index, w.index], y.index,
                 dict(stride=(sh, sw), dilation=(1, 1), pad=(ph, pw), filter=(kh, kw), depth_mult=1),
                 fused_activation(opts, out_s, out_z), [-in_z, out_z], chan.astype(np.int32), macs=macs)
