"""The simulated board's physics (level 2): RC thermal node, DVFS governor, power, latency.

Time is simulated: :meth:`SimBoard.advance` moves an integer nanosecond clock
and integrates the thermal node exactly over each interval of constant power
(``T <- T_ss + (T - T_ss) exp(-dt / tau)``), stopping at every governor poll.
Nothing sleeps, so twenty simulated minutes take well under a second. All
randomness (latency noise, sensor noise) comes from generators seeded by
``SimParams.seed``: the same calls give the same numbers.
"""
from __future__ import annotations

import math
from typing import Dict, Optional

import numpy as np

from edgebench.agent.channels import CPUFREQ_KEYS, VCGENCMD_CHANNELS, channel, cpufreq_channel
from edgebench.sim.params import SimParams

CLOCK_ORIGIN_NS = 1_000_000_000_000   # the simulated perf_counter_ns starts here
THROTTLE_BITS = {  # vcgencmd get_throttled layout
    "under_voltage": 0, "freq_capped": 1, "throttled": 2, "soft_temp_limit": 3,
}


class SimBoard:
    """State: clock, temperature, frequency cap (governor level), throttle flags, energy."""

    def __init__(self, params: SimParams, seed: Optional[int] = None):
        self.p = params
        base = params.seed if seed is None else seed
        self.rng_latency = np.random.default_rng([base, 1])
        self.rng_sensor = np.random.default_rng([base, 2])
        self.now_ns = CLOCK_ORIGIN_NS
        self.temp_c = params.start_temp_c()
        self.top = len(params.freqs_hz) - 1
        self.level = self.top                  # index into freqs_hz of the current cap
        self.poll_ns = max(1, int(round(params.poll_s * 1e9)))
        self.next_poll_ns = self.now_ns + self.poll_ns
        self.reading_c = self.temp_c
        self.flags_now: Dict[str, bool] = {k: False for k in THROTTLE_BITS}
        self.flags_occurred: Dict[str, bool] = {k: False for k in THROTTLE_BITS}
        self.energy_j = 0.0
        self.busy = 0.0                        # busy fraction of the last interval
        self.trace: Optional[list] = None      # (start_ns, dt_ns, power_w) per interval while a meter records

    # -- observables -------------------------------------------------------------------
    @property
    def freq_hz(self) -> float:
        return self.p.freqs_hz[self.level]

    def power_w(self, busy: float) -> float:
        return self.p.power_w(self.freq_hz, busy)

    def read_sensor(self) -> float:
        """A sensor reading: true temperature plus seeded noise, in whole milli-°C."""
        noise = self.rng_sensor.normal(0.0, self.p.sensor_noise_c) if self.p.sensor_noise_c else 0.0
        return round(self.temp_c + noise, 3)

    def throttled_raw(self) -> int:
        raw = 0
        for name, bit in THROTTLE_BITS.items():
            raw |= int(self.flags_now[name]) << bit
            raw |= int(self.flags_occurred[name]) << (bit + 16)
        return raw

    def latencies_ns(self, m: int, batch: int = 1) -> np.ndarray:
        """``m`` inference latencies at the current frequency (lognormal noise, median preserved)."""
        median = self.p.latency_at(self.freq_hz) * batch
        if self.p.noise_cv:
            sigma = math.sqrt(math.log1p(self.p.noise_cv ** 2))
            x = median * np.exp(self.rng_latency.normal(0.0, sigma, m))
        else:
            x = np.full(m, median)
        return np.maximum(np.round(x * 1e9), 1).astype(np.int64)

    # -- time --------------------------------------------------------------------------
    def advance(self, dt_ns: int, busy: float) -> None:
        """Let ``dt_ns`` pass with the CPU busy for the fraction ``busy``; the governor
        polls at its own period on the way."""
        end = self.now_ns + int(dt_ns)
        self.busy = busy
        while self.next_poll_ns <= end:
            self._integrate(self.next_poll_ns - self.now_ns, busy)
            self._poll()
            self.next_poll_ns += self.poll_ns
        self._integrate(end - self.now_ns, busy)

    def advance_to(self, t_ns: int, busy: float) -> None:
        if t_ns > self.now_ns:
            self.advance(t_ns - self.now_ns, busy)

    def _integrate(self, dt_ns: int, busy: float) -> None:
        if dt_ns <= 0:
            return
        dt = dt_ns * 1e-9
        power = self.power_w(busy)
        t_ss = self.p.steady_temp_c(power)
        self.temp_c = t_ss + (self.temp_c - t_ss) * math.exp(-dt / self.p.tau_s)
        self.energy_j += power * dt
        if self.trace is not None:
            self.trace.append((self.now_ns, dt_ns, power))
        self.now_ns += dt_ns

    def _poll(self) -> None:
        """One governor decision (step_wise-like, with hysteresis).

        The governor acts on the die temperature itself; sensor noise is added to
        what telemetry reports, not to the decision (a noisy trend would make the
        governor random-walk through the steps)."""
        p = self.p
        prev = self.reading_c
        t = self.reading_c = self.temp_c
        if t >= p.critical_c:
            self.level = 0
        elif t >= p.trip_c:
            if t > prev or self.level == self.top:
                self.level = max(self.level - 1, 0)
        elif t < p.trip_c - p.hysteresis_c and self.level < self.top:
            self.level += 1
        soft = p.soft_limit_c is not None and t >= p.soft_limit_c
        self.flags_now["throttled"] = self.level < self.top
        self.flags_now["soft_temp_limit"] = soft
        self.flags_now["freq_capped"] = soft
        for k, v in self.flags_now.items():
            self.flags_occurred[k] = self.flags_occurred[k] or v

    # -- telemetry ---------------------------------------------------------------------
    def channels(self) -> list:
        """The channels of :meth:`sample_row`: those the agent finds on a Raspberry Pi, plus power."""
        return [channel("thermal_zone0.temp_c", "thermal_zone", "temp", "°C", "cpu-thermal"),
                *(cpufreq_channel("policy0", key) for key in CPUFREQ_KEYS),
                channel("hwmon0.power1.power_w", "hwmon", "power", "W", "sim-power: board power (simulated)"),
                *(channel(name, "vcgencmd", qty, unit, label) for name, qty, unit, label in VCGENCMD_CHANNELS)]

    def static(self) -> dict:
        p = self.p
        trips = [{"index": 0, "type": "passive", "temp_c": p.trip_c, "hyst_c": p.hysteresis_c},
                 {"index": 1, "type": "critical", "temp_c": p.critical_c, "hyst_c": 0.0}]
        return {
            "thermal_zone0": {"source": "thermal_zone", "type": "cpu-thermal", "trips": trips},
            "policy0": {"source": "cpufreq", "cpuinfo_min_freq_hz": int(p.freqs_hz[0]),
                        "cpuinfo_max_freq_hz": int(p.f_max),
                        "available_freqs_hz": [int(f) for f in p.freqs_hz], "cpus": list(range(p.cpus))},
            "hwmon0": {"source": "hwmon", "name": "sim-power"},
            "vcgencmd": {"source": "vcgencmd", "interval_s": None},
        }

    def sample_row(self, busy: bool) -> list:
        """One reading of every channel, in :meth:`channels` order."""
        reading = self.read_sensor()
        cur = self.freq_hz if busy else self.p.freqs_hz[0]  # an idle CPU drops to its lowest clock
        return [reading, cur, self.p.freqs_hz[0], self.freq_hz, self.power_w(1.0 if busy else 0.0),
                round(reading, 1), cur, float(self.throttled_raw())]

    def snapshot(self) -> dict:
        """The agent's ``thermal`` answer, for this board."""
        reading = self.read_sensor()
        flags: Dict[str, object] = {"raw": hex(self.throttled_raw())}
        for name in THROTTLE_BITS:
            flags[f"{name}_now"] = self.flags_now[name]
            flags[f"{name}_occurred"] = self.flags_occurred[name]
        return {"available": True, "temps_c": {"cpu-thermal": reading}, "freqs_hz": {"policy0": self.freq_hz},
                "throttled": flags, "clock_ns": self.now_ns, "errors": {}}
