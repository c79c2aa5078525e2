"""Cut a .tflite model into single-operator models (level 2): the isolated-operator method of
``edgebench profile`` times each of them on the board, with the board's runtime and kernels.

:func:`cut_model` reads the model once (the flatbuffer schema that ships with ai-edge-litert,
object API) and :func:`cut_operator` writes, for operator ``k`` of the main subgraph, a model
that holds that operator alone:

* every tensor it reads or writes keeps its shape, type, name and quantization (scale, zero
  point, quantized axis), so the kernel chosen at load time is the one the whole model uses
  for that operator (same shapes, same quantization, same options);
* constant inputs (weights, biases, shape tensors) keep their bytes, copied into the cut
  model even when the original stores them past the end of the flatbuffer (large models);
* the first non-constant input becomes the cut model's only input (the agent's protocol
  drives single-input models); any further non-constant input (the second operand of an
  ADD, the other branches of a CONCATENATION) is stored as a constant holding the values it
  had inside the whole model (``values``, the raw tensor), or its zero point when none are
  given. The kernel reads it from memory all the same; what a runtime may do with a constant
  operand at load time (XNNPACK packs static tensors) is the difference, noted per operator;
* the operator's outputs are the cut model's outputs; an Edge TPU ``edgetpu-custom-op``
  keeps its custom options (the compiled program), so it runs with the Edge TPU delegate.

Operators that call other subgraphs (WHILE, IF, CALL_ONCE, the StableHLO control flow) and
operators with no non-constant input cannot be cut this way: :class:`CutOperator` says why
(``reason``) instead of a model.
"""
from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from edgebench.errors import ModelError
from edgebench.modelfile import TENSOR_TYPES, decode_name, op_names, operator_name, read_model

#: operators whose options name other subgraphs: not runnable alone
CONTROL_FLOW = frozenset({"WHILE", "IF", "CALL_ONCE", "CALL", "STABLEHLO_WHILE", "STABLEHLO_CASE",
                          "STABLEHLO_REDUCE", "STABLEHLO_SCATTER", "STABLEHLO_SORT", "STABLEHLO_COMPOSITE"})
_NP = {0: np.float32, 1: np.float16, 2: np.int32, 3: np.uint8, 4: np.int64, 6: np.bool_, 7: np.int16,
       9: np.int8, 10: np.float64, 12: np.uint64, 15: np.uint32, 16: np.uint16}


@dataclass(frozen=True)
class CutOperator:
    """Operator ``index`` of the main subgraph, alone in a model (``data``), or why it is not."""

    index: int
    op: str
    input_tensor: Optional[int]              # the original tensor fed as the cut model's input
    frozen_inputs: tuple = ()                # original tensors stored as constants (values or zero point)
    output_tensors: tuple = ()
    data: bytes = field(default=b"", repr=False)
    reason: Optional[str] = None             # set when no model could be made
    notes: tuple = ()

    @property
    def ok(self) -> bool:
        return self.reason is None

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest() if self.data else ""


class CutModel:
    """A parsed model, ready to be cut operator by operator."""

    def __init__(self, data: bytes, path: str = "<bytes>"):
        # lazy: flatbuffers, ai_edge_litert (optional; import flatbuffers 230 ms, ai_edge_litert 12 ms), loaded only where used
        from ai_edge_litert import schema_py_generated as s

        self.path, self.raw = path, bytes(data)
        try:
            self.m = s.ModelT.InitFromPackedBuf(bytearray(self.raw), 0)
            self.sg = self.m.subgraphs[0]
        except Exception as exc:       # a damaged flatbuffer raises whatever the reader hits
            raise ModelError(f"{path} cannot be read as a TFLite model ({type(exc).__name__}: {exc})",
                             "check the file (edgebench inspect MODEL)") from None
        self.names = op_names()
        self.codes = self.m.operatorCodes or []
        self.ops = self.sg.operators or []
        self.tensors = self.sg.tensors or []

    def __len__(self) -> int:
        return len(self.ops)

    def op_name(self, k: int) -> str:
        return operator_name(self.codes[self.ops[k].opcodeIndex], self.names)

    def constant(self, i: int) -> bool:
        return self._buffer_bytes(self.tensors[i].buffer) is not None

    def _buffer_bytes(self, b: int) -> Optional[bytes]:
        bufs = self.m.buffers or []
        if not 0 < b < len(bufs) or bufs[b] is None:
            return None
        buf = bufs[b]
        if buf.data is not None and len(buf.data):
            return bytes(np.asarray(buf.data, dtype=np.uint8))
        if (buf.offset or 0) > 1 and buf.size:          # stored after the flatbuffer
            return self.raw[int(buf.offset):int(buf.offset) + int(buf.size)]
        return None

    def constant_value(self, i: int) -> Optional[np.ndarray]:
        """A constant tensor's values (its stored type and shape); None for an activation."""
        raw = self._buffer_bytes(self.tensors[i].buffer)
        dtype = self.tensor_dtype(i)
        if raw is None or dtype is None:
            return None
        return np.frombuffer(raw, dtype=np.dtype(dtype).newbyteorder("<")).reshape(self.tensor_shape(i))

    def tensor_dtype(self, i: int):
        return _NP.get(self.tensors[i].type)

    def tensor_shape(self, i: int) -> tuple:
        t = self.tensors[i]
        return tuple(int(v) for v in (t.shape if t.shape is not None else []))

    def tensor_name(self, i: int) -> str:
        return decode_name(self.tensors[i].name)

    def cut(self, k: int, values: Optional[dict] = None) -> CutOperator:
        """Operator ``k`` alone; ``values`` maps original tensor indices to arrays (raw dtype) for
        the non-constant inputs past the first."""
        # lazy: flatbuffers, ai_edge_litert (optional; import flatbuffers 230 ms, ai_edge_litert 12 ms), loaded only where used
        from ai_edge_litert import schema_py_generated as s

        if not 0 <= k < len(self.ops):
            raise ModelError(f"{self.path} has {len(self.ops)} operators, no operator {k}")
        op = self.ops[k]
        name = self.op_name(k)
        ins = [int(v) for v in (op.inputs if op.inputs is not None else [])]
        outs = [int(v) for v in (op.outputs if op.outputs is not None else []) if v >= 0]
        if name in CONTROL_FLOW:
            return CutOperator(k, name, None, reason=f"{name} runs other subgraphs: it cannot be timed alone")
        live = [i for i in dict.fromkeys(ins) if i >= 0 and not self.constant(i) and not self.tensors[i].isVariable]
        if not live:
            return CutOperator(k, name, None, reason=f"{name} has no non-constant input to feed")
        first, rest = live[0], live[1:]
        notes = []
        keep = list(dict.fromkeys([i for i in ins if i >= 0] + outs
                                  + [int(v) for v in (op.intermediates if op.intermediates is not None else [])]))
        remap = {old: new for new, old in enumerate(keep)}
        buffers = [s.BufferT()]                 # buffer 0: the empty sentinel every model has
        tensors = []
        for old in keep:
            t = copy.copy(self.tensors[old])
            raw = self._buffer_bytes(t.buffer)
            if old in rest:
                raw = self._frozen_bytes(old, (values or {}).get(old))
                if (values or {}).get(old) is None:
                    notes.append(f"input '{self.tensor_name(old)}' held at its zero point (its values in "
                                 "the whole model were not available)")
            if raw is not None:
                b = s.BufferT()
                b.data = np.frombuffer(raw, dtype=np.uint8).copy()
                buffers.append(b)
                t.buffer = len(buffers) - 1
            else:
                t.buffer = 0
            tensors.append(t)
        if rest:
            notes.append(f"{len(rest)} further input(s) stored as constants: a runtime that prepares constant "
                         "operands at load time (XNNPACK packs static tensors) may run this operator differently "
                         "than inside the model")
        new_op = copy.copy(op)
        new_op.opcodeIndex = 0
        new_op.inputs = [remap[i] if i >= 0 else -1 for i in ins]
        new_op.outputs = [remap[i] for i in outs]
        if op.intermediates is not None:
            new_op.intermediates = [remap[int(i)] for i in op.intermediates]
        if op.largeCustomOptionsSize:             # custom options stored past the flatbuffer
            start = int(op.largeCustomOptionsOffset)
            new_op.customOptions = np.frombuffer(self.raw[start:start + int(op.largeCustomOptionsSize)],
                                                 dtype=np.uint8).copy()
            new_op.largeCustomOptionsOffset = new_op.largeCustomOptionsSize = 0
        new_op.debugMetadataIndex = -1
        sg = s.SubGraphT(tensors=tensors, inputs=[remap[first]], outputs=[remap[i] for i in outs],
                         operators=[new_op], name=f"op{k}")
        model = s.ModelT(version=self.m.version or 3, operatorCodes=[copy.copy(self.codes[op.opcodeIndex])],
                         subgraphs=[sg], description=f"edgebench: operator {k} ({name}) of {Path(self.path).name}",
                         buffers=buffers)
        return CutOperator(k, name, first, tuple(rest), tuple(outs), _pack(model), None, tuple(notes))

    def fixed_cost(self) -> bytes:
        """A model that does next to nothing the way the cut models do it: one RESHAPE of a one-element
        tensor of the model input's type and quantization. Timed like each cut, it measures what every
        invocation pays whatever its operator (the interpreter's invoke, input and output handling),
        which the whole model pays once and the sum of isolated operators once per operator."""
        # lazy: flatbuffers, ai_edge_litert (optional; import flatbuffers 230 ms, ai_edge_litert 12 ms), loaded only where used
        from ai_edge_litert import schema_py_generated as s

        src = int(self.sg.inputs[0]) if self.sg.inputs is not None and len(self.sg.inputs) else 0
        tensors = []
        for name in ("fixed_in", "fixed_out"):
            t = copy.copy(self.tensors[src])
            t.shape, t.shapeSignature, t.buffer, t.name = [1, 1], None, 0, name
            t.sparsity = None
            tensors.append(t)
        code = s.OperatorCodeT()
        code.builtinCode = code.deprecatedBuiltinCode = s.BuiltinOperator.RESHAPE
        code.version = 1
        opts = s.ReshapeOptionsT()
        opts.newShape = [1, 1]
        op = s.OperatorT()
        op.opcodeIndex, op.inputs, op.outputs = 0, [0], [1]
        op.builtinOptionsType, op.builtinOptions = s.BuiltinOptions.ReshapeOptions, opts
        sg = s.SubGraphT(tensors=tensors, inputs=[0], outputs=[1], operators=[op], name="fixed_cost")
        model = s.ModelT(version=self.m.version or 3, operatorCodes=[code], subgraphs=[sg],
                         description=f"edgebench: the per-invocation fixed cost of {Path(self.path).name}",
                         buffers=[s.BufferT()])
        return _pack(model)

    def _frozen_bytes(self, i: int, value) -> bytes:
        """The bytes of a further input stored as a constant: its values, or its zero point everywhere."""
        dtype = self.tensor_dtype(i)
        shape = self.tensor_shape(i)
        if dtype is None:
            raise ModelError(f"{self.path}: tensor {i} '{self.tensor_name(i)}' has type "
                             f"{TENSOR_TYPES.get(self.tensors[i].type, ('?',))[0]}, which cannot be held constant")
        if value is not None:
            arr = np.asarray(value)
            if int(np.prod(arr.shape)) != int(np.prod(shape)):
                raise ModelError(f"values for tensor '{self.tensor_name(i)}' have shape {list(arr.shape)}, "
                                 f"the tensor {list(shape)}")
            return np.ascontiguousarray(arr.reshape(shape)).astype(np.dtype(dtype).newbyteorder("<")).tobytes()
        q = self.tensors[i].quantization
        zp = int(q.zeroPoint[0]) if q is not None and q.zeroPoint is not None and len(q.zeroPoint) else 0
        return np.full(shape, zp, dtype=dtype).tobytes()


def _pack(model) -> bytes:
    # lazy: flatbuffers (optional; import flatbuffers 230 ms measured), loaded only where used
    import flatbuffers

    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def cut_model(path_or_bytes, path: Optional[str] = None) -> CutModel:
    """A :class:`CutModel` of a .tflite file (path: read and verified by
    :func:`edgebench.modelfile.read_model`) or of its bytes (a read model's ``content``)."""
    if isinstance(path_or_bytes, (bytes, bytearray)):
        return CutModel(bytes(path_or_bytes), path or "<bytes>")
    m = read_model(path_or_bytes)
    return CutModel(m.content, m.path)


__all__ = ["CutModel", "CutOperator", "cut_model", "CONTROL_FLOW"]
