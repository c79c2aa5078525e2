"""Lowering of the element-wise activations of ONNX opsets 13-20 beyond Relu/Sigmoid/Tanh, the
variadic Sum/Max/Min and Split, one function each, registered in ``table.OPS`` (level 2).

Each maps to a TFLite builtin where one exists (ELU, ABS, NEG, EXP, SQRT, MAXIMUM, MINIMUM,
SPLIT) or to a short composition of builtins otherwise (Selu = gamma * elu(x, alpha),
Softsign = x / (1 + |x|), Mish = x * tanh(softplus(x))). Element-wise results keep the
input's layout (``ops_tensor._same``).
"""
from __future__ import annotations

import numpy as np

from edgebench.quantize.onnx_lower import values as V
from edgebench.quantize.onnx_lower.ops_tensor import _binary, _same, _unary


def _f(v) -> np.float32:
    return np.float32(v)


def _elu(cx, t, alpha: float):
    if alpha == 1.0:
        return cx.ops.elu(t)
    return cx.ops.where(cx.ops.greater(t, _f(0)), t, cx.ops.multiply(cx.ops.expm1(t), _f(alpha)))


def elu(cx, node, ins):
    alpha = float(cx.attrs(node).get("alpha", 1.0))
    return [_same(ins[0], _elu(cx, _unary(cx, node, ins[0]), alpha))]


def selu(cx, node, ins):
    a = cx.attrs(node)
    alpha, gamma = float(a.get("alpha", 1.67326319217681884765625)), float(a.get("gamma", 1.05070102214813232421875))
    t = _unary(cx, node, ins[0])
    return [_same(ins[0], cx.ops.multiply(_elu(cx, t, alpha), _f(gamma)))]


def celu(cx, node, ins):
    alpha = float(cx.attrs(node).get("alpha", 1.0))
    t = _unary(cx, node, ins[0])
    neg = cx.ops.multiply(cx.ops.expm1(cx.ops.divide(cx.ops.minimum(t, _f(0)), _f(alpha))), _f(alpha))
    return [_same(ins[0], cx.ops.add(cx.ops.relu(t), neg))]


def softplus(cx, node, ins):
    return [_same(ins[0], cx.ops.softplus(_unary(cx, node, ins[0])), nonneg=True)]


def softsign(cx, node, ins):
    t = _unary(cx, node, ins[0])
    return [_same(ins[0], cx.ops.divide(t, cx.ops.add(cx.ops.abs(t), _f(1))))]


def mish(cx, node, ins):
    t = _unary(cx, node, ins[0])
    return [_same(ins[0], cx.ops.multiply(t, cx.ops.tanh(cx.ops.softplus(t))))]


def gelu(cx, node, ins):
    approx = str(cx.attrs(node).get("approximate", "none")) == "tanh"
    return [_same(ins[0], cx.ops.gelu(_unary(cx, node, ins[0]), approximate=approx))]


def thresholded_relu(cx, node, ins):
    alpha = float(cx.attrs(node).get("alpha", 1.0))
    t = _unary(cx, node, ins[0])
    return [_same(ins[0], cx.ops.where(cx.ops.greater(t, _f(alpha)), t, cx.ops.zeros_like(t)), nonneg=alpha >= 0)]


def prelu(cx, node, ins):
    """max(0, x) + slope * min(0, x) with a constant slope broadcast like ONNX (numpy)."""
    x, s = ins
    if s is None or not s.is_const:
        raise cx.fail(node, "the slope is computed at run time")
    t = _unary(cx, node, x)
    k = np.asarray(V.align_const(s.const, x), dtype=np.float32)
    return [_same(x, cx.ops.add(cx.ops.relu(t), cx.ops.multiply(cx.ops.minimum(t, _f(0)), k)))]


def _unary_op(name: str, nonneg: bool = False):
    def fn(cx, node, ins):
        return [_same(ins[0], getattr(cx.ops, name)(_unary(cx, node, ins[0])), nonneg=nonneg)]

    fn.__name__ = name
    return fn


abs_op = _unary_op("abs", nonneg=True)
neg = _unary_op("negative")
exp = _unary_op("exp", nonneg=True)
log = _unary_op("log")
sqrt = _unary_op("sqrt", nonneg=True)
reciprocal = _unary_op("reciprocal")


def _variadic(fn_name: str):
    def fn(cx, node, ins):
        vals = [v for v in ins if v is not None]
        acc = vals[0]
        for v in vals[1:]:
            acc = _binary(cx, node, [acc, v], getattr(cx.ops, fn_name))[0]
        return [acc]

    return fn


sum_op = _variadic("add")
max_op = _variadic("maximum")
min_op = _variadic("minimum")


def split(cx, node, ins):
    """Split along an axis (sizes from the ``split`` input or attribute, or equal parts)."""
    x = ins[0]
    if x.order is not None:
        x = V.tensor(V.materialize(cx.ops, x), nonneg=x.nonneg)
    a = cx.attrs(node)
    axis = int(a.get("axis", 0))
    axis = axis + x.rank if axis < 0 else axis
    n_out = len(node.output)
    size = x.shape[axis]
    if len(ins) > 1 and ins[1] is not None:
        if not ins[1].is_const:
            raise cx.fail(node, "split sizes computed at run time")
        sizes = [int(v) for v in ins[1].const.reshape(-1)]
    elif "split" in a:
        sizes = [int(v) for v in a["split"]]
    else:
        parts = int(a.get("num_outputs", n_out))
        step = -(-size // parts)                     # the last part may be smaller (opset 18)
        sizes = [min(step, size - i * step) for i in range(parts)]
    if sum(sizes) != size or len(sizes) != n_out:
        raise cx.fail(node, f"split sizes {sizes} do not divide axis {axis} of size {size} into {n_out} outputs")
    k = x.perm.index(axis)
    bounds = np.cumsum(sizes)[:-1].tolist()
    parts_t = cx.ops.split(x.t, bounds, axis=k) if n_out > 1 else [x.t]
    return [V.Value(t=t, perm=x.perm, nonneg=x.nonneg) for t in parts_t]
