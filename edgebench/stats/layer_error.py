"""How far an INT8 layer's output is from its FP32 counterpart (level 1: pure functions).

Per input ``i`` of N independent inputs, with ``r`` the FP32 tensor and ``q`` the INT8 tensor
dequantized (``(q - zero_point) * scale``), both flattened: signal ``S_i = sum(r**2)``, noise
``E_i = sum((r - q)**2)``, and the input's SQNR ``10 log10(S_i / E_i)`` in dB.

* A layer's SQNR is the mean over the inputs of their SQNR in dB (the SQNR of a typical input,
  the geometric mean of the noise ratios); its interval is Student's t across the inputs. An
  input whose tensors agree exactly (no noise) or whose FP32 tensor is all zeros has no SQNR
  and is left out (counted: ``n_exact``, ``n_zero``). Why not the SQNR pooled over all inputs
  (``10 log10(sum S / sum E)``): it is dominated by the rare inputs with the most noise, and
  no interval of it holds its level when the noise ratio varies across inputs as a saturating
  layer's does (simulated: 55–83% for a 95% bootstrap interval, ``benchmarks/profile_coverage.py``);
  the per-input dB values are close to normal, and the t interval holds.
* Cosine similarity ``r·q / (|r| |q|)`` and the saturated share (FP32 values beyond the INT8
  levels): means over inputs with t intervals.

What a layer adds: its SQNR drop from its worst input (the mean of the per-input differences,
paired, t interval), and its *local* SQNR by the noise budget
``1/SQNR_out = 1/SQNR_in + 1/SQNR_local`` applied to the typical values, with a percentile
bootstrap interval over inputs (resampled index sets shared by every layer, so paired). A
layer's output quantization alone (the FP32 tensor rounded with the layer's scale and zero
point, clipped to its levels) has an SQNR of its own (``output_sqnr_db``): a low one is the
quantization parameters' doing, before any kernel.

Per output channel (the last axis of a channels-last tensor, :func:`channel_figures`): each
channel's FP32 range and SQNR pooled over the inputs. Activations are quantized per tensor, so
one channel whose range dwarfs the others' sets the scale alone and crushes the rest into a few
levels; the widest channel, its share of the range and the crushed channels are named.

The worst tenth of the inputs: a layer can hurt a few inputs badly and leave the typical one
alone (a calibration that never saw some inputs' range saturates only those), so beside the
typical local SQNR comes the 10th percentile over inputs of each input's own local SQNR, with
the order-statistic interval of that quantile (``scipy.stats.quantile_test``).

The layer where the error first jumps (:func:`first_jump`): the first layer, in execution
order (the model's input quantization first), whose local SQNR — typical, or of the worst tenth
— lies, with its whole interval, more than ``jump_db`` (default 6 dB, one bit) below what 8-bit
rounding alone explains for that layer (:func:`reference_db`): its output with a range fitted to
the values it really takes on these inputs (:func:`best_sqnr_db`: 8-bit asymmetric over the
observed minimum and maximum, zero included; a reference that does not depend on the model's
calibration, so a model calibrated badly throughout is still pointed at), or with the fixed
output scale of a SOFTMAX/LOGISTIC/TANH, plus its weights' own rounding noise.
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
#: the tail of the inputs judged beside the typical one: the worst tenth
WORST = 0.1
#: a local SQNR with no added noise, as a number (for order statistics over inputs)
NO_NOISE_DB = 300.0


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
    ch_lo: Optional[np.ndarray] = None             # per output channel (last axis): FP32 extremes,
    ch_hi: Optional[np.ndarray] = None             # signal and noise power pooled over the inputs
    ch_signal: Optional[np.ndarray] = None
    ch_noise: Optional[np.ndarray] = None

    @classmethod
    def empty(cls) -> "Accumulator":
        return cls([], [], [])

    def add(self, ref: np.ndarray, test: np.ndarray, quant: Optional[tuple] = None) -> None:
        """``ref`` FP32 and ``test`` dequantized INT8, shape (n, ...); ``quant`` the INT8 tensor's
        ``(scale, zero_point, qmin, qmax)`` (its levels), for what the output quantization alone costs."""
        ref, test = np.asarray(ref, dtype=np.float64), np.asarray(test, dtype=np.float64)
        if ref.shape == test.shape and ref.ndim >= 2 and ref.shape[-1] > 1 and ref.size:
            self._add_channels(ref, test)
        r = ref.reshape(len(ref), -1)
        t = test.reshape(len(test), -1)
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


    def _add_channels(self, ref: np.ndarray, test: np.ndarray) -> None:
        c = ref.shape[-1]
        r, t = ref.reshape(-1, c), test.reshape(-1, c)
        lo, hi = r.min(axis=0), r.max(axis=0)
        sig, noi = (r * r).sum(axis=0), ((r - t) ** 2).sum(axis=0)
        c_lo, c_hi, c_sig, c_noi = self.ch_lo, self.ch_hi, self.ch_signal, self.ch_noise
        if c_lo is None or c_hi is None or c_sig is None or c_noi is None or len(c_lo) != c:
            self.ch_lo, self.ch_hi, self.ch_signal, self.ch_noise = lo, hi, sig, noi
            return
        self.ch_lo, self.ch_hi = np.minimum(c_lo, lo), np.maximum(c_hi, hi)
        self.ch_signal, self.ch_noise = c_sig + sig, c_noi + noi


#: a channel whose range is at least this many times every other channel's dominates the tensor's scale
DOMINANT_RATIO = 10.0
#: a channel's SQNR below this (dB) counts as crushed: a handful of INT8 levels
CRUSHED_DB = 20.0


def channel_figures(acc: Accumulator) -> Optional[dict]:
    """Per output channel (the last axis, channels-last): FP32 range and SQNR (pooled over the
    inputs); the widest channel and its share of the channels' ranges (its span over the sum of
    every channel's span, zero included); the channels whose
    SQNR is below :data:`CRUSHED_DB`. A channel whose range is :data:`DOMINANT_RATIO` times every
    other's sets the per-tensor INT8 scale alone and leaves the others few levels: ``dominant``."""
    c_lo, c_hi, c_sig, c_noi = acc.ch_lo, acc.ch_hi, acc.ch_signal, acc.ch_noise
    if c_lo is None or c_hi is None or c_sig is None or c_noi is None or len(c_lo) < 2:
        return None
    lo, hi = np.minimum(c_lo, 0.0), np.maximum(c_hi, 0.0)
    span = hi - lo
    total = float(span.sum())
    order = np.argsort(span)[::-1]
    widest, second = int(order[0]), float(span[order[1]])
    with np.errstate(divide="ignore", invalid="ignore"):
        db = np.where((c_sig > 0) & (c_noi > 0), 10 * np.log10(c_sig / c_noi), np.where(c_sig > 0, np.inf, np.nan))
    crushed = [int(k) for k in np.flatnonzero(np.isfinite(db) & (db < CRUSHED_DB)) if k != widest]
    ratio = float(span[widest] / second) if second > 0 else math.inf
    return {"channels": int(len(span)), "widest": widest, "widest_share": float(span[widest] / total) if total else None,
            "widest_over_next": ratio if math.isfinite(ratio) else None, "dominant": bool(ratio >= DOMINANT_RATIO),
            "crushed": crushed, "sqnr_db": [None if not np.isfinite(v) else float(v) for v in db],
            "range": [[float(a), float(b)] for a, b in zip(c_lo, c_hi)]}


#: values of each sample kept for the best-range reference (fixed positions, seeded by the size)
KEEP = 4096


def _positions(size: int) -> np.ndarray:
    if size <= KEEP:
        return np.arange(size)
    return np.sort(np.random.default_rng(size).choice(size, KEEP, replace=False))


def sqnr_db(signal: float, noise: float) -> Optional[float]:
    """10 log10(signal / noise); None without noise or without signal."""
    if noise <= 0 or signal <= 0:
        return None
    return 10.0 * math.log10(signal / noise)


def per_input_db(signal, noise) -> np.ndarray:
    """Each input's SQNR in dB: +inf without noise, NaN without signal."""
    s, e = np.asarray(signal, dtype=np.float64), np.asarray(noise, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = 10.0 * np.log10(s / e)
    out[s <= 0] = np.nan
    out[(s > 0) & (e <= 0)] = np.inf
    return out


def resamples(n: int, seed: int = 0, n_boot: int = N_BOOT) -> np.ndarray:
    """The bootstrap index sets (n_boot, n), shared by every layer of one comparison."""
    if n < 2:
        raise DataError(f"an interval across inputs needs at least 2 inputs, got {n}", "use more inputs")
    return np.random.default_rng(seed).integers(0, n, size=(n_boot, n))


@dataclass(frozen=True)
class MeanDb:
    """A mean over inputs with its Student-t interval (what every per-layer figure is)."""

    value: Optional[float]
    ci: Optional[tuple]
    n: int                  # inputs with a value
    n_exact: int = 0        # left out: no noise at all
    n_zero: int = 0         # left out: no signal (the FP32 tensor is all zeros)


def mean_t(values, level: float = 0.95, bounds: tuple = (-math.inf, math.inf)) -> MeanDb:
    """Mean of the finite values with a Student-t interval (clipped to ``bounds``)."""
    from scipy.stats import t as student_t

    v = np.asarray(values, dtype=np.float64)
    exact, zero = int(np.isposinf(v).sum()), int(np.isnan(v).sum())
    f = v[np.isfinite(v)]
    if not f.size:
        return MeanDb(None, None, 0, exact, zero)
    m = float(f.mean())
    if f.size < 2:
        return MeanDb(m, None, int(f.size), exact, zero)
    half = float(student_t.ppf(0.5 + level / 2.0, f.size - 1)) * float(f.std(ddof=1)) / math.sqrt(f.size)
    return MeanDb(m, (max(m - half, bounds[0]), min(m + half, bounds[1])), int(f.size), exact, zero)


def best_sqnr_db(acc: Accumulator, bits: int = 8) -> Optional[float]:
    """Mean per-input SQNR of the FP32 values quantized with their own observed range (min and
    max over the inputs, zero included, as a calibration on exactly these inputs would set it),
    ``bits`` asymmetric: what the layer's output could have had, whatever its calibration was."""
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
    return mean_t(per_input_db((v ** 2).sum(axis=1), ((v - q) ** 2).sum(axis=1))).value


#: operators whose INT8 output has a fixed scale and zero point (TFLite: 1/256 and -128 for SOFTMAX and
#: LOGISTIC, 1/128 and 0 for TANH): their output can be no closer than rounding with that fixed scale
FIXED_OUTPUT_OPS = frozenset({"SOFTMAX", "LOGISTIC", "TANH", "LOG_SOFTMAX"})


def reference_db(best: Optional[float], output_sqnr: Optional[float], weights_sqnr: Optional[float],
                 op: str) -> tuple:
    """``(dB, what)``: the SQNR that 8-bit rounding alone explains for one layer, the reference its own
    error is judged against. The output rounded over its own observed range (``best``), or, for an
    operator with a fixed output scale (:data:`FIXED_OUTPUT_OPS`), rounded with that scale
    (``output_sqnr``: what any INT8 kernel can reach); with the weights' own rounding noise added
    (noise powers add: ``1/ref = 1/out + 1/weights``, the weights' relative error carried to the
    output) for an operator with quantized weights."""
    fixed = op in FIXED_OUTPUT_OPS and output_sqnr is not None
    base = output_sqnr if fixed else best
    what = ("its output rounded with the operator's fixed INT8 scale" if fixed
            else "its output rounded over its own observed range")
    if base is None:
        return None, what
    if weights_sqnr is not None:
        base = -10.0 * math.log10(10.0 ** (-base / 10.0) + 10.0 ** (-weights_sqnr / 10.0))
        what += ", plus its weights' own rounding"
    return base, what


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
    n_exact: int                        # inputs whose INT8 tensor equals the FP32 one exactly
    n_zero: int                         # inputs whose FP32 tensor is all zeros

    @property
    def exact(self) -> bool:
        return self.n_exact > 0 and self.sqnr_db is None

    def to_dict(self) -> dict:
        d = asdict(self)
        for k in ("sqnr_ci", "cosine_ci", "output_sqnr_ci", "saturated_ci"):
            d[k] = list(d[k]) if d[k] is not None else None
        d["exact"] = self.exact
        return d


def layer_figures(acc: Accumulator, ci_level: float = 0.95) -> LayerFigures:
    """SQNR, cosine, the output quantization's own SQNR and the saturated share of one layer:
    means over inputs with their t intervals."""
    level = check_level(ci_level)
    sq = mean_t(per_input_db(acc.signal, acc.noise), level)
    cos = mean_t(acc.cosine, level, (-1.0, 1.0))
    own = (mean_t(per_input_db(acc.signal, acc.own), level) if len(acc.own) == len(acc.signal)
           else MeanDb(None, None, 0))
    sat = mean_t(acc.saturated, level, (0.0, 1.0)) if acc.saturated else MeanDb(None, None, 0)
    return LayerFigures(sq.value, sq.ci, cos.value, cos.ci, own.value, own.ci, sat.value, sat.ci,
                        len(acc.signal), sq.n_exact, sq.n_zero)


def _boot_mean(db: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Mean of each resample over its finite values."""
    v = db[idx]
    ok = np.isfinite(v)
    with np.errstate(invalid="ignore"):
        return np.where(ok, v, 0.0).sum(axis=1) / ok.sum(axis=1)


def _local(out_db, in_db):
    """Local SQNR (dB) from the typical output and input SQNR by the noise budget; +inf when the
    layer adds no noise."""
    added = 10.0 ** (-np.asarray(out_db) / 10.0) - 10.0 ** (-np.asarray(in_db) / 10.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(added > 0, -10.0 * np.log10(np.where(added > 0, added, 1.0)), np.inf)


def local_error(inputs: Sequence[Accumulator], out: Accumulator, idx: np.ndarray,
                ci_level: float = 0.95) -> Optional[dict]:
    """What the layer adds to the error it receives (see the module docstring): ``drop_db`` from its
    worst input with a paired t interval, ``local_sqnr_db`` (None when it adds no noise) with a
    paired bootstrap interval. None when a side has no SQNR."""
    level = check_level(ci_level)
    if not inputs:
        return None
    out_db = per_input_db(out.signal, out.noise)
    ins = [per_input_db(a.signal, a.noise) for a in inputs]
    means = [mean_t(x, level).value for x in ins]
    out_mean = mean_t(out_db, level).value
    if out_mean is None or any(m is None for m in means):
        return None
    worst = int(np.argmin([float(m) for m in means if m is not None]))
    in_db = ins[worst]
    diff = mean_t(np.where(np.isfinite(in_db) & np.isfinite(out_db), in_db - out_db, np.nan), level)
    local = float(_local(out_mean, means[worst]))
    boot = _local(_boot_mean(out_db, idx), _boot_mean(in_db, idx))
    finite = boot[np.isfinite(boot)]
    local_ci = None
    if math.isfinite(local) and finite.size >= 0.5 * boot.size:
        a = (1.0 - level) / 2.0
        lo, hi = float(np.quantile(finite, a)), float(np.quantile(finite, 1.0 - a))
        local_ci = [min(lo, local), max(hi, local)]
    return {"drop_db": diff.value, "drop_ci": list(diff.ci) if diff.ci else None, "input_sqnr_db": means[worst],
            "worst_input": worst, "local_sqnr_db": local if math.isfinite(local) else None, "local_ci": local_ci,
            **worst_tenth(out, inputs[worst], level)}


def worst_tenth(out: Accumulator, inp: Accumulator, level: float = 0.95) -> dict:
    """The local SQNR the worst tenth of the inputs get: the 10th percentile over inputs of each
    input's local SQNR (its own noise budget), with the order-statistic interval of that quantile
    (inputs independent: ``scipy.stats.quantile_test``). An input to which the layer adds no noise
    counts as NO_NOISE_DB."""
    from scipy.stats import quantile_test

    s_o, e_o = np.asarray(out.signal, dtype=np.float64), np.asarray(out.noise, dtype=np.float64)
    s_i, e_i = np.asarray(inp.signal, dtype=np.float64), np.asarray(inp.noise, dtype=np.float64)
    ok = (s_o > 0) & (s_i > 0)
    if ok.sum() < 2:
        return {"worst_tenth_sqnr_db": None, "worst_tenth_ci": None}
    added = e_o[ok] / s_o[ok] - e_i[ok] / s_i[ok]
    with np.errstate(divide="ignore", invalid="ignore"):
        local = np.where(added > 0, -10.0 * np.log10(np.where(added > 0, added, 1.0)), NO_NOISE_DB)
    point = float(np.quantile(local, WORST))
    ci = quantile_test(local, q=point, p=WORST).confidence_interval(level)
    lo, hi = (None if not np.isfinite(ci.low) else float(ci.low)), (None if not np.isfinite(ci.high) else float(ci.high))
    return {"worst_tenth_sqnr_db": None if point >= NO_NOISE_DB else point,
            "worst_tenth_ci": None if lo is None or hi is None or point >= NO_NOISE_DB else [min(lo, point), max(hi, point)]}


def first_jump(locals_: Sequence[Optional[dict]], best: Sequence[Optional[float]],
               jump_db: float = JUMP_DB) -> Optional[tuple]:
    """``(position, which)`` of the first layer whose local SQNR — of the typical input
    (``which = "typical"``) or of the worst tenth of the inputs (``"worst tenth"``) — lies, with its
    whole interval, more than ``jump_db`` below ``best`` (what its own output would have with a range
    fitted to the values it really takes: :func:`best_sqnr_db`); None when no layer does."""
    for k, (d, b) in enumerate(zip(locals_, best)):
        if not d or b is None:
            continue
        for which, key in (("typical", "local_ci"), ("worst tenth", "worst_tenth_ci")):
            if d.get(key) and d[key][1] < b - jump_db:
                return k, which
    return None


__all__ = ["Accumulator", "LayerFigures", "channel_figures", "reference_db", "FIXED_OUTPUT_OPS", "DOMINANT_RATIO", "CRUSHED_DB", "MeanDb", "layer_figures", "local_error", "first_jump", "resamples",
           "sqnr_db", "per_input_db", "mean_t", "best_sqnr_db", "N_BOOT", "JUMP_DB", "KEEP", "WORST", "worst_tenth"]
