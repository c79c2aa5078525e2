"""Describe an ONNX model before conversion: operators, shapes, parameters, MACs, and which
nodes the lowering takes (level 2).

Shapes and each node's status come from :func:`verdict.analyse`, the check ``quantize``
runs before lowering (so both say the same thing). MACs are counted with the formulas of the operator table
(:data:`table.OPS`): Conv, ConvTranspose, Gemm and MatMul; the other supported operators do
no multiply-accumulate with weights. Each node is ``lowered``, ``folded`` (all inputs
constant: computed at conversion time) or ``unsupported`` (with the reason).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from math import prod
from pathlib import Path
from typing import Optional

from edgebench.quantize.onnx_lower.graph import read_onnx
from edgebench.quantize.onnx_lower.table import OPS
from edgebench.quantize.onnx_lower.verdict import FOLDED, LOWERED, UNSUPPORTED, analyse

__all__ = ["FOLDED", "LOWERED", "UNSUPPORTED", "NodeReport", "OnnxReport", "inspect_onnx"]


@dataclass(frozen=True)
class NodeReport:
    index: int
    name: str
    op: str
    output_shapes: tuple
    macs: Optional[int]            # None: unknown (unsupported operator, or shapes not inferred)
    params: int                    # elements of the node's initializer inputs
    status: str                    # lowered | folded | unsupported

    def to_dict(self) -> dict:
        return {"index": self.index, "name": self.name, "op": self.op,
                "output_shapes": [list(s) if s is not None else None for s in self.output_shapes],
                "macs": self.macs, "params": self.params, "status": self.status}


@dataclass(frozen=True)
class OnnxReport:
    path: str
    sha256: str
    bytes: int
    opset: int
    producer: str
    inputs: tuple                  # graph.GraphInput
    outputs: tuple                 # (name, shape or None)
    nodes: tuple                   # NodeReport
    params: int
    param_bytes: int
    notes: tuple = field(default_factory=tuple)
    reasons: tuple = field(default_factory=tuple)   # verdict.Problem reasons, in node order

    @property
    def operators(self) -> dict:
        out: dict = {}
        for n in self.nodes:
            out[n.op] = out.get(n.op, 0) + 1
        return out

    @property
    def macs(self) -> int:
        return sum(n.macs or 0 for n in self.nodes)

    @property
    def unsupported(self) -> tuple:
        return tuple(n for n in self.nodes if n.status == UNSUPPORTED)

    @property
    def macs_not_counted(self) -> tuple:
        return tuple(n for n in self.nodes if n.macs is None and n.status != FOLDED)

    def to_dict(self) -> dict:
        return {
            "format": "onnx", "path": self.path, "sha256": self.sha256, "bytes": self.bytes, "opset": self.opset,
            "producer": self.producer, "inputs": [i.to_dict() for i in self.inputs],
            "outputs": [{"name": n, "shape": None if s is None else list(s)} for n, s in self.outputs],
            "operators": self.operators, "params": self.params, "param_bytes": self.param_bytes,
            "macs": self.macs, "macs_complete": not self.macs_not_counted,
            "kinds": {"macs": "computed (static count from inferred shapes, batch 1)", "params": "computed"},
            "convertible": not self.unsupported,
            "unsupported": [{"op": n.op, "node": n.name} for n in self.unsupported],
            "reasons": list(self.reasons),
            "nodes": [n.to_dict() for n in self.nodes], "notes": list(self.notes),
        }


def inspect_onnx(path, batch: int = 1) -> OnnxReport:
    """Read ``path`` (checked like quantize reads it) and describe it."""
    # lazy: onnx, numpy (optional; import onnx 735 ms, numpy 460 ms measured), loaded only where used
    from onnx import helper, numpy_helper

    g = read_onnx(path, batch)
    data = Path(path).read_bytes()
    a = analyse(g)
    model, shapes = a.model, a.shapes
    notes = list(g.notes) + a.notes
    inits = {t.name: t for t in model.graph.initializer}
    nodes = []
    for k, (node, status) in enumerate(zip(model.graph.node, a.statuses)):
        spec = OPS.get(node.op_type)
        in_shapes = [shapes.get(i) for i in node.input]
        out_shapes = tuple(shapes.get(o) for o in node.output if o)
        macs: Optional[int] = 0
        if status == UNSUPPORTED:
            macs = None
        elif status == LOWERED and spec is not None and spec.macs is not None:
            if all(s is not None for s in in_shapes[:2]) and all(s is not None for s in out_shapes):
                attrs = {x.name: helper.get_attribute_value(x) for x in node.attribute}
                macs = int(spec.macs(attrs, in_shapes, list(out_shapes)))
            else:
                macs = None
        params = sum(prod(shapes[i]) for i in node.input if i in inits)
        nodes.append(NodeReport(k, node.name or node.output[0], node.op_type, out_shapes, macs, params, status))
    reasons = tuple(p.reason for p in a.problems)
    params = sum(prod(t.dims) for t in inits.values())
    param_bytes = sum(numpy_helper.to_array(t).nbytes for t in inits.values())
    return OnnxReport(str(path), hashlib.sha256(data).hexdigest(), len(data), g.opset, g.producer, g.inputs,
                      tuple((o.name, shapes.get(o.name)) for o in model.graph.output), tuple(nodes), params,
                      param_bytes, tuple(notes), reasons)
