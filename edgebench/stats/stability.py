"""Stability warnings for a latency series, each with a remedy (in the spirit of pyperf).

Pass the samples *after* warm-up, in measurement order (the drift check
compares the first and last quarter of the series). Checks and thresholds:

``too-few``  fewer than :data:`MIN_SAMPLES` samples: no other check is run.
``spread``   robust coefficient of variation (normal-scaled MAD / median) above
             :data:`SPREAD_ROBUST_CV_MAX`, or p99 / median above
             :data:`SPREAD_P99_RATIO_MAX` (only when p99 is reported, n >= 100).
``drift``    within each run, the medians of the last and first quarter differ; over the
             runs, their mean log ratio differs by more than :data:`DRIFT_REL_MIN` *and*
             a test that respects dependence and repeats gives p < :data:`DRIFT_P_MAX`:
             each quarter's median has a batch-means standard error
             (:func:`edgebench.stats.dependence.quantile_interval`), and with several runs
             the spread of their log ratios is the floor of the standard error (Student
             t, df runs - 1). The p-value is printed as a bound (never ``p=0``). A
             Mann-Whitney U test on pooled repeats, used before, treated autocorrelated
             samples as independent and the step between two repeats as drift.
``outliers`` more than :data:`OUTLIER_FRACTION_MAX` of the samples exceed
             median + :data:`OUTLIER_MAD_MULTIPLE` x normal-scaled MAD. The scale
             is floored at :data:`OUTLIER_SCALE_FLOOR_REL` x median so that a coarse
             timer, whose ticks can make the MAD zero, does not turn every tick
             above the median into an "outlier".

With a median of 0 s (a stage below the timer's resolution) the relative checks
``spread`` and ``outliers`` are skipped.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Optional

import numpy as np

from edgebench.errors import UsageError
from edgebench.results.figures.latency import LatencyFigure
from edgebench.stats._samples import as_samples, format_duration_s, format_percent
from edgebench.stats.latency import summarize

MIN_SAMPLES = 20
SPREAD_ROBUST_CV_MAX = 0.10
SPREAD_P99_RATIO_MAX = 2.0
DRIFT_REL_MIN = 0.05
DRIFT_P_MAX = 0.01
OUTLIER_MAD_MULTIPLE = 10.0
OUTLIER_FRACTION_MAX = 0.01
OUTLIER_SCALE_FLOOR_REL = 0.01

REMEDY_TOO_FEW = "raise --min-samples"
REMEDY_SPREAD = (
    "close other programs, pin the CPU governor to performance (cpufreq), "
    "isolate a core with taskset, or raise --min-samples"
)
REMEDY_DRIFT = "the device may be throttling or still warming up: run `edgebench soak` first, or lengthen warm-up"
REMEDY_OUTLIERS = (
    "interrupts or background load are stalling some inferences: stop background services, "
    "move IRQs off the benchmark core (irqbalance, /proc/irq/*/smp_affinity) and pin it with taskset"
)


@dataclass(frozen=True)
class StabilityWarning:
    """One problem with a latency series: a short ``code``, a ``message`` with the numbers, a ``remedy``."""

    code: str
    message: str
    remedy: str

    def to_dict(self) -> dict:
        return asdict(self)


def _spread(median_s: float, mad_scaled_s: float, p99_s: Optional[float]) -> Optional[StabilityWarning]:
    if median_s <= 0.0:
        return None  # relative spread is undefined for a 0 s median
    robust_cv = mad_scaled_s / median_s
    problems = []
    if robust_cv > SPREAD_ROBUST_CV_MAX:
        problems.append(
            f"robust CV (scaled MAD / median) is {format_percent(robust_cv)} > {format_percent(SPREAD_ROBUST_CV_MAX)}"
        )
    if p99_s is not None:
        tail = p99_s / median_s
        if tail > SPREAD_P99_RATIO_MAX:
            problems.append(f"p99 is {tail:.1f}x the median (> {SPREAD_P99_RATIO_MAX:.1f}x)")
    if not problems:
        return None
    return StabilityWarning("spread", "latencies vary widely: " + "; ".join(problems), REMEDY_SPREAD)


def drift_test(runs) -> Optional[dict]:
    """Last quarter against first quarter of each run (see the module docstring):
    ``{rel, p_value, runs, first_s, last_s}`` or None when too short."""
    from scipy.stats import norm
    from scipy.stats import t as student_t

    from edgebench.stats.dependence import quantile_interval

    d, var, dfs, firsts, lasts = [], [], [], [], []
    for r in runs:
        q = r.size // 4
        if q < 8:
            continue
        a, b = quantile_interval(r[:q]), quantile_interval(r[-q:])
        if a.estimate <= 0 or b.estimate <= 0 or a.se_log is None or b.se_log is None:
            continue
        d.append(math.log(b.estimate / a.estimate))
        var.append(a.se_log ** 2 + b.se_log ** 2)
        dfs.append(min(a.df, b.df))
        firsts.append(a.estimate)
        lasts.append(b.estimate)
    if not d:
        return None
    k = len(d)
    centre = float(np.mean(d))
    se2 = float(np.mean(var)) / k
    df = float(min(dfs))
    if k >= 2 and float(np.var(d, ddof=1)) / k > se2:
        se2, df = float(np.var(d, ddof=1)) / k, float(k - 1)
    if se2 <= 0:   # no measurable noise at all: any change is a change (p is then printed as a bound)
        z = math.inf if centre != 0 else 0.0
    else:
        z = abs(centre) / math.sqrt(se2)
    p = float(2.0 * (student_t.sf(z, df) if df < 1e6 else norm.sf(z)))
    return {"rel": math.expm1(centre), "p_value": p, "runs": k, "first_s": float(np.median(firsts)),
            "last_s": float(np.median(lasts))}


def _drift(runs) -> Optional[StabilityWarning]:
    t = drift_test(runs)
    if t is None or abs(t["rel"]) <= DRIFT_REL_MIN or not t["p_value"] < DRIFT_P_MAX:
        return None
    direction = "slower" if t["rel"] > 0 else "faster"
    over = f"over {t['runs']} runs" if t["runs"] > 1 else "in the run"
    message = (
        f"latency drifts: the last quarter of each run is {direction} by {format_percent(abs(t['rel']))} than "
        f"the first {over} (median {format_duration_s(t['last_s'])} vs {format_duration_s(t['first_s'])}, "
        f"dependence-aware test p<{DRIFT_P_MAX:g})"
    )
    return StabilityWarning("drift", message, REMEDY_DRIFT)


def _outliers(x: np.ndarray, median_s: float, mad_scaled_s: float) -> Optional[StabilityWarning]:
    if median_s <= 0.0:
        return None  # a 0 s median means timer ticks, not outliers
    scale = max(mad_scaled_s, OUTLIER_SCALE_FLOOR_REL * median_s)
    threshold = median_s + OUTLIER_MAD_MULTIPLE * scale
    count = int(np.count_nonzero(x > threshold))
    fraction = count / x.size
    if fraction <= OUTLIER_FRACTION_MAX:
        return None
    message = (
        f"{format_percent(fraction)} of samples ({count:,} of {x.size:,}) are outliers above "
        f"{format_duration_s(threshold)} (median + {OUTLIER_MAD_MULTIPLE:g} scaled MAD), "
        f"more than {format_percent(OUTLIER_FRACTION_MAX)}"
    )
    return StabilityWarning("outliers", message, REMEDY_OUTLIERS)


def instability_warnings(samples_s, summary: Optional[LatencyFigure] = None, runs=None) -> list[StabilityWarning]:
    """Warnings about the stability of ``samples_s`` (post-warm-up, in order); empty if clean.

    ``summary``: :func:`~edgebench.stats.latency.summarize` of the same samples,
    to avoid recomputing it (UsageError if its ``n`` differs, or it lacks the median or the
    scaled MAD). ``runs``: the same samples
    as the separate runs they came from (drift is judged within each run). Raises
    DataError for bad samples.
    """
    x = as_samples(samples_s, min_n=1)
    if x.size < MIN_SAMPLES:
        return [
            StabilityWarning(
                "too-few",
                f"only {x.size:,} samples: at least {MIN_SAMPLES} are needed to judge stability",
                REMEDY_TOO_FEW,
            )
        ]
    if summary is None:
        summary = summarize(x)
    elif summary.n != x.size:
        raise UsageError(f"summary is of {summary.n:,} samples but {x.size:,} were given")
    median_s, mad_scaled_s = summary.median_s, summary.mad_scaled_s
    if median_s is None or mad_scaled_s is None:     # summarize() always sets both
        raise UsageError("summary lacks the median or the scaled MAD: pass summarize()'s of the same samples")
    parts = [as_samples(r, min_n=1) for r in runs] if runs is not None else [x]
    found = (_spread(median_s, mad_scaled_s, summary.p99_s), _drift(parts), _outliers(x, median_s, mad_scaled_s))
    return [w for w in found if w is not None]
