"""RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR (firmware: core/ops/eb_op_resize.c; level 2):
the source rows and columns of every output row and column, and the bilinear fractions,
precomputed here as LiteRT's reference computes them (parameter layout: firmware/BLOB.md).
"""
from __future__ import annotations

import numpy as np

from edgebench.mcu import blob_quant as q
from edgebench.mcu.ops.common import Layer, UnsupportedError, require_same_quant

OPTIONS = {"RESIZE_BILINEAR": "ResizeBilinearOptionsT", "RESIZE_NEAREST_NEIGHBOR": "ResizeNearestNeighborOptionsT"}
NEEDS_OPTIONS: frozenset = frozenset()
ALIASES: dict = {}


def _nearest(out_size: int, in_size: int, align: bool, half: bool) -> list:
    """reference_ops GetNearestNeighbor for every output index (float32 arithmetic)."""
    f32 = np.float32
    scale = (f32(in_size - 1) / f32(out_size - 1) if align and out_size > 1
             else f32(in_size) / f32(out_size))
    offset = f32(0.5) if half else f32(0.0)
    out = []
    for i in range(out_size):
        v = f32(f32(f32(i) + offset) * scale)
        idx = int(q.round_half_away(float(v))) if align else int(np.floor(v))
        idx = min(idx, in_size - 1)
        out.append(max(0, idx) if half else idx)
    return out


def _bilinear(out_size: int, in_size: int, align: bool, half: bool) -> tuple:
    """reference_ops ResizeBilinearInteger: (lower, upper, scaled - 1024·lower) per output index."""
    def cdiv(a: int, b: int) -> int:            # C integer division (toward zero)
        return abs(a) // b * (1 if a >= 0 else -1)

    scale = ((1 << 10) * in_size + out_size // 2) // out_size
    if align and out_size > 1:
        scale = ((1 << 10) * (in_size - 1) + (out_size - 1) // 2) // (out_size - 1)
    lo, hi, frac = [], [], []
    for i in range(out_size):
        v = i * scale + scale // 2 - (1 << 9) if half else i * scale
        a = max(cdiv(v, 1 << 10), 0)
        lo.append(a)
        hi.append(min(cdiv(v + (1 << 10) - 1, 1 << 10), in_size - 1))
        frac.append(v - (1 << 10) * a)
    return lo, hi, frac


def lower(op: str, opts, ins: list, outs: list) -> Layer:
    x, y = ins[0], outs[0]
    require_same_quant(x, y, "output")
    if len(x.shape) != 4 or len(y.shape) != 4 or x.shape[0] != y.shape[0] or x.shape[3] != y.shape[3]:
        raise UnsupportedError(f"input {x.shape} and output {y.shape} must be NHWC with equal N and C")
    align = bool(getattr(opts, "alignCorners", False))
    half = bool(getattr(opts, "halfPixelCenters", False))
    (_, ih, iw, _), (_, oh, ow, _) = x.shape, y.shape
    if op == "RESIZE_NEAREST_NEIGHBOR":
        ys, xs = _nearest(oh, ih, align, half), _nearest(ow, iw, align, half)
        lo, hi, frac = ys + xs, ys + xs, [0] * (oh + ow)
    else:
        (ly, hy, fy), (lx, hx, fx) = _bilinear(oh, ih, align, half), _bilinear(ow, iw, align, half)
        lo, hi, frac = ly + lx, hy + hx, fy + fx
    # rows then columns: lower[OH + OW], upper[OH + OW], fraction (of 1024)[OH + OW]
    chan = np.array(lo + hi + frac, dtype=np.int64)
    return Layer(op, [x.index], y.index, {}, (q.INT8_MIN, q.INT8_MAX),
                 [1 if op == "RESIZE_NEAREST_NEIGHBOR" else 0], chan.astype(np.int32))
