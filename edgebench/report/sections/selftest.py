"""The self-test section (level 1, pure): a firmware board's bring-up checks."""
from __future__ import annotations

from edgebench.report.sections.base import RunData, e, table


def html(d: RunData) -> str:
    st = d.result.extra.selftest
    if not st:
        return ""
    rows = [[c.status, c.name, c.summary] for c in st.checks or []]
    notes = "".join(f"<p class=small>note: {e(n)}</p>" for n in st.notes or [])
    return "<h3>Self-test checks</h3>" + table(["status", "check", "what was seen"], rows) + notes


__all__ = ["html"]
