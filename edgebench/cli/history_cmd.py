"""`edgebench history MODEL --board B`: the series of one model on one board over time, its change points."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from edgebench import ranges as R
from edgebench.cli import options as opt
from edgebench.cli.render.history import print_history, write_csv
from edgebench.store.history import find_series
from edgebench.store.history import history as read_history
from edgebench.store.open import open_store, shared_url


def history(
    model: str = typer.Argument(..., help="The model's name, as runs record it (e.g. digits_int8)."),
    board: str = opt.board(..., help="The board the runs were on."),
    metric: str = typer.Option("e2e", "--metric", help="e2e, invoke, throughput, energy or accuracy."),
    by: str = typer.Option("time", "--by", help="time: every run in order; commit: one point per --label commit."),
    changes: bool = typer.Option(False, "--changes", help="List the change points (level shifts) with their "
                                                          "commit range, size and interval; record them."),
    runtime: Optional[str] = typer.Option(None, "--runtime", help="Narrow to runs of this runtime."),
    kernels: Optional[str] = opt.kernels(None, help="Narrow to runs with these kernels."),
    threads: Optional[int] = opt.threads(None, help="Narrow to runs with this thread count.",
                                          callback=opt.within(R.THREADS)),
    scenario: Optional[str] = typer.Option(None, "--scenario", help="Narrow to runs of this scenario."),
    store_url: Optional[str] = opt.store(help="Read a shared results store (postgresql://...) instead of the runs "
                                              "folder's index; default $EDGEBENCH_STORE, else the runs folder."),
    runs_dir: Path = opt.runs_dir(writes=False),
    csv_out: Optional[Path] = typer.Option(None, "--csv", help="Write the points to this CSV file ('-': standard output)."),
    json_out: bool = opt.json_flag("the history"),
) -> None:
    """The history of MODEL on a board: each run's figure with its interval, where the model's file or the
    conditions changed, and the change points found (a permutation test weighing each run by its interval)."""
    # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
    from edgebench.cli.output import emit_json, get_console

    store = open_store(shared_url(store_url), root=runs_dir)
    try:
        refresh = getattr(store, "refresh", None)
        if refresh is not None:
            refresh()
        key = find_series(store, model, board, metric, runtime=runtime, kernels=kernels, threads=threads,
                          scenario=scenario)
        h = read_history(store, key, metric, by)
        if changes:
            store.record_changes(key, metric, h.changes)
    finally:
        store.close()
    if json_out:
        emit_json(h)
    elif csv_out is not None:
        write_csv(h, csv_out)
    else:
        print_history(get_console(), h, changes)
