"""Keys several kinds of figure share (level 0), each declared once: a figure class that holds one
inherits its declaration (one key, one meaning, one description in the schema and the docs).

Pydantic orders a class's keys base by base, the last base's first: ``class X(Labelled, Interval)``
lists ``ci_method``, ``ci_level``, ``label``, then ``X``'s own keys."""
from __future__ import annotations

from edgebench.results.types import Count, Figure, Num, Text, field


class Labelled(Figure):
    """A section labelled as the run is."""
    label: Text = field("the figures' label, as a run's (`measured`, `emulated`, `simulated`, `estimated`)")


class PowerLabelled(Figure):
    """A section of energy figures, labelled as the power section is."""
    label: Text = field("the figures' label (`measured`, `estimated (datasheet)`, `simulated`)")


class IntervalMethod(Figure):
    """A figure with an interval: how it was made."""
    ci_method: Text = field("how the interval was made")


class IntervalLevel(Figure):
    """A figure with an interval: its level."""
    ci_level: Num = field("the interval's level (0.95)")


class Interval(IntervalLevel, IntervalMethod):
    """A figure with an interval: how it was made and its level."""


class Batched(Figure):
    """Figures of inferences over a batch of inputs."""
    batch: Count = field("inputs per inference")


class Engine(Figure):
    """The kernels and delegate a model ran on."""
    kernels: Text = field("the kernels: `xnnpack`, `builtin` or `reference`")
    delegate: Text = field("the delegate (e.g. the Edge TPU's), null without one")


class FixedRate(Figure):
    """A fixed-rate scenario's rate: asked for and achieved."""
    requested_rate_hz: Num = field("fixed-rate scenario: the rate asked for", "Hz")
    achieved_rate_hz: Num = field("fixed-rate scenario: the rate achieved", "Hz")


class Statistic(Figure):
    """A timed figure that is a median or a mean."""
    statistic: Text = field("`median` or `mean`")


class LoadWindow(Figure):
    """A window of a soak's load, placed on the load's clock."""
    t_from_s: Num = field("the window's start after the load started", "s")
    t_to_s: Num = field("the window's end after the load started", "s")


class SoakTemperatures(Figure):
    """A soak's temperatures and first throttle."""
    max_temp_c: Num = field("the hottest the soak's primary sensor read")
    steady_temp_c: Num = field("median temperature over the soak's trailing window")
    time_to_first_throttle_s: Num = field("the soak's first throttle onset after the load started (null: none)")


class SoakCourse(SoakTemperatures):
    """A soak's temperature course, from its first reading."""
    start_temp_c: Num = field("the soak's primary sensor's first reading")
