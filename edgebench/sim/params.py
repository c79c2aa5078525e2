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

import dataclasses
from typing import Optional, Tuple

from pydantic import Field, model_validator
from pydantic.dataclasses import dataclass
from typing_extensions import Annotated

from edgebench.schema import CLOSED, FieldProblem, Int, Num, Str

DEFAULT_FREQS_HZ = tuple(float(f) * 1e8 for f in range(15, 25))  # 1.5 ... 2.4 GHz in 100 MHz steps


def _param(unit: str, text: str, *, minimum: Optional[float] = None, positive: bool = False):
    """A parameter's constraint, meaning and unit (the unit shows in docs/boards.md)."""
    return Field(gt=0 if positive else None, ge=minimum, description=text, json_schema_extra={"x-unit": unit})


Text = Annotated[Str, Field(min_length=1)]


@dataclass(frozen=True, config=CLOSED)
class SimParams:
    """The model of a simulated board (a profile's ``simulated`` block); absent keys take these defaults."""

    title: Annotated[Text, Field(description="shown in descriptions", json_schema_extra={"x-unit": "text"})] = \
        "simulated board"
    ambient_c: Annotated[Num, _param("°C", "ambient temperature")] = 25.0
    r_th_c_per_w: Annotated[Num, _param("°C/W", "thermal resistance to ambient", positive=True)] = 10.0
    c_th_j_per_c: Annotated[Num, _param("J/°C", "heat capacity (`tau = R C`)", positive=True)] = 10.0
    initial_temp_c: Annotated[Optional[Num], _param("°C", "temperature at connection; null: the idle "
                                                          "steady state, ambient + idle power x R")] = None
    idle_power_w: Annotated[Num, _param("W", "power when idle", minimum=0)] = 2.5
    dynamic_power_w: Annotated[Num, _param("W", "extra power fully busy at the top clock and voltage",
                                           positive=True)] = 6.5
    freqs_hz: Annotated[Tuple[Annotated[Num, Field(gt=0)], ...],
                        Field(min_length=1, description="available clocks, distinct and increasing "
                              "(default 1.5-2.4 GHz in 0.1 GHz steps)", json_schema_extra={"x-unit": "Hz"})] = \
        DEFAULT_FREQS_HZ
    min_volt_v: Annotated[Num, _param("V", "voltage at the lowest clock (linear between)", positive=True)] = 0.72
    max_volt_v: Annotated[Num, _param("V", "voltage at the highest clock", positive=True)] = 0.90
    trip_c: Annotated[Num, _param("°C", "passive trip: the governor lowers the clock cap one step")] = 80.0
    hysteresis_c: Annotated[Num, _param("°C", "the cap is raised again below trip_c - hysteresis_c",
                                        minimum=0)] = 2.0
    critical_c: Annotated[Num, _param("°C", "critical trip: the lowest clock")] = 85.0
    soft_limit_c: Annotated[Optional[Num], _param("°C", "sets the vcgencmd soft-temperature-limit and "
                                                        "frequency-capped bits (Pi 3B+: 60); null: none")] = None
    poll_s: Annotated[Num, _param("s", "governor polling period", positive=True)] = 0.25
    latency_s: Annotated[Num, _param("s", "median latency per inference at the top clock", positive=True)] = 0.005
    fixed_latency_s: Annotated[Num, _param("s", "the part of latency_s that does not scale with the clock",
                                           minimum=0)] = 0.0002
    noise_cv: Annotated[Num, _param("-", "latency noise (coefficient of variation, lognormal)", minimum=0)] = 0.02
    sensor_noise_c: Annotated[Num, _param("°C", "temperature sensor noise", minimum=0)] = 0.1
    sample_cost_s: Annotated[Num, _param("s", "simulated time one telemetry sample takes", minimum=0)] = 0.0001
    governor: Annotated[Text, Field(description="reported governor name", json_schema_extra={"x-unit": "text"})] = \
        "schedutil"
    cpus: Annotated[Int, Field(ge=1, description="reported CPU count", json_schema_extra={"x-unit": "-"})] = 4
    seed: Annotated[Int, Field(ge=0, description="random seed (latency and sensor noise)",
                               json_schema_extra={"x-unit": "-"})] = 0

    @model_validator(mode="after")
    def _consistent(self) -> "SimParams":
        if list(self.freqs_hz) != sorted(set(self.freqs_hz)):
            raise FieldProblem("freqs_hz", "expected distinct frequencies in increasing order")
        if self.min_volt_v > self.max_volt_v:
            raise FieldProblem("min_volt_v", f"must not exceed max_volt_v ({self.max_volt_v:g})")
        if self.critical_c < self.trip_c:
            raise FieldProblem("critical_c", f"must be at least trip_c ({self.trip_c:g})")
        if self.fixed_latency_s >= self.latency_s:
            raise FieldProblem("fixed_latency_s", f"must be below latency_s ({self.latency_s:g})")
        return self

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
        d = dataclasses.asdict(self)
        d["freqs_hz"] = list(self.freqs_hz)
        return d
