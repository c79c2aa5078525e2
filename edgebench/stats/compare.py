"""Compare two latency distributions: ratio of medians under the model of variation.

``ratio = median(a) / median(b)``. Each side is given as one or more *runs* (arrays of
per-inference latencies in measuring order; a run is one fresh process and model load) of one
invocation. Each run's median has a dependence-aware standard error
(:func:`edgebench.stats.dependence.quantile_interval`); each side's figure is the mean of its
runs' log medians with variance ``(tau2 + mean w) / K``; and (:mod:`edgebench.stats.variation`):

- runs from **different invocations**: ``var(log ratio) = var_a + var_b + 2 sigma2``, the
  between-invocation component pooled over the runs folder (or the stated prior);
- runs **interleaved in one invocation** (A B A B ..., ``same_invocation=True``): the machine
  state of that invocation fell on both, so no session term: ``var_a + var_b``.

The ratio printed is ``exp`` of the same centre the interval is built on, so it always lies
inside its interval. The p-value is the t test of ``log ratio = 0`` with the same standard error
and Welch–Satterthwaite degrees of freedom, so "p < 0.05" and "the interval excludes 1" never
disagree. A/A false-verdict rates and power are proven by simulation in
``benchmarks/ci_coverage.py``. (Welch's t on the repeats of each run, used before, ignored the
between-invocation term and called A/A differences on this project's own VM in 5 of 33 pairs.)
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np

from edgebench.errors import DataError
from edgebench.stats._samples import as_samples, check_level

#: the two cases of a comparison, as compare prints them
SAME = "interleaved in one invocation (no between-invocation term)"
DIFFERENT = "different invocations (between-invocation variation included)"


@dataclass(frozen=True)
class RatioResult:
    """``ratio = median(a) / median(b)`` with its interval and p-value.

    A ratio of 2 means a's median latency is twice b's (a is slower). ``verdict`` is
    ``"a slower"``, ``"a faster"`` or ``"no difference resolved"`` (the interval
    contains 1). ``case`` says which variance terms the interval carries.
    """

    ratio: float
    ci_low: float
    ci_high: float
    p_value: float
    test: str
    n_a: int
    n_b: int
    runs_a: int = 1
    runs_b: int = 1
    ci_level: float = 0.95
    df: float = 1.0
    ci_method: str = ""
    case: str = DIFFERENT
    se_log: float = 0.0
    session_variation: dict | None = None    # the between-invocation component (different invocations)
    repeat_variation: dict | None = None     # the between-repeat component

    @property
    def verdict(self) -> str:
        if self.ci_low > 1.0:
            return "a slower"
        if self.ci_high < 1.0:
            return "a faster"
        return "no difference resolved"

    def to_dict(self) -> dict:
        out = asdict(self)
        for key in ("ratio", "ci_low", "ci_high", "p_value", "ci_level", "df", "se_log"):
            out[key] = float(out[key])
        for key in ("n_a", "n_b", "runs_a", "runs_b"):
            out[key] = int(out[key])
        out["verdict"] = self.verdict
        return out


def _as_runs(x, name: str) -> list:
    runs = list(x) if isinstance(x, (list, tuple)) and x and all(np.ndim(r) == 1 for r in x) else [x]
    return [as_samples(r, min_n=2, name=name) for r in runs]


def _step(x: np.ndarray) -> float:
    """The clock's step as the samples show it: :func:`observed_tick`, or with too few distinct
    values for that, the smallest gap between them (an upper bound of the tick: a wider floor)."""
    from edgebench.stats.dependence import observed_tick

    tick = observed_tick(x)
    if tick > 0:
        return tick
    gaps = np.diff(np.unique(x))
    return float(gaps[gaps > 0].min()) if np.any(gaps > 0) else 0.0


def side_figures(runs, level: float, resolution_s: float) -> list:
    """The runs' medians as :class:`edgebench.stats.variation.RunFigure` (DataError when a run's
    median is 0 or it is too short for an interval)."""
    from edgebench.stats.dependence import quantile_interval
    from edgebench.stats.variation import RunFigure

    out = []
    for r in runs:
        q = quantile_interval(r, 0.5, level, resolution_s)
        if q.estimate <= 0:
            raise DataError("a run has a median of 0 s, so the ratio of medians is undefined")
        if q.se_log is None:
            raise DataError("a run is too short for an interval of its median", hint="measure more samples")
        out.append(RunFigure(q.estimate, q.se_log, float(q.df)))
    return out


def ratio_of_medians(a_runs, b_runs, ci_level: float = 0.95, same_invocation: bool = False,
                     resolution_s: float | None = None, session=None, repeat=None) -> RatioResult:
    """Ratio of median latencies of ``a_runs`` over ``b_runs`` (see the module docstring).

    ``a_runs``/``b_runs``: one 1-D array (one run) or a list of 1-D arrays (one per run).
    ``same_invocation``: the runs were interleaved in one invocation (no between-invocation
    term). ``session``/``repeat``: the between-invocation and
    between-repeat :class:`~edgebench.stats.variation.Component` pooled over the runs folder
    (None: the stated prior, and the runs given, alone).
    ``resolution_s``: the clock's tick (None: the step the samples show); no median is known
    closer than a tick, so a coarse clock cannot give a zero-width interval or a p-value of 0.
    Raises DataError for bad samples or a zero median.
    """
    from edgebench.stats.variation import REPEAT_PRIOR, SESSION_PRIOR, invocation, log_ratio, pooled_component

    level = check_level(ci_level)
    same = bool(same_invocation)
    a = _as_runs(a_runs, "a")
    b = _as_runs(b_runs, "b")
    if resolution_s is None:
        resolution_s = max(_step(np.concatenate(a)), _step(np.concatenate(b)))
    fa, fb = side_figures(a, level, resolution_s), side_figures(b, level, resolution_s)
    if repeat is None:
        repeat = pooled_component([[(f.y, f.w) for f in fa], [(f.y, f.w) for f in fb]], REPEAT_PRIOR)
    if session is None and not same:
        session = pooled_component([], SESSION_PRIOR)
    ea, _ = invocation(fa, repeat)
    eb, _ = invocation(fb, repeat)
    lr = log_ratio(ea, eb, None if same else session)
    lo, hi = lr.interval(level)
    p = lr.p_value()
    case = SAME if same else DIFFERENT
    test = (f"t on the log ratio of {len(a)} vs {len(b)} run{'s' if len(b) != 1 else ''}: {case}"
            + ("" if lr.se > 0 else "; no measurable uncertainty, so no test"))
    return RatioResult(
        ratio=lr.value, ci_low=lo, ci_high=hi, p_value=p, test=test,
        n_a=int(sum(r.size for r in a)), n_b=int(sum(r.size for r in b)), runs_a=len(a), runs_b=len(b),
        ci_level=level, df=lr.df, ci_method=f"{lr.method}; se {lr.se:.3g}, df {lr.df:.1f}", case=case,
        se_log=lr.se, session_variation=None if same else session.to_dict(), repeat_variation=repeat.to_dict())


def holm(p_values: Sequence[float]) -> list:
    """Holm–Bonferroni adjusted p-values, in the given order (Holm 1979).

    The k-th smallest of m p-values becomes ``(m - k + 1) * p``, made non-decreasing
    along the sorted order and capped at 1 (the same numbers as statsmodels'
    ``multipletests(method="holm")``, without the 65 MB dependency).
    """
    p = np.asarray(list(p_values), dtype=np.float64)
    if p.size == 0:
        return []
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, np.maximum.accumulate((p.size - np.arange(p.size)) * p[order]))
    out = np.empty_like(p)
    out[order] = scaled
    return [float(v) for v in out]


__all__ = ["RatioResult", "holm", "ratio_of_medians", "side_figures", "SAME", "DIFFERENT"]
