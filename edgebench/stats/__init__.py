"""Statistics for honest benchmarks (level 1): pure functions, no I/O.

- :mod:`.variation`  the model of variation: between-repeat and between-invocation components
                     pooled over the runs folder with stated priors; invocation, session and
                     ratio estimates
- :mod:`.dependence` intervals of quantiles of autocorrelated runs (batch means), level shifts
- :mod:`.latency`   summaries with dependence- and run-aware intervals; the stop rule
- :mod:`.warmup`    end of warm-up by MSER-5
- :mod:`.compare`   ratio of medians under the model of variation
- :mod:`.stability` warnings with remedies (spread, drift, outliers, too few samples)

All times are in seconds. scipy is imported inside the functions that use it,
so importing this package stays cheap.
"""
from edgebench.results.figures.latency import LatencyFigure
from edgebench.stats.compare import RatioResult, ratio_of_medians
from edgebench.stats.latency import StopDecision, StopRule, median_ci, summarize
from edgebench.stats.stability import StabilityWarning, instability_warnings
from edgebench.stats.warmup import WarmupResult, detect_warmup


def preload() -> None:
    """Import scipy.stats now (seconds when cold) instead of at its first use, which may fall in
    the middle of a timed schedule (a fixed-rate run, a soak) and stall the load."""
    import scipy.stats  # noqa: F401
    from arch.bootstrap import optimal_block_length  # noqa: F401  (~1 s cold: the batch-size rule uses it)


__all__ = [
    "preload",
    "LatencyFigure",
    "RatioResult",
    "StabilityWarning",
    "StopDecision",
    "StopRule",
    "WarmupResult",
    "detect_warmup",
    "instability_warnings",
    "median_ci",
    "ratio_of_medians",
    "summarize",
]
