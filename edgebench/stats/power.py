"""What a decision can detect (level 1: pure functions).

A comparison of two figures is a log ratio with a variance and degrees of freedom
(:class:`edgebench.stats.variation.LogEstimate`). Its verdict is two-sided at ``alpha``
(Holm-adjusted over ``tests`` stages: the first, strictest step uses ``alpha / tests``), so
a true log ratio ``delta`` is called with probability about
``P(T_df > t_{1-a/2,df} - delta / se)``; the **minimum detectable effect** is the smallest
ratio called with probability ``power``: ``exp((t_{1-a/2,df} + t_{power,df}) * se)``. Both
come from the central t distribution (the standard approximation to the noncentral one,
conservative by well under a percent of the ratio at df >= 4); a simulation check lives
in ``benchmarks/ci_coverage.py``.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from edgebench.errors import DataError

#: the power at which a detectable difference is quoted
DEFAULT_POWER = 0.8
#: the largest ratio a detectable difference is quoted up to: beyond it (a tenfold change) the
#: figure says only that the data resolve nothing (two noisy invocations of a few samples once
#: printed "detects >= 375738.5%"), so it is reported as none within this limit (:func:`within_limit`)
MDE_LIMIT = 10.0


@dataclass(frozen=True)
class Detectable:
    """The smallest ratio a decision detects with ``power`` at ``alpha`` (over ``tests`` stages)."""

    ratio: float          # > 1: a slowdown of (ratio - 1) is detected with `power`
    alpha: float
    power: float
    tests: int
    se_log: float
    df: float

    @property
    def percent(self) -> float:
        return (self.ratio - 1.0) * 100.0

    def to_dict(self) -> dict:
        return {**asdict(self), "percent": self.percent}


def _t(q: float, df: float) -> float:
    from scipy.stats import norm
    from scipy.stats import t as student_t

    return float(norm.ppf(q)) if not math.isfinite(df) or df >= 1e6 else float(student_t.ppf(q, df))


def detectable(se_log: float, df: float, alpha: float = 0.05, power: float = DEFAULT_POWER,
               tests: int = 1) -> Detectable:
    """The minimum detectable ratio of a log-ratio estimate with standard error ``se_log``."""
    if not (0.0 < alpha < 1.0) or not (0.0 < power < 1.0):
        raise DataError(f"alpha and power must lie in (0, 1), got {alpha} and {power}")
    if tests < 1:
        raise DataError(f"tests must be at least 1, got {tests}")
    if not math.isfinite(se_log) or se_log < 0 or df <= 0:
        raise DataError(f"a standard error >= 0 with df > 0 is needed, got {se_log} on df {df}")
    a = alpha / tests
    return Detectable(ratio=math.exp((_t(1.0 - a / 2.0, df) + _t(power, df)) * se_log),
                      alpha=alpha, power=power, tests=tests, se_log=se_log, df=df)


def within_limit(ratio: float | None, limit: float = MDE_LIMIT) -> float | None:
    """``ratio`` when it is a detectable ratio at most ``limit``; None when nothing within ``limit`` is."""
    return ratio if ratio is not None and math.isfinite(ratio) and ratio <= limit else None


def beyond_limit(d: Detectable, limit: float = MDE_LIMIT) -> dict:
    """:meth:`Detectable.to_dict` when its ratio lies within ``limit``; otherwise the same inputs with
    ``ratio`` and ``percent`` null, ``beyond_limit`` true and the reason in words."""
    out = {**d.to_dict(), "beyond_limit": False, "limit_ratio": limit}
    if within_limit(d.ratio, limit) is None:
        out.update(ratio=None, percent=None, beyond_limit=True,
                   reason=f"no difference up to +{100 * (limit - 1):.0f}% is detected with "
                          f"{100 * d.power:.0f}% power: too few invocations or samples, or too noisy")
    return out


def limit_text(mde: dict | None = None) -> str:
    """The largest difference a detectable difference is quoted up to (``mde``'s limit), as "+900%"."""
    return f"+{100 * ((mde or {}).get('limit_ratio') or MDE_LIMIT) - 100:.0f}%"


#: the regression gate's rule in words, for --json and the docs
GATE_RULE = ("fails when the lower bound of the slowdown interval exceeds max_slowdown; cannot decide (exit 3) "
             "when it did not fail and max_slowdown lies below the smallest slowdown the comparison detects "
             "with 80% power (its mde), when nothing within the limit is detectable, or when the comparison "
             "has too few blocks for a verdict")


def gate_verdict(slowdown_ci_low: float, max_slowdown: float, mde: dict | None, no_verdict: bool = False) -> dict:
    """The one regression-gate rule of ``compare``/``check`` and of paired rounds: ``failed`` when the
    slowdown interval's lower bound exceeds ``max_slowdown``; ``undecided`` when it did not fail and
    either ``no_verdict`` (too few blocks), nothing is detectable within the limit (``mde`` of
    :func:`beyond_limit`), or ``max_slowdown`` lies below the detectable ratio (a slowdown just
    past the threshold would pass more often than not). ``mde`` None: no power figure, no doubt from it."""
    if not (math.isfinite(max_slowdown) and max_slowdown >= 1.0):
        raise DataError(f"--max-slowdown must be a ratio >= 1, got {max_slowdown}", "e.g. --max-slowdown 1.05")
    mde = mde or {}
    ratio, nothing = mde.get("ratio"), bool(mde.get("beyond_limit"))
    failed = slowdown_ci_low > max_slowdown
    undecided = not failed and (no_verdict or nothing or (ratio is not None and max_slowdown < ratio))
    return {"failed": bool(failed), "undecided": bool(undecided), "mde_ratio": ratio, "mde_beyond_limit": nothing}


def power_at(ratio: float, se_log: float, df: float, alpha: float = 0.05, tests: int = 1) -> float:
    """Probability that a true ``ratio`` (either side of 1) is called, two-sided t at ``alpha/tests``."""
    from scipy.stats import norm
    from scipy.stats import t as student_t

    if ratio <= 0:
        raise DataError(f"a ratio must be > 0, got {ratio}")
    if se_log <= 0:
        return 1.0 if ratio != 1.0 else 0.0
    shift = abs(math.log(ratio)) / se_log
    crit = _t(1.0 - alpha / tests / 2.0, df)
    dist = norm if not math.isfinite(df) or df >= 1e6 else student_t(df)
    return float(dist.sf(crit - shift) + dist.cdf(-crit - shift))


def sessions_needed(target_ratio: float, var_fixed: float, var_per_session: float, df: float,
                    alpha: float = 0.05, power: float = DEFAULT_POWER, tests: int = 1,
                    max_sessions: int = 1000) -> int | None:
    """The number of sessions of each side at which ``target_ratio`` becomes detectable, when the
    log ratio's variance is ``var_fixed + 2 * var_per_session / S`` (None: not within ``max_sessions``)."""
    if target_ratio <= 1.0:
        raise DataError(f"a target ratio must be > 1, got {target_ratio}")
    for s in range(1, max_sessions + 1):
        se = math.sqrt(max(var_fixed + 2.0 * var_per_session / s, 0.0))
        if detectable(se, df, alpha, power, tests).ratio <= target_ratio:
            return s
    return None
