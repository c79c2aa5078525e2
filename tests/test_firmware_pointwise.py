"""The DSP pointwise kernel (firmware/core/kernels/dsp/eb_pointwise_dsp.c) against LiteRT's BUILTIN_REF.

Blob format 3 stores the filter of every 1x1 CONV_2D without padding over a multiple of
four input channels biased (firmware/BLOB.md); on a core with the DSP extension such a
layer runs eb_pointwise_s8 (two pixels by two output channels, FULLY_CONNECTED's
biased-weight identity) or, for at most 16 input channels, eb_conv_small's table built
from the unbiased weights. Single-operator models on the Cortex-M4F (mps2-an386) and
Cortex-M7 (mps2-an500) builds under QEMU, with the shapes that stress the kernel's edges:
input channel counts 4 to 256 (group loops unrolled by 1, 2 and 4), output channel
counts with and without whole blocks of four (the plain last rows), odd pixel counts (the
last pixel paired with itself), stride 2 and batches (the input pixel of each output),
ReLU and ReLU6 (the requantisation paths without the table), per-channel scales, layers
whose plan fits the scratch only in chunks of channels, input zero points at both extremes,
and dead channels beside a live channel whose stored weight bytes are all zero (its
even-position weights -128) - each model's output bytes against BUILTIN_REF for random
int8 inputs.
"""
from __future__ import annotations

import numpy as np
import pytest
from test_firmware_dsp import (  # noqa: F401  (firmware: the fixture)
    _conv_model,
    _dead_conv_graph,
    assert_bit_exact_on_qemu,
    build_jobs,
    firmware,
)
from test_firmware_engine import TinyModel, run_reference

pytestmark = pytest.mark.slow

#: name -> shape (1x1, no padding; act 1 = ReLU at the zero point -128, 3 = ReLU6)
CASES = {
    # at most 16 input channels: eb_conv_small on the unbiased weights (K = 4, 8, 16)
    "pw_c4_oc3_odd_pixels": dict(h=5, w=3, c=4, oc=3, in_z=-128),
    "pw_c8_oc6_stride2": dict(h=7, w=6, c=8, oc=6, sh=2, sw=2, in_z=127, act=1),
    "pw_c16_oc2_relu6": dict(h=5, w=5, c=16, oc=2, in_z=-3, act=3),
    "pw_c16_oc64_batch2": dict(h=3, w=3, c=16, oc=64, n=2, in_z=-128),
    # stride 1, even OC: eb_conv_small's fused pixel loops (VWW's layers 2 and 4: K = 8, 16)
    "pw_c8_oc16_fused": dict(h=7, w=5, c=8, oc=16, in_z=127),
    "pw_c8_oc4_fused_relu": dict(h=5, w=5, c=8, oc=4, in_z=-128, act=1),
    "pw_c16_oc32_fused": dict(h=5, w=3, c=16, oc=32, in_z=-5),
    # eb_pointwise_s8: KWS's shape on an odd pixel count (G = 16: unrolled by four)
    "pw_c64_oc64_odd_pixels": dict(h=5, w=5, c=64, oc=64, in_z=-128),
    # G = 5 (not unrolled) with plain last rows; G = 6 (by two) with one of them
    "pw_c20_oc6": dict(h=4, w=5, c=20, oc=6, in_z=127, act=1),
    "pw_c24_oc5_stride2": dict(h=7, w=7, c=24, oc=5, sh=2, sw=2, in_z=-128),
    # no block at all (OC < 4): plain rows only
    "pw_c64_oc1": dict(h=3, w=5, c=64, oc=1, in_z=5),
    "pw_c32_oc3_batch2": dict(h=3, w=3, c=32, oc=3, n=2, in_z=-128, act=1),
    # deep input, stride 2 over an odd output count, ReLU6 (eb_conv_requant, no table)
    "pw_c128_oc64_stride2_relu6": dict(h=5, w=5, c=128, oc=64, sh=2, sw=2, in_z=127, act=3),
    "pw_c256_oc4": dict(h=3, w=3, c=256, oc=4, in_z=-128),
    # no dead channel: 128 -> 128 fits with its last channels requantised the exact way;
    # 128 -> 256 runs in two chunks of channels, 256 -> 258 in two of 128 and a last
    # chunk of the two plain rows; 512 input channels
    "pw_c128_oc128_all_live": dict(h=3, w=3, c=128, oc=128, in_z=-128),
    "pw_c128_oc256_chunks": dict(h=3, w=3, c=128, oc=256, in_z=-128),
    "pw_c256_oc258_chunks": dict(h=3, w=1, c=256, oc=258, in_z=127, act=1),
    "pw_c512_oc8": dict(h=1, w=3, c=512, oc=8, in_z=-128),
    # stride 2 along H only, an odd width
    "pw_c64_oc8_stride_h": dict(h=6, w=3, c=64, oc=8, sh=2, sw=1, in_z=127),
    # dead channels (skipped pairs, a dead row beside a live one, a dead plain last row: the
    # template's constants), a live channel outside the doubled-sum case, and a live
    # channel whose stored bytes are all zero
    "pw_dead_and_zero_bytes": dict(h=5, w=5, c=32, oc=14, in_z=0, dead=True),
}


def _dead_model(rng, *, h, w, c, oc, in_z, **_):
    """A 1x1 CONV_2D whose channels 1, 4-7 and 13 are dead (zero weights, scale 1e-10, bias 2^30), whose
    channel 9 rescales by about 0.3 (shift -1: outside the table's case) and whose channel 2 also
    does, with its weights -128 at the even input channels and 0 at the odd ones: biased, all its
    stored bytes are zero, yet its outputs depend on the input; channels 3 and 12 have one nonzero
    weight, the last."""
    g = TinyModel()
    in_s = 0.05
    ws = np.full(oc, 0.01)
    wq = rng.integers(-127, 128, size=(oc, 1, 1, c)).astype(np.int8)
    bias = rng.integers(-3000, 3000, size=oc).astype(np.int32)
    for u in (1, 4, 5, 6, 7, 13):
        wq[u] = 0
        ws[u] = 1e-10
        bias[u] = 1 << 30
    out_s = float(np.sqrt(c) * 73 * 60 * in_s * 0.01 * 3 / 127)
    wq[9] = np.resize(np.array([1, -1], np.int8), wq[9].shape)
    ws[9] = 0.3 * out_s / in_s
    bias[9] = 0
    for u in (3, 12):                   # live by their last weight only (a block row, a plain row)
        wq[u] = 0
        wq[u, 0, 0, -1] = 100
    wq[2] = np.resize(np.array([-128, 0], np.int8), wq[2].shape)
    ws[2] = 0.3 * out_s / in_s          # in_z 0: its sums 1000 - 128 * sum(even x) saturate to
    bias[2] = 1000                      # -128 or 127 by the input, not a constant
    return _dead_conv_graph(g, h, w, c, in_s, in_z, wq, ws, bias, out_s, padding=1)


def _model(rng, name):
    shape = dict(CASES[name])
    if shape.pop("dead", False):
        return _dead_model(rng, **shape)
    return _conv_model(rng, kh=1, kw=1, same=False, **shape)


def test_pointwise_bit_exact_on_qemu(firmware, tmp_path):  # noqa: F811  (the imported fixture)
    port, elf = firmware
    rng = np.random.default_rng(1931)
    jobs, blobs = build_jobs(CASES, CASES.get, _model, lambda _name: rng, tmp_path)
    refs = run_reference(jobs, tmp_path / "ref")
    assert_bit_exact_on_qemu(port, elf, list(CASES), jobs, blobs, refs)
