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

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from edgebench.bench.conditions import (
    CONDITIONS,
    REFUSED,
    condition_differences,
    hardware_cpu,
    refused_differences,
    short_value,
)
from edgebench.bench.sessions import measurement_key, read_history, record_of, sessions_of, variation
from edgebench.errors import GateFailed, GateUndecided, ResultError
from edgebench.report import format as fmt
from edgebench.results.kinds import kind_of
from edgebench.results.model import STAGES, RunResult, refuse_mixed_labels
from edgebench.results.store import read_samples
from edgebench.stats.compare import SAME, holm, ratio_of_medians, side_figures
from edgebench.stats.dependence import observed_tick
from edgebench.stats.power import (
    GATE_RULE,
    beyond_limit,
    detectable,
    gate_verdict,
    limit_text,
    sessions_needed,
    within_limit,
)
from edgebench.stats.variation import (
    DIFFERS_LEVEL,
    LogEstimate,
    combine_sessions,
    invocation,
    satterthwaite,
    t_quantile,
)

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
    sessions: dict = field(default_factory=dict)      # {"baseline": [run ids], "candidate": [...]} combined
    mde: dict | None = None                           # headline stage: the smallest ratio detected (80% power)

    def to_dict(self) -> dict:
        return {"format": "edgebench-compare", "baseline": self.baseline, "candidate": self.candidate,
                "label": self.label, "stage": self.stage, "case": self.case, "variation": self.variation,
                "speedup": self.speedup, "stages": self.stages, "conditions_differ": self.conditions_differ,
                "differences": self.differences, "gate": self.gate, "sessions": self.sessions, "mde": self.mde}

    def case_sentence(self) -> str:
        """Which variance terms the interval carries, and how to resolve smaller differences."""
        if self.case == SAME:
            return ("case: the runs were interleaved in one invocation, so they are compared without the "
                    "between-invocation term (the machine state of that invocation fell on both)")
        sess = (self.variation or {}).get("session") or {}
        if self.sessions:
            na, nb = len(self.sessions["baseline"]), len(self.sessions["candidate"])
            shifted = [f"{side} (p={self.speedup[key]:.2g})" for side, key in (("A", "level_shift_p_a"),
                                                                            ("B", "level_shift_p_b"))
                       if self.speedup.get(key) is not None]
            warn = (f"; WARNING: this run of {' and '.join(shifted)} lies outside what its sessions on record "
                    "predict (a change in level: a new load, kernel or firmware?): the combined figure mixes "
                    "levels; compare with --only-these, or re-run" if shifted else "")
            return (f"case: different invocations, every session on record combined: {na} of A "
                    f"({', '.join(self.sessions['baseline'])}) against {nb} of B "
                    f"({', '.join(self.sessions['candidate'])}); each side's long-run figure carries the "
                    f"variation between invocations ({sess.get('description', 'prior')}) divided by its sessions "
                    f"(--only-these: these two runs alone){warn}")
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
        mde = self.stages.get(stage, self.speedup).get("mde") or {}
        v = gate_verdict(sd["ci_low"], max_slowdown, mde)
        self.gate = {"max_slowdown": max_slowdown, "stage": stage, "slowdown": sd["ratio"],
                     "slowdown_ci_low": sd["ci_low"], "slowdown_ci_high": sd["ci_high"], "failed": v["failed"],
                     "undecided": v["undecided"], "mde": v["mde_ratio"], "mde_beyond_limit": v["mde_beyond_limit"],
                     "rule": GATE_RULE}
        if mde:
            self.gate["to_detect"] = self.mde_advice(max_slowdown, stage)
        return self.gate

    def gate_line(self) -> str:
        """The applied gate in one line: its threshold, the slowdown with its interval, and its state."""
        g = self.gate or {}
        if not g:
            return ""
        state = "FAILED" if g["failed"] else "CANNOT DECIDE" if g["undecided"] else "passed"
        mde = (f"; detects >= {100 * (g['mde'] - 1):.1f}% (80% power)" if g.get("mde")
               else f"; detects no slowdown up to {limit_text()} (80% power)" if g.get("mde_beyond_limit") else "")
        return (f"gate --max-slowdown {g['max_slowdown']:g}: slowdown {g['slowdown']:.3f} "
                f"(95% CI {g['slowdown_ci_low']:.3f}–{g['slowdown_ci_high']:.3f}{mde}) {state}")

    def raise_for_gate(self) -> None:
        """Exit 2 (:class:`GateFailed`) when the gate failed, 3 (:class:`GateUndecided`) when it cannot decide."""
        g = self.gate or {}
        s = self.stages.get(g.get("stage") or self.stage, self.speedup)
        if g.get("failed"):
            raise GateFailed(f"{s['candidate_name']} is slower than {g['max_slowdown']:g}x {s['baseline_name']} "
                             f"({g['stage']} slowdown {g['slowdown']:.3f}, 95% CI {g['slowdown_ci_low']:.3f}–"
                             f"{g['slowdown_ci_high']:.3f})")
        if g.get("undecided"):
            detects = (f"detects no slowdown up to {limit_text()}" if g.get("mde_beyond_limit")
                       else f"detects only slowdowns >= {100 * (g['mde'] - 1):.1f}%")
            raise GateUndecided(f"the gate --max-slowdown {g['max_slowdown']:g} cannot decide: this comparison "
                                f"{detects} (80% power)",
                                g.get("to_detect", "").split("; ", 1)[-1] or "measure more invocations of each")

    def mde_advice(self, target: float | None = None, stage: str | None = None) -> str:
        """What this comparison detects, and what would get it to ``target`` (a ratio > 1; default 1.05)."""
        s = self.stages.get(stage or self.stage, self.speedup)
        m = s.get("mde")
        if not m:
            return ""
        target = target if target and target > 1.0 else 1.05
        over = f" over {m['tests']} stages)" if m["tests"] > 1 else ")"
        if m.get("beyond_limit"):
            line = (f"this comparison detects no difference up to {limit_text(m)} (80% power, alpha {m['alpha']:g}"
                    f"{over}: too few invocations or samples, or too noisy")
            if target >= m["limit_ratio"]:
                return line
        else:
            line = f"this comparison detects a difference of >= {m['percent']:.1f}% (80% power, alpha {m['alpha']:g}{over}"
            if m["ratio"] <= target:
                return line
        want = f"{100 * (target - 1):.3g}%"
        more = (m.get("more_sessions_for") or {}).get(f"{target:.6g}")
        parts = []
        if more is not None:
            parts.append(f"{more} more invocation{'s' if more != 1 else ''} of each")
        inter = m.get("interleaved_ratio")
        if inter is not None and inter <= target:
            parts.append(f"`edgebench bench A B` interleaved (detects >= {100 * (inter - 1):.1f}%)")
        elif inter is not None:
            parts.append(f"`edgebench bench A B` interleaved with more repeats (one such invocation now "
                         f"detects >= {100 * (inter - 1):.1f}%)")
        elif "interleaved_ratio" in m:
            parts.append("`edgebench bench A B` interleaved with more repeats, on a quieter board (pinned with "
                         f"--cpus: one such invocation at this spread detects no difference up to {limit_text(m)})")
        return line + (f"; to detect {want}: " + ", or ".join(parts) if parts else f"; {want} is out of reach")

    def sentence(self, stage: str | None = None) -> str:
        stage = stage or self.stage
        s = self.stages.get(stage, self.speedup)
        runs = (f"{s['runs_a']} vs {s['runs_b']} runs" if s["runs_a"] > 1 or s["runs_b"] > 1
                else "one run each: run-to-run variation from the pooled or prior component")
        if s.get("sessions_a"):
            runs = f"{s['sessions_a']} vs {s['sessions_b']} sessions on record; " + runs
        runs += "; interleaved" if s.get("case", "").startswith("interleaved") else "; different invocations"
        adjusted = (f", Holm-adjusted over {len(self.stages)} stages {fmt.p_value(s['p_holm'])}, simultaneous "
                    f"{100 * s['ci_adjusted_level']:.1f}% CI {s['ci_adjusted_low']:.2f}–{s['ci_adjusted_high']:.2f}"
                    if len(self.stages) > 1 and "ci_adjusted_low" in s else "")
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


def _tick(baseline: RunResult, candidate: RunResult, a, b) -> float:
    """The coarser clock of the two runs: as recorded, and as their samples show it."""
    recorded = [r.timing.clock_resolution_s or 0.0 for r in (baseline, candidate)]
    return max(*recorded, observed_tick(np.concatenate(a)), observed_tick(np.concatenate(b)))


def _verdict(ci_low: float, ci_high: float, p_holm: float) -> str:
    """Speed-up = baseline / candidate: > 1 means the candidate is faster."""
    if p_holm < ALPHA and ci_low > 1.0:
        return "faster"
    if p_holm < ALPHA and ci_high < 1.0:
        return "slower"
    return "no difference resolved"


def shared_df(ea, eb, s_a: int, s_b: int, session) -> float:
    """Degrees of freedom of ``var_a + var_b`` when both sides carry the **same** estimate of the
    between-invocation variance (``sigma2 / S_a + sigma2 / S_b`` is one term on its df, not two)."""
    shared = session.var * (1.0 / s_a + 1.0 / s_b)
    own = [(max(e.var - session.var / s, 0.0), e.df) for e, s in ((ea, s_a), (eb, s_b))]
    return satterthwaite([(shared, session.df), *own])


def _combined(st: str, level: float, resolution: float, a, b, earlier_a: list, earlier_b: list, comps,
              loo) -> tuple:
    """Every session on record of each side: ``(LogEstimate of log(A / B), S_a, S_b, var per
    session a, b, [level-shift p of A, of B])`` from each side's long-run figure
    (:func:`edgebench.stats.variation.combine_sessions`). The level-shift test judges this run
    against its sessions on record with the components of the runs on record alone (``loo``: a
    shifted run must not widen the yardstick it is judged by)."""
    sides, shifts = [], []
    for runs, earlier in ((a, earlier_a), (b, earlier_b)):
        figs = side_figures(runs, level, resolution)
        this, _ = invocation(figs, comps.repeat)
        ests = [invocation(rec.figures[st], comps.repeat)[0] for rec in earlier if st in rec.figures]
        sides.append(combine_sessions(this, ests, comps.session))
        p = None
        if ests:
            p = combine_sessions(invocation(figs, loo.repeat)[0],
                                 [invocation(rec.figures[st], loo.repeat)[0] for rec in earlier if st in rec.figures],
                                 loo.session).differs_p
        shifts.append(p if p is not None and p < 1.0 - DIFFERS_LEVEL else None)
    ea, eb = sides[0].estimate, sides[1].estimate
    est = LogEstimate(ea.centre - eb.centre, ea.var + eb.var, shared_df(ea, eb, sides[0].sessions,
                                                                         sides[1].sessions, comps.session),
                      f"difference of the long-run log figures of {sides[0].sessions} vs {sides[1].sessions} "
                      f"sessions, each with the between-invocation variance (CV {100 * comps.session.cv:.2f}%, "
                      f"{comps.session.source}) over its sessions")
    return (est, sides[0].sessions, sides[1].sessions, ea.var * sides[0].sessions, eb.var * sides[1].sessions,
            shifts)


def _mde(d: dict, tests: int, same: bool, per_a: float, per_b: float, s_a: int, s_b: int,
         targets: tuple, interleaved_var: float) -> dict:
    """The smallest ratio detected with 80% power (:func:`edgebench.stats.power.detectable`), the
    sessions of each side that would reach each of ``targets``, and one interleaved invocation's."""
    m = beyond_limit(detectable(d["se_log"], d["df"], ALPHA, tests=tests))   # none within MDE_LIMIT: ratio None
    if not same:
        more = {}
        for t in targets:
            # the log ratio's variance with S sessions on both sides: per_a / S + per_b / S
            need = sessions_needed(t, 0.0, (per_a + per_b) / 2.0, d["df"], ALPHA, tests=tests) if t > 1 else None
            more[f"{t:.6g}"] = None if need is None else max(0, need - min(s_a, s_b))
        m["more_sessions_for"] = more
        m["interleaved_ratio"] = within_limit(detectable(math.sqrt(interleaved_var), d["df"], ALPHA,
                                                         tests=tests).ratio)
    return m


def compare(baseline: RunResult, baseline_samples, candidate: RunResult, candidate_samples, stage: str = "e2e",
            stages: tuple = (), history: list | None = None, only_these: bool = False,
            targets: tuple = (1.02, 1.05, 1.10)) -> Comparison:
    """``baseline``/``candidate`` are RunResults; samples their Parquet frames.

    ``stage`` is the headline; ``stages`` (default: just it) are all tested, Holm-adjusted.
    ``history``: the runs on record on this board and host (:func:`edgebench.bench.sessions.read_history`;
    None: the two runs and the stated priors alone), from which the between-repeat and
    between-invocation components are pooled. Runs interleaved in one invocation
    (``settings.interleaved_with``) are compared without the between-invocation term.
    Runs of different invocations are compared with **every session on record of each side**
    in ``history`` (same measurement: :func:`edgebench.bench.sessions.sessions_of`), each side's
    long-run figure against the other's; ``only_these``: these two runs alone. Each stage carries
    its ``mde`` (:func:`_mde`); ``targets`` are the ratios whose sessions needed are reported.
    """
    refuse_mixed_labels(baseline, candidate)  # never a simulated or emulated figure against a measured one
    tested = tuple(dict.fromkeys((stage, *stages)))
    same = _interleaved(baseline, candidate)
    pool = list(history or [])
    known = {rec.run_id for rec in pool}
    pool += [record_of(r) for r in (baseline, candidate) if r.run_id not in known and kind_of(r).repeats]
    earlier_a = earlier_b = []
    if not same and not only_these and measurement_key(baseline) != measurement_key(candidate):
        earlier_a = [r for r in sessions_of(baseline, pool) if r.run_id != candidate.run_id]
        earlier_b = [r for r in sessions_of(candidate, pool) if r.run_id != baseline.run_id]
    combine = bool(earlier_a or earlier_b)
    raw, comps, extra = {}, {}, {}
    for st in tested:
        a = _runs(baseline_samples, f"{st}_s")
        b = _runs(candidate_samples, f"{st}_s")
        if not a or not b:
            raise ResultError("a run to compare has fewer than 2 measured samples", "re-run the benchmark")
        comps[st] = variation(pool, st, label=baseline.label)
        tick = _tick(baseline, candidate, a, b)
        raw[st] = r = ratio_of_medians(a, b, same_invocation=same, resolution_s=tick,
                                       session=comps[st].session, repeat=comps[st].repeat)
        d = r.to_dict()
        sess_var = 0.0 if same else comps[st].session.var
        this_var = max(d["se_log"] ** 2 - 2.0 * sess_var, 0.0)   # the two invocations' own variance
        if combine:
            loo = variation([rec for rec in pool if rec.run_id not in (baseline.run_id, candidate.run_id)], st,
                            label=baseline.label)
            est, s_a, s_b, per_a, per_b, shifts = _combined(st, d["ci_level"], tick, a, b, earlier_a, earlier_b,
                                                            comps[st], loo)
            lo, hi = est.interval(d["ci_level"])
            extra[st] = {"ratio": est.value, "ci_low": lo, "ci_high": hi, "p_value": est.p_value(), "df": est.df,
                         "se_log": est.se, "ci_method": f"{est.method}; se {est.se:.3g}, df {est.df:.1f}",
                         "sessions_a": s_a, "sessions_b": s_b,
                         # this invocation outside what its sessions on record predict (p < 0.01): a level shift
                         "level_shift_p_a": shifts[0], "level_shift_p_b": shifts[1],
                         "this_invocation": {k: d[k] for k in ("ratio", "ci_low", "ci_high", "p_value", "df",
                                                               "se_log")}}
        else:
            per_a = per_b = sess_var + this_var / 2.0
            s_a = s_b = 1
            extra[st] = {"sessions_a": 1, "sessions_b": 1} if not same else {}
        extra[st]["_mde_inputs"] = (per_a, per_b, s_a, s_b, this_var)
    adjusted = holm([extra[st].get("p_value", r.p_value) for st, r in raw.items()])
    out = {}
    for (st, r), p_adj in zip(raw.items(), adjusted):
        per_a, per_b, s_a, s_b, this_var = extra[st].pop("_mde_inputs")
        d = {**r.to_dict(), **extra[st]}   # speed-up = median(baseline) / median(candidate)
        if combine:
            d["case"] = f"{d['case']}; {s_a} vs {s_b} sessions combined"
        m = len(tested)     # the simultaneous interval of Holm's first step (Bonferroni, level 1 - alpha/m)
        half = t_quantile(1.0 - ALPHA / m, d["df"]) * d["se_log"]
        d["ci_adjusted_low"], d["ci_adjusted_high"] = d["ratio"] * math.exp(-half), d["ratio"] * math.exp(half)
        d["ci_adjusted_level"] = 1.0 - ALPHA / m
        out[st] = {**d, "p_holm": p_adj, "verdict": _verdict(d["ci_low"], d["ci_high"], p_adj),
                   "baseline_name": baseline.model.name, "candidate_name": candidate.model.name,
                   "definition": f"median {st} latency of baseline / of candidate (>1: candidate faster)",
                   "mde": _mde(d, len(tested), same, per_a, per_b, s_a, s_b, targets, this_var)}
    diffs = condition_differences(baseline, candidate)
    differ = [f"{d['condition']}: {short_value(d['baseline'])} vs {short_value(d['candidate'])}" for d in diffs]
    head = comps[stage]
    return Comparison(baseline.run_id, candidate.run_id, stage, out[stage], differ, out, diffs,
                      label=baseline.label, case=raw[stage].case,
                      variation={"repeat": head.repeat.to_dict(),
                                 "session": None if same else head.session.to_dict()},
                      sessions={"baseline": [baseline.run_id, *(r.run_id for r in earlier_a)],
                                "candidate": [candidate.run_id, *(r.run_id for r in earlier_b)]} if combine else {},
                      mde=out[stage]["mde"])


def compare_stored(da, ra: RunResult, db, rb: RunResult, stage: str = "e2e", stages: tuple | None = None,
                   only_these: bool = False,
                   samples: tuple = (None, None)) -> Comparison:
    """:func:`compare` of two stored runs (folders ``da``/``db``, results ``ra``/``rb``) with every run on
    record in A's runs folder as history (:func:`edgebench.bench.sessions.read_history`, before and
    after): the one way ``compare``, ``check``'s gate and ``report`` compare two runs. ``stages``
    (default: every stage both runs have); ``samples``: the Parquet frames when already read."""
    if stages is None:
        stages = tuple(s for s in STAGES if ra.stage(s) and rb.stage(s))
    sa = samples[0] if samples[0] is not None else read_samples(da)
    sb = samples[1] if samples[1] is not None else read_samples(db)
    history = read_history(ra, Path(da).parent, later_too=True)
    return compare(ra, sa, rb, sb, stage=stage, stages=stages, history=history, only_these=only_these)


def _interleaved(a: RunResult, b: RunResult) -> bool:
    ia, ib = a.settings.interleaved_with, b.settings.interleaved_with
    return bool(ia and ib and b.run_id in ia and a.run_id in ib)


__all__ = ["Comparison", "compare", "compare_stored", "shared_df", "condition_differences", "refused_differences", "hardware_cpu", "short_value",
           "CONDITIONS", "REFUSED", "ALPHA"]
