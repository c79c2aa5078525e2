"""Values of the lowering: constants, and Keras tensors with the layout they are held in (level 2).

An ONNX tensor is lowered either to a numpy constant (initializers, ``Constant`` nodes and
anything computed from constants only) or to a Keras tensor held in a *layout*:

* ``perm``: the Keras tensor is ``numpy.transpose(onnx_tensor, perm)``. Keras axis ``i``
  is ONNX axis ``perm[i]``. Image tensors are held channels-last, ``perm = (0, 2, 3, 1)``
  for NCHW, so convolutions and pools run in TFLite's NHWC without a TRANSPOSE each;
  a Transpose node only changes ``perm`` (no operator), an axis attribute is remapped
  through it, and a constant that broadcasts against the tensor is permuted the same way.
* ``order`` (2-D only): the result of flattening a channels-last tensor without moving
  data. Keras feature ``j`` is ONNX feature ``order[j]``. A Gemm/MatMul with constant
  weights reads it by permuting its weight rows (the Flatten -> Gemm case of every CNN
  classifier head); any other consumer materializes the ONNX order (reshape, transpose,
  reshape), which is a no-op when the flattened spatial size is 1 (after global pooling).

``nonneg`` records that the values are known to be >= 0 (after Relu, Sigmoid, ...):
a max pool may then pad with zeros.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from edgebench.data.layout import inverse


@dataclass
class Value:
    const: Optional[np.ndarray] = None
    t: Any = None                      # Keras tensor
    perm: tuple = ()
    order: Optional[np.ndarray] = None  # feature order of a flattened channels-last tensor
    unflat: Optional[tuple] = None      # (Keras shape before the flatten, its perm) to materialize ``order``
    nonneg: bool = False

    @property
    def is_const(self) -> bool:
        return self.const is not None

    @property
    def rank(self) -> int:
        return self.const.ndim if self.const is not None else len(self.t.shape)

    @property
    def shape(self) -> tuple:
        """The ONNX shape of this value."""
        if self.const is not None:
            return tuple(int(d) for d in self.const.shape)
        kshape = [int(d) for d in self.t.shape]
        out = [0] * len(kshape)
        for i, axis in enumerate(self.perm):
            out[axis] = kshape[i]
        return tuple(out)


def const(array) -> Value:
    return Value(const=np.asarray(array))


def tensor(t, perm: Optional[tuple] = None, nonneg: bool = False) -> Value:
    return Value(t=t, perm=tuple(range(len(t.shape))) if perm is None else tuple(perm), nonneg=nonneg)


def identity(rank: int) -> tuple:
    return tuple(range(rank))


def channels_last(rank: int) -> tuple:
    """(0, 2, ..., rank-1, 1): NCHW -> NHWC for rank 4."""
    return (0, *range(2, rank), 1) if rank >= 3 else identity(rank)


def keras_axis(v: Value, onnx_axis: int) -> int:
    """The Keras axis holding ONNX axis ``onnx_axis`` (negative axes counted from the end)."""
    axis = onnx_axis + v.rank if onnx_axis < 0 else onnx_axis
    return v.perm.index(axis)


def materialize(ops, v: Value):
    """The Keras tensor of a flattened value in ONNX feature order (identity layout)."""
    if v.order is None or v.unflat is None:   # (a flattened value has both)
        return v.t
    kshape, perm = v.unflat
    if all(int(d) == 1 for i, d in enumerate(kshape) if perm[i] not in (0, 1)):
        return v.t                           # spatial size 1: NHWC and NCHW flatten alike
    x = ops.reshape(v.t, tuple(int(d) for d in kshape))
    x = ops.transpose(x, inverse(perm))      # back to the ONNX axis order
    return ops.reshape(x, (int(kshape[0]), -1))


def in_layout(ops, v: Value, perm: tuple):
    """The Keras tensor of ``v`` held in layout ``perm`` (a TRANSPOSE when it is held otherwise)."""
    if v.const is not None:
        return np.transpose(v.const, perm)
    if v.order is not None:
        t, cur = materialize(ops, v), identity(2)
    else:
        t, cur = v.t, v.perm
    if tuple(cur) == tuple(perm):
        return t
    return ops.transpose(t, tuple(cur.index(p) for p in perm))


def plain(ops, v: Value):
    """The Keras tensor of ``v`` in ONNX axis order."""
    return in_layout(ops, v, identity(v.rank))


def align_const(c: np.ndarray, v: Value) -> np.ndarray:
    """Constant ``c`` broadcasting against ``v`` (ONNX rules: trailing axes aligned), made to
    broadcast the same way against ``v``'s Keras tensor."""
    c = np.asarray(c)
    if c.ndim > v.rank:
        raise ValueError("constant of higher rank than the tensor")
    if v.order is not None:
        if c.ndim and c.shape[-1] > 1:
            c = np.take(c, v.order, axis=-1)
        return c
    if c.size == 1:
        return c.reshape(())
    full = c.reshape((1,) * (v.rank - c.ndim) + c.shape)
    return np.transpose(full, v.perm)


def common_layout(values: list) -> tuple:
    """The layout a group of tensors is brought to: that of the first non-constant one
    of the highest rank (flattened values: their ONNX order)."""
    best = None
    for v in values:
        if v.is_const:
            continue
        if best is None or v.rank > best.rank:
            best = v
    if best is None or best.order is not None:
        return identity(best.rank if best is not None else 0)
    return best.perm


def drop_axes(perm, removed) -> tuple:
    """The layout left when ONNX axes ``removed`` disappear (squeeze, reduce without keepdims)."""
    removed = set(removed)
    return tuple(p - sum(1 for r in removed if r < p) for p in perm if p not in removed)
