"""Whether an ONNX graph converts: one check, asked by ``inspect model.onnx`` and by ``quantize`` alike (level 2).

:func:`analyse` takes a graph :func:`~edgebench.quantize.onnx_lower.graph.read_onnx` has
read (contained, bounded, topologically sorted) and

* infers shapes with the graph inputs made static (``onnx.shape_inference``, ``data_prop``)
  and refuses any value above the tensor-size limit (``guard.LIMITS``) before a constant is
  folded or a layer built (a ``Resize`` x10^4 is refused here, not in the converter);
* gives every node a status: ``folded`` (all inputs constant: computed at conversion time),
  ``lowered`` (its operator is in :data:`table.OPS` and the operator's static check, if it
  has one, passes) or ``unsupported`` with the reason.

``inspect`` prints the statuses; :func:`require_convertible` (called by ``lower``) raises the
first problem as the one-line error ``quantize`` shows. The lowering functions still refuse
what only building reveals; each such refusal is a gap of this check to close.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from edgebench.errors import ModelError
from edgebench.quantize.onnx_lower.guard import check_inferred_sizes
from edgebench.quantize.onnx_lower.table import OPS, supported_list

LOWERED, FOLDED, UNSUPPORTED = "lowered", "folded", "unsupported"


@dataclass(frozen=True)
class Problem:
    index: int
    node: str
    op: str
    reason: str
    hint: str

    def to_dict(self) -> dict:
        return {"index": self.index, "node": self.node, "op": self.op, "reason": self.reason}


@dataclass
class Analysis:
    model: Any                 # ModelProto with static inputs and inferred value_info
    shapes: dict               # value name -> static shape (tuple of ints)
    statuses: list             # per node of the top graph: lowered | folded | unsupported
    problems: list             # Problem, in node order
    used: frozenset            # value names some node or the graph output reads
    notes: list = field(default_factory=list)

    @property
    def convertible(self) -> bool:
        return not self.problems


def used_values(graph) -> frozenset:
    return frozenset(i for n in graph.node for i in n.input if i) | frozenset(o.name for o in graph.output)


def analyse(g) -> Analysis:
    """Shapes, sizes and the per-node verdict of ``g`` (an ``OnnxGraph``)."""
    # lazy: onnx, numpy (optional; import onnx 735 ms, numpy 460 ms measured), loaded only where used
    import onnx

    model = onnx.ModelProto()
    model.CopyFrom(g.model)
    static = {i.name: i.shape for i in g.inputs}
    for vi in model.graph.input:
        if vi.name in static:
            for d, v in zip(vi.type.tensor_type.shape.dim, static[vi.name]):
                d.Clear()
                d.dim_value = int(v)
    notes: list = []
    try:
        model = onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception as exc:  # a model the checker passed but inference cannot follow
        notes.append(f"shape inference failed ({' '.join(str(exc).split())[:200]}): MACs not counted")
    shapes = {}
    for vi in list(model.graph.input) + list(model.graph.value_info) + list(model.graph.output):
        t = vi.type.tensor_type
        if t.HasField("shape") and all(d.HasField("dim_value") for d in t.shape.dim):
            shapes[vi.name] = tuple(int(d.dim_value) for d in t.shape.dim)
    for t in model.graph.initializer:
        shapes[t.name] = tuple(int(d) for d in t.dims)
    check_inferred_sizes(g.path, shapes)
    used = used_values(model.graph)
    consts = {t.name for t in model.graph.initializer}
    statuses, problems = [], []
    for k, node in enumerate(model.graph.node):
        ins = [i for i in node.input if i]
        name = node.name or (node.output[0] if node.output else f"#{k}")
        reason: Optional[str] = None
        hint = f"supported: {supported_list()}"
        if node.op_type == "Constant" or (ins and all(i in consts for i in ins)):
            status = FOLDED
            consts.update(o for o in node.output if o)
        elif node.domain not in ("", "ai.onnx"):
            status, reason = UNSUPPORTED, (f"operator {node.domain}.{node.op_type} (node {name!r}) is not in the "
                                           "default ONNX domain")
        elif node.op_type not in OPS:
            status, reason = UNSUPPORTED, f"ONNX operator {node.op_type} (node {name!r}) is not supported"
        else:
            status = LOWERED
            spec = OPS[node.op_type]
            why = spec.check(node, used, [shapes.get(i) for i in node.input]) if spec.check is not None else None
            if why:
                status, reason = UNSUPPORTED, f"{node.op_type} node {name!r}: {why}"
                hint = "export the model differently (e.g. in inference mode: model.eval())"
            elif node.op_type == "Shape" and all(i in shapes for i in ins):
                consts.update(o for o in node.output if o)
        statuses.append(status)
        if reason is not None:
            problems.append(Problem(k, name, node.op_type, reason, hint))
    return Analysis(model, shapes, statuses, problems, used, notes)


def require_convertible(g) -> Analysis:
    """:func:`analyse`, raising the first problem as quantize's one-line refusal."""
    a = analyse(g)
    if a.problems:
        p = a.problems[0]
        more = f" ({len(a.problems) - 1} more node(s) refused; edgebench inspect lists them)" if len(a.problems) > 1 else ""
        raise ModelError(f"{g.path}: {p.reason}{more}", p.hint)
    return a
