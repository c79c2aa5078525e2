"""Operators that move int8 values by geometry (level 2): RESIZE_NEAREST_NEIGHBOR,
RESIZE_BILINEAR (source rows and columns precomputed here), TRANSPOSE_CONV, and
TRANSPOSE / SLICE / STRIDED_SLICE as one strided gather. Parameter layouts:
firmware/BLOB.md.
"""
from __future__ import annotations

from math import prod

import numpy as np

from edgebench.mcu import blob_quant as q
from edgebench.mcu.blob_ops import Layer
from edgebench.mcu.blob_ops_ext import TYPE_INT8, const_ints, op_unsupported, require_same_quant


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
    require_same_quant(x, y, "output")
    if len(x.shape) != 4 or len(y.shape) != 4 or x.shape[0] != y.shape[0] or x.shape[3] != y.shape[3]:
        raise op_unsupported(f"input {x.shape} and output {y.shape} must be NHWC with equal N and C")
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
        raise op_unsupported(f"padding type {padding}")
    return max((conv_out - 1) * stride + k - out_size, 0) // 2


def lower_transpose_conv(opts, shape_t, w, x, b, y) -> Layer:
    from edgebench.mcu.blob_ops import const_bias, weight_scales

    in_s, in_z = x.qparams("input")
    out_s, out_z = y.qparams("output")
    if len(x.shape) != 4 or len(w.shape) != 4 or len(y.shape) != 4:
        raise op_unsupported("input, filter and output must be 4-D (NHWC)")
    oc, kh, kw, ic = w.shape
    if ic != x.shape[3] or oc != y.shape[3] or x.shape[0] != y.shape[0]:
        raise op_unsupported(f"filter {w.shape} does not fit input {x.shape} and output {y.shape}")
    if shape_t is not None and shape_t.constant and tuple(int(v) for v in shape_t.data) != tuple(y.shape):
        raise op_unsupported(f"output_shape {list(shape_t.data)} differs from the output tensor {y.shape}")
    if int(getattr(opts, "fusedActivationFunction", 0) or 0):
        raise op_unsupported("fused activation on TRANSPOSE_CONV")
    scales = weight_scales(w, oc, 0, "filter")
    sh, sw = int(opts.strideH), int(opts.strideW)
    if sh < 1 or sw < 1:
        raise op_unsupported(f"stride {sh}x{sw}")
    ph = _tconv_pad(y.shape[1], kh, sh, int(opts.padding))
    pw = _tconv_pad(y.shape[2], kw, sw, int(opts.padding))
    ms = [q.conv_multiplier(in_s, fs, out_s) for fs in scales]
    chan = np.concatenate([const_bias(b, oc), [m for m, _ in ms], [s for _, s in ms]]).astype(np.int64)
    if (np.abs(chan[:oc]) >= 2 ** 31).any():
        raise op_unsupported("bias outside int32")
    macs = x.shape[0] * x.shape[1] * x.shape[2] * ic * kh * kw * oc
    return Layer("TRANSPOSE_CONV", [x.index, w.index], y.index,
                 dict(stride=(sh, sw), dilation=(1, 1), pad=(ph, pw), filter=(kh, kw), depth_mult=1),
                 (q.INT8_MIN, q.INT8_MAX), [-in_z, out_z], chan.astype(np.int32), macs=macs)


# ---- SLICE, STRIDED_SLICE, TRANSPOSE: one strided gather ------------------------------

def _gather_layer(op: str, x, y, base: int, strides: list) -> Layer:
    """out[i0, i1, i2, i3] = in[base + sum(i_k * strides[k])] over the right-aligned 4-D output
    (the reference copies the bytes whatever the quantization says; so does the engine)."""
    if x.type != y.type or y.type != TYPE_INT8:
        raise op_unsupported(f"{op} of a non-int8 tensor")
    strides = [0] * (4 - len(strides)) + list(strides)
    return Layer(op, [x.index], y.index, {}, (q.INT8_MIN, q.INT8_MAX), [int(base), *map(int, strides)])


def _in_strides(shape) -> list:
    st, acc = [], 1
    for d in reversed(shape):
        st.insert(0, acc)
        acc *= d
    return st


def lower_transpose(x, perm_t, y) -> Layer:
    perm = [int(v) for v in const_ints(perm_t, "the permutation")]
    r = len(x.shape)
    if r > 4 or sorted(perm) != list(range(r)):
        raise op_unsupported(f"permutation {perm} of a rank-{r} input")
    if tuple(x.shape[p] for p in perm) != tuple(y.shape):
        raise op_unsupported(f"permutation {perm} does not turn {x.shape} into {y.shape}")
    st = _in_strides(x.shape)
    return _gather_layer("TRANSPOSE", x, y, 0, [st[p] for p in perm])


def lower_slice(x, begin_t, size_t, y) -> Layer:
    r = len(x.shape)
    begin = [int(v) for v in const_ints(begin_t, "the begin")]
    size = [int(v) for v in const_ints(size_t, "the size")]
    if r > 4 or len(begin) != r or len(size) != r:
        raise op_unsupported(f"begin {begin} / size {size} of a rank-{r} input")
    size = [d - b if s == -1 else s for d, b, s in zip(x.shape, begin, size)]
    if any(b < 0 or s < 0 or b + s > d for d, b, s in zip(x.shape, begin, size)) or tuple(size) != tuple(y.shape):
        raise op_unsupported(f"begin {begin} / size {size} of {x.shape} do not give {y.shape}")
    st = _in_strides(x.shape)
    return _gather_layer("SLICE", x, y, sum(b * s for b, s in zip(begin, st)), st)


def lower_strided_slice(opts, x, begin_t, end_t, strides_t, y) -> Layer:
    r = len(x.shape)
    begin = [int(v) for v in const_ints(begin_t, "the begin")]
    end = [int(v) for v in const_ints(end_t, "the end")]
    step = [int(v) for v in const_ints(strides_t, "the strides")] if strides_t is not None else [1] * r
    masks = {k: int(getattr(opts, k, 0) or 0) for k in ("beginMask", "endMask", "ellipsisMask", "newAxisMask",
                                                         "shrinkAxisMask")}
    if masks["ellipsisMask"] or masks["newAxisMask"] or bool(getattr(opts, "offset", False)):
        raise op_unsupported("ellipsis, new-axis or offset STRIDED_SLICE is not supported")
    if r > 4 or not (len(begin) == len(end) == len(step) == r) or 0 in step:
        raise op_unsupported(f"begin/end/strides of length {len(begin)}/{len(end)}/{len(step)} for rank {r}")
    st = _in_strides(x.shape)
    base, out_strides, out_dims = 0, [], []
    for k, d in enumerate(x.shape):
        if masks["shrinkAxisMask"] >> k & 1:          # one index, the axis dropped
            if step[k] < 0:     # LiteRT's reference leaves such an output unwritten
                raise op_unsupported(f"shrunk axis {k} with a negative stride")
            if masks["beginMask"] >> k & 1:           # TFLite's StartForAxis: the mask wins
                i = 0
            else:
                i = begin[k] + d if begin[k] < 0 else begin[k]
            if not 0 <= i < d:
                raise op_unsupported(f"index {begin[k]} outside axis {k} of {x.shape}")
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
        raise op_unsupported(f"the slice of {x.shape} has shape {out_dims}, the output {y.shape}")
    if len(out_dims) > 4 or 0 in out_dims:
        raise op_unsupported(f"slice shape {out_dims}")
    if tuple(out_dims) != tuple(y.shape):           # same elements, other rank: align to the output
        out_strides = _realign(out_dims, out_strides, list(y.shape))
    return _gather_layer("STRIDED_SLICE", x, y, base, out_strides)


def _realign(dims: list, strides: list, out_shape: list) -> list:
    """Strides for ``out_shape`` when it only differs from ``dims`` by axes of size 1."""
    kept = [s for d, s in zip(dims, strides) if d != 1]
    if [d for d in dims if d != 1] != [d for d in out_shape if d != 1]:
        raise op_unsupported(f"slice shape {dims} does not match the output {out_shape}")
    it = iter(kept)
    return [0 if d == 1 else next(it) for d in out_shape]


def lower_split(op: str, opts, ins: list, outs: list) -> list:
    """SPLIT (inputs: axis, data) / SPLIT_V (data, sizes, axis): one SLICE gather per output,
    in output order (the outputs are copies of the input's bytes)."""
    x, axis_t = (ins[1], ins[0]) if op == "SPLIT" else (ins[0], ins[2] if len(ins) > 2 else None)
    if x is None or any(y is None for y in outs) or not outs:
        raise op_unsupported(f"{op} with a missing input or output")
    axis = [int(v) for v in const_ints(axis_t, "the axis")]
    r = len(x.shape)
    if len(axis) != 1 or not -r <= axis[0] < r or r > 4:
        raise op_unsupported(f"axis {axis} of a rank-{r} input")
    a = axis[0] % r
    if sum(y.shape[a] for y in outs) != x.shape[a] or any(
            len(y.shape) != r or any(d != e for k, (d, e) in enumerate(zip(y.shape, x.shape)) if k != a)
            for y in outs):
        raise op_unsupported(f"outputs {[y.shape for y in outs]} do not split {x.shape} on axis {a}")
    st = _in_strides(x.shape)
    layers, offset = [], 0
    for y in outs:
        layers.append(_gather_layer("SLICE", x, y, offset * st[a], st))
        offset += y.shape[a]
    return layers
