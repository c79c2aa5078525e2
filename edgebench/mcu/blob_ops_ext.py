"""Lowering of the operators added in engine version 2 (level 2).

SUB, MUL, MAXIMUM, MINIMUM (with broadcasting), QUANTIZE (int8 to int8),
RELU, RELU6, RELU_N1_TO_1, LEAKY_RELU, MEAN, PAD, PADV2, CONCATENATION, and
SQUEEZE / EXPAND_DIMS (run as RESHAPE: the same bytes); :func:`lower_ext`
dispatches the others to :mod:`edgebench.mcu.blob_ops_table` (LOGISTIC, TANH,
HARD_SWISH) and :mod:`edgebench.mcu.blob_ops_shape` (RESIZE_*, TRANSPOSE_CONV,
TRANSPOSE, SLICE, STRIDED_SLICE). Parameters follow
LiteRT's reference kernels' ``Prepare`` arithmetic (firmware/BLOB.md lists the
``p[]`` layout of each); anything the engine cannot run bit-exactly raises
:class:`~edgebench.mcu.blob_ops.UnsupportedError`.
"""
from __future__ import annotations

from math import prod

import numpy as np

from edgebench.mcu import blob_quant as q
from edgebench.mcu.blob_ops import (ALIASES, TYPE_INT8, TYPE_INT32, Layer, UnsupportedError, check_broadcast,
                                     fused_activation, lower_reshape)

_RELU_ACT = {"RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}


def op_unsupported(msg: str) -> UnsupportedError:
    """The error for an operator or tensor the MCU engine does not support (the caller raises it)."""
    return UnsupportedError(msg)


def require_same_quant(a, b, what: str) -> None:
    """Refuse unless tensor ``b`` (``what``) has the input tensor ``a``'s scale and zero point."""
    sa, za = a.qparams("input")
    sb, zb = b.qparams(what)
    if (np.float32(sa), za) != (np.float32(sb), zb):
        raise op_unsupported(f"input and {what} quantization differ (TFLite requires them equal)")


def const_ints(t, what: str) -> np.ndarray:
    """The values of a constant int32 tensor ``t`` (``what``) as int64; refuse anything else."""
    if t is None or not t.constant or t.type != TYPE_INT32:
        raise op_unsupported(f"{what} must be a constant int32 tensor")
    return t.data.astype(np.int64)


def _fused(opts, y) -> tuple:
    return fused_activation(opts, *y.qparams("output"))


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
            raise op_unsupported(str(exc)) from None
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
        raise op_unsupported(f"input {x.shape} and output {y.shape} differ in size")
    f_in, f_out = np.float32(in_s), np.float32(out_s)
    act = (q.INT8_MIN, q.INT8_MAX)
    if op == "QUANTIZE":           # quantize.cc: double(in) / double(out)
        m, s = q.quantize_multiplier(float(in_s) / float(out_s))
        neg = (m, s)
    elif op == "LEAKY_RELU":       # activations.cc: float arithmetic, then double
        alpha = np.float32(getattr(opts, "alpha", 0.0) or 0.0)
        if not alpha > 0:
            raise op_unsupported(f"LEAKY_RELU alpha {float(alpha)} (only positive alphas are supported)")
        m, s = q.quantize_multiplier(float(f_in / f_out))
        neg = q.quantize_multiplier(float(f_in * alpha / f_out))
    else:                          # RELU, RELU6, RELU_N1_TO_1: float(in / out)
        m, s = q.quantize_multiplier(float(f_in / f_out))
        neg = (m, s)
        act = q.activation_range(_RELU_ACT[op], out_s, out_z)
    if not (-31 <= s <= 30 and -31 <= neg[1] <= 30):
        raise op_unsupported("rescale factor out of range")
    return Layer(op, [x.index], y.index, {}, act, [in_z, out_z, m, s, neg[0], neg[1]])


def lower_mean(opts, x, axis_t, y):
    in_s, in_z = x.qparams("input")
    out_s, out_z = y.qparams("output")
    rank = len(x.shape)
    if not 1 <= rank <= 4:
        raise op_unsupported(f"input of rank {rank}")
    axes = [int(v) for v in const_ints(axis_t, "the axis")]
    resolved = sorted({a + rank if a < 0 else a for a in axes})
    if not axes or any(not 0 <= a < rank for a in resolved) or len(resolved) != len(axes):
        raise op_unsupported(f"axes {axes} of a rank-{rank} input")
    mask = sum(1 << (a + 4 - rank) for a in resolved)
    kept = [d for i, d in enumerate(x.shape) if i not in resolved]
    if prod(y.shape) != prod(kept):
        raise op_unsupported(f"output {y.shape} does not match the mean of {x.shape} over {axes}")
    # LiteRT's reference QuantizedMeanOrSum: the multiplier of double(in) /
    # double(out), then 1/count folded in: shifted left by floor(log2(count))
    # (at most 32 and 31 + shift), integer-divided by count
    count = prod(x.shape) // max(prod(kept), 1)
    m, s = q.quantize_multiplier(float(in_s) / float(out_s))
    n = min(count.bit_length() - 1, 32, 31 + s)
    m, s = int(np.int64((m << n) // count).astype(np.int32)), s - n
    if not -31 <= s <= 30:
        raise op_unsupported("mean rescale factor out of range")
    params = [0, mask, in_z, out_z, m, s]
    return Layer("MEAN", [x.index], y.index, {}, (q.INT8_MIN, q.INT8_MAX), params,
                 macs=count * prod(kept))


def lower_pad(op: str, x, pads_t, value_t, y):
    require_same_quant(x, y, "output")
    rank = len(x.shape)
    pads = const_ints(pads_t, "the paddings")
    if rank > 4 or pads.size != 2 * rank:
        raise op_unsupported(f"paddings of shape {pads_t.shape} for a rank-{rank} input")
    pads = pads.reshape(rank, 2)
    if (pads < 0).any() or tuple(int(d + p.sum()) for d, p in zip(x.shape, pads)) != tuple(y.shape):
        raise op_unsupported(f"paddings {pads.tolist()} do not turn {x.shape} into {y.shape}")
    before = [0] * (4 - rank) + [int(v) for v in pads[:, 0]]
    value = y.qparams("output")[1]
    if op == "PADV2" and value_t is not None:
        if not value_t.constant or value_t.type != TYPE_INT8 or value_t.data.size != 1:
            raise op_unsupported("PADV2 constant value must be one constant int8")
        value = int(value_t.data[0])
    return Layer(op, [x.index], y.index, {}, (q.INT8_MIN, q.INT8_MAX), before + [value])


def lower_concat(opts, ins: list, y):
    if not 1 <= len(ins) <= 12 or any(t is None for t in ins):
        raise op_unsupported(f"{len(ins)} inputs (the engine concatenates up to 12)")
    if int(getattr(opts, "fusedActivationFunction", 0) or 0):
        raise op_unsupported("fused activation on CONCATENATION")
    rank = len(y.shape)
    axis = int(getattr(opts, "axis", 0) or 0)
    axis = axis + rank if axis < 0 else axis
    if rank > 4 or not 0 <= axis < rank:
        raise op_unsupported(f"axis {axis} of a rank-{rank} output")
    for t in ins:
        require_same_quant(t, y, "output")
        if len(t.shape) != rank or any(d != o for i, (d, o) in enumerate(zip(t.shape, y.shape))
                                       if i != axis):
            raise op_unsupported(f"input {t.shape} does not fit output {y.shape} on axis {axis}")
    if sum(t.shape[axis] for t in ins) != y.shape[axis]:
        raise op_unsupported(f"inputs do not add up to output {y.shape} on axis {axis}")
    return Layer("CONCATENATION", [t.index for t in ins], y.index, {}, (q.INT8_MIN, q.INT8_MAX),
                 [axis + 4 - rank])


def lower_ext(op: str, opts, ins: list, y):
    """Lower one of EXT_OPS or ALIASES (ins[0] is present)."""
    def arg(i):
        return ins[i] if len(ins) > i else None

    if ALIASES.get(op) == "RESHAPE":
        return lower_reshape(ins[0], y)
    if op in ("SUB", "MUL", "MAXIMUM", "MINIMUM"):
        if len(ins) != 2 or ins[1] is None:
            raise op_unsupported(f"{op} needs two inputs")
        return lower_binary(op, opts, ins[0], ins[1], y)
    if op in ("QUANTIZE", "LEAKY_RELU") or op in _RELU_ACT:
        if op == "QUANTIZE" and ins[0].type != TYPE_INT8:
            raise op_unsupported("QUANTIZE of a non-int8 tensor inside the model")
        return lower_requant(op, opts, ins[0], y)
    if op == "MEAN":
        return lower_mean(opts, ins[0], arg(1), y)
    if op in ("PAD", "PADV2"):
        return lower_pad(op, ins[0], arg(1), arg(2), y)
    if op == "CONCATENATION":
        return lower_concat(opts, ins, y)
    if op in ("LOGISTIC", "TANH", "HARD_SWISH"):
        from edgebench.mcu.blob_ops_table import lower_lut

        return lower_lut(op, ins[0], y)
    from edgebench.mcu.blob_ops_shape import (lower_resize, lower_slice, lower_strided_slice, lower_transpose,
                                              lower_transpose_conv)

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
            raise op_unsupported("TRANSPOSE_CONV needs output_shape, weights and input (and its options)")
        return lower_transpose_conv(opts, ins[0], ins[1], ins[2], arg(3), y)
    raise op_unsupported(f"operator {op}")
