"""PAD and PADV2 (firmware: core/ops/eb_op_pad.c; level 2): the input placed inside the
output, every other byte the output zero point (PADV2: its constant value)."""
from __future__ import annotations

from edgebench.mcu import blob_quant as q
from edgebench.mcu.ops.common import TYPE_INT8, Layer, UnsupportedError, arg, const_ints, require_same_quant

OPTIONS = {"PAD": "PadOptionsT", "PADV2": "PadV2OptionsT"}
NEEDS_OPTIONS: frozenset = frozenset()
ALIASES: dict = {}


def lower(op: str, opts, ins: list, outs: list) -> Layer:
    x, pads_t, value_t, y = ins[0], arg(ins, 1), arg(ins, 2), outs[0]
    require_same_quant(x, y, "output")
    rank = len(x.shape)
    pads = const_ints(pads_t, "the paddings")
    assert pads_t is not None            # const_ints refused a missing one
    if rank > 4 or pads.size != 2 * rank:
        raise UnsupportedError(f"paddings of shape {pads_t.shape} for a rank-{rank} input")
    pads = pads.reshape(rank, 2)
    if (pads < 0).any() or tuple(int(d + p.sum()) for d, p in zip(x.shape, pads)) != tuple(y.shape):
        raise UnsupportedError(f"paddings {pads.tolist()} do not turn {x.shape} into {y.shape}")
    before = [0] * (4 - rank) + [int(v) for v in pads[:, 0]]
    value = y.qparams("output")[1]
    if op == "PADV2" and value_t is not None:
        if value_t.data is None or value_t.type != TYPE_INT8 or value_t.data.size != 1:
            raise UnsupportedError("PADV2 constant value must be one constant int8")
        value = int(value_t.data[0])
    return Layer(op, [x.index], y.index, {}, (q.INT8_MIN, q.INT8_MAX), before + [value])
