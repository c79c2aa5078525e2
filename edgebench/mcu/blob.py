"""Convert a full-INT8 .tflite model into the microcontroller engine's blob (level 2).

:func:`convert` reads the model with the flatbuffer schema that ships with
ai-edge-litert (pure Python, nothing is run), lowers each operator
with its family's module (:mod:`edgebench.mcu.ops`, which also says which operators the
engine runs: the firmware's table ``firmware/core/eb_ops.def``), precomputes every
requantization multiplier and shift (:mod:`edgebench.mcu.blob_quant`), plans the tensor arena
(:mod:`edgebench.mcu.blob_plan`) and writes a compact, versioned blob that the
firmware's engine (firmware/core/eb_engine.c) executes in place. The format is
documented in firmware/BLOB.md; :func:`parse` reads it back.

Pure Python + numpy: no TensorFlow and no interpreter needed.
"""
from __future__ import annotations

import hashlib
import struct
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

import numpy as np

from edgebench.errors import ModelError
from edgebench.mcu import blob_plan
from edgebench.mcu.ops import (
    OP_NAMES,
    OPS,
    SUPPORTED_OPS,
    Tensor,
    UnsupportedError,
    bias_filter,
    block_filter,
    describe_unsupported,
    graph_operators,
    lower,
    unsupported_layers,
)
from edgebench.modelfile import ModelFile, decode_name, parse_model

FORMAT_VERSION = 3
MAGIC = b"EBNN"
HEADER_BYTES, TENSOR_BYTES, LAYER_BYTES = 64, 40, 96
NO_TENSOR = 0xFFFF
_DTYPES = {9: 1, 2: 2}           # TFLite TensorType -> blob dtype (int8 1, int32 2)
_CONST_DTYPES = {9: "<i1", 2: "<i4", 3: "<u1", 7: "<i2", 0: "<f4", 4: "<i8"}
_DAMAGED_HINT = "the model file is damaged or was written by a broken tool: export it again"
_QUANTIZE_HINT = ("convert it to full INT8 first: `edgebench quantize MODEL --calib DATA "
                  "-o MODEL_int8.tflite`")


@dataclass(frozen=True)
class Blob:
    """A converted model: the blob bytes and what the device will need."""

    data: bytes
    name: str
    source_sha256: str
    crc32: int
    peak_arena_bytes: int          # arena the engine needs (planned, incl. scratch)
    arena_lower_bound_bytes: int   # largest total live at one layer: no plan needs less
    constant_bytes: int            # weights, biases and requantization parameters
    macs: int
    input: dict
    output: dict
    layers: tuple

    @property
    def flash_bytes(self) -> int:
        """Size of the blob, i.e. the flash (or RAM) it occupies on the device."""
        return len(self.data)

    @property
    def version(self) -> int:
        return FORMAT_VERSION

    def save(self, path) -> Path:
        p = Path(path)
        p.write_bytes(self.data)
        return p

    def to_dict(self) -> dict:
        ops = Counter(layer["op"] for layer in self.layers)
        return {
            "format": "edgebench-mcu-blob", "format_version": FORMAT_VERSION,
            "name": self.name, "source_sha256": self.source_sha256,
            "blob_sha256": hashlib.sha256(self.data).hexdigest(), "crc32": f"{self.crc32:08x}",
            "flash_bytes": self.flash_bytes, "peak_arena_bytes": self.peak_arena_bytes,
            "arena_lower_bound_bytes": self.arena_lower_bound_bytes,
            "constant_bytes": self.constant_bytes, "macs": self.macs,
            "operators": dict(sorted(ops.items())), "input": dict(self.input),
            "output": dict(self.output), "layers": [dict(x) for x in self.layers],
        }


def convert(model: Union[ModelFile, bytes, bytearray, str, Path], name: Optional[str] = None) -> Blob:
    """Convert a full-INT8 .tflite model (a ModelFile as read_model gives it: not read or
    hashed again; bytes or a path) into a :class:`Blob`.

    Raises :class:`ModelError` for a file that is not a TFLite model, a model
    that is not full INT8 (float, FP16, dynamic range, uint8), and any
    operator or operator variant the engine does not run (naming it and the
    supported set).
    """
    if isinstance(model, ModelFile):
        data, path = model.content, model.path
    elif isinstance(model, (bytes, bytearray)):
        data, path = bytes(model), name or "<bytes>"
    else:
        p = Path(model)
        if not p.is_file():
            raise ModelError(f"model file {p} does not exist", "check the path")
        data, path = p.read_bytes(), str(p)
    info = model if isinstance(model, ModelFile) else parse_model(data, path)
    label = name or (Path(path).stem if path != "<bytes>" else "model")
    _check_precision(info, path)
    # lazy: flatbuffers, ai_edge_litert (optional; import flatbuffers 230 ms, ai_edge_litert 12 ms), loaded only where used
    from ai_edge_litert import schema_py_generated as s

    m = s.ModelT.InitFromPackedBuf(bytearray(data), 0)
    sg = m.subgraphs[0]
    tensors = [_tensor(m, sg, i, data, path) for i in range(len(sg.tensors or []))]
    _check_io(sg, tensors, path)
    layer_ops, outs = graph_operators(m, sg)
    unsupported = unsupported_layers(layer_ops, outs, SUPPORTED_OPS)
    if unsupported:
        listed = describe_unsupported(unsupported)
        raise ModelError(f"{path}: operator(s) not supported by the microcontroller engine: {listed}",
                         f"the engine runs {', '.join(SUPPORTED_OPS)}")
    if not layer_ops:
        raise ModelError(f"{path} has no operators", "nothing to run")
    layers = []
    for k, (op, opname) in enumerate(zip(sg.operators, layer_ops)):
        ins = [tensors[i] if i >= 0 else None for i in (op.inputs if op.inputs is not None else [])]
        outs = [tensors[i] if i >= 0 else None for i in (op.outputs if op.outputs is not None else [])]
        try:
            lowered = lower(opname, op.builtinOptions, ins, outs)      # SPLIT: one layer per output
            layers.extend(lowered if isinstance(lowered, list) else [lowered])
        except UnsupportedError as exc:
            raise ModelError(f"{path}: layer {k} ({opname}): {exc}",
                             "the microcontroller engine cannot run this model bit-exactly") from None
    return _build(data, label, tensors, layers, int(sg.inputs[0]), int(sg.outputs[0]), info.sha256)


def _check_precision(info, path: str) -> None:
    p = info.precision
    if p in ("fp32", "fp16"):
        raise ModelError(f"{path} is an {p.upper()} model; the microcontroller engine runs full-INT8 "
                         "models only", _QUANTIZE_HINT)
    if p == "dynamic-range":
        raise ModelError(f"{path} is dynamic-range quantized (INT8 weights, float activations); the "
                         "microcontroller engine runs full-INT8 models only", _QUANTIZE_HINT)
    if p == "uint8":
        raise ModelError(f"{path} is a uint8 (legacy asymmetric) quantized model; the engine runs "
                         "int8 models", "re-quantize it to int8: `edgebench quantize`")


def _check_io(sg, tensors: list, path: str) -> None:
    ins = list(sg.inputs if sg.inputs is not None else [])
    outs = list(sg.outputs if sg.outputs is not None else [])
    if len(ins) != 1 or len(outs) != 1:
        raise ModelError(f"{path} has {len(ins)} inputs and {len(outs)} outputs; the microcontroller "
                         "engine runs models with one input and one output", None)
    types = {9: "int8", 3: "uint8", 0: "float32", 2: "int32", 7: "int16", 1: "float16"}
    for what, i in (("input", ins[0]), ("output", outs[0])):
        t = tensors[i]
        if t.constant:
            raise ModelError(f"{path}: the model {what} '{t.name}' is a constant tensor", _DAMAGED_HINT)
        if t.type != 9:
            tname = types.get(t.type, f"type {t.type}")
            hint = (_QUANTIZE_HINT if t.type in (0, 1) else
                    "convert with int8 input and output (inference_input_type/inference_output_type "
                    "int8, as `edgebench quantize` does)")
            raise ModelError(f"{path}: the model {what} '{t.name}' is {tname}; the microcontroller "
                             "engine takes int8 input and output", hint)


def _tensor(m, sg, i: int, file_bytes: bytes, path: str) -> Tensor:
    t = sg.tensors[i]
    qp = t.quantization
    shape = tuple(int(v) for v in (t.shape if t.shape is not None else []))
    data = None
    buf = m.buffers[t.buffer] if 0 < t.buffer < len(m.buffers or []) else None
    raw = None
    if buf is not None:
        if buf.data is not None and len(buf.data):
            raw = bytes(np.asarray(buf.data, dtype=np.uint8))
        elif (buf.offset or 0) > 1 and buf.size:   # stored after the flatbuffer (large models)
            raw = file_bytes[int(buf.offset):int(buf.offset) + int(buf.size)]
    if raw is not None:
        dtype = _CONST_DTYPES.get(t.type)
        if dtype is not None:  # a runtime refuses constant data of the wrong size; so does this
            need = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
            if len(raw) != need:
                raise ModelError(f"{path}: constant tensor {i} '{decode_name(t.name)}' of shape "
                                 f"{list(shape)} needs {need:,} bytes, its buffer holds {len(raw):,}",
                                 _DAMAGED_HINT)
        data = np.frombuffer(raw, dtype=dtype or "<u1")
    return Tensor(
        index=i, name=decode_name(t.name), shape=shape, type=int(t.type),
        scale=tuple(float(v) for v in (qp.scale if qp is not None and qp.scale is not None else [])),
        zero_point=tuple(int(v) for v in (qp.zeroPoint if qp is not None and qp.zeroPoint is not None
                                          else [])),
        axis=int(qp.quantizedDimension) if qp is not None else 0, data=data)


def _build(source: bytes, name: str, tensors: list, layers: list, graph_in: int,
           graph_out: int, source_sha256: str) -> Blob:
    n = len(layers)
    # tensors the device needs, in first-use order
    order: list = [graph_in]
    for layer in layers:
        for i in layer.inputs + [layer.output]:
            if i not in order:
                order.append(i)
    if graph_out not in order:
        order.append(graph_out)
    index = {t: k for k, t in enumerate(order)}
    if len(order) >= NO_TENSOR or n > 0xFFFF:
        raise ModelError(f"{name}: {len(order)} tensors, {n} layers: too many for the blob format", None)
    for i in order:
        t = tensors[i]
        if t.type not in _DTYPES or len(t.shape) > 4 or len(t.shape) < 1:
            raise ModelError(f"{name}: tensor '{t.name}' ({t.shape}, type {t.type}) cannot be stored "
                             "(int8/int32, 1 to 4 dimensions)", None)
        if not t.constant and t.type != 9:
            raise ModelError(f"{name}: activation tensor '{t.name}' is not int8", None)
        if any(not 1 <= d < 2**31 for d in t.shape) or np.prod(t.shape, dtype=np.float64) >= 2**31:
            raise ModelError(f"{name}: tensor '{t.name}' has shape {list(t.shape)}: every dimension must be "
                             "at least 1 and the tensor smaller than 2 GiB", _DAMAGED_HINT)
    for k, layer in enumerate(layers):
        if tensors[layer.output].constant:
            raise ModelError(f"{name}: layer {k} ({layer.op}) writes the constant tensor "
                             f"'{tensors[layer.output].name}'", _DAMAGED_HINT)

    # lifetimes; RESHAPE output shares its input's bytes
    alias = {i: i for i in order}

    def root(i: int) -> int:
        while alias[i] != i:
            i = alias[i]
        return i

    for layer in layers:
        if layer.aliases_input and not tensors[layer.inputs[0]].constant:
            alias[root(layer.output)] = root(layer.inputs[0])
    span: dict = {}

    def touch(r: int, k: int) -> None:
        lo, hi = span.get(r, (k, k))
        span[r] = (min(lo, k), max(hi, k))

    for k, layer in enumerate(layers):          # operators are stored in execution order
        for i in layer.inputs + [layer.output]:
            if not tensors[i].constant:
                touch(root(i), k)
    touch(root(graph_in), 0)                     # written by the host before layer 0
    touch(root(graph_out), n - 1)                # read by the host after the last layer
    nbytes = {i: int(np.prod(tensors[i].shape)) * (4 if tensors[i].type == 2 else 1) for i in order}
    bufs = {r: blob_plan.Buffer(r, max(nbytes[i] for i in order if not tensors[i].constant
                                       and root(i) == r), lo, hi) for r, (lo, hi) in span.items()}
    scratch = {k: blob_plan.Buffer(("scratch", k), layer.scratch_bytes, k, k)
               for k, layer in enumerate(layers) if layer.scratch_bytes}
    all_bufs = list(bufs.values()) + list(scratch.values())
    arena = blob_plan.plan(all_bufs)
    lower_bound = blob_plan.live_lower_bound(all_bufs, n)

    # CONV_2D and FULLY_CONNECTED filters are stored in the engine's blocked order
    blocked = {layer.inputs[1] for layer in layers if layer.blocked_filter}
    biased = {layer.inputs[1] for layer in layers if layer.biased_filter}
    for layer in layers:
        uses = layer.inputs[:1] if layer.blocked_filter else layer.inputs
        if blocked & set(uses):
            raise ModelError(f"{name}: a convolution filter is also used as another operand "
                             f"(layer {layer.op})", None)
        if layer.blocked_filter and not layer.biased_filter and layer.inputs[1] in biased:
            raise ModelError(f"{name}: a filter stored biased (FULLY_CONNECTED, 1x1 CONV_2D) is also "
                             f"another convolution's (layer {layer.op})", None)

    # constant data: tensors, then per-layer channel arrays; 4-byte aligned
    tensors_off = HEADER_BYTES
    layers_off = tensors_off + len(order) * TENSOR_BYTES
    data_off = layers_off + n * LAYER_BYTES
    data = bytearray()
    const_off: dict = {}
    for i in order:
        if tensors[i].constant:
            const_off[i] = data_off + len(data)
            w = tensors[i].data.reshape(tensors[i].shape)
            w = bias_filter(w) if i in biased else w
            data += block_filter(w) if i in blocked else w.tobytes()   # little-endian already
            data += bytes(-len(data) % 4)
    chan_off: dict = {}
    for k, layer in enumerate(layers):
        if layer.chan is not None:
            chan_off[k] = data_off + len(data)
            data += layer.chan.astype("<i4").tobytes()
    total = data_off + len(data)

    out = bytearray(total)
    for k, i in enumerate(order):
        t = tensors[i]
        dims = (1,) * (4 - len(t.shape)) + tuple(t.shape)
        flags = (1 if t.constant else 0) | (2 if i == graph_in else 0) | (4 if i == graph_out else 0)
        off = const_off[i] if t.constant else bufs[root(i)].offset
        struct.pack_into("<BBBx4iIIfi4x", out, tensors_off + k * TENSOR_BYTES, _DTYPES[t.type],
                         len(t.shape), flags, *dims, off, nbytes[i],
                         t.scale[0] if len(t.scale) == 1 else 0.0,
                         t.zero_point[0] if len(t.zero_point) == 1 else 0)
    summary = []
    for k, layer in enumerate(layers):
        g = layer.geometry
        u16 = [*g.get("stride", (1, 1)), *g.get("dilation", (1, 1)), *g.get("pad", (0, 0)),
               *g.get("filter", (0, 0)), g.get("depth_mult", 1)]
        if any(not 0 <= v <= 0xFFFF for v in u16):
            raise ModelError(f"{name}: layer {k} ({layer.op}) geometry {g} does not fit the blob format",
                             None)
        all_ins = [index[i] for i in layer.inputs]
        ins = (all_ins + [NO_TENSOR] * 3)[:3]
        params = list(layer.params) + [0] * (10 - len(layer.params))
        if len(all_ins) > 3:        # CONCATENATION: the inputs past the third in p[1..9] (BLOB.md)
            params[1:len(all_ins) - 2] = all_ins[3:]
        chan_n = len(layer.chan) // 3 if layer.chan is not None else 0
        sc = scratch.get(k)
        struct.pack_into("<BBH3H2x9H2x2iIIII10i", out, layers_off + k * LAYER_BYTES,
                         OPS[layer.op], len(layer.inputs), index[layer.output], *ins, *u16,
                         *layer.act, chan_off.get(k, 0), chan_n,
                         sc.offset if sc else 0, sc.size if sc else 0, *params)
        entry = {"index": k, "op": layer.op, "output_tensor": int(layer.output),
                 "output_shape": list(tensors[layer.output].shape),
                 "macs": int(layer.macs), "scratch_bytes": int(layer.scratch_bytes)}
        if layer.blocked_filter:
            # output channels whose weights are all zero: their outputs are constants, which an
            # engine may write without computing (the DSP pointwise kernel does; docs/firmware-ports.md)
            rows = tensors[layer.inputs[1]].data.reshape(tensors[layer.inputs[1]].shape[0], -1)
            entry["zero_weight_channels"] = int((~rows.any(axis=1)).sum())
        summary.append(entry)
    out[data_off:] = data
    sha = bytes.fromhex(source_sha256)
    struct.pack_into("<4sHHII", out, 0, MAGIC, FORMAT_VERSION, HEADER_BYTES, total, 0)
    struct.pack_into("<HHIIIIIHHI16s", out, 16, len(order), n, tensors_off, layers_off, data_off,
                     len(data), arena, index[graph_in], index[graph_out], 0, sha[:16])
    crc = zlib.crc32(bytes(out[16:]))
    struct.pack_into("<I", out, 12, crc)

    def io(i: int) -> dict:
        t = tensors[i]
        return {"name": t.name, "shape": list(t.shape), "dtype": "int8", "bytes": nbytes[i],
                "scale": t.scale[0], "zero_point": t.zero_point[0]}

    return Blob(data=bytes(out), name=name, source_sha256=source_sha256,
                crc32=crc, peak_arena_bytes=arena, arena_lower_bound_bytes=lower_bound,
                constant_bytes=len(data), macs=sum(x.macs for x in layers),
                input=io(graph_in), output=io(graph_out), layers=tuple(summary))


def parse(data: bytes) -> dict:
    """Read a blob back: header, tensor table and layer table as dicts.

    Checks magic, version, length and CRC-32 first and raises ModelError with
    the reason, as the device would refuse the blob.
    """
    data = bytes(data)
    if len(data) < 4 or data[:4] != MAGIC:
        raise ModelError(f"not an edgebench model blob (magic {data[:4]!r}, expected {MAGIC!r})",
                         "convert the .tflite model with edgebench.mcu.convert")
    if len(data) < HEADER_BYTES:
        raise ModelError(f"blob truncated: {len(data)} bytes, shorter than its header", None)
    magic, version, header_bytes, total, crc = struct.unpack_from("<4sHHII", data, 0)
    if version != FORMAT_VERSION:
        raise ModelError(f"blob format version {version}; this edgebench reads version {FORMAT_VERSION}",
                         "re-convert the model with this edgebench")
    if total > len(data):
        raise ModelError(f"blob truncated: header says {total} bytes, got {len(data)}", None)
    if zlib.crc32(data[16:total]) != crc:
        raise ModelError("blob CRC-32 mismatch (corrupt or altered)", "re-convert the model")
    (n_t, n_l, t_off, l_off, d_off, d_bytes, arena, i_in, i_out, flags,
     sha) = struct.unpack_from("<HHIIIIIHHI16s", data, 16)
    header = {"magic": magic.decode(), "version": version, "header_bytes": header_bytes,
              "total_bytes": total, "crc32": crc, "n_tensors": n_t, "n_layers": n_l,
              "tensors_offset": t_off, "layers_offset": l_off, "data_offset": d_off,
              "data_bytes": d_bytes, "arena_bytes": arena, "input": i_in, "output": i_out,
              "flags": flags, "source_sha256_prefix": sha.hex()}
    tensors = []
    for k in range(n_t):
        dt, rank, fl, *rest = struct.unpack_from("<BBBx4iIIfi", data, t_off + k * TENSOR_BYTES)
        dims, off, nb, scale, zp = rest[:4], rest[4], rest[5], rest[6], rest[7]
        tensors.append({"dtype": {1: "int8", 2: "int32"}.get(dt, dt), "shape": list(dims[4 - rank:]),
                        "constant": bool(fl & 1), "offset": off, "bytes": nb, "scale": scale,
                        "zero_point": zp})
    layers = []
    for k in range(n_l):
        v = struct.unpack_from("<BBH3H2x9H2x2iIIII10i", data, l_off + k * LAYER_BYTES)
        layers.append({"op": OP_NAMES.get(v[0], v[0]), "inputs": [i for i in v[3:6] if i != NO_TENSOR],
                       "output": v[2], "stride": list(v[6:8]), "dilation": list(v[8:10]),
                       "pad": list(v[10:12]), "filter": list(v[12:14]), "depth_mult": v[14],
                       "act": list(v[15:17]), "chan_offset": v[17], "channels": v[18],
                       "scratch_offset": v[19], "scratch_bytes": v[20], "params": list(v[21:31])})
    return {"header": header, "tensors": tensors, "layers": layers}
