"""The figures of a profile run (level 4): each layer's time with its interval, its share of the
whole model, the sum of the layers against the whole, the roll-up by operator type, work per MAC.

A profile run is K repeats (fresh board client each, like ``bench``); a repeat gives, for the
whole model and for each row (a layer, or a delegate's node), either samples (seconds, in
measuring order: the device counter, the isolated-operator runs) or a mean with its standard
deviation and count (``benchmark_model`` reports nothing else). Per row:

* samples: :func:`edgebench.stats.latency.summarize_runs` (pooled median; the interval from the
  repeats' medians, never narrower than the within-repeat intervals or the clock's tick);
* means: :func:`edgebench.stats.dependence.runs_interval` over the repeats' means, each with its
  Student-t interval from the tool's standard deviation and count (independent runs assumed:
  the tool keeps no samples; said in ``method``).

The sum of the layers against the whole model: per repeat, the ratio of the sum of the rows'
estimates to the whole model's, with a within-repeat interval by the delta method (the rows'
log standard errors weighted by their share of the sum and added linearly, a bound whatever their
correlation, and in quadrature the whole's); across repeats
:func:`~edgebench.stats.dependence.runs_interval` on those figures. When a repeat has no
within-repeat interval (a row or the whole timed too few times for a dependence-aware one, e.g.
a few per-layer inferences on the device counter), Student t on the repeats' log ratios (df
K - 1), at least the pooled within-repeat interval of the repeats that have one; one such repeat
alone gives no interval. The point is the sum of the rows' pooled figures over the whole's, and
the interval is widened to hold it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Optional, cast

import numpy as np

from edgebench.results.figures.profile import LayerTime, RepeatEstimate, SumRatio
from edgebench.stats.dependence import QuantileInterval, runs_interval
from edgebench.stats.latency import summarize_runs
from edgebench.stats.variation import RunFigure, own_spread_estimate

LEVEL = 0.95


@dataclass(frozen=True)
class Means:
    """What benchmark_model reports of one row in one repeat (seconds)."""

    mean_s: float
    std_s: float
    count: int


def _z() -> float:
    from scipy.stats import norm  # scipy.stats takes 1-2 s to import (measured): only when a figure is made

    return float(norm.ppf(0.5 + LEVEL / 2.0))


@dataclass(frozen=True)
class _Figure:
    """One repeat's figure as :func:`~edgebench.stats.dependence.runs_interval` takes it: the estimate,
    the standard error of its log, and that standard error's degrees of freedom."""

    estimate: float
    se_log: Optional[float]
    df: float


def _as_runs(figs: List[_Figure]) -> List[QuantileInterval]:
    """``figs`` as :func:`~edgebench.stats.dependence.runs_interval` takes them: it reads only a run's
    ``estimate``, ``se_log`` and ``df``, which a :class:`_Figure` has."""
    return cast(List[QuantileInterval], figs)


def _figure(estimate: float, low: Optional[float], high: Optional[float], quantile: float, df: float) -> _Figure:
    """A repeat's figure from its interval made with ``quantile`` (t or z) on ``df`` degrees of freedom."""
    se = None if low is None or high is None or low <= 0 else (math.log(high) - math.log(low)) / (2.0 * quantile)
    return _Figure(estimate, se, df)


def _means_interval(m: Means, resolution_s: float) -> tuple:
    from scipy.stats import t as student_t  # 1-2 s to import (measured): only when a figure is made

    if m.count < 2 or m.mean_s <= 0:
        return m.mean_s, None, None
    half = float(student_t.ppf(0.5 + LEVEL / 2.0, m.count - 1)) * m.std_s / math.sqrt(m.count)
    half = max(half, resolution_s)
    return m.mean_s, max(m.mean_s - half, m.mean_s * 1e-3), m.mean_s + half


def row_summary(per_repeat: list, resolution_s: float = 0.0, label: str = "measured") -> Optional[LayerTime]:
    """One row's figure from its repeats (each an array of seconds or a :class:`Means`);
    None when no repeat has a usable value. ``label``: the figures' (an emulated board's repeats
    are assumed to agree unless they show otherwise: :func:`edgebench.stats.variation.priors`)."""
    if per_repeat and all(isinstance(r, Means) for r in per_repeat):
        parts = [_means_interval(r, resolution_s) for r in per_repeat if r.mean_s > 0]
        if not parts:
            return None
        from scipy.stats import t as student_t  # 1-2 s to import (measured)

        figs = [_figure(p[0], p[1], p[2], float(student_t.ppf(0.5 + LEVEL / 2.0, max(r.count - 1, 1))),
                        float(max(r.count - 1, 1))) for p, r in zip(parts, [r for r in per_repeat if r.mean_s > 0])]
        iv = runs_interval(_as_runs(figs), ci_level=LEVEL, resolution_s=resolution_s, label=label)
        point = float(np.mean([p[0] for p in parts]))
        lo, hi = (None, None) if iv.low is None or iv.high is None else (min(iv.low, point), max(iv.high, point))
        return LayerTime(median_s=point, ci_low_s=lo, ci_high_s=hi, runs=len(parts),
                         n=int(sum(r.count for r in per_repeat)), statistic="mean",
                         ci_method=f"{iv.method}; each repeat's mean with a Student t interval from the tool's "
                                   "standard deviation and count (the tool keeps no samples: independent runs "
                                   "assumed)",
                         per_repeat=[RepeatEstimate(estimate_s=p[0], ci_low_s=p[1], ci_high_s=p[2]) for p in parts])
    runs = [np.asarray(r, dtype=np.float64) for r in per_repeat if r is not None and len(r) >= 2]
    if not runs:
        return None
    s = summarize_runs(runs, LEVEL, resolution_s, label=label)
    return LayerTime(median_s=s.median_s, ci_low_s=s.ci_low_s, ci_high_s=s.ci_high_s, runs=s.runs, n=s.n,
                     statistic="median", ci_method=s.ci_method, lag1_autocorr=s.lag1_autocorr,
                     per_repeat=[RepeatEstimate(estimate_s=p.median_s, ci_low_s=p.ci_low_s, ci_high_s=p.ci_high_s)
                                 for p in s.per_run or []])


def _se_log(p: RepeatEstimate) -> Optional[float]:
    lo, hi, est = p.ci_low_s, p.ci_high_s, p.estimate_s
    if lo is None or hi is None or lo <= 0 or not est:
        return None
    return (math.log(hi) - math.log(lo)) / (2.0 * _z())


def _repeats(fig: LayerTime) -> List[RepeatEstimate]:
    return fig.per_repeat or []


def sum_ratio(rows: List[LayerTime], whole: Optional[LayerTime], resolution_s: float = 0.0,
              label: str = "measured") -> Optional[SumRatio]:
    """Sum of ``rows`` (their summaries) over ``whole``'s, per repeat and across repeats."""
    if not rows or not whole or any(r is None for r in rows) or not whole.median_s:
        return None
    k = min([len(_repeats(whole))] + [len(_repeats(r)) for r in rows])
    ratios, intervals = [], []
    z = _z()
    for j in range(k):
        parts = [_repeats(r)[j] for r in rows]
        total = sum(p.estimate_s or 0.0 for p in parts)
        w = _repeats(whole)[j]
        if total <= 0 or not w.estimate_s:
            continue
        ratio = total / w.estimate_s
        ses = [_se_log(p) for p in parts] + [_se_log(w)]
        if any(s is None for s in ses):
            lo = hi = None
        else:
            # the rows' errors added as they come, not in quadrature: the rows share inferences (device
            # counter) or the board's state over the repeat, and this bound holds for any correlation
            se_sum = sum((p.estimate_s or 0.0) / total * (s or 0.0) for p, s in zip(parts, ses[:-1]))
            assert ses[-1] is not None   # every se known: checked above
            se = math.sqrt(se_sum ** 2 + ses[-1] ** 2)
            lo, hi = ratio * math.exp(-z * se), ratio * math.exp(z * se)
        ratios.append(ratio)
        intervals.append((lo, hi))
    if not ratios:
        return None
    # each repeat's ratio: a delta-method interval on the normal quantile (its df taken as large)
    figs = [_figure(r, lo, hi, z, 1000.0) for r, (lo, hi) in zip(ratios, intervals)]
    if all(f.se_log is not None for f in figs):
        iv = runs_interval(_as_runs(figs), ci_level=LEVEL, label=label)
        low, high, cv = iv.low, iv.high, iv.between_run_cv
        method = (f"{iv.method}; each repeat's ratio with a delta-method interval from the rows' and the "
                  "whole model's intervals (the rows' added linearly: any correlation between rows)")
    else:
        low, high, cv, method = _ratios_spread(figs)
    point = sum(r.median_s or 0.0 for r in rows) / whole.median_s
    lo, hi = (None, None) if low is None or high is None else (min(low, point), max(high, point))
    return SumRatio(ratio=point, ci_low=lo, ci_high=hi, ci_level=LEVEL, runs=len(ratios), per_repeat=ratios,
                    between_run_cv=cv, ci_method=method)


def _ratios_spread(figs: list) -> tuple:
    """``(low, high, between_run_cv, method)`` of the repeats' ratios when some repeat has no
    within-repeat interval (a row or the whole model timed too few times for one): Student t on the
    log ratios (df K - 1), at least the pooled within-repeat interval of the repeats that have one
    (:func:`edgebench.stats.variation.own_spread_estimate`). One repeat: no interval."""
    k = len(figs)
    if k < 2 or any(f.estimate <= 0 for f in figs):
        return None, None, None, ("one repeat whose ratio has no within-repeat interval (too few samples of a "
                                  "row or of the whole model): no interval")
    known = [f.se_log for f in figs if f.se_log is not None]
    pooled = math.sqrt(float(np.mean(np.square(known)))) if known else 0.0
    est = own_spread_estimate([RunFigure(f.estimate, f.se_log if f.se_log is not None else pooled, f.df)
                               for f in figs])
    low, high = est.interval(LEVEL)
    cv = float(np.std([math.log(f.estimate) for f in figs], ddof=1))
    return low, high, cv, (f"Student t on the log ratios of {k} repeats (df {k - 1}), at least the pooled "
                           "within-repeat interval; "
                           + ("some repeats' ratios have" if known else "the repeats' ratios have")
                           + " no within-repeat interval (too few samples of a row or of the whole model)")


def per_mac(seconds: Optional[float], macs: Optional[int], basis: Optional[dict]) -> Optional[float]:
    """Instructions or cycles per MAC of ``seconds`` of work on ``macs`` MACs (``basis``: mac_rate's clock)."""
    if seconds is None or not macs or not basis:
        return None
    return seconds * basis["per_s"] / macs


def rollup(rows: list, whole_s: Optional[float], basis: Optional[dict]) -> list:
    """Rows in the sum grouped by operator type: count, summed time, share of the whole, MACs, per MAC;
    largest first."""
    groups: dict = {}
    for r in rows:
        if not r.get("in_sum") or r.get("median_s") is None:
            continue
        g = groups.setdefault(r["op"], {"op": r["op"], "count": 0, "time_s": 0.0, "macs": 0, "macs_known": True})
        g["count"] += 1
        g["time_s"] += r["median_s"]
        if r.get("macs") is None:
            g["macs_known"] = False
        else:
            g["macs"] += int(r["macs"])
    out = []
    for g in groups.values():
        g["share"] = g["time_s"] / whole_s if whole_s else None
        g["per_mac"] = per_mac(g["time_s"], g["macs"], basis) if g["macs_known"] else None
        out.append(g)
    return sorted(out, key=lambda g: -g["time_s"])


__all__ = ["Means", "row_summary", "sum_ratio", "per_mac", "rollup", "LEVEL"]
