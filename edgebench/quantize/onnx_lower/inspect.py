"""Describe an ONNX model before conversion: operators, shapes, parameters, MACs, and which
nodes the lowering takes (level 2).

Shapes come from ``onnx.shape_inference`` with the graph inputs made static (dynamic batch
1, as the lowering does). MACs are counted with the formulas of the operator table
(:data:`table.OPS`): Conv, ConvTranspose, Gemm and MatMul; the other supported operators do
no multiply-accumulate with weights. Each node is ``lowered`` (in the table), ``folded``
(all inputs constant: computed at conversion time) or ``unsupported``.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from math import prod
from pathlib import Path
from typing import Optional

from edgebench.quantize.onnx_lower.graph import read_onnx

LOWERED, FOLDED, UNSUPPORTED = "lowered", "folded", "unsupported"


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
            "nodes": [n.to_dict() for n in self.nodes], "notes": list(self.notes),
        }


def inspect_onnx(path, batch: int = 1) -> OnnxReport:
    """Read ``path`` (checked like quantize reads it) and describe it."""
    import onnx
    from onnx import helper, numpy_helper

    from edgebench.quantize.onnx_lower.table import OPS

    g = read_onnx(path, batch)
    data = Path(path).read_bytes()
    model = onnx.ModelProto()
    model.CopyFrom(g.model)
    static = {i.name: i.shape for i in g.inputs}
    for vi in model.graph.input:
        if vi.name in static:
            for d, v in zip(vi.type.tensor_type.shape.dim, static[vi.name]):
                d.Clear()
                d.dim_value = int(v)
    notes = list(g.notes)
    try:
        model = onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception as exc:  # a model the checker passed but inference cannot follow
        notes.append(f"shape inference failed ({' '.join(str(exc).split())[:200]}): MACs not counted")
    shapes = {}
    for vi in list(model.graph.input) + list(model.graph.value_info) + list(model.graph.output):
        t = vi.type.tensor_type
        if t.HasField("shape") and all(d.HasField("dim_value") for d in t.shape.dim):
            shapes[vi.name] = tuple(int(d.dim_value) for d in t.shape.dim)
    inits = {t.name: t for t in model.graph.initializer}
    for name, t in inits.items():
        shapes[name] = tuple(int(d) for d in t.dims)
    consts = set(inits)
    nodes = []
    for k, node in enumerate(model.graph.node):
        ins = [i for i in node.input if i]
        if node.op_type == "Constant" or (ins and all(i in consts for i in ins)):
            status = FOLDED
            consts.update(o for o in node.output if o)
        elif node.op_type in OPS:
            status = LOWERED
            if node.op_type == "Shape" and all(i in shapes for i in ins):
                consts.update(o for o in node.output if o)
        else:
            status = UNSUPPORTED
        spec = OPS.get(node.op_type)
        in_shapes = [shapes.get(i) for i in node.input]
        out_shapes = tuple(shapes.get(o) for o in node.output if o)
        macs: Optional[int] = 0
        if status == UNSUPPORTED:
            macs = None
        elif status == LOWERED and spec.macs is not None:
            if all(s is not None for s in in_shapes[:2]) and all(s is not None for s in out_shapes):
                attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
                macs = int(spec.macs(attrs, in_shapes, list(out_shapes)))
            else:
                macs = None
        params = sum(prod(shapes[i]) for i in node.input if i in inits)
        nodes.append(NodeReport(k, node.name or node.output[0], node.op_type, out_shapes, macs, params, status))
    params = sum(prod(t.dims) for t in inits.values())
    param_bytes = sum(numpy_helper.to_array(t).nbytes for t in inits.values())
    return OnnxReport(str(path), hashlib.sha256(data).hexdigest(), len(data), g.opset, g.producer, g.inputs,
                      tuple((o.name, shapes.get(o.name)) for o in model.graph.output), tuple(nodes), params,
                      param_bytes, tuple(notes))
