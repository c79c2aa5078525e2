"""A microcontroller's own figures (level 0): instructions or cycles per MAC, memory and the fit check
(docs/mcu.md)."""
from __future__ import annotations

from typing import List, Optional

from edgebench.results.types import Count, Figure, Flag, Num, Pair, Text, field


class MacRate(Figure):
    """`bench` on a microcontroller: instructions or cycles per MAC (bench/mac_rate.py)."""
    available: Flag = field("whether the figure could be made")
    unit: Text = field("`instructions` (emulated: QEMU -icount) or `cycles` (a real board)")
    label: Text = field("`emulated`, `measured` (the core's cycle counter) or `estimated` (the datasheet's clock)")
    basis: Text = field("the relation from time to instructions or cycles, in words")
    stage: Text = field("the latency stage divided (`e2e`; mlperf-tiny: the mean latency)")
    reason: Text = field("without a figure: why (posix build, no clock, MACs not all counted)")
    macs: Count = field("multiply-accumulates of one inference (static count, `edgebench inspect`)")
    per_inference: Num = field("instructions or cycles per inference")
    per_mac: Num = field("instructions or cycles per MAC")
    per_mac_ci: Pair = field("the latency interval divided the same way [low, high], or null")
    median_s: Num = field("the latency divided: the stage's median (mlperf-tiny: 1 / median throughput)", "s")
    macs_basis: Text = field("how the MACs were counted")


class FitFigure(Figure):
    """One size of a microcontroller's fit check: what the model needs against what the board has."""
    what: Text = field("what is sized (`model buffer`, `arena`, `input buffer`, `flash`, `RAM`)")
    need_bytes: Count = field("what the model needs")
    have_bytes: Count = field("what the board (or the firmware build) has")
    fits: Flag = field("need <= have")
    basis: Text = field("where `have` comes from (the firmware build, or the datasheet)")
    placement: Text = field("which placement of the blob the size applies to (`ram`, `flash`, or `both`)")


class MemoryFigure(Figure):
    """Peak memory of the run (docs/results-schema.md): a Linux board's process, or a microcontroller's plan."""
    peak_rss_bytes: Count = field("a Linux board: the agent process's peak resident memory (VmHWM)")
    rss_bytes: Count = field("its resident memory at the end")
    basis: Text = field("where the figures come from")
    arena_bytes: Count = field("a microcontroller: the engine's tensor arena")
    scratch_bytes: Count = field("the kernels' scratch memory")
    model_bytes: Count = field("the model blob")
    fit: Optional[List[FitFigure]] = field("the fit check: each size against the board's")

