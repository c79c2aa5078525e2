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


def runs_table(rows: list, title: str):
    """The listing: short id, kind, model, board, label, headline figure, status (fits 80 columns;
    the unit of the interval is the median's unless the interval says otherwise)."""
    from rich.table import Table

    from edgebench.report import format as fmt
    from edgebench.results.table import short_ids

    ids = short_ids([r["run_id"] for r in rows])
    t = Table(title=title, title_justify="left", box=None, pad_edge=False, padding=(0, 1, 0, 0),
              header_style="bold underline")
    t.add_column("id", no_wrap=True)
    t.add_column("kind", no_wrap=True)
    t.add_column("model", overflow="fold")
    t.add_column("board", overflow="fold")
    t.add_column("label", no_wrap=True)
    t.add_column("median e2e [95% CI]", justify="right", no_wrap=True)
    t.add_column("status", no_wrap=True)
    t.add_column("warn", justify="right", no_wrap=True)
    for r in rows:
        if r["e2e_median_s"] is not None:
            median = fmt.duration(r["e2e_median_s"])
            ci = fmt.duration_range(r["e2e_ci_low_s"], r["e2e_ci_high_s"])
            if ci.rsplit(" ", 1)[-1] == median.rsplit(" ", 1)[-1]:
                ci = ci.rsplit(" ", 1)[0]
            figure = f"{median} [{ci}]"
        elif r["top1"] is not None:
            figure = f"top-1 {fmt.percent(r['top1'])}"
        elif r["temp_max_c"] is not None:
            figure = f"max {r['temp_max_c']:.1f} °C"
        else:
            figure = "–"
        model = str(r["model"])
        if r["precision"] and str(r["precision"]).lower() not in model.lower():
            model += f" {r['precision']}"
        t.add_row(ids[r["run_id"]], r["kind"], model, str(r["board"]), r["label"], figure,
                  "ok" if r["status"] == "complete" else r["status"], str(r["warnings"] or ""))
    return t


@app.command()
def runs(
    run: Optional[str] = typer.Argument(None, help="A run id or its prefix (the id listed), a folder or its name "
                                                   "prefix, or 'latest'; omit to list."),
    runs_dir: Path = typer.Option(Path("runs"), help="Folder holding run folders."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON on stdout."),
    csv: Optional[Path] = typer.Option(None, "--csv", help="Write the runs table (one row per run) to this CSV file."),
    parquet: Optional[Path] = typer.Option(None, "--parquet", help="Write the runs table to this Parquet file."),
) -> None:
    """List stored runs, or show one run in full; --csv/--parquet export the table."""
    from edgebench.cli.output import emit_json, get_console, get_err_console
    from edgebench.errors import UsageError
    from edgebench.results.store import abandoned_reason, read_result, resolve_run
    from edgebench.results.table import export, rows_of, runs_frame, short_ids

    out = get_console()
    if run is not None and csv is None and parquet is None:
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
    rows = rows_of(resolve_run(run, runs_dir) if run is not None else runs_dir)
    if csv is not None or parquet is not None:
        frame = runs_frame(rows)
        for path, suffix in ((csv, ".csv"), (parquet, ".parquet")):
            if path is not None:
                if path.suffix.lower() != suffix:
                    raise UsageError(f"--{suffix[1:]} {path}: the file name must end in {suffix}",
                                     f"e.g. --{suffix[1:]} runs{suffix}")
                written = export(frame, path)
                out.print(f"{len(frame)} run{'s' if len(frame) != 1 else ''} written to {written}", markup=False)
        return
    if json_out:
        ids = short_ids([r["run_id"] for r in rows])
        emit_json([{"short_id": ids[r["run_id"]], **r} for r in rows])
        return
    if not rows:
        out.print(f"no runs under {runs_dir}")
        return
    out.print(runs_table(rows, f"runs under {runs_dir} (show one: edgebench runs ID)"))
