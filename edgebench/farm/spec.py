"""Board specs that name a labgrid place (pure parsing, no labgrid import).

``labgrid:PLACE`` names one place; ``labgrid:KEY=VALUE[,KEY=VALUE...]`` any place whose tags
include all of those pairs (labgrid's reservation filter; the key ``name`` is the place's
name). The tag :data:`PROFILE_TAG` on the place names the edgebench board profile.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from edgebench.errors import UsageError

PREFIX = "labgrid:"
PROFILE_TAG = "edgebench-profile"          # the place tag naming the board profile
ENV_COORDINATOR = "LG_COORDINATOR"         # labgrid's own variable: HOST[:PORT] of the coordinator
ENV_WAIT = "EDGEBENCH_FARM_WAIT"           # seconds to wait for a busy place (default below)
DEFAULT_PORT = 20408                       # labgrid-coordinator's default port
DEFAULT_WAIT_S = 60.0
# labgrid's own rules (labgrid.remote.common TAG_KEY/TAG_VAL), checked fully here
_TAG_KEY = re.compile(r"[a-z][a-z0-9_-]+\Z")
_TAG_VAL = re.compile(r"[a-zA-Z0-9_.:-]+\Z")


@dataclass(frozen=True)
class FarmSpec:
    """What to reserve: one place by name, or any place with these tags."""

    tags: dict = field(default_factory=dict)

    @property
    def place(self) -> str | None:
        return self.tags.get("name") if list(self.tags) == ["name"] else None

    def describe(self) -> str:
        return f"place {self.place}" if self.place else "a place tagged " + ",".join(
            f"{k}={v}" for k, v in self.tags.items())

    def spec(self) -> str:
        return PREFIX + (self.place or ",".join(f"{k}={v}" for k, v in self.tags.items()))


def is_farm(board: str | None) -> bool:
    return bool(board and board.startswith(PREFIX))


def parse_tags(text: str, what: str = "--farm") -> dict:
    """``KEY=VALUE[,KEY=VALUE...]`` -> dict; UsageError naming the bad pair."""
    tags = {}
    for pair in (p.strip() for p in text.split(",")):
        if not pair:
            continue
        key, sep, value = pair.partition("=")
        if not sep or not _TAG_KEY.match(key) or not _TAG_VAL.match(value):
            raise UsageError(f"{what} {text!r}: {pair!r} is not a tag KEY=VALUE (key: lower-case letters, "
                             "digits, _ or -, starting with a letter)", "e.g. board=raspberry-pi-5")
        tags[key] = value
    if not tags:
        raise UsageError(f"{what} {text!r} names no tags", "e.g. board=raspberry-pi-5")
    return tags


def parse_spec(board: str) -> FarmSpec:
    """``labgrid:PLACE`` or ``labgrid:KEY=VALUE,...`` -> :class:`FarmSpec`."""
    rest = board[len(PREFIX):].strip()
    if not rest:
        raise UsageError(f"--board {board!r} names no place", "--board labgrid:PLACE or --board labgrid:TAG=VALUE "
                         "(list the places: edgebench farm)")
    if "=" in rest:
        return FarmSpec(parse_tags(rest, "--board"))
    if not _TAG_VAL.match(rest):
        raise UsageError(f"--board {board!r}: {rest!r} is not a place name", "list the places: edgebench farm")
    return FarmSpec({"name": rest})


def coordinator_address(address: str | None = None) -> str:
    """HOST:PORT of the coordinator: ``address``, else $LG_COORDINATOR, else labgrid's default."""
    text = (address or os.environ.get(ENV_COORDINATOR) or f"127.0.0.1:{DEFAULT_PORT}").strip()
    if text.startswith("[") or text.count(":") == 1:
        return text
    return f"{text}:{DEFAULT_PORT}"


def wait_limit_s(value: float | None = None) -> float:
    """How long to wait for a busy place: ``value``, else $EDGEBENCH_FARM_WAIT, else 60 s."""
    if value is not None:
        return max(0.0, float(value))
    text = os.environ.get(ENV_WAIT)
    if not text:
        return DEFAULT_WAIT_S
    try:
        return max(0.0, float(text))
    except ValueError:
        raise UsageError(f"{ENV_WAIT}={text!r} is not a number of seconds", f"e.g. {ENV_WAIT}=120") from None
