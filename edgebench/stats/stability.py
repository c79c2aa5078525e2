"""Stability warnings for a latency series, each with a remedy (in the spirit of pyperf).

Pass the samples *after* warm-up, in measurement order (the drift check
compares the first and last quarter of the series). Checks and thresholds:

``too-few``  fewer than :data:`MIN_SAMPLES` samples: no other check is run.
``spread``   robust coefficient of variation (normal-scaled MAD / median) above
             :data:`SPREAD_ROBUST_CV_MAX`, or p99 / median above
             :data:`SPREAD_P99_RATIO_MAX` (only when p99 is reported, n >= 100).
``drift``    the medians of the last and first quarter differ by more than
             :data:`DRIFT_REL_MIN` of the first *and* a two-sided Mann-Whitney U
             test between the two quarters gives p < :data:`DRIFT_P_MAX`.
``outliers`` more than :data:`OUTLIER_FRACTION_MAX` of the samples exceed
             median + :data:`OUTLIER_MAD_MULTIPLE` x normal-scaled MAD. The scale
             is floored at :data:`OUTLIER_SCALE_FLOOR_REL` x median so that a coarse
             timer, whose ticks can make the MAD zero, does not turn every tick
             above the median into an "outlier".

With a median of 0 s (a stage below the timer's resolution) the relative checks
``spread`` and ``outliers`` are skipped.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Optional

import numpy as np

from edgebench.errors import UsageError
from edgebench.stats._samples import as_samples, format_duration_s, format_percent
from edgebench.stats.latency import LatencySummary, summarize

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


def _spread(summary: LatencySummary) -> Optional[StabilityWarning]:
    if summary.median_s <= 0.0:
        return None  # relative spread is undefined for a 0 s median
    robust_cv = summary.mad_scaled_s / summary.median_s
    problems = []
    if robust_cv > SPREAD_ROBUST_CV_MAX:
        problems.append(
            f"robust CV (scaled MAD / median) is {format_percent(robust_cv)} > {format_percent(SPREAD_ROBUST_CV_MAX)}"
        )
    if summary.p99_s is not None:
        tail = summary.p99_s / summary.median_s
        if tail > SPREAD_P99_RATIO_MAX:
            problems.append(f"p99 is {tail:.1f}x the median (> {SPREAD_P99_RATIO_MAX:.1f}x)")
    if not problems:
        return None
    return StabilityWarning("spread", "latencies vary widely: " + "; ".join(problems), REMEDY_SPREAD)


def _drift(x: np.ndarray) -> Optional[StabilityWarning]:
    from scipy.stats import mannwhitneyu

    q = x.size // 4
    first, last = x[:q], x[-q:]
    m_first, m_last = float(np.median(first)), float(np.median(last))
    if m_first <= 0.0:
        return None
    rel = (m_last - m_first) / m_first
    if abs(rel) <= DRIFT_REL_MIN:
        return None
    p = float(mannwhitneyu(first, last, alternative="two-sided").pvalue)
    if not p < DRIFT_P_MAX:
        return None
    direction = "slower" if rel > 0 else "faster"
    message = (
        f"latency drifts: the last quarter is {direction} by {format_percent(abs(rel))} than the first "
        f"(median {format_duration_s(m_last)} vs {format_duration_s(m_first)}, Mann-Whitney p={p:.2g})"
    )
    return StabilityWarning("drift", message, REMEDY_DRIFT)


def _outliers(x: np.ndarray, summary: LatencySummary) -> Optional[StabilityWarning]:
    if summary.median_s <= 0.0:
        return None  # a 0 s median means timer ticks, not outliers
    scale = max(summary.mad_scaled_s, OUTLIER_SCALE_FLOOR_REL * summary.median_s)
    threshold = summary.median_s + OUTLIER_MAD_MULTIPLE * scale
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


def instability_warnings(samples_s, summary: Optional[LatencySummary] = None) -> list[StabilityWarning]:
    """Warnings about the stability of ``samples_s`` (post-warm-up, in order); empty if clean.

    ``summary``: :func:`~edgebench.stats.latency.summarize` of the same samples,
    to avoid recomputing it (UsageError if its ``n`` differs). Raises DataError
    for bad samples.
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
    found = (_spread(summary), _drift(x), _outliers(x, summary))
    return [w for w in found if w is not None]
