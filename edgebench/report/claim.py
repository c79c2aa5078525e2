"""The claim sentence: one complete statement generated from a stored run (level 1).

It names the figure, its uncertainty and sample count, the model and how it
ran, what the timing includes, the board and its state, the label of the
figure, and what was *not* measured, so a number cannot travel without its
conditions.
"""
from __future__ import annotations

from edgebench.report import format as fmt
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
    parts = [_headline(result), _what(result), _includes(result), _where(result), _state(result)]
    text = _LEADS.get(result.label, "") + ", ".join(p for p in parts if p) + "."
    caveats = _caveats(result)
    if caveats:
        text += " " + " ".join(caveats)
    return text


def _headline(r: RunResult) -> str:
    e2e = r.latency.get("e2e") or {}
    scen = r.scenario.get("name", "single-stream")
    tp = r.throughput or {}
    tput = tp.get("per_s")
    level = int(round(100 * e2e.get("ci_level", 0.95)))
    if tp.get("host_limited_per_s") is not None:   # emulated: device time apart from the host's link
        head = (f"{fmt.rate(tput)} inferences/s of emulated device time {scen} "
                f"({fmt.rate(tp['host_limited_per_s'])}/s host-limited, with the emulator and the serial link "
                "between chunks)")
    else:
        ci = (f" ({level}% CI {fmt.rate(tp['ci_low_per_s'])}–{fmt.rate(tp['ci_high_per_s'])}/s"
              + (f" over {tp['sessions']} sessions" if (tp.get("sessions") or 1) > 1 else "") + ")"
              if tp.get("ci_low_per_s") is not None else "")
        head = f"{fmt.rate(tput)} inferences/s achieved {scen}{ci}"
    if scen == "fixed-rate":
        head = (f"fixed-rate at {fmt.rate(r.scenario.get('rate_hz'))}/s requested, "
                f"{fmt.rate(r.extra.get('achieved_rate_hz'))}/s achieved")
    runs = int(e2e.get("runs") or 1)
    over = (f" over {runs} runs of ~{fmt.count(round((e2e.get('n') or 0) / runs))} inferences"
            if runs > 1 else f" over 1 run of {fmt.count(e2e.get('n'))} inferences")
    stats = (f"median {fmt.duration(e2e.get('median_s'))}, "
             f"{int(round(100 * e2e.get('ci_level', 0.95)))}% CI "
             f"{fmt.duration_range(e2e.get('ci_low_s'), e2e.get('ci_high_s'))}{over}")
    if e2e.get("p99_s") is not None:
        stats += f", p99 {fmt.duration(e2e.get('p99_s'))}"
    warm = (r.warmup or {}).get("n_warmup")
    if warm is not None:
        stats += f", {fmt.count(warm)} warm-up inferences discarded"
    sessions = e2e.get("sessions")
    sv = e2e.get("session_variation") or {}
    between = (f"between-invocation CV {fmt.percent(sv.get('cv'), 1)}, "
               + (f"pooled from {sv.get('units')} invocations on this board and host" if sv.get("source") == "pooled"
                  else "the stated prior"))
    rerun = (f"; a re-run's median is expected in {fmt.duration_range(e2e.get('rerun_low_s'), e2e.get('rerun_high_s'))}"
             if e2e.get("rerun_low_s") is not None else "")
    if sessions and sessions > 1:
        stats += (f"; the interval combines {sessions} sessions, this invocation and {sessions - 1} earlier "
                  f"run{'s' if sessions > 2 else ''} of the same model and conditions ({between}){rerun}")
    elif sessions == 1:
        stats += (f"; one session of this model: its interval carries the variation between invocations "
                  f"({between}){rerun}")
    return f"{head} ({stats})"


def _what(r: RunResult) -> str:
    m, rt = r.model, r.runtime
    prec = _PRECISION.get(m.get("precision"), str(m.get("precision")))
    how = _KERNELS.get(rt.get("kernels"), str(rt.get("kernels")))
    if rt.get("delegate"):
        how = f"{rt['delegate']} delegate"
    threads = rt.get("threads")
    run_on = f"{rt.get('name', '?')} {rt.get('version', '')}".strip()
    batch = r.scenario.get("batch") or 1
    extra = f", batch {batch}" if batch > 1 else ""
    inputs = _inputs(r.scenario.get("inputs") or {})
    return (f"for {m.get('name')} {prec} ({how}, {threads} thread{'s' if threads != 1 else ''}, "
            f"{run_on}{extra}{', ' + inputs if inputs else ''})")


def _inputs(inp: dict) -> str:
    shape = "×".join(str(d) for d in inp.get("shape") or [])
    if not inp:
        return ""
    if inp.get("source") == "random":
        return f"seeded random {shape} inputs (seed {inp.get('seed')}, {inp.get('count')} distinct)"
    return f"{inp.get('count')} real {shape} inputs from {inp.get('source')}"


def invoke_only(r) -> bool:
    """True when a run's end-to-end figure is the kernel alone: every other stage is 0 and the e2e
    median is the invoke median (firmware that times only the engine)."""
    lat = r.latency or {}
    e2e, inv = (lat.get("e2e") or {}).get("median_s"), (lat.get("invoke") or {}).get("median_s")
    others = [(lat.get(st) or {}).get("median_s") for st in ("prep", "set", "get")]
    return bool(e2e and inv and abs(e2e - inv) <= 1e-3 * e2e and all(not v for v in others))


def _includes(r: RunResult) -> str:
    inc = r.timing.get("e2e_includes")
    if invoke_only(r):   # firmware that times the engine alone: never sold as end to end
        exc = r.timing.get("excludes")
        return f"KERNEL ONLY ({inc})" + (f"; not timed: {exc}" if exc else "")
    return f"end-to-end incl. {inc}" if inc else "end-to-end"


def _where(r: RunResult) -> str:
    b = r.board
    sysd = b.get("system") or {}
    cpu_d = sysd.get("cpu") or {}
    cpu = (sysd.get("board") or {}).get("model") or cpu_d.get("model_name") or cpu_d.get("hardware")
    if cpu and cpu_d.get("logical_cpus"):
        cpu = f"{cpu}, {cpu_d['logical_cpus']} CPUs"
    gov = _governor(sysd, (r.extra or {}).get("figure_window"))
    pinned = (r.settings or {}).get("agent_cpus")
    pin = f"pinned to CPU {pinned}" if pinned not in (None, "") else "not pinned"
    osd = sysd.get("os") or {}
    os_name = osd.get("os_pretty_name") or " ".join(str(v) for v in (osd.get("system"), osd.get("kernel")) if v)
    if osd.get("kernel") and osd.get("os_pretty_name"):
        os_name += f", kernel {osd['kernel']}"
    load = (r.extra or {}).get("load_at_start")
    load_text = f"load {load[0]:.2f} at start" if isinstance(load, list) and load else None
    details = ", ".join(x for x in (cpu, gov, pin, os_name or None, load_text) if x)
    title = b.get("title") or b.get("name")
    return f"on {title}" + (f" ({details})" if details else "")


def _governor(sysd: dict, window: dict | None = None) -> str | None:
    policies = (sysd.get("cpufreq") or {}).get("policies") or {}
    govs = sorted({p.get("governor") for p in policies.values() if isinstance(p, dict) and p.get("governor")})
    maxf = [p.get("scaling_cur_freq_hz") for p in policies.values()
            if isinstance(p, dict) and p.get("scaling_cur_freq_hz")]
    bits = []
    if window and window.get("freq_hz"):  # a figure from a window (soak, sweep) quotes that window's clock
        bits.append(f"{window['freq_hz'] / 1e9:.2f} GHz in the {window['name']}")
    elif maxf:
        bits.append(f"{max(maxf) / 1e9:.2f} GHz" + (" at start" if window else ""))
    bits.append(f"governor {'/'.join(govs)}" if govs else "governor unknown")
    return ", ".join(bits)


def _state(r: RunResult) -> str:
    t = r.thermal or {}
    start, end = t.get("start") or {}, t.get("end") or {}
    label = r.label
    if not (start.get("available") or end.get("available")):
        return f"{label}, thermal state unknown (no thermal sensor)"
    hs, he = _hottest(start), _hottest(end)
    window = (r.extra or {}).get("figure_window") or {}
    if window.get("temp_c") is not None:
        label = f"{label}, {window['temp_c']:.0f} °C in the {window['name']}"
    throttled = end.get("throttled")
    thr = ""
    if isinstance(throttled, dict):
        now = [k[: -len("_now")] for k, v in throttled.items() if k.endswith("_now") and v]
        thr = f", throttled now ({', '.join(now)})" if now else ", not throttled"
    return f"{label}, {hs:.0f}→{he:.0f} °C during the run{thr}"


def _hottest(snap: dict) -> float:
    temps = [v for v in (snap.get("temps_c") or {}).values() if isinstance(v, (int, float))]
    return max(temps) if temps else float("nan")


def _caveats(r: RunResult) -> list[str]:
    out = []
    if r.status != "complete":
        out.append(f"INCOMPLETE run ({r.status_reason or r.status}).")
    if r.stopping and r.stopping.get("target_reached") is False:
        out.append(f"Precision target not reached: {r.stopping.get('reason')}.")
    if kind_of(r).burst:
        out.append("Burst figure, not sustained (no soak to thermal steady state).")
    codes = {w.get("code") for w in r.warnings or []}
    if "coarse-clock" in codes:
        res = (r.timing or {}).get("clock_resolution_s")
        out.append(f"The device clock ticks every {fmt.duration(res)}: the median is within a few tens of "
                   "ticks, so the figure is no finer than the clock.")
    if "single-run" in codes:
        out.append("One run only: run-to-run variation is not in the interval.")
    link = (r.extra or {}).get("link") or {}
    if link.get("checked") is False:
        out.append("Unchecked link: the plain MLPerf Tiny dialect carries no checksum (replies checked by "
                   "shape, counts and repeated reads only).")
    elif link.get("retries") or link.get("upload_restarts"):
        out.append(f"The serial link needed {link.get('retries', 0)} retries "
                   f"({link.get('discarded_lines', 0)} damaged lines discarded; only CRC-checked replies used).")
    if not (r.power or {}).get("measured"):
        out.append("Energy not measured.")
    acc = (r.extra or {}).get("accuracy")
    if not acc:
        out.append("Accuracy not measured in this run.")
    if r.warnings:
        codes = ", ".join(sorted({w.get("code", "?") for w in r.warnings}))
        out.append(f"{len(r.warnings)} stability warning{'s' if len(r.warnings) != 1 else ''} ({codes}).")
    return out


# ---------------------------------------------------------------- accuracy runs

def _accuracy_how(rt: dict, with_threads: bool = True) -> str:
    kernels = rt.get("kernels")
    how = f"{rt['delegate']} delegate" if rt.get("delegate") else _KERNELS.get(kernels, str(kernels))
    if with_threads:
        t = rt.get("threads")
        how += f", {t} thread{'s' if t != 1 else ''}"
    return how


def _data_name(source: str) -> str:
    """'builtin:digits/test (...)' -> 'digits/test'; 'npz:/a/b/test.npz [x, y]' -> 'test.npz'."""
    from pathlib import Path

    kind, _, rest = source.partition(":")
    rest = rest.split(" [")[0].split(" (")[0]
    return rest if kind == "builtin" else Path(rest).name


def _pct(x: float, d: int = 1) -> str:
    return f"{100 * x:.{d}f}"


def accuracy_claim(result: RunResult) -> str:
    """One sentence stating the figures of a stored accuracy run with their conditions."""
    a = result.extra["accuracy"]
    c1, b1 = a["accuracy"]["candidate"]["top1"], a["accuracy"]["baseline"]["top1"]
    pr, res, cal = a["paired"], a["resolution"], a["calibration"]
    cand, base = a["candidate"], a["baseline"]
    cprec = _PRECISION.get(cand["model"]["precision"], cand["model"]["precision"])
    bprec = _PRECISION.get(base["model"]["precision"], base["model"]["precision"])
    data = _data_name((result.scenario.get("inputs") or {}).get("source", ""))
    text = (f"{_pct(c1['accuracy'], 2)}% top-1 (95% CI {_pct(c1['ci_low'])}–{_pct(c1['ci_high'])}%, "
            f"n={c1['n']:,}{', ' + data if data else ''}) for {cand['model']['name']} {cprec} "
            f"({_accuracy_how(cand['runtime'])}) on {cand['board']} vs {bprec} {_pct(b1['accuracy'], 2)}% "
            f"({_accuracy_how(base['runtime'], False)}, {base['board']}), agreement {_pct(pr['agreement_rate'])}%")
    lo, hi = pr.get("diff_ci_low_points"), pr.get("diff_ci_high_points")
    ci = f"95% CI {lo:+.2f} to {hi:+.2f}" if lo is not None and hi is not None else "no interval"
    diff = (f"difference {pr['diff_points']:+.2f} points ({ci}, McNemar {fmt.p_value(pr['mcnemar_p'])})")
    mdd = ("this test set cannot detect a difference of any size" if res["mdd_points"] is None else
           f"this test set detects {res['mdd_points']:.1f} points with {res['power']:.0%} power")
    verdict = {"difference": "a difference resolved",
               "no-difference-resolved": f"no difference resolved ({mdd})",
               "borderline": "borderline (test and interval disagree): no difference claimed"}[res["verdict"]]
    text += f"; {diff}: {verdict}"
    cc, cb = cal["candidate"], cal["baseline"]
    text += (f"; ECE {cc['ece_debiased']:.3f} bias-corrected (95% CI {cc['ece_ci_low']:.3f}–{cc['ece_ci_high']:.3f}; "
             f"{bprec} {cb['ece_debiased']:.3f})")
    edge = a.get("edge_cases")
    if edge and edge.get("slices"):
        w = next(r for r in edge["slices"] if r["slice"] == edge["worst"])
        name = f"{w['family']} s{w['severity']}" if w["family"] else w["slice"]
        m = len(edge["slices"])
        holm = f", {fmt.p_value(w['mcnemar_p_holm'])} Holm-adjusted over {m} slices" if m > 1 else ""
        text += (f"; worst edge-case slice: {name}, drop {w['drop_points']:.1f} points (95% CI "
                 f"{w['drop_ci_low_points']:.1f} to {w['drop_ci_high_points']:.1f}, McNemar "
                 f"{fmt.p_value(w['mcnemar_p'])}{holm})")
    else:
        text += "; no edge cases evaluated"
    text += f"; {result.label}."
    v = a.get("validation") or {}
    if v.get("gate_on") == "point":
        text += " Gates compared POINT ESTIMATES, not interval bounds."
    unresolved = set(v.get("unresolved") or [])

    def listed(metrics):
        return ", ".join(f"{m} (unresolved: interval straddles the limit)" if m in unresolved else m for m in metrics)

    if v.get("failed"):
        text += " Compression check FAILED: " + listed(v["failed"]) + "."
    if v.get("default_exceeded"):
        text += " Default thresholds exceeded (warnings, not gates: not set by the user): " + \
            listed(v["default_exceeded"]) + "."
    if result.status != "complete":
        text += f" INCOMPLETE run ({result.status_reason or result.status})."
    return text
