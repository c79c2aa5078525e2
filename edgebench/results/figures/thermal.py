"""Thermal figures (level 0): snapshots at a run's start and end, and a soak's windows, course and verdict
(docs/soak.md)."""
from __future__ import annotations

from typing import Dict, List, Optional, Union

from edgebench.results.types import Bool, Count, Figure, Flag, Int, Mapping_, Num, Pair, Str, Text, field, sub


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
    throughput_definition: Text = field("what the window's throughput is (achieved, never 1/median)")
    throughput_se_log: Num = field("standard error of the log throughput (within the window)")
    throughput_df: Num = field("its degrees of freedom")
    scenario: Text = field("`single-stream` or `fixed-rate`")
    label: Text = None
    telemetry_samples: Count = field("telemetry samples inside the window (temp_c, freq_hz are their medians)")


class ThrottleEvent(Figure):
    events: Count = None
    first_s: Num = field("first onset after the load started", "s")
    time_s: Num = None


class FrequencyShare(Figure):
    freq_hz: Num = None
    fraction: Num = None
    time_s: Num = None


class SoakThermal(Figure):
    telemetry: Text = field("how telemetry was sampled: `on-device`, `between-chunks` or `none`")
    judged: Flag = field("whether thermal steady state could be judged (a thermal source)")
    temp_columns: Optional[List[Str]] = field("the telemetry's temperature columns")
    frequency_source: Text = None
    max_temp_c: Num = None
    max_temp_at_s: Num = None
    start_temp_c: Num = None
    steady_temp_c: Num = None
    time_to_first_throttle_s: Num = None
    telemetry_samples: Count = None
    telemetry_cost_s: Num = field("device time spent sampling telemetry", "s")
    telemetry_cost_fraction: Num = None
    throttle_events: Optional[Dict[str, ThrottleEvent]] = None
    trips_reached: Optional[Dict[str, ThrottleEvent]] = field("thermal-zone trip points reached, per zone and trip")
    throttle_occurred_unseen: Optional[List[Str]] = field("causes the firmware says happened between samples")
    time_at_frequency: Optional[List[FrequencyShare]] = None


class Trend(Figure):
    """The trend of one series (temperature or latency) over the trailing window (edgebench.stats.steady)."""
    quantity: Text = None
    unit: Text = None
    window_s: Num = None
    covered_s: Num = field("how much of the window the data span", "s")
    n: Count = None
    n_points: Count = field("points the slope was fitted to (batch medians)")
    level: Num = field("the series' level over the window (its unit)")
    slope_per_s: Num = field("the fitted slope (its unit per second)")
    ci_low_per_s: Num = None
    ci_high_per_s: Num = None
    change: Num = field("slope x window: the change over the window (its unit)")
    change_low: Num = None
    change_high: Num = None
    step: Num = field("median of the window's last third minus its first third")
    floor: Num = field("the change below which the series counts as flat (its unit)")
    ci_level: Num = None
    flat: Flag = None
    state: Text = field("`flat`, `rising`, `falling`, `step`, `undetermined` or `too-short`")
    reason: Text = None


class SoakVerdict(Figure):
    """The steady-state verdict: temperature and latency flat over the trailing window."""
    steady: Flag = None
    reason: Text = None
    thermal_judged: Flag = None
    latency: Trend = sub(Trend)
    temperature: Trend = sub(Trend, "absent without a thermal source")


class SoakFigure(Figure):
    """`soak`: burst against sustained, the thermal course, the steady-state verdict (docs/soak.md)."""
    burst: SoakWindow = sub(SoakWindow)
    sustained: SoakWindow = sub(SoakWindow)
    sustained_over_burst: Num = None
    sustained_over_burst_ci: Pair = field("its 95% interval (the two windows' within-window uncertainties)")
    latency_sustained_over_burst: Num = field("sustained median latency / burst median latency")
    busy_fraction: Num = field("device time inferring / soak duration")
    steady: Flag = None
    steady_at_s: Num = field("when steady state was established (the end of the soak)", "s")
    duration_s: Num = None
    cool_down: Optional[Mapping_] = None
    thermal: SoakThermal = sub(SoakThermal)
    verdict: SoakVerdict = sub(SoakVerdict)

