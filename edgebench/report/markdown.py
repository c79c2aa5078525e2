"""`edgebench report --md`: the report as Markdown for a pull-request comment (level 1, pure).

The summary, claims, conditions, verdicts and key figures as tables (the HTML report,
:mod:`edgebench.report.html`, has the plots). Every value from a run (run.json is data from
anywhere: a shared runs folder, a CI cache) is escaped for GitHub-flavoured Markdown: no raw HTML
(<!--, <img onerror=...>), no emphasis, links or images, and no autolinks (www., scheme:, e-mail
addresses). Checked against GitHub's own parser (cmark-gfm) in tests/test_report_markdown.py.
"""
from __future__ import annotations

import re
from typing import Any, List, Optional, Sequence

from edgebench.report import format as fmt
from edgebench.report import layers
from edgebench.report.comparisons import COMPARISON_HEAD, answers, comparison_row
from edgebench.report.conditions import conditions
from edgebench.report.sections.base import RunData
from edgebench.report.sections.blocks import Blocks
from edgebench.report.summary import COLUMNS, summarise

_MD_PUNCT = frozenset("!\"#$%'()*+,-./:;=?[\\]^_`{|}~")
_MD_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_MD_MARK = {"pass": "✅ pass", "warn": "⚠️ warn", "fail": "❌ fail", "not applicable": "– n/a"}


class Md(str):
    """Markdown this module wrote itself: a table cell does not escape it again."""


def md_escape(x: Any) -> str:
    """``x`` as literal text in GitHub-flavoured Markdown (one line): HTML's ``& < >`` as entities,
    every other ASCII punctuation backslash-escaped (which also keeps ``www.``/``scheme:`` from
    being autolinked), a zero-width space before ``@`` (e-mail autolinks ignore escapes)."""
    text = "–" if x is None else " ".join(str(x).split())
    return "".join(_MD_HTML.get(ch) or ("\u200b@" if ch == "@" else "\\" + ch if ch in _MD_PUNCT else ch)
                   for ch in text)


def md_code(x: Any) -> Md:
    """``x`` as an inline code span (nothing inside is interpreted), fenced past its backticks."""
    text = " ".join(str(x).split()).replace("|", "\\|")
    fence = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return Md(f"{fence}{pad}{text}{pad}{fence}")


def _cell(x: Any) -> str:
    return x if isinstance(x, Md) else md_escape(x)


def md_table(head: Sequence[Any], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(_cell(h) for h in head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def blocks_md(blocks: Blocks, run_id: str) -> List[str]:
    """Blocks (:mod:`edgebench.report.sections.blocks`) as Markdown lines, without the images."""
    out: List[str] = []
    for b in blocks:
        if b[0] == "h":
            out += [f"### {b[1]}: {md_escape(run_id)}", ""]      # a heading is edgebench's own text
        elif b[0] == "p":
            out += [md_escape(b[1]), ""]                          # a paragraph holds the run's values
        elif b[0] == "table":
            out += [md_table(b[1], b[2]), ""]
    return out


def _latency_rows(runs: Sequence[RunData]) -> List[List[Any]]:
    rows = []
    for d in runs:
        r = d.result
        e2e, inv = r.stage("e2e"), r.stage("invoke")
        if e2e.median_s:
            rows.append([r.run_id, r.model.name, r.label, fmt.duration(e2e.median_s),
                         fmt.duration_range(e2e.ci_low_s, e2e.ci_high_s), e2e.runs or 1,
                         fmt.duration(e2e.p99_s), fmt.duration(inv.median_s)])
    return rows


def render_markdown(runs: Sequence[RunData], report: Any, comparisons: Sequence[Any] = (),
                    title: Optional[str] = None, acks: Optional[dict] = None) -> str:
    """The report as Markdown for a pull-request comment: the summary, claims, conditions, verdicts, key
    figures (figures as tables; the HTML report has the plots). Every run value is escaped (:func:`md_escape`)."""
    e = md_escape
    title = title or "edgebench report"
    out = [f"## {e(title)}", ""]
    labels = {d.result.label for d in runs}
    if len(labels) > 1:
        out += [f"**These runs mix {e(', '.join(sorted(map(str, labels))))} figures: never compare them with each "
                "other.**", ""]
    s = summarise([d.result for d in runs], report, acks, answers(comparisons))
    out += [f"**{e(a)}**" for a in s.answers] + ([""] if s.answers else [])
    out += [md_table(list(COLUMNS), [row.cells() for row in s.rows]), ""]
    for g in s.warnings:
        runs_of = f" ({len(g.runs)} runs)" if len(g.runs) > 1 else ""
        out.append(f"- ⚠️ {md_code(g.code)}{runs_of}: {e(g.message)} — {e(g.remedy)}")
    if s.acknowledged_line:
        out.append(f"- {e(s.acknowledged_line)}")
    out.append("")
    for d in runs:
        out += [f"> **{e(d.result.run_id)}** ({e(d.result.kind)}, {e(d.result.label)}): "
                f"{e(d.result.extra.claim or 'no claim stored')}", ""]
    cols = [conditions(d.result) for d in runs]
    out += ["### Conditions", "", md_table(["condition"] + [d.result.run_id for d in runs],
                                           [[k] + [c[i][1] for c in cols] for i, (k, _) in enumerate(cols[0])]), ""]
    out += ["### Check", "", md_table(["verdict", "rule", "evidence"],
                                      [[Md(_MD_MARK[v.verdict]) if v.verdict in _MD_MARK else v.verdict,
                                        Md(f"{e(v.title)} ({md_code(v.rule)})"),
                                        v.evidence + (f" — remedy: {v.remedy}" if v.remedy and v.verdict in
                                                      ("warn", "fail") else "")]
                                       for v in report.verdicts]), ""]
    lat_rows = _latency_rows(runs)
    if lat_rows:
        out += ["### Latency", "", md_table(["run", "model", "label", "median e2e", "95% CI", "runs", "p99",
                                             "invoke median"], lat_rows), ""]
    for d in runs:
        out += blocks_md(layers.section_blocks(d.result, images=False), d.result.run_id)
    for c in comparisons:
        out += ["### Comparison", "", e(c.sentence()), "", e(c.case_sentence()), "",
                md_table(COMPARISON_HEAD, [comparison_row(st, x, len(c.stages)) for st, x in c.stages.items()]), ""]
        if c.mde:
            out += [e(c.mde_advice()), ""]
        if c.conditions_differ:
            out += ["Conditions differ: " + "; ".join(e(x) for x in c.conditions_differ), ""]
    out += ["_Figures: `edgebench report` " + " ".join(e(d.result.run_id) for d in runs)
            + " writes the HTML report._"]
    return "\n".join(out) + "\n"


__all__ = ["Md", "blocks_md", "md_code", "md_escape", "md_table", "render_markdown"]
