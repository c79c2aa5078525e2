"""ONNX models in: a lowering of the ONNX graph to a Keras functional model (level 2).

    from edgebench.quantize.onnx_lower import read_onnx, lower
    g = read_onnx("model.onnx")              # onnx.load + checker, static inputs, batch 1
    lowered = lower(g, keras, tf)            # keras.Model + the layouts of inputs and outputs

``edgebench quantize model.onnx`` converts the lowered model like a Keras model (FP32
baseline, INT8 with calibration, sidecars), after checking it against onnxruntime
(``reference``). The operators are those of :data:`table.OPS`; docs/models.md.
No onnx2tf, no torch: ``onnx`` and ``onnxruntime`` (the ``edgebench[onnx]`` extra),
imported inside functions.
"""
from __future__ import annotations

from edgebench.quantize.onnx_lower.graph import OnnxMissing, looks_like_onnx, read_onnx

__all__ = ["OnnxMissing", "looks_like_onnx", "read_onnx"]
