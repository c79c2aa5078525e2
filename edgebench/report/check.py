"""`edgebench check`: the ways benchmark results fool an audience, as named rules (level 1, pure).

Each rule is a function of the stored runs given (``RunResult`` objects) that returns a
:class:`Verdict`: ``pass``, ``warn``, ``fail`` or ``not applicable``, with the evidence from
the runs and what to do about it. The rules follow Hoefler & Belli, "Scientific
benchmarking of parallel computing systems: twelve ways to tell the masses when reporting
performance results" (SC15), Bailey's "Twelve ways to fool the masses" (1991) they answer,
and what edge deployments add (burst vs sustained, duty-cycled energy, INT8 accuracy).
``docs/check.md`` explains every rule and its source.

The rule list :data:`RULES` is data: add a function (to :mod:`.check_timing` or
:mod:`.check_figures`), add it to the list; :mod:`.check_verdict` holds the verdict and the report. A rule that
concerns each run alone is evaluated per run and summarised by the worst verdict, with
every run's evidence; a rule about the set (one model only, mixed labels, baselines) sees
all runs at once.
"""
from __future__ import annotations

from typing import Iterable, Optional

from edgebench.report.check_figures import (
    baseline_mismatch,
    burst_as_sustained,
    gates,
    layers_add_up,
    mixed_labels,
    one_model_only,
    power_without_duty_cycle,
    precision_and_kernels,
    relative_accuracy,
    small_test_set,
    speedup_without_accuracy,
)
from edgebench.report.check_timing import (
    best_of_n,
    cold_start,
    input_size,
    kernel_only_as_e2e,
    preprocessing_excluded,
    regression_on_record,
    single_run,
    slowdown_gate,
    variation_levels,
)
from edgebench.report.check_verdict import FAIL, NA, PASS, VERDICTS, WARN, CheckReport, Verdict

RULES: list = [speedup_without_accuracy, precision_and_kernels, kernel_only_as_e2e, one_model_only,
               baseline_mismatch, preprocessing_excluded, input_size, relative_accuracy, single_run,
               burst_as_sustained, power_without_duty_cycle, small_test_set, cold_start, mixed_labels,
               best_of_n, variation_levels, gates, layers_add_up, regression_on_record]


def check(runs: Iterable, rules: Optional[list] = None, sessions: Optional[dict] = None,
          records: Optional[dict] = None) -> CheckReport:
    """Every rule over ``runs`` (RunResults). ``sessions``: run id -> the other sessions of its
    measurement in its runs folder (read by the caller; the best-of-N rule is not applicable without);
    ``records``: run id -> the regressions of its series on record (``regression-on-record``)."""
    runs = list(runs)
    return CheckReport([r.run_id for r in runs],
                       [rule(runs, sessions) if getattr(rule, "needs_sessions", False)
                        else rule(runs, records) if getattr(rule, "needs_records", False) else rule(runs)
                        for rule in (rules or RULES)])


__all__ = ["Verdict", "CheckReport", "RULES", "check", "slowdown_gate", "PASS", "WARN", "FAIL", "NA", "VERDICTS",
           "speedup_without_accuracy", "precision_and_kernels", "kernel_only_as_e2e", "one_model_only",
           "baseline_mismatch", "preprocessing_excluded", "input_size", "relative_accuracy", "single_run",
           "burst_as_sustained", "power_without_duty_cycle", "small_test_set", "cold_start", "mixed_labels",
           "best_of_n", "variation_levels", "gates", "layers_add_up", "regression_on_record"]
