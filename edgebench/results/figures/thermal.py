"""Thermal figures (level 0): snapshots at a run's start and end, and a soak's windows, course and verdict
(docs/soak.md)."""
from __future__ import annotations

from typing import Dict, List, Optional, Union

from edgebench.results.figures.common import Labelled, LoadWindow, SoakCourse
from edgebench.results.types import Bool, Count, Figure, Flag, Int, Mapping_, Num, Pair, Str, Text, field, sub


class ThermalSensors(Figure):
    """Thermal figures of a board that may have no sensor."""
    available: Flag = field("whether the board reports any thermal sensor")


class Snapshot(ThermalSensors):
    """A thermal snapshot: temperatures, clocks, decoded throttle flags."""
    temps_c: Optional[Dict[str, Num]] = field("temperature per sensor (thermal zone, or vcgencmd)")
    freqs_hz: Optional[Dict[str, Num]] = field("clock per CPU policy (or the SoC's clocks)")
    throttled: Optional[Dict[str, Union[Bool, Str, Int, None]]] = field("decoded throttle flags (a Raspberry Pi's "
                                                                        "`get_throttled` bits, ...)")
    clock_ns: Count = field("the device clock when the snapshot was taken (`time.perf_counter_ns`)")
    errors: Optional[Mapping_] = field("the readings that failed, each with its error")


class ThermalSection(SoakCourse, ThermalSensors):
    """The `thermal` section: snapshots at the start and end of the run, and a soak's course."""
    start: Snapshot = sub(Snapshot, "the snapshot before the first measurement")
    end: Snapshot = sub(Snapshot, "the snapshot after the last measurement")
    telemetry: Optional[Mapping_] = field("the telemetry file and how it was sampled")


class WindowLatency(Figure):
    """The end-to-end latency over a window of a soak."""
    median_s: Num = field("median end-to-end latency over the window")
    ci_low_s: Num = field("its 95% interval, low end")
    ci_high_s: Num = field("... high end")
    p99_s: Num = field("99th percentile latency over the window")
    n: Count = field("inferences in the window")


class SoakWindow(Labelled, LoadWindow, WindowLatency):
    """A soak's burst or sustained window: latency and throughput, clock and temperature."""
    span_s: Num = field("the window's wall time on the device clock (first start to last end)")
    temp_c: Num = field("median temperature over the window")
    freq_hz: Num = field("median CPU clock over the window")
    throughput_per_s: Num = field("achieved: inferences completed over the window's wall time")
    throughput_definition: Text = field("what the window's throughput is (achieved, never 1/median)")
    throughput_se_log: Num = field("standard error of the log throughput (within the window)")
    throughput_df: Num = field("its degrees of freedom")
    scenario: Text = field("`single-stream` or `fixed-rate`")
    telemetry_samples: Count = field("telemetry samples inside the window (temp_c, freq_hz are their medians)")


class ThrottleEvent(Figure):
    """One throttle cause (or trip point): how often, first onset, total time."""
    events: Count = field("onsets seen")
    first_s: Num = field("first onset after the load started", "s")
    time_s: Num = field("total time spent in that state")


class FrequencyShare(Figure):
    """The time spent at one CPU clock during the soak."""
    freq_hz: Num = field("the clock")
    fraction: Num = field("the share of the soak spent at it (0-1)")
    time_s: Num = field("the time spent at it")


class SoakThermal(SoakCourse):
    """A soak's thermal course: telemetry, temperatures, throttling, time at each clock."""
    telemetry: Text = field("how telemetry was sampled: `on-device`, `between-chunks` or `none`")
    judged: Flag = field("whether thermal steady state could be judged (a thermal source)")
    temp_columns: Optional[List[Str]] = field("the telemetry's temperature columns")
    frequency_source: Text = field("where the CPU clock was read (null: no clock source)")
    max_temp_at_s: Num = field("when the primary sensor read its hottest, after the load started")
    telemetry_samples: Count = field("telemetry samples taken during the soak")
    telemetry_cost_s: Num = field("device time spent sampling telemetry", "s")
    telemetry_cost_fraction: Num = field("device time spent sampling telemetry over the soak's duration (0-1)")
    throttle_events: Optional[Dict[str, ThrottleEvent]] = field("throttle causes seen, each with its onsets and time")
    trips_reached: Optional[Dict[str, ThrottleEvent]] = field("thermal-zone trip points reached, per zone and trip")
    throttle_occurred_unseen: Optional[List[Str]] = field("causes the firmware says happened between samples")
    time_at_frequency: Optional[List[FrequencyShare]] = field("the time spent at each CPU clock")


class Trend(Figure):
    """The trend of one series (temperature or latency) over the trailing window (edgebench.stats.steady)."""
    quantity: Text = field("the series (`temperature`, `latency`)")
    unit: Text = field("its unit (`°C`, `s`)")
    window_s: Num = field("the trailing window the trend is judged over")
    covered_s: Num = field("how much of the window the data span", "s")
    n: Count = field("samples in the window")
    n_points: Count = field("points the slope was fitted to (batch medians; not percentage points)", "count")
    level: Num = field("the series' level over the window (its unit)")
    slope_per_s: Num = field("the fitted slope (its unit per second)", "unit/s")
    ci_low_per_s: Num = field("the slope's interval, low end (the series' unit per second)", "unit/s")
    ci_high_per_s: Num = field("... high end", "unit/s")
    change: Num = field("slope x window: the change over the window (its unit)")
    change_low: Num = field("the change's interval, low end (its unit)")
    change_high: Num = field("... high end")
    step: Num = field("median of the window's last third minus its first third")
    floor: Num = field("the change below which the series counts as flat (its unit)")
    ci_level: Num = field("the intervals' level (0.95)")
    flat: Flag = field("the change's interval lies within the floor")
    state: Text = field("`flat`, `rising`, `falling`, `step`, `undetermined` or `too-short`")
    reason: Text = field("the verdict in words")


class SoakVerdict(Figure):
    """The steady-state verdict: temperature and latency flat over the trailing window."""
    steady: Flag = field("temperature and latency are flat over the trailing window")
    reason: Text = field("why, in words")
    thermal_judged: Flag = field("whether temperature could be judged (a thermal source)")
    latency: Trend = sub(Trend, "the latency's trend over the trailing window")
    temperature: Trend = sub(Trend, "absent without a thermal source")


class SoakOutcome(Figure):
    """How a soak ended: steady or not, after how long."""
    steady: Flag = field("steady state was reached")
    duration_s: Num = field("the soak's duration from the load's start")


class SoakFigure(SoakOutcome):
    """`soak`: burst against sustained, the thermal course, the steady-state verdict (docs/soak.md)."""
    burst: SoakWindow = sub(SoakWindow, "the first seconds of the load (`--burst-s`)")
    sustained: SoakWindow = sub(SoakWindow, "the trailing window at the end of the soak")
    sustained_over_burst: Num = field("sustained throughput / burst throughput")
    sustained_over_burst_ci: Pair = field("its 95% interval (the two windows' within-window uncertainties)")
    latency_sustained_over_burst: Num = field("sustained median latency / burst median latency")
    busy_fraction: Num = field("device time inferring / soak duration")
    steady_at_s: Num = field("when steady state was established (the end of the soak)", "s")
    cool_down: Optional[Mapping_] = field("the cool-down before the soak (`--cool-down`): `done`, `duration_s`, "
                                           "`baseline_temp_c`, `reason`")
    thermal: SoakThermal = sub(SoakThermal, "the soak's thermal course")
    verdict: SoakVerdict = sub(SoakVerdict, "the steady-state verdict")

