"""Printing a history (level 5): the points with their intervals and marks, and the change points."""
from __future__ import annotations

import csv
import io
import sys

from rich import box
from rich.markup import escape
from rich.table import Table

from edgebench.report import format as fmt
from edgebench.results.files import atomic_write


def _value(h, v) -> str:
    if v is None:
        return "n/a"
    if h.unit == "s":
        return fmt.duration(v)
    if h.metric == "accuracy":
        return fmt.percent(v)
    if h.unit == "J":
        return f"{v:.4g} J"
    return fmt.rate(v)


def _interval(h, p) -> str:
    if p.ci_low is None or p.ci_high is None:
        return "no interval"
    return f"{_value(h, p.ci_low)} – {_value(h, p.ci_high)}"


def print_history(console, h, changes: bool = False) -> None:
    t = Table(title=f"{escape(h.key.describe())}: {h.metric} by {h.by}, {len(h.points)} point(s) "
                    f"({h.better} is better)", title_justify="left", box=box.SIMPLE_HEAD, show_edge=False)
    for col in ("#", "run", "created", "commit", h.metric, "interval", "label", "changed"):
        t.add_column(col, overflow="fold")
    at = {c.index: c for c in h.changes}
    for i, (p, m) in enumerate(zip(h.points, h.marks)):
        c = at.get(i)
        mark = ", ".join(f"{what} changed" for what in m)
        if c is not None:
            mark = (mark + "; " if mark else "") + f"[bold]change ×{c.ratio:.3f}[/]"
        t.add_row(str(i), p.run_id, p.created_utc[:19], p.commit[:10], _value(h, p.value), _interval(h, p),
                  p.figure_label, mark)
    console.print(t)
    if h.left_out:
        console.print(f"{h.left_out} run(s) without a commit label left out (give --label commit=... when running)")
    if not h.changes:
        console.print("no change point" + ("" if len(h.points) >= 6 else " looked for (fewer than 6 points)"))
    elif changes or h.changes:
        for c in h.changes:
            what = "regression" if h.regression(c) else ("improvement" if (c.ci_high < 1) == (h.better == "lower")
                                                         and (c.ci_low > 1 or c.ci_high < 1) else "change")
            span = (f"commits {c.commit_before[:10]}..{c.commit_after[:10]}" if c.commit_after
                    else f"runs {c.run_before}..{c.run_after}")
            console.print(f"{what} at point {c.index} ({span}): ×{c.ratio:.3f} "
                          f"(95% CI {c.ci_low:.3f}–{c.ci_high:.3f}), permutation {fmt.p_value(c.p_value)}")


def write_csv(h, path) -> None:
    """The points as CSV: to standard output for ``-``, else to ``path`` through the writer that refuses links."""
    rows = h.csv_rows()
    fields = list(rows[0]) if rows else ["index", "run_id"]
    buf = io.StringIO()
    w = csv.DictWriter(sys.stdout if str(path) == "-" else buf, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    if str(path) != "-":
        data = buf.getvalue().encode()
        atomic_write(path, lambda f: f.write(data))
