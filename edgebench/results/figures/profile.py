"""``extra.profile`` (level 0): a layer profile, each layer's time and share of the whole model
(docs/profile.md). Written by :func:`edgebench.bench.profile_table.profile_section`."""
from __future__ import annotations

from typing import Any, List, Optional

from edgebench.results.figures.common import Interval, IntervalMethod, Statistic
from edgebench.results.types import Count, Figure, Flag, Mapping_, Num, Pair, Text, field, sub


class RepeatEstimate(Figure):
    """One repeat's estimate of a layer's (or the whole model's) time."""
    estimate_s: Num = field("the repeat's median (or mean, see `statistic`)", "s")
    ci_low_s: Num = field("its interval's low end", "s")
    ci_high_s: Num = field("its interval's high end", "s")


class LayerTime(Statistic, IntervalMethod):
    """A timed figure over the repeats: a layer's, or the whole model's."""
    median_s: Num = field("the figure over the repeats (a median, or a mean where the tool keeps no samples)", "s")
    ci_low_s: Num = field("95% interval, low end", "s")
    ci_high_s: Num = field("95% interval, high end", "s")
    runs: Count = field("repeats the figure rests on")
    n: Count = field("timed invocations over all repeats")
    lag1_autocorr: Num = field("lag-1 autocorrelation of the samples")
    per_repeat: Optional[List[RepeatEstimate]] = field("each repeat's estimate")


class ProfileRow(LayerTime):
    """One layer (operator) of the profile, or a row the method adds (the fixed per-invocation cost)."""
    key: Text = field("the row's key (`op:INDEX` for a layer)")
    index: Count = field("the operator's index in the model")
    op: Text = field("the operator")
    name: Text = field("its output tensor's name")
    input_shapes: Optional[List[Any]] = field("its input shapes")
    output_shapes: Optional[List[Any]] = field("its output shapes")
    macs: Count = field("multiply-accumulates of one inference of the layer (`inspect`'s count)")
    share: Num = field("its median over the whole model's median (0-1)")
    per_mac: Num = field("cycles or instructions per MAC (the `per_mac` section's unit)")
    per_mac_ci: Pair = field("its interval [low, high]")
    in_sum: Flag = field("counted in the sum of the layers")
    where: Text = field("where the row ran: `cpu`, or `Edge TPU` for a delegate node")
    note: Text = field("why a row has no time, or what it includes")


class SumRatio(Interval):
    """The layers' sum against the whole model."""
    ratio: Num = field("sum of the layers' medians over the whole model's median")
    ci_low: Num = field("95% interval, low end")
    ci_high: Num = field("95% interval, high end")
    runs: Count = field("repeats whose ratio the interval rests on")
    per_repeat: Optional[List[Num]] = field("each repeat's ratio")
    between_run_cv: Num = field("spread of the repeats' ratios (of their logs)")


class ProfileFigure(Statistic):
    """`extra.profile`: where the time goes, layer by layer (docs/profile.md)."""
    method: Text = field("how the layers were timed (`engine`, `isolated`, `benchmark-model`, ...)")
    method_title: Text = field("the method in words")
    sees: Text = field("what the method can see")
    cannot_see: Text = field("what it cannot")
    repeats: Count = field("independent repeats")
    clock_resolution_s: Num = field("the clock's tick", "s")
    layers: Optional[List[ProfileRow]] = field("the layers, in the model's order")
    by_op: Optional[List[Mapping_]] = field("the layers summed by operator")
    whole: LayerTime = sub(LayerTime, "the whole model's time, timed the same way")
    sum_s: Num = field("the sum of the layers' medians", "s")
    sum_ratio: SumRatio = sub(SumRatio, "the sum against the whole")
    sum_ratio_net: Optional[Mapping_] = field("isolated operators: the sum less the per-invocation cost, against the whole")
    per_mac: Optional[Mapping_] = field("the per-MAC basis (`unit`, `label`, `basis`) or why there is none")
    edgetpu: Optional[Mapping_] = field("an Edge TPU model: what ran on the TPU and what on the CPU")
    warnings: Optional[List[Mapping_]] = field("the profile's own warnings (`code`, `message`, `remedy`)")
    notes: Optional[List[str]] = field("notes on the figures")
    methods_info: Optional[List[Mapping_]] = field("what the method reported of itself")
