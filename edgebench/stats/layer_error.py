"""How far an INT8 layer's output is from its FP32 counterpart (level 1: pure functions).

Per sample ``i`` of N independent inputs, with ``r`` the FP32 tensor and ``q`` the INT8 tensor
dequantized (``(q - zero_point) * scale``), both flattened:

* signal ``S_i = sum(r**2)``, noise ``E_i = sum((r - q)**2)``;
* SQNR in dB of the layer: ``10 log10(sum S_i / sum E_i)``, the signal-to-quantization-noise
  ratio pooled over the inputs (every element of every input weighs the same, as in the usual
  per-tensor SQNR); ``None`` when the noise is exactly 0 (the two agree bit for bit);
* cosine similarity: the mean over inputs of ``r·q / (|r| |q|)``.

Intervals: the inputs are independent, so the percentile bootstrap over inputs (the same
resampled index sets for every layer, so the drop from one layer to the next is paired),
``B`` = 2000 resamples, seeded. Its coverage for the pooled SQNR and the drop, with inputs
whose signal and noise vary from one to the next as real activations do, is checked by
simulation in ``benchmarks/layer_error_coverage.py``.

What a layer adds: its SQNR drop from its worst input, and its *local* SQNR by the noise
budget (:func:`local_error`). A layer's output quantization alone (the FP32 tensor rounded
with the layer's scale and zero point, clipped to its levels) has an SQNR of its own
(``output_sqnr_db``): a low one is the quantization parameters' doing, before any kernel.
The layer where the error first jumps (:func:`first_jump`): the first layer, in execution
order (the model's input quantization first), whose local SQNR lies, with its whole interval,
more than ``jump_db`` (default 6 dB, one bit) below what its output would have with a range
fitted to the values it really takes on these inputs (:func:`best_sqnr_db`: 8-bit asymmetric
over the observed minimum and maximum, zero included) — a reference that does not depend on
the model's calibration, so a model calibrated badly throughout is still pointed at.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Optional, Sequence

import numpy as np

from edgebench.errors import DataError
from edgebench.stats._samples import check_level

N_BOOT = 2000
JUMP_DB = 6.0


@dataclass
class Accumulator:
    """Per-sample sums of one layer, filled chunk by chunk (so no tensor is kept)."""

    signal: list
    noise: list
    cosine: list
    own: list = field(default_factory=list)        # noise of rounding the FP32 tensor with the INT8 scale alone
    saturated: list = field(default_factory=list)  # share of FP32 values outside the INT8 range
    below: list = field(default_factory=list)      # ... of them below its lowest level
    clip: list = field(default_factory=list)       # squared distance of those values to the range
    lo: float = math.inf                           # FP32 extremes seen
    hi: float = -math.inf
    kept: list = field(default_factory=list)       # per sample: the FP32 values at KEEP fixed positions

    @classmethod
    def empty(cls) -> "Accumulator":
        return cls([], [], [])

    def add(self, ref: np.ndarray, test: np.ndarray, quant: Optional[tuple] = None) -> None:
        """``ref`` FP32 and ``test`` dequantized INT8, shape (n, ...); ``quant`` the INT8 tensor's
        ``(scale, zero_point, qmin, qmax)`` (its levels), for what the output quantization alone costs."""
        r = np.asarray(ref, dtype=np.float64).reshape(len(ref), -1)
        t = np.asarray(test, dtype=np.float64).reshape(len(test), -1)
        if r.shape != t.shape:
            raise DataError(f"tensors of different sizes: {r.shape} vs {t.shape}")
        self.signal += list(np.einsum("ij,ij->i", r, r))
        self.noise += list(np.einsum("ij,ij->i", r - t, r - t))
        norms = np.linalg.norm(r, axis=1) * np.linalg.norm(t, axis=1)
        dots = np.einsum("ij,ij->i", r, t)
        self.cosine += list(np.where(norms > 0, dots / np.where(norms > 0, norms, 1.0), np.nan))
        if quant is not None:
            scale, zp, qmin, qmax = quant
            rounded = (np.clip(np.rint(r / scale) + zp, qmin, qmax) - zp) * scale
            self.own += list(np.einsum("ij,ij->i", r - rounded, r - rounded))
            lo, hi = (qmin - zp - 0.5) * scale, (qmax - zp + 0.5) * scale
            self.saturated += list(((r < lo) | (r > hi)).mean(axis=1))
            self.below += list((r < lo).mean(axis=1))
            excess = r - np.clip(r, lo, hi)
            self.clip += list(np.einsum("ij,ij->i", excess, excess))
        if r.size:
            self.lo, self.hi = min(self.lo, float(r.min())), max(self.hi, float(r.max()))
            pick = _positions(r.shape[1])
            self.kept += list(r[:, pick])


#: values of each sample kept for the best-range reference (fixed positions, seeded by the size)
KEEP = 4096


def _positions(size: int) -> np.ndarray:
    if size <= KEEP:
        return np.arange(size)
    return np.sort(np.random.default_rng(size).choice(size, KEEP, replace=False))


def best_sqnr_db(acc: Accumulator, bits: int = 8) -> Optional[float]:
    """SQNR of the FP32 values quantized with their own observed range (min and max over the
    inputs, zero included, as a calibration on exactly these inputs would set it), ``bits``
    asymmetric: what the layer's output could have had, whatever its calibration was."""
    if not acc.kept or not math.isfinite(acc.lo):
        return None
    v = np.asarray(acc.kept, dtype=np.float64)
    lo, hi = min(acc.lo, 0.0), max(acc.hi, 0.0)
    if hi <= lo:
        return None
    levels = 2 ** bits - 1
    scale = (hi - lo) / levels
    zp = np.round(-lo / scale)
    q = (np.clip(np.rint(v / scale) + zp, 0, levels) - zp) * scale
    return sqnr_db(float((v ** 2).sum()), float(((v - q) ** 2).sum()))


def sqnr_db(signal: float, noise: float) -> Optional[float]:
    """10 log10(signal / noise); None for no noise, -inf-free (a zero signal gives None too)."""
    if noise <= 0 or signal <= 0:
        return None
    return 10.0 * math.log10(signal / noise)


def resamples(n: int, seed: int = 0, n_boot: int = N_BOOT) -> np.ndarray:
    """The bootstrap index sets (n_boot, n), shared by every layer of one comparison."""
    if n < 2:
        raise DataError(f"an interval across inputs needs at least 2 inputs, got {n}", "use more inputs")
    return np.random.default_rng(seed).integers(0, n, size=(n_boot, n))


def _pooled_db(s: np.ndarray, e: np.ndarray, idx: np.ndarray) -> np.ndarray:
    ss, ee = s[idx].sum(axis=1), e[idx].sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((ee > 0) & (ss > 0), 10.0 * np.log10(ss / np.where(ee > 0, ee, 1.0)), np.inf)


@dataclass(frozen=True)
class LayerFigures:
    sqnr_db: Optional[float]
    sqnr_ci: Optional[tuple]
    cosine: Optional[float]
    cosine_ci: Optional[tuple]
    output_sqnr_db: Optional[float]     # rounding the FP32 tensor with the layer's own scale and zero point
    output_sqnr_ci: Optional[tuple]
    saturated_share: Optional[float]
    saturated_ci: Optional[tuple]
    n: int
    exact: bool                         # no quantization noise at all

    def to_dict(self) -> dict:
        d = asdict(self)
        for k in ("sqnr_ci", "cosine_ci", "output_sqnr_ci", "saturated_ci"):
            d[k] = list(d[k]) if d[k] is not None else None
        return d


def _ci(boot: np.ndarray, level: float, point: Optional[float] = None) -> Optional[tuple]:
    """Percentile interval of bootstrap values (None when most resamples have no finite value),
    widened to hold ``point``."""
    finite = boot[np.isfinite(boot)]
    if finite.size < 0.5 * boot.size:
        return None
    a = (1.0 - level) / 2.0
    lo, hi = float(np.quantile(finite, a)), float(np.quantile(finite, 1.0 - a))
    if point is not None:
        lo, hi = min(lo, point), max(hi, point)
    return lo, hi


def _mean_ci(values: list, idx: np.ndarray, level: float) -> tuple:
    v = np.asarray(values, dtype=np.float64)
    if not v.size or not np.isfinite(v).all() or v.size != idx.shape[1]:
        return (float(np.nanmean(v)) if v.size and np.isfinite(v).any() else None), None
    point = float(v.mean())
    return point, _ci(v[idx].mean(axis=1), level, point)


def layer_figures(acc: Accumulator, idx: np.ndarray, ci_level: float = 0.95) -> LayerFigures:
    """SQNR, cosine, the output quantization's own SQNR and the saturated share of one layer, with
    their bootstrap intervals."""
    level = check_level(ci_level)
    s, e = np.asarray(acc.signal), np.asarray(acc.noise)
    n = s.size
    if n != idx.shape[1]:
        raise DataError(f"{n} samples for resample sets of {idx.shape[1]}")
    point = sqnr_db(float(s.sum()), float(e.sum()))
    sq_ci = _ci(_pooled_db(s, e, idx), level, point) if point is not None else None
    cos, cos_ci = _mean_ci(acc.cosine, idx, level)
    own_point = own_ci = None
    if len(acc.own) == n:
        o = np.asarray(acc.own)
        own_point = sqnr_db(float(s.sum()), float(o.sum()))
        own_ci = _ci(_pooled_db(s, o, idx), level, own_point) if own_point is not None else None
    sat, sat_ci = _mean_ci(acc.saturated, idx, level) if len(acc.saturated) == n else (None, None)
    return LayerFigures(point, sq_ci, cos, cos_ci, own_point, own_ci, sat, sat_ci, int(n),
                        point is None and float(e.sum()) == 0.0)


def _nsr(s: np.ndarray, e: np.ndarray, idx: np.ndarray) -> np.ndarray:
    ss = s[idx].sum(axis=1)
    return np.where(ss > 0, e[idx].sum(axis=1) / np.where(ss > 0, ss, 1.0), np.nan)


def local_error(inputs: Sequence[Accumulator], out: Accumulator, idx: np.ndarray,
                ci_level: float = 0.95) -> Optional[dict]:
    """What the layer adds to the error it receives: its SQNR drop from its worst input, and its
    local SQNR by the noise budget ``1/SQNR_out = 1/SQNR_in + 1/SQNR_local`` (the received noise
    assumed to pass with the signal, the added noise uncorrelated with it); both with paired
    bootstrap intervals. ``local_sqnr_db`` is None when the layer adds no noise (its output is
    no worse than its input). None when a side has no noise or no signal."""
    level = check_level(ci_level)
    if not inputs:
        return None
    s_o, e_o = np.asarray(out.signal), np.asarray(out.noise)
    ins = [(np.asarray(a.signal), np.asarray(a.noise)) for a in inputs]
    out_db = sqnr_db(float(s_o.sum()), float(e_o.sum()))
    in_db = [sqnr_db(float(s.sum()), float(e.sum())) for s, e in ins]
    if out_db is None or any(v is None for v in in_db):
        return None
    worst = int(np.argmin(in_db))
    drop = in_db[worst] - out_db
    drop_ci = _ci(_pooled_db(*ins[worst], idx) - _pooled_db(s_o, e_o, idx), level, drop)
    added = 10 ** (-out_db / 10) - 10 ** (-in_db[worst] / 10)
    local = -10.0 * math.log10(added) if added > 0 else None
    boot_added = _nsr(s_o, e_o, idx) - _nsr(*ins[worst], idx)
    with np.errstate(divide="ignore", invalid="ignore"):
        boot_local = np.where(boot_added > 0, -10.0 * np.log10(np.where(boot_added > 0, boot_added, 1.0)), np.inf)
    local_ci = _ci(boot_local, level, local) if local is not None else None
    return {"drop_db": drop, "drop_ci": list(drop_ci) if drop_ci else None, "input_sqnr_db": in_db[worst],
            "worst_input": worst, "local_sqnr_db": local, "local_ci": list(local_ci) if local_ci else None}


def first_jump(locals_: Sequence[Optional[dict]], best: Sequence[Optional[float]],
               jump_db: float = JUMP_DB) -> Optional[int]:
    """Position of the first layer whose local SQNR lies, with its whole interval, more than
    ``jump_db`` below ``best`` (what its own output would have with a range fitted to the values it
    really takes: :func:`best_sqnr_db`); None when no layer does."""
    for k, (d, b) in enumerate(zip(locals_, best)):
        if d and d.get("local_ci") and b is not None and d["local_ci"][1] < b - jump_db:
            return k
    return None


__all__ = ["Accumulator", "LayerFigures", "layer_figures", "local_error", "first_jump", "resamples",
           "sqnr_db", "best_sqnr_db", "N_BOOT", "JUMP_DB", "KEEP"]
