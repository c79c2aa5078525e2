"""CONV_2D and DEPTHWISE_CONV_2D (firmware: core/ops/eb_op_conv.c; level 2).

Per-channel int8 convolutions, ``reference_integer_ops::ConvPerChannel`` /
``DepthwiseConvPerChannel``: the bias folded with the input offset (``bias'``), a Q31
multiplier and shift per channel, the fused activation as the clamp. Scratch: a gathered
receptive field for CONV_2D (none for a 1x1 convolution without padding), a row of input
zero points for DEPTHWISE_CONV_2D. A 1x1 CONV_2D without padding over a multiple of four input
channels stores its filter biased (blob format 3), as FULLY_CONNECTED does.
"""
from __future__ import annotations

import numpy as np

from edgebench.mcu.ops.common import (
    Layer,
    Tensor,
    UnsupportedError,
    biased_filter_bias,
    const_bias,
    conv_multipliers,
    fused_activation,
    weight_scales,
    window_padding,
    wrap32,
)

OPTIONS = {"CONV_2D": "Conv2DOptionsT", "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptionsT"}
NEEDS_OPTIONS = frozenset(OPTIONS)
ALIASES: dict = {}


def lower(op: str, opts, ins: list, outs: list) -> Layer:
    if len(ins) < 2 or ins[1] is None:
        raise UnsupportedError("missing the filter (weights) input")
    return lower_conv(op, opts, ins[0], ins[1], ins[2] if len(ins) > 2 else None, outs[0])


def folded_chan(bias: np.ndarray, weight_sums: np.ndarray, in_offset: int, in_scale: float,
                filter_scales: np.ndarray, out_scale: float) -> np.ndarray:
    """int32 ``bias'[C]`` (bias + input offset x the channel's weight sum, wrapped), multiplier[C],
    shift[C]: the per-channel arrays of a convolution."""
    eff = wrap32(bias + in_offset * weight_sums.astype(np.int64))
    mults, shifts = conv_multipliers(in_scale, filter_scales, out_scale)
    return np.concatenate([eff, mults, shifts]).astype(np.int32)


def lower_conv(op: str, opts, x: Tensor, w: Tensor, b, y: Tensor) -> Layer:
    in_s, in_z = x.qparams("input")
    out_s, out_z = y.qparams("output")
    if len(x.shape) != 4 or len(w.shape) != 4 or len(y.shape) != 4:
        raise UnsupportedError("input, filter and output must be 4-D (NHWC)")
    n, h, wd, c = x.shape
    on, oh, ow, oc = y.shape
    depthwise = op == "DEPTHWISE_CONV_2D"
    if depthwise:
        _, kh, kw, fc = w.shape
        if w.shape[0] != 1 or fc != oc or oc % c:
            raise UnsupportedError(f"depthwise filter {w.shape} does not fit input {x.shape} "
                                   f"and output {y.shape}")
        mult = oc // c
        opt_mult = int(getattr(opts, "depthMultiplier", 0) or 0)
        if opt_mult not in (0, mult):
            raise UnsupportedError(f"depth_multiplier {opt_mult} disagrees with the shapes ({mult})")
        scales = weight_scales(w, oc, 3, "filter")
        assert w.data is not None        # weight_scales refused a filter that is not constant
        sums = w.data.reshape(kh * kw, oc).astype(np.int64).sum(axis=0)
        macs = on * oh * ow * oc * kh * kw
    else:
        fo, kh, kw, fc = w.shape
        if fo != oc:
            raise UnsupportedError(f"filter {w.shape} does not fit output {y.shape}")
        if fc != c:
            raise UnsupportedError(f"grouped convolution (filter depth {fc}, input channels {c}) "
                                   "is not supported")
        mult = 1
        scales = weight_scales(w, oc, 0, "filter")
        assert w.data is not None        # weight_scales refused a filter that is not constant
        sums = w.data.reshape(oc, -1).astype(np.int64).sum(axis=1)
        macs = on * oh * ow * oc * kh * kw * c
    if on != n:
        raise UnsupportedError(f"batch {on} of the output differs from the input's {n}")
    sh, sw = int(opts.strideH), int(opts.strideW)
    dh, dw = int(getattr(opts, "dilationHFactor", 1) or 1), int(getattr(opts, "dilationWFactor", 1) or 1)
    ph = window_padding(h, kh, sh, dh, int(opts.padding), oh)
    pw = window_padding(wd, kw, sw, dw, int(opts.padding), ow)
    direct = kh == 1 and kw == 1 and ph == 0 and pw == 0
    # blob format 3: a 1x1 convolution over a multiple of four input channels stores its filter
    # biased as FULLY_CONNECTED's (even input-channel positions w ^ 0x80, bias + 128 * sum(odd w));
    # the firmware's eb_conv_biased() is the same rule
    biased = not depthwise and direct and c % 4 == 0
    bias = const_bias(b, oc)
    if biased:
        bias = bias + biased_filter_bias(w.data, oc)
    # conv: one receptive field gathered with its padding (none for 1x1);
    # depthwise: a row of input zero points that padded taps read
    scratch = c if depthwise else (0 if direct else kh * kw * c)
    return Layer(op, [x.index, w.index], y.index,
                 dict(stride=(sh, sw), dilation=(dh, dw), pad=(ph, pw), filter=(kh, kw), depth_mult=mult),
                 fused_activation(opts, out_s, out_z), [-in_z, out_z],
                 folded_chan(bias, sums, -in_z, in_s, scales, out_s), macs=macs,
                 scratch_bytes=scratch, blocked_filter=not depthwise, biased_filter=biased)
