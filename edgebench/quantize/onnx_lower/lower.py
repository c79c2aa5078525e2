"""Lower an ONNX graph to a Keras functional model, node by node through the operator table (level 2).

:func:`lower` walks the nodes in their stored (topological) order. Each node is either

* folded: every input is a constant, so onnx's reference evaluator computes its outputs
  (shape arithmetic of exported models: Shape -> Gather -> Concat -> Reshape);
* lowered by the function :data:`edgebench.quantize.onnx_lower.table.OPS` registers for its
  operator, which builds Keras layers/ops on channels-last tensors (see ``values``);
* or refused in one line naming the operator, its node and the supported list.

BatchNormalization after a Conv, ConvTranspose or Gemm whose output feeds nothing else is
folded into that operator's weights and bias before anything is built (``plan_folds``);
elsewhere it becomes a per-channel multiply and add.

Graph inputs of rank 4 (NCHW) become channels-last Keras inputs (NHWC): the one transpose
of the whole conversion, done by the caller on the data. An input already NHWC (read only
by a Transpose(0, 3, 1, 2), as tf2onnx and keras2onnx write it, or for one channel by tf2onnx's
Reshape [N,H,W,1] -> [N,1,H,W]: ``input_perm``) is kept as it is. Outputs of rank 4 of an NCHW model are NHWC; every other output is in the ONNX axis order. :class:`Lowered` records both layouts.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np

from edgebench.data.layout import TensorLayout
from edgebench.errors import ModelError
from edgebench.quantize.onnx_lower import values as V
from edgebench.quantize.onnx_lower.graph import OnnxGraph
from edgebench.quantize.onnx_lower.ops_tensor import reshape_target, unit_axis_perm
from edgebench.quantize.onnx_lower.table import OPS, supported_list
from edgebench.quantize.onnx_lower.verdict import require_convertible

FOLDABLE_INTO = ("Conv", "ConvTranspose", "Gemm")


@dataclass
class Lowered:
    model: Any                   # keras.Model
    inputs: tuple                # TensorLayout per graph input
    outputs: tuple               # TensorLayout per graph output
    operators: dict              # ONNX op type -> count (every node of the graph)
    folded: int                  # nodes computed from constants
    bn_folded: int               # BatchNormalization nodes folded into the operator before them
    notes: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"inputs": [t.to_dict() for t in self.inputs], "outputs": [t.to_dict() for t in self.outputs],
                "onnx_operators": dict(self.operators), "constant_folded_nodes": self.folded,
                "batchnorm_folded": self.bn_folded, "notes": list(self.notes)}


class Ctx:
    """What an operator's lowering function gets besides its node and input values."""

    def __init__(self, keras, tf, path: str, opset: int, folds: dict):
        self.keras, self.tf, self.ops, self.layers = keras, tf, keras.ops, keras.layers
        self.path, self.opset, self.folds = path, opset, folds
        self._names: set = set()
        self.used: frozenset = frozenset()    # value names something reads (unused outputs are dropped)

    def name(self, node, suffix: str = "") -> str:
        """A unique Keras layer name from the ONNX node's name (so TFLite tensors carry it)."""
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", (node.name or node.output[0]) + suffix).strip("_.") or "node"
        name, k = base, 1
        while name in self._names:
            k += 1
            name = f"{base}_{k}"
        self._names.add(name)
        return name

    def attrs(self, node) -> dict:
        # lazy: onnx, numpy (optional; import onnx 735 ms, numpy 460 ms measured), loaded only where used
        from onnx import helper

        return {a.name: _plain(helper.get_attribute_value(a)) for a in node.attribute}

    def fail(self, node, what: str, hint: Optional[str] = None) -> ModelError:
        return ModelError(f"{self.path}: {node.op_type} node {node.name or node.output[0]!r}: {what}",
                          hint or "export the model differently, or open an issue with the node's attributes")

    def fold_affine(self, node, w: np.ndarray, b: np.ndarray, out_axis: int) -> tuple:
        """(weights, bias) with a BatchNormalization that follows ``node`` folded in."""
        fold = self.folds.get(node.output[0])
        if fold is None:
            return w, b
        s, t = fold
        shape = [1] * w.ndim
        shape[out_axis] = -1
        return (w * s.reshape(shape)).astype(np.float32), (b * s + t).astype(np.float32)


def _plain(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


def lower(g: OnnxGraph, keras, tf) -> Lowered:
    """The Keras model of ``g`` (inputs with the batch ``g.inputs`` fixed)."""
    # lazy: onnx, numpy (optional; import onnx 735 ms, numpy 460 ms measured), loaded only where used
    from onnx import numpy_helper

    graph = g.graph
    verdict = require_convertible(g)          # the check inspect shows: refused here before any layer is built
    values: dict = {t.name: V.const(numpy_helper.to_array(t)) for t in graph.initializer}
    folds, aliases = plan_folds(graph, values)
    cx = Ctx(keras, tf, g.path, g.opset, folds)
    cx.used = verdict.used
    inputs, in_layouts = [], []
    for gi in g.inputs:
        perm = input_perm(graph, gi)
        kshape = tuple(gi.shape[p] for p in perm)
        t = keras.Input(batch_shape=kshape, name=_input_name(gi.name), dtype="float32")
        inputs.append(t)
        values[gi.name] = V.tensor(t, perm)
        in_layouts.append(TensorLayout(gi.name, gi.shape, kshape, perm))
    counts: dict = {}
    folded = 0
    for node in graph.node:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
        if node.op_type == "BatchNormalization" and node.output[0] in aliases:
            values[node.output[0]] = values[aliases[node.output[0]]]
            continue
        if node.domain not in ("", "ai.onnx"):
            raise ModelError(f"{g.path}: operator {node.domain}.{node.op_type} (node {node.name!r}) is not in the "
                             "default ONNX domain", f"supported: {supported_list()}")
        ins = []
        for name in node.input:
            if name and name not in values:
                raise ModelError(f"{g.path}: node {node.name!r} reads {name!r}, which nothing before it produces",
                                 "the graph is not in topological order: re-export it")
            ins.append(values.get(name) if name else None)
        spec = OPS.get(node.op_type)
        if all(v is None or v.is_const for v in ins) and (
                node.op_type == "Constant" or any(v is not None for v in ins)):
            outs = _evaluate(node, ins, g.opset)
            folded += 1
        elif spec is None:
            raise ModelError(f"{g.path}: ONNX operator {node.op_type} (node {node.name or node.output[0]!r}) is "
                             f"not supported", f"supported: {supported_list()}")
        else:
            try:
                outs = spec.lower(cx, node, ins)
            except ModelError:
                raise
            except (ValueError, TypeError, IndexError, KeyError) as exc:
                raise cx.fail(node, f"cannot lower it ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})"
                              ) from None
        for name, v in zip(node.output, outs):
            if name:
                values[name] = v
    outputs, out_layouts = [], []
    nchw_source = any(lay.transposed for lay in in_layouts)   # 4-D outputs NHWC, as docs/models.md says
    for name in g.outputs:
        v = values[name]
        if v.is_const:
            raise ModelError(f"{g.path}: output {name!r} is a constant (it does not depend on the input)",
                             "export the model with its real computation")
        if v.rank == 4 and v.order is None and (v.perm == V.channels_last(4) or nchw_source):
            t, perm = V.in_layout(keras.ops, v, V.channels_last(4)), V.channels_last(4)
        else:
            t, perm = V.plain(keras.ops, v), V.identity(v.rank)
        onnx_shape = v.shape
        outputs.append(t)
        out_layouts.append(TensorLayout(name, onnx_shape, tuple(int(d) for d in t.shape), perm))
    model = keras.Model(inputs if len(inputs) > 1 else inputs[0], outputs if len(outputs) > 1 else outputs[0],
                        name=_model_name(g))
    notes = list(g.notes)
    bn = sum(1 for n in graph.node if n.op_type == "BatchNormalization" and n.output[0] in aliases)
    return Lowered(model, tuple(in_layouts), tuple(out_layouts), counts, folded, bn, notes)


def input_perm(graph, gi) -> tuple:
    """The layout a graph input is held in. A 4-D input is NCHW (PyTorch) and held channels-last,
    unless every node reading it is a Transpose(0, 3, 1, 2), or the Reshape [N,H,W,1] -> [N,1,H,W]
    that tf2onnx writes for it when the image has one channel: then it is already NHWC (tf2onnx,
    keras2onnx) and kept as it is, so that Transpose costs nothing and no TRANSPOSE runs."""
    rank = len(gi.shape)
    if rank != 4:
        return V.identity(rank)
    readers = [n for n in graph.node if gi.name in n.input]
    nhwc = bool(readers) and all(_to_nchw(graph, n, gi) for n in readers)
    return V.identity(4) if nhwc else V.channels_last(4)


def _to_nchw(graph, node, gi) -> bool:
    """``node`` reads graph input ``gi`` only to bring it from NHWC to NCHW."""
    # lazy: onnx, numpy (optional; import onnx 735 ms, numpy 460 ms measured), loaded only where used
    from onnx import numpy_helper

    if node.op_type == "Transpose":
        return [list(a.ints) for a in node.attribute if a.name == "perm"] == [[0, 3, 1, 2]]
    if node.op_type != "Reshape" or list(node.input[:1]) != [gi.name] or len(node.input) < 2:
        return False
    shape = next((numpy_helper.to_array(t) for t in graph.initializer if t.name == node.input[1]), None)
    if shape is None:
        shape = next((numpy_helper.to_array(a.t) for n in graph.node if n.op_type == "Constant"
                      and list(n.output) == [node.input[1]] for a in n.attribute if a.name == "value"), None)
    if shape is None:
        return False
    allow_zero = next((int(a.i) for a in node.attribute if a.name == "allowzero"), 0)
    return unit_axis_perm(gi.shape, reshape_target(gi.shape, shape, allow_zero)) == (0, 3, 1, 2)


def _input_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name).strip("_.") or "input"


def _model_name(g: OnnxGraph) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", Path(g.path).stem) or "onnx_model"


def _evaluate(node, ins: list, opset: int) -> list:
    """Outputs of ``node`` on constant inputs, by onnx's reference evaluator, at the graph's opset: the
    node goes in a one-node model, since the evaluator runs a bare node at the newest opset (an opset-9
    Unsqueeze with an ``axes`` attribute then fails as Unsqueeze-13)."""
    # lazy: onnx, numpy (optional; import onnx 735 ms, numpy 460 ms measured), loaded only where used
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    feeds = {name: v.const for name, v in zip(node.input, ins) if name}
    try:
        inputs = [helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.asarray(c).dtype),
                                                np.shape(c)) for name, c in feeds.items()]
        outputs = [helper.make_empty_tensor_value_info(o) for o in node.output if o]
        model = helper.make_model(helper.make_graph([node], "fold", inputs, outputs),
                                  opset_imports=[helper.make_opsetid("", opset)])
        outs = ReferenceEvaluator(model).run(None, feeds)
    except Exception as exc:
        raise ModelError(f"cannot compute {node.op_type} node {node.name!r} from its constant inputs "
                         f"({type(exc).__name__}: {' '.join(str(exc).split())[:200]})", "re-export the model") from None
    got = dict(zip([o for o in node.output if o], outs))
    return [V.const(np.asarray(got[o])) if o else None for o in node.output]


def plan_folds(graph, values: dict) -> tuple:
    """BatchNormalization nodes to fold into the Conv/ConvTranspose/Gemm before them.

    Returns ``({producer output: (scale, shift)}, {bn output: producer output})`` for each
    BN whose input comes from such an operator feeding nothing else, with constant
    parameters. ``scale = gamma / sqrt(var + eps)``, ``shift = beta - mean * scale``.
    """
    # lazy: onnx, numpy (optional; import onnx 735 ms, numpy 460 ms measured), loaded only where used
    from onnx import helper, numpy_helper

    consts = {name: v.const for name, v in values.items()}
    for node in graph.node:
        for a in node.attribute if node.op_type == "Constant" else ():
            if a.name == "value":
                consts[node.output[0]] = numpy_helper.to_array(helper.get_attribute_value(a))
    producers = {o: n for n in graph.node for o in n.output}
    uses: dict = {}
    for n in graph.node:
        for i in n.input:
            uses[i] = uses.get(i, 0) + 1
    graph_outputs = {o.name for o in graph.output}
    folds, aliases = {}, {}
    for n in graph.node:
        if n.op_type != "BatchNormalization" or len(n.input) < 5:
            continue
        x = n.input[0]
        p = producers.get(x)
        params = [consts.get(i) for i in n.input[1:5]]
        if p is None or p.op_type not in FOLDABLE_INTO or uses.get(x, 0) != 1 or x in graph_outputs:
            continue
        if any(a is None for a in params) or len(p.input) < 2 or p.input[1] not in consts:
            continue
        if len([o for o in n.output if o]) > 1:
            continue                                        # training-mode outputs (running stats)
        eps = next((a.f for a in n.attribute if a.name == "epsilon"), 1e-5)
        gamma, beta, mean, var = (np.asarray(a, dtype=np.float64) for a in params)
        scale = gamma / np.sqrt(var + eps)
        folds[x] = (scale, beta - mean * scale)
        aliases[n.output[0]] = x
    return folds, aliases


def run_keras(model, xs: list, batch: int) -> list:
    """Outputs of the lowered Keras model on inputs ``xs`` (model layout), ``batch`` samples a call."""
    n = len(xs[0])
    parts = []
    for i in range(0, n - batch + 1, batch):
        chunk = [np.asarray(x[i:i + batch], dtype=np.float32) for x in xs]
        out = model(chunk if len(chunk) > 1 else chunk[0], training=False)
        parts.append([np.asarray(o) for o in (out if isinstance(out, (list, tuple)) else [out])])
    return [np.concatenate([p[k] for p in parts], axis=0) for k in range(len(parts[0]))]
