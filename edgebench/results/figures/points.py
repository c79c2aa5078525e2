"""A sweep's grid (level 0): ``extra.points``, one :class:`Point` per configuration (docs/soak.md, "Sweeps")."""
from __future__ import annotations

from edgebench.results.types import Figure, Flag, Num, Text, sub


class PointLatency(Figure):
    median_s: Num = None
    ci_low_s: Num = None
    ci_high_s: Num = None


class PointEnergy(Figure):
    per_inference_j: Num = None
    label: Text = None


class Point(Figure):
    """One point of a sweep (docs/soak.md, "Sweeps")."""
    id: Text = None
    name: Text = None
    axis: Text = None
    status: Text = None
    duty: Num = None
    realized_duty: Num = None
    duration_s: Num = None
    throughput_per_s: Num = None
    max_temp_c: Num = None
    steady_temp_c: Num = None
    sustained_freq_hz: Num = None
    time_to_first_throttle_s: Num = None
    steady: Flag = None
    throttled: Flag = None
    rate_sustained: Flag = None
    latency: PointLatency = sub(PointLatency)
    energy: PointEnergy = sub(PointEnergy)

