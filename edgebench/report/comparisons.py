"""Comparisons in a report (level 1, pure): each stage's ratio of medians with its intervals, as rows
the HTML page and Markdown share (:data:`COMPARISON_HEAD`)."""
from __future__ import annotations

from typing import Any, Dict, List, Sequence

from edgebench.report import format as fmt
from edgebench.report.sections.base import e, table

#: the columns of a comparison's row (HTML and Markdown): one ratio per stage from
#: :func:`edgebench.bench.compare.compare`, its interval, the simultaneous one of Holm's step
#: (the adjustment the verdict uses), the sessions of each side and the smallest ratio detected
COMPARISON_HEAD = ["stage", "speed-up (A/B medians)", "95% CI", "simultaneous CI (Holm)", "Holm p", "verdict",
                   "sessions A/B", "detects (80% power)"]


def comparison_row(stage: str, s: Dict[str, Any], tests: int) -> List[Any]:
    """One stage of a :class:`edgebench.bench.compare.Comparison` as a row of :data:`COMPARISON_HEAD`."""
    adj = (f"{s['ci_adjusted_low']:.3f}–{s['ci_adjusted_high']:.3f} ({100 * s['ci_adjusted_level']:.1f}%)"
           if tests > 1 and "ci_adjusted_low" in s else "same (one stage)")
    sessions = f"{s['sessions_a']}/{s['sessions_b']}" if s.get("sessions_a") else "interleaved"
    m = s.get("mde") or {}
    mde = ("n/a" if not m else f"none up to +{100 * (m['limit_ratio'] - 1):.0f}%" if m.get("beyond_limit")
           else f">= {m['percent']:.1f}%")
    return [stage, f"{s['ratio']:.3f}", f"{s['ci_low']:.3f}–{s['ci_high']:.3f}", adj, fmt.p_value(s["p_holm"]),
            s["verdict"], sessions, mde]


def answers(comparisons: Sequence[Any]) -> tuple:
    """Each comparison's answer in one line (the summary's, above its table)."""
    return tuple(c.sentence() + (f"; {c.mde_advice()}" if c.mde else "") for c in comparisons)


def comparisons_html(comparisons: Sequence[Any]) -> str:
    if not comparisons:
        return ""
    out = ["<h2>Comparisons</h2>"]
    for c in comparisons:
        out.append(f"<p>{e(c.sentence())}</p><p class=small>{e(c.case_sentence())}</p>")
        rows = [comparison_row(st, s, len(c.stages)) for st, s in c.stages.items()]
        out.append(table(COMPARISON_HEAD, rows))
        if c.mde:
            out.append(f"<p class=small>{e(c.mde_advice())}</p>")
        if c.conditions_differ:
            out.append("<p class=small>conditions differ: " + e("; ".join(c.conditions_differ)) + "</p>")
    return "".join(out)


__all__ = ["COMPARISON_HEAD", "answers", "comparison_row", "comparisons_html"]
