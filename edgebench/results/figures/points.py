"""A sweep's grid (level 0): ``extra.points``, one :class:`Point` per configuration (docs/soak.md, "Sweeps")."""
from __future__ import annotations

from typing import List, Optional

from edgebench.results.conditions import ModelIdentity
from edgebench.results.figures.common import Engine, FixedRate, Labelled, SoakTemperatures
from edgebench.results.figures.energy import WindowEnergy
from edgebench.results.figures.thermal import SoakOutcome, WindowLatency
from edgebench.results.types import Count, Flag, Num, Str, Text, field, sub


class PointLatency(WindowLatency):
    """The point's end-to-end latency over its final (sustained) window."""


class PointModel(ModelIdentity):
    """The model file a point ran (its model section's identity)."""


class Point(Labelled, Engine, FixedRate, SoakOutcome, SoakTemperatures):
    """One point of a sweep (docs/soak.md, "Sweeps")."""
    index: Count = field("the point's place in the grid, from 1 (lightest load first)")
    id: Text = field("the point's id (its configuration in short)")
    name: Text = field("the point's name")
    axis: Text = field("`duty` or `rate`: the sweep's load axis")
    status: Text = field("`not-run`, `complete`, `incomplete` or `failed`")
    status_reason: Text = field("why a point is `incomplete` or `failed`")
    error: Text = field("a failed point: the error")
    run_dir: Text = field("the point's soak run folder, relative to the sweep's")
    run_id: Text = field("the point's soak run id")
    model: PointModel = sub(PointModel, "the model the point ran")
    threads: Count = field("the interpreter's threads")
    duty: Num = field("duty axis: the share of time asked to be spent inferring (0-1)")
    probe_e2e_s: Num = field("duty axis: the probe's median back-to-back latency", "s")
    load_from: Text = field("how the point's load was derived")
    window_s: Num = field("the trailing window of the steady-state verdict", "s")
    notes: Optional[List[Str]] = field("notes on the point")
    realized_duty: Num = field("the share of time spent inferring (0-1): achieved rate x median latency at a fixed "
                               "rate, else the soak's busy fraction")
    verdict: Text = field("why the point's soak stopped")
    thermal_judged: Flag = field("whether thermal steady state could be judged")
    throughput_per_s: Num = field("achieved throughput over the final window")
    throughput_definition: Text = field("what it divides, in words")
    sustained_temp_c: Num = field("median temperature over the point's final window", "°C")
    sustained_freq_hz: Num = field("median CPU clock over the final window")
    throttled: Flag = field("the board throttled during the point")
    rate_sustained: Flag = field("the board sustained the rate asked for")
    rate_message: Text = field("what the board achieved when it did not sustain the rate")
    warnings: Optional[List[Str]] = field("the codes of the point's warnings")
    latency: PointLatency = sub(PointLatency, "the point's latency over its final window")
    energy: WindowEnergy = sub(WindowEnergy, "the point's energy over its final window (its soak's `power.window`)")
