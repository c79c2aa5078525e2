"""LOGISTIC, TANH and HARD_SWISH lowered to a 256-entry int8 table (firmware:
core/ops/eb_op_lut.c; level 2).

LiteRT's reference kernels compute LOGISTIC and TANH on int8 through a table
(``LUTPopulate`` in float32) and HARD_SWISH in int16 fixed point; either way the
output depends on the int8 input alone, so the host computes the 256 outputs
exactly as the reference does and the device looks them up.
"""
from __future__ import annotations

import math
from math import prod

import numpy as np

from edgebench.mcu import blob_quant as q
from edgebench.mcu.ops.common import Layer, UnsupportedError

OPTIONS: dict = {}
NEEDS_OPTIONS: frozenset = frozenset()
ALIASES: dict = {}


def _float_lut(fn, in_s: float, in_z: int, out_s: float, out_z: int) -> np.ndarray:
    """LiteRT's LUTPopulate<int8_t> in float32: dequantize, transform, multiply by
    1/out_scale, round half away from zero, add the zero point, clamp. The transform is
    evaluated in double and rounded to float32 (the C library's tanhf/expf are within
    an ulp of that)."""
    f32 = np.float32
    inv = f32(1) / f32(out_s)
    lut = np.empty(256, np.int8)
    for v in range(-128, 128):
        deq = f32(f32(in_s) * f32(v - in_z))
        t = fn(deq)
        r = f32(t * inv)
        r = f32(np.floor(r + f32(0.5)) if r >= 0 else -np.floor(-r + f32(0.5)))
        lut[v + 128] = max(-128, min(127, int(f32(r + f32(out_z)))))
    return lut


def _logistic(x: np.float32) -> np.float32:
    e = np.float32(math.exp(-float(x))) if -float(x) < 88.7 else np.float32(np.inf)
    return np.float32(np.float32(1) / np.float32(np.float32(1) + e))


def _tanh(x: np.float32) -> np.float32:
    return np.float32(math.tanh(float(x)))


def _div15(v: int) -> int:
    """v / 2^15 truncated toward zero, as C's integer division."""
    return (abs(v) >> 15) * (1 if v >= 0 else -1)


def _srdhm16(a: int, b: int) -> int:
    """gemmlowp SaturatingRoundingDoublingHighMul on int16."""
    if a == b == -32768:
        return 32767
    ab = a * b
    return _div15(ab + ((1 << 14) if ab >= 0 else 1 - (1 << 14)))


def _to16(v: int) -> int:
    return ((v + 32768) % 65536) - 32768


def _rdbypot16(x: int, e: int) -> int:
    """gemmlowp RoundingDivideByPOT with int16 operands, as HardSwish instantiates it: the
    mask (2^e - 1) is truncated to int16, so for e >= 16 it is -1 and the result is
    (x >> e) + (x >= 0), not a rounded quotient; reproduced as is."""
    mask = _to16((1 << e) - 1)
    threshold = _to16((mask >> 1) + (1 if x < 0 else 0))
    return _to16((x >> e) + (1 if (x & mask) > threshold else 0))


def _sat16(v: int) -> int:
    return max(-32768, min(32767, v))


def _down16(m: int) -> int:
    """DownScaleInt32ToInt16Multiplier."""
    return 32767 if m >= (1 << 31) - 1 - (1 << 15) else (m + (1 << 15)) >> 16


def _hard_swish_lut(in_s: float, in_z: int, out_s: float, out_z: int) -> np.ndarray:
    """reference_ops::HardSwish (int16 fixed point) for every int8 input, with the
    parameters of activations.cc HardSwishPrepare (float32 arithmetic)."""
    f32 = np.float32
    hires = f32(1.0 / 128.0) * f32(in_s)
    out_m, out_e = q.quantize_multiplier(float(hires / f32(out_s)))
    relu_m, relu_e = q.quantize_multiplier(float(hires / f32(3.0 / 32768.0)))
    if out_e > 0:
        raise UnsupportedError("HARD_SWISH output multiplier needs a left shift (TFLite refuses it too)")
    out_m16, relu_m16 = _down16(out_m), _down16(relu_m)
    lut = np.empty(256, np.int8)
    for v in range(-128, 128):
        x = v - in_z
        hi = _sat16(x * 128)
        pre = _srdhm16(hi, out_m16)
        r = hi
        if relu_e > 0:
            r = _sat16(r * (1 << (relu_e - 1)))
        r = _srdhm16(r, relu_m16)
        if relu_e > 0:
            r = _sat16(r * 2)
        if relu_e < 0:
            r = _rdbypot16(r, -relu_e)
        r = (r + (1 << 15)) >> 1
        p = 32767 if r == pre == -32768 else _div15(r * pre)   # SaturatingDoublingHighMul
        o = _to16(_rdbypot16(p, -out_e) + out_z)
        lut[v + 128] = max(-128, min(127, o))
    return lut


def lower(op: str, opts, ins: list, outs: list) -> Layer:
    x, y = ins[0], outs[0]
    in_s, in_z = x.qparams("input")
    out_s, out_z = y.qparams("output")
    if prod(x.shape) != prod(y.shape):
        raise UnsupportedError(f"input {x.shape} and output {y.shape} differ in size")
    if op == "LOGISTIC":
        if np.float32(out_s) != np.float32(1 / 256):
            raise UnsupportedError(f"output scale {out_s} (TFLite's int8 LOGISTIC requires 1/256)")
        lut = _float_lut(_logistic, in_s, in_z, out_s, out_z)
    elif op == "TANH":
        lut = _float_lut(_tanh, in_s, in_z, out_s, out_z)
    else:
        lut = _hard_swish_lut(in_s, in_z, out_s, out_z)
    # the table travels in the layer's per-channel area: 256 bytes, indexed by x + 128
    return Layer(op, [x.index], y.index, {}, (q.INT8_MIN, q.INT8_MAX), [],
                 np.frombuffer(lut.tobytes(), "<i4").copy())
