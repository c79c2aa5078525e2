"""ADD, SUB, MUL, MAXIMUM, MINIMUM with broadcasting (firmware: core/ops/eb_op_elementwise.c;
level 2).

ADD and SUB follow ``add.cc`` / ``sub.cc``: both inputs shifted left by 20, rescaled to a
common scale, combined, rescaled to the output; MUL rescales the product by s1*s2/s_out;
MAXIMUM and MINIMUM compare the raw int8 values. ADD, SUB and MUL apply their fused
activation as the clamp after requantisation.
"""
from __future__ import annotations

from edgebench.mcu import blob_quant as q
from edgebench.mcu.ops.common import Layer, UnsupportedError, check_broadcast, fused_activation, two_inputs

OPTIONS = {"ADD": "AddOptionsT", "SUB": "SubOptionsT", "MUL": "MulOptionsT",
           "MAXIMUM": "MaximumMinimumOptionsT", "MINIMUM": "MaximumMinimumOptionsT"}
NEEDS_OPTIONS: frozenset = frozenset()
ALIASES: dict = {}


def lower(op: str, opts, ins: list, outs: list) -> Layer:
    a, b = two_inputs(op, ins)
    y = outs[0]
    s1, z1 = a.qparams("input 1")
    s2, z2 = b.qparams("input 2")
    so, zo = y.qparams("output")
    check_broadcast(a, b, y)
    act = (q.INT8_MIN, q.INT8_MAX)
    if op in ("ADD", "SUB"):
        try:
            params = q.add_params(s1, z1, s2, z2, so, zo)
        except ValueError as exc:
            raise UnsupportedError(str(exc)) from None
        act = fused_activation(opts, so, zo)
    elif op == "MUL":
        m, shift = q.quantize_multiplier(float(s1) * float(s2) / float(so))
        params = [-z1, -z2, zo, 0, 0, 0, 0, 0, m, shift]
        act = fused_activation(opts, so, zo)
    else:     # MAXIMUM / MINIMUM compare the raw int8 values, as the reference does
        params = []
    return Layer(op, [a.index, b.index], y.index, {}, act, params)
