"""What every operator family's lowering shares (level 2): the tensor and layer records,
the refusal error, and the checks and parameter helpers of more than one family.

A family module (``edgebench/mcu/ops/<family>.py``) turns a TFLite operator into a
:class:`Layer`: the blob's operator, its tensors, window geometry, the fused activation as an
int8 clamp, the precomputed integer parameters (firmware/BLOB.md), and what the fit check
counts: MACs and scratch bytes. Anything the engine cannot run bit-exactly raises
:class:`UnsupportedError` with the reason; the converter names the layer.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from edgebench.mcu import blob_quant as q

TYPE_INT8, TYPE_INT32 = 9, 2


class UnsupportedError(Exception):
    """An operator, or a variant of one, that the engine does not run."""


@dataclass
class Tensor:
    """What the converter needs of one TFLite tensor."""
    index: int
    name: str
    shape: tuple
    type: int                        # TFLite TensorType
    scale: tuple = ()
    zero_point: tuple = ()
    axis: int = 0
    data: Optional[np.ndarray] = None   # constant contents (flat, typed), None for activations

    @property
    def constant(self) -> bool:
        return self.data is not None

    def qparams(self, what: str) -> tuple:
        """(scale, zero point) of a per-tensor quantized int8 tensor."""
        if self.type != TYPE_INT8:
            raise UnsupportedError(f"{what} tensor '{self.name}' is not int8")
        if len(self.scale) != 1 or len(self.zero_point) != 1:
            raise UnsupportedError(f"{what} tensor '{self.name}' is not per-tensor quantized")
        return float(self.scale[0]), int(self.zero_point[0])


@dataclass
class Layer:
    """One engine layer: a row of the blob's layer table (firmware/BLOB.md) and its costs."""
    op: str
    inputs: list                      # TFLite tensor indices the device reads (data, filter/2nd input)
    output: int
    geometry: dict = field(default_factory=dict)   # stride/dilation/pad/filter/depth_mult
    act: tuple = (q.INT8_MIN, q.INT8_MAX)
    params: list = field(default_factory=list)     # p[0..9]
    chan: Optional[np.ndarray] = None               # int32 per-channel arrays (or a table)
    scratch_bytes: int = 0            # arena scratch the kernel needs while the layer runs
    macs: int = 0
    blocked_filter: bool = False      # inputs[1] is stored in the blocked order (block_filter)
    biased_filter: bool = False       # ... with its even-position bytes biased (bias_filter)
    aliases_input: bool = False       # the output may share the input's bytes (a plain copy)


def block_filter(w: np.ndarray) -> bytes:
    """CONV_2D / FULLY_CONNECTED weights in the blob's blocked order (BLOB.md):
    rows (output channels) of ``depth`` weights in blocks of four rows; in a
    block, each group of four weights of row 0, 1, 2, 3, then the depth % 4
    last weights of each row; the rows % 4 last rows plain."""
    rows = w.shape[0]
    plain = np.ascontiguousarray(w, dtype=np.int8).reshape(rows, -1)
    depth = plain.shape[1]
    nb, k4 = rows // 4, depth // 4 * 4
    if nb == 0:
        return plain.tobytes()
    blocks = plain[:nb * 4].reshape(nb, 4, depth)
    main = blocks[:, :, :k4].reshape(nb, 4, k4 // 4, 4).transpose(0, 2, 1, 3).reshape(nb, -1)
    tail = blocks[:, :, k4:].reshape(nb, -1)
    return np.concatenate([np.concatenate([main, tail], axis=1).reshape(-1),
                           plain[nb * 4:].reshape(-1)]).tobytes()


def bias_filter(w: np.ndarray) -> np.ndarray:
    """FULLY_CONNECTED weights ``[units, depth]`` (blob format 2) and 1x1 CONV_2D filters
    ``[oc, 1, 1, ic]`` (format 3) with the weights at even depth positions stored biased,
    ``w ^ 0x80`` (= ``w + 128`` read as uint8), the odd ones as they are (firmware/BLOB.md);
    the layer's ``bias'`` carries ``128 * sum(odd w)``."""
    rows = np.array(w, dtype=np.int8).reshape(w.shape[0], -1)
    rows[:, 0::2] = (rows[:, 0::2].view(np.uint8) ^ 0x80).view(np.int8)
    return rows.reshape(w.shape)


def biased_filter_bias(w: np.ndarray, rows: int) -> np.ndarray:
    """What :func:`bias_filter` adds to each row's ``bias'``: ``128 * sum(odd-position w)``
    (int64, one per row of ``w`` read as ``rows`` rows of depth weights), which cancels the
    engine's ``-128 * x`` at the odd positions (firmware/BLOB.md, "Filter layouts")."""
    return 128 * np.asarray(w).reshape(rows, -1)[:, 1::2].astype(np.int64).sum(axis=1)


def fused_activation(opts, out_scale: float, out_zp: int) -> tuple:
    """The clamp range of an operator's fused activation (NONE, RELU, RELU_N1_TO_1, RELU6): the
    engine applies it after requantisation, as TFLite's reference kernels do."""
    a = int(getattr(opts, "fusedActivationFunction", 0) or 0)
    if a not in q.ACTIVATIONS:
        raise UnsupportedError(f"fused activation {a} (TANH/SIGN_BIT) is not supported; "
                               f"supported: {', '.join(q.ACTIVATIONS.values())}")
    return q.activation_range(a, out_scale, out_zp)


def window_padding(in_size: int, k: int, stride: int, dilation: int, padding: int, out_size: int) -> int:
    """TFLite ComputePaddingWithOffset: the padding before the first row/column."""
    if stride < 1 or dilation < 1 or k < 1:
        raise UnsupportedError(f"stride {stride}, dilation {dilation}, filter {k}")
    eff = (k - 1) * dilation + 1
    if padding == 0:      # SAME
        expect = (in_size + stride - 1) // stride
    elif padding == 1:    # VALID
        expect = (in_size + stride - eff) // stride
    else:
        raise UnsupportedError(f"padding type {padding}")
    if expect != out_size:
        raise UnsupportedError(f"output size {out_size} differs from {expect} "
                               f"(input {in_size}, filter {k}, stride {stride}, dilation {dilation})")
    total = (out_size - 1) * stride + eff - in_size
    return max(total, 0) // 2


def four(shape: tuple) -> tuple:
    """``shape`` right-aligned in four dimensions with leading 1s (the blob's convention)."""
    return (1,) * (4 - len(shape)) + tuple(shape)


def check_broadcast(a: Tensor, b: Tensor, y: Tensor) -> None:
    """Both inputs equal to the output, or 1, in each (right-aligned) dimension. A scalar
    (rank-0) operand, e.g. a Rescaling layer's constant, is stored as shape [1]: the same
    broadcast."""
    for t in (a, b):
        if t.shape == ():
            t.shape = (1,)
    if max(len(a.shape), len(b.shape), len(y.shape)) > 4:
        raise UnsupportedError("more than 4 dimensions")
    for t in (a, b):
        for d, o in zip(four(t.shape), four(y.shape)):
            if d not in (o, 1):
                raise UnsupportedError(f"input {t.shape} does not broadcast to output {y.shape}")


def weight_scales(t: Tensor, channels: int, axis: int, what: str) -> np.ndarray:
    """The per-channel scales of the constant, symmetric int8 weights ``t`` (``what``) along ``axis``."""
    if t.type != TYPE_INT8 or not t.constant:
        raise UnsupportedError(f"{what} '{t.name}' must be constant int8 (full-INT8 model)")
    if any(int(z) != 0 for z in t.zero_point):
        raise UnsupportedError(f"{what} '{t.name}' has a non-zero zero point (asymmetric weights)")
    n = len(t.scale)
    if n not in (1, channels) or (n > 1 and t.axis != axis):
        raise UnsupportedError(f"{what} '{t.name}' has {n} scales on axis {t.axis}, "
                               f"expected 1 or {channels} on axis {axis}")
    return np.asarray(t.scale, dtype=np.float64) if n > 1 else np.full(channels, float(t.scale[0]))


def const_bias(t: Optional[Tensor], channels: int) -> np.ndarray:
    """The constant int32 bias ``t`` as int64 (zeros when the operator has none)."""
    if t is None:
        return np.zeros(channels, np.int64)
    if t.type != TYPE_INT32 or t.data is None:
        raise UnsupportedError(f"bias '{t.name}' must be constant int32")
    if t.data.size != channels:
        raise UnsupportedError(f"bias '{t.name}' has {t.data.size} values for {channels} channels")
    return t.data.astype(np.int64)


def wrap32(v: np.ndarray) -> np.ndarray:
    """int32 wrap-around, as the device's int32 sums."""
    return ((np.asarray(v, np.int64) + 2**31) % 2**32) - 2**31


def conv_multipliers(in_scale: float, filter_scales: np.ndarray, out_scale: float) -> tuple:
    """(multipliers, shifts) of every channel of a convolution (TFLite's QuantizeMultiplier of
    in * filter / out, in double)."""
    ms = [q.conv_multiplier(in_scale, fs, out_scale) for fs in filter_scales]
    return [m for m, _ in ms], [s for _, s in ms]


def require_same_quant(a: Tensor, b: Tensor, what: str) -> None:
    """Refuse unless tensor ``b`` (``what``) has the input tensor ``a``'s scale and zero point."""
    sa, za = a.qparams("input")
    sb, zb = b.qparams(what)
    if (np.float32(sa), za) != (np.float32(sb), zb):
        raise UnsupportedError(f"input and {what} quantization differ (TFLite requires them equal)")


def const_ints(t: Optional[Tensor], what: str) -> np.ndarray:
    """The values of a constant int32 tensor ``t`` (``what``) as int64; refuse anything else."""
    if t is None or t.data is None or t.type != TYPE_INT32:
        raise UnsupportedError(f"{what} must be a constant int32 tensor")
    return t.data.astype(np.int64)


def arg(ins: list, i: int) -> Optional[Tensor]:
    """The operator's input ``i``, or None when it has fewer (or leaves it out)."""
    return ins[i] if len(ins) > i else None


def two_inputs(op: str, ins: list) -> tuple:
    """The two operands of a binary operator, or the refusal."""
    if len(ins) != 2 or ins[1] is None:
        raise UnsupportedError(f"{op} needs two inputs")
    return ins[0], ins[1]
