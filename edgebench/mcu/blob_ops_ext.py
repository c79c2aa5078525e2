"""Lowering of the operators added in engine version 2 (level 2).

SUB, MUL, MAXIMUM, MINIMUM (with broadcasting), QUANTIZE (int8 to int8),
RELU, RELU6, RELU_N1_TO_1, LEAKY_RELU, MEAN, PAD, PADV2, CONCATENATION, and
SQUEEZE / EXPAND_DIMS (run as RESHAPE: the same bytes). Parameters follow
LiteRT's reference kernels' ``Prepare`` arithmetic (firmware/BLOB.md lists the
``p[]`` layout of each); anything the engine cannot run bit-exactly raises
:class:`~edgebench.mcu.blob_ops.UnsupportedError`.
"""
from __future__ import annotations

from math import prod

import numpy as np

from edgebench.mcu import blob_quant as q
from edgebench.mcu.blob_ops import (ALIASES, Layer, UnsupportedError, _activation, check_broadcast,
                                     lower_reshape)

_RELU_ACT = {"RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}
_INT8, _INT32 = 9, 2


def _err(msg: str) -> UnsupportedError:
    return UnsupportedError(msg)


def _same_quant(a, b, what: str) -> None:
    sa, za = a.qparams("input")
    sb, zb = b.qparams(what)
    if (np.float32(sa), za) != (np.float32(sb), zb):
        raise _err(f"input and {what} quantization differ (TFLite requires them equal)")


def _const_ints(t, what: str) -> np.ndarray:
    if t is None or not t.constant or t.type != _INT32:
        raise _err(f"{what} must be a constant int32 tensor")
    return t.data.astype(np.int64)


def _fused(opts, y) -> tuple:
    return _activation(opts, *y.qparams("output"))


def lower_binary(op: str, opts, a, b, y):
    s1, z1 = a.qparams("input 1")
    s2, z2 = b.qparams("input 2")
    so, zo = y.qparams("output")
    check_broadcast(a, b, y)
    act = (q.INT8_MIN, q.INT8_MAX)
    if op == "SUB":
        try:
            params = q.add_params(s1, z1, s2, z2, so, zo)
        except ValueError as exc:
            raise _err(str(exc)) from None
        act = _fused(opts, y)
    elif op == "MUL":
        m, shift = q.quantize_multiplier(float(s1) * float(s2) / float(so))
        params = [-z1, -z2, zo, 0, 0, 0, 0, 0, m, shift]
        act = _fused(opts, y)
    else:     # MAXIMUM / MINIMUM compare the raw int8 values, as the reference does
        params = []
    return Layer(op, [a.index, b.index], y.index, {}, act, params)


def lower_requant(op: str, opts, x, y):
    in_s, in_z = x.qparams("input")
    out_s, out_z = y.qparams("output")
    if prod(x.shape) != prod(y.shape):
        raise _err(f"input {x.shape} and output {y.shape} differ in size")
    f_in, f_out = np.float32(in_s), np.float32(out_s)
    act = (q.INT8_MIN, q.INT8_MAX)
    if op == "QUANTIZE":           # quantize.cc: double(in) / double(out)
        m, s = q.quantize_multiplier(float(in_s) / float(out_s))
        neg = (m, s)
    elif op == "LEAKY_RELU":       # activations.cc: float arithmetic, then double
        alpha = np.float32(getattr(opts, "alpha", 0.0) or 0.0)
        if not alpha > 0:
            raise _err(f"LEAKY_RELU alpha {float(alpha)} (only positive alphas are supported)")
        m, s = q.quantize_multiplier(float(f_in / f_out))
        neg = q.quantize_multiplier(float(f_in * alpha / f_out))
    else:                          # RELU, RELU6, RELU_N1_TO_1: float(in / out)
        m, s = q.quantize_multiplier(float(f_in / f_out))
        neg = (m, s)
        act = q.activation_range(_RELU_ACT[op], out_s, out_z)
    if not (-31 <= s <= 30 and -31 <= neg[1] <= 30):
        raise _err("rescale factor out of range")
    return Layer(op, [x.index], y.index, {}, act, [in_z, out_z, m, s, neg[0], neg[1]])


def lower_mean(opts, x, axis_t, y):
    in_s, in_z = x.qparams("input")
    out_s, out_z = y.qparams("output")
    rank = len(x.shape)
    if not 1 <= rank <= 4:
        raise _err(f"input of rank {rank}")
    axes = [int(v) for v in _const_ints(axis_t, "the axis")]
    resolved = sorted({a + rank if a < 0 else a for a in axes})
    if not axes or any(not 0 <= a < rank for a in resolved) or len(resolved) != len(axes):
        raise _err(f"axes {axes} of a rank-{rank} input")
    mask = sum(1 << (a + 4 - rank) for a in resolved)
    kept = [d for i, d in enumerate(x.shape) if i not in resolved]
    if prod(y.shape) != prod(kept):
        raise _err(f"output {y.shape} does not match the mean of {x.shape} over {axes}")
    # LiteRT's reference QuantizedMeanOrSum: the multiplier of double(in) /
    # double(out), then 1/count folded in: shifted left by floor(log2(count))
    # (at most 32 and 31 + shift), integer-divided by count
    count = prod(x.shape) // max(prod(kept), 1)
    m, s = q.quantize_multiplier(float(in_s) / float(out_s))
    n = min(count.bit_length() - 1, 32, 31 + s)
    m, s = int(np.int64((m << n) // count).astype(np.int32)), s - n
    if not -31 <= s <= 30:
        raise _err("mean rescale factor out of range")
    params = [0, mask, in_z, out_z, m, s]
    return Layer("MEAN", [x.index], y.index, {}, (q.INT8_MIN, q.INT8_MAX), params,
                 macs=count * prod(kept))


def lower_pad(op: str, x, pads_t, value_t, y):
    _same_quant(x, y, "output")
    rank = len(x.shape)
    pads = _const_ints(pads_t, "the paddings")
    if rank > 4 or pads.size != 2 * rank:
        raise _err(f"paddings of shape {pads_t.shape} for a rank-{rank} input")
    pads = pads.reshape(rank, 2)
    if (pads < 0).any() or tuple(int(d + p.sum()) for d, p in zip(x.shape, pads)) != tuple(y.shape):
        raise _err(f"paddings {pads.tolist()} do not turn {x.shape} into {y.shape}")
    before = [0] * (4 - rank) + [int(v) for v in pads[:, 0]]
    value = y.qparams("output")[1]
    if op == "PADV2" and value_t is not None:
        if not value_t.constant or value_t.type != _INT8 or value_t.data.size != 1:
            raise _err("PADV2 constant value must be one constant int8")
        value = int(value_t.data[0])
    return Layer(op, [x.index], y.index, {}, (q.INT8_MIN, q.INT8_MAX), before + [value])


def lower_concat(opts, ins: list, y):
    if not 1 <= len(ins) <= 3 or any(t is None for t in ins):
        raise _err(f"{len(ins)} inputs (the engine concatenates up to 3)")
    if int(getattr(opts, "fusedActivationFunction", 0) or 0):
        raise _err("fused activation on CONCATENATION")
    rank = len(y.shape)
    axis = int(getattr(opts, "axis", 0) or 0)
    axis = axis + rank if axis < 0 else axis
    if rank > 4 or not 0 <= axis < rank:
        raise _err(f"axis {axis} of a rank-{rank} output")
    for t in ins:
        _same_quant(t, y, "output")
        if len(t.shape) != rank or any(d != o for i, (d, o) in enumerate(zip(t.shape, y.shape))
                                       if i != axis):
            raise _err(f"input {t.shape} does not fit output {y.shape} on axis {axis}")
    if sum(t.shape[axis] for t in ins) != y.shape[axis]:
        raise _err(f"inputs do not add up to output {y.shape} on axis {axis}")
    return Layer("CONCATENATION", [t.index for t in ins], y.index, {}, (q.INT8_MIN, q.INT8_MAX),
                 [axis + 4 - rank])


def lower_ext(op: str, opts, ins: list, y):
    """Lower one of EXT_OPS or ALIASES (ins[0] is present)."""
    def arg(i):
        return ins[i] if len(ins) > i else None

    if op in ALIASES:
        return lower_reshape(ins[0], y)
    if op in ("SUB", "MUL", "MAXIMUM", "MINIMUM"):
        if len(ins) != 2 or ins[1] is None:
            raise _err(f"{op} needs two inputs")
        return lower_binary(op, opts, ins[0], ins[1], y)
    if op in ("QUANTIZE", "LEAKY_RELU") or op in _RELU_ACT:
        if op == "QUANTIZE" and ins[0].type != _INT8:
            raise _err("QUANTIZE of a non-int8 tensor inside the model")
        return lower_requant(op, opts, ins[0], y)
    if op == "MEAN":
        return lower_mean(opts, ins[0], arg(1), y)
    if op in ("PAD", "PADV2"):
        return lower_pad(op, ins[0], arg(1), arg(2), y)
    if op == "CONCATENATION":
        return lower_concat(opts, ins, y)
    if op in ("LOGISTIC", "TANH", "HARD_SWISH"):
        return lower_lut(op, ins[0], y)
    if op in ("RESIZE_NEAREST_NEIGHBOR", "RESIZE_BILINEAR"):
        return lower_resize(op, opts, ins[0], y)
    if op == "TRANSPOSE":
        return lower_transpose(ins[0], arg(1), y)
    if op == "SLICE":
        return lower_slice(ins[0], arg(1), arg(2), y)
    if op == "STRIDED_SLICE":
        return lower_strided_slice(opts, ins[0], arg(1), arg(2), arg(3), y)
    if op == "TRANSPOSE_CONV":
        if len(ins) < 3 or ins[1] is None or ins[2] is None or opts is None:
            raise _err("TRANSPOSE_CONV needs output_shape, weights and input (and its options)")
        return lower_transpose_conv(opts, ins[0], ins[1], ins[2], arg(3), y)
    raise _err(f"operator {op}")


# ---- unary operators run as a 256-entry table (LOGISTIC, TANH, HARD_SWISH) -------------

def _float_lut(fn, in_s: float, in_z: int, out_s: float, out_z: int) -> np.ndarray:
    """LiteRT's LUTPopulate<int8_t> in float32: dequantize, transform, multiply by
    1/out_scale, round half away from zero, add the zero point, clamp. The transform is
    evaluated in double and rounded to float32 (the C library's tanhf/expf are within
    an ulp of that)."""
    f32 = np.float32
    inv = f32(1) / f32(out_s)
    lut = np.empty(256, np.int8)
    for v in range(-128, 128):
        deq = f32(f32(in_s) * f32(v - in_z))
        t = fn(deq)
        r = f32(t * inv)
        r = f32(np.floor(r + f32(0.5)) if r >= 0 else -np.floor(-r + f32(0.5)))
        lut[v + 128] = max(-128, min(127, int(f32(r + f32(out_z)))))
    return lut


def _logistic(x: np.float32) -> np.float32:
    import math

    e = np.float32(math.exp(-float(x))) if -float(x) < 88.7 else np.float32(np.inf)
    return np.float32(np.float32(1) / np.float32(np.float32(1) + e))


def _tanh(x: np.float32) -> np.float32:
    import math

    return np.float32(math.tanh(float(x)))


def _div15(v: int) -> int:
    """v / 2^15 truncated toward zero, as C's integer division."""
    return (abs(v) >> 15) * (1 if v >= 0 else -1)


def _srdhm16(a: int, b: int) -> int:
    """gemmlowp SaturatingRoundingDoublingHighMul on int16."""
    if a == b == -32768:
        return 32767
    ab = a * b
    return _div15(ab + ((1 << 14) if ab >= 0 else 1 - (1 << 14)))


def _rdbypot(x: int, e: int) -> int:
    mask = (1 << e) - 1
    return (x >> e) + (1 if (x & mask) > (mask >> 1) + (1 if x < 0 else 0) else 0)


def _sat16(v: int) -> int:
    return max(-32768, min(32767, v))


def _down16(m: int) -> int:
    """DownScaleInt32ToInt16Multiplier."""
    return 32767 if m >= (1 << 31) - 1 - (1 << 15) else (m + (1 << 15)) >> 16


def _hard_swish_lut(in_s: float, in_z: int, out_s: float, out_z: int) -> np.ndarray:
    """reference_ops::HardSwish (int16 fixed point) for every int8 input, with the
    parameters of activations.cc HardSwishPrepare (float32 arithmetic)."""
    f32 = np.float32
    hires = f32(1.0 / 128.0) * f32(in_s)
    out_m, out_e = q.quantize_multiplier(float(hires / f32(out_s)))
    relu_m, relu_e = q.quantize_multiplier(float(hires / f32(3.0 / 32768.0)))
    if out_e > 0:
        raise _err("HARD_SWISH output multiplier needs a left shift (TFLite refuses it too)")
    out_m16, relu_m16 = _down16(out_m), _down16(relu_m)
    lut = np.empty(256, np.int8)
    for v in range(-128, 128):
        x = v - in_z
        hi = _sat16(x * 128)
        pre = _srdhm16(hi, out_m16)
        r = hi
        if relu_e > 0:
            r = _sat16(r * (1 << (relu_e - 1)))
        r = _srdhm16(r, relu_m16)
        if relu_e > 0:
            r = _sat16(r * 2)
        if relu_e < 0:
            r = _rdbypot(r, -relu_e)
        r = (r + (1 << 15)) >> 1
        p = 32767 if r == pre == -32768 else _div15(r * pre)   # SaturatingDoublingHighMul
        o = _rdbypot(p, -out_e) + out_z
        lut[v + 128] = max(-128, min(127, o))
    return lut


def lower_lut(op: str, x, y) -> Layer:
    in_s, in_z = x.qparams("input")
    out_s, out_z = y.qparams("output")
    if prod(x.shape) != prod(y.shape):
        raise _err(f"input {x.shape} and output {y.shape} differ in size")
    if op == "LOGISTIC":
        if np.float32(out_s) != np.float32(1 / 256):
            raise _err(f"output scale {out_s} (TFLite's int8 LOGISTIC requires 1/256)")
        lut = _float_lut(_logistic, in_s, in_z, out_s, out_z)
    elif op == "TANH":
        lut = _float_lut(_tanh, in_s, in_z, out_s, out_z)
    else:
        lut = _hard_swish_lut(in_s, in_z, out_s, out_z)
    # the table travels in the layer's per-channel area: 256 bytes, indexed by x + 128
    return Layer(op, [x.index], y.index, {}, (q.INT8_MIN, q.INT8_MAX), [],
                 np.frombuffer(lut.tobytes(), "<i4").copy())


# ---- RESIZE_NEAREST_NEIGHBOR, RESIZE_BILINEAR: the source rows/columns precomputed ------

def _nearest(out_size: int, in_size: int, align: bool, half: bool) -> list:
    """reference_ops GetNearestNeighbor for every output index (float32 arithmetic)."""
    f32 = np.float32
    scale = (f32(in_size - 1) / f32(out_size - 1) if align and out_size > 1
             else f32(in_size) / f32(out_size))
    offset = f32(0.5) if half else f32(0.0)
    out = []
    for i in range(out_size):
        v = f32(f32(f32(i) + offset) * scale)
        idx = int(q.round_half_away(float(v))) if align else int(np.floor(v))
        idx = min(idx, in_size - 1)
        out.append(max(0, idx) if half else idx)
    return out


def _bilinear(out_size: int, in_size: int, align: bool, half: bool) -> tuple:
    """reference_ops ResizeBilinearInteger: (lower, upper, scaled - 1024·lower) per output index."""
    def cdiv(a: int, b: int) -> int:            # C integer division (toward zero)
        return abs(a) // b * (1 if a >= 0 else -1)

    scale = ((1 << 10) * in_size + out_size // 2) // out_size
    if align and out_size > 1:
        scale = ((1 << 10) * (in_size - 1) + (out_size - 1) // 2) // (out_size - 1)
    lo, hi, frac = [], [], []
    for i in range(out_size):
        v = i * scale + scale // 2 - (1 << 9) if half else i * scale
        a = max(cdiv(v, 1 << 10), 0)
        lo.append(a)
        hi.append(min(cdiv(v + (1 << 10) - 1, 1 << 10), in_size - 1))
        frac.append(v - (1 << 10) * a)
    return lo, hi, frac


def lower_resize(op: str, opts, x, y) -> Layer:
    _same_quant(x, y, "output")
    if len(x.shape) != 4 or len(y.shape) != 4 or x.shape[0] != y.shape[0] or x.shape[3] != y.shape[3]:
        raise _err(f"input {x.shape} and output {y.shape} must be NHWC with equal N and C")
    align = bool(getattr(opts, "alignCorners", False))
    half = bool(getattr(opts, "halfPixelCenters", False))
    (_, ih, iw, _), (_, oh, ow, _) = x.shape, y.shape
    if op == "RESIZE_NEAREST_NEIGHBOR":
        ys, xs = _nearest(oh, ih, align, half), _nearest(ow, iw, align, half)
        lo, hi, frac = ys + xs, ys + xs, [0] * (oh + ow)
    else:
        (ly, hy, fy), (lx, hx, fx) = _bilinear(oh, ih, align, half), _bilinear(ow, iw, align, half)
        lo, hi, frac = ly + lx, hy + hx, fy + fx
    # rows then columns: lower[OH + OW], upper[OH + OW], fraction (of 1024)[OH + OW]
    chan = np.array(lo + hi + frac, dtype=np.int64)
    return Layer(op, [x.index], y.index, {}, (q.INT8_MIN, q.INT8_MAX),
                 [1 if op == "RESIZE_NEAREST_NEIGHBOR" else 0], chan.astype(np.int32))


# ---- TRANSPOSE_CONV --------------------------------------------------------------------

def _tconv_pad(out_size: int, k: int, stride: int, padding: int) -> int:
    """TFLite's ComputePaddingHeightWidth applied to the transposed convolution's output."""
    if padding == 0:      # SAME
        conv_out = (out_size + stride - 1) // stride
    elif padding == 1:    # VALID
        conv_out = (out_size - k + stride) // stride
    else:
        raise _err(f"padding type {padding}")
    return max((conv_out - 1) * stride + k - out_size, 0) // 2


def lower_transpose_conv(opts, shape_t, w, x, b, y) -> Layer:
    from edgebench.mcu.blob_ops import _bias, _weights

    in_s, in_z = x.qparams("input")
    out_s, out_z = y.qparams("output")
    if len(x.shape) != 4 or len(w.shape) != 4 or len(y.shape) != 4:
        raise _err("input, filter and output must be 4-D (NHWC)")
    oc, kh, kw, ic = w.shape
    if ic != x.shape[3] or oc != y.shape[3] or x.shape[0] != y.shape[0]:
        raise _err(f"filter {w.shape} does not fit input {x.shape} and output {y.shape}")
    if shape_t is not None and shape_t.constant and tuple(int(v) for v in shape_t.data) != tuple(y.shape):
        raise _err(f"output_shape {list(shape_t.data)} differs from the output tensor {y.shape}")
    if int(getattr(opts, "fusedActivationFunction", 0) or 0):
        raise _err("fused activation on TRANSPOSE_CONV")
    scales = _weights(w, oc, 0, "filter")
    sh, sw = int(opts.strideH), int(opts.strideW)
    if sh < 1 or sw < 1:
        raise _err(f"stride {sh}x{sw}")
    ph = _tconv_pad(y.shape[1], kh, sh, int(opts.padding))
    pw = _tconv_pad(y.shape[2], kw, sw, int(opts.padding))
    ms = [q.conv_multiplier(in_s, fs, out_s) for fs in scales]
    chan = np.concatenate([_bias(b, oc), [m for m, _ in ms], [s for _, s in ms]]).astype(np.int64)
    if (np.abs(chan[:oc]) >= 2 ** 31).any():
        raise _err("bias outside int32")
    macs = x.shape[0] * x.shape[1] * x.shape[2] * ic * kh * kw * oc
    return Layer("TRANSPOSE_CONV", [x.index, w.index], y.index,
                 dict(stride=(sh, sw), dilation=(1, 1), pad=(ph, pw), filter=(kh, kw), depth_mult=1),
                 (q.INT8_MIN, q.INT8_MAX), [-in_z, out_z], chan.astype(np.int32), macs=macs)


# ---- SLICE, STRIDED_SLICE, TRANSPOSE: one strided gather ------------------------------

def _gather_layer(op: str, x, y, base: int, strides: list) -> Layer:
    """out[i0, i1, i2, i3] = in[base + sum(i_k * strides[k])] over the right-aligned 4-D output
    (the reference copies the bytes whatever the quantization says; so does the engine)."""
    if x.type != y.type or y.type != _INT8:
        raise _err(f"{op} of a non-int8 tensor")
    strides = [0] * (4 - len(strides)) + list(strides)
    return Layer(op, [x.index], y.index, {}, (q.INT8_MIN, q.INT8_MAX), [int(base), *map(int, strides)])


def _in_strides(shape) -> list:
    st, acc = [], 1
    for d in reversed(shape):
        st.insert(0, acc)
        acc *= d
    return st


def lower_transpose(x, perm_t, y) -> Layer:
    perm = [int(v) for v in _const_ints(perm_t, "the permutation")]
    r = len(x.shape)
    if r > 4 or sorted(perm) != list(range(r)):
        raise _err(f"permutation {perm} of a rank-{r} input")
    if tuple(x.shape[p] for p in perm) != tuple(y.shape):
        raise _err(f"permutation {perm} does not turn {x.shape} into {y.shape}")
    st = _in_strides(x.shape)
    return _gather_layer("TRANSPOSE", x, y, 0, [st[p] for p in perm])


def lower_slice(x, begin_t, size_t, y) -> Layer:
    r = len(x.shape)
    begin = [int(v) for v in _const_ints(begin_t, "the begin")]
    size = [int(v) for v in _const_ints(size_t, "the size")]
    if r > 4 or len(begin) != r or len(size) != r:
        raise _err(f"begin {begin} / size {size} of a rank-{r} input")
    size = [d - b if s == -1 else s for d, b, s in zip(x.shape, begin, size)]
    if any(b < 0 or s < 0 or b + s > d for d, b, s in zip(x.shape, begin, size)) or tuple(size) != tuple(y.shape):
        raise _err(f"begin {begin} / size {size} of {x.shape} do not give {y.shape}")
    st = _in_strides(x.shape)
    return _gather_layer("SLICE", x, y, sum(b * s for b, s in zip(begin, st)), st)


def lower_strided_slice(opts, x, begin_t, end_t, strides_t, y) -> Layer:
    r = len(x.shape)
    begin = [int(v) for v in _const_ints(begin_t, "the begin")]
    end = [int(v) for v in _const_ints(end_t, "the end")]
    step = [int(v) for v in _const_ints(strides_t, "the strides")] if strides_t is not None else [1] * r
    masks = {k: int(getattr(opts, k, 0) or 0) for k in ("beginMask", "endMask", "ellipsisMask", "newAxisMask",
                                                         "shrinkAxisMask")}
    if masks["ellipsisMask"] or masks["newAxisMask"] or bool(getattr(opts, "offset", False)):
        raise _err("ellipsis, new-axis or offset STRIDED_SLICE is not supported")
    if r > 4 or not (len(begin) == len(end) == len(step) == r) or 0 in step:
        raise _err(f"begin/end/strides of length {len(begin)}/{len(end)}/{len(step)} for rank {r}")
    st = _in_strides(x.shape)
    base, out_strides, out_dims = 0, [], []
    for k, d in enumerate(x.shape):
        if masks["shrinkAxisMask"] >> k & 1:          # one index, the axis dropped
            if step[k] < 0:     # LiteRT's reference leaves such an output unwritten
                raise _err(f"shrunk axis {k} with a negative stride")
            if masks["beginMask"] >> k & 1:           # TFLite's StartForAxis: the mask wins
                i = 0
            else:
                i = begin[k] + d if begin[k] < 0 else begin[k]
            if not 0 <= i < d:
                raise _err(f"index {begin[k]} outside axis {k} of {x.shape}")
            base += i * st[k]
            continue
        b = None if masks["beginMask"] >> k & 1 else begin[k]
        e = None if masks["endMask"] >> k & 1 else end[k]
        start, stop, stp = slice(b, e, step[k]).indices(d)    # numpy's (and TF's) clamping
        n = len(range(start, stop, stp))
        base += start * st[k] if n else 0
        out_strides.append(st[k] * stp)
        out_dims.append(n)
    if tuple(out_dims) != tuple(y.shape) and prod(out_dims) != prod(y.shape):
        raise _err(f"the slice of {x.shape} has shape {out_dims}, the output {y.shape}")
    if len(out_dims) > 4 or 0 in out_dims:
        raise _err(f"slice shape {out_dims}")
    if tuple(out_dims) != tuple(y.shape):           # same elements, other rank: align to the output
        out_strides = _realign(out_dims, out_strides, list(y.shape))
    return _gather_layer("STRIDED_SLICE", x, y, base, out_strides)


def _realign(dims: list, strides: list, out_shape: list) -> list:
    """Strides for ``out_shape`` when it only differs from ``dims`` by axes of size 1."""
    kept = [s for d, s in zip(dims, strides) if d != 1]
    if [d for d in dims if d != 1] != [d for d in out_shape if d != 1]:
        raise _err(f"slice shape {dims} does not match the output {out_shape}")
    it = iter(kept)
    return [0 if d == 1 else next(it) for d in out_shape]
