"""``extra.selftest`` (level 0): a firmware board's bring-up checks (docs/firmware-ports.md)."""
from __future__ import annotations

from typing import List, Optional

from edgebench.results.types import Count, Figure, Flag, Mapping_, Text, field


class SelftestCheck(Figure):
    """One check: its name, outcome and one-line summary, and the check's own figure where it has one."""
    name: Text = field("the check (`protocol`, `core clock`, `clock`, `clock source`, `bit-exact MODEL`, "
                       "`cycles per MAC`)")
    status: Text = field("`pass`, `warn`, `fail` or `skip`")
    summary: Text = field("the outcome in one line")
    counter_hz: Count = field("core clock: the device counter's rate", "Hz")
    clock: Optional[Mapping_] = field("clock source: what the firmware reports (`source`, `ppm`, `fallback`, "
                                      "`virtual`), null when it does not")
    differing_bytes: Count = field("bit-exact: output bytes that differ from the reference kernels")
    mac_rate: Optional[Mapping_] = field("cycles per MAC: mac_rate's figure with `per_mac_range`")


class SelftestFigure(Figure):
    """`extra.selftest`: the checks a port must pass before its figures are trusted."""
    checks: Optional[List[SelftestCheck]] = field("the checks, in the order they ran")
    clock: Optional[Mapping_] = field("the device clock against the host's (`rate_error`, its `interval` bound, "
                                      "`device_s`, `host_s`, `readings`, `method`, ...)")
    firmware: Optional[Mapping_] = field("what the firmware says of itself (`eb-info`)")
    failed: Flag = field("whether any check failed")
    notes: Optional[List[str]] = field("notes")
