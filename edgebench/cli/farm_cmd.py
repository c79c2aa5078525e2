"""``edgebench farm``: the places of a labgrid farm, their tags, holders and board profiles."""
from __future__ import annotations

from typing import List, Optional

import typer

from edgebench.cli import options as opt


def farm(
    tags: Optional[str] = typer.Argument(None, help="Only places with these tags, e.g. board=raspberry-pi-5."),
    coordinator: Optional[str] = typer.Option(
        None, "--coordinator", "-x", metavar="HOST:PORT",
        help="The labgrid coordinator (default: $LG_COORDINATOR, else 127.0.0.1:20408)."),
    json_out: bool = opt.json_flag("the places"),
    take_over: Optional[List[str]] = typer.Option(
        None, "--take-over", metavar="PLACE",
        help="Release PLACE, held by you on this host for an edgebench command that ended without releasing it "
             "(killed outright); repeatable. Refused while that command still runs."),
) -> None:
    """List the places of a labgrid farm: tags, who holds each, the board profile it maps to (docs/farm.md)."""
    from edgebench.cli.output import emit_json, get_console
    from edgebench.farm.coordinator import list_places
    from edgebench.farm.spec import PROFILE_TAG, parse_tags

    if take_over:
        from edgebench.farm.lease import take_over as release_abandoned

        for line in release_abandoned(take_over, coordinator):
            get_console().print(line)
        return

    listing = list_places(coordinator, parse_tags(tags, "tags") if tags else None)
    if json_out:
        emit_json(listing)
        return
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
