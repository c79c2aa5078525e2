"""Compare two stored runs (level 4): ratio of medians per stage under the model of variation
(:mod:`edgebench.stats.variation`), a verdict only where the interval excludes 1, Holm's
adjustment across stages.

Runs from different invocations carry the between-invocation variance (pooled over the runs
folder on the same board and host, :mod:`edgebench.bench.sessions`); runs interleaved in one
invocation (``settings.interleaved_with``: ``demo``, ``bench A.tflite B.tflite``) do not. The
output says which case applies. Comparing two models or precisions is what compare is for;
only differences that make the ratio meaningless are refused (:data:`REFUSED` of :mod:`edgebench.bench.conditions`):
another board or CPU, another scenario or batch. Others (pinning, governor, thermal state,
runtime, inputs ...) are reported as differing conditions beside the result."""
from __future__ import annotations

from dataclasses import dataclass, field

from edgebench.bench.conditions import (
    CONDITIONS,
    REFUSED,
    condition_differences,
    hardware_cpu,
    refused_differences,
    short_value,
)
from edgebench.errors import ResultError
from edgebench.report import format as fmt
from edgebench.results.kinds import kind_of
from edgebench.results.model import refuse_mixed_labels

ALPHA = 0.05


@dataclass
class Comparison:
    baseline: str          # run id of the denominator's reference (e.g. FP32)
    candidate: str         # run id compared against it (e.g. INT8)
    stage: str             # the headline stage (first of ``stages``)
    speedup: dict          # headline stage: ratio = median(baseline) / median(candidate), CI, p, verdict
    conditions_differ: list  # conditions that differ between the runs besides the model
    stages: dict = field(default_factory=dict)   # every stage tested: same fields, Holm-adjusted p
    differences: list = field(default_factory=list)  # {condition, baseline, candidate} of every differing condition
    label: str = "measured"                           # the common label of both runs
    gate: dict | None = None                          # the --max-slowdown gate, when one was applied
    case: str = ""                                    # interleaved in one invocation, or different invocations
    variation: dict = field(default_factory=dict)     # headline stage: the components used

    def to_dict(self) -> dict:
        return {"format": "edgebench-compare", "baseline": self.baseline, "candidate": self.candidate,
                "label": self.label, "stage": self.stage, "case": self.case, "variation": self.variation,
                "speedup": self.speedup, "stages": self.stages, "conditions_differ": self.conditions_differ,
                "differences": self.differences, "gate": self.gate}

    def case_sentence(self) -> str:
        """Which variance terms the interval carries, and how to resolve smaller differences."""
        from edgebench.stats.compare import SAME

        if self.case == SAME:
            return ("case: the runs were interleaved in one invocation, so they are compared without the "
                    "between-invocation term (the machine state of that invocation fell on both)")
        sess = (self.variation or {}).get("session") or {}
        return (f"case: different invocations, so the interval includes the variation between invocations "
                f"({sess.get('description', 'prior')}); to resolve smaller differences, measure both in one "
                "invocation: `edgebench bench A.tflite B.tflite` interleaves them")

    def slowdown(self, stage: str | None = None) -> dict:
        """Slowdown = median(candidate) / median(baseline) (> 1: the candidate is slower), with the
        interval of the speed-up inverted (the same test, the same coverage)."""
        s = self.stages.get(stage or self.stage, self.speedup)
        return {"ratio": 1.0 / s["ratio"], "ci_low": 1.0 / s["ci_high"], "ci_high": 1.0 / s["ci_low"],
                "ci_level": s["ci_level"]}

    def apply_gate(self, max_slowdown: float, stage: str | None = None) -> dict:
        """The regression gate: fails when the slowdown interval lies wholly above ``max_slowdown``
        (the candidate is slower than that beyond the interval's doubt). Stored in ``gate``."""
        stage = stage or self.stage
        sd = self.slowdown(stage)
        failed = sd["ci_low"] > max_slowdown
        self.gate = {"max_slowdown": max_slowdown, "stage": stage, "slowdown": sd["ratio"],
                     "slowdown_ci_low": sd["ci_low"], "slowdown_ci_high": sd["ci_high"], "failed": failed,
                     "rule": "fails when the lower bound of the slowdown interval exceeds max_slowdown"}
        return self.gate

    def sentence(self, stage: str | None = None) -> str:
        stage = stage or self.stage
        s = self.stages.get(stage, self.speedup)
        runs = (f"{s['runs_a']} vs {s['runs_b']} runs" if s["runs_a"] > 1 or s["runs_b"] > 1
                else "one run each: run-to-run variation from the pooled or prior component")
        runs += "; interleaved" if s.get("case", "").startswith("interleaved") else "; different invocations"
        adjusted = (f", Holm-adjusted over {len(self.stages)} stages {fmt.p_value(s['p_holm'])}"
                    if len(self.stages) > 1 else "")
        return (f"{s['candidate_name']} is {s['ratio']:.2f}x the speed of {s['baseline_name']} "
                f"({stage} median ratio, {int(round(100 * s['ci_level']))}% CI {s['ci_low']:.2f}–{s['ci_high']:.2f}: "
                f"{s['verdict']}; {fmt.p_value(s['p_value'])}{adjusted}; {runs}, "
                f"n={s['n_a']:,} vs {s['n_b']:,})")


def _runs(samples, col: str) -> list:
    if col not in samples:
        return []
    measured = samples[samples["phase"] == "measure"]
    if not len(measured):  # a soak: its sustained window is the figure it stands for
        measured = samples[samples["phase"] == "sustained"]
    if "repeat" not in measured:
        return [measured[col].to_numpy()]
    return [g[col].to_numpy() for _, g in measured.groupby("repeat", sort=True) if len(g) >= 2]


def _tick(baseline, candidate, a, b) -> float:
    """The coarser clock of the two runs: as recorded, and as their samples show it."""
    import numpy as np

    from edgebench.stats.dependence import observed_tick

    recorded = [((r.timing or {}).get("clock_resolution_s") or 0.0) for r in (baseline, candidate)]
    return max(*recorded, observed_tick(np.concatenate(a)), observed_tick(np.concatenate(b)))


def _verdict(ci_low: float, ci_high: float, p_holm: float) -> str:
    """Speed-up = baseline / candidate: > 1 means the candidate is faster."""
    if p_holm < ALPHA and ci_low > 1.0:
        return "faster"
    if p_holm < ALPHA and ci_high < 1.0:
        return "slower"
    return "no difference resolved"


def compare(baseline, baseline_samples, candidate, candidate_samples, stage: str = "e2e",
            stages: tuple = (), history: list | None = None) -> Comparison:
    """``baseline``/``candidate`` are RunResults; samples their Parquet frames.

    ``stage`` is the headline; ``stages`` (default: just it) are all tested, Holm-adjusted.
    ``history``: the runs on record on this board and host (:func:`edgebench.bench.sessions.read_history`;
    None: the two runs and the stated priors alone), from which the between-repeat and
    between-invocation components are pooled. Runs interleaved in one invocation
    (``settings.interleaved_with``) are compared without the between-invocation term.
    """
    from edgebench.bench.sessions import record_of, variation
    from edgebench.stats.compare import holm, ratio_of_medians

    refuse_mixed_labels(baseline, candidate)  # never a simulated or emulated figure against a measured one
    tested = tuple(dict.fromkeys((stage, *stages)))
    same = _interleaved(baseline, candidate)
    pool = list(history or [])
    known = {rec.run_id for rec in pool}
    pool += [record_of(r) for r in (baseline, candidate) if r.run_id not in known and kind_of(r).repeats]
    raw, comps = {}, {}
    for st in tested:
        a = _runs(baseline_samples, f"{st}_s")
        b = _runs(candidate_samples, f"{st}_s")
        if not a or not b:
            raise ResultError("a run to compare has fewer than 2 measured samples", "re-run the benchmark")
        comps[st] = variation(pool, st, label=baseline.label)
        raw[st] = ratio_of_medians(a, b, same_invocation=same, resolution_s=_tick(baseline, candidate, a, b),
                                   session=comps[st].session, repeat=comps[st].repeat)
    adjusted = holm([r.p_value for r in raw.values()])
    out = {}
    for (st, r), p_adj in zip(raw.items(), adjusted):
        d = r.to_dict()   # speed-up = median(baseline) / median(candidate)
        out[st] = {**d, "p_holm": p_adj, "verdict": _verdict(d["ci_low"], d["ci_high"], p_adj),
                   "baseline_name": baseline.model.get("name"), "candidate_name": candidate.model.get("name"),
                   "definition": f"median {st} latency of baseline / of candidate (>1: candidate faster)"}
    diffs = condition_differences(baseline, candidate)
    differ = [f"{d['condition']}: {short_value(d['baseline'])} vs {short_value(d['candidate'])}" for d in diffs]
    head = comps[stage]
    return Comparison(baseline.run_id, candidate.run_id, stage, out[stage], differ, out, diffs,
                      label=baseline.label, case=raw[stage].case,
                      variation={"repeat": head.repeat.to_dict(),
                                 "session": None if same else head.session.to_dict()})


def _interleaved(a, b) -> bool:
    ia, ib = (a.settings or {}).get("interleaved_with"), (b.settings or {}).get("interleaved_with")
    return bool(ia and ib and b.run_id in ia and a.run_id in ib)


__all__ = ["Comparison", "compare", "condition_differences", "refused_differences", "hardware_cpu", "short_value",
           "CONDITIONS", "REFUSED", "ALPHA"]
