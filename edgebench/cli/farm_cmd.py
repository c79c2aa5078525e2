"""``edgebench farm``: the places of a labgrid farm, their tags, holders and board profiles;
``edgebench farm demo``: a farm on this computer to try it (:mod:`edgebench.cli.farm_demo`)."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from edgebench import ranges as R
from edgebench.cli import options as opt
from edgebench.errors import UsageError
from edgebench.farm.coordinator import list_places
from edgebench.farm.spec import PROFILE_TAG, parse_tags

DEMO = "demo"   # `edgebench farm demo`: not a tag filter (tags are KEY=VALUE)


def farm(
    tags: Optional[str] = typer.Argument(
        None, help="Only places with these tags, e.g. board=raspberry-pi-5; or `demo`: start a farm on this computer "
                   "(coordinator, exporters, posix-simulated boards on 127.0.0.1) until Ctrl-C."),
    coordinator: Optional[str] = typer.Option(
        None, "--coordinator", "-x", metavar="HOST:PORT",
        help="The labgrid coordinator (default: $LG_COORDINATOR, else 127.0.0.1:20408)."),
    json_out: bool = opt.json_flag("the places"),
    take_over: Optional[List[str]] = typer.Option(
        None, "--take-over", metavar="PLACE",
        help="Release PLACE, held by you on this host for an edgebench command that ended without releasing it "
             "(killed outright); repeatable. Refused while that command still runs."),
    places: int = typer.Option(1, "--places", callback=opt.within(R.DEMO_PLACES),
                               help="farm demo: how many posix-simulated boards (places)."),
    image: Optional[Path] = opt.image(help="farm demo: a posix firmware image instead of building one (e.g. from "
                                           "`edgebench flash --board posix-sim --build-only`)."),
) -> None:
    """List the places of a labgrid farm: tags, who holds each, the board profile it maps to (docs/farm.md)."""
    # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
    from edgebench.cli.output import emit_json, get_console, get_err_console

    if tags == DEMO:
        if coordinator or json_out or take_over:
            raise UsageError("farm demo starts its own coordinator: --coordinator, --json and --take-over do not "
                             "apply", "edgebench farm demo [--places N]")
        # lazy: numpy, serial (import numpy 460 ms, serial 20 ms measured), kept off `edgebench VERB --help`
        from edgebench.cli.farm_demo import run_demo

        return run_demo(places, image, get_console(), get_err_console())
    if places != 1 or image is not None:
        raise UsageError("--places and --image apply to `edgebench farm demo`", "drop them, or add demo")

    if take_over:
        # lazy: pydantic (import pydantic 199 ms measured), kept off `edgebench VERB --help`
        from edgebench.farm.lease import take_over as release_abandoned

        for line in release_abandoned(take_over, coordinator):
            get_console().print(line)
        return

    listing = list_places(coordinator, parse_tags(tags, "tags") if tags else None)
    if json_out:
        emit_json(listing)
        return
    # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
    from rich.table import Table

    console = get_console()
    if not listing.places:
        console.print(f"no places on labgrid coordinator {listing.coordinator}"
                      + (f" tagged {tags}" if tags else ""))
        return
    table = Table(title=f"labgrid places on {listing.coordinator} (you are {listing.user})", title_justify="left")
    for column in ("place", "profile", "tags", "held by", "resources"):
        table.add_column(column)
    for p in listing.places:
        others = ", ".join(f"{k}={v}" for k, v in sorted(p.tags.items()) if k != PROFILE_TAG)
        held = p.acquired or (f"reserved {p.reservation}" if p.reservation else "free")
        res = ", ".join(f"{r.cls}{'' if r.avail else ' (gone)'}" for r in p.resources) or "none"
        table.add_row(p.name, p.profile or f"[red]no {PROFILE_TAG} tag[/red]", others or "-", held, res)
    console.print(table)
