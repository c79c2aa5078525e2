"""Energy and power figures (level 0): the ``power`` section of a run (docs/energy.md), and the energy of a
soak's (or a sweep point's) window without a meter."""
from __future__ import annotations

from typing import Dict, List, Optional

from edgebench.results.types import Count, Figure, Flag, Mapping_, Num, Text, field, sub


class EnergyFigure(Figure):
    """An energy or power figure with its interval (docs/energy.md)."""
    energy_j: Num = None
    power_w: Num = None
    ci_low_j: Num = None
    ci_high_j: Num = None
    ci_low_w: Num = None
    ci_high_w: Num = None
    ci_level: Num = None
    above_idle_j: Num = None
    above_idle_ci_low_j: Num = None
    above_idle_ci_high_j: Num = None
    above_idle_resolved: Flag = field("whether the above-idle energy exceeds the meter's rounding floor")
    avg_power_w: Num = None
    per_inference_j: Num = None
    rate_hz: Num = None
    duty: Num = None
    duration_s: Num = None
    n: Count = None
    sd_j: Num = None
    sd_w: Num = None
    label: Text = None
    ci_method: Text = None
    window: Text = None
    resolution_j: Num = field("the smallest energy the meter's samples resolve (rounding floor)", "J")
    resolved: Flag = field("whether the figure and its interval exceed the rounding floor")
    margin_s: Num = field("event: the largest margin taken around an inference", "s")
    how: Text = field("how an estimated figure was computed")
    drift: Flag = field("idle: the windows before and after the run disagree")
    windows: Optional[List[Mapping_]] = field("idle: each quiet window's own power and interval")


class DutyCycle(Figure):
    """The duty-cycle model at the run's rate: idle power + energy per event x rate (docs/energy.md)."""
    rate_hz: Num = None
    duty: Num = field("fraction of time spent inferring (null when the event time is unknown)")
    idle_w: Num = None
    event_j: Num = None
    avg_power_w: Num = None
    asleep_fraction: Num = None
    model: Text = None
    label: Text = None
    requested_duty: Num = field("the duty cycle asked for (`--duty`)")
    error: Text = field("why the model could not be evaluated at this rate")


class AveragePower(Figure):
    """Average power at the run's rate: measured and from the model (idle + energy per event x rate)."""
    measured_w: Num = None
    model_w: Num = None
    rate_hz: Num = None
    requested_rate_hz: Num = None
    span_s: Num = None
    label: Text = None
    note: Text = None


class Alignment(Figure):
    """How the meter's clock was aligned with the device's."""
    method: Text = None
    offset_s: Num = None
    uncertainty_s: Num = None
    consistent: Flag = field("the request brackets agree (no clock drift seen)")
    n_brackets: Count = field("requests bracketed on the host clock")
    bracket_check: Optional[Mapping_] = field("a local board: the bracket estimate the same clock was checked against")
    warning: Text = None
    meter_anchor_uncertainty_s: Num = field("the meter's own clock anchor uncertainty", "s")
    n_windows: Count = field("marker alignment: the inference windows the meter saw")
    n_device_inferences: Count = field("marker alignment: the inferences the device reported")
    notes: Optional[List[Text]] = None


class WindowEnergy(Figure):
    """Energy of a soak's (or a sweep point's) window without a meter (bench/window_power.py)."""
    per_inference_j: Num = field("energy per inference, idle time between inferences included", "J")
    avg_power_w: Num = field("average power over the window", "W")
    label: Text = field("`simulated` or `estimated (datasheet)`")
    n: Count = field("inferences started in the window")
    span_s: Num = None
    rate_hz: Num = None
    busy_fraction: Num = field("achieved rate x median latency (datasheet estimate)")
    definition: Text = None
    window: Text = field("`sustained` or `final`")
    t_from_s: Num = field("window start after the load started", "s")
    t_to_s: Num = field("window end after the load started", "s")


class PowerSection(Figure):
    measured: Flag = None
    boundary: Text = None
    boundary_meaning: Text = None
    instrument: Text = None
    tested_against: Text = None
    sample_rate_hz: Num = field("the meter's sample rate", "Hz")
    label: Text = None
    method: Text = None
    model: Text = None
    note: Text = None
    idle: EnergyFigure = sub(EnergyFigure)
    inference: EnergyFigure = sub(EnergyFigure)
    event: EnergyFigure = sub(EnergyFigure)
    wake_up: EnergyFigure = sub(EnergyFigure)
    duty_cycle: DutyCycle = sub(DutyCycle)
    average: AveragePower = sub(AveragePower)
    window: WindowEnergy = sub(WindowEnergy)
    alignment: Alignment = sub(Alignment)
    excluded: Optional[Dict[str, Count]] = None
    meter: Optional[Mapping_] = None
    samples: Optional[Mapping_] = None
    datasheet: Optional[Mapping_] = field("no meter: the board profile's datasheet power figures used")
    definitions: Optional[Dict[str, Text]] = field("what each energy figure covers")
