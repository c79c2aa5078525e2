"""`edgebench ack CODE --reason TEXT`: acknowledge a known warning for a runs folder.

The warning stays in every run.json; the verbs, `runs ID`, `report` and the summaries print the
acknowledged ones as one folded line ("2 acknowledged warnings: ..."). `--list` shows them,
`--remove CODE` withdraws one. The file is RUNS/acknowledged.json (`edgebench schema acks`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from edgebench.cli import options as opt
from edgebench.errors import EdgebenchError, UsageError


def ack(
    code: Optional[str] = typer.Argument(None, help="The warning's code, as the output shows it: warning (CODE)."),
    reason: str = typer.Option("", "--reason", help="Why it is known and accepted, e.g. 'this VM has no cpufreq' "
                                                    "(printed with the folded line)."),
    remove: bool = typer.Option(False, "--remove", help="Withdraw the acknowledgement of CODE."),
    list_: bool = typer.Option(False, "--list", help="List the acknowledged warnings of the runs folder."),
    runs_dir: Path = opt.runs_dir(help="The runs folder the acknowledgement is for."),
    json_out: bool = opt.json_flag("the acknowledged warnings"),
) -> None:
    """Acknowledge a known warning for a runs folder: still recorded in run.json, printed as one folded line."""
    # lazy: pydantic, rich (import pydantic 199 ms, rich 52 ms measured), kept off `edgebench VERB --help`
    from edgebench.cli.output import emit_json, get_console
    from edgebench.results import acks

    out = get_console()
    if list_ or code is None:
        if code is not None or remove or reason:
            raise UsageError("--list takes no CODE, --reason or --remove", "edgebench ack --list --runs-dir DIR")
        if not list_:
            raise UsageError("missing CODE", "edgebench ack CODE --reason TEXT (or --list)")
        known = acks.read_acks(runs_dir)
        if json_out:
            emit_json({"runs_dir": str(runs_dir), "acknowledged": known})
            return
        if not known:
            out.print(f"no acknowledged warnings in {runs_dir}", markup=False)
        for c, why in known.items():
            out.print(f"{c}: {why or '(no reason given)'}", markup=False)
        return
    # lazy: pydantic (import pydantic 199 ms measured), kept off `edgebench VERB --help`
    from edgebench.schema import validate

    validate(acks.Ack, {"code": code, "reason": reason}, "CODE", UsageError,
             "a warning's code as printed, e.g. single-session")
    # lazy: pydantic (import pydantic 199 ms measured), kept off `edgebench VERB --help`
    from edgebench.report.warnings import GATE, TIERS, rank

    if rank(code) == GATE and not remove:
        raise UsageError(f"{code} {TIERS[GATE]}: it cannot be acknowledged away",
                         "fix what it names (edgebench check shows the evidence), or state it in the claim")
    if remove:
        if reason:
            raise UsageError("--remove takes no --reason", f"edgebench ack {code} --remove")
        path = acks.withdraw(runs_dir, code)
        done = f"{code} is no longer acknowledged in {runs_dir}: its warnings print again"
    else:
        path = acks.acknowledge(runs_dir, code, reason)
        seen = _runs_with(runs_dir, code)
        done = (f"{code} acknowledged for {runs_dir} ({path.name}); {seen} run(s) there carry it: recorded in "
                "their run.json, printed folded")
    if json_out:
        emit_json({"runs_dir": str(runs_dir), "acknowledged": acks.read_acks(runs_dir)})
    else:
        out.print(done, markup=False, soft_wrap=True)


def _runs_with(runs_dir: Path, code: str) -> int:
    """How many stored runs of ``runs_dir`` carry warning ``code`` (unreadable ones not counted)."""
    # lazy: pydantic (import pydantic 199 ms measured), kept off `edgebench VERB --help`
    from edgebench.results import store

    n = 0
    for d in store.find_runs(runs_dir):
        try:
            if any(w.code == code for w in store.read_result(d).warnings):
                n += 1
        except EdgebenchError:
            continue
    return n
