"""Parameters of a simulated board (level 2): the ``simulated:`` block of a board profile.

Every figure here is a model input chosen by whoever wrote the profile, not a
measurement; results of a simulated board are labelled ``simulated``.

Model (see :mod:`edgebench.sim.physics`):

* thermal: one RC node, ``C dT/dt = P - (T - ambient) / R``; time constant
  ``tau_s = R * C``; steady temperature ``ambient + P * R``;
* power: ``P = idle_power_w + busy * dynamic_power_w * (f V(f)^2) / (f_max V_max^2)``
  (dynamic CMOS power ~ f V^2); ``V(f)`` interpolated linearly between
  ``min_volt_v`` at the lowest and ``max_volt_v`` at the highest frequency;
* DVFS governor (Linux ``step_wise``-like), polled every ``poll_s`` on a noisy
  sensor reading: at or above ``trip_c`` and rising (or on the first crossing) it
  lowers the frequency cap one step; below ``trip_c - hysteresis_c`` it raises it
  one step; at or above ``critical_c`` it drops to the lowest frequency;
* latency: ``fixed_latency_s + (latency_s - fixed_latency_s) * f_max / f`` times
  lognormal noise with coefficient of variation ``noise_cv`` (seeded).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Mapping, Optional

DEFAULT_FREQS_HZ = tuple(float(f) * 1e8 for f in range(15, 25))  # 1.5 ... 2.4 GHz in 100 MHz steps


class SimParamError(ValueError):
    """A bad ``simulated`` value: ``key`` names it, the message says what was expected."""

    def __init__(self, key: str, message: str):
        super().__init__(f"{key}: {message}")
        self.key = key
        self.text = message


@dataclass(frozen=True)
class SimParams:
    title: str = "simulated board"
    ambient_c: float = 25.0
    r_th_c_per_w: float = 10.0
    c_th_j_per_c: float = 10.0
    initial_temp_c: Optional[float] = None     # None: idle steady state, ambient + idle power x R
    idle_power_w: float = 2.5
    dynamic_power_w: float = 6.5               # at the top frequency and voltage, fully busy
    freqs_hz: tuple = field(default=DEFAULT_FREQS_HZ)
    min_volt_v: float = 0.72
    max_volt_v: float = 0.90
    trip_c: float = 80.0
    hysteresis_c: float = 2.0
    critical_c: float = 85.0
    soft_limit_c: Optional[float] = None       # vcgencmd "soft temperature limit" (Pi 3B+: 60)
    poll_s: float = 0.25
    latency_s: float = 0.005                   # per inference at the top frequency (median)
    fixed_latency_s: float = 0.0002            # part that does not scale with the clock
    noise_cv: float = 0.02
    sensor_noise_c: float = 0.1
    sample_cost_s: float = 0.0001              # simulated time one telemetry sample takes
    governor: str = "schedutil"
    cpus: int = 4
    seed: int = 0

    # -- derived -------------------------------------------------------------------------
    @property
    def tau_s(self) -> float:
        return self.r_th_c_per_w * self.c_th_j_per_c

    @property
    def f_max(self) -> float:
        return self.freqs_hz[-1]

    def volt(self, f_hz: float) -> float:
        lo, hi = self.freqs_hz[0], self.freqs_hz[-1]
        if hi == lo:
            return self.max_volt_v
        return self.min_volt_v + (self.max_volt_v - self.min_volt_v) * (f_hz - lo) / (hi - lo)

    def power_w(self, f_hz: float, busy: float) -> float:
        rel = (f_hz * self.volt(f_hz) ** 2) / (self.f_max * self.max_volt_v ** 2)
        return self.idle_power_w + busy * self.dynamic_power_w * rel

    def steady_temp_c(self, power_w: float) -> float:
        return self.ambient_c + power_w * self.r_th_c_per_w

    def start_temp_c(self) -> float:
        if self.initial_temp_c is not None:
            return self.initial_temp_c
        return self.steady_temp_c(self.idle_power_w)

    def latency_at(self, f_hz: float) -> float:
        return self.fixed_latency_s + (self.latency_s - self.fixed_latency_s) * self.f_max / f_hz

    # -- dict form ---------------------------------------------------------------------
    def to_dict(self) -> dict:
        d = asdict(self)
        d["freqs_hz"] = list(self.freqs_hz)
        return d

    @classmethod
    def from_dict(cls, data: Optional[Mapping[str, Any]]) -> "SimParams":
        """Validate a mapping (a profile's ``simulated`` block); raise SimParamError."""
        if data is None:
            return cls()
        if not isinstance(data, Mapping):
            raise SimParamError("", "expected a mapping of model parameters")
        names = [f.name for f in fields(cls)]
        values: dict = {}
        for key, value in data.items():
            if key not in names:
                raise SimParamError(str(key), f"unknown key; expected one of {', '.join(names)}")
            values[key] = _check(key, value)
        params = cls(**values)
        if params.min_volt_v > params.max_volt_v:
            raise SimParamError("min_volt_v", f"must not exceed max_volt_v ({params.max_volt_v:g})")
        if params.critical_c < params.trip_c:
            raise SimParamError("critical_c", f"must be at least trip_c ({params.trip_c:g})")
        if params.fixed_latency_s >= params.latency_s:
            raise SimParamError("fixed_latency_s", f"must be below latency_s ({params.latency_s:g})")
        return params


_NONNEG = {"hysteresis_c", "noise_cv", "sensor_noise_c", "sample_cost_s", "fixed_latency_s", "idle_power_w"}
_ANY_SIGN = {"ambient_c", "initial_temp_c", "trip_c", "critical_c", "soft_limit_c"}
_OPTIONAL = {"initial_temp_c", "soft_limit_c"}


def _check(key: str, value: Any):
    if key == "title" or key == "governor":
        if not isinstance(value, str) or not value.strip():
            raise SimParamError(key, f"expected a non-empty string, got {value!r}")
        return value
    if key in ("seed", "cpus"):
        if isinstance(value, bool) or not isinstance(value, int) or value < (0 if key == "seed" else 1):
            raise SimParamError(key, f"expected an integer >= {0 if key == 'seed' else 1}, got {value!r}")
        return value
    if key == "freqs_hz":
        if not isinstance(value, (list, tuple)) or not value:
            raise SimParamError(key, "expected a non-empty list of frequencies in Hz")
        out = tuple(float(_number(key, v, positive=True)) for v in value)
        if list(out) != sorted(set(out)):
            raise SimParamError(key, "expected distinct frequencies in increasing order")
        return out
    if value is None and key in _OPTIONAL:
        return None
    return float(_number(key, value, positive=key not in _NONNEG | _ANY_SIGN, nonneg=key in _NONNEG))


def _number(key: str, value: Any, positive: bool = False, nonneg: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SimParamError(key, f"expected a number, got {value!r}")
    if positive and not value > 0:
        raise SimParamError(key, f"expected a positive number, got {value!r}")
    if nonneg and value < 0:
        raise SimParamError(key, f"expected a number >= 0, got {value!r}")
    return value
