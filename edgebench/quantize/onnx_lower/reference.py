"""Is the lowered model the ONNX model? Outputs against onnxruntime on the same inputs (level 2).

onnxruntime (CPUExecutionProvider, one thread) runs the ONNX file on inputs in its own
layout (NCHW); the lowered model runs on the same inputs transposed to its layout, and its
outputs are transposed back before the comparison. The figure is the largest absolute
difference over every output element, against a tolerance relative to the largest
reference magnitude (float32 kernels sum in different orders, so exact equality is not
expected; a layout or padding mistake gives differences of the order of the outputs).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from edgebench.errors import ModelError
from edgebench.quantize.onnx_lower.graph import import_onnxruntime

#: default tolerance: max |lowered - onnxruntime| <= RTOL * max |onnxruntime| + ATOL
RTOL = 1e-3
ATOL = 1e-5


@dataclass(frozen=True)
class Faithfulness:
    """The lowered model's outputs against onnxruntime's."""

    reference: str                 # "onnxruntime 1.32.0 (CPUExecutionProvider, 1 thread)"
    compared: str                  # what ran on the lowered side (e.g. "the FP32 .tflite (LiteRT)")
    samples: int
    outputs: tuple                 # per output: name, max_abs_error, max_abs_reference
    rtol: float
    atol: float

    @property
    def max_abs_error(self) -> float:
        return max((o["max_abs_error"] for o in self.outputs), default=0.0)

    @property
    def tolerance(self) -> float:
        return self.rtol * max((o["max_abs_reference"] for o in self.outputs), default=0.0) + self.atol

    @property
    def ok(self) -> bool:
        return bool(np.isfinite(self.max_abs_error)) and self.max_abs_error <= self.tolerance

    def to_dict(self) -> dict:
        return {"reference": self.reference, "compared": self.compared, "samples": self.samples,
                "max_abs_error": self.max_abs_error, "tolerance": self.tolerance, "rtol": self.rtol,
                "atol": self.atol, "passed": self.ok, "outputs": [dict(o) for o in self.outputs]}


def session(path):
    """An onnxruntime session on ``path``: CPU, one thread, quiet."""
    ort = import_onnxruntime()
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    return ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"])


def describe_reference() -> str:
    ort = import_onnxruntime()
    return f"onnxruntime {ort.__version__} (CPUExecutionProvider, 1 thread)"


def run_onnxruntime(path, feeds: dict, batch: int | None = None) -> list:
    """Outputs of the ONNX model on ``feeds`` (name -> array in the ONNX layout), in batches of
    ``batch`` samples (None: all at once)."""
    try:
        sess = session(path)
    except Exception as exc:
        raise ModelError(f"onnxruntime cannot load {path}: {_short(exc)}", "export the model again") from None
    n = len(next(iter(feeds.values())))
    step = n if not batch else batch
    try:
        return _run(sess, feeds, n, step)
    except Exception as exc:
        if step == 1:
            raise ModelError(f"onnxruntime cannot run {path}: {_short(exc)}", "export the model again") from None
    try:      # a "dynamic" batch the graph does not really allow (a Reshape to [1, ...]): one sample a call
        return _run(sess, feeds, n, 1)
    except Exception as exc:
        raise ModelError(f"onnxruntime cannot run {path}: {_short(exc)}", "export the model again") from None


def _run(sess, feeds: dict, n: int, step: int) -> list:
    parts: list = []
    for i in range(0, n - step + 1, step):
        parts.append(sess.run(None, {k: np.ascontiguousarray(v[i:i + step], dtype=np.float32)
                                     for k, v in feeds.items()}))
    return [np.concatenate([p[k] for p in parts], axis=0) for k in range(len(parts[0]))]


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:299] + "…"


def compare(lowered_outputs: Sequence[np.ndarray], reference_outputs: Sequence[np.ndarray], out_layouts,
            samples: int, compared: str, rtol: float = RTOL, atol: float = ATOL) -> Faithfulness:
    """Faithfulness of ``lowered_outputs`` (model layout) against ``reference_outputs`` (ONNX layout)."""
    rows = []
    for layout, got, ref in zip(out_layouts, lowered_outputs, reference_outputs):
        got = layout.to_source(np.asarray(got, dtype=np.float64))
        ref = np.asarray(ref, dtype=np.float64)
        if got.shape != ref.shape:
            err = float("inf")
        else:
            err = float(np.max(np.abs(got - ref))) if ref.size else 0.0
        rows.append({"name": layout.name, "shape": list(ref.shape[1:]), "max_abs_error": err,
                     "max_abs_reference": float(np.max(np.abs(ref))) if ref.size else 0.0})
    return Faithfulness(describe_reference(), compared, samples, tuple(rows), rtol, atol)


def match_outputs(outputs: list, out_layouts) -> list:
    """The lowered model's outputs in the ONNX output order, matched by shape (a converter may
    reorder a multi-output model's outputs; same-shape outputs keep their order)."""
    left = list(outputs)
    ordered = []
    for layout in out_layouts:
        want = tuple(layout.model_shape[1:])
        k = next((i for i, o in enumerate(left) if tuple(np.shape(o)[1:]) == want), 0 if left else None)
        ordered.append(left.pop(k) if k is not None else np.zeros((0,)))
    return ordered


def check(path, lowered_run: Callable, in_layouts, out_layouts, x_onnx: dict, compared: str,
          batch: int | None, rtol: float = RTOL, atol: float = ATOL) -> Faithfulness:
    """Run onnxruntime on ``x_onnx`` and ``lowered_run`` on the same inputs in the model layout."""
    ref = run_onnxruntime(path, x_onnx, batch)
    x_model = [lay.to_model(x_onnx[lay.name]) for lay in in_layouts]
    got = match_outputs(list(lowered_run(x_model)), out_layouts)
    n = len(next(iter(x_onnx.values())))
    return compare(got, ref, out_layouts, n, compared, rtol, atol)
