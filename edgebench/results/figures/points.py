"""A sweep's grid (level 0): ``extra.points``, one :class:`Point` per configuration (docs/soak.md, "Sweeps")."""
from __future__ import annotations

from typing import List, Optional

from edgebench.results.figures.energy import WindowEnergy
from edgebench.results.types import Count, Figure, Flag, Num, Str, Text, field, sub


class PointLatency(Figure):
    """The point's end-to-end latency over its final (sustained) window."""
    median_s: Num = None
    ci_low_s: Num = None
    ci_high_s: Num = None
    p99_s: Num = None
    n: Count = None


class PointModel(Figure):
    """The model file a point ran."""
    name: Text = None
    path: Text = None
    sha256: Text = None
    precision: Text = None


class Point(Figure):
    """One point of a sweep (docs/soak.md, "Sweeps")."""
    index: Count = field("the point's place in the grid, from 1 (lightest load first)")
    id: Text = None
    name: Text = None
    axis: Text = field("`duty` or `rate`: the sweep's load axis")
    status: Text = field("`not-run`, `complete`, `incomplete` or `failed`")
    status_reason: Text = None
    error: Text = field("a failed point: the error")
    run_dir: Text = field("the point's soak run folder, relative to the sweep's")
    run_id: Text = None
    label: Text = None
    model: PointModel = sub(PointModel)
    kernels: Text = None
    delegate: Text = None
    threads: Count = None
    duty: Num = None
    requested_rate_hz: Num = None
    achieved_rate_hz: Num = None
    probe_e2e_s: Num = field("duty axis: the probe's median back-to-back latency", "s")
    load_from: Text = field("how the point's load was derived")
    window_s: Num = field("the trailing window of the steady-state verdict", "s")
    notes: Optional[List[Str]] = None
    realized_duty: Num = None
    duration_s: Num = None
    verdict: Text = field("why the point's soak stopped")
    thermal_judged: Flag = None
    throughput_per_s: Num = None
    throughput_definition: Text = None
    max_temp_c: Num = None
    steady_temp_c: Num = None
    sustained_temp_c: Num = field("median temperature over the point's final window", "°C")
    sustained_freq_hz: Num = None
    time_to_first_throttle_s: Num = None
    steady: Flag = None
    throttled: Flag = None
    rate_sustained: Flag = None
    rate_message: Text = field("what the board achieved when it did not sustain the rate")
    warnings: Optional[List[Str]] = field("the codes of the point's warnings")
    latency: PointLatency = sub(PointLatency)
    energy: WindowEnergy = sub(WindowEnergy)
