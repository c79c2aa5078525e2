"""Energy and power figures (level 0): the ``power`` section of a run (docs/energy.md)."""
from __future__ import annotations

from typing import Dict, Optional

from edgebench.results.types import Count, Figure, Flag, Mapping_, Num, Text, sub


class EnergyFigure(Figure):
    """An energy or power figure with its interval (docs/energy.md)."""
    energy_j: Num = None
    power_w: Num = None
    ci_low_j: Num = None
    ci_high_j: Num = None
    ci_low_w: Num = None
    ci_high_w: Num = None
    above_idle_j: Num = None
    above_idle_ci_low_j: Num = None
    above_idle_ci_high_j: Num = None
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


class AveragePower(Figure):
    """AveragePower power at the run's rate: measured and from the model (idle + energy per event x rate)."""
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


class PowerSection(Figure):
    measured: Flag = None
    boundary: Text = None
    boundary_meaning: Text = None
    instrument: Text = None
    tested_against: Text = None
    label: Text = None
    method: Text = None
    model: Text = None
    idle: EnergyFigure = sub(EnergyFigure)
    inference: EnergyFigure = sub(EnergyFigure)
    event: EnergyFigure = sub(EnergyFigure)
    wake_up: EnergyFigure = sub(EnergyFigure)
    duty_cycle: EnergyFigure = sub(EnergyFigure)
    average: AveragePower = sub(AveragePower)
    window: EnergyFigure = sub(EnergyFigure)
    alignment: Alignment = sub(Alignment)
    excluded: Optional[Dict[str, Count]] = None
    meter: Optional[Mapping_] = None
    samples: Optional[Mapping_] = None

