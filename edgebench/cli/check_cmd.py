"""`edgebench check RUN...`: the ways to fool the masses, as named rules with verdicts and evidence."""
from __future__ import annotations

from pathlib import Path
from typing import List

import typer

from edgebench.cli import options as opt
from edgebench.errors import GateFailed

_STYLE = {"pass": "green", "warn": "yellow", "fail": "bold red", "not applicable": "dim"}


def verdict_table(report):
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    t = Table(title=f"check of {len(report.runs)} run{'s' if len(report.runs) != 1 else ''}: "
                    + ", ".join(f"{n} {k}" for k, n in report.counts.items() if n), title_justify="left",
              box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, show_lines=True)
    t.add_column("verdict", no_wrap=True)
    t.add_column("rule", max_width=26, overflow="fold")
    t.add_column("evidence", ratio=1, overflow="fold")
    for v in report.verdicts:
        evidence = v.evidence + (f" → {v.remedy}" if v.remedy and v.verdict in ("warn", "fail") else "")
        shown = "n/a" if v.verdict == "not applicable" else v.verdict
        t.add_row(f"[{_STYLE[v.verdict]}]{shown}[/]", f"{escape(v.title)}\n[dim]{v.rule}[/]", escape(evidence))
    return t


def check(
    runs: List[str] = typer.Argument(..., help="Runs to check together: ids, folder name prefixes or folders."),
    runs_dir: Path = opt.runs_dir(writes=False),
    strict: bool = typer.Option(False, "--strict", help="Exit 2 when any rule fails (a failed gate of a run "
                                                        "included; warnings, such as a default threshold "
                                                        "exceeded, never)."),
    json_out: bool = opt.json_flag("the verdicts"),
) -> None:
    """Check runs against the twelve ways to fool the masses and the edge reality check (n/a: not applicable)."""
    from edgebench.bench.sessions import check_on_record
    from edgebench.cli.output import emit_json, get_console
    from edgebench.results.store import read_results

    report = check_on_record(read_results(runs, runs_dir))
    if json_out:
        emit_json(report)
    else:
        get_console().print(verdict_table(report))
    if strict and report.failed:
        failed = [v.rule for v in report.verdicts if v.verdict == "fail"]
        raise GateFailed(f"check --strict: {len(failed)} rule{'s' if len(failed) != 1 else ''} failed "
                         f"({', '.join(failed)})")
