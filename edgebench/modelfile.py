"""Read a .tflite file on the host without running it (level 0, beside results).

Parsing uses the flatbuffer schema module that ships with ai-edge-litert
(pure Python, no native kernels), so a model that would crash a runtime can
still be described. This gives the model's identity (sha256, size), its
operators, input/output tensors and the precision of weights and activations.
"""
from __future__ import annotations

import builtins
import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from edgebench.errors import ModelError, file_kind

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
    content: builtins.bytes = field(default=b"", repr=False, compare=False)   # (the field `bytes` shadows the type)  # the bytes read: an upload reuses them

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
    # lazy: numpy, flatbuffers, ai_edge_litert (optional; import numpy 460 ms, flatbuffers 230 ms, ai_edge_litert 12 ms), loaded only where used
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


MAX_MODEL_BYTES = (1 << 31) - 1   # a flatbuffer addresses at most 2 GiB (larger models keep buffers outside)
_HINT_BAD = "re-export or re-download the model; a truncated download or a Keras/ONNX file gives this error"


def read_model(path) -> ModelFile:
    """Parse ``path`` as a TFLite model; raise ModelError with a clear line if it is not one.

    Only regular files are read (not directories, devices such as ``/dev/zero``, pipes
    or sockets), at most :data:`MAX_MODEL_BYTES`, and the flatbuffer is verified
    structurally (:func:`verify_flatbuffer`) before anything reads it.
    """
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise ModelError(f"model file {p} does not exist", "check the path") from None
    except OSError as exc:
        raise ModelError(f"cannot read model file {p}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise ModelError(f"{p} is a directory, not a .tflite file",
                         "pass the .tflite file (convert SavedModels with `edgebench quantize`)")
    try:  # O_NONBLOCK: opening a FIFO must not wait for a writer; fstat decides on what was opened
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ModelError(f"cannot read model file {p}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ModelError(f"{p} is {file_kind(st.st_mode)}, not a model file", "pass a .tflite file")
        if st.st_size > MAX_MODEL_BYTES:
            raise ModelError(f"{p} is {st.st_size:,} bytes, more than the {MAX_MODEL_BYTES:,} a TFLite "
                             f"flatbuffer can hold", "pass a .tflite model")
        try:
            data = f.read(MAX_MODEL_BYTES + 1)
        except OSError as exc:      # e.g. /proc/self/mem: a regular file that cannot be read
            raise ModelError(f"cannot read model file {p}: {exc.strerror or exc}", "pass a .tflite file") from None
    if len(data) > MAX_MODEL_BYTES:  # grew while it was read
        raise ModelError(f"{p} is more than {MAX_MODEL_BYTES:,} bytes", "pass a .tflite model")
    return parse_model(data, str(p))


def parse_model(data: bytes, path: str = "<bytes>") -> ModelFile:
    name = Path(path).stem
    if len(data) < 8 or data[4:8] != b"TFL3":
        ident = data[4:8] if len(data) >= 8 else b""
        what = "an empty file" if not data else f"file identifier {ident!r}, expected b'TFL3', {len(data)} bytes"
        if data and Path(path).suffix.lower() == ".onnx":
            raise ModelError(f"{path} is an ONNX model; this command runs TFLite models",
                             f"convert it first: edgebench quantize {path} --calib DATA (docs/models.md)")
        raise ModelError(f"{path} is not a TFLite model ({what})",
                         "pass a .tflite flatbuffer; a truncated download or a Keras/ONNX file gives this error")
    if len(data) > MAX_MODEL_BYTES:
        raise ModelError(f"{path} is {len(data):,} bytes, more than a TFLite flatbuffer can hold")
    problem = verify_flatbuffer(data)
    if problem:
        raise ModelError(f"{path} is not a valid TFLite model: {problem}", _HINT_BAD)
    try:
        from ai_edge_litert import schema_py_generated as s  # optional dependency: its absence is handled here

        m = s.ModelT.InitFromPackedBuf(bytearray(data), 0)
    except Exception as exc:  # corrupt flatbuffer the structural check let through
        raise ModelError(f"{path} is not a valid TFLite model: {type(exc).__name__}: {exc}", _HINT_BAD) from None
    problem = _check_model(m, len(data))
    if problem:
        raise ModelError(f"{path} is not a valid TFLite model: {problem}", _HINT_BAD)
    sg = m.subgraphs[0]
    names = op_names()
    ops: dict = {}
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
        buf = m.buffers[t.buffer] if t.buffer < len(m.buffers or []) else None
        nbytes = len(buf.data) if buf is not None and buf.data is not None else 0
        if buf is not None and buf.size:  # buffers stored outside the flatbuffer (>2 GB models)
            nbytes = int(buf.size)
        if nbytes:
            weight_bytes[tname] = weight_bytes.get(tname, 0) + nbytes
        else:
            act_count[tname] = act_count.get(tname, 0) + 1
    wd = max(weight_bytes, key=lambda k: weight_bytes[k]) if weight_bytes else "none"
    ad = max(act_count, key=lambda k: act_count[k]) if act_count else "none"
    bits = {v[0]: v[1] for v in TENSOR_TYPES.values()}
    inputs = [tinfo(i) for i in sg.inputs]
    outputs = [tinfo(i) for i in sg.outputs]
    return ModelFile(
        path=path, name=name, sha256=hashlib.sha256(data).hexdigest(), bytes=len(data),
        operators=ops, inputs=inputs, outputs=outputs,
        weights_dtype=wd, weights_bits=bits.get(wd, 0),
        activations_dtype=ad, activations_bits=bits.get(ad, 0),
        precision=_precision(wd, ad),
        content=bytes(data),
    )


# ---------------------------------------------------------------- structural verification
# The parts of the TFLite schema (tensorflow/compiler/mlir/lite/schema/schema.fbs) that are
# followed: table -> {field index: kind}; kinds: "str", ("vec", element bytes), ("tables",
# table name), ("table", table name), "any" (a union member: any well-formed table).
_SCHEMA: dict[str, dict[int, Any]] = {
    "Model": {1: ("tables", "OperatorCode"), 2: ("tables", "SubGraph"), 3: "str", 4: ("tables", "Buffer"),
              5: ("vec", 4), 6: ("tables", "Metadata"), 7: ("tables", "SignatureDef")},
    "OperatorCode": {1: "str"},
    "SubGraph": {0: ("tables", "Tensor"), 1: ("vec", 4), 2: ("vec", 4), 3: ("tables", "Operator"), 4: "str"},
    "Tensor": {0: ("vec", 4), 3: "str", 4: ("table", "Quantization"), 6: ("table", "Sparsity"), 7: ("vec", 4),
               9: ("tables", "VariantSubType")},
    "Quantization": {0: ("vec", 4), 1: ("vec", 4), 2: ("vec", 4), 3: ("vec", 8), 5: "any"},
    "Sparsity": {0: ("vec", 4), 1: ("vec", 4), 2: ("tables", "DimensionMetadata")},
    "DimensionMetadata": {3: "any", 5: "any"},
    "VariantSubType": {0: ("vec", 4)},
    "Operator": {1: ("vec", 4), 2: ("vec", 4), 4: "any", 5: ("vec", 1), 7: ("vec", 1), 8: ("vec", 4), 12: "any"},
    "Buffer": {0: ("vec", 1)},
    "Metadata": {0: "str"},
    "SignatureDef": {0: ("tables", "TensorMap"), 1: ("tables", "TensorMap"), 2: "str"},
    "TensorMap": {0: "str"},
    "any": {},
}


class _Bad(Exception):
    pass


class _Verifier:
    def __init__(self, data: bytes):
        self.d = memoryview(data)
        self.n = len(data)
        self.seen: set = set()

    def u32(self, pos: int, what: str) -> int:
        if pos < 0 or pos + 4 > self.n:
            raise _Bad(f"{what} at byte {pos} lies outside the {self.n}-byte file")
        return int.from_bytes(self.d[pos:pos + 4], "little")

    def u16(self, pos: int, what: str) -> int:
        if pos < 0 or pos + 2 > self.n:
            raise _Bad(f"{what} at byte {pos} lies outside the {self.n}-byte file")
        return int.from_bytes(self.d[pos:pos + 2], "little")

    def ref(self, pos: int, what: str) -> int:
        target = pos + self.u32(pos, f"offset to {what}")
        if target + 4 > self.n:
            raise _Bad(f"{what} points to byte {target}, outside the {self.n}-byte file")
        return target

    def table(self, pos: int, kind: str, what: str) -> None:
        if (pos, kind) in self.seen:
            return
        self.seen.add((pos, kind))
        soff = int.from_bytes(self.d[pos:pos + 4], "little", signed=True) if pos + 4 <= self.n else None
        if soff is None:
            raise _Bad(f"{what} at byte {pos} lies outside the {self.n}-byte file")
        vt = pos - soff
        vsize, tsize = self.u16(vt, f"vtable of {what}"), self.u16(vt + 2, f"vtable of {what}")
        if vsize < 4 or vsize % 2 or vt + vsize > self.n:
            raise _Bad(f"{what}: damaged vtable ({vsize} bytes at byte {vt})")
        if tsize < 4 or pos + tsize > self.n:
            raise _Bad(f"{what}: table of {tsize} bytes at byte {pos} runs past the end of the file")
        for index, spec in _SCHEMA[kind].items():
            if 4 + 2 * index >= vsize:
                continue
            off = self.u16(vt + 4 + 2 * index, f"vtable of {what}")
            if off == 0:
                continue
            if off + 4 > tsize:
                raise _Bad(f"{what}: field {index} lies outside its table")
            self.field(pos + off, spec, f"{what}.{_FIELD_NAMES.get((kind, index), index)}")

    def field(self, pos: int, spec, what: str) -> None:
        if spec == "any":
            self.table(self.ref(pos, what), "any", what)
            return
        if spec == "str":
            start, count = self.vector(pos, 1, what)
            if start + count >= self.n or self.d[start + count] != 0:
                raise _Bad(f"{what}: string without its terminating zero")
            return
        kind, arg = spec
        if kind == "table":
            self.table(self.ref(pos, what), arg, what)
        elif kind == "vec":
            self.vector(pos, arg, what)
        else:  # a vector of tables
            start, count = self.vector(pos, 4, what)
            for i in range(count):
                self.table(self.ref(start + 4 * i, f"{what}[{i}]"), arg, f"{what}[{i}]")

    def vector(self, pos: int, size: int, what: str) -> tuple[int, int]:
        vpos = self.ref(pos, what)
        count = self.u32(vpos, f"length of {what}")
        if vpos + 4 + count * size > self.n:
            raise _Bad(f"{what} claims {count:,} elements, more than the file holds")
        return vpos + 4, count


_FIELD_NAMES = {("Model", 1): "operator_codes", ("Model", 2): "subgraphs", ("Model", 4): "buffers",
                ("Model", 7): "signature_defs", ("SubGraph", 0): "tensors", ("SubGraph", 1): "inputs",
                ("SubGraph", 2): "outputs", ("SubGraph", 3): "operators", ("Tensor", 0): "shape",
                ("Tensor", 3): "name", ("Tensor", 4): "quantization", ("Operator", 1): "inputs",
                ("Operator", 2): "outputs", ("Operator", 4): "builtin_options", ("Buffer", 0): "data"}


def verify_flatbuffer(data: bytes) -> str | None:
    """What is structurally wrong with ``data`` as a TFLite flatbuffer, or None.

    Checks the "TFL3" identifier, that the root table and every table, vector and
    string the model reader follows lie inside the file with well-formed vtables,
    and that the model has at least one subgraph. Cheap: each table is visited once.
    """
    if len(data) < 8:
        return f"{len(data)} bytes, too short for a flatbuffer"
    if bytes(data[4:8]) != b"TFL3":
        return f"file identifier {bytes(data[4:8])!r}, expected b'TFL3'"
    v = _Verifier(data)
    try:
        root = v.u32(0, "root table offset")
        if root < 8 or root + 4 > len(data):
            return f"root table offset {root} lies outside the {len(data)}-byte file"
        v.table(root, "Model", "model")
        soff = int.from_bytes(data[root:root + 4], "little", signed=True)
        vt = root - soff
        vsize = v.u16(vt, "vtable of model")
        sub = v.u16(vt + 4 + 2 * 2, "vtable of model") if 4 + 2 * 2 < vsize else 0
        if sub == 0 or v.u32(v.ref(root + sub, "subgraphs"), "length of subgraphs") == 0:
            return "it has no subgraphs"
    except _Bad as exc:
        return str(exc)
    return None


def _check_model(m, nbytes: int) -> str | None:
    """Indices that must point inside the model (first subgraph, operator codes, buffers)."""
    if m.version != 3:
        return f"schema version {m.version}, TFLite runtimes read version 3"
    if not m.subgraphs:
        return "it has no subgraphs"
    sg = m.subgraphs[0]
    ntensors = len(sg.tensors or [])
    ncodes = len(m.operatorCodes or [])
    nbuffers = len(m.buffers or [])
    if not ntensors:
        return "its first subgraph has no tensors"
    for role, idx in (("input", sg.inputs), ("output", sg.outputs)):
        if idx is None or len(idx) == 0:
            return f"its first subgraph has no {role}s"
        bad = [int(i) for i in idx if not 0 <= int(i) < ntensors]
        if bad:
            return f"{role} tensor index {bad[0]} is outside the {ntensors} tensors"
        for i in idx:
            shape = [int(d) for d in (sg.tensors[int(i)].shape if sg.tensors[int(i)].shape is not None else [])]
            if 0 in shape:
                return f"{role} tensor {int(i)} has a zero-size dimension in its shape {shape}: it holds no data"
    for k, t in enumerate(sg.tensors):
        if not 0 <= int(t.buffer) < max(nbuffers, 1):
            return f"tensor {k} uses buffer {t.buffer}, but the model has {nbuffers} buffers"
        if t.shape is not None and any(int(d) < 0 for d in t.shape):
            return f"tensor {k} has a negative dimension in its shape {[int(d) for d in t.shape]}"
    problem = _check_tensors(m, sg)
    if problem:
        return problem
    known = op_names()
    for k, code in enumerate(m.operatorCodes or []):
        b = builtin_code(code)
        if b == CUSTOM:
            if not code.customCode:
                return f"operator code {k} is a custom operator without a name"
        elif b not in known:
            return f"operator code {k} names builtin operator {b}, which this TFLite schema does not know"
    for k, b in enumerate(m.buffers or []):
        if b.offset and b.offset > 1 and b.offset + b.size > nbytes:
            return f"buffer {k} lies outside the file (offset {b.offset}, {b.size} bytes)"
    for k, op in enumerate(sg.operators or []):
        if not 0 <= int(op.opcodeIndex) < ncodes:
            return f"operator {k} uses operator code {op.opcodeIndex}, but the model has {ncodes}"
        for role, idx in (("input", op.inputs), ("output", op.outputs)):
            bad = [int(i) for i in (idx if idx is not None else []) if not -1 <= int(i) < ntensors]
            if bad:
                return f"operator {k} {role} tensor index {bad[0]} is outside the {ntensors} tensors"
    return None


def _check_tensors(m, sg) -> str | None:
    """Names, quantization parameters and constant data sizes the runtimes rely on."""
    # lazy: numpy (import numpy 460 ms measured), kept off `edgebench VERB --help`
    import numpy as np

    buffers = m.buffers or []
    for sd in m.signatureDefs or []:
        for text in [sd.signatureKey] + [tm.name for tm in (sd.inputs or []) + (sd.outputs or [])]:
            try:
                bytes(text or b"").decode("utf-8")
            except UnicodeDecodeError:
                return "a signature name is not UTF-8"
    for k, t in enumerate(sg.tensors):
        if isinstance(t.name, (bytes, bytearray)):
            try:
                bytes(t.name).decode("utf-8")
            except UnicodeDecodeError:
                return f"tensor {k} has a name that is not UTF-8"
        shape = [int(d) for d in (t.shape if t.shape is not None else [])]
        buf = buffers[t.buffer] if 0 <= t.buffer < len(buffers) else None
        nbytes = len(buf.data) if buf is not None and buf.data is not None else 0
        q = t.quantization
        scale = np.asarray(q.scale if q is not None and q.scale is not None else [], np.float64)
        if scale.size:
            zp = q.zeroPoint if q.zeroPoint is not None else []
            if len(zp) and len(zp) != scale.size:
                return f"tensor {k} has {scale.size} quantization scales but {len(zp)} zero points"
            lim = {"int8": (-128, 127), "uint8": (0, 255), "int16": (0, 0), "int4": (-8, 7)}.get(
                TENSOR_TYPES.get(t.type, ("unknown", 0))[0])
            bad = [int(z) for z in zp if not lim[0] <= int(z) <= lim[1]] if lim else []
            if bad and lim:
                return f"tensor {k} has zero point {bad[0]}, outside the {lim[0]}..{lim[1]} of its type"
            if not np.all(np.isfinite(scale)) or np.any(scale < 0) or (not nbytes and np.any(scale == 0)):
                return f"tensor {k} has an invalid quantization scale ({scale[:4].tolist()})"
            if scale.size > 1:
                qd = int(q.quantizedDimension or 0)
                if not 0 <= qd < len(shape) or shape[qd] != scale.size:
                    return (f"tensor {k} has {scale.size} per-axis scales on dimension {qd} of its shape "
                            f"{shape}")
        bits = TENSOR_TYPES.get(t.type, ("unknown", 0))[1]
        if nbytes and bits and bits % 8 == 0:
            need = int(np.prod(shape, dtype=np.int64)) * bits // 8 if shape else bits // 8
            if nbytes < need:
                return f"tensor {k} needs {need:,} bytes of constant data, its buffer holds {nbytes:,}"
    return None


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
