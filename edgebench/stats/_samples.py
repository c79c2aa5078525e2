"""Input checks shared by the statistics modules (private).

Every public function of :mod:`edgebench.stats` passes its samples through
:func:`as_samples`, so bad data is rejected the same way everywhere: with a
:class:`~edgebench.errors.DataError` that says what is wrong and how many values
are affected. Bad *parameters* (a confidence level of 1.5, a negative count) are
the caller's mistake and raise :class:`~edgebench.errors.UsageError`.
"""
from __future__ import annotations

import numbers

import numpy as np

from edgebench.errors import DataError, UsageError


def as_samples(samples_s, *, min_n: int = 2, name: str = "samples_s") -> np.ndarray:
    """Return ``samples_s`` as a 1-D float64 array of finite, non-negative values.

    Raises DataError for a wrong shape, fewer than ``min_n`` values, or any
    NaN, infinite or negative value.
    """
    try:
        x = np.asarray(samples_s, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{name} must be a sequence of numbers ({exc})") from None
    if x.ndim != 1:
        raise DataError(f"{name} must be one-dimensional, got shape {x.shape}")
    if x.size < min_n:
        raise DataError(
            f"{name} has {x.size} value(s), at least {min_n} are needed",
            hint="measure more samples",
        )
    bad = ~np.isfinite(x)
    if bad.any():
        raise DataError(f"{name} has {int(bad.sum())} non-finite value(s) (NaN or inf)")
    neg = x < 0
    if neg.any():
        raise DataError(f"{name} has {int(neg.sum())} negative value(s); latencies cannot be negative")
    return x


def check_level(ci_level, name: str = "ci_level") -> float:
    """Return ``ci_level`` as a float in (0, 1), else raise UsageError."""
    if isinstance(ci_level, bool) or not isinstance(ci_level, numbers.Real):
        raise UsageError(f"{name} must be a number in (0, 1), got {ci_level!r}")
    level = float(ci_level)
    if not 0.0 < level < 1.0:
        raise UsageError(f"{name} must be in (0, 1), got {ci_level!r}", hint="e.g. 0.95")
    return level


def check_count(value, name: str, minimum: int = 1) -> int:
    """Return ``value`` as an int >= ``minimum``, else raise UsageError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise UsageError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise UsageError(f"{name} must be at least {minimum}, got {value}")
    return int(value)


def format_duration_s(value_s: float) -> str:
    """Format a duration for a message with a unit that fits: '650 µs', '1.23 ms', '2.5 s'."""
    v = float(value_s)
    if v >= 1.0 or v == 0.0:
        return f"{v:.3g} s"
    if v >= 1e-3:
        return f"{v * 1e3:.3g} ms"
    if v >= 1e-6:
        return f"{v * 1e6:.3g} µs"
    return f"{v * 1e9:.3g} ns"


def format_percent(fraction: float) -> str:
    """Format a fraction as a percentage with one decimal ('0.6%'); tiny values keep 2 digits."""
    pct = float(fraction) * 100.0
    if pct != 0.0 and abs(pct) < 0.1:
        return f"{pct:.2g}%"
    return f"{pct:.1f}%"


def as_matrix(values, name: str) -> np.ndarray:
    """A finite float64 (N, C) array with N >= 1 and C >= 2 (scores, probabilities, logits)."""
    try:
        a = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{name} must be a numeric (N, C) array ({exc})") from None
    if a.ndim != 2 or a.shape[0] < 1 or a.shape[1] < 2:
        raise DataError(f"{name} must have shape (N, C) with N >= 1 and C >= 2, got {a.shape}")
    if not np.isfinite(a).all():
        raise DataError(f"{name}: {int((~np.isfinite(a)).sum())} non-finite value(s) (NaN or inf)")
    return a
