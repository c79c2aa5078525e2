"""Thermal figures (level 0): snapshots at a run's start and end, and a soak's windows, course and verdict
(docs/soak.md)."""
from __future__ import annotations

from typing import Dict, List, Optional, Union

from edgebench.results.types import Bool, Count, Figure, Flag, Int, Mapping_, Num, Str, Text, sub


class Snapshot(Figure):
    """A thermal snapshot: temperatures, clocks, decoded throttle flags."""
    available: Flag = None
    temps_c: Optional[Dict[str, Num]] = None
    freqs_hz: Optional[Dict[str, Num]] = None
    throttled: Optional[Dict[str, Union[Bool, Str, Int, None]]] = None
    clock_ns: Count = None
    errors: Optional[Mapping_] = None


class ThermalSection(Figure):
    available: Flag = None
    start: Snapshot = sub(Snapshot)
    end: Snapshot = sub(Snapshot)
    max_temp_c: Num = None
    start_temp_c: Num = None
    steady_temp_c: Num = None
    time_to_first_throttle_s: Num = None
    telemetry: Optional[Mapping_] = None


class SoakWindow(Figure):
    """A soak's burst or sustained window: latency and throughput, clock and temperature."""
    median_s: Num = None
    ci_low_s: Num = None
    ci_high_s: Num = None
    p99_s: Num = None
    n: Count = None
    span_s: Num = None
    t_from_s: Num = None
    t_to_s: Num = None
    temp_c: Num = None
    freq_hz: Num = None
    throughput_per_s: Num = None


class ThrottleEvent(Figure):
    events: Count = None
    first_s: Num = None
    time_s: Num = None


class FrequencyShare(Figure):
    freq_hz: Num = None
    fraction: Num = None
    time_s: Num = None


class SoakThermal(Figure):
    frequency_source: Text = None
    max_temp_c: Num = None
    max_temp_at_s: Num = None
    start_temp_c: Num = None
    steady_temp_c: Num = None
    time_to_first_throttle_s: Num = None
    telemetry_samples: Count = None
    telemetry_cost_fraction: Num = None
    throttle_events: Optional[Dict[str, ThrottleEvent]] = None
    time_at_frequency: Optional[List[FrequencyShare]] = None


class SoakVerdict(Figure):
    steady: Flag = None
    reason: Text = None
    thermal_judged: Flag = None
    latency: Optional[Mapping_] = None
    temperature: Optional[Mapping_] = None


class SoakFigure(Figure):
    """`soak`: burst against sustained, the thermal course, the steady-state verdict (docs/soak.md)."""
    burst: SoakWindow = sub(SoakWindow)
    sustained: SoakWindow = sub(SoakWindow)
    sustained_over_burst: Num = None
    steady: Flag = None
    duration_s: Num = None
    cool_down: Optional[Mapping_] = None
    thermal: SoakThermal = sub(SoakThermal)
    verdict: SoakVerdict = sub(SoakVerdict)

