"""Energy arithmetic (level 1, pure): integration, idle power, per-event energy,
clock offsets, and the duty-cycle model.

Integration
-----------
Power samples are intervals: sample ``i`` is the average power over
``[t[i], t[i] + dt[i])`` (see :mod:`edgebench.power.base`). The energy over a
window ``[a, b)`` is the sum over samples of ``power x overlap``: exact for
counter meters and for a power that is constant within each sample, and the
best a sampled signal allows otherwise. Time in the window that no sample
covers is reported as missing coverage, never filled in.

Idle power and its CI
---------------------
Idle power is the mean power over a quiet window (energy / covered time).
Successive samples are correlated, so the CI is from batch means: the window is
cut into ``k`` equal batches (``k`` = 20 when samples allow, at least 5 samples
per batch), and a Student t interval is taken over the batch means (df = k - 1).

Per-event energy
----------------
An *event* is one inference at a fixed rate. Its *window* is the inference
itself (start to end of the end-to-end timing, or the GPIO marker pair); its
*region* extends the window by a margin on each side, at most half the gap to
the neighbouring window (so regions never overlap) and at most ``max_margin_s``.

* window energy: energy in the window (includes the idle share);
* inference energy above idle: window energy - idle power x window duration;
* event energy: region energy - idle power x region duration (inference plus
  whatever the wake-up and wind-down around it cost above idle);
* wake-up energy: event energy - inference energy above idle.

Means over events get a 95% CI by batch means over the events in measuring order
(:func:`events_mean_ci`): neighbouring events share the board's state (temperature, frequency)
and the meter's samples, so they are not independent. Too few events to judge that: Student t,
said so in the method.

Duty-cycle model
----------------
Average power at rate ``r`` events/s: ``P = P_idle + E_event x r``, the board
spending the rest of the time at idle power. A duty cycle ``D`` (fraction of
time spent inferring, 0 < D <= 1) is the rate ``r = D / t_event``. The model
needs ``t_event x r <= 1``: above it the board cannot keep up, and the
achievable rate ``1 / t_event`` is reported instead.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Optional

import numpy as np

from edgebench.errors import DataError, UsageError

# ---------------------------------------------------------------------------
# integration


def _cumulative(t: np.ndarray, dt: np.ndarray, p: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Integral of the held signal from -inf to each x (vectorised; samples sorted, non-overlapping)."""
    c = np.concatenate([[0.0], np.cumsum(p * dt)])
    i = np.searchsorted(t, x, side="right") - 1  # sample starting at or before x
    inside = np.clip(i, 0, max(t.size - 1, 0))
    if t.size == 0:
        return np.zeros_like(x, dtype=np.float64)
    part = p[inside] * np.clip(x - t[inside], 0.0, dt[inside])
    return np.where(i < 0, 0.0, c[inside] + part)


#: how far a sample may run into the next before they count as overlapping (float rounding)
OVERLAP_SLACK_S = 1e-9


def window_energy(t_s, dt_s, power_w, starts, ends) -> tuple:
    """Energy (J) and covered time (s) of each window [starts[k], ends[k])."""
    t = np.asarray(t_s, dtype=np.float64)
    dt = np.asarray(dt_s, dtype=np.float64)
    p = np.asarray(power_w, dtype=np.float64)
    a = np.asarray(starts, dtype=np.float64)
    b = np.asarray(ends, dtype=np.float64)
    if t.size > 1 and np.any(np.diff(t) < 0):
        order = np.argsort(t, kind="stable")
        t, dt, p = t[order], dt[order], p[order]
    # 1 ns of slack: timestamps on a monotonic clock hours after boot carry float rounding of
    # ~1e-11 s, so back-to-back samples (t[k] + dt[k] == t[k+1] exactly) may not add up exactly
    if t.size > 1 and np.any(t[:-1] + dt[:-1] > t[1:] + OVERLAP_SLACK_S):
        raise DataError("power samples overlap in time: each sample must end before the next begins")
    energy = _cumulative(t, dt, p, b) - _cumulative(t, dt, p, a)
    ones = np.ones_like(p)
    covered = _cumulative(t, dt, ones, b) - _cumulative(t, dt, ones, a)
    return energy, covered


# ---------------------------------------------------------------------------
# means with CIs


@dataclass
class MeanCI:
    """A mean with a two-sided CI; ``ci_low``/``ci_high`` are None when samples do not allow one."""

    mean: float
    ci_low: Optional[float]
    ci_high: Optional[float]
    n: int
    sd: Optional[float]
    ci_level: float = 0.95
    method: str = "student t"

    def to_dict(self, unit: str) -> dict:
        d = {f"{unit}": self.mean, f"ci_low_{unit}": self.ci_low, f"ci_high_{unit}": self.ci_high,
             "n": self.n, f"sd_{unit}": self.sd, "ci_level": self.ci_level, "ci_method": self.method}
        return d


def mean_ci(values, ci_level: float = 0.95, method: str = "student t over events") -> MeanCI:
    """Mean with a Student t CI (None below 2 values)."""
    from scipy import stats

    x = np.asarray(values, dtype=np.float64)
    x = x[np.isfinite(x)]
    if x.size == 0:
        raise DataError("no values to average")
    m = float(np.mean(x))
    if x.size < 2:
        return MeanCI(m, None, None, int(x.size), None, ci_level, method)
    sd = float(np.std(x, ddof=1))
    half = float(stats.t.ppf(0.5 + ci_level / 2, x.size - 1)) * sd / math.sqrt(x.size)
    return MeanCI(m, m - half, m + half, int(x.size), sd, ci_level, method)


def events_mean_ci(values, ci_level: float = 0.95) -> MeanCI:
    """Mean over events (in measuring order) with a batch-means Student t CI
    (:func:`edgebench.stats.dependence.mean_se`); :func:`mean_ci` when too few events for batches."""
    from scipy import stats

    from edgebench.stats.dependence import mean_se

    x = np.asarray(values, dtype=np.float64)
    x = x[np.isfinite(x)]
    got = mean_se(x)
    if got is None:
        return mean_ci(x, ci_level, method="student t over events (too few to judge their dependence: "
                                           "treated as independent)")
    m, se, df = got
    half = float(stats.t.ppf(0.5 + ci_level / 2, df)) * se
    return MeanCI(m, m - half, m + half, int(x.size), float(np.std(x, ddof=1)), ci_level,
                  f"batch means over events ({df + 1} batches), student t")


def with_shared_term(ci: MeanCI, half: Optional[float], what: str) -> MeanCI:
    """``ci`` widened by an error every value shares (it does not average down over events): the
    half-widths added in quadrature. ``half`` None (the shared term has no interval): ``ci`` as it is."""
    if half is None or ci.ci_low is None or ci.ci_high is None:
        return ci
    own = (ci.ci_high - ci.ci_low) / 2.0
    total = float(np.hypot(own, half))
    return MeanCI(ci.mean, ci.mean - total, ci.mean + total, ci.n, ci.sd, ci.ci_level,
                  f"{ci.method}; with {what} (shared by every event), in quadrature")


def mean_power(t_s, dt_s, power_w, t0: float, t1: float, ci_level: float = 0.95,
               max_batches: int = 20, min_per_batch: int = 5) -> tuple:
    """Time-weighted mean power over [t0, t1) with a batch-means CI; also the covered fraction.

    Returns ``(MeanCI, covered_fraction)``.
    """
    if not t1 > t0:
        raise DataError(f"empty power window [{t0}, {t1})")
    e, cov = window_energy(t_s, dt_s, power_w, [t0], [t1])
    if cov[0] <= 0:
        raise DataError(f"no power samples in the window [{t0:.3f}, {t1:.3f}) s")
    mean = float(e[0] / cov[0])
    t = np.asarray(t_s, dtype=np.float64)
    n_in = int(np.count_nonzero((t >= t0) & (t < t1)))
    k = min(max_batches, n_in // min_per_batch)
    frac = float(cov[0] / (t1 - t0))
    if k < 2:
        return MeanCI(mean, None, None, n_in, None, ci_level, "too few samples for a CI"), frac
    edges = np.linspace(t0, t1, k + 1)
    be, bc = window_energy(t_s, dt_s, power_w, edges[:-1], edges[1:])
    ok = bc > 0
    ci = mean_ci(be[ok] / bc[ok], ci_level, method=f"batch means ({int(ok.sum())} batches), student t")
    return MeanCI(mean, ci.ci_low, ci.ci_high, n_in, ci.sd, ci_level, ci.method), frac


def idle_power(t_s, dt_s, power_w, windows, ci_level: float = 0.95, max_batches: int = 20,
               min_per_batch: int = 5) -> dict:
    """Idle power over one or more quiet windows: pooled mean, batch-means CI, and each window apart.

    The pooled mean is total energy / total covered time; its CI pools the batch
    means of every window (Student t). ``drift`` is True when the windows' own CIs
    do not overlap (the idle state changed between them).
    """
    per, batch_means, e_tot, c_tot = [], [], 0.0, 0.0
    for t0, t1 in windows:
        ci, frac = mean_power(t_s, dt_s, power_w, t0, t1, ci_level, max_batches, min_per_batch)
        e, c = window_energy(t_s, dt_s, power_w, [t0], [t1])
        e_tot, c_tot = e_tot + float(e[0]), c_tot + float(c[0])
        per.append({"t0_s": t0, "t1_s": t1, "power_w": ci.mean, "ci_low_w": ci.ci_low, "ci_high_w": ci.ci_high,
                    "covered_fraction": frac, "n_samples": ci.n})
        t = np.asarray(t_s, dtype=np.float64)
        k = min(max_batches, int(np.count_nonzero((t >= t0) & (t < t1))) // min_per_batch)
        if k >= 2:
            edges = np.linspace(t0, t1, k + 1)
            be, bc = window_energy(t_s, dt_s, power_w, edges[:-1], edges[1:])
            batch_means += list(be[bc > 0] / bc[bc > 0])
    if c_tot <= 0:
        raise DataError("no power samples in the idle windows")
    mean = e_tot / c_tot
    lo = hi = sd = None
    if len(batch_means) >= 2:
        ci = mean_ci(batch_means, ci_level)
        if ci.ci_high is not None and ci.ci_low is not None:
            half = (ci.ci_high - ci.ci_low) / 2
            lo, hi, sd = mean - half, mean + half, ci.sd
    drift = False
    if len(per) == 2 and all(p["ci_low_w"] is not None for p in per):
        a, b = per
        drift = a["ci_high_w"] < b["ci_low_w"] or b["ci_high_w"] < a["ci_low_w"]
    return {"power_w": mean, "ci_low_w": lo, "ci_high_w": hi, "sd_w": sd, "ci_level": ci_level,
            "ci_method": f"batch means ({len(batch_means)} batches over the idle windows), student t",
            "windows": per, "drift": drift}


# ---------------------------------------------------------------------------
# events


def event_regions(starts, ends, max_margin_s: float) -> tuple:
    """Region bounds around each window: margins of at most half the gap to a neighbour."""
    a = np.asarray(starts, dtype=np.float64)
    b = np.asarray(ends, dtype=np.float64)
    if a.size == 0:
        return a, b
    if np.any(b < a):
        raise DataError("an event window ends before it starts")
    before = np.full(a.size, float(max_margin_s))
    after = np.full(a.size, float(max_margin_s))
    if a.size > 1:
        gap = np.maximum(a[1:] - b[:-1], 0.0) / 2.0
        after[:-1] = np.minimum(after[:-1], gap)
        before[1:] = np.minimum(before[1:], gap)
    return a - before, b + after


#: a quantity within this many machine epsilons of the record's scale is rounding, not a measurement
ROUNDING_ULPS = 64


def rounding_floor_j(t_s, dt_s, power_w, idle_w: float = 0.0) -> float:
    """The smallest energy (J) this record can tell from floating-point rounding.

    Window energies are differences of cumulative sums over the whole record, at timestamps that
    may be hours after boot, and idle power is subtracted from them: each step rounds at about
    ``eps`` times the record's energy and its largest power times its largest timestamp. A figure
    within :data:`ROUNDING_ULPS` of that (e.g. the "wake-up energy" of a simulated board whose
    idle is 2.4999999999998486 W) is not resolved and must not be printed as a quantity."""
    t = np.abs(np.asarray(t_s, dtype=np.float64))
    dt = np.asarray(dt_s, dtype=np.float64)
    p = np.abs(np.asarray(power_w, dtype=np.float64))
    if p.size == 0:
        return 0.0
    scale = float(np.sum(p * dt)) + (float(p.max()) + abs(float(idle_w))) * float(t.max() + dt.max())
    return ROUNDING_ULPS * float(np.finfo(np.float64).eps) * scale


@dataclass
class EventEnergies:
    """Per-event arrays (J, s) as defined in the module doc."""

    window_j: np.ndarray
    inference_above_idle_j: np.ndarray
    event_j: np.ndarray
    wake_j: np.ndarray
    duration_s: np.ndarray
    region_s: np.ndarray
    coverage: np.ndarray  # covered fraction of the region


def event_energies(t_s, dt_s, power_w, starts, ends, idle_w: float, max_margin_s: float) -> EventEnergies:
    a = np.asarray(starts, dtype=np.float64)
    b = np.asarray(ends, dtype=np.float64)
    ra, rb = event_regions(a, b, max_margin_s)
    win, win_cov = window_energy(t_s, dt_s, power_w, a, b)
    reg, reg_cov = window_energy(t_s, dt_s, power_w, ra, rb)
    dur, reg_len = b - a, rb - ra
    inf_above = win - idle_w * dur
    event = reg - idle_w * reg_len
    cov = np.where(reg_len > 0, reg_cov / np.where(reg_len > 0, reg_len, 1.0), 0.0)
    return EventEnergies(win, inf_above, event, event - inf_above, dur, reg_len, cov)


# ---------------------------------------------------------------------------
# clock offset from bracketed requests


def bracket_offset(brackets) -> dict:
    """Offset ``host - device`` (s) from requests bracketed on the host.

    Each bracket is ``(host_send_s, host_recv_s, device_first_start_s, device_last_end_s)``:
    the device ran its work after the request was sent and before the reply
    arrived, so ``host_send - first_start <= offset <= host_recv - last_end``.
    The intersection over all brackets bounds the offset if the two clocks do
    not drift; an empty intersection means they do (or a bracket is wrong), and
    the midpoint of the per-bracket midpoints is used with their spread as the
    uncertainty.
    """
    br = np.asarray(brackets, dtype=np.float64).reshape(-1, 4)
    if br.size == 0:
        raise DataError("no bracketed requests to align the clocks with")
    lo = br[:, 0] - br[:, 2]
    hi = br[:, 1] - br[:, 3]
    L, U = float(np.max(lo)), float(np.min(hi))
    if U >= L:
        return {"offset_s": (L + U) / 2, "uncertainty_s": (U - L) / 2, "consistent": True,
                "n_brackets": int(br.shape[0]),
                "method": "intersection of request brackets (host send .. reply) around device work"}
    mids = (lo + hi) / 2
    return {"offset_s": float(np.median(mids)),
            "uncertainty_s": float(max(np.max(mids) - np.min(mids), np.max(hi - lo)) / 2),
            "consistent": False, "n_brackets": int(br.shape[0]),
            "method": "median of per-request bracket midpoints (brackets disagree: clock drift?)"}


# ---------------------------------------------------------------------------
# the duty-cycle model


@dataclass
class DutyPoint:
    """Average power at one operating point of the duty-cycle model."""

    rate_hz: float
    duty: Optional[float]           # fraction of time spent in inference (None if event time unknown)
    idle_w: float
    event_j: float
    avg_power_w: float
    asleep_fraction: Optional[float]
    model: str = "average power = idle power + energy per event x rate"

    def to_dict(self) -> dict:
        return asdict(self)


def duty_point(idle_w: float, event_j: float, *, rate_hz: Optional[float] = None,
               duty: Optional[float] = None, event_s: Optional[float] = None) -> DutyPoint:
    """The duty-cycle model at a rate or a duty cycle (exactly one), validated."""
    if (rate_hz is None) == (duty is None):
        raise UsageError("give either a rate or a duty cycle, not both or neither",
                         "e.g. --rate 1/s or --duty 0.01")
    if event_s is not None and not (event_s > 0 and math.isfinite(event_s)):
        raise UsageError(f"event duration must be positive, got {event_s!r}")
    if duty is not None:
        if not (isinstance(duty, (int, float)) and math.isfinite(duty) and 0 < duty <= 1):
            raise UsageError(f"duty cycle {duty!r} is outside (0, 1]",
                             "give the fraction of time spent inferring, e.g. --duty 0.01 for 1%")
        if event_s is None:
            raise UsageError("a duty cycle needs the duration of one event to become a rate",
                             "use a stored energy run, or give --rate instead")
        rate_hz = duty / event_s
    assert rate_hz is not None
    if not (math.isfinite(rate_hz) and rate_hz > 0):
        raise UsageError(f"rate must be positive, got {rate_hz!r}/s", "e.g. --rate 1/s")
    busy = None
    if event_s is not None:
        busy = event_s * rate_hz
        if busy > 1 + 1e-9:
            raise UsageError(
                f"the board cannot sustain {rate_hz:g}/s: one event takes {event_s * 1e3:.4g} ms, "
                f"so {busy:.3g} s of work per second",
                f"the achievable rate is at most {1 / event_s:.4g}/s (duty cycle 1)")
    if idle_w < 0:
        raise UsageError(f"idle power must not be negative, got {idle_w} W")
    return DutyPoint(rate_hz=float(rate_hz), duty=None if busy is None else float(min(busy, 1.0)),
                     idle_w=float(idle_w), event_j=float(event_j),
                     avg_power_w=float(idle_w + event_j * rate_hz),
                     asleep_fraction=None if busy is None else float(max(0.0, 1.0 - busy)))


def parse_rate(text) -> float:
    """'10', '10/s', '2/min', '30/h' -> events per second."""
    if isinstance(text, (int, float)):
        value, unit = float(text), "s"
    else:
        s = str(text).strip().replace(" ", "")
        num, _, unit = s.partition("/")
        unit = unit or "s"
        try:
            value = float(num)
        except ValueError:
            raise UsageError(f"rate {text!r} is not a number of events per second",
                             "e.g. --rate 10, --rate 1/s, --rate 2/min, --rate 30/h") from None
    per = {"s": 1.0, "sec": 1.0, "min": 60.0, "h": 3600.0, "hour": 3600.0}.get(unit)
    if per is None:
        raise UsageError(f"rate {text!r}: unknown unit {unit!r}", "use /s, /min or /h")
    rate = value / per
    if not (math.isfinite(rate) and rate > 0):
        raise UsageError(f"rate must be positive, got {text!r}", "e.g. --rate 1/s")
    return rate


def si(value, unit: str, digits: int = 3) -> str:
    """A value with an SI prefix and ``digits`` significant figures: 1.23 mJ, 640 µA, 2.00 W."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    v = float(value)
    if v == 0:
        return f"0 {unit}"
    for scale, prefix in ((1e3, "k"), (1.0, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n"), (1e-12, "p")):
        if abs(v) >= scale * 0.9995 or prefix == "p":
            x = float(f"{v / scale:.{digits}g}")
            decimals = max(0, digits - 1 - int(math.floor(math.log10(abs(x))))) if x else 0
            return f"{x:.{decimals}f} {prefix}{unit}"
    return f"{v:g} {unit}"  # pragma: no cover


def si_range(lo, hi, unit: str, digits: int = 3) -> str:
    if lo is None or hi is None:
        return "no CI"
    return f"{si(lo, unit, digits)} to {si(hi, unit, digits)}"


__all__ = ["si", "si_range", "window_energy", "mean_ci", "events_mean_ci", "with_shared_term", "mean_power", "idle_power", "MeanCI", "event_regions",
           "event_energies",
           "EventEnergies", "bracket_offset", "duty_point", "DutyPoint", "parse_rate"]
