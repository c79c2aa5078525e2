"""Lowering of the ONNX operators that compute (convolution, dense, pooling, normalization,
resize, softmax, reduction), one function each, registered in ``table.OPS`` (level 2).

Each function takes ``(cx, node, ins)``: the :class:`lower.Ctx`, the NodeProto and the input
:class:`values.Value` list (None for an omitted optional input), and returns the output Values.
Weights are permuted once here: Conv OIHW -> HWIO, depthwise (C*M, 1, kH, kW) -> (kH, kW, C, M),
ConvTranspose (C, O, kH, kW) -> (kH, kW, O, C), Gemm/MatMul rows in a flattened tensor's order.
The ``*_macs`` functions count multiply-accumulates from ONNX shapes for ``inspect``.
"""
from __future__ import annotations

import math
from math import prod
from typing import Any

import numpy as np

from edgebench.quantize.onnx_lower import values as V

NHWC = V.channels_last(4)


# ---------------------------------------------------------------- padding

def explicit_pads(a: dict, in_sp, kernel, strides, dilations) -> tuple:
    """(begin, end) pads per spatial axis from ``pads`` or ``auto_pad``."""
    n = len(in_sp)
    auto = a.get("auto_pad", "NOTSET")
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        begin, end = [], []
        for i in range(n):
            small, big = _same_split(in_sp[i], kernel[i], strides[i], dilations[i])
            begin.append(small if auto == "SAME_UPPER" else big)
            end.append(big if auto == "SAME_UPPER" else small)
        return begin, end
    if auto == "VALID":
        return [0] * n, [0] * n
    pads = list(a.get("pads", [0] * 2 * n))
    return pads[:n], pads[n:]


def _same_split(size: int, k: int, s: int, d: int) -> tuple:
    out = -(-size // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
    return total // 2, total - total // 2


def padding_mode(in_sp, kernel, strides, dilations, begin, end) -> str:
    """"valid", "same" (TensorFlow's SAME: the extra pixel at the end), or "explicit"."""
    if not any(begin) and not any(end):
        return "valid"
    same = [_same_split(in_sp[i], kernel[i], strides[i], dilations[i]) for i in range(len(in_sp))]
    if [s[0] for s in same] == list(begin) and [s[1] for s in same] == list(end):
        return "same"
    return "explicit"


def _spatial(cx, node, x, what: str) -> None:
    if x is None or x.is_const:
        raise cx.fail(node, f"its {what} input is a constant")
    if x.rank != 4:
        raise cx.fail(node, f"{x.rank - 2}-D {node.op_type} is not supported (2-D only, NCHW input)",
                      "reshape 1-D signals to N x C x 1 x L before the operator")


def _weighted(cx, node, ins) -> tuple:
    """(input Value, float32 weights, attributes, bias or None) of a Conv/ConvTranspose node."""
    x, w = ins[0], ins[1]
    _spatial(cx, node, x, "data")
    if not w.is_const:
        raise cx.fail(node, "its weights are computed at run time", "export with constant weights")
    bias = ins[2].const.astype(np.float32) if len(ins) > 2 and ins[2] is not None else None
    return x, w.const.astype(np.float32), cx.attrs(node), bias


# ---------------------------------------------------------------- Conv

def conv(cx, node, ins):
    x, W, a, bias = _weighted(cx, node, ins)
    O, Ig, kh, kw = W.shape  # noqa: E741 (ONNX names: output channels)
    C = x.shape[1]
    group = int(a.get("group", 1))
    strides = list(a.get("strides", [1, 1]))
    dil = list(a.get("dilations", [1, 1]))
    if max(strides) > 1 and max(dil) > 1:
        raise cx.fail(node, f"strides {strides} with dilations {dil}: TensorFlow has no strided dilated convolution")
    W, bias = cx.fold_affine(node, W, np.zeros(O, np.float32) if bias is None else bias, 0)
    t, padding = _padded(cx, node, x, a, (kh, kw), strides, dil)
    L = cx.layers
    if group == 1:
        layer = L.Conv2D(O, (kh, kw), strides=strides, padding=padding, dilation_rate=dil, name=cx.name(node))
        y = layer(t)
        layer.set_weights([W.transpose(2, 3, 1, 0), bias])
    elif group == C and O % C == 0 and Ig == 1:
        mult = O // C
        layer = L.DepthwiseConv2D((kh, kw), strides=strides, padding=padding, depth_multiplier=mult,
                                  dilation_rate=dil, name=cx.name(node))
        y = layer(t)
        layer.set_weights([W.reshape(C, mult, kh, kw).transpose(2, 3, 0, 1), bias])
    else:                                    # grouped: one convolution per group, concatenated
        if C % group or O % group:
            raise cx.fail(node, f"group {group} does not divide {C} input and {O} output channels")
        og = O // group
        parts = cx.ops.split(t, group, axis=-1)
        outs = []
        for g in range(group):
            layer = L.Conv2D(og, (kh, kw), strides=strides, padding=padding, dilation_rate=dil,
                             name=cx.name(node, f"_g{g}"))
            outs.append(layer(parts[g]))
            layer.set_weights([W[g * og:(g + 1) * og].transpose(2, 3, 1, 0), bias[g * og:(g + 1) * og]])
        y = cx.ops.concatenate(outs, axis=-1)
    return [V.tensor(y, NHWC)]


def _padded(cx, node, x, a, kernel, strides, dil) -> tuple:
    """(NHWC tensor, Keras padding): explicit pads other than TensorFlow's SAME become a PAD."""
    in_sp = x.shape[2:]
    begin, end = explicit_pads(a, in_sp, kernel, strides, dil)
    mode = padding_mode(in_sp, kernel, strides, dil, begin, end)
    t = V.in_layout(cx.ops, x, NHWC)
    if mode == "explicit":
        if min(begin + end) < 0:
            raise cx.fail(node, f"negative pads {begin + end}")
        t = cx.layers.ZeroPadding2D(((begin[0], end[0]), (begin[1], end[1])), name=cx.name(node, "_pad"))(t)
        return t, "valid"
    if mode == "same" and max(strides) > 1 and max(dil) > 1:
        raise cx.fail(node, "strided dilated convolution")
    return t, mode


def conv_macs(a, ins, outs) -> int:
    w = ins[1]
    return prod(outs[0]) * prod(w[1:])


# ---------------------------------------------------------------- ConvTranspose

def conv_transpose(cx, node, ins):
    x, W, a, bias = _weighted(cx, node, ins)
    if int(a.get("group", 1)) != 1:
        raise cx.fail(node, f"group {a['group']}: grouped transposed convolution is not supported")
    dil = list(a.get("dilations", [1, 1]))
    if max(dil) != 1:
        raise cx.fail(node, f"dilations {dil}: dilated transposed convolution is not supported")
    C, O, kh, kw = W.shape  # noqa: E741 (ONNX names: output channels)
    strides = list(a.get("strides", [1, 1]))
    outpad = list(a.get("output_padding", [0, 0]))
    in_sp = x.shape[2:]
    kernel = (kh, kw)
    full = [(in_sp[i] - 1) * strides[i] + kernel[i] for i in range(2)]
    if "output_shape" in a:
        want = list(a["output_shape"])[-2:]
        total = [full[i] + outpad[i] - want[i] for i in range(2)]
        upper = a.get("auto_pad", "NOTSET") != "SAME_LOWER"
        begin = [t // 2 if upper else t - t // 2 for t in total]
        end = [t - b for t, b in zip(total, begin)]
    elif a.get("auto_pad", "NOTSET") in ("SAME_UPPER", "SAME_LOWER"):
        total = [full[i] + outpad[i] - in_sp[i] * strides[i] for i in range(2)]
        upper = a["auto_pad"] == "SAME_UPPER"
        begin = [t // 2 if upper else t - t // 2 for t in total]
        end = [t - b for t, b in zip(total, begin)]
    else:
        pads = list(a.get("pads", [0, 0, 0, 0]))
        begin, end = pads[:2], pads[2:]
    out = [full[i] + outpad[i] - begin[i] - end[i] for i in range(2)]
    if min(out) < 1:
        raise cx.fail(node, f"output size {out} from pads {begin + end}")
    W, bias = cx.fold_affine(node, W, np.zeros(O, np.float32) if bias is None else bias, 1)
    t = V.in_layout(cx.ops, x, NHWC)
    same = all(kernel[i] >= strides[i] and begin[i] == (kernel[i] - strides[i]) // 2
               and end[i] == kernel[i] - strides[i] - begin[i] and outpad[i] == 0 for i in range(2))
    layer = cx.layers.Conv2DTranspose(O, kernel, strides=strides, padding="same" if same else "valid",
                                      use_bias=same, name=cx.name(node))
    y = layer(t)
    layer.set_weights([W.transpose(2, 3, 1, 0), bias] if same else [W.transpose(2, 3, 1, 0)])
    if same:
        return [V.tensor(y, NHWC)]
    got = [int(d) for d in y.shape[1:3]]
    crop = [(begin[i], max(got[i] - begin[i] - out[i], 0)) for i in range(2)]
    if any(c for pair in crop for c in pair):
        y = cx.layers.Cropping2D(tuple(crop), name=cx.name(node, "_crop"))(y)
    short = [out[i] - (got[i] - crop[i][0] - crop[i][1]) for i in range(2)]
    if max(short) > 0:                    # output_padding past the full output: zeros (then the bias)
        y = cx.layers.ZeroPadding2D(((0, short[0]), (0, short[1])), name=cx.name(node, "_outpad"))(y)
    return [V.tensor(cx.ops.add(y, bias), NHWC)]


def conv_transpose_macs(a, ins, outs) -> int:
    return prod(ins[0]) * prod(ins[1][1:])


# ---------------------------------------------------------------- Gemm / MatMul

def gemm(cx, node, ins):
    A, B = ins[0], ins[1]
    C = ins[2] if len(ins) > 2 else None
    a = cx.attrs(node)
    alpha, beta = float(a.get("alpha", 1.0)), float(a.get("beta", 1.0))
    trans_a, trans_b = int(a.get("transA", 0)), int(a.get("transB", 0))
    if A.is_const or not B.is_const or (C is not None and not C.is_const):
        if A.is_const:
            raise cx.fail(node, "a constant left operand with a run-time right operand is not supported")
        ta = V.plain(cx.ops, A)
        tb = V.plain(cx.ops, B) if not B.is_const else B.const
        ta = cx.ops.transpose(ta) if trans_a else ta
        tb = (cx.ops.transpose(tb) if not B.is_const else tb.T) if trans_b else tb
        y = cx.ops.matmul(ta, tb)
        y = cx.ops.multiply(y, alpha) if alpha != 1.0 else y
        if C is not None:
            c = C.const * beta if C.is_const else cx.ops.multiply(V.plain(cx.ops, C), beta)
            y = cx.ops.add(y, c)
        return [V.tensor(y)]
    kernel = (B.const.T if trans_b else B.const).astype(np.float64) * alpha
    n = kernel.shape[1]
    if C is None:
        bias = np.zeros(n)
    else:
        c = np.asarray(C.const, dtype=np.float64) * beta
        if c.size not in (1, n) or (c.ndim == 2 and c.shape[0] != 1):
            raise cx.fail(node, f"bias of shape {list(c.shape)} does not broadcast over one row of {n} outputs")
        bias = np.broadcast_to(c.reshape(-1), (n,)).copy()
    kernel, bias = cx.fold_affine(node, kernel, bias, 1)
    if trans_a:
        t = cx.ops.transpose(V.plain(cx.ops, A))
    elif A.order is not None:
        kernel, t = kernel[A.order], A.t      # rows in the flattened channels-last order
    else:
        t = V.plain(cx.ops, A)
    return [V.tensor(_dense(cx, node, t, kernel, bias))]


def _dense(cx, node, t, kernel, bias=None):
    layer = cx.layers.Dense(kernel.shape[1], use_bias=bias is not None, name=cx.name(node))
    y = layer(t)
    layer.set_weights([kernel.astype(np.float32)] + ([bias.astype(np.float32)] if bias is not None else []))
    return y


def gemm_macs(a, ins, outs) -> int:
    k = ins[0][0] if int(a.get("transA", 0)) else ins[0][-1]
    return prod(outs[0]) * k


def matmul(cx, node, ins):
    A, B = ins
    if A.is_const:
        return [V.tensor(cx.ops.matmul(A.const, V.plain(cx.ops, B)))]
    if B.is_const and B.rank == 2:
        kernel = B.const.astype(np.float64)
        if A.order is not None:
            return [V.tensor(_dense(cx, node, A.t, kernel[A.order]))]
        if A.perm[-1] == A.rank - 1:          # the contracted axis is the Keras last axis already
            return [V.tensor(_dense(cx, node, A.t, kernel), A.perm)]
        return [V.tensor(_dense(cx, node, V.plain(cx.ops, A), kernel))]
    tb = B.const if B.is_const else V.plain(cx.ops, B)
    return [V.tensor(cx.ops.matmul(V.plain(cx.ops, A), tb))]


def matmul_macs(a, ins, outs) -> int:
    return prod(outs[0]) * ins[0][-1]


# ---------------------------------------------------------------- BatchNormalization (not folded)

def batch_norm(cx, node, ins):
    x = ins[0]
    if not all(v is not None and v.is_const for v in ins[1:5]):
        raise cx.fail(node, "its scale, bias, mean and variance are computed at run time")
    eps = float(cx.attrs(node).get("epsilon", 1e-5))
    gamma, beta, mean, var = (v.const.astype(np.float64) for v in ins[1:5])
    s = gamma / np.sqrt(var + eps)
    shift = beta - mean * s
    shape = (-1,) + (1,) * (x.rank - 2)
    sc = V.align_const(s.reshape(shape).astype(np.float32), x)
    sh = V.align_const(shift.reshape(shape).astype(np.float32), x)
    t = x.t if x.order is None else V.materialize(cx.ops, x)
    y = cx.ops.add(cx.ops.multiply(t, sc), sh)
    return [V.Value(t=y, perm=x.perm if x.order is None else V.identity(2))]


# ---------------------------------------------------------------- pooling

def _pool_geometry(cx, node, x, a) -> tuple:
    kernel = list(a["kernel_shape"])
    strides = list(a.get("strides", [1] * len(kernel)))
    dil = list(a.get("dilations", [1] * len(kernel)))
    if max(dil) != 1:
        raise cx.fail(node, f"dilations {dil}: dilated pooling is not supported")
    in_sp = x.shape[2:]
    begin, end = explicit_pads(a, in_sp, kernel, strides, dil)
    if int(a.get("ceil_mode", 0)):
        for i in range(2):             # a last partial window, kept when it starts inside the input
            span = in_sp[i] + begin[i] + end[i] - kernel[i]
            last = -(-span // strides[i]) * strides[i]
            if span % strides[i] and last < in_sp[i] + begin[i]:
                end[i] += strides[i] - span % strides[i]
    return kernel, strides, dil, begin, end


def max_pool(cx, node, ins):
    x = ins[0]
    _spatial(cx, node, x, "data")
    a = cx.attrs(node)
    why = max_pool_check(node, cx.used, ())
    if why:
        raise cx.fail(node, why)
    kernel, strides, dil, begin, end = _pool_geometry(cx, node, x, a)
    mode = padding_mode(x.shape[2:], kernel, strides, dil, begin, end)
    t = V.in_layout(cx.ops, x, NHWC)
    if mode == "explicit":
        pads = [[0, 0], [begin[0], end[0]], [begin[1], end[1]], [0, 0]]
        if x.nonneg:                              # zeros never win against values >= 0
            t = cx.ops.pad(t, pads)
        elif max(begin + end) <= 1:               # one edge pixel mirrored = the edge: never changes a max
            t = cx.ops.pad(t, pads, mode="symmetric")
        else:
            raise cx.fail(node, f"pads {begin + end} wider than one pixel on an input that may be negative")
        mode = "valid"
    y = cx.ops.max_pool(t, tuple(kernel), tuple(strides), padding=mode)
    return [V.tensor(y, NHWC, nonneg=x.nonneg)]


def max_pool_check(node, used, shapes):
    if any(o and o in used for o in node.output[1:]):
        return "its Indices output is read by another node: not supported"
    return spatial_check(node, used, shapes)


def spatial_check(node, used, shapes):
    """2-D (NCHW) inputs only, as ``_spatial`` requires when lowering."""
    if shapes and shapes[0] is not None and len(shapes[0]) != 4:
        return f"{len(shapes[0]) - 2}-D {node.op_type} is not supported (2-D only, NCHW input)"
    return None


def average_pool(cx, node, ins):
    x = ins[0]
    _spatial(cx, node, x, "data")
    a = cx.attrs(node)
    if int(a.get("ceil_mode", 0)):
        plain = dict(a, ceil_mode=0)
        if _pool_geometry(cx, node, x, plain)[3:] != _pool_geometry(cx, node, x, a)[3:]:
            raise cx.fail(node, "ceil_mode=1 adds a partial window: not supported for AveragePool",
                          "export with ceil_mode=False or pad the input to a whole number of windows")
    kernel, strides, dil, begin, end = _pool_geometry(cx, node, x, a)
    include = int(a.get("count_include_pad", 0))
    mode = padding_mode(x.shape[2:], kernel, strides, dil, begin, end)
    t = V.in_layout(cx.ops, x, NHWC)
    if mode == "valid" or (mode == "same" and not include):
        y = cx.ops.average_pool(t, tuple(kernel), tuple(strides), padding=mode)
        return [V.tensor(y, NHWC, nonneg=x.nonneg)]
    t = cx.ops.pad(t, [[0, 0], [begin[0], end[0]], [begin[1], end[1]], [0, 0]])
    y = cx.ops.average_pool(t, tuple(kernel), tuple(strides), padding="valid")
    if not include:                               # divide by the real pixels, not the padded window
        y = cx.ops.multiply(y, _window_correction(x.shape[2:], kernel, strides, begin, end))
    return [V.tensor(y, NHWC, nonneg=x.nonneg)]


def _window_correction(in_sp, kernel, strides, begin, end) -> np.ndarray:
    counts = []
    for i in range(2):
        n_out = (in_sp[i] + begin[i] + end[i] - kernel[i]) // strides[i] + 1
        starts = np.arange(n_out) * strides[i] - begin[i]
        counts.append(np.minimum(starts + kernel[i], in_sp[i]) - np.maximum(starts, 0))
    real = np.outer(counts[0], counts[1]).astype(np.float64)
    return (kernel[0] * kernel[1] / real).astype(np.float32).reshape(1, len(counts[0]), len(counts[1]), 1)


def global_average_pool(cx, node, ins):
    x = ins[0]
    _spatial(cx, node, x, "data")
    y = cx.ops.mean(V.in_layout(cx.ops, x, NHWC), axis=(1, 2), keepdims=True)
    return [V.tensor(y, NHWC, nonneg=x.nonneg)]


def global_max_pool(cx, node, ins):
    x = ins[0]
    _spatial(cx, node, x, "data")
    y = cx.ops.max(V.in_layout(cx.ops, x, NHWC), axis=(1, 2), keepdims=True)
    return [V.tensor(y, NHWC, nonneg=x.nonneg)]


# ---------------------------------------------------------------- Resize / Upsample

#: (mode, coordinate_transformation_mode, nearest_mode or None) -> TFLite resize flags
_RESIZE = {
    ("nearest", "asymmetric", "floor"): ("nearest", False, False),
    ("nearest", "half_pixel", "round_prefer_ceil"): ("nearest", False, True),
    ("nearest", "half_pixel", "round_prefer_floor"): ("nearest", False, True),
    ("nearest", "pytorch_half_pixel", "round_prefer_floor"): ("nearest", False, True),
    ("nearest", "pytorch_half_pixel", "round_prefer_ceil"): ("nearest", False, True),
    ("nearest", "align_corners", "round_prefer_ceil"): ("nearest", True, False),
    ("linear", "half_pixel", None): ("bilinear", False, True),
    ("linear", "pytorch_half_pixel", None): ("bilinear", False, True),
    ("linear", "align_corners", None): ("bilinear", True, False),
    ("linear", "asymmetric", None): ("bilinear", False, False),
}


def resize(cx, node, ins):
    x = ins[0]
    _spatial(cx, node, x, "data")
    a = cx.attrs(node)
    if node.op_type == "Upsample":        # opset 7-9: scales as attribute (7) or input (9), asymmetric
        scales = a.get("scales") or (ins[1].const.tolist() if len(ins) > 1 and ins[1] is not None else None)
        sizes = None
        mode, ctm, nearest = a.get("mode", "nearest"), "asymmetric", "floor"
    else:
        if cx.opset < 11:                 # Resize-10: (X, scales), asymmetric
            scales, sizes, ctm = ins[1].const.tolist(), None, "asymmetric"
        else:
            scales = ins[2].const.tolist() if len(ins) > 2 and ins[2] is not None and ins[2].const.size else None
            sizes = ins[3].const.tolist() if len(ins) > 3 and ins[3] is not None else None
            ctm = a.get("coordinate_transformation_mode", "half_pixel")
        mode = a.get("mode", "nearest")
        nearest = a.get("nearest_mode", "round_prefer_floor") if cx.opset >= 11 else "floor"
        if int(a.get("antialias", 0)):
            raise cx.fail(node, "antialias=1 is not supported")
        if a.get("axes") is not None:
            raise cx.fail(node, "the axes attribute is not supported")
    shape = x.shape
    if sizes is not None:
        out = [int(s) for s in sizes]
    elif scales is not None:
        out = [int(math.floor(d * s)) for d, s in zip(shape, scales)]
    else:
        raise cx.fail(node, "neither scales nor sizes is a constant")
    if out[:2] != list(shape[:2]):
        raise cx.fail(node, f"resizes the batch or channel axis ({list(shape)} -> {out})")
    key = (mode, ctm, nearest if mode == "nearest" else None)
    if key not in _RESIZE:
        raise cx.fail(node, f"mode {mode!r} with coordinate_transformation_mode {ctm!r}"
                            + (f" and nearest_mode {nearest!r}" if mode == "nearest" else "") + " is not supported",
                      "supported: " + "; ".join(f"{m}/{c}" + (f"/{n}" if n else "") for m, c, n in _RESIZE))
    kind, align, half = _RESIZE[key]
    layer = resize_layer(cx.keras)(size=(out[2], out[3]), kind=kind, align_corners=align, half_pixel_centers=half,
                                   name=cx.name(node))
    return [V.tensor(layer(V.in_layout(cx.ops, x, NHWC)), NHWC, nonneg=x.nonneg)]


_RESIZE_LAYER: dict[str, type] = {}   # "cls": the layer class, made once keras is imported


def resize_layer(keras: Any):
    """A Keras layer calling TensorFlow's ResizeNearestNeighbor/ResizeBilinear with explicit flags:
    they convert to TFLite RESIZE_NEAREST_NEIGHBOR/RESIZE_BILINEAR (Keras' UpSampling2D converts to
    TILE v3 under TensorFlow 2.21, which LiteRT 2.3 cannot load)."""
    if "cls" not in _RESIZE_LAYER:
        # lazy: tensorflow, sklearn, pandas (optional; import tensorflow 18.8 s, sklearn 6.0 s, pandas 1.3 s), loaded only where used
        import tensorflow as tf

        class OnnxResize(keras.layers.Layer):
            def __init__(self, size, kind, align_corners, half_pixel_centers, **kwargs):
                super().__init__(**kwargs)
                self.size, self.kind = tuple(int(s) for s in size), kind
                self.align_corners, self.half_pixel_centers = bool(align_corners), bool(half_pixel_centers)

            def call(self, x):
                op = tf.raw_ops.ResizeNearestNeighbor if self.kind == "nearest" else tf.raw_ops.ResizeBilinear
                return op(images=x, size=self.size, align_corners=self.align_corners,
                          half_pixel_centers=self.half_pixel_centers)

            def compute_output_shape(self, shape):
                return (shape[0], *self.size, shape[3])

        _RESIZE_LAYER["cls"] = OnnxResize
    return _RESIZE_LAYER["cls"]


# ---------------------------------------------------------------- Softmax, ReduceMean

def softmax(cx, node, ins):
    return _softmax(cx, node, ins, cx.ops.softmax, nonneg=True)


def log_softmax(cx, node, ins):
    """LOG_SOFTMAX (PyTorch's MNIST example ends with F.log_softmax)."""
    return _softmax(cx, node, ins, cx.ops.log_softmax, nonneg=False)


def _softmax(cx, node, ins, fn, nonneg: bool):
    x = ins[0]
    a = cx.attrs(node)
    axis = int(a.get("axis", -1 if cx.opset >= 13 else 1))
    axis = axis + x.rank if axis < 0 else axis
    if cx.opset < 13 and axis != x.rank - 1:     # Softmax-1/11: over the flattened axes axis..end
        t = V.plain(cx.ops, x)
        shape = x.shape
        y = cx.ops.reshape(fn(cx.ops.reshape(t, (prod(shape[:axis]), -1)), axis=-1), shape)
        return [V.tensor(y, nonneg=nonneg)]
    if x.order is not None:
        return [V.Value(t=fn(x.t, axis=-1), perm=x.perm, order=x.order, unflat=x.unflat, nonneg=nonneg)]
    return [V.tensor(fn(x.t, axis=V.keras_axis(x, axis)), x.perm, nonneg=nonneg)]


def reduce_mean(cx, node, ins):
    x = ins[0]
    a = cx.attrs(node)
    if "axes" in a:
        axes = list(a["axes"])
    elif len(ins) > 1 and ins[1] is not None:
        axes = [int(v) for v in ins[1].const.reshape(-1)]
    else:
        axes = []
    if not axes:
        if int(a.get("noop_with_empty_axes", 0)):
            return [x]
        axes = list(range(x.rank))
    keep = int(a.get("keepdims", 1))
    if x.order is not None:
        x = V.tensor(V.materialize(cx.ops, x))
    onnx_axes = sorted(ax + x.rank if ax < 0 else ax for ax in axes)
    kaxes = tuple(sorted(x.perm.index(ax) for ax in onnx_axes))
    y = cx.ops.mean(x.t, axis=kaxes, keepdims=bool(keep))
    perm = x.perm if keep else V.drop_axes(x.perm, onnx_axes)
    return [V.tensor(y, perm, nonneg=x.nonneg)]

