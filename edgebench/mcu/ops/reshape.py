"""RESHAPE, and SQUEEZE / EXPAND_DIMS written as RESHAPE (firmware: core/ops/eb_op_reshape.c;
level 2).

The same bytes under another shape: the planner lets the output share the input's bytes
(``aliases_input``), so the device copies nothing unless the input is a constant.
"""
from __future__ import annotations

from math import prod

from edgebench.mcu.ops.common import TYPE_INT8, Layer, UnsupportedError

OPTIONS = {"RESHAPE": "ReshapeOptionsT", "SQUEEZE": "SqueezeOptionsT", "EXPAND_DIMS": "ExpandDimsOptionsT"}
NEEDS_OPTIONS: frozenset = frozenset()
#: TFLite operators run as RESHAPE (the same bytes)
ALIASES = {"SQUEEZE": "RESHAPE", "EXPAND_DIMS": "RESHAPE"}


def lower(op: str, opts, ins: list, outs: list) -> Layer:
    x, y = ins[0], outs[0]
    if x.type != TYPE_INT8 or y.type != TYPE_INT8:
        raise UnsupportedError("RESHAPE of a non-int8 tensor")
    if prod(x.shape) != prod(y.shape):
        raise UnsupportedError(f"element counts of {x.shape} and {y.shape} differ")
    # the reference copies the bytes whatever the quantization says; so does the engine
    return Layer("RESHAPE", [x.index], y.index, aliases_input=not x.constant)
