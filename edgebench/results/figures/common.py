"""Keys several kinds of figure share (level 0), each declared once: a figure class that holds one
inherits its declaration (one key, one meaning, one description in the schema and the docs).

Pydantic orders a class's keys base by base, the last base's first: ``class X(Labelled, Interval)``
lists ``ci_method``, ``ci_level``, ``label``, then ``X``'s own keys."""
from __future__ import annotations

from edgebench.results.types import Figure, Num, Text, field


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
