"""Requantization parameters exactly as TFLite's kernels compute them (level 2).

The device does no floating-point math in its convolutions: every multiplier is
computed here, once, with the same double/float arithmetic as TFLite's
``Prepare`` functions (``quantization_util.cc``, ``kernel_util.cc``,
``add.cc``, ``activations.cc``), so the engine's integers match the reference
kernels bit for bit. Python floats are IEEE doubles and ``math.frexp`` is C's
``frexp``; float32 steps are done with numpy float32 scalars.
"""
from __future__ import annotations

import math

import numpy as np

INT8_MIN, INT8_MAX = -128, 127


def round_half_away(x: float) -> int:
    """C's round()/TfLiteRound: nearest integer, ties away from zero."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def quantize_multiplier(real: float) -> tuple:
    """TFLite QuantizeMultiplier: ``real = m * 2^shift / 2^31`` with m a Q31 int32.

    Returns (m, shift); shift > 0 is a left shift. Tiny multipliers
    (shift < -31) flush to (0, 0); shifts above 30 saturate, as in TFLite.
    """
    if real == 0.0:
        return 0, 0
    q, shift = math.frexp(real)
    q_fixed = round_half_away(q * (1 << 31))
    if q_fixed == (1 << 31):
        q_fixed //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    if shift > 30:
        return (1 << 31) - 1, 30
    return int(q_fixed), int(shift)


def conv_multiplier(input_scale: float, filter_scale: float, output_scale: float) -> tuple:
    """Per-channel (and per-tensor) conv/depthwise/FC multiplier:
    ``double(input) * double(filter) / double(output)``."""
    return quantize_multiplier(float(input_scale) * float(filter_scale) / float(output_scale))


def fc_rescale(input_scale: float, filter_scale: float, output_scale: float) -> float:
    """FULLY_CONNECTED rescale factor of LiteRT's reference kernel, a double:
    ``double(input) * double(filter) / double(output)``; the kernel computes
    ``round(acc * factor)`` in double precision (ties away from zero)."""
    real = float(input_scale) * float(filter_scale) / float(output_scale)
    if not (real > 0.0 and math.isfinite(real)) or real < 2.0 ** -1022:
        raise ValueError(f"fully connected rescale factor {real} is not a positive normal number")
    return real


# FusedActivationFunctionType in the TFLite schema
ACTIVATIONS = {0: "NONE", 1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6"}


def activation_range(activation: int, scale: float, zero_point: int) -> tuple:
    """CalculateActivationRangeQuantized for int8: ``zp + round(f / scale)`` in float32."""
    s = np.float32(scale)

    def q(f: float) -> int:
        return int(zero_point) + round_half_away(float(np.float32(f) / s))

    if activation == 0:
        return INT8_MIN, INT8_MAX
    if activation == 1:
        return max(INT8_MIN, q(0.0)), INT8_MAX
    if activation == 3:
        return max(INT8_MIN, q(0.0)), min(INT8_MAX, q(6.0))
    if activation == 2:
        return max(INT8_MIN, q(-1.0)), min(INT8_MAX, q(1.0))
    raise ValueError(f"fused activation {activation}")


def add_params(s1: float, z1: int, s2: float, z2: int, so: float, zo: int) -> list:
    """ADD int8 (add.cc Prepare): left shift 20, per-input and output multipliers.

    Returns p[0..9] of the blob: in1/in2/output offsets, left shift, then
    (multiplier, shift) for input 1, input 2 and the output.
    """
    left_shift = 20
    f1, f2, fo = np.float32(s1), np.float32(s2), np.float32(so)
    twice_max = float(2 * max(f1, f2))                 # float, exact
    real1 = float(f1) / twice_max
    real2 = float(f2) / twice_max
    real_out = twice_max / float(np.float32((1 << left_shift) * fo))
    out = [-int(z1), -int(z2), int(zo), left_shift]
    for real in (real1, real2, real_out):
        if not 0.0 < real < 1.0:
            raise ValueError(f"ADD rescale factor {real} outside (0, 1)")
        m, shift = quantize_multiplier(real)
        if shift > 0:
            raise ValueError(f"ADD rescale factor {real} needs a left shift")
        out += [m, shift]
    return out


def softmax_params(beta: float, input_scale: float) -> list:
    """SOFTMAX int8 (reference): PreprocessSoftmaxScaling with 5 integer bits and
    CalculateInputRadius. Returns [input multiplier, input left shift, diff_min]."""
    integer_bits = 5
    real = min(float(beta) * float(input_scale) * (1 << (31 - integer_bits)), (1 << 31) - 1.0)
    if not real > 1.0:
        raise ValueError(f"softmax beta*scale {float(beta) * float(input_scale)} too small")
    m, shift = quantize_multiplier(real)
    if shift < 0:
        raise ValueError("softmax multiplier needs a right shift")
    radius = math.floor(1.0 * ((1 << integer_bits) - 1) * (1 << (31 - integer_bits)) / (1 << shift))
    return [m, shift, -int(radius)]
