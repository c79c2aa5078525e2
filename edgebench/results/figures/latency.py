"""Latency figures (level 0): a stage's latency over the measured samples, the throughput achieved,
the stopping rule's outcome. :func:`edgebench.stats.latency.summarize_runs` returns a
:class:`LatencyFigure` (docs/statistics.md, docs/results-schema.md)."""
from __future__ import annotations

from typing import Any, List, Optional, Union

from edgebench.results.figures.common import Batched, Interval, IntervalMethod, Labelled
from edgebench.results.types import Bool, Count, Figure, Flag, Int, Mapping_, Num, Pair, Text, field, sub


class LogMedian(IntervalMethod):
    """A median with its interval made on the log scale: the log median's standard error and its degrees of freedom."""
    se_log: Num = field("standard error of the log median")
    df: Num = field("its degrees of freedom")


class RepeatFigure(Batched, LogMedian):
    """One repeat's (or session's) median and interval."""
    median_s: Num = field("the repeat's median latency (or the invocation's, pooled)")
    ci_low_s: Num = field("its interval's low end (95%, dependence-aware)")
    ci_high_s: Num = field("its interval's high end")
    n: Count = field("samples of the repeat")
    n_eff: Num = field("effective sample size (the samples' autocorrelation taken into account)")
    lag1: Num = field("lag-1 autocorrelation of the repeat's samples")
    rel_ci_halfwidth: Num = field("the interval's half-width over the median (0-1)")
    runs: Count = field("repeats the figure rests on (the invocation's)")


class CombinedFigure(LogMedian):
    """The headline over every session combined: the long-run figure's centre, interval, se and df."""
    median_s: Num = field("the long-run median over every session")
    ci_low_s: Num = field("its 95% interval, low end (Student t on the sessions' log medians)")
    ci_high_s: Num = field("its high end")
    sessions: Count = field("sessions (invocations) combined")


class LatencyFigure(Labelled, Interval):
    """One stage's latency over the measured samples (docs/statistics.md)."""
    n: Count = field("samples after each repeat's warm-up, over all repeats")
    median_s: Num = field("median of the pooled samples")
    ci_low_s: Num = field("the headline interval's low end (Student t on the repeats' log medians, each repeat's own "
                          "interval dependence-aware; with sessions: combined over them)")
    ci_high_s: Num = field("the headline interval's high end")
    rel_ci_halfwidth: Num = field("(ci_high_s - ci_low_s) / 2 / median_s (0-1)")
    runs: Count = field("repeats pooled")
    per_run: Optional[List[RepeatFigure]] = field("each repeat's median, interval, n, n_eff, lag1, se_log, df")
    lag1_autocorr: Num = field("lag-1 autocorrelation, the repeats' weighted by their samples")
    n_eff: Num = field("effective sample size, summed over the repeats")
    between_run_cv: Num = field("coefficient of variation of the repeats' medians (of their logs)")
    clock_resolution_s: Num = field("the clock's tick the figures were computed with (null when not known)")
    sessions: Count = field("sessions (this invocation and the earlier ones) combined in the headline")
    session_runs: Optional[List[Any]] = field("the run ids of the earlier sessions combined with this one")
    session_medians_s: Optional[List[Num]] = field("each session's median")
    between_session_cv: Num = field("coefficient of variation of the sessions' medians (of their logs)")
    rerun_low_s: Num = field("where one more invocation's median should fall: low end (prediction interval)")
    rerun_high_s: Num = field("... high end")
    invocation: RepeatFigure = sub(RepeatFigure, "this invocation's own median and interval (with sessions)")
    combined: CombinedFigure = sub(CombinedFigure, "the sessions' long-run median and interval (with sessions)")
    se_log: Num = field("standard error of the headline's log median (the combined one with sessions)")
    df: Num = field("its degrees of freedom")
    mean_s: Num = field("mean of the pooled samples")
    std_s: Num = field("standard deviation of the pooled samples (n - 1)")
    mad_s: Num = field("median absolute deviation of the pooled samples (unscaled)")
    mad_scaled_s: Num = field("the MAD scaled to a normal standard deviation (x 1.4826)")
    min_s: Num = field("the fastest sample")
    max_s: Num = field("the slowest sample")
    p50_s: Num = field("50th percentile (linear interpolation)")
    p90_s: Num = field("90th percentile (null when n is too small)")
    p99_s: Num = field("99th percentile (null when n is too small)")
    p999_s: Num = field("99.9th percentile (null when n is too small)")
    p90_ci_s: Pair = field("95% interval of the 90th percentile [low, high] over the repeats")
    p99_ci_s: Pair = field("95% interval of the 99th percentile [low, high] over the repeats")
    inverse_median_per_s: Num = field("1 / median_s: not a throughput (completed inferences over wall time is "
                                      "`throughput.per_s`); run.json 1-3 called it `throughput_per_s`", "1/s")
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


class RateInterval(Interval):
    """A throughput's interval: this invocation's own (``throughput.invocation``), or the host-limited rate's."""
    per_s: Num = field("the invocation's rate (the mean log rate of its repeats)", "1/s")
    ci_low_per_s: Num = field("the rate's interval, low end")
    ci_high_per_s: Num = field("... high end")
    se_log: Num = field("standard error of the log rate")
    df: Num = field("its degrees of freedom")
    sessions: Count = field("sessions combined")
    invocation: Optional[Mapping_] = field("the invocation's own interval (as ``throughput.invocation``)")


class Throughput(Labelled, Interval):
    """The throughput achieved: inferences completed over wall time, with its interval."""
    per_s: Num = field("achieved: inferences completed over the wall time of the measuring windows (device clock, "
                       "all repeats)")
    definition: Text = field("what `per_s` divides, in words")
    per_repeat_per_s: Optional[List[Num]] = field("each repeat's achieved rate")
    per_repeat: Optional[List[RateFigure]] = field("each repeat's achieved rate with its standard error")
    inverse_median_per_s: Num = field("1 / the e2e median (not a throughput: the rate back to back at the median)")
    device_busy_per_s: Num = field("inferences completed over the device time spent inferring (back to back)",
                                   "1/s")
    device_busy_definition: Text = field("what `device_busy_per_s` divides")
    ci_low_per_s: Num = field("the interval of `per_s` over repeats and sessions (the model of variation)", "1/s")
    ci_high_per_s: Num = field("... its upper end", "1/s")
    sessions: Count = field("sessions of the measurement combined into the interval")
    invocation: RateInterval = sub(RateInterval, "this invocation's own rate and interval")
    host_limited_per_s: Num = field("an emulated board: the wall-clock rate with the emulator and the link", "1/s")
    host_limited_definition: Text = field("what `host_limited_per_s` divides")
    host_limited_interval: RateInterval = sub(RateInterval, "an emulated board: the interval of the host-limited rate")


class Stopping(Figure):
    """Why the run stopped: the stop rule's outcome, per run and per repeat."""
    target_reached: Flag = field("the headline interval reached the target relative half-width")
    rel_ci_halfwidth: Num = field("the headline interval's half-width over its median (0-1)")
    target_rel_ci: Num = field("the target relative half-width (`--target-rel-ci`, 0-1)")
    reason: Text = field("why the run stopped, in words")
    n: Count = field("samples measured (after warm-up; a soak: its samples)")
    repeats: Count = field("repeats run")
    elapsed_s: Num = field("the measured samples' summed end-to-end time (a soak: its duration)")
    per_repeat: Optional[List[Mapping_]] = field("each repeat's own stop decision (`repeat`, `reason`, "
                                                 "`target_reached`, ...)")
    steady: Union[Bool, Int, None] = field("a soak: whether steady state was reached; a sweep: how many points "
                                          "reached it")
    points: Count = field("a sweep: the points of its grid")
    finished: Count = field("a sweep: the points that finished (complete or incomplete)")
    failed: Count = field("a sweep: the points that failed")
    not_run: Count = field("a sweep: the points not run (stopped before them)")

