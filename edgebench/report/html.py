"""`edgebench report`: one self-contained HTML file, or Markdown for a pull request (level 1).

Pure functions: :func:`render_html` and :func:`render_markdown` take the runs (as
:class:`RunData`: the stored result and the frames read from its folder), the ``check``
verdicts and any comparisons, and return text; :func:`write_text` writes it where it is
told. The page needs no network, no JavaScript and no external CSS or fonts: figures are
PNG bytes from :mod:`edgebench.report.report_plots`, inlined as base64 ``data:`` URIs.

Every page starts with the claim of each run, the conditions table (one column per run,
differing rows marked) and the check verdicts; then one section per run with the
figures its kind has (latency distribution and stage breakdown; soak time series;
sweep plots; reliability diagram and edge-case slices; energy trace and battery life
against duty cycle); several runs add a Pareto view.
"""
from __future__ import annotations

import base64
import datetime as _dt
import html as _html
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from edgebench.report import format as fmt
from edgebench.report import layers
from edgebench.report import report_plots as rp
from edgebench.results.kinds import kind_of

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0 auto;max-width:1180px;
padding:16px 24px;color:#1a1a1a;line-height:1.4}
h1{font-size:1.6em;margin:.2em 0}h2{font-size:1.3em;border-bottom:2px solid #ddd;padding-bottom:4px;margin-top:1.6em}
h3{font-size:1.08em;margin:1.2em 0 .4em}
.claim{background:#f4f7fb;border-left:4px solid #2a6fb0;padding:8px 12px;margin:8px 0}
.claim.lab-simulated,.claim.lab-emulated,.claim.lab-estimated{border-left-color:#b06a2a;background:#fbf6f1}
table{border-collapse:collapse;margin:6px 0 12px;font-size:.9em}
th,td{border:1px solid #d0d0d0;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f0f0f0}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.differs td{background:#fff4d6}
.v-pass{color:#1d7a2e;font-weight:600}.v-warn{color:#9a6700;font-weight:600}.v-fail{color:#b3261e;font-weight:700}
.v-na{color:#777}
.label{display:inline-block;padding:0 6px;border-radius:3px;font-size:.85em;background:#e8eef6}
.label.simulated,.label.emulated,.label.estimated{background:#f6e3cf}
figure{margin:10px 0}figure img{max-width:100%;height:auto;border:1px solid #e3e3e3}
figcaption{font-size:.85em;color:#444}
.small{font-size:.85em;color:#555}.wide{overflow-x:auto}ul.warn li{margin:2px 0}
.summary{border:2px solid #2a6fb0;border-radius:6px;padding:4px 14px 8px;margin:10px 0 18px;background:#fbfdff}
.summary h2{margin-top:.4em;border:none}.summary table{font-size:.95em}.answer{font-weight:600;margin:4px 0}
.tier{color:#555;font-size:.8em;text-transform:uppercase;letter-spacing:.04em;list-style:none;margin-left:-1em}
"""


@dataclass
class RunData:
    """One run and what its folder holds, read by the caller (the CLI): frames may be None."""

    result: Any                          # RunResult
    path: str = ""
    samples: Any = None                  # samples.parquet
    soak_series: Optional[dict] = None   # see report_plots.soak_series
    power: Any = None                    # power.parquet (t_s, dt_s, power_w)
    events: Any = None                   # energy_events.parquet
    battery: Optional[dict] = None       # see report_plots.battery_curve
    images: dict = field(default_factory=dict)  # caption -> PNG bytes already in the folder (sweep plots)


# ---------------------------------------------------------------- conditions

def _governor(sysd: dict) -> Optional[str]:
    pol = (sysd.get("cpufreq") or {}).get("policies") or {}
    govs = sorted({p.get("governor") for p in pol.values() if isinstance(p, dict) and p.get("governor")})
    return "/".join(govs) or None


def _thermal(r) -> str:
    t = r.thermal or {}
    start, end = t.get("start") or {}, t.get("end") or {}
    if not (t.get("available") or start.get("available") or end.get("available")):
        return "unknown (no thermal sensor)"

    def hottest(s):
        v = [x for x in (s.get("temps_c") or {}).values() if isinstance(x, (int, float))]
        return f"{max(v):.0f} °C" if v else "?"
    thr = end.get("throttled") or {}
    now = sorted(k[:-4] for k, v in thr.items() if k.endswith("_now") and v) if isinstance(thr, dict) else []
    return f"{hottest(start)} → {hottest(end)}" + (f", throttled ({', '.join(now)})" if now else ", not throttled")


def conditions(r) -> list:
    """``[(condition, value)]`` of a run: what must travel with every figure it holds."""
    m, rt, b, sc = r.model or {}, r.runtime or {}, r.board or {}, r.scenario or {}
    sysd = b.get("system") or {}
    cpu_d = sysd.get("cpu") or {}
    osd = sysd.get("os") or {}
    inp = sc.get("inputs") or {}
    cpu = cpu_d.get("model_name") or (sysd.get("board") or {}).get("model") or cpu_d.get("hardware")
    if cpu and cpu_d.get("logical_cpus"):
        cpu = f"{cpu} ({cpu_d['logical_cpus']} CPUs)"
    bits = (f"weights {m.get('weights_bits')}-bit, activations {m.get('activations_bits')}-bit"
            if m.get("weights_bits") else None)
    pinned = (r.settings or {}).get("agent_cpus")
    shape = "×".join(str(d) for d in inp.get("shape") or [])
    inputs = None
    if inp:
        inputs = f"{shape} from {inp.get('source')} ({inp.get('count')})"
        if inp.get("sha256"):
            inputs += f", sha256 {str(inp['sha256'])[:12]}"
    os_name = osd.get("os_pretty_name") or osd.get("system")
    if osd.get("kernel"):
        os_name = f"{os_name}, kernel {osd['kernel']}" if os_name else f"kernel {osd['kernel']}"
    power = r.power or {}
    rows = [
        ("run", f"{r.run_id} ({r.kind}, {r.status}{', ' + r.status_reason if r.status_reason else ''})"),
        ("created (UTC)", r.created_utc),
        ("label", r.label),
        ("model", f"{m.get('name')} (sha256 {str(m.get('sha256'))[:12]}, {fmt.count(m.get('bytes'))} bytes)"),
        ("precision", f"{m.get('precision')}" + (f" ({bits})" if bits else "")),
        ("runtime", " ".join(str(x) for x in (rt.get("name"), rt.get("version")) if x) or None),
        ("kernels", rt.get("kernels")),
        ("threads", rt.get("threads")),
        ("delegate", rt.get("delegate") or "none"),
        ("board", f"{b.get('title') or b.get('name')} ({b.get('name')})"),
        ("CPU", cpu),
        ("pinning", f"agent pinned to CPU {pinned}" if pinned not in (None, "") else "not pinned"),
        ("governor", _governor(sysd) or "unknown"),
        ("OS", os_name),
        ("thermal state", _thermal(r)),
        ("scenario", sc.get("name")),
        ("inputs", inputs),
        ("timing includes", (r.timing or {}).get("e2e_includes")),
        ("power", power.get("label") or ("measured" if power.get("measured") else "not measured")),
    ]
    return [(k, "–" if v in (None, "") else str(v)) for k, v in rows]


# ---------------------------------------------------------------- small html helpers

def _e(x) -> str:
    return _html.escape("–" if x is None else str(x))


def _img(png: bytes, alt: str, caption: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return (f'<figure><img alt="{_e(alt)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{_e(caption)}</figcaption></figure>")


def _table(head: list, rows: list, num_from: int = 1, row_class=None) -> str:
    out = ["<table><thead><tr>", *(f"<th>{_e(h)}</th>" for h in head), "</tr></thead><tbody>"]
    for i, row in enumerate(rows):
        cls = f' class="{row_class(i, row)}"' if row_class and row_class(i, row) else ""
        cells = "".join(f'<td class="num">{_e(c)}</td>' if j >= num_from else f"<td>{_e(c)}</td>"
                        for j, c in enumerate(row))
        out.append(f"<tr{cls}>{cells}</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _vclass(v: str) -> str:
    return {"pass": "v-pass", "warn": "v-warn", "fail": "v-fail"}.get(v, "v-na")


def _verdicts_html(report) -> str:
    rows = []
    for v in report.verdicts:
        remedy = f"<br><span class=small>remedy: {_e(v.remedy)}</span>" if v.remedy and v.verdict in (
            "warn", "fail") else ""
        rows.append(f"<tr><td class={_vclass(v.verdict)}>{_e(v.verdict)}</td><td>{_e(v.title)}<br>"
                    f"<span class=small>{_e(v.rule)}</span></td><td>{_e(v.evidence)}{remedy}</td></tr>")
    counts = ", ".join(f"{n} {k}" for k, n in report.counts.items() if n)
    return (f"<p class=small>{_e(counts)} (see docs/check.md for each rule and its source)</p>"
            "<table><thead><tr><th>verdict</th><th>rule</th><th>evidence</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")


# ---------------------------------------------------------------- per kind

def _latency_table(lat: dict) -> str:
    rows = []
    for st in ("e2e", "prep", "set", "invoke", "get"):
        s = lat.get(st)
        if not s:
            continue
        rows.append([st, fmt.duration(s.get("median_s")), fmt.duration_range(s.get("ci_low_s"), s.get("ci_high_s")),
                     fmt.duration(s.get("p90_s")), fmt.duration(s.get("p99_s")), fmt.count(s.get("n")),
                     s.get("runs") or 1])
    return _table(["stage", "median", "95% CI", "p90", "p99", "n", "runs"], rows)


def _measured_e2e(samples):
    if samples is None or "e2e_s" not in samples:
        return None
    for phase in ("measure", "sustained"):
        sel = samples[samples["phase"] == phase]
        if len(sel):
            return sel["e2e_s"].to_numpy()
    return None


def _latency_section(d: RunData) -> str:
    r = d.result
    lat = r.latency or {}
    if not (lat.get("e2e") or {}).get("median_s"):
        return ""
    out = ["<h3>Latency</h3>", _latency_table(lat)]
    cs, wu = r.cold_start or {}, r.warmup or {}
    bits = []
    if cs:
        bits.append(f"cold start: model load {fmt.duration(cs.get('load_s'))}, first inference "
                    f"{fmt.duration(cs.get('first_inference_s'))}")
    if wu.get("n_warmup") is not None:
        bits.append(f"warm-up: {fmt.count(wu.get('n_warmup'))} inferences discarded ({wu.get('method')})")
    tp = r.throughput or {}
    if tp.get("per_s"):
        bits.append(f"throughput achieved {fmt.rate(tp['per_s'])}/s ({tp.get('definition')})")
    e2e = lat["e2e"]
    if e2e.get("ci_method"):
        bits.append(f"interval: {e2e['ci_method']}")
    out.append("<p class=small>" + "<br>".join(_e(b) for b in bits) + "</p>")
    x = _measured_e2e(d.samples)
    what = "sustained window" if kind_of(r).sustained else "all repeats after warm-up"
    name = f"{r.model.get('name')} on {r.board.get('name')}"
    if x is not None and len(x):
        out.append(_img(rp.latency_distribution(x, e2e, f"{name}: end-to-end latency ({what})", r.label),
                        "latency histogram and CDF",
                        "Histogram and cumulative distribution of end-to-end latency; shaded: the headline 95% "
                        "interval of the median; right: each repeat's median with its own interval (red) against "
                        "the headline interval."))
    if any(lat.get(s) for s in ("prep", "set", "invoke", "get")):
        out.append(_img(rp.stage_breakdown(lat, f"{name}: where end to end goes", r.label), "stage breakdown",
                        "Median of each stage: prep (input preparation), set (copy into the interpreter), invoke "
                        "(the kernels), get (output read). The model itself is invoke; the rest is harness."))
    return "".join(out)


def _soak_section(d: RunData) -> str:
    r = d.result
    s = (r.extra or {}).get("soak") or {}
    if not s:
        return ""
    rows = []
    for key in ("burst", "sustained"):
        w = s.get(key) or {}
        if w:
            rows.append([key, f"{w.get('t_from_s', 0):.0f}–{w.get('t_to_s', 0):.0f} s",
                         fmt.rate(w.get("throughput_per_s")),
                         fmt.duration(w.get("median_s")), fmt.duration_range(w.get("ci_low_s"), w.get("ci_high_s")),
                         fmt.duration(w.get("p99_s")), fmt.count(w.get("n"))])
    th = s.get("thermal") or {}
    out = ["<h3>Burst against sustained</h3>",
           _table(["window", "device time", "inferences/s", "median", "95% CI", "p99", "n"], rows),
           f"<p>{_e((s.get('verdict') or {}).get('reason'))}</p>",
           f"<p class=small>sustained/burst throughput {_e(_num(s.get('sustained_over_burst')))}; max "
           f"{_e(_num(th.get('max_temp_c'), '°C'))} at {_e(_num(th.get('max_temp_at_s'), 's'))}; steady "
           f"{_e(_num(th.get('steady_temp_c'), '°C'))}; first throttle at "
           f"{_e(_num(th.get('time_to_first_throttle_s'), 's'))}</p>"]
    if d.soak_series:
        out.append(_img(rp.soak_series(d.soak_series, f"{r.model.get('name')} on {r.board.get('name')}: soak",
                                       r.label), "soak time series",
                        "Temperature, CPU clock and latency (median and 10–90% of equal-time bins) against device "
                        "time; dashed lines: throttle onsets."))
    return "".join(out)


def _joules(j) -> str:
    if j is None:
        return "n/a"
    for scale, unit in ((1.0, "J"), (1e-3, "mJ"), (1e-6, "µJ")):
        if abs(j) >= scale or unit == "µJ":
            return f"{j / scale:.3g} {unit}"
    return f"{j} J"  # pragma: no cover


def _num(x, unit: str = "") -> str:
    if x is None:
        return "n/a"
    return f"{x:.3g}{(' ' + unit) if unit else ''}"


def _sweep_section(d: RunData) -> str:
    r = d.result
    pts = (r.extra or {}).get("points") or []
    rows = []
    for p in pts:
        lat = p.get("latency") or {}
        en = p.get("energy") or {}
        rows.append([p.get("id"), p.get("name"), fmt.rate(p.get("throughput_per_s")), fmt.duration(lat.get("median_s")),
                     _num(p.get("steady_temp_c"), "°C"), "yes" if p.get("throttled") else "no",
                     "yes" if p.get("steady") else "no",
                     f"{_joules(en.get('per_inference_j'))} ({en.get('label')})"
                     if en.get("per_inference_j") else "–"])
    out = ["<h3>Points</h3>", _table(["point", "configuration", "inferences/s", "median", "steady temp",
                                      "throttled", "steady", "energy/inference"], rows, num_from=2)]
    for caption, png in d.images.items():
        out.append(_img(png, caption, caption))
    return "".join(out)


def _accuracy_section(d: RunData) -> str:
    r = d.result
    a = (r.extra or {}).get("accuracy") or {}
    if not a:
        return ""
    acc, p, res = a.get("accuracy") or {}, a.get("paired") or {}, a.get("resolution") or {}
    rows = []
    for key in ("baseline", "candidate"):
        t1 = (acc.get(key) or {}).get("top1") or {}
        cal = (a.get("calibration") or {}).get(key) or {}
        ece = cal.get("ece_debiased", cal.get("ece"))
        ece_ci = (f"{_num(cal['ece_ci_low'])}–{_num(cal['ece_ci_high'])}"
                  if cal.get("ece_ci_low") is not None and cal.get("ece_ci_high") is not None else "")
        rows.append([key, fmt.percent(t1.get("accuracy"), 2),
                     f"{fmt.percent(t1.get('ci_low'))}–{fmt.percent(t1.get('ci_high'))}", fmt.count(t1.get("n")),
                     _num(ece), ece_ci])
    out = ["<h3>Accuracy</h3>", _table(["model", "top-1", "95% Wilson CI", "n", "ECE (bias-corrected)",
                                        "ECE 95% CI"], rows)]
    if p:
        out.append(f"<p>candidate − baseline: {_signed(p.get('diff_points'))} points (95% CI "
                   f"{_signed(p.get('diff_ci_low_points'))} to {_signed(p.get('diff_ci_high_points'))}), McNemar "
                   f"{_e(fmt.p_value(p.get('mcnemar_p')))}, agreement {_e(fmt.percent(p.get('agreement_rate')))}; "
                   f"smallest resolvable difference with this test set: {_e(_num(res.get('mdd_points')))} points</p>")
    rel = (a.get("relative") or {}).get("statements") or []
    if rel:
        out.append("<ul>" + "".join(f"<li>{_e(s)}</li>" for s in rel) + "</ul>")
    name = (r.model or {}).get("name")
    cal = a.get("calibration") or {}
    if cal.get("baseline") or cal.get("candidate"):
        out.append(_img(rp.reliability(cal, f"{name}: reliability diagram", r.label), "reliability diagram",
                        "Accuracy against confidence per confidence bin; on the diagonal a model is calibrated."))
    edge = a.get("edge_cases") or {}
    if edge.get("slices"):
        out.append(_img(rp.edge_slices(edge, f"{name}: edge cases", r.label), "edge-case slices",
                        f"Worst slice: {edge.get('worst')}. Holm-adjusted over "
                        f"{(edge.get('multiple_comparisons') or {}).get('m')} slices."))
    val = (a.get("validation") or {}).get("rows") or []
    if val:
        out.append(_table(["gate", "threshold", "rule", "acceptable", "note"],
                          [[v.get("metric"), v.get("threshold"), v.get("rule"), "yes" if v.get("acceptable") else "NO",
                            v.get("note")] for v in val], num_from=9))
    return "".join(out)


def _energy_section(d: RunData) -> str:
    r = d.result
    p = r.power or {}
    if not p:
        return ""
    idle, inf, ev, duty = (p.get(k) or {} for k in ("idle", "inference", "event", "duty_cycle"))

    def ci(block, lo, hi, f):
        return f"{f(block.get(lo))}–{f(block.get(hi))}" if block.get(lo) is not None else "–"
    def watts(w):
        return _num(w, "W")

    rows = [["idle power", watts(idle.get("power_w")), ci(idle, "ci_low_w", "ci_high_w", watts), idle.get("label")],
            ["energy per inference (idle share included)", _joules(inf.get("energy_j")),
             ci(inf, "ci_low_j", "ci_high_j", _joules), inf.get("label")],
            ["energy per event above idle", _joules(ev.get("energy_j")), ci(ev, "ci_low_j", "ci_high_j", _joules),
             ev.get("label")],
            [f"average power at {fmt.rate(duty.get('rate_hz'))}/s (duty {_num(duty.get('duty'))})",
             watts(duty.get("avg_power_w")), "–", duty.get("label")]]
    out = ["<h3>Energy</h3>", f"<p>{_e(p.get('label'))}; instrument {_e(p.get('instrument'))}; boundary "
                              f"{_e(p.get('boundary'))}; {_e(p.get('model'))}</p>",
           _table(["figure", "value", "95% CI", "label"], rows)]
    name = f"{(r.model or {}).get('name')} on {(r.board or {}).get('name')}"
    if d.power is not None and len(d.power):
        out.append(_img(rp.energy_trace(d.power, d.events, f"{name}: power trace", p.get("label") or r.label),
                        "energy trace", "Meter samples with the inference windows shaded; energy per event."))
    if d.battery:
        out.append(_img(rp.battery_curve(d.battery, f"{name}: battery life",
                                         d.battery.get("label") or p.get("label") or r.label),
                        "battery life against duty cycle",
                        f"Battery life on {d.battery.get('cell')} ({d.battery.get('assumptions', '')}) from this "
                        "run's idle power and energy per event."))
    return "".join(out)


def _warnings(r) -> str:
    """A run's warning codes, pointing at the summary where each is said once with its remedy."""
    if not r.warnings:
        return ""
    codes = ", ".join(dict.fromkeys(str(w.get("code")) for w in r.warnings))
    return f"<p class=small>warnings of this run (see the summary at the top): {_e(codes)}</p>"


def _runs_of(g) -> str:
    return f" <span class=small>({len(g.runs)} runs: {_e(', '.join(g.runs))})</span>" if len(g.runs) > 1 else (
        f" <span class=small>({_e(g.runs[0])})</span>" if g.runs else "")


def _gist(message: str, limit: int = 110) -> str:
    """A warning's message up to its first colon (its gist; the whole message is the item's title)."""
    head = message.split(": ", 1)[0]
    return head if len(head) <= limit else head[:limit].rsplit(" ", 1)[0] + " …"


def summary_html(s) -> str:
    """The one-screen summary (:mod:`edgebench.report.summary`): answers, the table, grouped warnings."""
    from edgebench.report.summary import COLUMNS, TERMINAL_ICONS

    # icons of the text font (headless browsers often lack an emoji font), coloured like the verdicts
    icons = {v: f"<span class={_vclass(v)}>{icon}</span>" for v, icon in TERMINAL_ICONS.items()}

    out = ["<div class=summary id=summary><h2>Summary</h2>"]
    out += [f"<p class=answer>{_e(a)}</p>" for a in s.answers]
    out.append("<table><thead><tr>" + "".join(f"<th>{_e(c)}</th>" for c in COLUMNS) + "</tr></thead><tbody>")
    for row in s.rows:
        out.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row.cells()[:-1])
                   + f"<td>{row.check(icons, escape=_e)}</td></tr>")
    out.append("</tbody></table>")
    if s.warnings:
        out.append("<ul class=warn>")
        tier = None
        for g in s.warnings:
            if g.tier != tier:
                tier = g.tier
                out.append(f"<li class=tier>{_e(tier)}</li>")
            out.append(f"<li title='{_e(g.message)}'><b>{_e(g.code)}</b>{_runs_of(g)}: {_e(_gist(g.message))}"
                       + (f" <i>— {_e(g.remedy)}</i>" if g.remedy else "") + "</li>")
        out.append("</ul>")
    if s.acknowledged_line:
        out.append(f"<p class=small>{_e(s.acknowledged_line)} (edgebench ack --list)</p>")
    out.append("<p class=small>the claims, conditions, check evidence and each run's figures follow.</p></div>")
    return "".join(out)


def _verify_section(d: RunData) -> str:
    v = (d.result.extra or {}).get("verify") or {}
    if not v:
        return ""
    rows = [[o.get("name"), f"{o.get('differing_bytes', 0):,} of {o.get('bytes', 0):,}",
             f"{o.get('differing_samples')} of {o.get('samples')}",
             f"{o['max_diff_lsb']} LSB" if o.get("max_diff_lsb") is not None else _num(o.get("max_abs_diff")),
             "–" if o.get("top1_agreement") is None else fmt.percent(o["top1_agreement"])]
            for o in v.get("outputs") or []]
    dev, ref, gate = v.get("device") or {}, v.get("reference") or {}, v.get("gate") or {}
    verdict = (("bit-exact" if gate.get("passed") else "NOT bit-exact") + f": {gate.get('rule')}" if gate.get("applies")
               else ("bit-exact" if v.get("bit_exact") else "differs from the reference")
               + f" (not gated: {gate.get('reason')})")
    return ("<h3>Outputs against the reference kernels</h3>"
            f"<p class=small>board: {_e(dev.get('kernels'))} kernels; reference: {_e(ref.get('kernels'))} kernels, "
            f"{_e(ref.get('where'))}</p>"
            + _table(["output", "differing bytes", "differing samples", "max diff", "top-1 agreement"], rows)
            + f"<p>{_e(verdict)}</p>")


def _selftest_section(d: RunData) -> str:
    st = (d.result.extra or {}).get("selftest") or {}
    if not st:
        return ""
    rows = [[c.get("status"), c.get("name"), c.get("summary")] for c in st.get("checks") or []]
    notes = "".join(f"<p class=small>note: {_e(n)}</p>" for n in st.get("notes") or [])
    return "<h3>Self-test checks</h3>" + _table(["status", "check", "what was seen"], rows) + notes


def _blocks_html(blocks: list) -> str:
    """Blocks of :func:`edgebench.report.layers.section_blocks` as HTML."""
    out = []
    for b in blocks:
        if b[0] == "h":
            out.append(f"<h3>{_e(b[1])}</h3>")
        elif b[0] == "p":
            out.append(f"<p>{_e(b[1])}</p>")
        elif b[0] == "table":
            out.append('<div class=wide>' + _table(b[1], b[2], num_from=2) + "</div>")
        elif b[0] == "img":
            out.append(_img(b[1], b[2], b[3]))
    return "".join(out)


def _layer_section(name: str):
    """The HTML section ``name`` of :data:`edgebench.report.layers.BLOCKS`."""
    return lambda d: _blocks_html(layers.BLOCKS[name](d.result, True))


#: The report sections of a run, by name; a run kind lists the ones it has (RunKind.sections), in order.
SECTIONS = {"latency": _latency_section, "soak": _soak_section, "points": _sweep_section,
            "accuracy": _accuracy_section, "energy": _energy_section, "verify": _verify_section,
            "selftest": _selftest_section, **{name: _layer_section(name) for name in layers.BLOCKS}}


def _run_section(d: RunData, index: int) -> str:
    r = d.result
    kind = kind_of(r)
    title = f"{index}. {kind.title}: {(r.model or {}).get('name')} on {(r.board or {}).get('name')}"
    body = "".join(SECTIONS[name](d) for name in kind.sections)
    return (f'<section id="run-{_e(r.run_id)}"><h2>{_e(title)} <span class="label {_e(r.label)}">{_e(r.label)}'
            f"</span></h2><p class=small>{_e(d.path)}</p>{body or '<p>no figures in this run</p>'}"
            f"{_warnings(r)}</section>")


# ---------------------------------------------------------------- several runs

def pareto_points(runs: list) -> list:
    """One point per model (sha256): latency from its latency runs, accuracy from accuracy runs
    (candidate and baseline), energy from energy runs."""
    pts: dict = {}

    lat_labels: dict = {}   # model -> the labels of its latency runs: one point per (model, latency label)
    for d in runs:
        r = d.result
        lat = ((r.latency or {}).get("e2e") or {}).get("median_s")
        if kind_of(r).latency and lat:
            m = r.model or {}
            lat_labels.setdefault(m.get("sha256") or m.get("name"), set()).add(r.label)

    def points(m: dict, latency_label: Optional[str] = None) -> list:
        key = m.get("sha256") or m.get("name")
        labs = [latency_label] if latency_label else sorted(lat_labels.get(key) or {"measured"})
        return [pts.setdefault((key, lab), {"name": f"{m.get('name')} {m.get('precision') or ''}".strip(),
                                            "labels": set(), "latency_label": lab}) for lab in labs]

    def point(m: dict, latency_label: Optional[str] = None) -> dict:
        return points(m, latency_label)[0]

    for d in runs:
        r = d.result
        kind = kind_of(r)
        m = r.model or {}
        e2e = (r.latency or {}).get("e2e") or {}
        if kind.latency and e2e.get("median_s"):
            p = point(m, r.label)
            if "latency_s" not in p or kind.repeats:    # independent repeats make the better latency figure
                p.update(latency_s=e2e["median_s"], latency_ci=(e2e.get("ci_low_s"), e2e.get("ci_high_s")))
                p["labels"].add(r.label)
        if kind.energy:
            ev = (r.power or {}).get("inference") or {}
            if ev.get("energy_j"):
                p = point(m, r.label)
                p["energy_j"] = ev["energy_j"]
                p["labels"].add(((r.power or {}).get("label") or r.label).split(" ")[0])
        a = (r.extra or {}).get("accuracy") or {}
        if kind.accuracy and a:
            for key, mm in (("candidate", m), ("baseline", ((a.get("baseline") or {}).get("model") or {}))):
                t1 = ((a.get("accuracy") or {}).get(key) or {}).get("top1") or {}
                if t1.get("accuracy") is not None and mm:
                    for p in points(mm):
                        p.update(accuracy=t1["accuracy"], accuracy_ci=(t1.get("ci_low"), t1.get("ci_high")))
                        p["labels"].add(r.label)
    out = []
    for p in pts.values():
        labels = p.pop("labels")
        p["label"] = "/".join(sorted(labels)) or "measured"
        out.append(p)
    return out


def _summary_table(runs: list) -> str:
    rows = []
    for d in runs:
        r = d.result
        e2e = (r.latency or {}).get("e2e") or {}
        rows.append([f"{r.run_id}", r.kind, r.label, (r.model or {}).get("name"), (r.model or {}).get("precision"),
                     (r.board or {}).get("name"), fmt.duration(e2e.get("median_s")),
                     fmt.duration_range(e2e.get("ci_low_s"), e2e.get("ci_high_s"))])
    return _table(["run", "kind", "label", "model", "precision", "board", "median e2e", "95% CI"], rows, num_from=6)


def _conditions_table(runs: list) -> str:
    cols = [conditions(d.result) for d in runs]
    names = [k for k, _ in cols[0]]
    rows = [[name] + [c[i][1] for c in cols] for i, name in enumerate(names)]

    def differs(i, row):
        return "differs" if len(runs) > 1 and names[i] not in ("run", "created (UTC)") and len(set(row[1:])) > 1 else ""
    head = ["condition"] + [f"{d.result.run_id}" for d in runs]
    note = "<p class=small>highlighted: conditions that differ between the runs</p>" if len(runs) > 1 else ""
    return '<div class=wide>' + _table(head, rows, num_from=99, row_class=differs) + "</div>" + note


#: the columns of a comparison's row (HTML and Markdown): one ratio per stage from
#: :func:`edgebench.bench.compare.compare`, its interval, the simultaneous one of Holm's step
#: (the adjustment the verdict uses), the sessions of each side and the smallest ratio detected
COMPARISON_HEAD = ["stage", "speed-up (A/B medians)", "95% CI", "simultaneous CI (Holm)", "Holm p", "verdict",
                   "sessions A/B", "detects (80% power)"]


def comparison_row(stage: str, s: dict, tests: int) -> list:
    """One stage of a :class:`edgebench.bench.compare.Comparison` as a row of :data:`COMPARISON_HEAD`."""
    adj = (f"{s['ci_adjusted_low']:.3f}–{s['ci_adjusted_high']:.3f} ({100 * s['ci_adjusted_level']:.1f}%)"
           if tests > 1 and "ci_adjusted_low" in s else "same (one stage)")
    sessions = f"{s['sessions_a']}/{s['sessions_b']}" if s.get("sessions_a") else "interleaved"
    mde = f">= {s['mde']['percent']:.1f}%" if s.get("mde") else "n/a"
    return [stage, f"{s['ratio']:.3f}", f"{s['ci_low']:.3f}–{s['ci_high']:.3f}", adj, fmt.p_value(s["p_holm"]),
            s["verdict"], sessions, mde]


def _comparisons_html(comparisons: list) -> str:
    if not comparisons:
        return ""
    out = ["<h2>Comparisons</h2>"]
    for c in comparisons:
        out.append(f"<p>{_e(c.sentence())}</p><p class=small>{_e(c.case_sentence())}</p>")
        rows = [comparison_row(st, s, len(c.stages)) for st, s in c.stages.items()]
        out.append(_table(COMPARISON_HEAD, rows))
        if c.mde:
            out.append(f"<p class=small>{_e(c.mde_advice())}</p>")
        if c.conditions_differ:
            out.append("<p class=small>conditions differ: " + _e("; ".join(c.conditions_differ)) + "</p>")
    return "".join(out)


def _summary(runs: list, report, comparisons, acks: Optional[dict]):
    from edgebench.report.summary import summarise

    return summarise([d.result for d in runs], report, acks,
                     tuple(c.sentence() + (f"; {c.mde_advice()}" if c.mde else "") for c in comparisons))


def render_html(runs: list, report, comparisons: list = (), title: Optional[str] = None,
                generated_utc: Optional[str] = None, version: str = "", acks: Optional[dict] = None,
                histories: list = ()) -> str:
    """The whole report as one HTML document (str). ``report``: the CheckReport of ``runs``; ``acks``: the
    warnings acknowledged for their runs folder (code -> reason), folded in the summary; ``histories``: the
    series of the runs on record (``edgebench history``'s ``to_dict()`` with a ``title``), drawn as trends."""
    when = generated_utc or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    title = title or ("edgebench report: " + ", ".join(sorted({f"{(d.result.model or {}).get('name')}"
                                                                for d in runs})))
    claims = "".join(
        f'<div class="claim lab-{_e(d.result.label)}"><b>{_e(d.result.run_id)}</b> '
        f"({_e(kind_of(d.result).title)}): "
        f"{_e((d.result.extra or {}).get('claim') or 'no claim stored')}</div>"
        for d in runs)
    labels = {d.result.label for d in runs}
    mixed = (f"<p class=v-fail>These runs mix {_e(', '.join(sorted(labels)))} figures: never compare them with "
             "each other.</p>") if len(labels) > 1 else ""
    parts = [f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{_e(title)}</title>"
             f"<meta name=viewport content='width=device-width, initial-scale=1'><style>{_CSS}</style></head><body>",
             f"<h1>{_e(title)}</h1><p class=small>generated {_e(when)} by edgebench {_e(version)} from "
             f"{len(runs)} run{'s' if len(runs) != 1 else ''}</p>", mixed,
             summary_html(_summary(runs, report, list(comparisons), acks)),
             "<h2>Claim</h2>", claims, "<h2>Conditions</h2>", _conditions_table(runs),
             "<h2>Check</h2>", _verdicts_html(report)]
    if len(runs) > 1:
        parts += ["<h2>Runs</h2>", _summary_table(runs)]
        pts = pareto_points(runs)
        usable = [p for p in pts if p.get("latency_s") and (p.get("accuracy") is not None or p.get("energy_j"))]
        # one axis never holds latencies of different labels (an emulated figure beside a measured one)
        for lab in sorted({p["latency_label"] for p in usable}):
            group = [p for p in usable if p["latency_label"] == lab]
            if len(group) < 2:
                continue
            kinds = "accuracy" if any(p.get("accuracy") is not None for p in group) else "energy"
            parts += [f"<h2>Pareto view ({_e(lab)} latency)</h2>",
                      _img(rp.pareto(group, f"{kinds} against {lab} latency, one point per model"), "Pareto view",
                           f"Latency ({lab}: median, 95% CI) against {kinds}; labels in brackets; the dashed line "
                           "joins the models no other model beats on both. Latencies of other labels are plotted "
                           "apart, never on this axis.")]
    parts.append(_comparisons_html(list(comparisons)))
    for h in histories:
        parts += [f"<h2>History: {_e(h['title'])}</h2>",
                  _img(rp.trend(h), "trend", f"{_e(h['metric'])} of every run of this series on record (95% CI); "
                       "green: the level between change points; dashed: a change point (red: a regression), its "
                       "size the ratio of the levels; ringed: the model's file or the conditions changed.")]
    parts += [_run_section(d, i) for i, d in enumerate(runs, 1)]
    parts.append("<p class=small>edgebench report: every figure above carries its label (measured, emulated, "
                 "simulated, estimated) and the conditions above.</p></body></html>")
    return "\n".join(p for p in parts if p)


# ---------------------------------------------------------------- markdown
# Every value from a run (run.json is data from anywhere: a shared runs folder, a CI cache) is
# escaped for GitHub-flavoured Markdown: no raw HTML (<!--, <img onerror=...>), no emphasis,
# links or images, and no autolinks (www., scheme:, e-mail addresses). Checked against GitHub's
# own parser (cmark-gfm) in tests/test_report_markdown.py.

_MD_PUNCT = frozenset("!\"#$%'()*+,-./:;=?[\\]^_`{|}~")
_MD_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


class _Md(str):
    """Markdown this module wrote itself: :func:`_md_cell` does not escape it again."""


def md_escape(x) -> str:
    """``x`` as literal text in GitHub-flavoured Markdown (one line): HTML's ``& < >`` as entities,
    every other ASCII punctuation backslash-escaped (which also keeps ``www.``/``scheme:`` from
    being autolinked), a zero-width space before ``@`` (e-mail autolinks ignore escapes)."""
    text = "–" if x is None else " ".join(str(x).split())
    return "".join(_MD_HTML.get(ch) or ("\u200b@" if ch == "@" else "\\" + ch if ch in _MD_PUNCT else ch)
                   for ch in text)


def _md_code(x) -> _Md:
    """``x`` as an inline code span (nothing inside is interpreted), fenced past its backticks."""
    text = " ".join(str(x).split()).replace("|", "\\|")
    fence = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return _Md(f"{fence}{pad}{text}{pad}{fence}")


def _md_cell(x) -> str:
    return x if isinstance(x, _Md) else md_escape(x)


def _md_table(head: list, rows: list) -> str:
    lines = ["| " + " | ".join(_md_cell(h) for h in head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


_MD_MARK = {"pass": "✅ pass", "warn": "⚠️ warn", "fail": "❌ fail", "not applicable": "– n/a"}


def render_markdown(runs: list, report, comparisons: list = (), title: Optional[str] = None,
                    acks: Optional[dict] = None) -> str:
    """The report as Markdown for a pull-request comment: the summary, claims, conditions, verdicts, key
    figures (figures as tables; the HTML report has the plots). Every run value is escaped (:func:`md_escape`)."""
    from edgebench.report.summary import COLUMNS

    e = md_escape
    title = title or "edgebench report"
    out = [f"## {e(title)}", ""]
    labels = {d.result.label for d in runs}
    if len(labels) > 1:
        out += [f"**These runs mix {e(', '.join(sorted(map(str, labels))))} figures: never compare them with each "
                "other.**", ""]
    s = _summary(runs, report, list(comparisons), acks)
    out += [f"**{e(a)}**" for a in s.answers] + ([""] if s.answers else [])
    out += [_md_table(list(COLUMNS), [row.cells() for row in s.rows]), ""]
    for g in s.warnings:
        runs_of = f" ({len(g.runs)} runs)" if len(g.runs) > 1 else ""
        out.append(f"- ⚠️ {_md_code(g.code)}{runs_of}: {e(g.message)} — {e(g.remedy)}")
    if s.acknowledged_line:
        out.append(f"- {e(s.acknowledged_line)}")
    out.append("")
    for d in runs:
        out += [f"> **{e(d.result.run_id)}** ({e(d.result.kind)}, {e(d.result.label)}): "
                f"{e((d.result.extra or {}).get('claim') or 'no claim stored')}", ""]
    cols = [conditions(d.result) for d in runs]
    out += ["### Conditions", "", _md_table(["condition"] + [d.result.run_id for d in runs],
                                            [[k] + [c[i][1] for c in cols] for i, (k, _) in enumerate(cols[0])]), ""]
    out += ["### Check", "", _md_table(["verdict", "rule", "evidence"],
                                       [[_Md(_MD_MARK[v.verdict]) if v.verdict in _MD_MARK else v.verdict,
                                         _Md(f"{e(v.title)} ({_md_code(v.rule)})"),
                                         v.evidence + (f" — remedy: {v.remedy}" if v.remedy and v.verdict in
                                                       ("warn", "fail") else "")]
                                        for v in report.verdicts]), ""]
    lat_rows = []
    for d in runs:
        lat = d.result.latency or {}
        e2e = lat.get("e2e") or {}
        inv = lat.get("invoke") or {}
        if e2e.get("median_s"):
            lat_rows.append([d.result.run_id, d.result.model.get("name"), d.result.label, fmt.duration(e2e["median_s"]),
                             fmt.duration_range(e2e.get("ci_low_s"), e2e.get("ci_high_s")), e2e.get("runs") or 1,
                             fmt.duration(e2e.get("p99_s")), fmt.duration(inv.get("median_s"))])
    if lat_rows:
        out += ["### Latency", "", _md_table(["run", "model", "label", "median e2e", "95% CI", "runs", "p99",
                                              "invoke median"], lat_rows), ""]
    for d in runs:
        for b in layers.section_blocks(d.result, images=False):
            if b[0] == "h":
                out += [f"### {b[1]}: {d.result.run_id}", ""]
            elif b[0] == "p":
                out += [b[1], ""]
            elif b[0] == "table":
                out += [_md_table(b[1], b[2]), ""]
    for c in comparisons:
        out += ["### Comparison", "", e(c.sentence()), "", e(c.case_sentence()), "",
                _md_table(COMPARISON_HEAD, [comparison_row(st, x, len(c.stages)) for st, x in c.stages.items()]), ""]
        if c.mde:
            out += [e(c.mde_advice()), ""]
        if c.conditions_differ:
            out += ["Conditions differ: " + "; ".join(e(x) for x in c.conditions_differ), ""]
    out += ["_Figures: `edgebench report` " + " ".join(e(d.result.run_id) for d in runs)
            + " writes the HTML report._"]
    return "\n".join(out) + "\n"


def write_text(path, text: str) -> Path:
    """Write ``text`` to ``path`` (UTF-8) atomically, creating the parent folder; the only write of
    this module. A folder, FIFO or device as ``path`` is refused (:func:`edgebench.results.files.write_output`)."""
    from edgebench.results.files import write_output

    write_output(path, lambda f: f.write(text.encode("utf-8")), "report")
    return Path(path)


__all__ = ["RunData", "SECTIONS", "conditions", "pareto_points", "render_html", "render_markdown", "write_text"]


def _signed(x) -> str:
    """A signed figure with two decimals, or a dash where the run holds none (null, not a number)."""
    return f"{x:+.2f}" if isinstance(x, (int, float)) and not isinstance(x, bool) else "–"
