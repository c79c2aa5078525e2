"""`edgebench runs`: list stored runs, or show one (table, claim, --json)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from edgebench.cli.app import app


def show_run(console, result, run_dir) -> None:
    """Print a stored run the way the verb that made it does."""
    from edgebench.cli.render import print_run

    if result.kind == "accuracy":
        from edgebench.cli.accuracy_cmd import print_accuracy as show
    elif result.kind == "soak":
        from edgebench.cli.soak_cmd import print_soak as show
    elif result.kind == "sweep":
        from edgebench.cli.sweep_cmd import print_sweep as show
    elif result.kind == "energy":
        from edgebench.cli.energy_cmd import energy_lines

        print_run(console, result, run_dir)
        for line in energy_lines(result, run_dir):
            console.print(line, markup=False)
        return
    else:
        show = print_run
    show(console, result, run_dir)


@app.command()
def runs(
    run: Optional[str] = typer.Argument(None, help="A run folder, its name prefix, or 'latest'; omit to list."),
    runs_dir: Path = typer.Option(Path("runs"), help="Folder holding run folders."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON on stdout."),
) -> None:
    """List stored runs, or show one run in full."""
    from rich.table import Table

    from edgebench.cli.output import emit_json, get_console, get_err_console
    from edgebench.errors import UsageError
    from edgebench.report import format as fmt
    from edgebench.results.store import abandoned_reason, find_runs, flat_row, read_result, resolve_run

    out = get_console()
    if run is not None:
        d = resolve_run(run, runs_dir)
        result = read_result(d)
        gone = abandoned_reason(result)
        if gone:  # stored status "running", but nobody is writing it any more
            get_err_console().print(f"note: run {d.name} is abandoned: {gone}; it never finished", markup=False,
                                    soft_wrap=True)
        if json_out:
            emit_json(result)
        else:
            show_run(out, result, d)
        return
    if not runs_dir.exists():
        raise UsageError(f"runs folder {runs_dir} does not exist", "check --runs-dir")
    if not runs_dir.is_dir():
        raise UsageError(f"--runs-dir {runs_dir} is not a folder", "give the folder holding run folders")
    rows = [flat_row(read_result(d), d) for d in find_runs(runs_dir)]
    if json_out:
        emit_json(rows)
        return
    if not rows:
        out.print(f"no runs under {runs_dir}")
        return
    t = Table(title=f"runs under {runs_dir}", title_justify="left")
    for col in ("run", "status", "label", "model", "precision", "board", "kernels", "thr",
                "scenario", "median e2e", "95% CI", "n", "warn"):
        t.add_column(col, min_width=10 if col == "status" else None)  # "incomplete", "abandoned" in full
    for r in rows:
        t.add_row(Path(r["path"]).name, r["status"], r["label"], str(r["model"]), str(r["precision"]),
                  str(r["board"]), str(r["kernels"]), str(r["threads"]), str(r["scenario"]),
                  fmt.duration(r["e2e_median_s"]), fmt.duration_range(r["e2e_ci_low_s"], r["e2e_ci_high_s"]),
                  fmt.count(r["n"]), str(r["warnings"]))
    out.print(t)
