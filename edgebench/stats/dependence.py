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


def _batch_size(n: int, r: float) -> int:
    b = max(math.sqrt(n), BATCH_TAUS * _tau_ar1(r))
    return int(min(max(1, math.ceil(b)), n // MIN_BATCHES)) if n >= MIN_BATCHES else 1


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
    return [_quantile_interval(x, xs, r_rank, q, level, resolution_s) for q in qs]


def _quantile_interval(x, xs, r_rank, q, level, resolution_s) -> QuantileInterval:
    from scipy.stats import t as student_t

    n = x.size
    est = float(np.quantile(xs, q))
    ind = _indicator(x, est)
    r = lag1_autocorr(ind)
    var_iid = q * (1.0 - q)
    b = _batch_size(n, max(r, r_rank))
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
    if low is not None and low > 0:
        se_log = (math.log(high) - math.log(low)) / (2.0 * tq)
    return QuantileInterval(q=q, estimate=est, low=low, high=high, ci_level=level, n=int(n),
                            n_eff=float(n * var_iid / sigma2), lag1=float(r), batch=int(b), batches=int(m),
                            se_log=se_log, df=max(1, m - 1))


@dataclass(frozen=True)
class RunsInterval:
    """An interval for the long-run median from K runs (seconds)."""

    estimate: float           # geometric mean of the run medians
    low: Optional[float]
    high: Optional[float]
    ci_level: float
    runs: int
    between_run_cv: Optional[float]   # sd of log run medians (≈ coefficient of variation)
    method: str
    # sessions only: where the median of one more invocation should fall (a prediction interval)
    rerun_low: Optional[float] = None
    rerun_high: Optional[float] = None

    def to_dict(self) -> dict:
        return asdict(self)


def runs_interval(run_medians: Sequence[float], run_intervals: Sequence[tuple] = (),
                  ci_level: float = 0.95, resolution_s: float = 0.0) -> RunsInterval:
    """Interval for the median over repeated runs (Student t on log run medians).

    ``run_intervals`` are the runs' own (low, high) within-run intervals: with one run the
    result is that run's interval; with several, the between-run interval is widened if
    needed to contain the pooled within-run uncertainty.
    """
    from scipy.stats import norm, t as student_t

    level = check_level(ci_level)
    m = np.asarray(run_medians, dtype=np.float64)
    if m.size < 1 or not np.all(np.isfinite(m)) or np.any(m <= 0):
        raise DataError("run medians must be one or more positive finite numbers")
    k = int(m.size)
    logs = np.log(m)
    centre = float(np.exp(logs.mean()))
    z = float(norm.ppf(0.5 + level / 2.0))
    # within-run standard errors on the log scale from each run's own interval
    w_se = []
    for (lo, hi), _med in zip(run_intervals, m):
        if lo is not None and hi is not None and lo > 0:
            w_se.append((math.log(hi) - math.log(lo)) / (2.0 * z))
        else:
            w_se.append(float("nan"))
    w_se = np.asarray(w_se, dtype=np.float64)
    if k == 1:
        if run_intervals and w_se.size and np.isfinite(w_se[0]):
            lo, hi = run_intervals[0]
        else:
            lo = hi = None
        method = "one run: within-run interval only (run-to-run variation not measured)"
        cv = None
    else:
        s = float(np.std(logs, ddof=1))
        se = s / math.sqrt(k)
        if w_se.size == k and np.all(np.isfinite(w_se)):
            se = max(se, math.sqrt(float(np.mean(w_se ** 2)) / k))
        half = float(student_t.ppf(0.5 + level / 2.0, k - 1)) * se
        lo, hi = centre * math.exp(-half), centre * math.exp(half)
        method = f"Student t on log medians of {k} runs (df {k - 1}), at least the pooled within-run interval"
        cv = s
    if lo is not None and resolution_s > 0:
        lo, hi = max(0.0, min(lo, centre - resolution_s)), max(hi, centre + resolution_s)
    return RunsInterval(estimate=centre, low=lo, high=hi, ci_level=level, runs=k,
                        between_run_cv=cv, method=method)


def _z_equivalent(median: float, interval: tuple, runs: Optional[int], level: float) -> tuple:
    """An interval made with Student t on ``runs`` run medians (df runs - 1), rescaled to the
    normal quantile, so that its half-width over z is the session's standard error (on the log
    scale); one run's (or an unknown count's) interval is returned as it is."""
    from scipy.stats import norm, t as student_t

    lo, hi = interval
    if not runs or runs < 2 or lo is None or hi is None or lo <= 0 or median <= 0:
        return interval
    shrink = float(norm.ppf(0.5 + level / 2.0)) / float(student_t.ppf(0.5 + level / 2.0, runs - 1))
    return (median * math.exp(math.log(lo / median) * shrink), median * math.exp(math.log(hi / median) * shrink))


def sessions_interval(this_median: float, this_interval: tuple, earlier_medians: Sequence[float] = (),
                      earlier_intervals: Sequence[tuple] = (), ci_level: float = 0.95,
                      resolution_s: float = 0.0, runs: Sequence[Optional[int]] = ()) -> RunsInterval:
    """Interval for the long-run median from this invocation and earlier ones (sessions).

    Repeats inside one invocation share the machine's state of that minute (which core the
    hypervisor gives, cache and memory placement, frequency), so their spread understates what
    a later invocation sees. Each *session* (one invocation of the command, K repeats) gives one
    median and its own interval; with H earlier sessions of the same measurement this is
    :func:`runs_interval` over the H + 1 session medians (Student t on their logs, df H, at
    least the pooled within-session uncertainty), widened if needed to contain this session's
    own interval and median, so that the headline never claims less uncertainty than the
    invocation alone shows. ``rerun_low``/``rerun_high`` is the prediction interval of one
    more session's median (Student t, df H, times sqrt(1 + 1/(H + 1)), the spread never taken below a
    session's own standard error nor the clock's resolution). With no earlier session it is this session's interval, and
    ``runs`` is 1: between-session variation not measured.

    ``runs``: how many repeats each session's interval (this one first) was made from, with
    Student t on that many run medians; their standard errors are read back with that t, not
    with the normal quantile (which would count the small-sample widening twice).
    """
    lo0, hi0 = this_interval
    if not earlier_medians:
        return RunsInterval(estimate=float(this_median), low=lo0, high=hi0, ci_level=check_level(ci_level),
                            runs=1, between_run_cv=None,
                            method="this invocation only (between-session variation not measured)")
    level = check_level(ci_level)
    medians = [this_median, *earlier_medians]
    counts = list(runs) + [None] * (len(medians) - len(runs))
    z_intervals = [_z_equivalent(m, i, k, level)
                   for m, i, k in zip(medians, [this_interval, *earlier_intervals], counts)]
    iv = runs_interval(medians, z_intervals, level, resolution_s)
    low, high = iv.low, iv.high
    if low is not None and lo0 is not None:
        low, high = min(low, lo0, this_median), max(high, hi0, this_median)
    k = iv.runs
    # prediction interval of the next session's median: t(df k-1) * s * sqrt(1 + 1/k) on the logs, s
    # never below a session's own standard error (sessions that agree by chance do not make a re-run
    # exact) nor the clock's resolution
    from scipy.stats import norm, t as student_t

    z = float(norm.ppf(0.5 + iv.ci_level / 2.0))
    own = [(math.log(hi) - math.log(lo)) / (2.0 * z) for lo, hi in z_intervals
           if lo is not None and hi is not None and lo > 0]
    s = max(iv.between_run_cv, math.sqrt(sum(v * v for v in own) / len(own)) if own else 0.0)
    pred = float(student_t.ppf(0.5 + iv.ci_level / 2.0, k - 1)) * s * math.sqrt(1.0 + 1.0 / k)
    r_low, r_high = iv.estimate * math.exp(-pred), iv.estimate * math.exp(pred)
    if resolution_s > 0:
        r_low, r_high = max(0.0, min(r_low, iv.estimate - resolution_s)), max(r_high, iv.estimate + resolution_s)
    return RunsInterval(estimate=iv.estimate, low=low, high=high, ci_level=iv.ci_level, runs=k,
                        between_run_cv=iv.between_run_cv, rerun_low=r_low, rerun_high=r_high,
                        method=(f"Student t on log medians of {k} sessions (this invocation and {k - 1} earlier "
                                f"run{'s' if k > 2 else ''} of the same model and conditions, df {k - 1}), at "
                                "least this invocation's interval"))


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


__all__ = ["QuantileInterval", "RunsInterval", "coarse_clock", "lag1_autocorr", "observed_tick",
           "quantile_interval", "quantile_intervals", "runs_interval", "sessions_interval", "COARSE_TICKS", "MIN_BATCHES"]
