"""Read an ONNX file and check it can be lowered: static inputs, float32, a known opset (level 2).

:func:`read_onnx` parses the model without its external data, checks it is contained
(``guard``: external data inside the model's folder and not a link, bounded size and work),
then reads the external data, puts the nodes in topological order (keras2onnx writes them
out of order; onnxruntime sorts them too), runs ``onnx.checker``, and describes its graph inputs with the batch fixed: a dynamic
first dimension (``dim_param`` such as ``batch_size``, or 0) becomes 1 and is noted;
any other dynamic dimension is refused in one line, because the lowering and every
TFLite runtime here need static shapes. The ``onnx`` package is imported inside
functions (``edgebench --help`` stays fast); without it, :class:`OnnxMissing` names the extra.
"""
from __future__ import annotations

import heapq
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from edgebench.errors import ModelError, UsageError
from edgebench.quantize.onnx_lower.guard import check_bounds, check_external_data

INSTALL_HINT = "pip install 'edgebench[onnx]' (installs onnx and onnxruntime)"
ONNX_SUFFIXES = (".onnx",)
#: oldest default-domain opset the operator table was written against (torch.onnx.export's default is 17+)
MIN_OPSET = 7


class OnnxMissing(UsageError):
    """The onnx (or onnxruntime) package is not installed."""


def import_onnx():
    try:
        import onnx  # optional dependency: its absence is handled here
    except ImportError:
        raise OnnxMissing("the onnx package is not installed; ONNX models need it", INSTALL_HINT) from None
    return onnx


def import_onnxruntime():
    try:
        import onnxruntime  # optional dependency: its absence is handled here
    except ImportError:
        raise OnnxMissing("onnxruntime is not installed; the lowered model is checked against it",
                          INSTALL_HINT) from None
    return onnxruntime


@dataclass(frozen=True)
class GraphInput:
    name: str
    shape: tuple                 # static, batch fixed
    declared: tuple              # as declared: ints, or the dim_param names / "?" of dynamic dims
    dtype: str

    def to_dict(self) -> dict:
        return {"name": self.name, "shape": list(self.shape), "declared": list(self.declared), "dtype": self.dtype}


@dataclass
class OnnxGraph:
    """A loaded ONNX model, its opset and its static graph inputs."""

    path: str
    model: Any                   # onnx.ModelProto
    opset: int                   # default ("" / "ai.onnx") domain
    inputs: tuple                # GraphInput
    outputs: tuple               # output names
    producer: str                # e.g. "pytorch 2.5.1"
    notes: list = field(default_factory=list)

    @property
    def graph(self):
        return self.model.graph

    def to_dict(self) -> dict:
        return {"path": self.path, "opset": self.opset, "producer": self.producer,
                "inputs": [i.to_dict() for i in self.inputs], "outputs": list(self.outputs),
                "notes": list(self.notes)}


def looks_like_onnx(path) -> bool:
    return Path(path).suffix.lower() in ONNX_SUFFIXES


def read_onnx(path, batch: int = 1) -> OnnxGraph:
    """Load and check ``path``; ModelError in one line if it is not a usable ONNX model."""
    onnx = import_onnx()
    p = Path(path)
    if not p.is_file():
        raise ModelError(f"model file {p} does not exist" if not p.exists() else f"{p} is not a regular file",
                         "check the path")
    try:
        model = onnx.load(str(p), load_external_data=False)
    except Exception as exc:  # DecodeError, ...
        raise ModelError(f"cannot load {p} with onnx.load (onnx {onnx.__version__}): {_first_line(exc)}",
                         "export it again (torch.onnx.export)") from None
    if not len(model.graph.node):
        raise ModelError(f"{p} is not an ONNX model with a graph (no nodes)", "export the model with torch.onnx.export")
    notes: list = []
    check_bounds(p, model)                    # node count, loop trips, tensor sizes: before any work
    if check_external_data(p, model):         # inside the model's folder, no links: before onnx reads it
        try:
            onnx.load_external_data_for_model(model, os.path.realpath(p.parent))
        except Exception as exc:
            raise ModelError(f"cannot read the external data of {p} (onnx {onnx.__version__}): {_first_line(exc)}",
                             "check that the data files sit beside the model") from None
        check_bounds(p, model)
    moved = topological_sort(model.graph)
    if moved:
        notes.append(f"the nodes were not in topological order (keras2onnx does this): {moved} moved")
    try:
        onnx.checker.check_model(model)
    except Exception as exc:
        raise ModelError(f"{p} fails onnx.checker (onnx {onnx.__version__}): {_first_line(exc)}",
                         "export it again with a current exporter") from None
    opset = next((int(o.version) for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    if opset < MIN_OPSET:
        raise ModelError(f"{p} uses opset {opset}; edgebench lowers opset {MIN_OPSET} and newer",
                         "export with opset_version=17 (torch.onnx.export(..., opset_version=17))")
    others = sorted({o.domain for o in model.opset_import if o.domain not in ("", "ai.onnx")})
    initializers = {t.name for t in model.graph.initializer}
    inputs = tuple(_graph_input(onnx, p, vi, batch, notes) for vi in model.graph.input if vi.name not in initializers)
    if not inputs:
        raise ModelError(f"{p} has no graph inputs", "export the model with an example input")
    if others:
        notes.append(f"opset domains besides the default one: {', '.join(others)}")
    producer = " ".join(x for x in (model.producer_name, model.producer_version) if x) or "unknown"
    return OnnxGraph(str(path), model, opset, inputs, tuple(o.name for o in model.graph.output), producer, notes)


def _graph_input(onnx, p: Path, vi, batch: int, notes: list) -> GraphInput:
    t = vi.type.tensor_type
    if not vi.type.HasField("tensor_type"):
        raise ModelError(f"{p}: input {vi.name!r} is not a tensor", "models with sequence or map inputs cannot be lowered")
    dtype = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type).name if t.elem_type else "undefined"
    if dtype != "float32":
        raise ModelError(f"{p}: input {vi.name!r} is {dtype}; the lowering takes float32 inputs",
                         "export the float32 model (model.float() before torch.onnx.export)")
    if not t.HasField("shape"):
        raise ModelError(f"{p}: input {vi.name!r} has no declared shape", "export with an example input of the real shape")
    declared: list[int | str] = []     # the declared dimensions: sizes or names
    shape: list[int] = []
    for axis, d in enumerate(t.shape.dim):
        if d.HasField("dim_value") and d.dim_value > 0:
            declared.append(int(d.dim_value))
            shape.append(int(d.dim_value))
            continue
        name = d.dim_param or "?"
        declared.append(name)
        if axis == 0:
            shape.append(int(batch))
            notes.append(f"input {vi.name!r}: dynamic batch {name!r} fixed to {batch}")
            continue
        raise ModelError(f"{p}: input {vi.name!r} has a dynamic dimension {name!r} at axis {axis} "
                         f"(shape {_shape_text(declared, t.shape.dim[axis + 1:])})",
                         "export with static shapes: in torch.onnx.export, leave that axis out of dynamic_axes")
    if shape and isinstance(declared[0], int) and declared[0] != batch:
        raise ModelError(f"{p}: input {vi.name!r} has a fixed batch of {declared[0]}, not {batch}",
                         f"use --batch {declared[0]}, or export with a dynamic batch "
                         "(torch.onnx.export(..., dynamic_axes={'input': {0: 'batch'}}))")
    return GraphInput(vi.name, tuple(shape), tuple(declared), dtype)


def _shape_text(declared: list, rest) -> str:
    more = [str(d.dim_value) if d.HasField("dim_value") and d.dim_value > 0 else (d.dim_param or "?") for d in rest]
    return "x".join(str(d) for d in declared + more)


def _first_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:299] + "…"


def topological_sort(graph) -> int:
    """Put ``graph``'s nodes in topological order in place (Kahn's algorithm, iterative; stable:
    an already sorted graph is left as it is). Returns how many nodes changed place; ModelError
    if a node reads a value nothing produces or the nodes form a cycle."""
    nodes = list(graph.node)
    available = {i.name for i in graph.input} | {t.name for t in graph.initializer} | {""}
    producer = {}
    for k, n in enumerate(nodes):
        for o in n.output:
            if o:
                producer[o] = k
    waiting = [0] * len(nodes)
    readers: dict = {}
    for k, n in enumerate(nodes):
        for name in set(_reads(n)):
            if name in available and name not in producer:
                continue
            if name not in producer:
                raise ModelError(f"node {n.name or n.output[0]!r} ({n.op_type}) reads {name!r}, which nothing produces",
                                 "export the model again")
            waiting[k] += 1
            readers.setdefault(producer[name], []).append(k)

    ready = [k for k in range(len(nodes)) if waiting[k] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        k = heapq.heappop(ready)
        order.append(k)
        for r in readers.get(k, ()):
            waiting[r] -= 1
            if waiting[r] == 0:
                heapq.heappush(ready, r)
    if len(order) != len(nodes):
        stuck = next(nodes[k] for k in range(len(nodes)) if waiting[k])
        raise ModelError(f"the graph has a cycle (node {stuck.name or stuck.output[0]!r}, {stuck.op_type})",
                         "export the model again")
    moved = sum(1 for i, k in enumerate(order) if i != k)
    if moved:
        graph.ClearField("node")
        graph.node.extend(nodes[k] for k in order)
    return moved


def _reads(node):
    """The values ``node`` reads, its subgraphs' reads from the outer scope included."""
    yield from (i for i in node.input if i)
    stack = [a.g for a in node.attribute if a.HasField("g")] + [g for a in node.attribute for g in a.graphs]
    while stack:
        g = stack.pop()
        local = {i.name for i in g.input} | {t.name for t in g.initializer} | {o for n in g.node for o in n.output}
        for n in g.node:
            yield from (i for i in n.input if i and i not in local)
            stack.extend(a.g for a in n.attribute if a.HasField("g"))
