"""`edgebench check`: the ways benchmark results fool an audience, as named rules (level 1, pure).

Each rule is a function of the stored runs given (``RunResult`` objects) that returns a
:class:`Verdict`: ``pass``, ``warn``, ``fail`` or ``not applicable``, with the evidence from
the runs and what to do about it. The rules follow Hoefler & Belli, "Scientific
benchmarking of parallel computing systems: twelve ways to tell the masses when reporting
performance results" (SC15), Bailey's "Twelve ways to fool the masses" (1991) they answer,
and what edge deployments add (burst vs sustained, duty-cycled energy, INT8 accuracy).
``docs/check.md`` explains every rule and its source.

The rule list :data:`RULES` is data: add a function, add it to the list. A rule that
concerns each run alone is evaluated per run and summarised by the worst verdict, with
every run's evidence; a rule about the set (one model only, mixed labels, baselines) sees
all runs at once.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable, Iterable, Optional

from edgebench.report import format as fmt
from edgebench.report.claim import invoke_only
from edgebench.results.kinds import kind_of

PASS, WARN, FAIL, NA = "pass", "warn", "fail", "not applicable"
VERDICTS = (PASS, WARN, FAIL, NA)
_SEVERITY = {NA: 0, PASS: 1, WARN: 2, FAIL: 3}
QUANTIZED = ("int8", "uint8", "dynamic-range", "mixed", "fp16")
HOEFLER = "Hoefler & Belli, SC15"


@dataclass
class Verdict:
    """One rule's verdict over the runs checked."""

    rule: str            # stable id, e.g. "single-run"
    title: str           # the way to fool the masses it guards against
    verdict: str         # pass | warn | fail | not applicable
    evidence: str        # what in the runs led to the verdict
    remedy: Optional[str] = None
    source: str = ""
    runs: list = field(default_factory=list)   # run ids the evidence comes from

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class CheckReport:
    runs: list
    verdicts: list

    @property
    def counts(self) -> dict:
        return {v: sum(1 for x in self.verdicts if x.verdict == v) for v in VERDICTS}

    @property
    def failed(self) -> bool:
        return any(v.verdict == FAIL for v in self.verdicts)

    def to_dict(self) -> dict:
        return {"format": "edgebench-check", "runs": self.runs, "counts": self.counts,
                "verdicts": [v.to_dict() for v in self.verdicts]}


# ---------------------------------------------------------------- helpers

def _name(r) -> str:
    return f"{r.run_id} ({(r.model or {}).get('name', '?')}, {r.kind})"


def _e2e(r) -> dict:
    return (r.latency or {}).get("e2e") or {}


def _has_latency(r) -> bool:
    return bool(_e2e(r).get("median_s"))


def _acc(r) -> dict:
    return (r.extra or {}).get("accuracy") or {}


def _per_run(rule: str, title: str, source: str, check: Callable, runs: list,
             remedy_default: Optional[str] = None) -> Verdict:
    """Evaluate ``check(run) -> (verdict, evidence, remedy) | None`` per run; worst wins."""
    got = [(r, check(r)) for r in runs]
    got = [(r, v) for r, v in got if v is not None]
    if not got:
        return Verdict(rule, title, NA, "no run this rule applies to", None, source, [])
    worst = max(_SEVERITY[v[0]] for _, v in got)
    verdict = next(k for k, s in _SEVERITY.items() if s == worst)
    evidence = "; ".join(f"{r.run_id}: {v[1]}" for r, v in got) if len(got) > 1 else got[0][1][1]
    remedies = [v[2] for _, v in got if v[0] == verdict and v[2]]
    return Verdict(rule, title, verdict, evidence, remedies[0] if remedies else remedy_default, source,
                   [r.run_id for r, _ in got])


# ---------------------------------------------------------------- the rules

def speedup_without_accuracy(runs: list) -> Verdict:
    title = "speed-up without accuracy"
    src = "edgebench design brief (INT8 speed-ups without the accuracy they cost); " + HOEFLER + " rule 9"
    lat = [r for r in runs if kind_of(r).latency and (r.model or {}).get("precision") in QUANTIZED]
    if not lat:
        return Verdict("speedup-without-accuracy", title, NA, "no latency run of a quantized model", None, src)
    measured = {}
    for r in runs:
        a = _acc(r)
        if kind_of(r).accuracy and a:
            measured[(r.model or {}).get("sha256")] = r
    precisions = {(r.model or {}).get("precision") for r in runs if kind_of(r).latency}
    lines, verdict, seen = [], PASS, set()
    for r in lat:
        if (r.model or {}).get("sha256") in seen:
            continue
        seen.add((r.model or {}).get("sha256"))
        a = measured.get((r.model or {}).get("sha256"))
        if a is not None:
            p = _acc(a).get("paired") or {}
            lines.append(f"{r.model.get('name')} {r.model.get('precision')}: accuracy run {a.run_id} "
                         f"({fmt.percent(p.get('candidate_accuracy'))} vs baseline "
                         f"{fmt.percent(p.get('baseline_accuracy'))}, {_pts(p.get('diff_points'))} "
                         "candidate minus baseline)")
        else:
            bad = FAIL if len(precisions) > 1 else WARN
            verdict = bad if _SEVERITY[bad] > _SEVERITY[verdict] else verdict
            what = ("its speed is compared with another precision" if len(precisions) > 1
                    else "its speed is quoted")
            lines.append(f"{r.model.get('name')} {r.model.get('precision')} (run {r.run_id}): {what}, "
                         "but no accuracy run of this model (same sha256) is among the runs checked")
    return Verdict("speedup-without-accuracy", title, verdict, "; ".join(lines),
                   None if verdict == PASS else
                   "run `edgebench accuracy MODEL --baseline FP32_MODEL --data ...` and check/report it with the "
                   "latency runs", src, [r.run_id for r in lat])


def _pts(x) -> str:
    return "n/a" if x is None else f"{float(x):+.2f} points"


def precision_and_kernels(runs: list) -> Verdict:
    def check(r):
        m, rt = r.model or {}, r.runtime or {}
        missing = [k for k, v in (("precision", m.get("precision")), ("weights bits", m.get("weights_bits")),
                                  ("activation bits", m.get("activations_bits"))) if v in (None, "")]
        if not (rt.get("kernels") or rt.get("delegate")):
            missing.append("kernels or delegate")
        if rt.get("threads") in (None, ""):
            missing.append("threads")
        if kind_of(r).points:
            missing = [x for x in missing if x != "threads"]
        stated = (f"{m.get('precision')} (weights {m.get('weights_bits')}-bit, activations "
                  f"{m.get('activations_bits')}-bit), kernels {rt.get('kernels')}, delegate {rt.get('delegate')}, "
                  f"threads {rt.get('threads')}")
        if missing:
            return (FAIL, f"not recorded: {', '.join(missing)}; recorded: {stated}",
                    "re-run with a current edgebench: it records precision, bit widths, kernels and threads")
        return PASS, stated, None

    return _per_run("precision-kernels-stated", "bit width or kernels hidden",
                    "edgebench design brief (every number carries its conditions); " + HOEFLER + " rule 9", check,
                    runs)


def kernel_only_as_e2e(runs: list) -> Verdict:
    def check(r):
        if not kind_of(r).latency:
            return None
        lat = r.latency or {}
        e2e, inv = lat.get("e2e") or {}, lat.get("invoke") or {}
        includes = (r.timing or {}).get("e2e_includes")
        if not e2e.get("median_s"):
            if inv.get("median_s"):
                return (FAIL, f"only the kernel (invoke) is timed: {fmt.duration(inv['median_s'])}",
                        "time end to end (bench does); never quote invoke alone as the model's latency")
            return None
        if not includes:
            return (WARN, f"end-to-end median {fmt.duration(e2e['median_s'])}, but what it includes is not recorded",
                    "state what the timing includes")
        share = ""
        if inv.get("median_s") and e2e["median_s"] > 0:
            share = (f"; invoke (kernels) median {fmt.duration(inv['median_s'])} = "
                     f"{100 * inv['median_s'] / e2e['median_s']:.0f}% of it")
        if invoke_only(r):
            sold = "end-to-end" in str((r.extra or {}).get("claim") or "")
            return (FAIL if sold else WARN,
                    f"the 'e2e' figure {fmt.duration(e2e['median_s'])} is the kernel alone: invoke only "
                    f"(preparation, transfer and output read are 0 by construction; includes: {includes})"
                    + ("; the claim sells it as end-to-end" if sold else "; the claim says kernel only"),
                    "quote it as the kernel's (invoke) latency; the steps outside the device timing (input "
                    "quantization, upload, output read, feature extraction) are not in it")
        return PASS, f"headline is end to end ({fmt.duration(e2e['median_s'])}, incl. {includes}){share}", None

    return _per_run("kernel-only-as-e2e", "kernel-only timing sold as end-to-end",
                    "Bailey 1991 (way 6: quote only the inner kernel); " + HOEFLER + " rule 10", check, runs)


def one_model_only(runs: list) -> Verdict:
    src = "Bailey 1991 (way 2/3: one favourable code); " + HOEFLER + " rule 2; MLPerf Tiny (a suite of models)"
    models = {}
    for r in runs:
        m = r.model or {}
        if m.get("sha256"):
            models.setdefault(m["sha256"], m.get("name"))
        for v in m.get("variants") or []:
            if v.get("sha256"):
                models.setdefault(v["sha256"], v.get("name"))
        b = (_acc(r).get("baseline") or {}).get("model") or {}
        if b.get("sha256"):
            models.setdefault(b["sha256"], b.get("name"))
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


def _hw(r) -> tuple:
    sysd = (r.board or {}).get("system") or {}
    cpu = (sysd.get("cpu") or {}).get("model_name") or (sysd.get("board") or {}).get("model")
    return (r.board or {}).get("name"), cpu


def baseline_mismatch(runs: list) -> Verdict:
    title = "baseline on other hardware or precision"
    src = "Bailey 1991 (way 5/8: compare with an old or unoptimised baseline); " + HOEFLER + " rule 1"
    lines, verdict, ids = [], NA, []
    for r in runs:  # an accuracy run's baseline ran where and how?
        a = _acc(r)
        if not kind_of(r).accuracy or not a:
            continue
        cand, base = a.get("candidate") or {}, a.get("baseline") or {}
        crt, brt = cand.get("runtime") or {}, base.get("runtime") or {}
        diffs = [f"{k}: {brt.get(k)} vs {crt.get(k)}" for k in ("kernels", "name", "version")
                 if brt.get(k) != crt.get(k)]
        if base.get("board") != cand.get("board"):
            diffs.append(f"board: {base.get('board')} vs {cand.get('board')}")
        ids.append(r.run_id)
        if diffs:
            verdict = WARN if _SEVERITY[WARN] > _SEVERITY[verdict] else verdict
            lines.append(f"accuracy run {r.run_id}: baseline {base.get('where', '?')} differs from the candidate "
                         f"({'; '.join(diffs)}): the accuracy difference includes the kernels'")
        else:
            verdict = PASS if verdict == NA else verdict
            lines.append(f"accuracy run {r.run_id}: baseline and candidate on the same board and runtime")
    lat = [r for r in runs if kind_of(r).latency and _has_latency(r)]
    for i, a in enumerate(lat):
        for b in lat[i + 1:]:
            factors = []
            if (a.model or {}).get("sha256") != (b.model or {}).get("sha256"):
                factors.append(f"model ({a.model.get('name')} {a.model.get('precision')} vs "
                               f"{b.model.get('name')} {b.model.get('precision')})")
            if _hw(a) != _hw(b):
                factors.append(f"hardware ({' / '.join(map(str, _hw(a)))} vs {' / '.join(map(str, _hw(b)))})")
            rta, rtb = a.runtime or {}, b.runtime or {}
            sw = [k for k in ("name", "version", "kernels", "threads", "delegate") if rta.get(k) != rtb.get(k)]
            if sw:
                factors.append("runtime (" + ", ".join(f"{k} {rta.get(k)} vs {rtb.get(k)}" for k in sw) + ")")
            if a.label != b.label:
                factors.append(f"label ({a.label} vs {b.label})")
            ids += [a.run_id, b.run_id]
            pair = f"{a.run_id} vs {b.run_id}"
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


def preprocessing_excluded(runs: list) -> Verdict:
    def check(r):
        if not kind_of(r).latency or not _has_latency(r):
            return None
        t = r.timing or {}
        inc, exc = t.get("e2e_includes"), t.get("excludes")
        if not inc:
            return (FAIL, "the run does not record what its timing includes or excludes",
                    "re-run with a current edgebench (timing.e2e_includes/excludes)")
        if exc:
            return (WARN, f"timing includes {inc}; excludes {exc}",
                    "quote the exclusions with the figure, or time the full pipeline (feature extraction, decoding)")
        return PASS, f"timing includes {inc}; nothing excluded is recorded", None

    return _per_run("preprocessing-excluded", "data loading or preprocessing excluded",
                    "MLPerf Tiny rules (pre-processing outside the timed region is stated); " + HOEFLER + " rule 10",
                    check, runs)


def input_size(runs: list) -> Verdict:
    def check(r):
        if not (kind_of(r).latency or kind_of(r).accuracy):
            return None
        inp = (r.scenario or {}).get("inputs") or {}
        shape = inp.get("shape")
        if not shape:
            return (FAIL, "input shape not recorded", "record the inputs (bench does: scenario.inputs)")
        ins = (r.model or {}).get("inputs") or []
        want = list((ins[0] or {}).get("shape") or [])[1:] if ins else None
        shape_t = "×".join(map(str, shape))
        src = inp.get("source")
        if want and list(shape)[-len(want):] != want:
            return (FAIL, f"inputs {shape_t} but the model takes {'×'.join(map(str, want))}",
                    "benchmark with inputs of the model's own shape")
        batch = (r.scenario or {}).get("batch") or 1
        if batch > 1 and (r.scenario or {}).get("name") == "single-stream":
            return (WARN, f"batch {batch} in a single-stream scenario ({shape_t} inputs)",
                    "single-stream latency is batch 1; report batched figures as offline throughput")
        if src == "random":
            return (PASS, f"{shape_t} inputs (the model's shape), seeded random in range {inp.get('range')} "
                          f"({inp.get('count')} distinct): right for fixed-cost CNNs, not for data-dependent models",
                    None)
        return PASS, f"{shape_t} inputs (the model's shape) from {src} ({inp.get('count')} samples)", None

    return _per_run("input-size", "input size not stated or unrealistic",
                    "Bailey 1991 (way 3: scale the problem to suit); " + HOEFLER + " rule 9", check, runs)


def relative_accuracy(runs: list) -> Verdict:
    def check(r):
        a = _acc(r)
        if not kind_of(r).accuracy or not a:
            return None
        rel = a.get("relative") or {}
        have = [k for k in ("candidate_pct_of_baseline_correct", "diff_points", "error_increase_pct")
                if rel.get(k) is not None]
        if len(have) == 3:
            return (PASS, f"stated three ways: {rel['candidate_pct_of_baseline_correct']:.1f}% of the baseline's "
                          f"correct samples, {rel['diff_points']:+.2f} accuracy points, "
                          f"{rel['error_increase_pct']:+.1f}% errors ({rel.get('baseline_errors')} vs "
                          f"{rel.get('candidate_errors')})", None)
        return (FAIL if not have else WARN, f"relative accuracy stated as {', '.join(have) or 'nothing'} only",
                "state absolute points, percent of baseline correct and percent more errors side by side")

    return _per_run("relative-accuracy-ambiguous", "relative accuracy stated ambiguously",
                    "edgebench design brief (relative accuracy stated unambiguously); " + HOEFLER + " rule 4",
                    check, runs)


def single_run(runs: list) -> Verdict:
    def check(r):
        e = _e2e(r)
        if not kind_of(r).latency or not e.get("median_s"):
            return None
        k = int(e.get("runs") or 1)
        if e.get("ci_low_s") is None or e.get("ci_high_s") is None:
            return (FAIL, f"median {fmt.duration(e['median_s'])} with no interval (n={fmt.count(e.get('n'))})",
                    "measure more samples and repeats (bench --repeat 3 or more)")
        ci = f"median {fmt.duration(e['median_s'])}, 95% CI {fmt.duration_range(e['ci_low_s'], e['ci_high_s'])}"
        if k < 2:
            why = ("a soak is one long run" if kind_of(r).sustained else "one run")
            return (WARN, f"{ci} from {why}: the interval cannot see run-to-run variation "
                          f"(n={fmt.count(e.get('n'))}, n_eff {fmt.count(e.get('n_eff'))})",
                    "repeat in fresh processes (bench --repeat 3 or more)")
        cv = e.get("between_run_cv")
        runs_text = f"{ci} over {k} independent runs" + (f", between-run CV {100 * cv:.1f}%" if cv is not None
                                                          else "")
        sessions = e.get("sessions")
        if sessions == 1:
            sv = e.get("session_variation") or {}
            source = ("pooled from other measurements on this board and host" if sv.get("source") == "pooled"
                      else "the stated prior")
            return (WARN, f"{runs_text}, all in one invocation: its variation between invocations is {source}, not "
                          "measured for this model (repeats inside one invocation share that minute's machine)",
                    "run the same bench command again: earlier runs of the same model and conditions in the "
                    "runs folder are combined into the interval")
        if sessions:
            scv = e.get("between_session_cv")
            runs_text += f", combined with {sessions - 1} earlier invocation(s)" + (
                f" (between-session CV {100 * scv:.1f}%)" if scv is not None else "")
        return (PASS, runs_text, None)

    return _per_run("single-run", "no variance or a single run",
                    HOEFLER + " rules 5 and 8 (confidence intervals; sound comparison); Bailey 1991", check, runs)


def burst_as_sustained(runs: list) -> Verdict:
    soaks = {}
    for r in runs:
        if kind_of(r).sustained:
            soaks.setdefault(((r.model or {}).get("sha256"), (r.board or {}).get("name")), r)

    def check(r):
        if kind_of(r).sustained:
            s = (r.extra or {}).get("soak") or {}
            ratio = s.get("sustained_over_burst")
            rt = f"sustained/burst throughput {ratio:.2f}" if ratio is not None else "no burst/sustained ratio"
            if s.get("steady"):
                return PASS, f"soaked to steady state after {s.get('duration_s') or 0:.0f} s; {rt}", None
            return (WARN, f"soak ended without a steady state after {s.get('duration_s') or 0:.0f} s; {rt}",
                    "soak longer (--max-duration) or with a wider --window")
        if kind_of(r).points:
            pts = (r.extra or {}).get("points") or []
            steady = sum(1 for p in pts if p.get("steady"))
            if pts and steady == len(pts):
                return PASS, f"all {len(pts)} points at thermal steady state", None
            return (WARN, f"{steady} of {len(pts)} points reached steady state",
                    "raise --max-duration-per-point")
        if not kind_of(r).burst or not _has_latency(r):
            return None
        s = soaks.get(((r.model or {}).get("sha256"), (r.board or {}).get("name")))
        if s is not None:
            ratio = ((s.extra or {}).get("soak") or {}).get("sustained_over_burst")
            return (PASS, f"a soak of the same model on the same board is among the runs ({s.run_id}"
                          + (f", sustained/burst {ratio:.2f}" if ratio is not None else "") + ")", None)
        dur = (_e2e(r).get("n") or 0) * (_e2e(r).get("median_s") or 0)
        return (WARN, f"a {r.kind} run of about {dur:.2g} s of inference in all: a burst figure; no soak of "
                      f"{r.model.get('name')} on {r.board.get('name')} among the runs checked",
                "run `edgebench soak` on the same board and quote the sustained figure")

    return _per_run("burst-as-sustained", "burst sold as sustained",
                    "edgebench design brief (sustained behaviour under heat); " + HOEFLER + " rule 9", check, runs)


def power_without_duty_cycle(runs: list) -> Verdict:
    def check(r):
        p = r.power or {}
        if kind_of(r).points:
            pts = [x for x in (r.extra or {}).get("points") or [] if x.get("energy")]
            if not pts:
                return None
            return PASS, f"energy per inference at {len(pts)} duty cycles / rates, idle included", None
        if not kind_of(r).energy and not p.get("measured"):
            return None
        duty = p.get("duty_cycle") or {}
        idle = (p.get("idle") or {}).get("power_w")
        if duty.get("avg_power_w") is not None and idle is not None:
            return (PASS, f"idle {idle:.3g} W, {fmt.rate(duty.get('rate_hz'))}/s at duty {duty.get('duty') or 0:.3g}: "
                          f"average {duty['avg_power_w']:.3g} W ({p.get('label')})", None)
        act = (p.get("inference") or {}).get("energy_j")
        return (FAIL, f"active energy {act} J without idle power and a duty cycle",
                "measure idle power and quote the average at the deployment's duty cycle (edgebench energy --rate)")

    return _per_run("power-without-duty-cycle", "active power without a duty cycle",
                    "edgebench design brief (peak power quoted against idle duty cycles); MLPerf Tiny energy mode",
                    check, runs)


def small_test_set(runs: list) -> Verdict:
    lat = [r for r in runs if kind_of(r).latency and _has_latency(r)]
    speedup = len({((r.model or {}).get("sha256")) for r in lat}) > 1   # a latency comparison among the runs

    def check(r):
        a = _acc(r)
        if not kind_of(r).accuracy or not a:
            return None
        res = a.get("resolution") or {}
        p = a.get("paired") or {}
        n, mdd, obs = res.get("n") or p.get("n"), res.get("mdd_points"), res.get("observed_diff_points")
        if res.get("resolvable_at_all") is False:
            return (FAIL, f"n={n}: this test set cannot resolve any difference", "use a larger test set")
        if mdd is None:
            return (WARN, "no resolution recorded for this test set", "re-run with a current edgebench accuracy")
        drop = f"observed {obs:+.2f} points" if obs is not None else "no observed difference"
        if res.get("resolvable"):
            return PASS, f"n={n} resolves differences of {mdd:.2f} points; {drop}", None
        text = (f"n={n} resolves only differences of {mdd:.2f} points or more; {drop} is below that: "
                f"neither a drop nor its absence below {mdd:.2f} points can be claimed")
        if speedup:
            return (FAIL, text + "; a speed-up is claimed among these runs, on an accuracy that cannot be resolved",
                    "use a test set large enough to resolve the drop that matters before claiming the speed-up")
        return (WARN, text, "use a larger test set, or claim only 'no drop larger than the resolution'")

    return _per_run("test-set-too-small", "a test set too small for the claimed difference",
                    "edgebench design brief (significance and the smallest resolvable difference side by side)",
                    check, runs)


def cold_start(runs: list) -> Verdict:
    def check(r):
        if not kind_of(r).latency or not _has_latency(r):
            return None
        c = r.cold_start or {}
        first, load = c.get("first_inference_s"), c.get("load_s")
        if first is None:
            return (WARN, "no cold start (model load, first inference) recorded: only warm figures",
                    "bench records it; an MCU run needs the eb- dialect for it")
        med = _e2e(r).get("median_s")
        text = f"first inference {fmt.duration(first)}"
        if med:
            text += f" ({first / med:.1f}x the warm median)"
        text += f", model load {fmt.duration(load)}" if load is not None else ", model load not timed"
        return PASS, text, None

    return _per_run("cold-start", "cold start missing",
                    "edgebench design brief (cold start, warm-up reported separately); " + HOEFLER + " rule 7",
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
        pl = (r.power or {}).get("label")
        if pl and pl.split(" ")[0] != r.label:
            inner.append(f"{r.run_id}: latency {r.label}, energy {pl}")
    lab = labels.pop() if labels else "measured"
    if inner:
        return Verdict("mixed-labels", title, WARN, "; ".join(inner) + " (each figure carries its own label)",
                       "quote each figure with its label; do not call an estimated energy measured", src,
                       [r.run_id for r in runs])
    note = "" if lab == "measured" else f" (every figure {lab}: not a real board's measurement)"
    return Verdict("mixed-labels", title, PASS, f"all runs {lab}{note}", None, src, [r.run_id for r in runs])


def best_of_n(runs: list, sessions: Optional[dict] = None) -> Verdict:
    """``sessions``: run id -> the other sessions of its measurement in its runs folder
    (``[{run_id, median_s}]``, :func:`edgebench.bench.sessions.other_sessions`)."""
    title = "best of N (the fastest invocation cited)"
    src = "Hoefler & Belli, SC15 rule 5 (report the variation of all runs); Bailey 1991"

    def check(r):
        if not kind_of(r).repeats or not _has_latency(r):
            return None
        others = (sessions or {}).get(r.run_id)
        if others is None:
            return None
        combined = set(_e2e(r).get("session_runs") or [])
        left = [o for o in others if o["run_id"] not in combined]
        e = _e2e(r)
        med = (e.get("invocation") or e)["median_s"]
        if not left:
            return PASS, (f"{len(others)} other session(s) of this measurement in its folder, all combined into "
                          "its interval" if others else "no other session of this measurement in its folder"), None
        meds = sorted(o["median_s"] for o in left)
        n = len(others) + 1
        text = (f"median {fmt.duration(med)}; {len(left)} session(s) of the same measurement in its folder are not "
                f"in its interval (medians {fmt.duration(meds[0])}–{fmt.duration(meds[-1])})")
        typical = meds[len(meds) // 2]
        outside = e.get("ci_high_s") is not None and typical > e["ci_high_s"]
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

    return _per_run("best-of-n", title, src, check, runs)


best_of_n.needs_sessions = True


def variation_levels(runs: list) -> Verdict:
    title = "an interval or throughput without the variation between invocations"
    src = "edgebench design brief (three levels of variation; every decision carries them); " + HOEFLER + " rule 8"

    def check(r):
        if not kind_of(r).latency or not _has_latency(r):
            return None
        e, tp = _e2e(r), r.throughput or {}
        sv = e.get("session_variation")
        problems = []
        if kind_of(r).repeats and not sv:
            problems.append("its latency interval has no between-invocation term (made before edgebench "
                            "modelled it)")
        if tp.get("per_s") and tp.get("ci_low_per_s") is None and tp.get("host_limited_per_s") is None:
            problems.append(f"its throughput {fmt.rate(tp['per_s'])}/s has no interval")
        if problems:
            return (FAIL if any("throughput" in p for p in problems) else WARN, "; ".join(problems),
                    "re-run with this edgebench: intervals, comparisons and throughputs carry the variation "
                    "between repeats and invocations")
        how = (sv or {}).get("description") or ("one run of a soak: the stated priors" if kind_of(r).sustained else
                                                 "as recorded")
        tpi = (f"; throughput {fmt.rate(tp.get('per_s'))}/s, 95% CI {fmt.rate(tp.get('ci_low_per_s'))}–"
               f"{fmt.rate(tp.get('ci_high_per_s'))}/s" if tp.get("ci_low_per_s") is not None else "")
        return PASS, f"{how}{tpi}", None

    return _per_run("variation-levels", title, src, check, runs)


def gates(runs: list) -> Verdict:
    from edgebench.results.model import failed_gates

    def check(r):
        failed = failed_gates(r)
        val = ((r.extra or {}).get("accuracy") or {}).get("validation") or {}
        default = val.get("default_exceeded") or []
        if failed:
            return (FAIL, f"a gate failed: {', '.join(failed)}", "the run did not meet a threshold that was set")
        if default:
            return (WARN, f"default thresholds exceeded (not set by the user, so warnings): {', '.join(default)}",
                    "set the threshold (e.g. --max-drop) to make it a gate, or review the model")
        if val.get("rows") or ((r.extra or {}).get("verify") or {}).get("gate", {}).get("applies"):
            return PASS, "every gate set passed", None
        return None

    return _per_run("gates", "a failed gate or threshold", "edgebench design brief (gates act on interval bounds; "
                    "exit 2 = a gate you set)", check, runs)


def layers_add_up(runs: list) -> Verdict:
    """Per-layer times are shown with the whole model they should make up: a profile whose layers
    do not sum to the whole (isolated operators never quite do) is a part sold as the whole."""
    def check(r):
        p = (r.extra or {}).get("profile") or {}
        if not p.get("sum_ratio"):
            return None
        q = p["sum_ratio"]
        text = (f"the layers sum to {q['ratio']:.3f} of the whole model"
                + (f" (95% CI {q['ci_low']:.3f}–{q['ci_high']:.3f})" if q.get("ci_low") is not None else "")
                + f", {p['method']} method")
        if p["method"] == "isolated":
            return (WARN, text + ": isolated timings omit cache and fusion effects",
                    "quote each layer's share of the isolated sum, never as time inside the model; on a Linux "
                    "board, profile with --benchmark-model too")
        inside = q.get("ci_low") is not None and q["ci_low"] <= 1.02 and q["ci_high"] >= 0.98
        return (PASS, text, None) if inside else (
            WARN, text + ": time between the layers is not in any of them", "see docs/profile.md (methods)")

    return _per_run("layers-add-up", "per-layer times that do not make up the whole",
                    "edgebench design brief (every figure with its conditions); " + HOEFLER + " rule 10", check, runs)


def regression_on_record(runs: list, records: Optional[dict] = None) -> Verdict:
    """``records``: run id -> its series' change points up to it
    (:func:`edgebench.store.history.regressions_on_record`), None where its series is too short."""
    title = "a regression on record (the series got slower and stayed)"
    src = "edgebench issue 28 (change points over the history of a series); conbench, asv, Otava"

    def check(r):
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

    return _per_run("regression-on-record", title, src, check, runs)


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
        state = FAIL if g["failed"] else WARN if g["undecided"] else PASS
        worst = state if _SEVERITY[state] > _SEVERITY[worst] else worst
        na, nb = (len(c.sessions["baseline"]), len(c.sessions["candidate"])) if c.sessions else (1, 1)
        lines.append(f"{c.candidate} against {c.baseline} ({nb} vs {na} sessions): " + c.gate_line())
    remedy = {FAIL: "the candidate is slower than the threshold: find the change, or raise the threshold "
                    "deliberately", WARN: next((c.gate.get("to_detect") for c in gated if c.gate["undecided"]), None)
              or "measure more invocations of each"}.get(worst)
    return Verdict("slowdown-gate", title, worst, "; ".join(lines), remedy, src,
                   [c.candidate for c in gated])


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


__all__ = ["Verdict", "CheckReport", "RULES", "check", "slowdown_gate", "PASS", "WARN", "FAIL", "NA", "VERDICTS"]
