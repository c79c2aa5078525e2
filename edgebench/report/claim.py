"""The claim sentence: one complete statement generated from a stored run (level 1).

It names the figure, its uncertainty and sample count, the model and how it
ran, what the timing includes, the board and its state, the label of the
figure, and what was *not* measured, so a number cannot travel without its
conditions.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, List, Mapping, Optional

from edgebench.report import format as fmt
from edgebench.results.conditions import Inputs, RuntimeSection, SystemSection
from edgebench.results.figures.thermal import Snapshot
from edgebench.results.kinds import kind_of
from edgebench.results.model import RunResult

_KERNELS = {"xnnpack": "XNNPACK", "builtin": "builtin kernels", "reference": "reference kernels"}
_PRECISION = {"int8": "INT8", "uint8": "UINT8", "fp32": "FP32", "fp16": "FP16",
              "dynamic-range": "dynamic-range INT8 weights/FP32 activations", "mixed": "mixed precision"}


_LEADS = {
    "emulated": "EMULATED (instruction counts under an emulator, not a real board's speed): ",
    "simulated": "SIMULATED (a physics model, not a measurement): ",
    "estimated": "ESTIMATED (datasheet arithmetic, not a measurement): ",
}


def claim(result: RunResult) -> str:
    """The claim sentence of a latency run (docs/claim.md)."""
    parts = [_headline(result), _what(result), _includes(result), _where(result), _state(result)]
    text = _LEADS.get(result.label, "") + ", ".join(p for p in parts if p) + "."
    caveats = _caveats(result)
    if caveats:
        text += " " + " ".join(caveats)
    return text


def _headline(r: RunResult) -> str:
    e2e = r.stage("e2e")
    scen = r.scenario.name or "single-stream"
    tp = r.throughput
    tput = tp.per_s
    level = int(round(100 * (e2e.ci_level if e2e.ci_level is not None else 0.95)))
    if tp.host_limited_per_s is not None:   # emulated: device time apart from the host's link
        head = (f"{fmt.rate(tput)} inferences/s of emulated device time {scen} "
                f"({fmt.rate(tp.host_limited_per_s)}/s host-limited, with the emulator and the serial link "
                "between chunks)")
    else:
        ci = (f" ({level}% CI {fmt.rate(tp.ci_low_per_s)}–{fmt.rate(tp.ci_high_per_s)}/s"
              + (f" over {tp.sessions} sessions" if (tp.sessions or 1) > 1 else "") + ")"
              if tp.ci_low_per_s is not None else "")
        head = f"{fmt.rate(tput)} inferences/s achieved {scen}{ci}"
    if scen == "fixed-rate":
        head = (f"fixed-rate at {fmt.rate(r.scenario.rate_hz)}/s requested, "
                f"{fmt.rate(r.extra.achieved_rate_hz)}/s achieved")
    runs = int(e2e.runs or 1)
    over = (f" over {runs} runs of ~{fmt.count(round((e2e.n or 0) / runs))} inferences"
            if runs > 1 else f" over 1 run of {fmt.count(e2e.n)} inferences")
    stats = (f"median {fmt.duration(e2e.median_s)}, {level}% CI "
             f"{fmt.duration_range(e2e.ci_low_s, e2e.ci_high_s)}{over}")
    if e2e.p99_s is not None:
        stats += f", p99 {fmt.duration(e2e.p99_s)}"
    warm = r.warmup.n_warmup
    if warm is not None:
        stats += f", {fmt.count(warm)} warm-up inferences discarded"
    sessions = e2e.sessions
    sv = e2e.session_variation or {}    # free-form: the component's own keys (cv, source, units, ...)
    between = (f"between-invocation CV {fmt.percent(sv.get('cv'), 1)}, "
               + (f"pooled from {sv.get('units')} invocations on this board and host" if sv.get("source") == "pooled"
                  else "the stated prior"))
    rerun = (f"; a re-run's median is expected in {fmt.duration_range(e2e.rerun_low_s, e2e.rerun_high_s)}"
             if e2e.rerun_low_s is not None else "")
    if sessions and sessions > 1:
        stats += (f"; the interval combines {sessions} sessions, this invocation and {sessions - 1} earlier "
                  f"run{'s' if sessions > 2 else ''} of the same model and conditions ({between}){rerun}")
    elif sessions == 1:
        stats += (f"; one session of this model: its interval carries the variation between invocations "
                  f"({between}){rerun}")
    return f"{head} ({stats})"


def _what(r: RunResult) -> str:
    m, rt = r.model, r.runtime
    prec = _PRECISION.get(m.precision or "", str(m.precision))
    how = _KERNELS.get(rt.kernels or "", str(rt.kernels))
    if rt.delegate:
        how = f"{rt.delegate} delegate"
    threads = rt.threads
    run_on = f"{rt.name or '?'} {rt.version or ''}".strip()
    batch = r.scenario.batch or 1
    extra = f", batch {batch}" if batch > 1 else ""
    inputs = _inputs(r.scenario.inputs)
    return (f"for {m.name} {prec} ({how}, {threads} thread{'s' if threads != 1 else ''}, "
            f"{run_on}{extra}{', ' + inputs if inputs else ''})")


def _inputs(inp: Inputs) -> str:
    if not inp:
        return ""
    shape = "×".join(str(d) for d in inp.shape or [])
    if inp.source == "random":
        return f"seeded random {shape} inputs (seed {inp.seed}, {inp.count} distinct)"
    return f"{inp.count} real {shape} inputs from {inp.source}"


def invoke_only(r: RunResult) -> bool:
    """True when a run's end-to-end figure is the kernel alone: every other stage is 0 and the e2e
    median is the invoke median (firmware that times only the engine)."""
    e2e, inv = r.stage("e2e").median_s, r.stage("invoke").median_s
    others = [r.stage(st).median_s for st in ("prep", "set", "get")]
    return bool(e2e and inv and abs(e2e - inv) <= 1e-3 * e2e and all(not v for v in others))


def _includes(r: RunResult) -> str:
    inc = r.timing.e2e_includes
    if invoke_only(r):   # firmware that times the engine alone: never sold as end to end
        exc = r.timing.excludes
        return f"KERNEL ONLY ({inc})" + (f"; not timed: {exc}" if exc else "")
    return f"end-to-end incl. {inc}" if inc else "end-to-end"


def _where(r: RunResult) -> str:
    b = r.board
    sysd = b.system
    # the collectors' own output (docs/agent-protocol.md): free-form dicts
    cpu_d, osd, board_d = sysd.cpu or {}, sysd.os or {}, sysd.board or {}
    cpu = board_d.get("model") or cpu_d.get("model_name") or cpu_d.get("hardware")
    if cpu and cpu_d.get("logical_cpus"):
        cpu = f"{cpu}, {cpu_d['logical_cpus']} CPUs"
    gov = _governor(sysd, r.extra.figure_window)
    pinned = r.settings.agent_cpus
    pin = f"pinned to CPU {pinned}" if pinned not in (None, "") else "not pinned"
    os_name = osd.get("os_pretty_name") or " ".join(str(v) for v in (osd.get("system"), osd.get("kernel")) if v)
    if osd.get("kernel") and osd.get("os_pretty_name"):
        os_name += f", kernel {osd['kernel']}"
    load: Any = r.extra.load_at_start
    load_text = f"load {load[0]:.2f} at start" if isinstance(load, list) and load else None
    details = ", ".join(x for x in (cpu, gov, pin, os_name or None, load_text) if x)
    title = b.title or b.name
    return f"on {title}" + (f" ({details})" if details else "")


def _governor(sysd: SystemSection, window: Optional[Mapping[str, Any]] = None) -> Optional[str]:
    policies = sysd.cpufreq.policies or {}
    govs = sorted({p.governor for p in policies.values() if p.governor})
    maxf = [p.scaling_cur_freq_hz for p in policies.values() if p.scaling_cur_freq_hz]
    bits = []
    if window and window.get("freq_hz"):  # a figure from a window (soak, sweep) quotes that window's clock
        bits.append(f"{window['freq_hz'] / 1e9:.2f} GHz in the {window['name']}")
    elif maxf:
        bits.append(f"{max(maxf) / 1e9:.2f} GHz" + (" at start" if window else ""))
    bits.append(f"governor {'/'.join(govs)}" if govs else "governor unknown")
    return ", ".join(bits)


def _state(r: RunResult) -> str:
    start, end = r.thermal.start, r.thermal.end
    label: str = r.label
    if not (start.available or end.available):
        return f"{label}, thermal state unknown (no thermal sensor)"
    hs, he = _hottest(start), _hottest(end)
    window = r.extra.figure_window or {}     # free-form: the window's name, clock and temperature
    if window.get("temp_c") is not None:
        label = f"{label}, {window['temp_c']:.0f} °C in the {window['name']}"
    throttled = end.throttled
    thr = ""
    if isinstance(throttled, dict):
        now = [k[: -len("_now")] for k, v in throttled.items() if k.endswith("_now") and v]
        thr = f", throttled now ({', '.join(now)})" if now else ", not throttled"
    return f"{label}, {hs:.0f}→{he:.0f} °C during the run{thr}"


def _hottest(snap: Snapshot) -> float:
    temps = [v for v in (snap.temps_c or {}).values() if isinstance(v, (int, float))]
    return max(temps) if temps else float("nan")


def _caveats(r: RunResult) -> List[str]:
    out = []
    if r.status != "complete":
        out.append(f"INCOMPLETE run ({r.status_reason or r.status}).")
    if r.stopping.target_reached is False:
        out.append(f"Precision target not reached: {r.stopping.reason}.")
    if kind_of(r).burst:
        out.append("Burst figure, not sustained (no soak to thermal steady state).")
    codes = {w.code for w in r.warnings}
    if "coarse-clock" in codes:
        res = r.timing.clock_resolution_s
        out.append(f"The device clock ticks every {fmt.duration(res)}: the median is within a few tens of "
                   "ticks, so the figure is no finer than the clock.")
    if "single-run" in codes:
        out.append("One run only: run-to-run variation is not in the interval.")
    link = r.extra.link or {}      # free-form: the serial link's own figures
    if link.get("checked") is False:
        out.append("Unchecked link: the plain MLPerf Tiny dialect carries no checksum (replies checked by "
                   "shape, counts and repeated reads only).")
    elif link.get("retries") or link.get("upload_restarts"):
        out.append(f"The serial link needed {link.get('retries', 0)} retries "
                   f"({link.get('discarded_lines', 0)} damaged lines discarded; only CRC-checked replies used).")
    if not r.power.measured:
        out.append("Energy not measured.")
    if not r.extra.accuracy:
        out.append("Accuracy not measured in this run.")
    if r.warnings:
        listed = ", ".join(sorted({w.code or "?" for w in r.warnings}))
        out.append(f"{len(r.warnings)} stability warning{'s' if len(r.warnings) != 1 else ''} ({listed}).")
    return out


# ---------------------------------------------------------------- accuracy runs

def _accuracy_how(rt: RuntimeSection, with_threads: bool = True) -> str:
    kernels = rt.kernels
    how = f"{rt.delegate} delegate" if rt.delegate else _KERNELS.get(kernels or "", str(kernels))
    if with_threads:
        t = rt.threads
        how += f", {t} thread{'s' if t != 1 else ''}"
    return how


def _data_name(source: str) -> str:
    """'builtin:digits/test (...)' -> 'digits/test'; 'npz:/a/b/test.npz [x, y]' -> 'test.npz'."""
    kind, _, rest = source.partition(":")
    rest = rest.split(" [")[0].split(" (")[0]
    return rest if kind == "builtin" else Path(rest).name


def _pct(x: Optional[float], d: int = 1) -> str:
    return f"{100 * x:.{d}f}" if x is not None else "?"


def accuracy_claim(result: RunResult) -> str:
    """One sentence stating the figures of a stored accuracy run with their conditions."""
    a = result.extra.accuracy
    c1, b1 = a.accuracy.candidate.top1, a.accuracy.baseline.top1
    pr, res, cal = a.paired, a.resolution, a.calibration
    cand, base = a.candidate, a.baseline
    cprec = _PRECISION.get(cand.model.precision or "", str(cand.model.precision))
    bprec = _PRECISION.get(base.model.precision or "", str(base.model.precision))
    data = _data_name(result.scenario.inputs.source or "")
    text = (f"{_pct(c1.accuracy, 2)}% top-1 (95% CI {_pct(c1.ci_low)}–{_pct(c1.ci_high)}%, "
            f"n={c1.n:,}{', ' + data if data else ''}) for {cand.model.name} {cprec} "
            f"({_accuracy_how(cand.runtime)}) on {cand.board} vs {bprec} {_pct(b1.accuracy, 2)}% "
            f"({_accuracy_how(base.runtime, False)}, {base.board}), agreement {_pct(pr.agreement_rate)}%")
    lo, hi = pr.diff_ci_low_points, pr.diff_ci_high_points
    ci = f"95% CI {lo:+.2f} to {hi:+.2f}" if lo is not None and hi is not None else "no interval"
    diff = f"difference {pr.diff_points:+.2f} points ({ci}, McNemar {fmt.p_value(pr.mcnemar_p)})"
    mdd = ("this test set cannot detect a difference of any size" if res.mdd_points is None else
           f"this test set detects {res.mdd_points:.1f} points with {res.power:.0%} power")
    verdict = {"difference": "a difference resolved",
               "no-difference-resolved": f"no difference resolved ({mdd})",
               "borderline": "borderline (test and interval disagree): no difference claimed"}[str(res.verdict)]
    text += f"; {diff}: {verdict}"
    cc, cb = cal.candidate, cal.baseline
    text += (f"; ECE {cc.ece_debiased:.3f} bias-corrected (95% CI {cc.ece_ci_low:.3f}–{cc.ece_ci_high:.3f}; "
             f"{bprec} {cb.ece_debiased:.3f})")
    edge = a.edge_cases
    if edge.slices:
        w = next(r for r in edge.slices if r.slice == edge.worst)
        name = f"{w.family} s{w.severity}" if w.family else w.slice
        m = len(edge.slices)
        holm = f", {fmt.p_value(w.mcnemar_p_holm)} Holm-adjusted over {m} slices" if m > 1 else ""
        text += (f"; worst edge-case slice: {name}, drop {w.drop_points:.1f} points (95% CI "
                 f"{w.drop_ci_low_points:.1f} to {w.drop_ci_high_points:.1f}, McNemar "
                 f"{fmt.p_value(w.mcnemar_p)}{holm})")
    else:
        text += "; no edge cases evaluated"
    text += f"; {result.label}."
    v = a.validation
    if v.gate_on == "point":
        text += " Gates compared POINT ESTIMATES, not interval bounds."
    unresolved = set(v.unresolved or [])

    def listed(metrics: List[str]) -> str:
        return ", ".join(f"{m} (unresolved: interval straddles the limit)" if m in unresolved else m for m in metrics)

    if v.failed:
        text += " Compression check FAILED: " + listed(v.failed) + "."
    if v.default_exceeded:
        text += " Default thresholds exceeded (warnings, not gates: not set by the user): " + \
            listed(v.default_exceeded) + "."
    if result.status != "complete":
        text += f" INCOMPLETE run ({result.status_reason or result.status})."
    return text
