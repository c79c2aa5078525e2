"""`edgebench runs`: list stored runs, or show one (table, claim, --json)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from edgebench.cli import options as opt
from edgebench.cli.render import runs_table, show_run
from edgebench.errors import UsageError


def runs(
    run: Optional[str] = typer.Argument(None, help="A run id or its prefix (the id listed), a folder or its name "
                                                   "prefix, or 'latest'; omit to list."),
    runs_dir: Path = opt.runs_dir(writes=False),
    json_out: bool = opt.json_flag("the run, or the listing"),
    csv: Optional[Path] = typer.Option(None, "--csv", help="Write the runs table (one row per run) to this CSV file."),
    parquet: Optional[Path] = typer.Option(None, "--parquet", help="Write the runs table to this Parquet file."),
) -> None:
    """List stored runs, or show one run in full; --csv/--parquet export the table."""
    # lazy: pydantic, rich (import pydantic 199 ms, rich 52 ms measured), kept off `edgebench VERB --help`
    from edgebench.cli.output import emit_json, get_console, get_err_console
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
