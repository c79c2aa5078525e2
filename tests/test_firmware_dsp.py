"""The Cortex-M DSP kernels (firmware/core/kernels/dsp/) against LiteRT's BUILTIN_REF.

The DSP paths only run on a core with the DSP extension, so these models run on the
Cortex-M4F (mps2-an386, the qemu-m4 board) and Cortex-M7 (mps2-an500) builds under QEMU: single-operator CONV_2D and DEPTHWISE_CONV_2D
models with the shapes that stress the kernels' edges - odd input and output channel
counts (the blocked filter's plain last rows, K % 4 tails), padding, stride 2, dilation,
batch 2, an odd number of output pixels, depth multiplier 2 (the portable kernel), a
depthwise plane too large for the scratch buffer (processed in bands), a convolution
whose receptive field does not fit it (the portable kernel), ReLU clamps, and input zero
points at both extremes (-128 and 127); and FULLY_CONNECTED models (depth tails, batches,
per-channel factors, more sums than the scratch holds), and AVERAGE_POOL_2D models (global,
edge windows, stride 2, the 256-tap bound of its 16-bit sums, the layers it leaves to the
portable kernel). Each model's output bytes are compared with
BUILTIN_REF for uniformly random int8 inputs.

The requantisation rewrite the DSP kernels use (eb_rq_mul: one SMLAL onto a constant)
is also checked here against the reference arithmetic in exact integers.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import require_tool
from test_firmware_engine import TinyModel, _out_size, conv_model, run_reference, synth_fc

from edgebench.mcu import convert

ROOT = Path(__file__).resolve().parents[1]
FIRMWARE = ROOT / "firmware"
PORTS = ("mps2-an386", "mps2-an500")     # Cortex-M4F, Cortex-M7
N_INPUTS = 3

pytestmark = pytest.mark.slow


# ------------------------------------------------------------------ requantisation

def _srdhm(a: int, b: int) -> int:
    if a == b == -2**31:
        return 2**31 - 1
    return (a * b + 2**30) >> 31


def _rdbypot(x: int, e: int) -> int:
    mask = (1 << e) - 1
    rem = x & mask
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> e) + (1 if rem > threshold else 0)


def _rq_mul(acc: int, m: int, e: int) -> int:
    """eb_rq_mul: SMLAL of acc*m onto hi:lo = 2^(e-2) : 2^30 (minus 2^31 when acc < 0),
    then the high word shifted right by e - 1."""
    s = -1 if acc < 0 else 0
    lo = ((s << 31) | 0x40000000) & 0xFFFFFFFF
    hi = 2 ** (e - 2) + s
    total = ((hi << 32) | lo) + acc * m
    hi_word = total >> 32
    assert -2**31 <= hi_word < 2**31      # the 64-bit sum never overflows
    return hi_word >> (e - 1)


def test_requantisation_rewrite_is_exact():
    rng = np.random.default_rng(5)
    accs = [0, 1, -1, 2**31 - 1, -2**31, 2**30, -2**30, 2**30 - 1, -2**30 - 1]
    accs += [int(v) for v in rng.integers(-2**31, 2**31, 4000)]
    accs += [int(v) for v in rng.integers(-2**20, 2**20, 4000)]
    mults = [2**30, 2**31 - 1, 1, 1518500250] + [int(v) for v in rng.integers(1, 2**31, 40)]
    checked = 0
    for e in range(2, 32):
        for m in mults:
            for acc in accs[:: 1 + e % 7]:
                assert _rq_mul(acc, m, e) == _rdbypot(_srdhm(acc, m), e), (acc, m, e)
                checked += 1
        # ties: accumulators whose srdhm lands exactly half way, both signs
        for m in mults[:8]:
            for k in range(-40, 40):
                target = (2 * k + 1) << (e - 1)
                acc = (target << 31) // m
                for a in (acc - 1, acc, acc + 1):
                    if -2**31 <= a < 2**31:
                        assert _rq_mul(a, m, e) == _rdbypot(_srdhm(a, m), e), (a, m, e)
    assert checked > 100_000


# ------------------------------------------------------------------ models

def _conv_model(rng, *, h, w, c, kh, kw, oc=None, sh=1, sw=1, dh=1, dw=1, same=True, n=1, in_z=0,
                act=0, depthwise=False, mult=1):
    assert _out_size(h, kh, sh, dh, same) >= 1 and _out_size(w, kw, sw, dw, same) >= 1
    if depthwise:
        oc = c * mult
    in_s = float(10 ** rng.uniform(-2.5, -0.5))
    ws = 10 ** rng.uniform(-3, -1, size=oc)
    return conv_model(rng, n=n, h=h, w=w, c=c, kh=kh, kw=kw, oc=oc, sh=sh, sw=sw, dh=dh, dw=dw, same=same,
                      in_s=in_s, in_z=in_z, ws=ws, act=act, depthwise=depthwise, mult=mult, spread=74,
                      relu_at_min=True)


#: name -> shape; act 1 = ReLU (clamp at the zero point -128: the saturating path),
#: 3 = ReLU6 (a clamp inside the int8 range)
CASES = {
    # CONV_2D: two pixels at a time, channel pairs of the blocked layout
    "conv_odd_c_odd_oc_same": dict(h=7, w=5, c=3, oc=7, kh=3, kw=3, in_z=-128),
    "conv_stride2_valid": dict(h=9, w=8, c=5, oc=6, kh=3, kw=2, sh=2, sw=2, same=False, in_z=127),
    "conv_dilated_batch2": dict(h=8, w=7, c=4, oc=9, kh=3, kw=3, dh=2, dw=2, n=2, in_z=-5, act=3),
    "conv_1x1_direct_odd_pixels": dict(h=3, w=5, c=6, oc=5, kh=1, kw=1, in_z=127, act=1),
    "conv_1x1_stride2": dict(h=7, w=7, c=8, oc=12, kh=1, kw=1, sh=2, sw=2, same=False, in_z=-128),
    "conv_one_channel_in": dict(h=10, w=4, c=1, oc=4, kh=5, kw=3, sh=2, sw=1, in_z=3),
    "conv_single_output_channel": dict(h=6, w=6, c=7, oc=1, kh=2, kw=2, in_z=-128, act=1),
    # K % 4 != 0 with OC % 4 == 0: the zero-padded filter copy (eb_conv_padded), odd pixel counts
    "conv_3ch_stem_stride2_odd_pixels": dict(h=9, w=10, c=3, oc=8, kh=3, kw=3, sh=2, sw=2, in_z=-128),
    "conv_k45_oc8_batch2": dict(h=5, w=5, c=5, oc=8, kh=3, kw=3, n=2, in_z=127, act=1),
    "conv_field_too_large_for_scratch": dict(h=5, w=5, c=120, oc=5, kh=3, kw=3, in_z=127),
    # DEPTHWISE_CONV_2D: the 3-tap line along W or H, channel pairs and an odd last channel
    "dw_3x3_same_odd_channels": dict(h=9, w=5, c=5, kh=3, kw=3, in_z=-128, act=1, depthwise=True),
    "dw_3x3_wide_line_w": dict(h=4, w=11, c=3, kh=3, kw=3, in_z=127, depthwise=True),
    "dw_3x1_line_h_stride2_w": dict(h=12, w=6, c=4, kh=3, kw=1, sw=2, in_z=-7, depthwise=True),
    "dw_5x3_stride2_rows": dict(h=11, w=7, c=3, kh=5, kw=3, sh=2, same=False, in_z=127, act=3,
                                depthwise=True),
    "dw_3x3_dilated_rows_batch2": dict(h=10, w=6, c=6, kh=3, kw=3, dh=2, n=2, in_z=-128,
                                       depthwise=True),
    "dw_plane_in_bands": dict(h=48, w=46, c=3, kh=3, kw=3, in_z=-128, depthwise=True),
    "dw_multiplier_2": dict(h=6, w=5, c=3, kh=3, kw=3, mult=2, in_z=127, depthwise=True),
    "dw_stride2_both": dict(h=9, w=9, c=2, kh=3, kw=3, sh=2, sw=2, in_z=5, depthwise=True),
    # stride 2 along the line (eb_dw_lines3_s2): padding on both sides and an odd output
    # line, a dilated stride-1 cross axis, a plane in bands
    "dw_stride2_same_odd_line": dict(h=10, w=13, c=5, kh=3, kw=3, sh=2, sw=2, in_z=-128, act=1,
                                     depthwise=True),
    "dw_stride2_w_dilated_rows": dict(h=11, w=12, c=4, kh=3, kw=3, dh=2, sw=2, in_z=127, depthwise=True),
    "dw_stride2_in_bands": dict(h=96, w=96, c=3, kh=3, kw=3, sh=2, sw=2, in_z=-3, act=3, depthwise=True),
    # fields of at most 8 elements (eb_conv_small_dsp.c): 1x1 over 8 channels in place, gathered
    # fields of 6 with padding, plain last filter rows (OC % 4), a clamp inside int8 (not
    # this path: eb_requant_table's case only)
    "conv_1x1_k8_odd_oc_batch2": dict(h=5, w=7, c=8, oc=11, kh=1, kw=1, n=2, in_z=-128, act=1),
    "conv_k6_same_padding": dict(h=6, w=5, c=3, oc=8, kh=1, kw=2, in_z=127),
    "conv_k4_stride2_relu6": dict(h=7, w=6, c=2, oc=5, kh=2, kw=1, sh=2, sw=2, in_z=-9, act=3),
    # fields widened straight from the input rows (KW*C % 4 == 0, eb_widen_rows): every pixel
    # inside and an odd last one (18 groups: the loop unrolled by two), padding rows and
    # columns with a dilated H (9 groups: not unrolled), 36 groups (unrolled by four) with
    # stride 2
    "conv_rows_valid_odd_pixels": dict(h=5, w=5, c=8, oc=8, kh=3, kw=3, same=False, in_z=-128),
    "conv_rows_same_dilated_h": dict(h=8, w=6, c=4, oc=12, kh=3, kw=3, dh=2, in_z=127, act=1),
    "conv_rows_g36_stride2": dict(h=9, w=9, c=16, oc=8, kh=3, kw=3, sh=2, sw=2, in_z=-3),
    # a depthwise plane along W with even lines in bands: each band's requantisation in one run
    "dw_3x3_line_w_even_bands": dict(h=40, w=50, c=4, kh=3, kw=3, in_z=-128, act=1, depthwise=True),
    # dead output channels (all-zero weights, a tiny scale, bias 2^30: MobileNetV1's) and one live
    # channel whose shift is -1 (outside the table's case), beside table channels:
    # eb_conv_requant_fix's two kinds
    "conv_dead_channels": dict(h=5, w=5, c=16, oc=12, kh=1, kw=1, in_z=-128, dead=True),
    # eb_mm_blocks unrolled by five (a 10x4 one-channel stem: 10 groups) and by four (1x1 over
    # 32 channels: 8 groups, an odd pixel count)
    "conv_kws_stem_g10": dict(h=13, w=6, c=1, oc=8, kh=10, kw=4, sh=2, sw=2, in_z=-5),
    "conv_1x1_g8_odd_pixels": dict(h=3, w=5, c=32, oc=8, kh=1, kw=1, in_z=127),
    # depthwise stride 1 on doubled-weight sums with the bias (eb_dw_lines3 + eb_dw_rq_lines_t):
    # KWS's shape (odd lines along H: every line's odd last output), a 3x3 plane (VWW's
    # deepest layer: one pair and an odd output a line), an odd channel count (the last
    # channel widened alone)
    "dw_3x3_line_h_odd_fast": dict(h=9, w=5, c=6, kh=3, kw=3, in_z=-128, depthwise=True),
    "dw_3x3_tiny_plane_fast": dict(h=3, w=3, c=8, kh=3, kw=3, in_z=127, depthwise=True),
    "dw_3x3_odd_channels_fast": dict(h=6, w=8, c=7, kh=3, kw=3, in_z=5, depthwise=True),
    # fields of 9 to 16 elements (eb_conv_small_dsp.c, one pixel in registers, doubled sums):
    # 1x1 over 16 channels in place with an odd channel count (one channel a pass), gathered
    # fields of 12 with padding and a batch, a one-channel 3x3 stride-2 field of 9
    "conv_1x1_k16_odd_oc": dict(h=5, w=6, c=16, oc=9, kh=1, kw=1, in_z=-128, act=1),
    "conv_k12_same_batch2": dict(h=6, w=5, c=4, oc=10, kh=1, kw=3, n=2, in_z=127),
    "conv_k9_stride2": dict(h=7, w=7, c=1, oc=6, kh=3, kw=3, sh=2, sw=2, in_z=-3),
    # 3x3 three-channel stems widened by rows (eb_widen_stem3, the reordered padded filter):
    # stride 1 with padding on every side, a dilated H with border windows through im2col
    "conv_3ch_stem_rows_same": dict(h=6, w=7, c=3, oc=12, kh=3, kw=3, in_z=-128, act=1),
    "conv_3ch_stem_rows_dilated_h": dict(h=9, w=8, c=3, oc=4, kh=3, kw=3, dh=2, in_z=127),
    # the filter widened into the scratch (eb_conv_wide, eb_mm_pairs_wide) unrolled by two (6 groups), and
    # a layer whose widened filter does not fit (eb_mm_blocks on the blob's filter)
    "conv_1x1_k24_wide_rept2": dict(h=4, w=5, c=24, oc=4, kh=1, kw=1, in_z=127, act=1),
    "conv_1x1_k64_oc64_not_wide": dict(h=3, w=3, c=64, oc=64, kh=1, kw=1, in_z=-128),
    # stems whose kernel rows are whole words and whose windows reach the padding along W
    # (eb_conv_stem_dsp.c: the input copied into a zero-point-padded plane, every field widened
    # from it): KWS's 10x4 one-channel stride-2 stem with 64 channels, a 5x4 stride-1 stem with an
    # odd width and pixel count and a ReLU, two channels of 5x2 taps with stride (2, 1) in a
    # batch, three groups a row (4 channels, 3x3) over a plane too large for the scratch (bands
    # of 22 and 19 output rows, the second's pixel count odd)
    "stem_rows_kws_oc64": dict(h=15, w=10, c=1, oc=64, kh=10, kw=4, sh=2, sw=2, in_z=-128),
    "stem_rows_5x4_odd_width": dict(h=7, w=5, c=1, oc=4, kh=5, kw=4, in_z=127, act=1),
    "stem_rows_c2_stride21_batch2": dict(h=9, w=7, c=2, oc=8, kh=5, kw=2, sh=2, n=2, in_z=-7),
    "stem_rows_bands": dict(h=41, w=37, c=4, oc=8, kh=3, kw=3, in_z=-128, act=1),
    # a 10x4 one-channel stem (eb_stem10_pairs) over a plane too large for the scratch: bands
    # of 49 and 11 output rows of 59 pixels, an odd pixel count in each (the odd last pixel
    # through col)
    "stem_rows_g10_bands": dict(h=60, w=59, c=1, oc=8, kh=10, kw=4, in_z=3),
    # one-channel stems on the paths they keep: 5x5 (K = 25: eb_conv_padded) and 3x3 with
    # stride 1 and VALID padding (K = 9: eb_conv_small)
    "stem_1ch_5x5_stride2": dict(h=9, w=8, c=1, oc=8, kh=5, kw=5, sh=2, sw=2, in_z=-128),
    "stem_1ch_3x3_valid": dict(h=7, w=9, c=1, oc=12, kh=3, kw=3, same=False, in_z=127),
    # 3x3 three-channel stems (eb_conv_stem3: doubled widened weights in a per-layer table, the
    # requantisation in the channel-pair loop): VWW's shape (stride 2, padding only after the
    # last row and column), pixel pairs across the images of a batch with 2 channels, stride
    # (2, 1) with 16 channels, a dilated H with an odd pixel count and 6 channels (not a
    # multiple of 4) and a ReLU
    "stem3_vww_like": dict(h=17, w=16, c=3, oc=8, kh=3, kw=3, sh=2, sw=2, in_z=-128),
    "stem3_oc2_valid_batch2": dict(h=7, w=9, c=3, oc=2, kh=3, kw=3, same=False, n=2, in_z=127),
    "stem3_oc16_stride21": dict(h=8, w=7, c=3, oc=16, kh=3, kw=3, sh=2, in_z=-3),
    "stem3_odd_pixels_dilated_oc6": dict(h=9, w=5, c=3, oc=6, kh=3, kw=3, dh=2, in_z=5, act=1),
    # an input narrower than the window (W = 2: every window reaches the padding; left to
    # eb_conv_padded)
    "stem3_narrow_w2": dict(h=5, w=2, c=3, oc=4, kh=3, kw=3, in_z=-128),
    # depthwise on small planes (eb_depthwise_small_dsp.c: four channels widened per group, a
    # line's pairs unrolled): 6x6 SAME (three pairs a line, one run of sums), 3x3 SAME with a
    # last group of three channels (an odd output a line), 5x5 VALID, 5x4 with a batch and a
    # ReLU at the zero point, stride 2 6x6 -> 3x3 (SAME: no top padding) with two last
    # channels, 12x12 -> 6x6, VALID 8x9 -> 3x4 (input rows and columns the outputs never
    # read); and the planes it leaves to the line kernel (2x2, one line of 7, a dilated H)
    "dw_small_6x6_s1": dict(h=6, w=6, c=12, kh=3, kw=3, in_z=-128, depthwise=True),
    "dw_small_3x3_s1_c7": dict(h=3, w=3, c=7, kh=3, kw=3, in_z=127, depthwise=True),
    "dw_small_5x5_valid": dict(h=5, w=5, c=4, kh=3, kw=3, same=False, in_z=-3, depthwise=True),
    "dw_small_5x4_batch2_relu": dict(h=5, w=4, c=8, kh=3, kw=3, n=2, in_z=9, act=1, depthwise=True),
    "dw_small_s2_6x6_c10": dict(h=6, w=6, c=10, kh=3, kw=3, sh=2, sw=2, in_z=-128, depthwise=True),
    "dw_small_s2_12x12": dict(h=12, w=12, c=8, kh=3, kw=3, sh=2, sw=2, in_z=127, depthwise=True),
    "dw_small_s2_valid_8x9_c5": dict(h=8, w=9, c=5, kh=3, kw=3, sh=2, sw=2, same=False, in_z=-5,
                                     depthwise=True),
    # stride 2 in tiles of 8 outputs across: bands of 10 lines and a last tile of 3 with two
    # last channels; a remainder of one output (tiles of 7 and 2); VALID, two tiles of 8
    "dw_small_s2_tiles_bands": dict(h=40, w=21, c=6, kh=3, kw=3, sh=2, sw=2, in_z=-128, act=1,
                                    depthwise=True),
    "dw_small_s2_tiles_remainder_one": dict(h=10, w=18, c=4, kh=3, kw=3, sh=2, sw=2, in_z=127, depthwise=True),
    "dw_small_s2_tiles_valid": dict(h=19, w=33, c=8, kh=3, kw=3, sh=2, sw=2, same=False, in_z=3,
                                    depthwise=True),
    # stride 1 in tiles of 12 across: 30x30 (tiles 12, 12, 6; two bands of 15 lines) with an odd
    # channel count, VALID 14x17 -> 12x15 (a last tile of 3: odd lines) in a batch of two
    "dw_small_s1_tiles_bands": dict(h=30, w=30, c=5, kh=3, kw=3, in_z=-128, depthwise=True),
    "dw_small_s1_tiles_valid_batch2": dict(h=14, w=17, c=4, kh=3, kw=3, n=2, same=False, in_z=127,
                                           depthwise=True),
    # the line kernel on lines of 32 positions (eb_dw_lines3_w32: LDRD rows at immediate offsets):
    # lines of 22 along W in two bands (a width the tiles leave to it), an odd channel count
    "dw_w32_line_bands": dict(h=20, w=22, c=3, kh=3, kw=3, in_z=5, depthwise=True),
    # dead channels (zero weights, scale 1e-10, bias 2^30) and a channel of shift -1 beside
    # ordinary ones: the channels outside the fast requantisation (their sums halved, then the C
    # path) in the stride-1 tiles, the stride-2 tiles and the line kernel of lines of 32
    "dw_small_dead_channels": dict(h=6, w=6, c=8, sh=1, in_z=-128, dead=True, depthwise=True),
    "dw_small_s2_dead_channels": dict(h=9, w=12, c=8, sh=2, in_z=127, dead=True, depthwise=True),
    "dw_w32_dead_channels": dict(h=9, w=5, c=8, sh=1, in_z=3, dead=True, depthwise=True),
    "dw_2x2_plane": dict(h=2, w=2, c=5, kh=3, kw=3, in_z=-128, depthwise=True),
    "dw_1x7_line": dict(h=1, w=7, c=4, kh=3, kw=3, in_z=127, depthwise=True),
    "dw_6x6_dilated_h_line_kernel": dict(h=6, w=6, c=6, kh=3, kw=3, dh=2, in_z=-7, depthwise=True),
}


#: FULLY_CONNECTED (eb_fc_dsp.c): depth % 4 tails, an odd group count, units % 4 plain
#: rows, batches, per-channel factors (no shared fast-path constants), more sums than the
#: scratch holds at once (chunks), a depth too short for the kernel (eb_matvec)
FC_CASES = {
    "fc_depth_tail_odd_groups": dict(batch=1, depth=45, units=14, per_channel=False, act=1),
    "fc_batch2_per_channel": dict(batch=2, depth=64, units=9, per_channel=True, act=1),
    "fc_chunks_of_sums": dict(batch=1, depth=24, units=1100, per_channel=False, act=0),
    "fc_depth_below_kernel": dict(batch=3, depth=6, units=8, per_channel=False, act=0),
    # blob format 2 (biased weights): the SMMLA requantisation (per-tensor factor, no
    # activation) after an odd group count and a depth % 4 tail, with plain last rows, two
    # batches; and an even group count of eight positions (AD's 8 -> 128 layer's shape)
    "fc_fast_requant_odd_groups_tail": dict(batch=2, depth=134, units=22, per_channel=False, act=0),
    "fc_fast_requant_depth8": dict(batch=1, depth=8, units=128, per_channel=False, act=0),
    # fewer units than a block (VWW's 256 -> 2): plain rows from the P, Q streams only
    "fc_units_below_block": dict(batch=1, depth=254, units=3, per_channel=False, act=0),
    # sums too large for the SMMLA path's 2^L scaling (units 0 and 5: one in each of the first
    # two blocks; their outputs saturate) beside ordinary ones: those blocks redone exactly
    "fc_saturating_blocks": dict(batch=1, depth=64, units=12, per_channel=False, act=0, saturating=True),
}


#: AVERAGE_POOL_2D (eb_pool_dsp.c): KWS's global pool (125 taps over 64 channels), edge
#: windows of 4/6/9 taps under SAME padding with a ReLU6 clamp, stride 2, a window of exactly
#: 256 taps (the 16-bit lane sums' bound: all -128 sums to -32768), and two layers the
#: kernel leaves to the portable one (257+ taps; C % 8 != 0)
POOL_CASES = {
    "avgpool_global_kws": dict(h=25, w=5, c=64, kh=25, kw=5, sh=1, sw=1, same=False, in_z=-20, act=0),
    "avgpool_3x3_same_edges_relu6": dict(h=7, w=6, c=16, kh=3, kw=3, sh=1, sw=1, same=True, in_z=5, act=3),
    "avgpool_2x3_stride2_same": dict(h=9, w=7, c=8, kh=2, kw=3, sh=2, sw=2, same=True, in_z=-128, act=1),
    "avgpool_window_256": dict(h=16, w=16, c=16, kh=16, kw=16, sh=1, sw=1, same=False, in_z=127, act=0),
    "avgpool_window_272_portable": dict(h=17, w=16, c=16, kh=17, kw=16, sh=1, sw=1, same=False, in_z=-3, act=0),
    "avgpool_c12_portable": dict(h=5, w=5, c=12, kh=3, kw=3, sh=1, sw=1, same=True, in_z=9, act=0),
}


def _pool_model(rng, *, h, w, c, kh, kw, sh, sw, same, in_z, act):
    g = TinyModel()
    scale = float(10 ** rng.uniform(-2, 0))
    x = g.tensor((1, h, w, c), scale=scale, zp=in_z)
    y = g.tensor((1, _out_size(h, kh, sh, 1, same), _out_size(w, kw, sw, 1, same), c), scale=scale, zp=in_z)
    g.op("AVERAGE_POOL_2D", [x], [y], g.options("Pool2DOptions", padding=0 if same else 1, strideH=sh,
                                                strideW=sw, filterHeight=kh, filterWidth=kw,
                                                fusedActivationFunction=act))
    return g.build([x], [y]), h * w * c


def _dead_conv_graph(g, h, w, c, in_s, in_z, wq, ws, bias, out_s, padding):
    """The stride-1 CONV_2D of the dead-channel models on g (filter wq with per-channel scales ws,
    bias, output zero point 3): (the model, its input size)."""
    oc = len(wq)
    x = g.tensor((1, h, w, c), scale=in_s, zp=in_z)
    wt = g.tensor(wq.shape, scale=ws, zp=np.zeros(oc, int), data=wq, axis=0)
    bt = g.tensor((oc,), "int32", scale=in_s * ws, zp=np.zeros(oc, int), data=bias)
    y = g.tensor((1, h, w, oc), scale=out_s, zp=3)
    g.op("CONV_2D", [x, wt, bt], [y], g.options("Conv2DOptions", padding=padding, strideH=1, strideW=1,
                                                 dilationHFactor=1, dilationWFactor=1,
                                                 fusedActivationFunction=0))
    return g.build([x], [y]), h * w * c


def _dead_channels_model(rng, *, h, w, c, oc, kh, kw, in_z, dead):
    """A 1x1-style CONV_2D whose channels 1, 4-7 and 11 are dead (zero weights, scale 1e-10, bias
    2^30) and whose channel 9 rescales by about 0.3 (shift -1: outside the table's case; weights
    of alternating sign and no bias keep its outputs inside int8)."""
    g = TinyModel()
    in_s = 0.05
    ws = np.full(oc, 0.01)
    wq = rng.integers(-127, 128, size=(oc, kh, kw, c)).astype(np.int8)
    bias = rng.integers(-3000, 3000, size=oc).astype(np.int32)
    for u in (1, 4, 5, 6, 7, 11):
        wq[u] = 0
        ws[u] = 1e-10
        bias[u] = 1 << 30
    out_s = float(np.sqrt(kh * kw * c) * 73 * 60 * in_s * 0.01 * 3 / 127)
    wq[9] = np.resize(np.array([1, -1], np.int8), wq[9].shape)    # a zero sum: no offset term
    ws[9] = 0.3 * out_s / in_s
    bias[9] = 0
    return _dead_conv_graph(g, h, w, c, in_s, in_z, wq, ws, bias, out_s, padding=0)


def _dead_dw_model(rng, *, h, w, c, sh, in_z, **_):
    """A 3x3 SAME DEPTHWISE_CONV_2D (stride sh) whose channels 1 and 5 are dead (zero weights,
    scale 1e-10, bias 2^30) and whose channel 3 rescales by about 0.3 (shift -1; taps +1 and -1
    and no bias keep its outputs inside int8); the others random."""
    g = TinyModel()
    in_s = 0.05
    ws = np.full(c, 0.01)
    wq = rng.integers(-127, 128, size=(1, 3, 3, c)).astype(np.int8)
    bias = rng.integers(-3000, 3000, size=c).astype(np.int32)
    for u in (1, 5):
        wq[..., u] = 0
        ws[u] = 1e-10
        bias[u] = 1 << 30
    out_s = float(3 * 73 * 60 * in_s * 0.01 * 3 / 127)
    wq[..., 3] = 0
    wq[0, 0, 0, 3], wq[0, 2, 2, 3] = 1, -1
    ws[3] = 0.3 * out_s / in_s
    bias[3] = 0
    oh, ow = _out_size(h, 3, sh, 1, True), _out_size(w, 3, sh, 1, True)
    x = g.tensor((1, h, w, c), scale=in_s, zp=in_z)
    wt = g.tensor(wq.shape, scale=ws, zp=np.zeros(c, int), data=wq, axis=3)
    bt = g.tensor((c,), "int32", scale=in_s * ws, zp=np.zeros(c, int), data=bias)
    y = g.tensor((1, oh, ow, c), scale=out_s, zp=-5)
    g.op("DEPTHWISE_CONV_2D", [x, wt, bt], [y],
         g.options("DepthwiseConv2DOptions", depthMultiplier=1, padding=0, strideH=sh, strideW=sh,
                   dilationHFactor=1, dilationWFactor=1, fusedActivationFunction=0))
    return g.build([x], [y]), h * w * c


def _saturating_fc_model(rng, *, depth, units, **_):
    """A per-tensor FULLY_CONNECTED (factor about 2^-5) whose units 0 and 5 have all weights 127
    and the input zero point -128, so that |acc| ~ 2^20 exceeds the fast path's 2^(15+sh); the
    other units' weights are small and their outputs stay inside int8."""
    g = TinyModel()
    in_s, ws = 0.05, 0.01
    wq = rng.integers(-3, 4, size=(units, depth)).astype(np.int8)
    wq[0] = wq[5] = 127
    x = g.tensor((1, depth), scale=in_s, zp=-128)
    wt = g.tensor(wq.shape, scale=np.array([ws]), zp=np.zeros(1, int), data=wq)
    y = g.tensor((1, units), scale=in_s * ws / 0.033, zp=-7)
    g.op("FULLY_CONNECTED", [x, wt, -1], [y], g.options("FullyConnectedOptions", fusedActivationFunction=0))
    return g.build([x], [y]), depth


def _model(rng, name):
    if FC_CASES.get(name, {}).get("saturating"):
        return _saturating_fc_model(np.random.default_rng(list(FC_CASES).index(name) + 31), **FC_CASES[name])
    if name in FC_CASES:    # own seeds: adding a convolution case leaves these models alone
        return synth_fc(np.random.default_rng(list(FC_CASES).index(name) + 31), **FC_CASES[name])
    if name in POOL_CASES:
        return _pool_model(rng, **POOL_CASES[name])
    if CASES[name].get("dead"):
        if CASES[name].get("depthwise"):
            return _dead_dw_model(rng, **CASES[name])
        return _dead_channels_model(rng, **CASES[name])
    return _conv_model(rng, **CASES[name])


@pytest.fixture(scope="module", params=PORTS)
def firmware(request, tmp_path_factory) -> tuple:
    for tool in ("make", "arm-none-eabi-gcc", "qemu-system-arm"):
        require_tool(tool)
    port = request.param
    out = tmp_path_factory.mktemp(f"fw-dsp-{port}")
    proc = subprocess.run(["make", "-C", str(FIRMWARE), f"-j{min(4, os.cpu_count() or 1)}", f"PORT={port}",
                           f"BUILD={out}"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return port, out / "eb-firmware.elf"


def build_jobs(names, shape_of, make, rng_of, tmp_path) -> tuple[list, list]:
    """Per name its model (make(rng, name) -> (tflite bytes, input size), written to tmp_path)
    and N_INPUTS random int8 inputs from the same rng (rng_of(name)), the first at the far end
    from the input zero point (shape_of(name)["in_z"]): the (path, inputs) jobs and the blobs."""
    jobs, blobs = [], []
    for name in names:
        r = rng_of(name)
        model, n_in = make(r, name)
        path = tmp_path / f"{name}.tflite"
        path.write_bytes(model)
        x = r.integers(-128, 128, size=(N_INPUTS, n_in)).astype(np.int8)
        x[0] = -128 if shape_of(name).get("in_z", 0) > 0 else 127    # the far end from the zero point
        jobs.append((path, x))
        blobs.append(convert(path))
    return jobs, blobs


def assert_bit_exact_on_qemu(port, elf, names, jobs, blobs, refs) -> None:
    """Every model (blob) on the firmware under QEMU, each input row of its job against the
    final output of its reference run; the references must not be degenerate."""
    from edgebench.mcu.protocol import DutClient
    from edgebench.mcu.qemu import QemuBoard

    failures = []
    with QemuBoard(port, elf, icount_shift=0) as board:
        client = DutClient(board.pty_path, timeout_s=30, name=port)
        try:
            client.sync()
            for name, (_path, x), blob, (outs, sizes, _ops) in zip(names, jobs, blobs, refs):
                client.upload("model", blob.data)
                client.load_model()
                final = outs[:, -sizes[-1]:]
                for i, row in enumerate(x):
                    client.upload("input", row.tobytes())
                    client.eb_infer(1)
                    dev = np.frombuffer(client.output(), dtype=np.int8)
                    if dev.shape != final[i].shape or np.any(dev != final[i]):
                        diff = int(np.count_nonzero(dev != final[i])) if dev.shape == final[i].shape else -1
                        failures.append(f"{port} {name} input {i}: {diff} of {final[i].size} bytes differ")
        finally:
            client.close()
    # the reference outputs must not be degenerate (a constant output proves little)
    for name, (outs, sizes, _ops) in zip(names, refs):
        assert len(np.unique(outs[:, -sizes[-1]:])) > 8, f"{name}: reference output nearly constant"
    assert not failures, "; ".join(failures)


def test_dsp_kernels_bit_exact_on_qemu(firmware, tmp_path):
    port, elf = firmware
    rng = np.random.default_rng(2024)
    names = [*CASES, *FC_CASES, *POOL_CASES]
    # the stem cases draw from seeds of their own: the other cases' models and inputs stay
    # those of the shared sequence
    jobs, blobs = build_jobs(
        names,
        lambda name: CASES.get(name) or FC_CASES.get(name) or POOL_CASES[name],
        _model,
        lambda name: np.random.default_rng(list(CASES).index(name) + 71) if name.startswith("stem") else rng,
        tmp_path,
    )
    refs = run_reference(jobs, tmp_path / "ref")
    assert_bit_exact_on_qemu(port, elf, names, jobs, blobs, refs)


def test_fit_check_counts_the_dsp_scratch_of_the_firmware():
    import re

    from edgebench.boards.registry import get_profile
    from edgebench.mcu.fit import DSP_SCRATCH_BYTES, dsp_scratch_bytes

    header = (FIRMWARE / "core" / "kernels" / "dsp" / "eb_dsp.h").read_text()
    assert int(re.search(r"#define EB_DSP_SCRATCH_BYTES (\d+)u", header).group(1)) == DSP_SCRATCH_BYTES
    assert dsp_scratch_bytes(get_profile("qemu-m4")) == dsp_scratch_bytes(get_profile("qemu-m7")) == DSP_SCRATCH_BYTES
    assert dsp_scratch_bytes(get_profile("nucleo-l4r5zi")) == DSP_SCRATCH_BYTES
    assert dsp_scratch_bytes(get_profile("esp32-s3")) == 0 and dsp_scratch_bytes(get_profile("pico")) == 0
