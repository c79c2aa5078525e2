"""Latency summaries with dependence- and run-aware intervals, and the stop rule.

Level 1: pure functions on arrays of per-inference latencies in seconds.

Intervals
---------
:func:`summarize` (one run) gives the median's interval from
:func:`edgebench.stats.dependence.quantile_interval` (batch means of the median
indicator: valid for autocorrelated samples), with the lag-1 autocorrelation and the
effective sample size. :func:`summarize_runs` (K runs, each a fresh process) pools the
samples for the median and percentiles and takes the interval from
:func:`edgebench.stats.dependence.runs_interval` (Student t on the log run medians),
which is what a re-run of the command should land in. Both respect the clock's
resolution. The stop rule uses the dependence-aware interval.

The textbook interval (kept as :func:`median_ci`)
-------------------------------------------------
The classic distribution-free interval from order statistics: with
``B ~ Binomial(n, 1/2)`` (how many of n samples fall below the true median),
take the largest ``j`` with ``P(B <= j - 1) <= (1 - ci_level) / 2``; the
interval is ``[x_(j), x_(n-j+1)]`` (1-based order statistics). Its coverage,
``1 - 2 P(B <= j - 1)``, is at least ``ci_level`` for any continuous
distribution (conservative, because order statistics are discrete). ``j`` is
found with ``scipy.stats.binom``; the interval is identical to
``scipy.stats.quantile_test(x, q=median, p=0.5).confidence_interval(ci_level)``
(the tests check this), but costs O(1) after the sort.

No order statistic reaches 95% coverage for n < 6 (``P(B = 0) = 1/32 > 0.025``
at n = 5): :func:`median_ci` then raises DataError and :func:`summarize`
records the interval as ``None`` instead of printing a narrower, dishonest one.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Optional

import numpy as np

from edgebench.errors import DataError, UsageError
from edgebench.results.figures.latency import LatencyFigure
from edgebench.stats._samples import (
    as_samples,
    check_count,
    check_level,
    format_duration_s,
    format_percent,
)

#: Smallest n for which each tail percentile is reported; below it the value is None.
#: A p-th percentile needs about 1 / (1 - p) samples before a single value beyond
#: it is even expected: p90 needs 10, p99 needs 100, p99.9 needs 1,000.
MIN_N_P90 = 10
MIN_N_P99 = 100
MIN_N_P999 = 1000


def _order_statistic_ci(sorted_s: np.ndarray, ci_level: float) -> Optional[tuple[float, float]]:
    """Order-statistic CI of the median of already sorted samples, or None if unattainable."""
    from scipy.stats import binom

    n = sorted_s.size
    alpha_half = (1.0 - ci_level) / 2.0
    m = int(binom.ppf(alpha_half, n, 0.5))  # smallest m with P(B <= m) >= alpha/2
    j = m + 1 if binom.cdf(m, n, 0.5) <= alpha_half else m  # largest j: P(B <= j-1) <= alpha/2
    if j < 1:
        return None
    return float(sorted_s[j - 1]), float(sorted_s[n - j])


def _min_n_for_ci(ci_level: float) -> int:
    """Smallest n whose extreme order statistics reach ``ci_level``: 0.5**n <= (1 - ci_level) / 2."""
    return max(2, math.ceil(math.log2(2.0 / (1.0 - ci_level)) - 1e-9))


def median_ci(samples_s, ci_level: float = 0.95) -> tuple[float, float]:
    """Nonparametric CI ``(low_s, high_s)`` of the median from order statistics.

    See the module docstring for the method. Raises DataError for bad samples
    or when n is too small for any order statistic to reach ``ci_level``
    (n < 6 at 95%); UsageError for a ``ci_level`` outside (0, 1).
    """
    level = check_level(ci_level)
    x = np.sort(as_samples(samples_s, min_n=2))
    ci = _order_statistic_ci(x, level)
    if ci is None:
        raise DataError(
            f"{x.size} samples are too few for a {level:.0%} CI of the median",
            hint=f"measure at least {_min_n_for_ci(level)} samples",
        )
    return ci


def _interval_pair(q) -> Optional[list]:
    return None if q is None or q.low is None else [q.low, q.high]


def summarize(samples_s, ci_level: float = 0.95, resolution_s: float = 0.0) -> LatencyFigure:
    """Summarize the per-inference latencies (seconds) of one run into a :class:`~edgebench.results.figures.latency.LatencyFigure`.

    The interval of the median is dependence-aware
    (:func:`edgebench.stats.dependence.quantile_interval`) and never narrower than the
    clock's ``resolution_s``. Raises DataError for fewer than 2 samples or any
    non-finite or negative value; UsageError for a ``ci_level`` outside (0, 1). A median
    of 0 s (a stage below the timer's resolution) is summarized, with
    ``inverse_median_per_s`` and ``rel_ci_halfwidth`` None.
    """
    return summarize_runs([samples_s], ci_level, resolution_s)


def summarize_runs(runs, ci_level: float = 0.95, resolution_s: float = 0.0, repeat=None,
                   label: str = "measured") -> LatencyFigure:
    """Summarize K runs (a list of 1-D arrays of latencies in seconds, each in measuring order).

    Median, percentiles, MAD and extremes come from the pooled samples; the interval of
    the median from :func:`edgebench.stats.dependence.runs_interval` over the runs' own
    dependence-aware intervals, with the between-repeat component ``repeat``
    (:class:`edgebench.stats.variation.Component`, pooled over the runs folder; or a function
    of the runs' median figures that returns it; None: these runs and the stated prior of figures
    of ``label``).
    Percentile intervals likewise, where every run has enough effective samples for one.
    """
    from scipy.stats import median_abs_deviation

    from edgebench.stats.dependence import quantile_intervals, runs_interval

    level = check_level(ci_level)
    arrays = [as_samples(r, min_n=2) for r in runs]
    if not arrays:
        raise DataError("no runs to summarize")
    x = np.sort(np.concatenate(arrays))
    n = x.size
    median = float(np.median(x))
    positive = median > 0.0
    tails = [(0.9, "p90_ci_s", MIN_N_P90), (0.99, "p99_ci_s", MIN_N_P99)]
    wanted = (0.5,) + tuple(q for q, _, min_n in tails if n >= min_n)
    each = [quantile_intervals(a, wanted, level, resolution_s) for a in arrays]  # one sort a run
    per = [e[0] for e in each]
    if callable(repeat):
        from edgebench.stats.dependence import run_figures

        figs = run_figures(per)
        repeat = repeat(figs) if figs else None
    ci_low = ci_high = None
    method, cv, head = per[0].method, None, None
    if positive and all(q.estimate > 0 for q in per):
        head = runs_interval(per, repeat, level, resolution_s, label)
        ci_low, ci_high, cv = head.low, head.high, head.between_run_cv
        method = f"{head.method}; each run: {per[0].method}" if head.low is not None else head.method
        if ci_low is not None and ci_high is not None:  # the headline must hold the pooled median beside it
            ci_low, ci_high = min(ci_low, median), max(ci_high, median)
    pct = {}
    for q, key, _min_n in tails:
        qs = [e[wanted.index(q)] for e in each] if q in wanted else []
        if qs and all(v.low is not None and v.estimate > 0 for v in qs):
            iv = runs_interval(qs, repeat, level, resolution_s, label)
            pct[key] = _tail_interval(iv, qs, level) if iv.low is not None else None
        else:
            pct[key] = None
    p50, p90, p99, p999 = (float(v) for v in np.percentile(x, [50.0, 90.0, 99.0, 99.9], method="linear"))
    for key, value in (("p90_ci_s", p90), ("p99_ci_s", p99)):   # each interval holds the figure printed beside it
        pair = pct[key]
        if pair is not None:
            pct[key] = [min(pair[0], value), max(pair[1], value)]
    weights = np.array([a.size for a in arrays], dtype=np.float64)
    return LatencyFigure(
        n=n,
        median_s=median,
        ci_low_s=ci_low,
        ci_high_s=ci_high,
        ci_level=level,
        mean_s=float(np.mean(x)),
        std_s=float(np.std(x, ddof=1)),
        mad_s=float(median_abs_deviation(x, scale=1.0)),
        mad_scaled_s=float(median_abs_deviation(x, scale="normal")),
        min_s=float(x[0]),
        max_s=float(x[-1]),
        p50_s=p50,
        p90_s=p90 if n >= MIN_N_P90 else None,
        p99_s=p99 if n >= MIN_N_P99 else None,
        p999_s=p999 if n >= MIN_N_P999 else None,
        inverse_median_per_s=1.0 / median if positive else None,
        rel_ci_halfwidth=((ci_high - ci_low) / 2.0 / median
                          if (ci_low is not None and ci_high is not None and positive) else None),
        ci_method=method,
        lag1_autocorr=float(np.average([q.lag1 for q in per], weights=weights)),
        n_eff=float(sum(q.n_eff for q in per)),
        runs=len(arrays),
        between_run_cv=cv,
        clock_resolution_s=float(resolution_s) if resolution_s else None,
        p90_ci_s=pct["p90_ci_s"],
        p99_ci_s=pct["p99_ci_s"],
        per_run=[{"median_s": q.estimate, "ci_low_s": q.low, "ci_high_s": q.high, "n": q.n,
                  "n_eff": q.n_eff, "lag1": q.lag1, "se_log": q.se_log, "df": q.df, "batch": q.batch} for q in per],
        se_log=head.se_log if head is not None else None,
        df=head.df if head is not None else None,
        repeat_variation=head.repeat_variation if head is not None else None,
        repeats_disagree_p=head.repeats_disagree_p if head is not None else None,
    )


def _tail_interval(iv, qs, level: float) -> list:
    """A tail percentile's interval: ``iv`` (the headline's between-repeat component, pooled over
    the runs folder from medians) widened to hold Student t on the runs' own tail figures (df
    K - 1) when there are two runs or more. A tail's shape moves between runs with the machine's
    state, not only its level, and the folder keeps no record of that: with K runs this
    invocation's own spread is the only evidence (benchmarks/ci_coverage.py --only-tails)."""
    from edgebench.stats.dependence import run_figures
    from edgebench.stats.variation import own_spread_estimate

    figs = run_figures(qs)
    if not figs or len(figs) < 2:
        return [iv.low, iv.high]
    lo, hi = own_spread_estimate(figs).interval(level)
    return [min(iv.low, lo), max(iv.high, hi)]


@dataclass(frozen=True)
class StopDecision:
    """Verdict of :meth:`StopRule.check`.

    ``done``: stop measuring. ``target_reached``: the CI half-width met the
    target (with the minimum samples and time). ``reason``: one sentence with
    the numbers. ``rel_ci_halfwidth`` is None while the CI is unattainable.
    """

    done: bool
    target_reached: bool
    reason: str
    n_samples: int
    rel_ci_halfwidth: Optional[float]

    def to_dict(self) -> dict:
        return asdict(self)


def _rel_halfwidth(x: np.ndarray, ci_level: float, resolution_s: float = 0.0) -> Optional[float]:
    """Relative half-width of the dependence-aware interval of the median (None: unattainable)."""
    from edgebench.stats.dependence import quantile_interval

    if x.size < 2:
        return None
    return quantile_interval(x, 0.5, ci_level, resolution_s).rel_halfwidth


@dataclass(frozen=True)
class StopRule:
    """Measure until the median's dependence-aware CI is tight enough, within time limits.

    Stop with ``target_reached`` once there are at least ``min_samples`` samples,
    at least ``min_time_s`` has elapsed, and the relative CI half-width of the
    median is <= ``target_rel_ci``. Stop without it once ``max_time_s`` has
    elapsed, whatever the state. Raises UsageError for invalid parameters.
    """

    target_rel_ci: float = 0.01
    min_samples: int = 100
    min_time_s: float = 1.0
    max_time_s: float = 30.0
    ci_level: float = 0.95
    resolution_s: float = 0.0

    def __post_init__(self):
        target = self.target_rel_ci
        if isinstance(target, bool) or not isinstance(target, (int, float)) or not 0.0 < target < 1.0:
            raise UsageError(f"target_rel_ci must be in (0, 1), got {target!r}", hint="e.g. 0.01 for 1%")
        check_count(self.min_samples, "min_samples", minimum=2)
        for name in ("min_time_s", "max_time_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) or value < 0:
                raise UsageError(f"{name} must be a finite number >= 0, got {value!r}")
        if self.max_time_s <= 0 or self.max_time_s < self.min_time_s:
            raise UsageError(
                f"max_time_s must be > 0 and >= min_time_s ({self.min_time_s:g} s), got {self.max_time_s!r}"
            )
        check_level(self.ci_level)

    def check(self, samples_s, elapsed_s: float) -> StopDecision:
        """Decide whether to stop after ``elapsed_s`` seconds with these samples."""
        if isinstance(elapsed_s, bool) or not isinstance(elapsed_s, (int, float)) or not np.isfinite(elapsed_s) or elapsed_s < 0:
            raise UsageError(f"elapsed_s must be a finite number >= 0, got {elapsed_s!r}")
        x = as_samples(samples_s, min_n=0)
        n = int(x.size)
        rel = _rel_halfwidth(x, self.ci_level, self.resolution_s)
        target = format_percent(self.target_rel_ci)
        enough = n >= self.min_samples and elapsed_s >= self.min_time_s

        if enough and rel is not None and rel <= self.target_rel_ci:
            reason = f"CI half-width {format_percent(rel)} of median <= target {target} after {n:,} samples"
            return StopDecision(True, True, reason, n, rel)

        if elapsed_s >= self.max_time_s:
            limit = f"maximum time {self.max_time_s:g} s reached"
            if rel is None:
                reason = f"{limit} after {n:,} samples, too few for a {self.ci_level:.0%} CI of the median"
            elif n < self.min_samples:
                reason = (
                    f"{limit} with only {n:,} samples < minimum {self.min_samples:,} "
                    f"(CI half-width {format_percent(rel)}, target {target})"
                )
            else:
                reason = f"{limit} with CI half-width {format_percent(rel)} > target {target} after {n:,} samples"
            return StopDecision(True, False, reason, n, rel)

        pending = []
        if n < self.min_samples:
            pending.append(f"{n:,} of minimum {self.min_samples:,} samples")
        if elapsed_s < self.min_time_s:
            pending.append(f"{format_duration_s(elapsed_s)} of minimum time {self.min_time_s:g} s")
        if rel is None:
            pending.append(f"too few samples for a {self.ci_level:.0%} CI of the median")
        elif rel > self.target_rel_ci:
            pending.append(f"CI half-width {format_percent(rel)} > target {target}")
        return StopDecision(False, False, "continuing: " + "; ".join(pending), n, rel)
