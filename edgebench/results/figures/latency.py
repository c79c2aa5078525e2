"""Latency figures (level 0): a stage's latency over the measured samples, the throughput achieved,
the stopping rule's outcome. :func:`edgebench.stats.latency.summarize_runs` returns a
:class:`LatencyFigure` (docs/statistics.md, docs/results-schema.md)."""
from __future__ import annotations

from typing import Any, List, Optional, Union

from edgebench.results.types import Bool, Count, Figure, Flag, Int, Mapping_, Num, Pair, Text, field, sub


class RepeatFigure(Figure):
    """One repeat's (or session's) median and interval."""
    median_s: Num = None
    ci_low_s: Num = None
    ci_high_s: Num = None
    n: Count = None
    n_eff: Num = None
    lag1: Num = None
    rel_ci_halfwidth: Num = None
    ci_method: Text = None
    runs: Count = None
    se_log: Num = field("standard error of the log median")
    df: Num = field("its degrees of freedom")
    batch: Count = field("inputs per inference")


class CombinedFigure(Figure):
    """The headline over every session combined: the long-run figure's centre, interval, se and df."""
    median_s: Num = None
    ci_low_s: Num = None
    ci_high_s: Num = None
    se_log: Num = None
    df: Num = None
    sessions: Count = None
    ci_method: Text = None


class LatencyFigure(Figure):
    """One stage's latency over the measured samples (docs/statistics.md)."""
    n: Count = None
    median_s: Num = None
    ci_low_s: Num = None
    ci_high_s: Num = None
    ci_level: Num = None
    ci_method: Text = None
    rel_ci_halfwidth: Num = None
    runs: Count = None
    per_run: Optional[List[RepeatFigure]] = None
    lag1_autocorr: Num = None
    n_eff: Num = None
    between_run_cv: Num = None
    clock_resolution_s: Num = None
    sessions: Count = None
    session_runs: Optional[List[Any]] = None
    session_medians_s: Optional[List[Num]] = None
    between_session_cv: Num = None
    rerun_low_s: Num = None
    rerun_high_s: Num = None
    invocation: RepeatFigure = sub(RepeatFigure)
    combined: CombinedFigure = sub(CombinedFigure)
    se_log: Num = None
    df: Num = None
    mean_s: Num = None
    std_s: Num = None
    mad_s: Num = None
    mad_scaled_s: Num = None
    min_s: Num = None
    max_s: Num = None
    p50_s: Num = None
    p90_s: Num = None
    p99_s: Num = None
    p999_s: Num = None
    p90_ci_s: Pair = None
    p99_ci_s: Pair = None
    inverse_median_per_s: Num = field("1 / median_s: not a throughput (completed inferences over wall time is "
                                      "`throughput.per_s`); run.json 1-3 called it `throughput_per_s`", "1/s")
    label: Text = None
    repeat_variation: Optional[Mapping_] = field("the between-repeat component used (`var`, `cv`, `df`, `source`, ...)")
    repeats_disagree_p: Num = field("p that the runs spread beyond it (set: their own spread was used)")
    session_variation: Optional[Mapping_] = field("the between-invocation component used (same keys)")
    session_differs_p: Num = field("p of this invocation against its history's prediction")
    regimes: Optional[List[Any]] = field("per run: null, or its level shifts (`segments`, `segment_medians_s`, ...)")


class RateFigure(Figure):
    """The achieved rate of one window (a repeat's, a soak's burst or sustained window)."""
    per_s: Num = field("inferences completed over the window's wall time", "1/s")
    se_log: Num = field("standard error of the log rate (batch means of the cycle times)")
    df: Num = field("its degrees of freedom")
    n: Count = field("inferences completed in the window")
    window_s: Num = field("the window's wall time on the device clock", "s")


class RateInterval(Figure):
    """A throughput's interval: this invocation's own (``throughput.invocation``), or the host-limited rate's."""
    per_s: Num = field("the invocation's rate (the mean log rate of its repeats)", "1/s")
    ci_low_per_s: Num = None
    ci_high_per_s: Num = None
    ci_level: Num = None
    se_log: Num = field("standard error of the log rate")
    df: Num = field("its degrees of freedom")
    sessions: Count = field("sessions combined")
    invocation: Optional[Mapping_] = field("the invocation's own interval (as ``throughput.invocation``)")
    ci_method: Text = None


class Throughput(Figure):
    per_s: Num = None
    definition: Text = None
    per_repeat_per_s: Optional[List[Num]] = None
    per_repeat: Optional[List[RateFigure]] = field("each repeat's achieved rate with its standard error")
    inverse_median_per_s: Num = None
    label: Text = None
    device_busy_per_s: Num = field("inferences completed over the device time spent inferring (back to back)",
                                   "1/s")
    device_busy_definition: Text = field("what `device_busy_per_s` divides")
    ci_low_per_s: Num = field("the interval of `per_s` over repeats and sessions (the model of variation)", "1/s")
    ci_high_per_s: Num = field("... its upper end", "1/s")
    ci_level: Num = field("the interval's coverage")
    sessions: Count = field("sessions of the measurement combined into the interval")
    invocation: RateInterval = sub(RateInterval, "this invocation's own rate and interval")
    ci_method: Text = field("how the interval was made")
    host_limited_per_s: Num = field("an emulated board: the wall-clock rate with the emulator and the link", "1/s")
    host_limited_definition: Text = field("what `host_limited_per_s` divides")
    host_limited_interval: RateInterval = sub(RateInterval, "an emulated board: the interval of the host-limited rate")


class Stopping(Figure):
    target_reached: Flag = None
    rel_ci_halfwidth: Num = None
    target_rel_ci: Num = None
    reason: Text = None
    n: Count = None
    repeats: Count = None
    elapsed_s: Num = None
    per_repeat: Optional[List[Mapping_]] = None
    steady: Union[Bool, Int, None] = None

