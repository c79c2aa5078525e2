"""``extra.selftest`` (level 0): a firmware board's bring-up checks (docs/firmware-ports.md)."""
from __future__ import annotations

from typing import List, Optional

from edgebench.results.types import Figure, Mapping_, Text, field


class SelftestCheck(Figure):
    """One check: its name, outcome and one-line summary (other keys are the check's own figures)."""
    name: Text = field("the check (`protocol`, `core clock`, `clock`, `bit-exact ...`)")
    status: Text = field("`pass`, `warn`, `fail` or `skip`")
    summary: Text = field("the outcome in one line")


class SelftestFigure(Figure):
    """`extra.selftest`: the checks a port must pass before its figures are trusted."""
    checks: Optional[List[SelftestCheck]] = field("the checks, in the order they ran")
    clock: Optional[Mapping_] = field("the device clock against the host's (`drift_ppm`, its interval, ...)")
    firmware: Optional[Mapping_] = field("what the firmware says of itself (`eb-info`)")
    failed: Optional[List[str]] = field("the checks that failed")
    notes: Optional[List[str]] = field("notes")
