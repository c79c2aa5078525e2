"""Read a .tflite file on the host without running it (level 2).

Parsing uses the flatbuffer schema module that ships with ai-edge-litert
(pure Python, no native kernels), so a model that would crash a runtime can
still be described. This gives the model's identity (sha256, size), its
operators, input/output tensors and the precision of weights and activations.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from edgebench.errors import ModelError

# TensorType enum of the TFLite schema -> (name, bits)
TENSOR_TYPES = {
    0: ("float32", 32), 1: ("float16", 16), 2: ("int32", 32), 3: ("uint8", 8),
    4: ("int64", 64), 5: ("string", 0), 6: ("bool", 8), 7: ("int16", 16),
    8: ("complex64", 64), 9: ("int8", 8), 10: ("float64", 64), 11: ("complex128", 128),
    12: ("uint64", 64), 13: ("resource", 0), 14: ("variant", 0), 15: ("uint32", 32),
    16: ("uint16", 16), 17: ("int4", 4),
}


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: list
    dtype: str
    scale: list = field(default_factory=list)
    zero_point: list = field(default_factory=list)

    def to_dict(self) -> dict:
        quant = None
        if self.scale:
            quant = {"scale": self.scale[0] if len(self.scale) == 1 else self.scale,
                     "zero_point": self.zero_point[0] if len(self.zero_point) == 1 else self.zero_point}
        return {"name": self.name, "shape": list(self.shape), "dtype": self.dtype, "quant": quant}


@dataclass(frozen=True)
class ModelFile:
    path: str
    name: str
    sha256: str
    bytes: int
    operators: dict          # builtin operator name -> count
    inputs: list             # TensorInfo
    outputs: list
    weights_dtype: str       # dtype of most constant (weight) bytes
    weights_bits: int
    activations_dtype: str   # dtype of the model's non-constant tensors (majority)
    activations_bits: int
    precision: str          # "fp32" | "fp16" | "int8" | "uint8" | "dynamic-range" | "mixed"

    def to_dict(self) -> dict:
        return {
            "path": self.path, "name": self.name, "sha256": self.sha256, "bytes": self.bytes,
            "precision": self.precision,
            "weights_dtype": self.weights_dtype, "weights_bits": self.weights_bits,
            "activations_dtype": self.activations_dtype, "activations_bits": self.activations_bits,
            "operators": dict(self.operators),
            "inputs": [t.to_dict() for t in self.inputs],
            "outputs": [t.to_dict() for t in self.outputs],
        }


def op_names() -> dict:
    """TFLite BuiltinOperator code -> name (from the schema module)."""
    from ai_edge_litert import schema_py_generated as s

    return {v: k for k, v in vars(s.BuiltinOperator).items() if isinstance(v, int) and not k.startswith("_")}


def decode_name(x) -> str:
    """A flatbuffer string (bytes) as text."""
    return x.decode("utf-8", "replace") if isinstance(x, (bytes, bytearray)) else str(x or "")


CUSTOM = 32  # BuiltinOperator.CUSTOM


def builtin_code(code) -> int:
    """An OperatorCode's builtin code: models written before 2.4 keep it in the deprecated field."""
    return max(code.builtinCode or 0, code.deprecatedBuiltinCode or 0)


def operator_name(code, names: dict) -> str:
    """The builtin operator's name, or a custom operator's own name."""
    b = builtin_code(code)
    return decode_name(code.customCode) if b == CUSTOM else names.get(b, str(b))


def read_model(path) -> ModelFile:
    """Parse ``path`` as a TFLite model; raise ModelError with a clear line if it is not one."""
    p = Path(path)
    if not p.exists():
        raise ModelError(f"model file {p} does not exist", "check the path")
    if p.is_dir():
        raise ModelError(f"{p} is a directory, not a .tflite file",
                         "pass the .tflite file (convert SavedModels with `edgebench quantize`)")
    data = p.read_bytes()
    return parse_model(data, str(p))


def parse_model(data: bytes, path: str = "<bytes>") -> ModelFile:
    name = Path(path).stem
    if len(data) < 8 or data[4:8] != b"TFL3":
        ident = data[4:8] if len(data) >= 8 else b""
        raise ModelError(
            f"{path} is not a TFLite model (file identifier {ident!r}, expected b'TFL3', {len(data)} bytes)",
            "pass a .tflite flatbuffer; a truncated download or a Keras/ONNX file gives this error",
        )
    try:
        from ai_edge_litert import schema_py_generated as s

        m = s.ModelT.InitFromPackedBuf(bytearray(data), 0)
    except Exception as exc:  # corrupt flatbuffer
        raise ModelError(f"{path} is a corrupt TFLite model ({type(exc).__name__}: {exc})",
                         "re-export or re-download the model") from None
    if not m.subgraphs:
        raise ModelError(f"{path} has no subgraphs", "re-export the model")
    names = op_names()
    ops: dict = {}
    sg = m.subgraphs[0]
    codes = m.operatorCodes or []
    for op in sg.operators or []:
        opname = operator_name(codes[op.opcodeIndex], names)
        ops[opname] = ops.get(opname, 0) + 1

    def tinfo(i) -> TensorInfo:
        t = sg.tensors[i]
        q = t.quantization
        scale = [float(v) for v in (q.scale if q is not None and q.scale is not None else [])]
        zp = [int(v) for v in (q.zeroPoint if q is not None and q.zeroPoint is not None else [])]
        shape = [int(v) for v in (t.shape if t.shape is not None else [])]
        return TensorInfo(decode_name(t.name), shape, TENSOR_TYPES.get(t.type, ("unknown", 0))[0], scale, zp)

    weight_bytes: dict = {}
    act_count: dict = {}
    for t in sg.tensors or []:
        tname, _bits = TENSOR_TYPES.get(t.type, ("unknown", 0))
        buf = m.buffers[t.buffer] if t.buffer < len(m.buffers) else None
        nbytes = len(buf.data) if buf is not None and buf.data is not None else 0
        if buf is not None and buf.size:  # buffers stored outside the flatbuffer (>2 GB models)
            nbytes = int(buf.size)
        if nbytes:
            weight_bytes[tname] = weight_bytes.get(tname, 0) + nbytes
        else:
            act_count[tname] = act_count.get(tname, 0) + 1
    wd = max(weight_bytes, key=weight_bytes.get) if weight_bytes else "none"
    ad = max(act_count, key=act_count.get) if act_count else "none"
    bits = {v[0]: v[1] for v in TENSOR_TYPES.values()}
    inputs = [tinfo(i) for i in sg.inputs]
    outputs = [tinfo(i) for i in sg.outputs]
    return ModelFile(
        path=path, name=name, sha256=hashlib.sha256(data).hexdigest(), bytes=len(data),
        operators=ops, inputs=inputs, outputs=outputs,
        weights_dtype=wd, weights_bits=bits.get(wd, 0),
        activations_dtype=ad, activations_bits=bits.get(ad, 0),
        precision=_precision(wd, ad),
    )


def _precision(weights: str, activations: str) -> str:
    if weights in ("int8", "uint8") and activations in ("int8", "uint8"):
        return activations
    if weights == "int8" and activations == "float32":
        return "dynamic-range"
    if weights == "float16":
        return "fp16"
    if weights in ("float32", "none") and activations == "float32":
        return "fp32"
    return "mixed"


def read_sidecar(model_path) -> dict | None:
    """The provenance sidecar ``<model>.json`` written by `edgebench quantize` (None if absent)."""
    import json

    p = Path(str(model_path) + ".json")
    if not p.exists():
        return None
    try:
        return json.loads(p.read_text())
    except ValueError:
        return {"error": f"unreadable sidecar {p.name}"}
