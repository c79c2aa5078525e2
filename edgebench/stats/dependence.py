"""Intervals for quantiles of autocorrelated samples, and for results over repeated runs.

Level 1: pure functions on arrays of latencies in seconds.

Why not the textbook interval
-----------------------------
The distribution-free order-statistic interval of a quantile assumes independent
samples. Latencies measured back to back are not: a slow stretch (a cache flushed, a
frequency step, a noisy neighbour) makes several consecutive samples slow. With lag-1
autocorrelation 0.5 the textbook 95% interval covers the median about 82% of the time,
with 0.9 about 41% (``benchmarks/ci_coverage.py``).

Within one run: batch means of the quantile indicator
-----------------------------------------------------
For the q-quantile, the sample quantile is (to first order) driven by the mean of the
indicator ``I_t = 1{x_t <= x_(q)}`` (ties count one half). Its long-run variance
``sigma2 = Var(I) * tau`` (``tau``: integrated autocorrelation time) is estimated from
non-overlapping batch means of ``I`` (Schmeiser's batch means): with ``m`` batches of
``b`` consecutive samples, ``sigma2 = b * var(batch means)``. The batch size is
``b = max(sqrt(n), 4 * tau_ar1)`` where ``tau_ar1 = (1 + r) / (1 - r)`` from the larger
lag-1 autocorrelation ``r`` of ``I`` and of the ranks of the series (the indicator's
own autocorrelation understates how long the dependence lasts), with at least
:data:`MIN_BATCHES` batches; ``sigma2``
is never taken below ``q (1 - q) tau_ar1`` (so the interval is never narrower than
the textbook one, nor than an AR(1) model of the indicator says, which protects runs
with few batches from an unluckily small batch variance). The interval is then the pair of order statistics at
ranks ``n q -/+ t_(m-1) sqrt(n sigma2)`` (Student t with ``m - 1`` degrees of freedom,
for the uncertainty of ``sigma2`` itself). The effective sample size is
``n_eff = n q (1 - q) / sigma2``. Assumptions: the series is stationary after warm-up
and its dependence dies out well within a batch. Coverage is proven by simulation
(AR(1) lognormal latencies, phi 0 / 0.5 / 0.9, n 100 / 1,000 / 10,000) in
``benchmarks/ci_coverage.py`` and checked in the tests.

Across runs: Student t on log run medians
-----------------------------------------
Runs differ from each other (a fresh process lands on other cache colours, another
core, another frequency): their medians spread several percent while each run's own
interval is a fraction of a percent. With K independent runs, the interval for the
long-run median is ``exp(mean(log m_k) -/+ t_(K-1) s / sqrt(K))`` over the run medians
``m_k`` (a random-effects model: each run median = true median x run effect x
within-run error; the spread of the run medians already contains both). It is widened,
if needed, to contain the pooled within-run interval. One run only: the within-run
interval, flagged as blind to run-to-run variation.

Clock resolution
----------------
No interval is narrower than the clock allows: each bound is at least one resolution
step from the estimate (a 1 ms tick can't resolve 2.6 ms from 3 ms).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Optional, Sequence

import numpy as np

from edgebench.errors import DataError
from edgebench.stats._samples import as_samples, check_level

#: fewest batches for the batch-means variance (t with MIN_BATCHES - 1 degrees of freedom)
MIN_BATCHES = 8
#: a batch spans at least this many integrated autocorrelation times (AR(1) approximation)
BATCH_TAUS = 4.0
#: a batch spans at least this many optimal block lengths (:func:`dependence_block`): level shifts
BLOCKS = 4.0
#: a median within this many clock ticks is "coarse": warn and say so in the claim
COARSE_TICKS = 50


@dataclass(frozen=True)
class QuantileInterval:
    """A quantile of one run with its dependence-aware interval (seconds).

    ``low``/``high`` are None when the run is too short for any order statistic to reach
    the level. ``lag1`` is the lag-1 autocorrelation of the quantile indicator, ``n_eff``
    the effective number of independent samples, ``batch`` and ``batches`` the batch
    size and count used.
    """

    q: float
    estimate: float
    low: Optional[float]
    high: Optional[float]
    ci_level: float
    n: int
    n_eff: float
    lag1: float
    batch: int
    batches: int
    se_log: Optional[float] = None    # standard error of log(estimate), from the interval
    df: int = 1                       # degrees of freedom of the t quantile used
    method: str = "batch means of the quantile indicator, Student t"

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def rel_halfwidth(self) -> Optional[float]:
        if self.low is None or self.high is None or self.estimate <= 0:
            return None
        return (self.high - self.low) / 2.0 / self.estimate


def lag1_autocorr(x) -> float:
    """Lag-1 autocorrelation of a series (0.0 for a constant or too short series)."""
    a = np.asarray(x, dtype=np.float64)
    if a.size < 3:
        return 0.0
    d = a - a.mean()
    den = float(np.dot(d, d))
    if den <= 0.0:
        return 0.0
    return float(np.dot(d[:-1], d[1:]) / den)


def _indicator(x: np.ndarray, value: float) -> np.ndarray:
    return (x < value).astype(np.float64) + 0.5 * (x == value)


def _tau_ar1(r: float) -> float:
    """Integrated autocorrelation time of an AR(1) series with lag-1 autocorrelation ``r``."""
    r = min(max(r, 0.0), 0.99)
    return (1.0 + r) / (1.0 - r)


def _batch_size(n: int, r: float, block: float = 0.0) -> int:
    b = max(math.sqrt(n), BATCH_TAUS * _tau_ar1(r), BLOCKS * block)
    return int(min(max(1, math.ceil(b)), n // MIN_BATCHES)) if n >= MIN_BATCHES else 1


#: a series longer than this is averaged in consecutive chunks before the block length is estimated
BLOCK_POINTS = 2000


def dependence_block(x) -> float:
    """How long the dependence of a series lasts, in samples: Politis & White's (2004, with Patton,
    Politis & White 2009) optimal circular block length (``arch.bootstrap.optimal_block_length``),
    which sees slowly decaying dependence and level shifts that a lag-1 autocorrelation misses.
    A long series is first averaged in consecutive chunks to at most :data:`BLOCK_POINTS` points
    (which keeps slow dependence and bounds the cost), and the length scaled back."""
    from arch.bootstrap import optimal_block_length

    a = np.asarray(x, dtype=np.float64)
    if a.size < 16 or float(np.ptp(a)) == 0.0:
        return 1.0
    agg = max(1, a.size // BLOCK_POINTS)
    if agg > 1:
        a = a[: a.size // agg * agg].reshape(-1, agg).mean(axis=1)
    with np.errstate(all="ignore"):
        b = float(optimal_block_length(a - a.mean())["circular"].iloc[0])
    return max(1.0, b) * agg if math.isfinite(b) else float(a.size * agg)


def quantile_interval(samples_s, q: float = 0.5, ci_level: float = 0.95,
                      resolution_s: float = 0.0) -> QuantileInterval:
    """Dependence-aware interval of the ``q`` quantile of one run (see the module docstring)."""
    return quantile_intervals(samples_s, (q,), ci_level, resolution_s)[0]


def quantile_intervals(samples_s, qs, ci_level: float = 0.95, resolution_s: float = 0.0) -> list:
    """:func:`quantile_interval` for several quantiles of one run, sorting it once."""
    level = check_level(ci_level)
    for q in qs:
        if not 0.0 < q < 1.0:
            raise DataError(f"quantile must be in (0, 1), got {q!r}")
    x = as_samples(samples_s, min_n=2)
    order = np.argsort(x, kind="stable")
    xs = x[order]
    ranks = np.empty(x.size, dtype=np.int64)
    ranks[order] = np.arange(x.size)
    r_rank = lag1_autocorr(ranks)
    block = dependence_block(ranks)
    return [_quantile_interval(x, xs, r_rank, block, q, level, resolution_s) for q in qs]


def _quantile_interval(x, xs, r_rank, block, q, level, resolution_s) -> QuantileInterval:
    from scipy.stats import t as student_t

    n = x.size
    est = float(np.quantile(xs, q))
    ind = _indicator(x, est)
    r = lag1_autocorr(ind)
    var_iid = q * (1.0 - q)
    b = _batch_size(n, max(r, r_rank), block)
    m = n // b if b else 0
    if m >= 2:
        used = ind[n - m * b:].reshape(m, b).mean(axis=1)
        sigma2 = max(b * float(np.var(used, ddof=1)), var_iid * _tau_ar1(r))
        tq = float(student_t.ppf(0.5 + level / 2.0, m - 1))
    else:
        sigma2, tq = var_iid, float(student_t.ppf(0.5 + level / 2.0, 1))
    half = tq * math.sqrt(n * sigma2)
    lo_rank = math.floor(n * q - half)      # 1-based ranks
    hi_rank = math.ceil(n * q + half) + 1
    low = float(xs[lo_rank - 1]) if lo_rank >= 1 else None
    high = float(xs[hi_rank - 1]) if hi_rank <= n else None
    if low is not None and high is not None and resolution_s > 0:
        low, high = min(low, est - resolution_s), max(high, est + resolution_s)
        low = max(low, 0.0)
    if low is None or high is None:
        low = high = None
    se_log = None
    if low is not None and high is not None and low > 0:
        se_log = (math.log(high) - math.log(low)) / (2.0 * tq)
    return QuantileInterval(q=q, estimate=est, low=low, high=high, ci_level=level, n=int(n),
                            n_eff=float(n * var_iid / sigma2), lag1=float(r), batch=int(b), batches=int(m),
                            se_log=se_log, df=max(1, m - 1))


@dataclass(frozen=True)
class RunsInterval:
    """The interval of one invocation's figure from its K runs (seconds), made with the model of
    variation (:mod:`edgebench.stats.variation`): within-run uncertainty plus the between-repeat
    component, pooled from the runs folder or the stated prior."""

    estimate: float           # geometric mean of the run figures
    low: Optional[float]
    high: Optional[float]
    ci_level: float
    runs: int
    between_run_cv: Optional[float]   # sd of log run figures (two or more runs)
    method: str
    se_log: Optional[float] = None    # standard error of log(estimate)
    df: Optional[float] = None        # its degrees of freedom
    repeats_disagree_p: Optional[float] = None   # set when the runs spread beyond the pooled variation
    repeat_variation: Optional[dict] = None      # the between-repeat component used (Component.to_dict())

    def to_dict(self) -> dict:
        return asdict(self)


def run_figures(per: Sequence[QuantileInterval]) -> Optional[list]:
    """The runs' figures for :mod:`edgebench.stats.variation` (None when a run has no interval)."""
    from edgebench.stats.variation import RunFigure

    if any(q.se_log is None or q.estimate <= 0 for q in per):
        return None
    return [RunFigure(q.estimate, float(q.se_log or 0.0), float(q.df)) for q in per]


def runs_interval(per: Sequence[QuantileInterval], repeat=None, ci_level: float = 0.95,
                  resolution_s: float = 0.0, label: str = "measured") -> RunsInterval:
    """Interval of an invocation's figure from its runs' own intervals ``per``.

    ``repeat``: the between-repeat :class:`~edgebench.stats.variation.Component` pooled over the
    runs folder (None: these runs and the stated prior of figures of ``label`` alone,
    :func:`edgebench.stats.variation.priors`). The centre is the geometric mean
    of the run figures; the variance ``(tau2 + mean w) / K`` (Welch–Satterthwaite df). When the
    runs spread more than that allows (chi-squared, 1%), their own spread is used instead
    (Student t, df K - 1) and ``repeats_disagree_p`` says so. No bound is closer than a clock tick.
    """
    from edgebench.stats.variation import invocation, pooled_component, priors

    level = check_level(ci_level)
    if not per:
        raise DataError("no runs to combine")
    k = len(per)
    figs = run_figures(per)
    logs = [math.log(q.estimate) for q in per if q.estimate > 0]
    centre = float(np.exp(np.mean(logs))) if len(logs) == k else float(np.median([q.estimate for q in per]))
    cv = float(np.std(logs, ddof=1)) if k > 1 and len(logs) == k else None
    if figs is None:
        return RunsInterval(estimate=centre, low=None, high=None, ci_level=level, runs=k, between_run_cv=cv,
                            method="a run has too few effective samples for an interval")
    if repeat is None:
        repeat = pooled_component([[(f.y, f.w) for f in figs]], priors(label)[0])
    est, disagree = invocation(figs, repeat)
    lo, hi = est.interval(level)
    if resolution_s > 0:
        lo, hi = max(0.0, min(lo, est.value - resolution_s)), max(hi, est.value + resolution_s)
    return RunsInterval(estimate=est.value, low=lo, high=hi, ci_level=level, runs=k, between_run_cv=cv,
                        method=est.method, se_log=est.se, df=est.df, repeats_disagree_p=disagree,
                        repeat_variation=repeat.to_dict())


def mean_se(x) -> Optional[tuple]:
    """``(mean, se, df)`` of a series' mean (in measuring order), its standard error by batch means
    with the same batch rule as the quantiles (at least :data:`MIN_BATCHES` batches, never below
    the independent-samples one); None when the series is too short."""
    a = np.asarray(x, dtype=np.float64)
    n = a.size
    if n < 2 * MIN_BATCHES:
        return None
    b = _batch_size(n, lag1_autocorr(a), dependence_block(a))
    m = n // b
    if m < 2:
        return None
    batches = a[n - m * b:].reshape(m, b).mean(axis=1)
    var = max(float(np.var(batches, ddof=1)) / m, float(np.var(a, ddof=1)) / n)
    return float(a.mean()), math.sqrt(var), m - 1


def mean_se_log(x) -> Optional[tuple]:
    """``(mean, se_log, df)``: :func:`mean_se` with the standard error of the mean's log; None when
    the series is too short or its mean not positive. Used for a throughput: completed inferences
    over the wall time of a window is one over the mean time from one inference's start to the next."""
    a = np.asarray(x, dtype=np.float64)
    if not a.size or float(a.mean()) <= 0:
        return None
    got = mean_se(a)
    if got is None:
        return None
    mean, se, df = got
    return mean, se / mean, df


#: fewer samples than this: no judgement on level shifts
REGIME_MIN_N = 200
#: segments a run is cut into to look for level shifts
REGIME_SEGMENTS = 10
#: level shifts are reported when the segments' spread has p below this under the AR(1) model...
REGIME_P = 1e-3
#: ... and the segment medians span at least this fraction of the median
REGIME_MIN_SPREAD = 0.01


def level_shifts(samples_s, q: float = 0.5) -> Optional[dict]:
    """Does the run show regimes (level shifts lasting longer than its short-range dependence)?

    The run is cut into :data:`REGIME_SEGMENTS` consecutive segments; under a stationary series
    whose dependence is what the lag-1 autocorrelation says (AR(1), ``tau``), the segments' means
    of the median indicator vary with variance ``q (1 - q) tau / b``. A spread beyond that
    (chi-squared, p < :data:`REGIME_P`) with segment medians at least :data:`REGIME_MIN_SPREAD`
    apart is reported: ``{segments, segment_medians_s, spread_rel, p_value}``; else None.
    """
    from scipy.stats import chi2

    x = as_samples(samples_s, min_n=2)
    n = x.size
    if n < REGIME_MIN_N:
        return None
    med = float(np.quantile(x, q))
    if med <= 0:
        return None
    ind = _indicator(x, med)
    ranks = np.argsort(np.argsort(x, kind="stable"), kind="stable")
    tau = _tau_ar1(max(lag1_autocorr(ind), lag1_autocorr(ranks)))
    m = REGIME_SEGMENTS
    b = n // m
    used = x[n - m * b:].reshape(m, b)
    means = ind[n - m * b:].reshape(m, b).mean(axis=1)
    stat = (m - 1) * float(np.var(means, ddof=1)) * b / (q * (1 - q) * tau)
    p = float(chi2.sf(stat, m - 1))
    meds = np.median(used, axis=1)
    spread = float((meds.max() - meds.min()) / med)
    if p >= REGIME_P or spread < REGIME_MIN_SPREAD:
        return None
    return {"segments": m, "segment_medians_s": [float(v) for v in meds], "spread_rel": spread,
            "p_value": max(p, 1e-300)}


def observed_tick(samples_s, reported_s: float = 0.0) -> float:
    """The clock's step as the data show it: the smallest positive gap between distinct
    values (a clock may report 1 ns and tick in 10s of ns), never below ``reported_s``."""
    x = np.unique(np.asarray(samples_s, dtype=np.float64))
    gaps = np.diff(x)
    gaps = gaps[gaps > 0]
    if gaps.size < 10:  # too few distinct values to say
        return float(reported_s)
    return float(max(reported_s, np.min(gaps)))


def coarse_clock(median_s: float, resolution_s: float) -> bool:
    """True when the median spans fewer than :data:`COARSE_TICKS` ticks of the clock."""
    return resolution_s > 0 and median_s < COARSE_TICKS * resolution_s


__all__ = ["QuantileInterval", "RunsInterval", "coarse_clock", "dependence_block", "lag1_autocorr", "level_shifts",
           "mean_se", "mean_se_log", "observed_tick", "quantile_interval", "quantile_intervals", "run_figures", "runs_interval",
           "COARSE_TICKS", "MIN_BATCHES"]
