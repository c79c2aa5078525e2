"""`edgebench report`: one self-contained HTML file (level 1).

Pure functions: :func:`render_html` takes the runs (as :class:`RunData`: the stored result and the
frames read from its folder), the ``check`` verdicts and any comparisons, and returns text;
:func:`write_text` writes it where it is told. The page needs no network, no JavaScript and no
external CSS or fonts: figures are PNG bytes from :mod:`edgebench.report.report_plots`, inlined as
base64 ``data:`` URIs. The Markdown form is :mod:`edgebench.report.markdown`
(:func:`render_markdown`, kept importable from here).

Every page starts with the summary, the claim of each run, the conditions table (one column per
run, differing rows marked) and the check verdicts; then one section per run with the figures its
kind has (:data:`SECTIONS`, each in :mod:`edgebench.report.sections`: latency distribution and stage
breakdown; soak time series; sweep plots; reliability diagram and edge-case slices; energy trace and
battery life against duty cycle; layer profile; per-layer error; verify; self-test); several runs add
a Pareto view.
"""
from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Sequence

from edgebench.report import format as fmt
from edgebench.report import layers
from edgebench.report import report_plots as rp
from edgebench.report.comparisons import COMPARISON_HEAD, answers, comparison_row, comparisons_html
from edgebench.report.conditions import conditions, conditions_table
from edgebench.report.markdown import md_escape, render_markdown
from edgebench.report.pareto import pareto_points
from edgebench.report.sections import accuracy, energy, latency, points, selftest, soak, verify
from edgebench.report.sections.base import RunData, e, img, table, vclass
from edgebench.report.sections.blocks import blocks_html
from edgebench.report.summary import COLUMNS, TERMINAL_ICONS, Summary, summarise
from edgebench.results.files import write_output
from edgebench.results.kinds import kind_of
from edgebench.results.model import RunResult

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


def _verdicts_html(report: Any) -> str:
    rows = []
    for v in report.verdicts:
        remedy = f"<br><span class=small>remedy: {e(v.remedy)}</span>" if v.remedy and v.verdict in (
            "warn", "fail") else ""
        rows.append(f"<tr><td class={vclass(v.verdict)}>{e(v.verdict)}</td><td>{e(v.title)}<br>"
                    f"<span class=small>{e(v.rule)}</span></td><td>{e(v.evidence)}{remedy}</td></tr>")
    counts = ", ".join(f"{n} {k}" for k, n in report.counts.items() if n)
    return (f"<p class=small>{e(counts)} (see docs/check.md for each rule and its source)</p>"
            "<table><thead><tr><th>verdict</th><th>rule</th><th>evidence</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")


def _warnings(r: RunResult) -> str:
    """A run's warning codes, pointing at the summary where each is said once with its remedy."""
    if not r.warnings:
        return ""
    codes = ", ".join(dict.fromkeys(str(w.code) for w in r.warnings))
    return f"<p class=small>warnings of this run (see the summary at the top): {e(codes)}</p>"


def _runs_of(g: Any) -> str:
    return f" <span class=small>({len(g.runs)} runs: {e(', '.join(g.runs))})</span>" if len(g.runs) > 1 else (
        f" <span class=small>({e(g.runs[0])})</span>" if g.runs else "")


def _gist(message: str, limit: int = 110) -> str:
    """A warning's message up to its first colon (its gist; the whole message is the item's title)."""
    head = message.split(": ", 1)[0]
    return head if len(head) <= limit else head[:limit].rsplit(" ", 1)[0] + " …"


def summary_html(s: Summary) -> str:
    """The one-screen summary (:mod:`edgebench.report.summary`): answers, the table, grouped warnings."""
    # icons of the text font (headless browsers often lack an emoji font), coloured like the verdicts
    icons = {v: f"<span class={vclass(v)}>{icon}</span>" for v, icon in TERMINAL_ICONS.items()}

    out = ["<div class=summary id=summary><h2>Summary</h2>"]
    out += [f"<p class=answer>{e(a)}</p>" for a in s.answers]
    out.append("<table><thead><tr>" + "".join(f"<th>{e(c)}</th>" for c in COLUMNS) + "</tr></thead><tbody>")
    for row in s.rows:
        out.append("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row.cells()[:-1])
                   + f"<td>{row.check(icons, escape=e)}</td></tr>")
    out.append("</tbody></table>")
    if s.warnings:
        out.append("<ul class=warn>")
        tier = None
        for g in s.warnings:
            if g.tier != tier:
                tier = g.tier
                out.append(f"<li class=tier>{e(tier)}</li>")
            out.append(f"<li title='{e(g.message)}'><b>{e(g.code)}</b>{_runs_of(g)}: {e(_gist(g.message))}"
                       + (f" <i>— {e(g.remedy)}</i>" if g.remedy else "") + "</li>")
        out.append("</ul>")
    if s.acknowledged_line:
        out.append(f"<p class=small>{e(s.acknowledged_line)} (edgebench ack --list)</p>")
    out.append("<p class=small>the claims, conditions, check evidence and each run's figures follow.</p></div>")
    return "".join(out)


def _block_section(name: str) -> Callable[[RunData], str]:
    """The HTML section ``name`` of :data:`edgebench.report.layers.BLOCKS`."""
    return lambda d: blocks_html(layers.BLOCKS[name](d.result, True))


#: The report sections of a run, by name; a run kind lists the ones it has (RunKind.sections), in order.
SECTIONS: Dict[str, Callable[[RunData], str]] = {
    "latency": latency.html, "soak": soak.html, "points": points.html, "accuracy": accuracy.html,
    "energy": energy.html, "verify": verify.html, "selftest": selftest.html,
    **{name: _block_section(name) for name in layers.BLOCKS}}


def _run_section(d: RunData, index: int) -> str:
    r = d.result
    kind = kind_of(r)
    title = f"{index}. {kind.title}: {r.model.name} on {r.board.name}"
    body = "".join(SECTIONS[name](d) for name in kind.sections)
    return (f'<section id="run-{e(r.run_id)}"><h2>{e(title)} <span class="label {e(r.label)}">{e(r.label)}'
            f"</span></h2><p class=small>{e(d.path)}</p>{body or '<p>no figures in this run</p>'}"
            f"{_warnings(r)}</section>")


def _summary_table(runs: Sequence[RunData]) -> str:
    rows = []
    for d in runs:
        r = d.result
        e2e = r.stage("e2e")
        rows.append([f"{r.run_id}", r.kind, r.label, r.model.name, r.model.precision, r.board.name,
                     fmt.duration(e2e.median_s), fmt.duration_range(e2e.ci_low_s, e2e.ci_high_s)])
    return table(["run", "kind", "label", "model", "precision", "board", "median e2e", "95% CI"], rows, num_from=6)


def _pareto_html(runs: Sequence[RunData]) -> list:
    usable = [p for p in pareto_points(runs)
              if p.get("latency_s") and (p.get("accuracy") is not None or p.get("energy_j"))]
    parts = []
    # one axis never holds latencies of different labels (an emulated figure beside a measured one)
    for lab in sorted({p["latency_label"] for p in usable}):
        group = [p for p in usable if p["latency_label"] == lab]
        if len(group) < 2:
            continue
        kinds = "accuracy" if any(p.get("accuracy") is not None for p in group) else "energy"
        parts += [f"<h2>Pareto view ({e(lab)} latency)</h2>",
                  img(rp.pareto(group, f"{kinds} against {lab} latency, one point per model"), "Pareto view",
                      f"Latency ({lab}: median, 95% CI) against {kinds}; labels in brackets; the dashed line "
                      "joins the models no other model beats on both. Latencies of other labels are plotted "
                      "apart, never on this axis.")]
    return parts


def render_html(runs: Sequence[RunData], report: Any, comparisons: Sequence[Any] = (), title: Optional[str] = None,
                generated_utc: Optional[str] = None, version: str = "", acks: Optional[dict] = None,
                histories: Sequence[dict] = ()) -> str:
    """The whole report as one HTML document (str). ``report``: the CheckReport of ``runs``; ``acks``: the
    warnings acknowledged for their runs folder (code -> reason), folded in the summary; ``histories``: the
    series of the runs on record (``edgebench history``'s ``to_dict()`` with a ``title``), drawn as trends."""
    when = generated_utc or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    title = title or ("edgebench report: " + ", ".join(sorted({f"{d.result.model.name}" for d in runs})))
    claims = "".join(
        f'<div class="claim lab-{e(d.result.label)}"><b>{e(d.result.run_id)}</b> '
        f"({e(kind_of(d.result).title)}): {e(d.result.extra.claim or 'no claim stored')}</div>"
        for d in runs)
    labels = {d.result.label for d in runs}
    mixed = (f"<p class=v-fail>These runs mix {e(', '.join(sorted(labels)))} figures: never compare them with "
             "each other.</p>") if len(labels) > 1 else ""
    summary = summarise([d.result for d in runs], report, acks, answers(comparisons))
    parts = [f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{e(title)}</title>"
             f"<meta name=viewport content='width=device-width, initial-scale=1'><style>{_CSS}</style></head><body>",
             f"<h1>{e(title)}</h1><p class=small>generated {e(when)} by edgebench {e(version)} from "
             f"{len(runs)} run{'s' if len(runs) != 1 else ''}</p>", mixed, summary_html(summary),
             "<h2>Claim</h2>", claims, "<h2>Conditions</h2>", conditions_table(runs),
             "<h2>Check</h2>", _verdicts_html(report)]
    if len(runs) > 1:
        parts += ["<h2>Runs</h2>", _summary_table(runs), *_pareto_html(runs)]
    parts.append(comparisons_html(comparisons))
    for h in histories:
        parts += [f"<h2>History: {e(h['title'])}</h2>",
                  img(rp.trend(h), "trend", f"{e(h['metric'])} of every run of this series on record (95% CI); "
                      "green: the level between change points; dashed: a change point (red: a regression), its "
                      "size the ratio of the levels; ringed: the model's file or the conditions changed.")]
    parts += [_run_section(d, i) for i, d in enumerate(runs, 1)]
    parts.append("<p class=small>edgebench report: every figure above carries its label (measured, emulated, "
                 "simulated, estimated) and the conditions above.</p></body></html>")
    return "\n".join(p for p in parts if p)


def write_text(path: Any, text: str) -> Path:
    """Write ``text`` to ``path`` (UTF-8) atomically, creating the parent folder; the only write of
    this module. A folder, FIFO or device as ``path`` is refused (:func:`edgebench.results.files.write_output`)."""
    write_output(path, lambda f: f.write(text.encode("utf-8")), "report")
    return Path(path)


__all__ = ["COMPARISON_HEAD", "RunData", "SECTIONS", "comparison_row", "conditions", "md_escape", "pareto_points",
           "render_html", "render_markdown", "summary_html", "write_text"]
