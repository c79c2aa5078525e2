"""A microcontroller's own figures (level 0): instructions or cycles per MAC, memory and the fit check
(docs/mcu.md)."""
from __future__ import annotations

from typing import List, Optional

from edgebench.results.types import Count, Figure, Flag, Num, Pair, Text, field


class MacRate(Figure):
    """`bench` on a microcontroller: instructions or cycles per MAC (bench/mac_rate.py)."""
    available: Flag = None
    unit: Text = None
    label: Text = None
    basis: Text = None
    stage: Text = None
    reason: Text = None
    macs: Count = None
    per_inference: Num = None
    per_mac: Num = None
    per_mac_ci: Pair = None
    median_s: Num = field("the latency divided: the stage's median (mlperf-tiny: 1 / median throughput)", "s")
    macs_basis: Text = field("how the MACs were counted")


class FitFigure(Figure):
    """One size of a microcontroller's fit check: what the model needs against what the board has."""
    what: Text = None
    need_bytes: Count = None
    have_bytes: Count = None
    fits: Flag = None
    basis: Text = None
    placement: Text = None


class MemoryFigure(Figure):
    """Peak memory of the run (docs/results-schema.md): a Linux board's process, or a microcontroller's plan."""
    peak_rss_bytes: Count = None
    rss_bytes: Count = None
    basis: Text = None
    arena_bytes: Count = None
    scratch_bytes: Count = None
    model_bytes: Count = None
    fit: Optional[List[FitFigure]] = None

