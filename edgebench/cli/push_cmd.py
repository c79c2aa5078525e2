"""`edgebench push [RUN ...] [--store URL]`: send queued runs (and named run folders) to a shared store.

A verb that could not reach the shared store keeps its run in the runs folder and queues it
(RUNS/.edgebench-queue/, edgebench.store.queue); `push` sends the queue, and any run folders
named, to the store of --store or $EDGEBENCH_STORE. Idempotent: a run the store holds already
just leaves the queue. A refused run (tampered, foreign, another run under its id) is named on
one line and stays queued; the store still unreachable leaves everything queued. Exit 0 when
everything arrived, 1 otherwise. docs/store.md, "A shared store for a lab".
"""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from edgebench.cli import options as opt
from edgebench.errors import StoreError, UsageError
from edgebench.store.open import ENV, shared_url


def push(
    runs: Optional[List[Path]] = typer.Argument(None, help="Run folders to push besides the queue."),
    store: Optional[str] = opt.store(help="The shared store, postgresql://USER@HOST:PORT/DB[?samples=s3://BUCKET/"
                                          "PREFIX] (default: $EDGEBENCH_STORE); the password from the URL, "
                                          "$PGPASSWORD or ~/.pgpass."),
    runs_dir: Path = opt.runs_dir(writes=False, help="The runs folder whose queue is sent."),
    json_out: bool = opt.json_flag("what became of each run"),
) -> None:
    """Send queued runs (and named run folders) to the shared results store; nothing is lost."""
    # lazy: pydantic, rich (import pydantic 199 ms, rich 52 ms measured), kept off `edgebench VERB --help`
    from edgebench.cli.output import emit_json, get_console
    from edgebench.store.queue import ADDED, ALREADY, QUEUED, REFUSED
    from edgebench.store.queue import push as push_runs

    url = shared_url(store)
    if url is None:
        raise UsageError("no shared store to push to", f"give --store postgresql://USER@HOST/DB or set ${ENV}")
    report = push_runs(url, runs or (), runs_dir)
    if json_out:
        emit_json(report.to_dict())
    else:
        out = get_console()
        for r in report.runs:
            line = f"{r.run_id}: {r.status}" + (f" ({r.message})" if r.message else "")
            out.print(line, markup=False, soft_wrap=True)
        counts = ", ".join(f"{report.count(s)} {s}" for s in (ADDED, ALREADY, QUEUED, REFUSED) if report.count(s))
        out.print(f"{report.store}: {counts or 'nothing queued'}; {report.still_queued} still queued"
                  + (f"; {report.other_stores} queued for other stores" if report.other_stores else ""),
                  markup=False, soft_wrap=True)
    failed = report.count(QUEUED) + report.count(REFUSED)
    if failed:
        raise StoreError(f"{failed} of {len(report.runs)} run(s) did not reach {report.store}",
                         "they stay in their folders and queued: edgebench push again once fixed")
