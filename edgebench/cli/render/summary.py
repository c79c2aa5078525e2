"""The one-screen summary of several runs on a terminal (bench A B, demo): :mod:`edgebench.report.summary`."""
from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from edgebench.cli.output import get_err_console


def print_summary(console, summary) -> None:
    """The answers, the table (a row per model and board), the warnings grouped by code (each remedy once)."""
    from edgebench.report.summary import COLUMNS, TERMINAL_ICONS  # inside: 0.12 s at `edgebench demo --help`

    console.print("[bold]summary[/]")
    for a in summary.answers:
        console.print(f"  {escape(a)}")
    t = Table(box=None, pad_edge=False, padding=(0, 2, 0, 0), header_style="bold underline")
    for col in COLUMNS:
        t.add_column(col, overflow="fold")
    for row in summary.rows:
        t.add_row(*(escape(str(c)) for c in row.cells(TERMINAL_ICONS, names=False)))
    console.print(t)
    every = len(summary.rows)
    for verdict in ("fail", "warn"):
        rules = summary.rules(verdict)
        if rules:
            console.print(f"check {TERMINAL_ICONS[verdict]}: " + "; ".join(
                escape(rule) + ("" if len(rows) == every > 1 else f" ({escape(', '.join(rows))})")
                for rule, rows in rules) + " (edgebench check: evidence and remedies)", soft_wrap=True)
    for g in summary.warnings:
        runs = f" [{len(g.runs)} runs]" if len(g.runs) > 1 else ""
        console.print(f"[yellow]warning ({escape(g.code)}){runs}:[/] {escape(g.message)} — {escape(g.remedy)}")
    if summary.acknowledged_line:
        console.print(summary.acknowledged_line, style="dim", markup=False, soft_wrap=True)


def summarise_runs(done: list, answers: tuple = ()):
    """The summary of ``[(result, run_dir)]`` just measured: check's verdicts, the runs folder's acks."""
    # inside: `edgebench demo --help` imports this module; these cost it 0.1-0.3 s each (-X importtime)
    from edgebench.bench.sessions import check_on_record
    from edgebench.report.check import CheckReport
    from edgebench.report.summary import summarise
    from edgebench.results.acks import acks_for

    results = [r for r, _ in done]
    verdicts: list = []
    for label in dict.fromkeys(r.label for r in results):   # runs of different labels are never compared
        verdicts += check_on_record([(d, r) for r, d in done if r.label == label]).verdicts
    problems: list = []
    acks = acks_for([d for _, d in done], problems)
    if problems:
        for text in problems:
            get_err_console().print(f"warning: {text}", markup=False, soft_wrap=True)
    return summarise(results, CheckReport([r.run_id for r in results], verdicts), acks, answers)


__all__ = ["print_summary", "summarise_runs"]
