"""Describe what a .tflite model costs, without running it (level 2).

:func:`inspect_model` builds on :func:`edgebench.modelfile.read_model`
(identity, precision, operator counts) and adds, for the main subgraph:

* every tensor: name, shape, dtype, bytes, whether it is constant, and its
  quantization (scale, zero point, quantized axis and channel count);
* parameters: elements and bytes of the constant tensors (weights, biases and
  small constants such as a RESHAPE's target shape), each buffer counted once;
* MACs per inference from the shapes of CONV_2D, DEPTHWISE_CONV_2D,
  FULLY_CONNECTED, TRANSPOSE_CONV, CONV_3D and BATCH_MATMUL, per layer and in
  total. Operators that do no multiply-accumulate (reshapes, pooling,
  activations, element-wise arithmetic...) count 0 and say so; any other
  operator is listed under ``macs_not_counted`` instead of a silent 0;
* a peak activation memory *estimate*: walk the operators in their stored
  (execution) order; a tensor is live from the operator that produces it
  (graph inputs and variable tensors from the start) to its last consumer
  (graph outputs and variable tensors to the end); the peak is the largest sum
  of live non-constant tensor bytes over the steps. It assumes no in-place
  reuse (an operator's inputs and outputs are live together) and exact packing
  (no alignment, no fragmentation), so it is not TFLite Micro's arena planner
  and not the interpreter's allocator: treat it as an estimate of the order of
  the arena an operator-at-a-time runtime needs, not a guarantee.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import prod
from pathlib import Path
from typing import Optional

from edgebench.errors import ModelError
from edgebench.modelfile import (
    CUSTOM,
    TENSOR_TYPES,
    ModelFile,
    builtin_code,
    decode_name,
    op_names,
    operator_name,
    read_model,
)

MEMORY_METHOD = ("estimated: greedy liveness over the stored operator order, tensors live from "
                 "producer to last consumer, no reuse within an operator, no alignment; "
                 "not TFLite Micro's memory planner")

# Operators that do no multiply-accumulate with weights: they cost time, but not MACs.
_NO_MACS = frozenset("""
ABS ADD ADD_N ARG_MAX ARG_MIN AVERAGE_POOL_2D BATCH_TO_SPACE_ND BROADCAST_ARGS BROADCAST_TO CAST
CEIL CONCATENATION COS CUMSUM DEPTH_TO_SPACE DEQUANTIZE DIV ELU EQUAL EXP EXPAND_DIMS FILL FLOOR
FLOOR_DIV FLOOR_MOD GATHER GATHER_ND GELU GREATER GREATER_EQUAL HARD_SWISH L2_NORMALIZATION
L2_POOL_2D LEAKY_RELU LESS LESS_EQUAL LOCAL_RESPONSE_NORMALIZATION LOG LOGICAL_AND LOGICAL_NOT
LOGICAL_OR LOGISTIC LOG_SOFTMAX MAXIMUM MAX_POOL_2D MEAN MINIMUM MIRROR_PAD MUL NEG NOT_EQUAL
ONE_HOT PACK PAD PADV2 POW PRELU QUANTIZE RANGE RANK REDUCE_ANY REDUCE_MAX REDUCE_MIN REDUCE_PROD
RELU RELU6 RELU_0_TO_1 RELU_N1_TO_1 RESHAPE RESIZE_BILINEAR RESIZE_NEAREST_NEIGHBOR REVERSE_V2
ROUND RSQRT SELECT SELECT_V2 SHAPE SIGN SIN SLICE SOFTMAX SPACE_TO_BATCH_ND SPACE_TO_DEPTH SPLIT
SPLIT_V SQRT SQUARE SQUARED_DIFFERENCE SQUEEZE STRIDED_SLICE SUB SUM TANH TILE TRANSPOSE UNPACK
WHERE ZEROS_LIKE
""".split())


@dataclass(frozen=True)
class TensorReport:
    index: int
    name: str
    shape: tuple
    dtype: str
    bytes: int
    constant: bool
    variable: bool = False
    scale: tuple = ()
    zero_point: tuple = ()
    quantized_dimension: Optional[int] = None
    shape_signature: Optional[tuple] = None   # only when it differs from shape (dynamic dims)

    @property
    def per_channel(self) -> bool:
        return len(self.scale) > 1

    def quant_dict(self) -> Optional[dict]:
        if not self.scale:
            return None
        one = len(self.scale) == 1
        return {"scale": self.scale[0] if one else list(self.scale),
                "zero_point": (self.zero_point[0] if len(self.zero_point) == 1 else list(self.zero_point)),
                "channels": len(self.scale),
                "quantized_dimension": None if one else self.quantized_dimension}

    def to_dict(self) -> dict:
        d = {"index": self.index, "name": self.name, "shape": list(self.shape), "dtype": self.dtype,
             "bytes": self.bytes, "constant": self.constant, "variable": self.variable,
             "quant": self.quant_dict()}
        if self.shape_signature is not None:
            d["shape_signature"] = list(self.shape_signature)
        return d


@dataclass(frozen=True)
class LayerReport:
    index: int
    op: str
    inputs: tuple                # tensor indices (-1: optional input left out)
    outputs: tuple
    output_shapes: tuple
    macs: Optional[int]          # None: not counted (see note)
    params: int                  # elements of this operator's constant inputs
    param_bytes: int
    live_bytes: int              # activation bytes live while this operator runs
    note: str = ""

    def to_dict(self) -> dict:
        return {"index": self.index, "op": self.op, "inputs": list(self.inputs),
                "outputs": list(self.outputs), "output_shapes": [list(s) for s in self.output_shapes],
                "macs": self.macs, "params": self.params, "param_bytes": self.param_bytes,
                "live_bytes": self.live_bytes, "note": self.note}


@dataclass(frozen=True)
class ModelReport:
    model: ModelFile
    tensors: tuple
    layers: tuple
    params: int
    param_bytes: int
    macs: int                          # sum over the layers whose MACs are counted
    macs_not_counted: tuple            # LayerReport of operators without a MAC count
    peak_activation_bytes: int
    peak_op_index: Optional[int]
    peak_tensors: tuple                # names of the tensors live at the peak
    activation_bytes_no_reuse: int     # every non-constant tensor at once
    input_indices: tuple = ()
    output_indices: tuple = ()
    subgraphs: int = 1
    notes: tuple = field(default_factory=tuple)

    @property
    def operators(self) -> dict:
        return dict(self.model.operators)

    @property
    def inputs(self) -> list:
        return [self.tensors[i] for i in self.input_indices]

    @property
    def outputs(self) -> list:
        return [self.tensors[i] for i in self.output_indices]

    def to_dict(self) -> dict:
        return {
            "model": self.model.to_dict(),
            "operators": self.operators,
            "inputs": [t.to_dict() for t in self.inputs],
            "outputs": [t.to_dict() for t in self.outputs],
            "subgraphs": self.subgraphs,
            "params": self.params,
            "param_bytes": self.param_bytes,
            "macs": self.macs,
            "macs_complete": not self.macs_not_counted,
            "macs_not_counted": [{"index": layer.index, "op": layer.op, "reason": layer.note}
                                 for layer in self.macs_not_counted],
            "peak_activation_bytes": self.peak_activation_bytes,
            "peak_op_index": self.peak_op_index,
            "peak_tensors": list(self.peak_tensors),
            "activation_bytes_no_reuse": self.activation_bytes_no_reuse,
            "kinds": {"macs": "computed (static count from shapes)", "params": "computed",
                      "peak_activation_bytes": MEMORY_METHOD},
            "layers": [layer.to_dict() for layer in self.layers],
            "tensors": [t.to_dict() for t in self.tensors],
            "notes": list(self.notes),
        }


def inspect_model(path) -> ModelReport:
    """Parse ``path`` and describe its cost; ModelError with one clear line if it is not a model."""
    info = read_model(path)          # identity, precision, operators; clear errors on bad files
    # lazy: numpy, flatbuffers, ai_edge_litert (optional; import numpy 460 ms, flatbuffers 230 ms, ai_edge_litert 12 ms), loaded only where used
    from ai_edge_litert import schema_py_generated as s

    m = s.ModelT.InitFromPackedBuf(bytearray(Path(path).read_bytes()), 0)
    try:
        return _report(info, m)
    except (IndexError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ModelError(f"{path} is an inconsistent TFLite model ({type(exc).__name__}: {exc})",
                         "re-export the model") from None


_BITS = {name: bits for name, bits in TENSOR_TYPES.values()}


def _tensor_bytes(shape, dtype: str) -> int:
    return (prod(shape) * _BITS.get(dtype, 0) + 7) // 8


def _report(info: ModelFile, m) -> ModelReport:
    sg = m.subgraphs[0]
    notes = []
    if len(m.subgraphs) > 1:
        notes.append(f"model has {len(m.subgraphs)} subgraphs: only the main one is analysed "
                     "(control-flow bodies are not in the totals)")
    buffers = m.buffers or []

    def buffer_bytes(i: int) -> int:
        buf = buffers[i] if 0 <= i < len(buffers) else None
        if buf is None:
            return 0
        if buf.size:  # stored outside the flatbuffer
            return int(buf.size)
        return len(buf.data) if buf.data is not None else 0

    tensors = []
    for i, t in enumerate(sg.tensors or []):
        dtype = TENSOR_TYPES.get(t.type, ("unknown", 0))[0]
        shape = tuple(int(v) for v in (t.shape if t.shape is not None else []))
        sig = tuple(int(v) for v in t.shapeSignature) if t.shapeSignature is not None else None
        q = t.quantization
        scale = tuple(float(v) for v in (q.scale if q is not None and q.scale is not None else []))
        zp = tuple(int(v) for v in (q.zeroPoint if q is not None and q.zeroPoint is not None else []))
        const_bytes = buffer_bytes(t.buffer)
        tensors.append(TensorReport(
            index=i, name=decode_name(t.name), shape=shape, dtype=dtype,
            bytes=const_bytes or _tensor_bytes(shape, dtype), constant=const_bytes > 0,
            variable=bool(t.isVariable), scale=scale, zero_point=zp,
            quantized_dimension=int(q.quantizedDimension) if q is not None and scale else None,
            shape_signature=sig if sig is not None and sig != shape else None))
    dynamic = [t for t in tensors if t.shape_signature is not None and -1 in t.shape_signature]
    if dynamic and all(-1 not in (t.shape_signature or ())[1:] for t in dynamic):
        notes.append("the batch dimension is dynamic (-1 in the shape signature): figures are for "
                     "the stored batch size " + str(dynamic[0].shape[0] if dynamic[0].shape else 1))
    elif dynamic:
        notes.append(f"{len(dynamic)} tensor(s) have dynamic dimensions (-1 in the shape signature, "
                     f"e.g. {dynamic[0].name}): sizes and MACs use the stored shape")
    unsized = sorted({t.dtype for t in tensors if not t.constant and t.dtype in ("string", "resource", "variant")})
    if unsized:
        notes.append(f"tensors of type {', '.join(unsized)} have no static size: counted as 0 bytes")

    # parameters: constant tensors, each buffer once
    seen, params, param_bytes = set(), 0, 0
    for t, raw in zip(tensors, sg.tensors or []):
        if t.constant and raw.buffer not in seen:
            seen.add(raw.buffer)
            params += prod(t.shape)
            param_bytes += t.bytes

    names = op_names()
    codes = m.operatorCodes or []
    ops = sg.operators or []
    n = len(ops)
    start, end = _liveness(sg, tensors, ops)
    live_at = []
    for step in range(n):
        live_at.append(sum(t.bytes for t in tensors if not t.constant and t.index in start
                           and start[t.index] <= step <= end[t.index]))

    layers = []
    for k, op in enumerate(ops):
        name = operator_name(codes[op.opcodeIndex], names)
        custom = builtin_code(codes[op.opcodeIndex]) == CUSTOM
        ins = tuple(int(v) for v in (op.inputs if op.inputs is not None else []))
        outs = tuple(int(v) for v in (op.outputs if op.outputs is not None else []))
        consts = {i for i in ins if i >= 0 and tensors[i].constant}
        macs, note = _macs(name, custom, ins, outs, tensors, op.builtinOptions)
        layers.append(LayerReport(
            index=k, op=name, inputs=ins, outputs=outs,
            output_shapes=tuple(tensors[i].shape for i in outs if i >= 0),
            macs=macs, params=sum(prod(tensors[i].shape) for i in consts),
            param_bytes=sum(tensors[i].bytes for i in consts), live_bytes=live_at[k], note=note))

    activations = [t for t in tensors if not t.constant]
    if n:
        peak_step = max(range(n), key=lambda s_: live_at[s_])
        peak = live_at[peak_step]
        peak_names = tuple(t.name for t in activations if t.index in start
                           and start[t.index] <= peak_step <= end[t.index])
    else:
        peak_step, peak_names = None, ()
        peak = sum(t.bytes for t in activations if t.index in start)
    return ModelReport(
        model=info, tensors=tuple(tensors), layers=tuple(layers), params=params,
        param_bytes=param_bytes, macs=sum(layer.macs for layer in layers if layer.macs),
        macs_not_counted=tuple(layer for layer in layers if layer.macs is None),
        peak_activation_bytes=peak, peak_op_index=peak_step, peak_tensors=peak_names,
        activation_bytes_no_reuse=sum(t.bytes for t in activations),
        input_indices=tuple(int(v) for v in (sg.inputs if sg.inputs is not None else [])),
        output_indices=tuple(int(v) for v in (sg.outputs if sg.outputs is not None else [])),
        subgraphs=len(m.subgraphs), notes=tuple(notes))


def _liveness(sg, tensors, ops) -> tuple:
    """First and last operator index at which each non-constant tensor is live."""
    last_step = max(len(ops) - 1, 0)
    start: dict[int, int] = {}
    end: dict[int, int] = {}
    for i in (int(v) for v in (sg.inputs if sg.inputs is not None else [])):
        start[i] = 0
    for k, op in enumerate(ops):
        for i in (int(v) for v in (op.outputs if op.outputs is not None else [])):
            if i >= 0:
                start.setdefault(i, k)
        for i in (int(v) for v in (op.inputs if op.inputs is not None else [])):
            if i >= 0 and not tensors[i].constant:
                start.setdefault(i, 0)           # consumed but never produced: from the start
                end[i] = max(end.get(i, k), k)
    for i in (int(v) for v in (sg.outputs if sg.outputs is not None else [])):
        start.setdefault(i, 0)
        end[i] = last_step
    for t in tensors:
        if t.variable:
            start[t.index], end[t.index] = 0, last_step
    for i, s0 in start.items():
        end.setdefault(i, s0)                   # produced, never read: live during its producer
    return start, end


def _macs(op: str, custom: bool, ins, outs, tensors, opts) -> tuple:
    """(MACs, note) of one operator; (None, reason) when there is no formula for it."""
    if custom:
        return None, f"custom operator {op}: MACs not counted"
    if op in _NO_MACS:
        return 0, "no MACs"
    def shape(pos: int, seq) -> tuple:
        return tensors[seq[pos]].shape if len(seq) > pos and seq[pos] >= 0 else ()

    try:
        if op == "CONV_2D":            # out NHWC, filter [out_c, kh, kw, in_c / groups]
            o, f = shape(0, outs), shape(1, ins)
            return prod(o) * f[1] * f[2] * f[3], ""
        if op == "DEPTHWISE_CONV_2D":  # out NHWC, filter [1, kh, kw, out_c]
            o, f = shape(0, outs), shape(1, ins)
            return prod(o) * f[1] * f[2], ""
        if op == "FULLY_CONNECTED":    # weights [out, in]; batch = output elements / out
            o, w = shape(0, outs), shape(1, ins)
            return (prod(o) // w[0]) * w[0] * w[1], ""
        if op == "TRANSPOSE_CONV":     # inputs: output_shape, filter [out_c, kh, kw, in_c], input
            f, x = shape(1, ins), shape(2, ins)
            return prod(x) * f[0] * f[1] * f[2], ""
        if op == "CONV_3D":            # out NDHWC, filter [kd, kh, kw, in_c, out_c]
            o, f = shape(0, outs), shape(1, ins)
            return prod(o) * f[0] * f[1] * f[2] * f[3], ""
        if op == "BATCH_MATMUL":       # out [..., M, N], inner dim K from lhs
            o, a = shape(0, outs), shape(0, ins)
            k = a[-2] if getattr(opts, "adjX", False) else a[-1]
            return prod(o) * k, ""
    except (IndexError, ZeroDivisionError):
        return None, f"{op} with unexpected tensor shapes: MACs not counted"
    return None, f"no MAC formula for {op}: not counted"
