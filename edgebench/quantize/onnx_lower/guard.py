"""Containment of an ONNX file before any library reads it or works on it (level 2).

Two checks, each raising :class:`~edgebench.errors.ModelError` in one line:

* :func:`check_external_data` runs on the graph parsed *without* its external data
  (``onnx.load(..., load_external_data=False)``). Every external-data location must be a
  relative path that resolves (``os.path.realpath``) inside the model's folder, to a regular
  file that is neither a symbolic link (at any component) nor hard-linked elsewhere
  (``st_nlink == 1``), and each offset + length must lie inside that file. onnx 1.21 checks
  the same (CVE-2026-27489, CVE-2026-34446) and onnxruntime does not check hard links:
  edgebench checks first, whatever is installed.
* :func:`check_bounds` bounds the work of everything that follows (shape inference,
  constant folding by onnx's reference evaluator, the Keras build, onnxruntime): at most
  :data:`LIMITS` ``.max_nodes`` nodes (subgraphs included), no ``Loop``/``Scan`` whose trip
  count is not a constant of at most ``max_loop_trips``, and no tensor (initializer, or a
  value whose shape inference gives a static shape) of more than ``max_tensor_elements``
  elements. Every walk here is iterative (an explicit stack), so a deep graph cannot raise
  RecursionError.

What cannot be bounded beforehand (the TensorFlow converter's own memory and time) is
bounded by running the conversion in a child process with resource limits
(``edgebench.quantize.child``).
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from math import prod
from pathlib import Path

from edgebench.errors import ModelError


@dataclass(frozen=True)
class Limits:
    max_nodes: int = 4000                  # every node, subgraphs included (MobileNet v2: ~100, ResNet-50: ~180)
    max_tensor_elements: int = 1 << 26     # 67 M elements (256 MiB of float32) per tensor
    max_loop_trips: int = 10_000           # a constant trip count of Loop (Scan: its scanned length)
    max_subgraph_depth: int = 8            # If/Loop bodies nested in each other


LIMITS = Limits()
HINT = "edgebench converts models for small devices; this one is outside the limits stated in docs/models.md"


# ---------------------------------------------------------------- external data

def check_external_data(path, model) -> int:
    """Number of external tensors of ``model`` (parsed from ``path`` without its external data);
    ModelError if one of them points outside the model's folder, through a link, or past its file's end."""
    folder = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    seen = 0
    for tensor in _all_tensors(model):
        if tensor.data_location != 1:          # TensorProto.EXTERNAL
            continue
        seen += 1
        info = {e.key: e.value for e in tensor.external_data}
        location = info.get("location", "")
        where = f"{path}: initializer {tensor.name[:80]!r} keeps its data in {location[:120]!r}"
        if not location or os.path.isabs(location) or location.startswith(("\\", "/")) or ":" in location[:3]:
            raise ModelError(f"{where}: external data must be a relative path beside the model",
                             "keep the .onnx file and its data file in one folder (onnx.save(..., "
                             "save_as_external_data=True, location='model.data'))")
        target = os.path.join(folder, location)
        real = os.path.realpath(target)
        if os.path.commonpath([folder, real]) != folder:
            raise ModelError(f"{where}, which resolves outside the model's folder {folder}", _LINK_HINT)
        _no_link_below(folder, location, where)
        try:
            st = os.lstat(real)
        except OSError as exc:
            raise ModelError(f"{where}, which cannot be read ({exc.strerror})",
                             "copy the data file next to the .onnx file") from None
        if not stat.S_ISREG(st.st_mode):
            raise ModelError(f"{where}, which is not a regular file", _LINK_HINT)
        if st.st_nlink > 1:
            raise ModelError(f"{where}, a file with {st.st_nlink} hard links (it may be another file's data)",
                             _LINK_HINT)
        offset, length = _int(info.get("offset", "0")), _int(info.get("length", "-1"))
        if offset is None or length is None or offset < 0 or offset > st.st_size or (
                length >= 0 and offset + length > st.st_size):
            raise ModelError(f"{where} at offset {info.get('offset', '0')}, length {info.get('length', 'all')}: "
                             f"outside the file's {st.st_size} bytes", "export the model again")
    return seen


_LINK_HINT = "copy the data file (not a link to it) next to the .onnx file; edgebench reads no file outside that folder"


def _no_link_below(folder: str, location: str, where: str) -> None:
    cur = folder
    for part in Path(location).parts:
        if part in ("", "."):
            continue
        if part == "..":
            raise ModelError(f"{where}: '..' in an external data path", _LINK_HINT)
        cur = os.path.join(cur, part)
        if os.path.islink(cur):
            raise ModelError(f"{where}, and {cur} is a symbolic link", _LINK_HINT)


def _int(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def _all_tensors(model):
    """Every TensorProto of ``model``: initializers and tensor attributes, subgraphs included (iterative)."""
    stack = [model.graph]
    while stack:
        g = stack.pop()
        yield from g.initializer
        for node in g.node:
            for a in node.attribute:
                if a.HasField("t"):
                    yield a.t
                yield from a.tensors
                if a.HasField("g"):
                    stack.append(a.g)
                stack.extend(a.graphs)


# ---------------------------------------------------------------- bounds

def iter_nodes(graph, max_depth: int = LIMITS.max_subgraph_depth):
    """(depth, node) for every node of ``graph`` and of its subgraphs, iteratively."""
    stack = [(graph, 0)]
    while stack:
        g, depth = stack.pop()
        if depth > max_depth:
            raise ModelError(f"subgraphs nested {depth} deep (If/Loop bodies; limit {max_depth})", HINT)
        for node in g.node:
            yield depth, node
            for a in node.attribute:
                if a.HasField("g"):
                    stack.append((a.g, depth + 1))
                stack.extend((s, depth + 1) for s in a.graphs)


def constants_of(graph) -> dict:
    """name -> numpy array of the initializers and Constant nodes of ``graph`` (top level)."""
    # lazy: onnx, numpy (optional; import onnx 735 ms, numpy 460 ms measured), loaded only where used
    from onnx import helper, numpy_helper

    out = {t.name: t for t in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant" and node.output:
            for a in node.attribute:
                if a.name == "value":
                    out[node.output[0]] = helper.get_attribute_value(a)
    res = {}
    for name, t in out.items():
        n = prod(int(d) for d in t.dims)
        if n <= 16 and t.data_location != 1:   # only small in-file ones are needed (trip counts)
            res[name] = numpy_helper.to_array(t)
    return res


def check_bounds(path, model, limits: Limits = LIMITS) -> int:
    """Number of nodes (subgraphs included); ModelError if ``model`` is outside ``limits``."""
    count = 0
    for _depth, _node in iter_nodes(model.graph, limits.max_subgraph_depth):
        count += 1
        if count > limits.max_nodes:
            raise ModelError(f"{path}: more than {limits.max_nodes:,} nodes (subgraphs included)", HINT)
    consts = constants_of(model.graph)
    for depth, node in iter_nodes(model.graph, limits.max_subgraph_depth):
        if node.op_type == "Loop":
            _check_loop(path, node, consts if depth == 0 else {}, limits)
    for t in _all_tensors(model):
        n = prod(int(d) for d in t.dims)
        if n > limits.max_tensor_elements:
            raise ModelError(f"{path}: tensor {t.name[:80]!r} has {n:,} elements (limit "
                             f"{limits.max_tensor_elements:,})", HINT)
    return count


def _check_loop(path, node, consts: dict, limits: Limits) -> None:
    name = node.name or (node.output[0] if node.output else "?")
    m = node.input[0] if node.input else ""
    if not m:
        raise ModelError(f"{path}: Loop node {name[:80]!r} has no trip count (it runs until its condition "
                         "turns false): its work cannot be bounded", HINT)
    value = consts.get(m)
    if value is None:
        raise ModelError(f"{path}: Loop node {name[:80]!r}: its trip count {m[:80]!r} is computed at run time; "
                         "its work cannot be bounded", HINT)
    trips = int(value.reshape(-1)[0]) if value.size else 0
    if trips > limits.max_loop_trips:
        raise ModelError(f"{path}: Loop node {name[:80]!r} runs {trips:,} times (limit {limits.max_loop_trips:,})",
                         HINT)


def check_inferred_sizes(path, shapes: dict, limits: Limits = LIMITS) -> None:
    """ModelError if a value of static inferred shape (``name -> shape``) exceeds the element limit."""
    for name, shape in shapes.items():
        n = prod(int(d) for d in shape)
        if n > limits.max_tensor_elements:
            raise ModelError(f"{path}: value {name[:80]!r} of shape {'x'.join(map(str, shape))} has {n:,} elements "
                             f"(limit {limits.max_tensor_elements:,})", HINT)
