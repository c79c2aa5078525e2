"""Lower the operators of a full-INT8 .tflite subgraph to engine layers (level 2).

One function per supported operator turns a TFLite operator into a
:class:`Layer`: the blob's operator code (TFLite's BuiltinOperator value), its
tensors, window geometry (explicit padding as TFLite computes it), the fused
activation as an int8 clamp range, and the precomputed integer parameters
(see firmware/BLOB.md). Anything the engine cannot run bit-exactly raises
:class:`UnsupportedError` with a reason; the converter turns it into a
``ModelError`` naming the layer.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import prod
from typing import Optional

import numpy as np

from edgebench.mcu import blob_quant as q

# TFLite BuiltinOperator codes of the supported set (blob op codes)
OPS = {"ADD": 0, "AVERAGE_POOL_2D": 1, "CONV_2D": 3, "DEPTHWISE_CONV_2D": 4,
       "FULLY_CONNECTED": 9, "MAX_POOL_2D": 17, "RESHAPE": 22, "SOFTMAX": 25}
#: operators of engine version 2 (lowered in blob_ops_ext)
EXT_OPS = {"CONCATENATION": 2, "MUL": 18, "RELU": 19, "RELU_N1_TO_1": 20, "RELU6": 21, "PAD": 34,
           "MEAN": 40, "SUB": 41, "MAXIMUM": 55, "MINIMUM": 57, "PADV2": 60, "LEAKY_RELU": 98,
           "QUANTIZE": 114, "LOGISTIC": 14, "TANH": 28, "HARD_SWISH": 117, "RESIZE_BILINEAR": 23,
           "RESIZE_NEAREST_NEIGHBOR": 97, "TRANSPOSE_CONV": 67, "TRANSPOSE": 39, "SLICE": 65,
           "STRIDED_SLICE": 45}
#: the operators each engine version runs (the device reports its version: `engine` in its info)
ENGINE_OPS = {1: tuple(sorted(OPS)), 2: tuple(sorted({**OPS, **EXT_OPS}))}
OPS.update(EXT_OPS)
#: TFLite operators run as another one (the same bytes): not blob codes of their own
ALIASES = {"SQUEEZE": "RESHAPE", "EXPAND_DIMS": "RESHAPE", "SPLIT": "SLICE", "SPLIT_V": "SLICE"}
SUPPORTED_OPS = tuple(sorted([*OPS, *ALIASES]))
TYPE_INT8, TYPE_INT32 = 9, 2
#: the builtin options table each operator's options must be (schema object-API class names)
_OPTIONS = {"ADD": "AddOptionsT", "AVERAGE_POOL_2D": "Pool2DOptionsT", "CONV_2D": "Conv2DOptionsT",
            "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptionsT", "FULLY_CONNECTED": "FullyConnectedOptionsT",
            "MAX_POOL_2D": "Pool2DOptionsT", "RESHAPE": "ReshapeOptionsT", "SOFTMAX": "SoftmaxOptionsT",
            "CONCATENATION": "ConcatenationOptionsT", "MUL": "MulOptionsT", "SUB": "SubOptionsT",
            "MEAN": "ReducerOptionsT", "PAD": "PadOptionsT", "PADV2": "PadV2OptionsT",
            "LEAKY_RELU": "LeakyReluOptionsT", "MAXIMUM": "MaximumMinimumOptionsT",
            "MINIMUM": "MaximumMinimumOptionsT", "SQUEEZE": "SqueezeOptionsT",
            "EXPAND_DIMS": "ExpandDimsOptionsT", "QUANTIZE": "QuantizeOptionsT",
            "RESIZE_BILINEAR": "ResizeBilinearOptionsT",
            "RESIZE_NEAREST_NEIGHBOR": "ResizeNearestNeighborOptionsT",
            "TRANSPOSE_CONV": "TransposeConvOptionsT", "TRANSPOSE": "TransposeOptionsT",
            "SLICE": "SliceOptionsT", "STRIDED_SLICE": "StridedSliceOptionsT", "SPLIT": "SplitOptionsT",
            "SPLIT_V": "SplitVOptionsT"}
_NEEDS_OPTIONS = ("CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "MAX_POOL_2D", "SOFTMAX")


class UnsupportedError(Exception):
    """An operator, or a variant of one, that the engine does not run."""


@dataclass
class Tensor:
    """What the converter needs of one TFLite tensor."""
    index: int
    name: str
    shape: tuple
    type: int                        # TFLite TensorType
    scale: tuple = ()
    zero_point: tuple = ()
    axis: int = 0
    data: Optional[np.ndarray] = None   # constant contents (flat, typed), None for activations

    @property
    def constant(self) -> bool:
        return self.data is not None

    def qparams(self, what: str) -> tuple:
        """(scale, zero point) of a per-tensor quantized int8 tensor."""
        if self.type != TYPE_INT8:
            raise UnsupportedError(f"{what} tensor '{self.name}' is not int8")
        if len(self.scale) != 1 or len(self.zero_point) != 1:
            raise UnsupportedError(f"{what} tensor '{self.name}' is not per-tensor quantized")
        return float(self.scale[0]), int(self.zero_point[0])


@dataclass
class Layer:
    op: str
    inputs: list                      # TFLite tensor indices the device reads (data, filter/2nd input)
    output: int
    geometry: dict = field(default_factory=dict)   # stride/dilation/pad/filter/depth_mult
    act: tuple = (q.INT8_MIN, q.INT8_MAX)
    params: list = field(default_factory=list)     # p[0..9]
    chan: Optional[np.ndarray] = None               # int32 bias'[C], mult[C], shift[C]
    scratch_bytes: int = 0
    macs: int = 0


def block_filter(w: np.ndarray) -> bytes:
    """CONV_2D / FULLY_CONNECTED weights in the blob's blocked order (BLOB.md):
    rows (output channels) of ``depth`` weights in blocks of four rows; in a
    block, each group of four weights of row 0, 1, 2, 3, then the depth % 4
    last weights of each row; the rows % 4 last rows plain."""
    rows = w.shape[0]
    plain = np.ascontiguousarray(w, dtype=np.int8).reshape(rows, -1)
    depth = plain.shape[1]
    nb, k4 = rows // 4, depth // 4 * 4
    if nb == 0:
        return plain.tobytes()
    blocks = plain[:nb * 4].reshape(nb, 4, depth)
    main = blocks[:, :, :k4].reshape(nb, 4, k4 // 4, 4).transpose(0, 2, 1, 3).reshape(nb, -1)
    tail = blocks[:, :, k4:].reshape(nb, -1)
    return np.concatenate([np.concatenate([main, tail], axis=1).reshape(-1),
                           plain[nb * 4:].reshape(-1)]).tobytes()


def fused_activation(opts, out_scale: float, out_zp: int) -> tuple:
    """The clamp range of an operator's fused activation (NONE, RELU, RELU_N1_TO_1, RELU6)."""
    a = int(getattr(opts, "fusedActivationFunction", 0) or 0)
    if a not in q.ACTIVATIONS:
        raise UnsupportedError(f"fused activation {a} (TANH/SIGN_BIT) is not supported; "
                               f"supported: {', '.join(q.ACTIVATIONS.values())}")
    return q.activation_range(a, out_scale, out_zp)


def _window(in_size: int, k: int, stride: int, dilation: int, padding: int, out_size: int) -> int:
    """TFLite ComputePaddingWithOffset: the padding before the first row/column."""
    if stride < 1 or dilation < 1 or k < 1:
        raise UnsupportedError(f"stride {stride}, dilation {dilation}, filter {k}")
    eff = (k - 1) * dilation + 1
    if padding == 0:      # SAME
        expect = (in_size + stride - 1) // stride
    elif padding == 1:    # VALID
        expect = (in_size + stride - eff) // stride
    else:
        raise UnsupportedError(f"padding type {padding}")
    if expect != out_size:
        raise UnsupportedError(f"output size {out_size} differs from {expect} "
                               f"(input {in_size}, filter {k}, stride {stride}, dilation {dilation})")
    total = (out_size - 1) * stride + eff - in_size
    return max(total, 0) // 2


def _four(shape: tuple) -> tuple:
    return (1,) * (4 - len(shape)) + tuple(shape)


def check_broadcast(a: Tensor, b: Tensor, y: Tensor) -> None:
    """Both inputs equal to the output, or 1, in each (right-aligned) dimension. A scalar
    (rank-0) operand, e.g. a Rescaling layer's constant, is stored as shape [1]: the same
    broadcast."""
    for t in (a, b):
        if t.shape == ():
            t.shape = (1,)
    if max(len(a.shape), len(b.shape), len(y.shape)) > 4:
        raise UnsupportedError("more than 4 dimensions")
    for t in (a, b):
        for d, o in zip(_four(t.shape), _four(y.shape)):
            if d not in (o, 1):
                raise UnsupportedError(f"input {t.shape} does not broadcast to output {y.shape}")


def weight_scales(t: Tensor, channels: int, axis: int, what: str) -> np.ndarray:
    """The per-channel scales of the constant, symmetric int8 weights ``t`` (``what``) along ``axis``."""
    if t.type != TYPE_INT8 or not t.constant:
        raise UnsupportedError(f"{what} '{t.name}' must be constant int8 (full-INT8 model)")
    if any(int(z) != 0 for z in t.zero_point):
        raise UnsupportedError(f"{what} '{t.name}' has a non-zero zero point (asymmetric weights)")
    n = len(t.scale)
    if n not in (1, channels) or (n > 1 and t.axis != axis):
        raise UnsupportedError(f"{what} '{t.name}' has {n} scales on axis {t.axis}, "
                               f"expected 1 or {channels} on axis {axis}")
    return np.asarray(t.scale, dtype=np.float64) if n > 1 else np.full(channels, float(t.scale[0]))


def const_bias(t: Optional[Tensor], channels: int) -> np.ndarray:
    """The constant int32 bias ``t`` as int64 (zeros when the operator has none)."""
    if t is None:
        return np.zeros(channels, np.int64)
    if t.type != TYPE_INT32 or not t.constant:
        raise UnsupportedError(f"bias '{t.name}' must be constant int32")
    if t.data.size != channels:
        raise UnsupportedError(f"bias '{t.name}' has {t.data.size} values for {channels} channels")
    return t.data.astype(np.int64)


def _wrap32(v: np.ndarray) -> np.ndarray:
    """int32 wrap-around, as the device's int32 sums."""
    return ((np.asarray(v, np.int64) + 2**31) % 2**32) - 2**31


def _chan(bias: np.ndarray, weight_sums: np.ndarray, in_offset: int, in_scale: float,
          filter_scales: np.ndarray, out_scale: float) -> np.ndarray:
    eff = _wrap32(bias + in_offset * weight_sums.astype(np.int64))
    ms = [q.conv_multiplier(in_scale, fs, out_scale) for fs in filter_scales]
    return np.concatenate([eff, [m for m, _ in ms], [s for _, s in ms]]).astype(np.int32)


def lower_conv(op: str, opts, x: Tensor, w: Tensor, b: Optional[Tensor], y: Tensor) -> Layer:
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
        sums = w.data.reshape(oc, -1).astype(np.int64).sum(axis=1)
        macs = on * oh * ow * oc * kh * kw * c
    if on != n:
        raise UnsupportedError(f"batch {on} of the output differs from the input's {n}")
    sh, sw = int(opts.strideH), int(opts.strideW)
    dh, dw = int(getattr(opts, "dilationHFactor", 1) or 1), int(getattr(opts, "dilationWFactor", 1) or 1)
    ph = _window(h, kh, sh, dh, int(opts.padding), oh)
    pw = _window(wd, kw, sw, dw, int(opts.padding), ow)
    layer = Layer(op, [x.index, w.index], y.index,
                  dict(stride=(sh, sw), dilation=(dh, dw), pad=(ph, pw), filter=(kh, kw),
                       depth_mult=mult),
                  fused_activation(opts, out_s, out_z), [-in_z, out_z],
                  _chan(const_bias(b, oc), sums, -in_z, in_s, scales, out_s), macs=macs)
    direct = kh == 1 and kw == 1 and ph == 0 and pw == 0
    # conv: one receptive field gathered with its padding (none for 1x1);
    # depthwise: a row of input zero points that padded taps read
    layer.scratch_bytes = c if depthwise else (0 if direct else kh * kw * c)
    return layer


def lower_fc(opts, x: Tensor, w: Tensor, b: Optional[Tensor], y: Tensor) -> Layer:
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
    sums = w.data.reshape(units, depth).astype(np.int64).sum(axis=1)
    # LiteRT's reference FULLY_CONNECTED rescales in double precision,
    # round(acc * (in * filter / out)), not with a fixed-point multiplier: the
    # blob carries each factor's binary64 bits (low, high word) and the engine
    # reproduces the double multiply and round() in integers.
    try:
        factors = np.array([q.fc_rescale(in_s, fs, out_s) for fs in scales], dtype="<f8")
    except ValueError as exc:
        raise UnsupportedError(str(exc)) from None
    words = factors.view("<u4").reshape(units, 2)
    chan = np.concatenate([_wrap32(const_bias(b, units) + (-in_z) * sums),
                           words[:, 0].view("<i4"), words[:, 1].view("<i4")]).astype(np.int32)
    return Layer("FULLY_CONNECTED", [x.index, w.index], y.index, {},
                 fused_activation(opts, out_s, out_z), [-in_z, out_z], chan,
                 macs=(n_in // depth) * units * depth)


def lower_pool(op: str, opts, x: Tensor, y: Tensor) -> Layer:
    in_s, in_z = x.qparams("input")
    out_s, out_z = y.qparams("output")
    if (np.float32(in_s), in_z) != (np.float32(out_s), out_z):
        raise UnsupportedError("input and output quantization differ (TFLite requires them equal)")
    if len(x.shape) != 4 or len(y.shape) != 4 or x.shape[0] != y.shape[0] or x.shape[3] != y.shape[3]:
        raise UnsupportedError(f"input {x.shape} and output {y.shape} must be NHWC with equal N and C")
    kh, kw = int(opts.filterHeight), int(opts.filterWidth)
    sh, sw = int(opts.strideH), int(opts.strideW)
    ph = _window(x.shape[1], kh, sh, 1, int(opts.padding), y.shape[1])
    pw = _window(x.shape[2], kw, sw, 1, int(opts.padding), y.shape[2])
    return Layer(op, [x.index], y.index,
                 dict(stride=(sh, sw), dilation=(1, 1), pad=(ph, pw), filter=(kh, kw), depth_mult=1),
                 fused_activation(opts, out_s, out_z))


def lower_add(opts, a: Tensor, b: Tensor, y: Tensor) -> Layer:
    s1, z1 = a.qparams("input 1")
    s2, z2 = b.qparams("input 2")
    so, zo = y.qparams("output")
    check_broadcast(a, b, y)
    try:
        params = q.add_params(s1, z1, s2, z2, so, zo)
    except ValueError as exc:
        raise UnsupportedError(str(exc)) from None
    return Layer("ADD", [a.index, b.index], y.index, {}, fused_activation(opts, so, zo), params)


def lower_reshape(x: Tensor, y: Tensor) -> Layer:
    if x.type != TYPE_INT8 or y.type != TYPE_INT8:
        raise UnsupportedError("RESHAPE of a non-int8 tensor")
    if prod(x.shape) != prod(y.shape):
        raise UnsupportedError(f"element counts of {x.shape} and {y.shape} differ")
    # the reference copies the bytes whatever the quantization says; so does the engine
    return Layer("RESHAPE", [x.index], y.index)


def lower_softmax(opts, x: Tensor, y: Tensor) -> Layer:
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


def lower(op: str, opts, ins: list, outs: list) -> Layer:
    """ins/outs: Tensor or None (optional input left out). One Layer, or a list of them for
    an operator with several outputs (SPLIT, SPLIT_V: one SLICE per output)."""
    split = op in ("SPLIT", "SPLIT_V")
    if (len(outs) != 1 and not split) or not outs or outs[0] is None:
        raise UnsupportedError(f"{len(outs)} outputs")
    y = outs[0]
    if not ins or ins[0] is None:
        raise UnsupportedError("missing input")
    if opts is None and op in _NEEDS_OPTIONS:
        raise UnsupportedError("operator options missing")
    if opts is not None and type(opts).__name__ != _OPTIONS.get(op, type(opts).__name__):
        # the options union names another operator's table (a damaged or hand-made model)
        raise UnsupportedError(f"options {type(opts).__name__[:-1]} do not belong to {op} "
                               f"(expected {_OPTIONS[op][:-1]})")
    if split:
        from edgebench.mcu.blob_ops_shape import lower_split

        return lower_split(op, opts, ins, outs)
    if op in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"):
        if len(ins) < 2 or ins[1] is None:
            raise UnsupportedError("missing the filter (weights) input")
        b = ins[2] if len(ins) > 2 else None
        if op == "FULLY_CONNECTED":
            return lower_fc(opts, ins[0], ins[1], b, y)
        return lower_conv(op, opts, ins[0], ins[1], b, y)
    if op in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
        return lower_pool(op, opts, ins[0], y)
    if op == "ADD":
        if len(ins) != 2 or ins[1] is None:
            raise UnsupportedError("ADD needs two inputs")
        return lower_add(opts, ins[0], ins[1], y)
    if op == "RESHAPE":
        return lower_reshape(ins[0], y)
    if op == "SOFTMAX":
        return lower_softmax(opts, ins[0], y)
    if op in EXT_OPS or op in ALIASES:
        from edgebench.mcu.blob_ops_ext import lower_ext

        return lower_ext(op, opts, ins, y)
    raise UnsupportedError(f"operator {op}")


def graph_operators(model, subgraph) -> tuple:
    """``(operator names, first-output tensor names)`` of a TFLite subgraph (schema object API), in
    execution order; a custom operator is named ``custom <name>``, a missing output ``?``."""
    from edgebench.modelfile import CUSTOM, builtin_code, decode_name, op_names, operator_name

    names, codes, tensors = op_names(), model.operatorCodes or [], subgraph.tensors or []
    ops, outs = [], []
    for op in subgraph.operators or []:
        code = codes[op.opcodeIndex]
        name = operator_name(code, names)
        ops.append(f"custom {name}" if builtin_code(code) == CUSTOM else name)
        o = op.outputs[0] if op.outputs is not None and len(op.outputs) else -1
        outs.append(decode_name(tensors[o].name) if 0 <= o < len(tensors) else "?")
    return ops, outs


def unsupported_layers(layer_ops: list, out_names: list, supported) -> list:
    """(operator, count, first layer index, its output tensor name) for every
    operator of ``layer_ops`` not in ``supported``, in order of first use."""
    found: dict = {}
    for k, (name, out) in enumerate(zip(layer_ops, out_names)):
        if name not in supported:
            op, n, first, tname = found.get(name, (name, 0, k, out))
            found[name] = (op, n + 1, first, tname)
    return list(found.values())


def describe_unsupported(rows: list) -> str:
    """'MEAN (layer 12 'gap/Mean'), TANH (x2, first layer 3 't')' from unsupported_layers()."""
    return ", ".join(f"{op} ({'x%d, first ' % n if n > 1 else ''}layer {k} '{name}')"
                     for op, n, k, name in rows)
