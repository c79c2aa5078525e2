"""The microcontroller engine's operators on the host (level 2), laid out as TFLite Micro
lays out its kernels: one module per operator family (``conv``, ``pooling``, ...), each
lowering its TFLite operators to engine layers with their MAC and scratch accounting, and
one table, the firmware's own ``firmware/core/eb_ops.def`` (:mod:`.table`), that says which
operators exist, their codes, the engine version that added each and its family.

This module joins the two: :data:`OPS` (name -> blob code), :data:`ENGINE_OPS` (the set of
each engine version, for the fit check), :data:`ALIASES` (TFLite operators written as
another one), :data:`SUPPORTED_OPS`, and :func:`lower`, which checks what every operator
needs and hands it to its family. Adding an operator: a line in eb_ops.def, its firmware
source ``core/ops/eb_op_<family>.c`` and its module here (tests/test_engine_layout.py).
"""
from __future__ import annotations

from edgebench.mcu.ops import (
    concatenation,
    conv,
    elementwise,
    fully_connected,
    gather,
    lut,
    mean,
    pad,
    pooling,
    requantize,
    reshape,
    resize,
    softmax,
    transpose_conv,
)
from edgebench.mcu.ops.common import Layer, Tensor, UnsupportedError, bias_filter, block_filter
from edgebench.mcu.ops.table import operators

#: family name -> its module (the family column of eb_ops.def)
FAMILIES = {m.__name__.rpartition(".")[2]: m for m in (
    concatenation, conv, elementwise, fully_connected, gather, lut, mean, pad, pooling, requantize, reshape,
    resize, softmax, transpose_conv)}
TABLE = operators()
#: TFLite operator name -> blob operator code, every operator the engine runs
OPS = {name: e.code for name, e in TABLE.items()}
OP_NAMES = {code: name for name, code in OPS.items()}
#: the engine version of the firmware built from this tree (EB_ENGINE_VERSION)
ENGINE_VERSION = max(e.version for e in TABLE.values())
#: the operators each engine version runs (the device reports its version: `engine` in eb-info)
ENGINE_OPS = {v: tuple(sorted(n for n, e in TABLE.items() if e.version <= v)) for v in range(1, ENGINE_VERSION + 1)}
#: TFLite operators run as another one (the same bytes): not blob codes of their own
ALIASES = {a: t for m in FAMILIES.values() for a, t in m.ALIASES.items()}
SUPPORTED_OPS = tuple(sorted([*OPS, *ALIASES]))

__all__ = ["ALIASES", "ENGINE_OPS", "ENGINE_VERSION", "FAMILIES", "Layer", "OPS", "OP_NAMES", "SUPPORTED_OPS",
           "Tensor", "UnsupportedError", "bias_filter", "block_filter", "describe_unsupported", "engine_supports",
           "graph_operators", "lower", "unsupported_layers"]


def family_of(op: str):
    """The module that lowers TFLite operator ``op`` (KeyError when the engine lacks it)."""
    return FAMILIES[TABLE[ALIASES.get(op, op)].family]


def engine_supports(version: int) -> frozenset:
    """The TFLite operators a firmware of engine ``version`` runs, aliases included (an alias
    counts when the operator it is written as does)."""
    ops = set(ENGINE_OPS.get(version, ENGINE_OPS[1]))
    return frozenset(ops | {a for a, t in ALIASES.items() if t in ops})


def lower(op: str, opts, ins: list, outs: list):
    """One TFLite operator as engine layers. ``ins``/``outs``: :class:`Tensor` or None (an optional
    input left out). One :class:`Layer`, or a list of them (SPLIT, SPLIT_V: a SLICE per output)."""
    try:
        module = family_of(op)
    except KeyError:
        raise UnsupportedError(f"operator {op}") from None
    several = ALIASES.get(op) == "SLICE"
    if (len(outs) != 1 and not several) or not outs or outs[0] is None:
        raise UnsupportedError(f"{len(outs)} outputs")
    if not ins or ins[0] is None:
        raise UnsupportedError("missing input")
    if opts is None and op in module.NEEDS_OPTIONS:
        raise UnsupportedError("operator options missing")
    expected = module.OPTIONS.get(op)
    if opts is not None and expected is not None and type(opts).__name__ != expected:
        # the options union names another operator's table (a damaged or hand-made model)
        raise UnsupportedError(f"options {type(opts).__name__[:-1]} do not belong to {op} "
                               f"(expected {expected[:-1]})")
    return module.lower(op, opts, ins, outs)


def graph_operators(model, subgraph) -> tuple:
    """``(operator names, first-output tensor names)`` of a TFLite subgraph (schema object API), in
    execution order; a custom operator is named ``custom <name>``, a missing output ``?``."""
    # lazy: numpy (import numpy 460 ms measured), kept off `edgebench VERB --help`
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
