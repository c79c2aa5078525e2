"""The provenance sidecar of a model file (level 0): ``<model>.json``, described once.

``edgebench quantize`` writes one beside every model it converts (:mod:`edgebench.quantize.sidecar`),
``edgebench compile`` carries it to the Edge TPU model with the compiler's report
(:mod:`edgebench.runtime.edgetpu`), models/digits/build.py writes the bundled models' ones, and
``bench`` and ``accuracy`` record it in run.json (``model.sidecar``). Format
``edgebench-model-sidecar`` version 1: the keys below; a writer may add its own (the digits
build adds its test accuracy). ``edgebench schema sidecar`` prints the JSON Schema.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Dict, List, Literal, Optional, Union

from pydantic import Field, with_config
from pydantic.dataclasses import dataclass
from typing_extensions import Annotated, TypedDict

from edgebench.errors import EdgebenchError
from edgebench.schema import OPEN, Bool, Float, Int, Str, expects, validate

SIDECAR_FORMAT = "edgebench-model-sidecar"
SIDECAR_VERSION = 1
MAX_SIDECAR_BYTES = 4 * 2 ** 20


@with_config(OPEN)
class Source(TypedDict, total=False):
    """The model a file was made from."""
    path: Optional[Str]
    sha256: Optional[Str]
    sidecar: Optional[Str]


@with_config(OPEN)
class WeightQuantization(TypedDict, total=False):
    """How one conv / fully-connected operator's weights are quantized."""
    op: Str
    op_index: Int
    weight_dtype: Optional[Str]
    weight_shape: List[Int]
    scales: Int
    per_channel: Bool
    quantized_dimension: Optional[Int]


Shape = List[Optional[Int]]
Quantization = Annotated[Optional[List[Union[Float, Int]]], Field(
    description="[scale, zero_point] of a quantized input or output; null for a float one")]


@dataclass(config=OPEN)
class Sidecar:
    """What a model file is and where it came from: format ``edgebench-model-sidecar`` version 1."""

    format: Annotated[Literal["edgebench-model-sidecar"], Field(description="always `edgebench-model-sidecar`")]
    version: Annotated[Literal[1], Field(description="the sidecar format's version")]
    model_sha256: Annotated[Str, Field(pattern=r"^[0-9a-f]{64}$", description="sha256 of the model file this "
                                       "sidecar describes", json_schema_extra=expects("64 hex digits"))]
    precision: Annotated[Optional[Str], Field(description="`fp32`, `int8`, `uint8`, `fp16`, `dynamic-range` or "
                                                          "`mixed`, read from the tensor types")] = None
    weights_bits: Annotated[Optional[Int], Field(description="bits of the weights")] = None
    activations_bits: Annotated[Optional[Int], Field(description="bits of the activations")] = None
    input_dtype: Annotated[Optional[Str], Field(description="the input tensor's type")] = None
    output_dtype: Annotated[Optional[Str], Field(description="the output tensor's type")] = None
    input_shape: Annotated[Optional[Shape], Field(description="the input tensor's shape")] = None
    output_shape: Annotated[Optional[Shape], Field(description="the output tensor's shape")] = None
    input_quantization: Quantization = None
    output_quantization: Quantization = None
    preprocessing: Annotated[Union[Str, Dict[str, Any], None], Field(
        description="how raw inputs become the model's input (text, or the declared image preprocessing)")] = None
    ops: Annotated[Optional[List[Str]], Field(description="the operators, sorted")] = None
    weights_quantization: Annotated[Optional[List[WeightQuantization]], Field(
        description="per conv / fully-connected operator: weight type, shape, scales, per-channel")] = None
    calibration: Annotated[Optional[Dict[str, Any]], Field(
        description="the INT8 model's calibration data: source, count, sha256 (null for the others)")] = None
    converter: Annotated[Optional[Dict[str, Any]], Field(description="converter and TensorFlow versions, "
                                                                     "options")] = None
    derived_from: Annotated[Optional[Source], Field(description="the source model: path, sha256 (and its sidecar, "
                                                                "for a compiled model)")] = None
    baseline: Annotated[Union[Source, Str, None], Field(description="the FP32 file the other variants were made "
                                                                    "beside")] = None
    created_by: Annotated[Optional[Str], Field(description="edgebench VERSION quantize (ROLE)")] = None
    warnings: Annotated[List[Dict[str, Any]], Field(description="quantize's warnings {code, ...}")] = \
        dataclasses.field(default_factory=list)
    layout: Annotated[Optional[Dict[str, Any]], Field(description="a model lowered from ONNX: the layout its "
                                                      "inputs and outputs had there (`inputs`, `outputs`: "
                                                      "name, shape, NCHW/NHWC), read by accuracy and verify "
                                                      "to transpose data given in that layout")] = None
    lowering: Annotated[Optional[Dict[str, Any]], Field(description="a model lowered from ONNX: the lowering's "
                                                        "checks against onnxruntime (max abs error, tolerance)")] = None
    edgetpu_compile: Annotated[Optional[Dict[str, Any]], Field(description="`edgebench compile`: the Edge TPU "
                                                                           "compiler's command and report")] = None


def sidecar_path(model_path) -> Path:
    """``<model>.json``: where a model's sidecar is (``model.tflite`` -> ``model.tflite.json``)."""
    return Path(str(model_path) + ".json")


def check_sidecar(data: Any, where: str) -> dict:
    """``data`` if it is a valid sidecar; else EdgebenchError, one line naming the file and the key."""
    validate(Sidecar, data, where)
    return data


def read_sidecar(model_path) -> Optional[dict]:
    """The provenance sidecar beside ``model_path`` as a dict (None if there is none); one that does not
    read or validate is ``{"error": "<one line naming the file and the key>"}``, recorded as such."""
    p = sidecar_path(model_path)
    if not p.exists():
        return None
    try:
        with open(p, "rb") as f:
            raw = f.read(MAX_SIDECAR_BYTES + 1)
        if len(raw) > MAX_SIDECAR_BYTES:
            return {"error": f"sidecar {p.name} is larger than {MAX_SIDECAR_BYTES // 2 ** 20} MB: not read"}
        return check_sidecar(json.loads(raw.decode("utf-8")), p.name)
    except (OSError, ValueError, RecursionError):
        return {"error": f"unreadable sidecar {p.name}"}
    except EdgebenchError as exc:
        return {"error": f"invalid sidecar {exc.one_line()}"}


def named_baseline(model_path, sidecar: Optional[dict] = None) -> Optional[dict]:
    """The FP32 file a model's sidecar says it was made beside (``baseline``: ``file`` relative to the model,
    ``sha256``), as ``{"path": Path or None, "sha256": str or None}``; None when the sidecar names none."""
    sc = read_sidecar(model_path) if sidecar is None else sidecar
    if not isinstance(sc, dict) or "error" in sc:
        return None
    b = sc.get("baseline")
    if isinstance(b, str):
        b = {"file": b}
    if not isinstance(b, dict):
        return None
    rel = b.get("file") or b.get("path")
    sha = b.get("sha256") if isinstance(b.get("sha256"), str) else None
    if not rel and not sha:
        return None
    return {"path": Path(model_path).parent / str(rel) if rel else None, "sha256": sha}


def _source_sha(sidecar) -> Optional[str]:
    d = (sidecar or {}).get("derived_from") if isinstance(sidecar, dict) else None
    return d.get("sha256") if isinstance(d, dict) and isinstance(d.get("sha256"), str) else None


def baseline_provenance(model_path, baseline_path, baseline_sha256: str) -> dict:
    """Whether ``baseline_path`` (its sha256 given) is the baseline ``model_path``'s sidecar names.

    ``status``: ``matches`` (the sidecar's ``baseline.sha256``), ``same-source`` (both sidecars name the same
    source model's sha256), ``differs`` (a warning: another network may have the same shapes), ``unchecked``
    (the candidate has no sidecar naming a baseline or a source); with what each side says."""
    sc = read_sidecar(model_path)
    named = named_baseline(model_path, sc)
    src, base_src = _source_sha(sc), _source_sha(read_sidecar(baseline_path))
    out = {"status": "unchecked", "baseline_sha256": baseline_sha256,
           "expected_sha256": (named or {}).get("sha256"),
           "expected_file": str(named["path"]) if named and named.get("path") else None,
           "source_sha256": src, "baseline_source_sha256": base_src}
    if named and named.get("sha256"):
        out["status"] = "matches" if named["sha256"] == baseline_sha256 else "differs"
    if out["status"] != "matches" and src and base_src:
        out["status"] = "same-source" if src == base_src else "differs"
    return out


__all__ = ["SIDECAR_FORMAT", "SIDECAR_VERSION", "Sidecar", "baseline_provenance", "check_sidecar", "named_baseline",
           "read_sidecar", "sidecar_path"]
