"""Lowering of the ONNX operators that move or combine values (activations, element-wise
arithmetic with broadcasting, shape and axis operators, constants), one function each,
registered in ``table.OPS`` (level 2). Signature as in ``ops_nn``.

Axis attributes are remapped through the input's layout (``values.keras_axis``); a Transpose
emits no operator, it only changes the layout; a Flatten of a channels-last tensor keeps
the NHWC order and records it (``values.Value.order``) for the Gemm after it.
"""
from __future__ import annotations

from math import prod
from typing import Optional

import numpy as np

from edgebench.quantize.onnx_lower import values as V


def _same(x: V.Value, t, nonneg: bool = False) -> V.Value:
    """A new tensor held like ``x`` (element-wise results)."""
    return V.Value(t=t, perm=x.perm, order=x.order, unflat=x.unflat, nonneg=nonneg)


def _unary(cx, node, x: V.Value):
    if x.is_const:
        raise cx.fail(node, "constant input")
    return x.t


# ---------------------------------------------------------------- activations

def relu(cx, node, ins):
    x = ins[0]
    return [_same(x, cx.ops.relu(_unary(cx, node, x)), nonneg=True)]


def clip(cx, node, ins):
    x = ins[0]
    a = cx.attrs(node)
    if cx.opset < 11:
        lo, hi = a.get("min"), a.get("max")
    else:
        lo = float(ins[1].const) if len(ins) > 1 and ins[1] is not None else None
        hi = float(ins[2].const) if len(ins) > 2 and ins[2] is not None else None
        if any(v is not None and not v.is_const for v in ins[1:]):
            raise cx.fail(node, "min/max computed at run time")
    t = _unary(cx, node, x)
    if lo == 0.0 and hi == 6.0:
        y = cx.ops.relu6(t)
    elif lo == 0.0 and hi is None:
        y = cx.ops.relu(t)
    else:
        y = t
        if lo is not None:
            y = cx.ops.maximum(y, np.float32(lo))
        if hi is not None:
            y = cx.ops.minimum(y, np.float32(hi))
    return [_same(x, y, nonneg=x.nonneg or (lo is not None and lo >= 0))]


def leaky_relu(cx, node, ins):
    x = ins[0]
    alpha = float(cx.attrs(node).get("alpha", 0.01))
    return [_same(x, cx.ops.leaky_relu(_unary(cx, node, x), negative_slope=alpha))]


def sigmoid(cx, node, ins):
    return [_same(ins[0], cx.ops.sigmoid(_unary(cx, node, ins[0])), nonneg=True)]


def tanh(cx, node, ins):
    return [_same(ins[0], cx.ops.tanh(_unary(cx, node, ins[0])))]


def hard_sigmoid(cx, node, ins):
    """max(0, min(1, alpha x + beta)) as relu6(6 alpha x + 6 beta) / 6 (RELU6 fuses into the ADD)."""
    a = cx.attrs(node)
    alpha, beta = float(a.get("alpha", 0.2)), float(a.get("beta", 0.5))
    t = _unary(cx, node, ins[0])
    y = cx.ops.relu6(cx.ops.add(cx.ops.multiply(t, np.float32(6 * alpha)), np.float32(6 * beta)))
    return [_same(ins[0], cx.ops.multiply(y, np.float32(1 / 6)), nonneg=True)]


def hard_swish(cx, node, ins):
    return [_same(ins[0], cx.ops.hard_swish(_unary(cx, node, ins[0])))]


# ---------------------------------------------------------------- element-wise arithmetic

def _binary(cx, node, ins, fn, const_div: bool = False):
    a, b = ins
    if a.is_const or b.is_const:
        sym, c, const_first = (b, a.const, True) if a.is_const else (a, b.const, False)
        if c.ndim > sym.rank:                 # the constant carries the higher rank: ONNX (= numpy) order
            t, perm, order = V.plain(cx.ops, sym), V.identity(c.ndim), None
            k = c
        else:
            t, perm, order = sym.t, sym.perm, sym.order
            k = V.align_const(c, sym)
        k = np.asarray(k, dtype=np.float32)
        if const_div and not const_first:
            y = cx.ops.multiply(t, (1.0 / k).astype(np.float32))     # x / c as x * (1/c): int8 MUL
        else:
            y = fn(k, t) if const_first else fn(t, k)
        return [V.Value(t=y, perm=perm if order is None else sym.perm, order=order,
                        unflat=sym.unflat if order is not None else None)]
    if a.order is not None and b.order is not None and np.array_equal(a.order, b.order):
        return [_same(a, fn(a.t, b.t))]
    if a.rank == b.rank and a.order is None and b.order is None:
        perm = V.common_layout([a, b])
        return [V.tensor(fn(V.in_layout(cx.ops, a, perm), V.in_layout(cx.ops, b, perm)), perm)]
    return [V.tensor(fn(V.plain(cx.ops, a), V.plain(cx.ops, b)))]


def add(cx, node, ins):
    return _binary(cx, node, ins, cx.ops.add)


def sub(cx, node, ins):
    return _binary(cx, node, ins, cx.ops.subtract)


def mul(cx, node, ins):
    return _binary(cx, node, ins, cx.ops.multiply)


def div(cx, node, ins):
    return _binary(cx, node, ins, cx.ops.divide, const_div=True)


# ---------------------------------------------------------------- shapes and axes

def flatten(cx, node, ins):
    x = ins[0]
    axis = int(cx.attrs(node).get("axis", 1))
    axis = axis + x.rank if axis < 0 else axis
    return [_flatten_to(cx, x, axis)]


def _flatten_to(cx, x: V.Value, axis: int) -> V.Value:
    shape = x.shape
    if axis == 1 and x.rank >= 3 and x.order is None and x.perm == V.channels_last(x.rank):
        kshape = tuple(int(d) for d in x.t.shape)
        t = cx.ops.reshape(x.t, (shape[0], -1))
        spatial = [shape[i] for i in range(2, x.rank)]
        if prod(spatial) == 1:
            return V.tensor(t, nonneg=x.nonneg)
        idx = np.arange(prod(shape[1:])).reshape(shape[1:])
        order = np.transpose(idx, [p - 1 for p in x.perm[1:]]).reshape(-1)
        return V.Value(t=t, perm=(0, 1), order=order, unflat=(kshape, x.perm), nonneg=x.nonneg)
    if x.rank == 2 and axis == 1:
        return x
    t = V.plain(cx.ops, x)
    return V.tensor(cx.ops.reshape(t, (prod(shape[:axis]), prod(shape[axis:]))), nonneg=x.nonneg)


def reshape(cx, node, ins):
    x, s = ins[0], ins[1]
    if s is None or not s.is_const:
        raise cx.fail(node, "the target shape is computed from run-time values",
                      "export with static shapes (the shape must fold to a constant)")
    shape = x.shape
    target = reshape_target(shape, s.const, int(cx.attrs(node).get("allowzero", 0)))
    if prod(target) != prod(shape):
        raise cx.fail(node, f"cannot reshape {list(shape)} to {target}")
    if tuple(target) == tuple(shape):
        return [x]
    moved = unit_axis_perm(shape, target)
    if moved is not None and x.order is None:    # only size-1 axes move: a Transpose, e.g. NHWC -> NCHW with C = 1
        inv = V.inverse(moved)
        perm = tuple(inv[p] for p in x.perm)
        if perm in (V.identity(x.rank), V.channels_last(x.rank)):     # held as it is: no data moves
            return [V.Value(t=x.t, perm=perm, nonneg=x.nonneg)]
    if len(target) == 2 and target[0] == shape[0] and x.rank >= 3:
        return [_flatten_to(cx, x, 1)]
    shuffled = _channel_groups(cx, x, shape, target)
    if shuffled is not None:
        return [shuffled]
    t = V.plain(cx.ops, x)
    return [V.tensor(cx.ops.reshape(t, tuple(target)), nonneg=x.nonneg)]


def reshape_target(shape, target, allow_zero: int = 0) -> list:
    """ONNX Reshape's target shape for an input of ``shape``: 0 copies the input's dimension (unless
    ``allowzero``), -1 takes what is left."""
    out = [int(d) for d in np.asarray(target).reshape(-1)]
    out = [int(shape[i]) if d == 0 and not allow_zero else d for i, d in enumerate(out)]
    if -1 in out:
        known = prod(d for d in out if d != -1)
        out[out.index(-1)] = prod(shape) // max(known, 1)
    return out


def unit_axis_perm(shape, target) -> Optional[tuple]:
    """The Transpose ``perm`` a Reshape from ``shape`` to ``target`` equals when it only moves axes of
    size 1 (tf2onnx writes NHWC -> NCHW of a one-channel image, [N,H,W,1] -> [N,1,H,W], as a Reshape:
    perm (0, 3, 1, 2)); None when it changes more than where the size-1 axes are."""
    shape, target = [int(d) for d in shape], [int(d) for d in target]
    if len(shape) != len(target) or [d for d in shape if d != 1] != [d for d in target if d != 1]:
        return None
    big = iter(i for i, d in enumerate(shape) if d != 1)
    one = iter(i for i, d in enumerate(shape) if d == 1)
    return tuple(next(one) if d == 1 else next(big) for d in target)


def _channel_groups(cx, x: V.Value, shape: tuple, target: list):
    """The two reshapes of a channel shuffle (ShuffleNet: N,C,H,W -> N,g,C/g,H,W, Transpose(0,2,1,3,4),
    -> N,C,H,W) done on the channels-last tensor, so no rank-5 TRANSPOSE is emitted: the split keeps
    NHWC and only groups the channel axis (N,H,W,g,C/g); the merge is a plain reshape, or one rank-3
    transpose of the two channel factors when the Transpose swapped them. None: not this pattern."""
    if x.order is not None:
        return None
    ops = cx.ops
    if (x.rank == 4 and x.perm == V.channels_last(4) and len(target) == 5 and target[0] == shape[0]
            and target[1] * target[2] == shape[1] and tuple(target[3:]) == tuple(shape[2:])):
        n, c, h, w = shape
        t = ops.reshape(x.t, (n, h, w, target[1], target[2]))
        return V.tensor(t, (0, 3, 4, 1, 2), nonneg=x.nonneg)
    if (x.rank == 5 and len(target) == 4 and x.perm[:3] == (0, 3, 4) and target[0] == shape[0]
            and target[1] == shape[1] * shape[2] and tuple(target[2:]) == tuple(shape[3:])):
        n, h, w = shape[0], shape[3], shape[4]
        t = x.t
        if x.perm[3:] == (2, 1):             # Keras holds (N, H, W, a2, a1): bring a1 before a2
            t = ops.reshape(t, (n * h * w, shape[2], shape[1]))
            t = ops.transpose(t, (0, 2, 1))
        return V.tensor(ops.reshape(t, (n, h, w, target[1])), V.channels_last(4), nonneg=x.nonneg)
    return None


def transpose(cx, node, ins):
    """No operator: the output is the input held in another layout."""
    x = ins[0]
    if x.order is not None:
        x = V.tensor(V.materialize(cx.ops, x), nonneg=x.nonneg)
    perm = cx.attrs(node).get("perm") or list(reversed(range(x.rank)))
    inv = V.inverse(perm)
    return [V.Value(t=x.t, perm=tuple(inv[p] for p in x.perm), nonneg=x.nonneg)]


def _axes(cx, node, ins, x_rank: int):
    a = cx.attrs(node)
    if "axes" in a:
        return [int(v) for v in a["axes"]]
    if len(ins) > 1 and ins[1] is not None:
        if not ins[1].is_const:
            raise cx.fail(node, "axes computed at run time")
        return [int(v) for v in ins[1].const.reshape(-1)]
    return None


def squeeze(cx, node, ins):
    x = ins[0]
    if x.order is not None:
        x = V.tensor(V.materialize(cx.ops, x), nonneg=x.nonneg)
    axes = _axes(cx, node, ins, x.rank)
    shape = x.shape
    axes = [i for i, d in enumerate(shape) if d == 1] if axes is None else [ax + x.rank if ax < 0 else ax for ax in axes]
    if any(shape[ax] != 1 for ax in axes):
        raise cx.fail(node, f"squeezes axes {axes} of shape {list(shape)}, not all of size 1")
    kshape = [int(d) for i, d in enumerate(x.t.shape) if x.perm[i] not in axes]
    t = cx.ops.reshape(x.t, tuple(kshape))
    return [V.tensor(t, V.drop_axes(x.perm, axes), nonneg=x.nonneg)]


def unsqueeze(cx, node, ins):
    x = ins[0]
    if x.order is not None:
        x = V.tensor(V.materialize(cx.ops, x), nonneg=x.nonneg)
    axes = _axes(cx, node, ins, x.rank) or []
    rank = x.rank + len(axes)
    axes = sorted(ax + rank if ax < 0 else ax for ax in axes)
    old_to_new = [i for i in range(rank) if i not in axes]
    perm = tuple(old_to_new[p] for p in x.perm) + tuple(axes)
    t = cx.ops.reshape(x.t, tuple(int(d) for d in x.t.shape) + (1,) * len(axes))
    if x.rank == 2 and rank == 4 and perm != V.channels_last(4) and set(axes) == {2, 3}:
        perm = V.channels_last(4)            # (N, C) -> (N, C, 1, 1): held as (N, 1, 1, C), same bytes
        t = cx.ops.reshape(x.t, (int(x.t.shape[0]), 1, 1, int(x.t.shape[1])))
    return [V.tensor(t, perm, nonneg=x.nonneg)]


def concat(cx, node, ins):
    axis = int(cx.attrs(node)["axis"])
    vals = [v for v in ins if v is not None]
    rank = max(v.rank for v in vals)
    axis = axis + rank if axis < 0 else axis
    perm = V.common_layout(vals)
    ts = [V.in_layout(cx.ops, v, perm) if not v.is_const else np.transpose(v.const, perm).astype(np.float32)
          for v in vals if not (v.is_const and v.const.size == 0)]
    y = cx.ops.concatenate(ts, axis=perm.index(axis))
    return [V.tensor(y, perm, nonneg=all(v.nonneg or (v.is_const and (v.const >= 0).all()) for v in vals))]


def pad(cx, node, ins):
    x = ins[0]
    a = cx.attrs(node)
    if x.order is not None:
        x = V.tensor(V.materialize(cx.ops, x), nonneg=x.nonneg)
    if cx.opset < 11:
        pads, value = list(a.get("pads", a.get("paddings", []))), float(a.get("value", 0.0))
    else:
        if not ins[1].is_const or (len(ins) > 2 and ins[2] is not None and not ins[2].is_const):
            raise cx.fail(node, "pads computed at run time")
        pads = [int(p) for p in ins[1].const.reshape(-1)]
        value = float(ins[2].const.reshape(-1)[0]) if len(ins) > 2 and ins[2] is not None and ins[2].const.size else 0.0
    axes = list(range(x.rank))
    if len(ins) > 3 and ins[3] is not None:
        axes = [int(v) + (x.rank if int(v) < 0 else 0) for v in ins[3].const.reshape(-1)]
    n = len(axes)
    per_axis = {ax: (pads[i], pads[i + n]) for i, ax in enumerate(axes)}
    if min(pads, default=0) < 0:
        raise cx.fail(node, f"negative pads {pads} (cropping) are not supported")
    kpads = [list(per_axis.get(p, (0, 0))) for p in x.perm]
    mode = a.get("mode", "constant")
    if mode == "constant":
        y = cx.ops.pad(x.t, kpads, mode="constant", constant_values=value)
        return [V.tensor(y, x.perm, nonneg=x.nonneg and value >= 0)]
    if mode == "reflect":
        return [V.tensor(cx.ops.pad(x.t, kpads, mode="reflect"), x.perm, nonneg=x.nonneg)]
    if mode == "edge" and max(pads) <= 1:          # one pixel: mirroring with the edge = repeating it
        return [V.tensor(cx.ops.pad(x.t, kpads, mode="symmetric"), x.perm, nonneg=x.nonneg)]
    raise cx.fail(node, f"mode {mode!r} with pads {pads} is not supported (constant, reflect, edge up to 1)")


# ---------------------------------------------------------------- pass-through and constants

def identity_op(cx, node, ins):
    return [ins[0]]


def dropout(cx, node, ins):
    """Inference: the input itself. The mask output is dropped when nothing reads it."""
    why = dropout_check(node, cx.used, ())
    if why:
        raise cx.fail(node, why)
    return [ins[0]]


def dropout_check(node, used, shapes):
    if any(o and o in used for o in node.output[1:]):
        return "its mask output (training) is read by another node"
    return None


def cast(cx, node, ins):
    # lazy: onnx, numpy (optional; import onnx 735 ms, numpy 460 ms measured), loaded only where used
    from onnx import TensorProto

    if int(cx.attrs(node)["to"]) not in (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16):
        raise cx.fail(node, "casts a run-time tensor to a non-float type")
    return [ins[0]]


def shape_op(cx, node, ins):
    """The static shape of a run-time tensor, as a constant (for the shape arithmetic after it)."""
    a = cx.attrs(node)
    shape = list(ins[0].shape)
    start, end = int(a.get("start", 0)), a.get("end")
    return [V.const(np.asarray(shape[start:None if end is None else int(end)], dtype=np.int64))]


def constant(cx, node, ins):  # pragma: no cover - the driver folds every Constant node
    raise cx.fail(node, "constants are folded before lowering")
