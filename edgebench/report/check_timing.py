"""`edgebench check`'s rules about the timing (level 1, pure): what the latency figure holds (the kernel or
the whole pipeline, the inputs, the cold start) and how it varies (one run or many, the sessions of a
runs folder, the history of a series, a slowdown gate). Each rule is a function of the runs
(``RunResult`` objects) returning a :class:`edgebench.report.check_verdict.Verdict`; docs/check.md
explains each and its source."""
from __future__ import annotations

from typing import Optional

from edgebench.report import format as fmt
from edgebench.report.check_verdict import (
    FAIL,
    HOEFLER,
    NA,
    PASS,
    WARN,
    Outcome,
    Verdict,
    e2e,
    has_latency,
    per_run,
    worse,
)
from edgebench.report.claim import invoke_only
from edgebench.results.kinds import kind_of
from edgebench.results.model import RunResult


def kernel_only_as_e2e(runs: list) -> Verdict:
    def check(r: RunResult) -> Outcome:
        if not kind_of(r).latency:
            return None
        whole, inv = r.stage("e2e"), r.stage("invoke")
        includes = r.timing.e2e_includes
        med = whole.median_s
        if not med:
            if inv.median_s:
                return (FAIL, f"only the kernel (invoke) is timed: {fmt.duration(inv.median_s)}",
                        "time end to end (bench does); never quote invoke alone as the model's latency")
            return None
        if not includes:
            return (WARN, f"end-to-end median {fmt.duration(med)}, but what it includes is not recorded",
                    "state what the timing includes")
        share = ""
        if inv.median_s and med > 0:
            share = (f"; invoke (kernels) median {fmt.duration(inv.median_s)} = "
                     f"{100 * inv.median_s / med:.0f}% of it")
        if invoke_only(r):
            sold = "end-to-end" in str(r.extra.claim or "")
            return (FAIL if sold else WARN,
                    f"the 'e2e' figure {fmt.duration(med)} is the kernel alone: invoke only "
                    f"(preparation, transfer and output read are 0 by construction; includes: {includes})"
                    + ("; the claim sells it as end-to-end" if sold else "; the claim says kernel only"),
                    "quote it as the kernel's (invoke) latency; the steps outside the device timing (input "
                    "quantization, upload, output read, feature extraction) are not in it")
        return PASS, f"headline is end to end ({fmt.duration(med)}, incl. {includes}){share}", None

    return per_run("kernel-only-as-e2e", "kernel-only timing sold as end-to-end",
                   "Bailey 1991 (way 6: quote only the inner kernel); " + HOEFLER + " rule 10", check, runs)


def preprocessing_excluded(runs: list) -> Verdict:
    def check(r: RunResult) -> Outcome:
        if not kind_of(r).latency or not has_latency(r):
            return None
        inc, exc = r.timing.e2e_includes, r.timing.excludes
        if not inc:
            return (FAIL, "the run does not record what its timing includes or excludes",
                    "re-run with a current edgebench (timing.e2e_includes/excludes)")
        if exc:
            return (WARN, f"timing includes {inc}; excludes {exc}",
                    "quote the exclusions with the figure, or time the full pipeline (feature extraction, decoding)")
        return PASS, f"timing includes {inc}; nothing excluded is recorded", None

    return per_run("preprocessing-excluded", "data loading or preprocessing excluded",
                   "MLPerf Tiny rules (pre-processing outside the timed region is stated); " + HOEFLER + " rule 10",
                   check, runs)


def input_size(runs: list) -> Verdict:
    def check(r: RunResult) -> Outcome:
        if not (kind_of(r).latency or kind_of(r).accuracy):
            return None
        inp = r.scenario.inputs
        shape = inp.shape
        if not shape:
            return (FAIL, "input shape not recorded", "record the inputs (bench does: scenario.inputs)")
        ins = r.model.inputs or []
        want = list(ins[0].shape or [])[1:] if ins else None
        shape_t = "×".join(map(str, shape))
        src = inp.source
        if want and list(shape)[-len(want):] != want:
            return (FAIL, f"inputs {shape_t} but the model takes {'×'.join(map(str, want))}",
                    "benchmark with inputs of the model's own shape")
        batch = r.scenario.batch or 1
        if batch > 1 and r.scenario.name == "single-stream":
            return (WARN, f"batch {batch} in a single-stream scenario ({shape_t} inputs)",
                    "single-stream latency is batch 1; report batched figures as offline throughput")
        if src == "random":
            return (PASS, f"{shape_t} inputs (the model's shape), seeded random in range {inp.range} "
                          f"({inp.count} distinct): right for fixed-cost CNNs, not for data-dependent models",
                    None)
        return PASS, f"{shape_t} inputs (the model's shape) from {src} ({inp.count} samples)", None

    return per_run("input-size", "input size not stated or unrealistic",
                   "Bailey 1991 (way 3: scale the problem to suit); " + HOEFLER + " rule 9", check, runs)


def single_run(runs: list) -> Verdict:
    def check(r: RunResult) -> Outcome:
        e = e2e(r)
        med = e.median_s
        if not kind_of(r).latency or not med:
            return None
        k = int(e.runs or 1)
        if e.ci_low_s is None or e.ci_high_s is None:
            return (FAIL, f"median {fmt.duration(med)} with no interval (n={fmt.count(e.n)})",
                    "measure more samples and repeats (bench --repeat 3 or more)")
        ci = f"median {fmt.duration(med)}, 95% CI {fmt.duration_range(e.ci_low_s, e.ci_high_s)}"
        if k < 2:
            why = ("a soak is one long run" if kind_of(r).sustained else "one run")
            return (WARN, f"{ci} from {why}: the interval cannot see run-to-run variation "
                          f"(n={fmt.count(e.n)}, n_eff {fmt.count(e.n_eff)})",
                    "repeat in fresh processes (bench --repeat 3 or more)")
        cv = e.between_run_cv
        runs_text = f"{ci} over {k} independent runs" + (f", between-run CV {100 * cv:.1f}%" if cv is not None
                                                          else "")
        sessions = e.sessions
        if sessions == 1:
            sv = e.session_variation or {}      # a free-form mapping (stats.variation's description of it)
            source = ("pooled from other measurements on this board and host" if sv.get("source") == "pooled"
                      else "the stated prior")
            return (WARN, f"{runs_text}, all in one invocation: its variation between invocations is {source}, not "
                          "measured for this model (repeats inside one invocation share that minute's machine)",
                    "run the same bench command again: earlier runs of the same model and conditions in the "
                    "runs folder are combined into the interval")
        if sessions:
            scv = e.between_session_cv
            runs_text += f", combined with {sessions - 1} earlier invocation(s)" + (
                f" (between-session CV {100 * scv:.1f}%)" if scv is not None else "")
        return (PASS, runs_text, None)

    return per_run("single-run", "no variance or a single run",
                   HOEFLER + " rules 5 and 8 (confidence intervals; sound comparison); Bailey 1991", check, runs)


def cold_start(runs: list) -> Verdict:
    def check(r: RunResult) -> Outcome:
        if not kind_of(r).latency or not has_latency(r):
            return None
        first, load = r.cold_start.first_inference_s, r.cold_start.load_s
        if first is None:
            return (WARN, "no cold start (model load, first inference) recorded: only warm figures",
                    "bench records it; an MCU run needs the eb- dialect for it")
        med = e2e(r).median_s
        text = f"first inference {fmt.duration(first)}"
        if med:
            text += f" ({first / med:.1f}x the warm median)"
        text += f", model load {fmt.duration(load)}" if load is not None else ", model load not timed"
        return PASS, text, None

    return per_run("cold-start", "cold start missing",
                   "edgebench design brief (cold start, warm-up reported separately); " + HOEFLER + " rule 7",
                   check, runs)


def best_of_n(runs: list, sessions: Optional[dict] = None) -> Verdict:
    """``sessions``: run id -> the other sessions of its measurement in its runs folder
    (``[{run_id, median_s}]``, :func:`edgebench.bench.sessions.other_sessions`)."""
    title = "best of N (the fastest invocation cited)"
    src = "Hoefler & Belli, SC15 rule 5 (report the variation of all runs); Bailey 1991"

    def check(r: RunResult) -> Outcome:
        if not kind_of(r).repeats or not has_latency(r):
            return None
        others = (sessions or {}).get(r.run_id)
        if others is None:
            return None
        e = e2e(r)
        combined = set(e.session_runs or [])
        left = [o for o in others if o["run_id"] not in combined]
        med = e.invocation.median_s if e.invocation.median_s is not None else e.median_s
        if med is None:
            return None
        if not left:
            return PASS, (f"{len(others)} other session(s) of this measurement in its folder, all combined into "
                          "its interval" if others else "no other session of this measurement in its folder"), None
        meds = sorted(o["median_s"] for o in left)
        n = len(others) + 1
        text = (f"median {fmt.duration(med)}; {len(left)} session(s) of the same measurement in its folder are not "
                f"in its interval (medians {fmt.duration(meds[0])}–{fmt.duration(meds[-1])})")
        typical = meds[len(meds) // 2]
        outside = e.ci_high_s is not None and typical > e.ci_high_s
        # the fastest only counts where the others lie above its interval: among equal sessions each is the
        # fastest by chance (one in N), and a verdict that flips on a re-run is no verdict
        if med < meds[0] and outside:
            return (FAIL, f"the fastest of {n} sessions is cited: {text}; their median lies above this run's "
                          "interval",
                    "cite the latest run (it combines every earlier session) or all of them; never the best one")
        if outside:
            return (WARN, f"{text}: their median lies above this run's interval",
                    "re-run the bench: the new run combines every earlier session")
        return PASS, text + ("; the fastest, but their median lies inside its interval" if med < meds[0]
                             else "; this run is not the fastest"), None

    return per_run("best-of-n", title, src, check, runs)


best_of_n.needs_sessions = True  # type: ignore[attr-defined]


def variation_levels(runs: list) -> Verdict:
    title = "an interval or throughput without the variation between invocations"
    src = "edgebench design brief (three levels of variation; every decision carries them); " + HOEFLER + " rule 8"

    def check(r: RunResult) -> Outcome:
        if not kind_of(r).latency or not has_latency(r):
            return None
        sv, tp = e2e(r).session_variation, r.throughput
        lo, hi = tp.ci_low_per_s, tp.ci_high_per_s
        host = tp.host_limited_per_s
        problems = []
        if kind_of(r).repeats and not sv:
            problems.append("its latency interval has no between-invocation term (made before edgebench "
                            "modelled it)")
        if tp.per_s and lo is None and host is None:
            problems.append(f"its throughput {fmt.rate(tp.per_s)}/s has no interval")
        if problems:
            return (FAIL if any("throughput" in p for p in problems) else WARN, "; ".join(problems),
                    "re-run with this edgebench: intervals, comparisons and throughputs carry the variation "
                    "between repeats and invocations")
        how = (sv or {}).get("description") or ("one run of a soak: the stated priors" if kind_of(r).sustained else
                                                 "as recorded")
        tpi = (f"; throughput {fmt.rate(tp.per_s)}/s, 95% CI {fmt.rate(lo)}–{fmt.rate(hi)}/s"
               if lo is not None else "")
        return PASS, f"{how}{tpi}", None

    return per_run("variation-levels", title, src, check, runs)


def regression_on_record(runs: list, records: Optional[dict] = None) -> Verdict:
    """``records``: run id -> its series' change points up to it
    (:func:`edgebench.store.history.regressions_on_record`), None where its series is too short."""
    title = "a regression on record (the series got slower and stayed)"
    src = "edgebench issue 28 (change points over the history of a series); conbench, asv, Otava"

    def check(r: RunResult) -> Outcome:
        rec = (records or {}).get(r.run_id)
        if rec is None:
            return None
        bad = rec["regressions"]
        if not bad:
            return PASS, f"no regression in the {rec['points']} runs of {rec['series']} up to this run", None
        c = bad[-1]
        span = (f"commits {c['commit_before'][:10]}..{c['commit_after'][:10]}" if c.get("commit_after")
                else f"runs {c['run_before']}..{c['run_after']}")
        return (WARN, f"{rec['metric']} of {rec['series']} moved ×{c['ratio']:.3f} (95% CI {c['ci_low']:.3f}–"
                      f"{c['ci_high']:.3f}, permutation p={c['p_value']:.3g}) between {span}, and this run is after it",
                "find the change in that range (`edgebench history MODEL --board B --changes`); a deliberate one: "
                "say so in the claim")

    return per_run("regression-on-record", title, src, check, runs)


regression_on_record.needs_records = True  # type: ignore[attr-defined]


def slowdown_gate(comparisons: list) -> Verdict:
    """``check --max-slowdown``: each candidate's gated comparison against the baseline
    (:meth:`edgebench.bench.compare.Comparison.apply_gate`, every session on record of each side
    combined unless ``--only-these``). Fails when a slowdown interval lies wholly above the
    threshold; warns CANNOT DECIDE when the threshold lies below what the comparison detects."""
    title = "a slowdown beyond the gate (every session on record of each side)"
    src = "edgebench issue 27 (decisions that see regressions); exit 2 = a gate you set, exit 3 = cannot decide"
    gated = [c for c in comparisons if c.gate]
    if not gated:
        return Verdict("slowdown-gate", title, NA, "no --max-slowdown gate set", None, src, [])
    lines, worst = [], PASS
    for c in gated:
        g = c.gate
        worst = worse(FAIL if g["failed"] else WARN if g["undecided"] else PASS, worst)
        na, nb = (len(c.sessions["baseline"]), len(c.sessions["candidate"])) if c.sessions else (1, 1)
        lines.append(f"{c.candidate} against {c.baseline} ({nb} vs {na} sessions): " + c.gate_line())
    remedy = {FAIL: "the candidate is slower than the threshold: find the change, or raise the threshold "
                    "deliberately", WARN: next((c.gate.get("to_detect") for c in gated if c.gate["undecided"]), None)
              or "measure more invocations of each"}.get(worst)
    return Verdict("slowdown-gate", title, worst, "; ".join(lines), remedy, src,
                   [c.candidate for c in gated])


__all__ = ["kernel_only_as_e2e", "preprocessing_excluded", "input_size", "single_run", "cold_start", "best_of_n",
           "variation_levels", "regression_on_record", "slowdown_gate"]
