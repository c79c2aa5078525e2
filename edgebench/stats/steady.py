"""Steady state as a statistical verdict (level 1: pure functions, no I/O).

A series is *flat* over a trailing window when every trend the data allow is
practically negligible: the Theil–Sen slope of the series against time, with its
confidence interval (``scipy.stats.theilslopes``, Sen's distribution-free CI),
times the window length gives the change over the window and its CI, and the
whole CI must lie within ``±floor``. This is an equivalence test, not merely
"no significant slope": a short or noisy window whose CI is wider than the floor
is *undetermined*, never flat, so noise cannot make a still-heating board look
steady. Because Theil–Sen is robust, a level shift near one edge of the window
(the first seconds after a throttle step) barely moves it; so the medians of the
window's first and last thirds must also differ by no more than the floor.
Floors (defaults of the soak): 0.5 °C of temperature change per window, 1% of
the median latency per window.

A device is in steady state when, over the same trailing window, its temperature
is flat *and* its latency is flat. Without any temperature source the verdict
rests on latency alone and says so (``thermal_judged`` False).

Large series (tens of thousands of latencies) are reduced before fitting to the
medians of equal-time bins (at most :data:`MAX_POINTS`; above :data:`MAX_RAW`
samples an evenly strided subset is binned), which keeps the fit O(bins²) and
robust to outliers. Sen's CI assumes independent residuals; temperatures are
autocorrelated, so the CI is, if anything, too narrow: the floor, not the
p-value, carries the decision.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from edgebench.errors import DataError, UsageError
from edgebench.results.figures.thermal import Trend
from edgebench.stats._samples import check_level

MAX_POINTS = 60          # bins fitted at most
MIN_POINTS = 8           # fewer points: undetermined
MAX_RAW = 60_000         # samples binned at most (larger windows are strided first)
MIN_COVERAGE = 0.9       # the data must span this fraction of the window
DEFAULT_TEMP_FLOOR_C = 0.5
DEFAULT_LATENCY_FLOOR_REL = 0.01


@dataclass(frozen=True)
class SteadyVerdict:
    steady: bool
    thermal_judged: bool
    temperature: Optional[Trend]
    latency: Optional[Trend]
    reason: str

    def to_dict(self) -> dict:
        return {"steady": self.steady, "thermal_judged": self.thermal_judged,
                "temperature": self.temperature.to_dict() if self.temperature else None,
                "latency": self.latency.to_dict() if self.latency else None, "reason": self.reason}


def _as_series(t, y, name: str) -> tuple[np.ndarray, np.ndarray]:
    t = np.asarray(t, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if t.ndim != 1 or y.shape != t.shape:
        raise DataError(f"{name}: times and values must be 1-D arrays of the same length "
                        f"(got {t.shape} and {y.shape})")
    keep = np.isfinite(t) & np.isfinite(y)  # a missing reading is skipped, not guessed
    return t[keep], y[keep]


def _bins(t: np.ndarray, y: np.ndarray, lo: float, hi: float, max_points: int):
    """Median of ``y`` and of ``t`` in each of ``max_points`` equal-time bins (empty bins dropped)."""
    if t.size <= max_points:
        return t, y
    if np.any(np.diff(t) < 0):
        order = np.argsort(t, kind="stable")
        t, y = t[order], y[order]
    cuts = np.searchsorted(t, np.linspace(lo, hi, max_points + 1)[1:-1], side="left")
    tb, yb = [], []
    for ts, ys in zip(np.split(t, cuts), np.split(y, cuts)):
        if ts.size:
            tb.append(np.median(ts))
            yb.append(np.median(ys))
    return np.array(tb), np.array(yb)


def _fmt(v: float, unit: str) -> str:
    sign = "+" if v >= 0 else "−"
    if unit == "s":
        a = abs(v)
        scale, name = (1.0, "s") if a >= 1 else (1e-3, "ms") if a >= 1e-3 else (1e-6, "µs")
        return f"{sign}{a / scale:.3g} {name}"
    return f"{sign}{abs(v):.2f} {unit}".rstrip()


def trend(t_s, y, window_s: float, floor: Optional[float] = None, rel_floor: Optional[float] = None,
          quantity: str = "value", unit: str = "", ci_level: float = 0.95, t_end: Optional[float] = None,
          max_points: int = MAX_POINTS) -> Trend:
    """Is ``y`` (against ``t_s``, seconds) flat over the trailing ``window_s``?

    ``floor``: the largest negligible change over the window, in units of ``y``;
    or ``rel_floor``: that change as a fraction of the window's median. The
    window ends at ``t_end`` (default: the last time). NaN readings are skipped.
    """
    from scipy.stats import theilslopes

    level_ci = check_level(ci_level)
    if not window_s or window_s <= 0:
        raise UsageError(f"window_s must be positive, got {window_s!r}")
    if (floor is None) == (rel_floor is None):
        raise UsageError("give exactly one of floor and rel_floor")
    t, v = _as_series(t_s, y, quantity)
    end = float(t[-1]) if t_end is None and t.size else float(t_end or 0.0)
    start = end - window_s
    sel = (t >= start) & (t <= end)
    t, v = t[sel], v[sel]
    covered = float(t[-1] - t[0]) if t.size >= 2 else 0.0
    level = float(np.median(v)) if v.size else None
    abs_floor: Optional[float] = floor
    if floor is None and rel_floor is not None and level is not None:
        abs_floor = rel_floor * abs(level)
    common: dict[str, Any] = dict(quantity=quantity, unit=unit, window_s=float(window_s), covered_s=covered,
                                  n=int(v.size), level=level, floor=abs_floor, ci_level=level_ci)
    if covered < MIN_COVERAGE * window_s:
        return Trend(n_points=int(min(v.size, max_points)), slope_per_s=None, ci_low_per_s=None,
                     ci_high_per_s=None, change=None, change_low=None, change_high=None, step=None, flat=False,
                     state="too-short", reason=f"{quantity}: {covered:.0f} s of data in the "
                     f"{window_s:.0f} s window", **common)
    if v.size > MAX_RAW:  # an evenly strided subset: bin medians of ~1,000 samples each are as good
        stride = -(-v.size // MAX_RAW)
        t, v = t[::stride], v[::stride]
    tb, vb = _bins(t, v, start, end, max_points)
    if tb.size < MIN_POINTS:
        return Trend(n_points=int(tb.size), slope_per_s=None, ci_low_per_s=None, ci_high_per_s=None,
                     change=None, change_low=None, change_high=None, step=None, flat=False, state="too-short",
                     reason=f"{quantity}: only {tb.size} points in the window (need {MIN_POINTS})", **common)
    assert abs_floor is not None   # the window holds samples, so it has a level
    third = window_s / 3.0
    step = float(np.median(v[t >= end - third]) - np.median(v[t <= start + third]))
    res = theilslopes(vb, tb, level_ci)
    slope, lo, hi = float(res.slope), float(res.low_slope), float(res.high_slope)
    ch, ch_lo, ch_hi = slope * window_s, lo * window_s, hi * window_s
    pct = int(round(100 * level_ci))
    what = (f"{quantity}: change {_fmt(ch, unit)} over {window_s:.0f} s "
            f"({pct}% CI {_fmt(ch_lo, unit)}…{_fmt(ch_hi, unit)}), floor ±{_fmt(abs_floor, unit)[1:]}")
    if max(abs(ch_lo), abs(ch_hi)) <= abs_floor and abs(step) <= abs_floor:
        state, text = "flat", "flat"
    elif ch_lo > 0 and ch > abs_floor:
        state, text = "rising", "rising"
    elif ch_hi < 0 and ch < -abs_floor:
        state, text = "falling", "falling"
    elif max(abs(ch_lo), abs(ch_hi)) <= abs_floor:
        state, text = "step", f"a level shift inside the window (last third − first third {_fmt(step, unit)})"
    else:
        state, text = "undetermined", "undetermined (CI wider than the floor)"
    return Trend(n_points=int(tb.size), slope_per_s=slope, ci_low_per_s=lo, ci_high_per_s=hi, change=ch,
                 change_low=ch_lo, change_high=ch_hi, step=step, flat=state == "flat", state=state,
                 reason=f"{what}: {text}", **common)


def steady_state(temp_t_s, temp_c, lat_t_s, latency_s, window_s: float,
                 temp_floor_c: float = DEFAULT_TEMP_FLOOR_C,
                 latency_floor_rel: float = DEFAULT_LATENCY_FLOOR_REL,
                 ci_level: float = 0.95, t_end: Optional[float] = None) -> SteadyVerdict:
    """Steady when temperature and latency are both flat over the trailing window.

    ``temp_t_s``/``temp_c`` None (or empty): no thermal source, the verdict is on
    latency only and ``thermal_judged`` is False. Both series share one clock
    (seconds on the device clock); the window ends at ``t_end`` or at the later
    of the two series' last times.
    """
    lat_t = np.asarray(lat_t_s, dtype=np.float64)
    has_temp = temp_t_s is not None and np.isfinite(np.asarray(temp_c, dtype=np.float64)).any()
    if t_end is None:
        ends = [float(lat_t[-1])] if lat_t.size else []
        if has_temp:
            tt = np.asarray(temp_t_s, dtype=np.float64)
            ends.append(float(np.nanmax(tt)))
        t_end = max(ends) if ends else 0.0
    lat = trend(lat_t, latency_s, window_s, rel_floor=latency_floor_rel, quantity="latency", unit="s",
                ci_level=ci_level, t_end=t_end)
    if not has_temp:
        steady = bool(lat.flat)
        reason = ("no thermal source: thermal steady state cannot be judged; verdict on latency only — "
                  + str(lat.reason))
        return SteadyVerdict(steady, False, None, lat, reason)
    temp = trend(temp_t_s, temp_c, window_s, floor=temp_floor_c, quantity="temperature", unit="°C",
                 ci_level=ci_level, t_end=t_end)
    steady = bool(temp.flat and lat.flat)
    return SteadyVerdict(steady, True, temp, lat, f"{temp.reason}; {lat.reason}")


__all__ = ["Trend", "SteadyVerdict", "trend", "steady_state", "DEFAULT_TEMP_FLOOR_C",
           "DEFAULT_LATENCY_FLOOR_REL"]
