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


class Throughput(Figure):
    per_s: Num = None
    definition: Text = None
    per_repeat_per_s: Optional[List[Num]] = None
    inverse_median_per_s: Num = None
    label: Text = None
    ci_low_per_s: Num = field("95% interval of `per_s`, low end (over repeats and, for bench, earlier sessions)", "1/s")
    ci_high_per_s: Num = field("its high end", "1/s")
    sessions: Count = field("sessions the interval combines")
    device_busy_per_s: Num = field("inferences over the device time spent inferring", "1/s")
    host_limited_per_s: Num = field("an emulated board: the wall-clock rate with the emulator and the serial link", "1/s")


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

