"""CONCATENATION of up to 12 inputs along one axis (firmware: core/ops/eb_op_concatenation.c;
level 2). The inputs past the record's three slots travel in ``p[1..9]`` (firmware/BLOB.md).

A fused activation is refused: LiteRT's kernel refuses it too (``concatenation.cc``
Prepare requires ``kTfLiteActNone``), so no converter output has one that runs there.
"""
from __future__ import annotations

from edgebench.mcu import blob_quant as q
from edgebench.mcu.ops.common import Layer, UnsupportedError, require_same_quant

OPTIONS = {"CONCATENATION": "ConcatenationOptionsT"}
NEEDS_OPTIONS: frozenset = frozenset()
ALIASES: dict = {}


def lower(op: str, opts, ins: list, outs: list) -> Layer:
    y = outs[0]
    if not 1 <= len(ins) <= 12 or any(t is None for t in ins):
        raise UnsupportedError(f"{len(ins)} inputs (the engine concatenates up to 12)")
    if int(getattr(opts, "fusedActivationFunction", 0) or 0):
        raise UnsupportedError("fused activation on CONCATENATION (LiteRT's kernel refuses it too)")
    rank = len(y.shape)
    axis = int(getattr(opts, "axis", 0) or 0)
    axis = axis + rank if axis < 0 else axis
    if rank > 4 or not 0 <= axis < rank:
        raise UnsupportedError(f"axis {axis} of a rank-{rank} output")
    for t in ins:
        require_same_quant(t, y, "output")
        if len(t.shape) != rank or any(d != o for i, (d, o) in enumerate(zip(t.shape, y.shape)) if i != axis):
            raise UnsupportedError(f"input {t.shape} does not fit output {y.shape} on axis {axis}")
    if sum(t.shape[axis] for t in ins) != y.shape[axis]:
        raise UnsupportedError(f"inputs do not add up to output {y.shape} on axis {axis}")
    return Layer("CONCATENATION", [t.index for t in ins], y.index, {}, (q.INT8_MIN, q.INT8_MAX),
                 [axis + 4 - rank])
