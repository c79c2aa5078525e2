"""Energy and power figures (level 0): the ``power`` section of a run (docs/energy.md), and the energy of a
soak's (or a sweep point's) window without a meter."""
from __future__ import annotations

from typing import Dict, List, Optional

from edgebench.results.figures.common import Interval, LoadWindow, PowerLabelled
from edgebench.results.types import Count, Figure, Flag, Mapping_, Num, Text, field, sub


class EnergyFigure(PowerLabelled, Interval):
    """An energy or power figure with its interval (docs/energy.md)."""
    energy_j: Num = field("the energy (the mean over inferences, or events), with the share its definition says")
    power_w: Num = field("the mean power (idle: over the quiet windows)")
    ci_low_j: Num = field("the energy's interval, low end")
    ci_high_j: Num = field("... high end")
    ci_low_w: Num = field("the power's interval, low end")
    ci_high_w: Num = field("... high end")
    above_idle_j: Num = field("inference: its energy minus idle power x its duration")
    above_idle_ci_low_j: Num = field("... its interval, low end")
    above_idle_ci_high_j: Num = field("... high end")
    above_idle_resolved: Flag = field("whether the above-idle energy exceeds the meter's rounding floor")
    avg_power_w: Num = field("the average power at the run's rate")
    per_inference_j: Num = field("energy per inference, the idle share included")
    rate_hz: Num = field("the rate the figure assumes")
    duty: Num = field("the share of time spent inferring (0-1)")
    duration_s: Num = field("inference: the median inference window's duration")
    n: Count = field("inferences (or events) the figure rests on")
    sd_j: Num = field("standard deviation of the per-inference energies")
    sd_w: Num = field("standard deviation of the power (idle: of its batch means)")
    window: Text = field("which window the figure covers")
    resolution_j: Num = field("the smallest energy the meter's samples resolve (rounding floor)", "J")
    resolved: Flag = field("whether the figure and its interval exceed the rounding floor")
    margin_s: Num = field("event: the largest margin taken around an inference", "s")
    how: Text = field("how an estimated figure was computed")
    drift: Flag = field("idle: the windows before and after the run disagree")
    windows: Optional[List[Mapping_]] = field("idle: each quiet window's own power and interval")


class DutyCycle(PowerLabelled):
    """The duty-cycle model at the run's rate: idle power + energy per event x rate (docs/energy.md)."""
    rate_hz: Num = field("the rate the model is evaluated at (the run's)")
    duty: Num = field("fraction of time spent inferring (null when the event time is unknown)")
    idle_w: Num = field("idle power")
    event_j: Num = field("energy per event above idle")
    avg_power_w: Num = field("idle power + energy per event x rate")
    asleep_fraction: Num = field("the share of time not inferring (0-1)")
    model: Text = field("the model's formula in words")
    requested_duty: Num = field("the duty cycle asked for (`--duty`)")
    error: Text = field("why the model could not be evaluated at this rate")


class AveragePower(PowerLabelled):
    """Average power at the run's rate: measured and from the model (idle + energy per event x rate)."""
    measured_w: Num = field("average power the meter measured over the fixed-rate span (harness replies between "
                            "chunks included)")
    model_w: Num = field("average power from the model: idle + mean event energy x achieved rate")
    rate_hz: Num = field("the rate achieved over that span")
    requested_rate_hz: Num = field("the rate asked for")
    span_s: Num = field("the fixed-rate span the measured average covers")
    note: Text = field("how the two compare, or why one is missing")


class Alignment(Figure):
    """How the meter's clock was aligned with the device's."""
    method: Text = field("how the clocks were aligned (request brackets, markers, a shared clock)")
    offset_s: Num = field("the meter clock's offset from the device clock")
    uncertainty_s: Num = field("the offset's uncertainty (plus or minus)")
    consistent: Flag = field("the request brackets agree (no clock drift seen)")
    n_brackets: Count = field("requests bracketed on the host clock")
    bracket_check: Optional[Mapping_] = field("a local board: the bracket estimate the same clock was checked against")
    warning: Text = field("what makes the alignment doubtful, or null")
    meter_anchor_uncertainty_s: Num = field("the meter's own clock anchor uncertainty", "s")
    n_windows: Count = field("marker alignment: the inference windows the meter saw")
    n_device_inferences: Count = field("marker alignment: the inferences the device reported")
    notes: Optional[List[Text]] = field("notes on the alignment")


class WindowEnergy(LoadWindow):
    """Energy of a soak's (or a sweep point's) window without a meter (bench/window_power.py)."""
    per_inference_j: Num = field("energy per inference, idle time between inferences included", "J")
    avg_power_w: Num = field("average power over the window", "W")
    label: Text = field("`simulated` or `estimated (datasheet)`")
    n: Count = field("inferences started in the window")
    span_s: Num = field("the window's length")
    rate_hz: Num = field("the achieved rate over the window")
    busy_fraction: Num = field("achieved rate x median latency (datasheet estimate)")
    definition: Text = field("what `per_inference_j` divides, in words")
    window: Text = field("`sustained` or `final`")


class PowerSection(PowerLabelled):
    """The `power` section: the meter, the energy figures and their model (docs/energy.md)."""
    measured: Flag = field("whether a meter measured the run (false: no meter, or figures estimated)")
    boundary: Text = field("what the meter's current passes through (the power boundary)")
    boundary_meaning: Text = field("what that boundary includes and excludes, in words")
    instrument: Text = field("the meter")
    tested_against: Text = field("what the meter's figures were checked against")
    sample_rate_hz: Num = field("the meter's sample rate", "Hz")
    method: Text = field("how the figures were obtained, in words")
    model: Text = field("the average-power model in words (idle power + energy per event x rate)")
    note: Text = field("why there is no figure (no meter attached, ...)")
    idle: EnergyFigure = sub(EnergyFigure, "idle power over the quiet windows before and after the load")
    inference: EnergyFigure = sub(EnergyFigure, "energy in the inference window, the idle share included")
    event: EnergyFigure = sub(EnergyFigure, "energy above idle in the inference window plus margins around it")
    wake_up: EnergyFigure = sub(EnergyFigure, "event energy minus inference energy above idle")
    duty_cycle: DutyCycle = sub(DutyCycle, "the duty-cycle model at the run's rate")
    average: AveragePower = sub(AveragePower, "average power at the run's rate: measured and modelled")
    window: WindowEnergy = sub(WindowEnergy, "a soak's energy over its sustained window without a meter")
    alignment: Alignment = sub(Alignment, "how the meter's clock was aligned with the device's")
    excluded: Optional[Dict[str, Count]] = field("inferences left out of the energy figures, by reason (`warmup`, "
                                                 "`chunk_end`, `not_covered_by_meter`)")
    meter: Optional[Mapping_] = field("the meter's own description (instrument, sample rate, boundary, ...)")
    samples: Optional[Mapping_] = field("the power samples: `file` (power.parquet), `n`, `clock`, `complete`, "
                                        "`problem`")
    datasheet: Optional[Mapping_] = field("no meter: the board profile's datasheet power figures used")
    definitions: Optional[Dict[str, Text]] = field("what each energy figure covers")
