"""`edgebench check`'s rules about what is compared and how it is stated (level 1, pure): the models and
baselines among the runs, the accuracy a speed-up costs and how it is stated, burst against sustained,
energy without a duty cycle, labels, gates and layer profiles. Each rule is a function of the runs
(``RunResult`` objects) returning a :class:`edgebench.report.check_verdict.Verdict`; docs/check.md
explains each and its source."""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from edgebench.report import format as fmt
from edgebench.report.check_verdict import (
    FAIL,
    HOEFLER,
    NA,
    PASS,
    QUANTIZED,
    WARN,
    Outcome,
    Verdict,
    acc,
    e2e,
    has_latency,
    per_run,
    worse,
)
from edgebench.results.kinds import kind_of
from edgebench.results.model import RunResult, failed_gates


def _pts(x: Optional[float]) -> str:
    return "n/a" if x is None else f"{float(x):+.2f} points"


def speedup_without_accuracy(runs: list) -> Verdict:
    title = "speed-up without accuracy"
    src = "edgebench design brief (INT8 speed-ups without the accuracy they cost); " + HOEFLER + " rule 9"
    lat = [r for r in runs if kind_of(r).latency and r.model.precision in QUANTIZED]
    if not lat:
        return Verdict("speedup-without-accuracy", title, NA, "no latency run of a quantized model", None, src)
    measured = {r.model.sha256: r for r in runs if kind_of(r).accuracy and acc(r)}
    precisions = {r.model.precision for r in runs if kind_of(r).latency}
    lines: List[str] = []
    verdict, seen = PASS, set()
    for r in lat:
        m = r.model
        if m.sha256 in seen:
            continue
        seen.add(m.sha256)
        a = measured.get(m.sha256)
        if a is not None:
            p = acc(a).paired
            lines.append(f"{m.name} {m.precision}: accuracy run {a.run_id} "
                         f"({fmt.percent(p.candidate_accuracy)} vs baseline "
                         f"{fmt.percent(p.baseline_accuracy)}, {_pts(p.diff_points)} "
                         "candidate minus baseline)")
        else:
            verdict = worse(FAIL if len(precisions) > 1 else WARN, verdict)
            what = ("its speed is compared with another precision" if len(precisions) > 1
                    else "its speed is quoted")
            lines.append(f"{m.name} {m.precision} (run {r.run_id}): {what}, "
                         "but no accuracy run of this model (same sha256) is among the runs checked")
    return Verdict("speedup-without-accuracy", title, verdict, "; ".join(lines),
                   None if verdict == PASS else
                   "run `edgebench accuracy MODEL --baseline FP32_MODEL --data ...` and check/report it with the "
                   "latency runs", src, [r.run_id for r in lat])


def precision_and_kernels(runs: list) -> Verdict:
    def check(r: RunResult) -> Outcome:
        m, rt = r.model, r.runtime
        missing = [k for k, v in (("precision", m.precision), ("weights bits", m.weights_bits),
                                  ("activation bits", m.activations_bits)) if v in (None, "")]
        if not (rt.kernels or rt.delegate):
            missing.append("kernels or delegate")
        if rt.threads in (None, ""):
            missing.append("threads")
        if kind_of(r).points:
            missing = [x for x in missing if x != "threads"]
        stated = (f"{m.precision} (weights {m.weights_bits}-bit, activations {m.activations_bits}-bit), "
                  f"kernels {rt.kernels}, delegate {rt.delegate}, threads {rt.threads}")
        if missing:
            return (FAIL, f"not recorded: {', '.join(missing)}; recorded: {stated}",
                    "re-run with a current edgebench: it records precision, bit widths, kernels and threads")
        return PASS, stated, None

    return per_run("precision-kernels-stated", "bit width or kernels hidden",
                   "edgebench design brief (every number carries its conditions); " + HOEFLER + " rule 9", check,
                   runs)


def one_model_only(runs: list) -> Verdict:
    src = "Bailey 1991 (way 2/3: one favourable code); " + HOEFLER + " rule 2; MLPerf Tiny (a suite of models)"
    models: Dict[str, Optional[str]] = {}
    for r in runs:
        m = r.model
        if m.sha256:
            models.setdefault(m.sha256, m.name)
        for v in m.variants or []:
            if v.sha256:
                models.setdefault(v.sha256, v.name)
        b = acc(r).baseline.model
        if b.sha256:
            models.setdefault(b.sha256, b.name)
    names = sorted({str(n) for n in models.values()})
    if not models:
        return Verdict("one-model-only", "one model only", NA, "no model recorded", None, src)
    if len(models) == 1:
        return Verdict("one-model-only", "one model only", WARN,
                       f"every run checked is of one model ({names[0]}): a claim about the board or the runtime "
                       "rests on one workload",
                       "benchmark a second model (e.g. MLPerf Tiny's kws_ref_model and pretrainedResnet) before "
                       "generalising", src, [r.run_id for r in runs])
    return Verdict("one-model-only", "one model only", PASS, f"{len(models)} models: {', '.join(names)}", None, src,
                   [r.run_id for r in runs])


def _hw(r: RunResult) -> Tuple[Optional[str], object]:
    sysd = r.board.system
    # the collectors' cpu and board descriptions are free-form mappings (docs/agent-protocol.md)
    cpu = (sysd.cpu or {}).get("model_name") or (sysd.board or {}).get("model")
    return r.board.name, cpu


def baseline_mismatch(runs: list) -> Verdict:
    title = "baseline on other hardware or precision"
    src = "Bailey 1991 (way 5/8: compare with an old or unoptimised baseline); " + HOEFLER + " rule 1"
    lines: List[str] = []
    verdict, ids = NA, []
    for r in runs:  # an accuracy run's baseline ran where and how?
        a = acc(r)
        if not kind_of(r).accuracy or not a:
            continue
        cand, base = a.candidate, a.baseline
        crt, brt = cand.runtime, base.runtime
        diffs = [f"{k}: {getattr(brt, k)} vs {getattr(crt, k)}" for k in ("kernels", "name", "version")
                 if getattr(brt, k) != getattr(crt, k)]
        if base.board != cand.board:
            diffs.append(f"board: {base.board} vs {cand.board}")
        ids.append(r.run_id)
        if diffs:
            verdict = worse(WARN, verdict)
            lines.append(f"accuracy run {r.run_id}: baseline {base.where or '?'} differs from the candidate "
                         f"({'; '.join(diffs)}): the accuracy difference includes the kernels'")
        else:
            verdict = PASS if verdict == NA else verdict
            lines.append(f"accuracy run {r.run_id}: baseline and candidate on the same board and runtime")
    lat = [r for r in runs if kind_of(r).latency and has_latency(r)]
    for i, x in enumerate(lat):
        for y in lat[i + 1:]:
            factors = []
            if x.model.sha256 != y.model.sha256:
                factors.append(f"model ({x.model.name} {x.model.precision} vs {y.model.name} {y.model.precision})")
            if _hw(x) != _hw(y):
                factors.append(f"hardware ({' / '.join(map(str, _hw(x)))} vs {' / '.join(map(str, _hw(y)))})")
            rtx, rty = x.runtime, y.runtime
            sw = [k for k in ("name", "version", "kernels", "threads", "delegate") if getattr(rtx, k) != getattr(rty, k)]
            if sw:
                factors.append("runtime (" + ", ".join(f"{k} {getattr(rtx, k)} vs {getattr(rty, k)}" for k in sw) + ")")
            if x.label != y.label:
                factors.append(f"label ({x.label} vs {y.label})")
            ids += [x.run_id, y.run_id]
            pair = f"{x.run_id} vs {y.run_id}"
            if len(factors) > 1:
                verdict = FAIL
                lines.append(f"{pair} differ in {len(factors)} factors at once: {'; '.join(factors)}: "
                             "a ratio between them cannot be put on any one")
            else:
                verdict = PASS if verdict == NA else verdict
                lines.append(f"{pair} differ in {factors[0] if factors else 'nothing recorded'} only")
    if verdict == NA:
        return Verdict("baseline-mismatch", title, NA, "no comparison among the runs checked (one latency run, "
                       "no accuracy baseline)", None, src)
    remedy = None
    if verdict == FAIL:
        remedy = "measure the baseline on the same board, runtime and kernels (vary one factor at a time)"
    elif verdict == WARN:
        remedy = "run the baseline on the board too (accuracy --baseline-on-board), or state where it ran"
    return Verdict("baseline-mismatch", title, verdict, "; ".join(lines), remedy, src, sorted(set(ids)))


def relative_accuracy(runs: list) -> Verdict:
    def check(r: RunResult) -> Outcome:
        a = acc(r)
        if not kind_of(r).accuracy or not a:
            return None
        rel = a.relative
        pct, diff, more = rel.candidate_pct_of_baseline_correct, rel.diff_points, rel.error_increase_pct
        if pct is not None and diff is not None and more is not None:
            return (PASS, f"stated three ways: {pct:.1f}% of the baseline's correct samples, {diff:+.2f} accuracy "
                          f"points, {more:+.1f}% errors ({rel.baseline_errors} vs {rel.candidate_errors})", None)
        have = [k for k, v in (("candidate_pct_of_baseline_correct", pct), ("diff_points", diff),
                               ("error_increase_pct", more)) if v is not None]
        return (FAIL if not have else WARN, f"relative accuracy stated as {', '.join(have) or 'nothing'} only",
                "state absolute points, percent of baseline correct and percent more errors side by side")

    return per_run("relative-accuracy-ambiguous", "relative accuracy stated ambiguously",
                   "edgebench design brief (relative accuracy stated unambiguously); " + HOEFLER + " rule 4",
                   check, runs)


def burst_as_sustained(runs: list) -> Verdict:
    soaks: Dict[tuple, RunResult] = {}
    for r in runs:
        if kind_of(r).sustained:
            soaks.setdefault((r.model.sha256, r.board.name), r)

    def check(r: RunResult) -> Outcome:
        if kind_of(r).sustained:
            s = r.extra.soak
            ratio = s.sustained_over_burst
            rt = f"sustained/burst throughput {ratio:.2f}" if ratio is not None else "no burst/sustained ratio"
            if s.steady:
                return PASS, f"soaked to steady state after {s.duration_s or 0:.0f} s; {rt}", None
            return (WARN, f"soak ended without a steady state after {s.duration_s or 0:.0f} s; {rt}",
                    "soak longer (--max-duration) or with a wider --window")
        if kind_of(r).points:
            pts = r.extra.points or []
            steady = sum(1 for p in pts if p.steady)
            if pts and steady == len(pts):
                return PASS, f"all {len(pts)} points at thermal steady state", None
            return (WARN, f"{steady} of {len(pts)} points reached steady state",
                    "raise --max-duration-per-point")
        if not kind_of(r).burst or not has_latency(r):
            return None
        s_run = soaks.get((r.model.sha256, r.board.name))
        if s_run is not None:
            ratio = s_run.extra.soak.sustained_over_burst
            return (PASS, f"a soak of the same model on the same board is among the runs ({s_run.run_id}"
                          + (f", sustained/burst {ratio:.2f}" if ratio is not None else "") + ")", None)
        dur = (e2e(r).n or 0) * (e2e(r).median_s or 0)
        return (WARN, f"a {r.kind} run of about {dur:.2g} s of inference in all: a burst figure; no soak of "
                      f"{r.model.name} on {r.board.name} among the runs checked",
                "run `edgebench soak` on the same board and quote the sustained figure")

    return per_run("burst-as-sustained", "burst sold as sustained",
                   "edgebench design brief (sustained behaviour under heat); " + HOEFLER + " rule 9", check, runs)


def power_without_duty_cycle(runs: list) -> Verdict:
    def check(r: RunResult) -> Outcome:
        p = r.power
        if kind_of(r).points:
            pts = [x for x in r.extra.points or [] if x.energy]
            if not pts:
                return None
            return PASS, f"energy per inference at {len(pts)} duty cycles / rates, idle included", None
        if not kind_of(r).energy and not p.measured:
            return None
        duty = p.duty_cycle
        idle = p.idle.power_w
        if duty.avg_power_w is not None and idle is not None:
            return (PASS, f"idle {idle:.3g} W, {fmt.rate(duty.rate_hz)}/s at duty {duty.duty or 0:.3g}: "
                          f"average {duty.avg_power_w:.3g} W ({p.label})", None)
        return (FAIL, f"active energy {p.inference.energy_j} J without idle power and a duty cycle",
                "measure idle power and quote the average at the deployment's duty cycle (edgebench energy --rate)")

    return per_run("power-without-duty-cycle", "active power without a duty cycle",
                   "edgebench design brief (peak power quoted against idle duty cycles); MLPerf Tiny energy mode",
                   check, runs)


def small_test_set(runs: list) -> Verdict:
    lat = [r for r in runs if kind_of(r).latency and has_latency(r)]
    speedup = len({r.model.sha256 for r in lat}) > 1   # a latency comparison among the runs

    def check(r: RunResult) -> Outcome:
        a = acc(r)
        if not kind_of(r).accuracy or not a:
            return None
        res = a.resolution
        n, mdd, obs = res.n or a.paired.n, res.mdd_points, res.observed_diff_points
        if res.resolvable_at_all is False:
            return (FAIL, f"n={n}: this test set cannot resolve any difference", "use a larger test set")
        if mdd is None:
            return (WARN, "no resolution recorded for this test set", "re-run with a current edgebench accuracy")
        drop = f"observed {obs:+.2f} points" if obs is not None else "no observed difference"
        if res.resolvable:
            return PASS, f"n={n} resolves differences of {mdd:.2f} points; {drop}", None
        text = (f"n={n} resolves only differences of {mdd:.2f} points or more; {drop} is below that: "
                f"neither a drop nor its absence below {mdd:.2f} points can be claimed")
        if speedup:
            return (FAIL, text + "; a speed-up is claimed among these runs, on an accuracy that cannot be resolved",
                    "use a test set large enough to resolve the drop that matters before claiming the speed-up")
        return (WARN, text, "use a larger test set, or claim only 'no drop larger than the resolution'")

    return per_run("test-set-too-small", "a test set too small for the claimed difference",
                   "edgebench design brief (significance and the smallest resolvable difference side by side)",
                   check, runs)


def mixed_labels(runs: list) -> Verdict:
    title = "measured mixed with emulated/simulated/estimated"
    src = "edgebench design brief (every figure labelled measured, emulated, simulated or estimated)"
    labels = {r.label for r in runs}
    if len(labels) > 1:
        by = "; ".join(f"{lab}: {', '.join(r.run_id for r in runs if r.label == lab)}" for lab in sorted(labels))
        return Verdict("mixed-labels", title, FAIL, f"the runs mix {', '.join(sorted(labels))} figures ({by})",
                       "never compare or summarise them together; report each kind apart", src,
                       [r.run_id for r in runs])
    inner = []
    for r in runs:
        pl = r.power.label
        if pl and pl.split(" ")[0] != r.label:
            inner.append(f"{r.run_id}: latency {r.label}, energy {pl}")
    lab = labels.pop() if labels else "measured"
    if inner:
        return Verdict("mixed-labels", title, WARN, "; ".join(inner) + " (each figure carries its own label)",
                       "quote each figure with its label; do not call an estimated energy measured", src,
                       [r.run_id for r in runs])
    note = "" if lab == "measured" else f" (every figure {lab}: not a real board's measurement)"
    return Verdict("mixed-labels", title, PASS, f"all runs {lab}{note}", None, src, [r.run_id for r in runs])


def gates(runs: list) -> Verdict:
    def check(r: RunResult) -> Outcome:
        failed = failed_gates(r)
        val = r.extra.accuracy.validation
        default = val.default_exceeded or []
        if failed:
            return (FAIL, f"a gate failed: {', '.join(failed)}", "the run did not meet a threshold that was set")
        if default:
            return (WARN, f"default thresholds exceeded (not set by the user, so warnings): {', '.join(default)}",
                    "set the threshold (e.g. --max-drop) to make it a gate, or review the model")
        if val.rows or r.extra.verify.gate.applies:
            return PASS, "every gate set passed", None
        return None

    return per_run("gates", "a failed gate or threshold", "edgebench design brief (gates act on interval bounds; "
                   "exit 2 = a gate you set)", check, runs)


def layers_add_up(runs: list) -> Verdict:
    """Per-layer times are shown with the whole model they should make up: a profile whose layers
    do not sum to the whole (isolated operators never quite do) is a part sold as the whole."""
    def check(r: RunResult) -> Outcome:
        p = r.extra.profile
        q = p.sum_ratio
        if not q.ratio:
            return None
        lo, hi = q.ci_low, q.ci_high
        text = (f"the layers sum to {q.ratio:.3f} of the whole model"
                + (f" (95% CI {lo:.3f}–{hi:.3f})" if lo is not None and hi is not None else "")
                + f", {p.method} method")
        if p.method == "isolated":
            return (WARN, text + ": isolated timings omit cache and fusion effects",
                    "quote each layer's share of the isolated sum, never as time inside the model; on a Linux "
                    "board, profile with --benchmark-model too")
        inside = lo is not None and hi is not None and lo <= 1.02 and hi >= 0.98
        return (PASS, text, None) if inside else (
            WARN, text + ": time between the layers is not in any of them", "see docs/profile.md (methods)")

    return per_run("layers-add-up", "per-layer times that do not make up the whole",
                   "edgebench design brief (every figure with its conditions); " + HOEFLER + " rule 10", check, runs)


__all__ = ["speedup_without_accuracy", "precision_and_kernels", "one_model_only", "baseline_mismatch",
           "relative_accuracy", "burst_as_sustained", "power_without_duty_cycle", "small_test_set", "mixed_labels",
           "gates", "layers_add_up"]
