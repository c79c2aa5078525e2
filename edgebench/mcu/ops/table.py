"""The engine's operator table, read from the firmware's own ``firmware/core/eb_ops.def`` (level 2).

One table declares every operator the microcontroller engine runs: its TFLite name and
code (the blob's operator code), the engine version that added it, and its family (the
firmware source ``core/ops/eb_op_<family>.c`` and the host module
``edgebench/mcu/ops/<family>.py``). The firmware compiles it (X-macro), and this module
parses the same lines, so the converter, the fit check and the firmware cannot disagree
about which operators exist (tests/test_engine_layout.py proves the built firmware refuses
exactly the codes that are not in it).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from edgebench.errors import UsageError

TABLE_NAME = "eb_ops.def"
_LINE = re.compile(r"^EB_OP\(\s*([A-Z0-9_]+)\s*,\s*(\d+)\s*,\s*(\d+)\s*,\s*([a-z0-9_]+)\s*\)\s*$")


@dataclass(frozen=True)
class OpEntry:
    """One row of the table."""

    name: str        # TFLite BuiltinOperator name
    code: int        # its value: the blob's operator code
    version: int     # the engine version that added it
    family: str      # core/ops/eb_op_<family>.c and edgebench/mcu/ops/<family>.py


def table_path() -> Path:
    """``firmware/core/eb_ops.def`` of the source checkout, or the copy an installed wheel ships
    (``edgebench/_data/firmware/core``)."""
    package = Path(__file__).resolve().parents[2]
    for p in (package.parent / "firmware" / "core" / TABLE_NAME,
              package / "_data" / "firmware" / "core" / TABLE_NAME):
        if p.is_file():
            return p
    raise UsageError(f"the engine's operator table ({TABLE_NAME}) is missing from this installation",
                     "reinstall edgebench (the wheel ships firmware/core)")


def parse_table(text: str, source: str = TABLE_NAME) -> dict:
    """name -> :class:`OpEntry` for every ``EB_OP(...)`` line of ``text``, in table order. A line
    that starts with ``EB_OP(`` but does not parse, or a repeated name or code, is an error."""
    rows: dict = {}
    codes: set = set()
    for n, line in enumerate(text.splitlines(), 1):
        if not line.startswith("EB_OP("):
            continue
        m = _LINE.match(line)
        if m is None:
            raise UsageError(f"{source}:{n}: cannot read the operator line {line.strip()!r}",
                             "write it as EB_OP(NAME, CODE, VERSION, family)")
        e = OpEntry(m.group(1), int(m.group(2)), int(m.group(3)), m.group(4))
        if e.name in rows or e.code in codes or not 0 <= e.code <= 255 or e.version < 1:
            raise UsageError(f"{source}:{n}: operator {e.name} (code {e.code}, version {e.version}) is "
                             "repeated or out of range", "one line per operator, codes 0..255")
        rows[e.name] = e
        codes.add(e.code)
    return rows


@lru_cache(maxsize=1)
def operators() -> dict:
    """The table of this edgebench's firmware: name -> :class:`OpEntry`."""
    p = table_path()
    return parse_table(p.read_text(encoding="utf-8"), str(p))
