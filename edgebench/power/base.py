"""The power-meter interface (level 2): what every meter declares and returns.

A meter is anything with the :class:`PowerMeter` methods: ``describe()`` (a
:class:`MeterInfo`: instrument, sample rate, measurement boundary, label, what
the code was tested against, which clock its times are on), ``start()``,
``read()`` (the samples acquired since the previous ``read``), ``stop()`` (all
samples since ``start``) and ``close()``.

Samples
-------
A :class:`Samples` holds *interval* samples: sample ``i`` is the average power
over ``[t_s[i], t_s[i] + dt_s[i])``. Counter meters (RAPL) give exactly that;
streaming instruments give one interval per sample period; polled sensors
(hwmon, INA2xx, vcgencmd) hold each reading back over the interval since the
previous reading, because the chip's value is an average over its last
conversion. Time not covered by any sample is a gap, never filled in: energy
over a window reports how much of the window the samples covered.

Clocks
------
``clock == "host"``: ``t_s`` is ``time.perf_counter()`` of the computer running
edgebench (CLOCK_MONOTONIC on Linux, the clock the on-device agent also uses
when it runs on the same computer). ``clock == "meter"``: ``t_s`` is the
instrument's own sample clock (sample index / sample rate), shifted by one
anchor, the host time at which the acquisition was seen to start;
``meta["anchor_uncertainty_s"]`` says how well that anchor is known. Marker
edges (``events_t_s``) are always on the same clock as the samples.
"""
from __future__ import annotations

import importlib
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Optional, Protocol, runtime_checkable

import numpy as np

from edgebench.errors import EdgebenchError, UsageError
from edgebench.stats.energy import window_energy

LABEL = "measured"
OWN_POWER = "this computer's own power"  # MeterInfo.reads of meters that can only measure this computer
TESTED = ("real hardware", "fake of its interface")

#: Measurement boundaries: what a meter's figure includes.
BOUNDARIES = {
    "soc": "the processor package only (cores, caches, integrated GPU, memory controller)",
    "cpu-cores": "the CPU cores only",
    "dram": "the memory only",
    "platform": "what the firmware reports as the platform (RAPL psys): the SoC and some board parts",
    "pmic-rails": "the sum of the PMIC output rails (SoC core, memory, I/O); not the 5 V input stage, "
                  "USB peripherals or the fan",
    "board": "everything drawn through the board's supply input",
    "board+accelerator": "the board and an accelerator powered through the same measured supply",
    "target-supply": "the supply rail the instrument feeds or sits in (an MCU board's VDD): the MCU "
                     "and whatever else shares that rail",
    "rail": "one supply rail, as wired",
}


class MeterError(EdgebenchError):
    """A power meter that is absent, unreadable, misconfigured or answered with an error."""


def check_boundary(boundary: str) -> str:
    if boundary not in BOUNDARIES:
        raise UsageError(f"unknown measurement boundary {boundary!r}",
                         f"use one of {', '.join(BOUNDARIES)}")
    return boundary


@dataclass(frozen=True)
class MeterInfo:
    """What a meter is and what its figures mean."""

    instrument: str                 # e.g. "TI INA226 over I2C (bus 1, address 0x40)"
    sample_rate_hz: Optional[float]  # nominal; None when not fixed
    boundary: str                   # a key of BOUNDARIES
    tested_against: str             # "real hardware" | "fake of its interface"
    clock: str = "host"             # "host" | "meter" (see module doc)
    quantity: str = "power"         # what the instrument measures: power, energy counter, current x voltage
    label: str = LABEL
    reads: str = "a sensor on this computer"  # or "this computer's own power" (RAPL, vcgencmd), "USB instrument"
    details: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["boundary_meaning"] = BOUNDARIES.get(self.boundary, "")
        return d


@dataclass
class Samples:
    """Interval samples of power (see module doc); arrays of equal length."""

    t_s: np.ndarray
    dt_s: np.ndarray
    power_w: np.ndarray
    current_a: Optional[np.ndarray] = None
    voltage_v: Optional[np.ndarray] = None
    clock: str = "host"
    events_t_s: np.ndarray = field(default_factory=lambda: np.zeros(0))
    events_kind: list = field(default_factory=list)
    complete: bool = True
    problem: Optional[str] = None
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        self.t_s = np.asarray(self.t_s, dtype=np.float64)
        self.dt_s = np.asarray(self.dt_s, dtype=np.float64)
        self.power_w = np.asarray(self.power_w, dtype=np.float64)
        self.events_t_s = np.asarray(self.events_t_s, dtype=np.float64)
        if not (self.t_s.shape == self.dt_s.shape == self.power_w.shape):
            raise ValueError("t_s, dt_s and power_w must have the same length")

    def __len__(self) -> int:
        return int(self.t_s.size)

    @property
    def span(self) -> tuple:
        """(first covered time, end of the last sample), or (nan, nan) if empty."""
        if not len(self):
            return (float("nan"), float("nan"))
        return float(self.t_s[0]), float(self.t_s[-1] + self.dt_s[-1])

    def energy_j(self, t0: Optional[float] = None, t1: Optional[float] = None) -> float:
        """Energy over [t0, t1) (default: everything), holding each sample over its interval."""
        lo, hi = self.span
        e, _ = window_energy(self.t_s, self.dt_s, self.power_w,
                             np.array([lo if t0 is None else t0]), np.array([hi if t1 is None else t1]))
        return float(e[0])

    def shifted(self, offset_s: float) -> "Samples":
        """The same samples with every time shifted by ``offset_s`` (clock mapping)."""
        return Samples(self.t_s + offset_s, self.dt_s, self.power_w, self.current_a, self.voltage_v,
                       self.clock, self.events_t_s + offset_s, list(self.events_kind), self.complete,
                       self.problem, dict(self.meta))

    def to_frame(self):
        # lazy: pandas, numpy, pyarrow (import pandas 1.3 s, numpy 460 ms, pyarrow 390 ms), loaded only where used
        import pandas as pd

        cols = {"t_s": self.t_s, "dt_s": self.dt_s, "power_w": self.power_w}
        if self.current_a is not None:
            cols["current_a"] = np.asarray(self.current_a, dtype=np.float64)
        if self.voltage_v is not None:
            cols["voltage_v"] = np.asarray(self.voltage_v, dtype=np.float64)
        return pd.DataFrame(cols)


def empty_samples(clock: str = "host") -> Samples:
    z = np.zeros(0)
    return Samples(z, z, z, clock=clock)


def concat(parts: list, clock: str = "host") -> Samples:
    """Join consecutive Samples (from successive ``read()`` calls)."""
    parts = [p for p in parts if p is not None]
    if not parts:
        return empty_samples(clock)

    def cat(name):
        arrays = [getattr(p, name) for p in parts]
        if any(a is None for a in arrays):
            return None
        return np.concatenate([np.asarray(a, dtype=np.float64) for a in arrays])

    out = Samples(cat("t_s"), cat("dt_s"), cat("power_w"), cat("current_a"), cat("voltage_v"),
                  parts[0].clock, np.concatenate([p.events_t_s for p in parts]),
                  [k for p in parts for k in p.events_kind])
    out.complete = all(p.complete for p in parts)
    out.problem = next((p.problem for p in reversed(parts) if p.problem), None)
    for p in parts:
        out.meta.update(p.meta)
    return out


@runtime_checkable
class PowerMeter(Protocol):
    """The one interface every power meter implements."""

    def describe(self) -> MeterInfo: ...

    def start(self) -> None: ...

    def read(self) -> Samples: ...

    def stop(self) -> Samples: ...

    def close(self) -> None: ...


# ---------------------------------------------------------------------------
# a base for meters polled by a host thread


class PolledMeter:
    """Base of meters read by polling on the host (sysfs, I2C, vcgencmd).

    A thread calls :meth:`_poll` every ``1 / rate_hz`` seconds and stamps each
    reading with the host clock at the middle of the call. Subclasses return
    from ``_poll`` either ``("power", power_w, current_a, voltage_v)`` (an
    averaging sensor: the reading covers the time since the previous one) or
    ``("energy", cumulative_j)`` (a counter: power is the difference over the
    interval). A reading that raises :class:`MeterError`, or no reading for
    ``stall_timeout_s``, ends the record as incomplete; what was read is kept.
    """

    rate_hz = 100.0

    def __init__(self, rate_hz: Optional[float] = None, stall_timeout_s: Optional[float] = None,
                 clock: Callable[[], float] = time.perf_counter):
        self.rate_hz = float(rate_hz or self.rate_hz)
        if not self.rate_hz > 0:
            raise UsageError(f"meter sample rate must be positive, got {rate_hz!r}")
        self.stall_timeout_s = stall_timeout_s or max(1.0, 20.0 / self.rate_hz)
        self._clock = clock
        self._rows: list = []
        self._read_cost: list = []
        self._cursor = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._problem: Optional[str] = None
        self._prev_energy: Optional[tuple] = None

    # subclasses implement these
    def _open(self) -> None:
        """Check the meter is there and readable; raise MeterError with the fix if not."""

    def _poll(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> MeterInfo:  # pragma: no cover - abstract
        raise NotImplementedError

    # the interface
    def start(self) -> None:
        self._open()
        self._rows, self._cursor, self._problem = [], 0, None
        self._stop.clear()
        self._take()  # first reading in the caller: errors surface here, as one clear line
        if self._problem:
            raise MeterError(self._problem)
        self._thread = threading.Thread(target=self._loop, name=f"{type(self).__name__}-poll", daemon=True)
        self._thread.start()

    def _take(self) -> None:
        t_a = self._clock()
        try:
            value = self._poll()
        except MeterError as exc:
            self._problem = exc.one_line()
            return
        t_b = self._clock()
        with self._lock:
            self._rows.append(((t_a + t_b) / 2.0, value))
            self._read_cost.append(t_b - t_a)

    def _loop(self) -> None:
        period = 1.0 / self.rate_hz
        next_t = self._clock() + period
        while not self._stop.is_set() and not self._problem:
            delay = next_t - self._clock()
            if delay > 0 and self._stop.wait(delay):
                break
            self._take()
            next_t += period
            if next_t < self._clock() - period:  # fell behind (slow read): do not burst to catch up
                next_t = self._clock() + period

    def health(self) -> Optional[str]:
        """None while readings arrive; else what went wrong."""
        if self._problem:
            return self._problem
        with self._lock:
            last = self._rows[-1][0] if self._rows else None
        if last is not None and self._thread is not None and self._thread.is_alive():
            gap = self._clock() - last
            if gap > self.stall_timeout_s:
                return f"no reading for {gap:.1f} s (the meter stopped answering)"
        return None

    def read(self) -> Samples:
        with self._lock:
            rows = self._rows[max(0, self._cursor - 1):]
            first = self._cursor == 0
            self._cursor = len(self._rows)
        return self._build(rows, first)

    def stop(self) -> Samples:
        problem = self.health()
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=max(2.0, 2.0 / self.rate_hz))
            if self._thread.is_alive():
                problem = problem or "a meter read blocked and never returned"
        with self._lock:
            rows = list(self._rows)
        out = self._build(rows, True)
        problem = problem or self._problem
        if problem:
            out.complete, out.problem = False, problem
        cost = np.array(self._read_cost) if self._read_cost else np.zeros(0)
        out.meta.update({"n_readings": len(rows), "poll_rate_hz": self.rate_hz,
                         "read_cost_median_s": float(np.median(cost)) if cost.size else None,
                         "timestamp": "host clock at the middle of each read; uncertainty about half "
                                      "the read cost"})
        return out

    def close(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            self._stop.set()
            self._thread.join(timeout=2.0)

    def _build(self, rows: list, first: bool) -> Samples:
        """Readings -> interval samples. ``rows`` starts with the previous reading unless ``first``."""
        if not rows:
            return empty_samples()
        t = np.array([r[0] for r in rows], dtype=np.float64)
        kind = rows[0][1][0]
        if kind == "energy":
            e = np.array([r[1][1] for r in rows], dtype=np.float64)
            if len(rows) < 2:
                return empty_samples()
            dt = np.diff(t)
            p = np.diff(e) / np.where(dt > 0, dt, np.nan)
            return Samples(t[:-1], dt, np.nan_to_num(p), clock="host")
        vals = [r[1] for r in rows]
        p = np.array([v[1] for v in vals], dtype=np.float64)
        cur = np.array([np.nan if v[2] is None else v[2] for v in vals], dtype=np.float64)
        volt = np.array([np.nan if v[3] is None else v[3] for v in vals], dtype=np.float64)
        if first:
            starts = np.concatenate([[t[0] - 1.0 / self.rate_hz], t[:-1]])
            sl = slice(0, len(t))
        else:  # rows[0] was returned by the previous read: it only starts the first interval
            starts = t[:-1]
            sl = slice(1, len(t))
        ends = t[sl]
        return Samples(starts, ends - starts, p[sl], cur[sl], volt[sl], clock="host")


def require_module(module: str, package: str, what: str):
    """Import ``module`` or raise MeterError naming the pip package to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MeterError(f"the {what} meter needs the Python package {package!r} ({exc})",
                         f"install it: pip install {package}") from None


__all__ = ["BOUNDARIES", "MeterError", "MeterInfo", "PolledMeter", "PowerMeter", "Samples",
           "check_boundary", "concat", "empty_samples", "require_module", "LABEL", "TESTED"]
