"""Acknowledged warnings of a runs folder (level 0): ``RUNS/acknowledged.json``, described once.

A known condition of a machine ("this computer has no cpufreq", "single session on purpose") is
acknowledged once for a runs folder with ``edgebench ack CODE --reason TEXT``. Every run keeps its
warnings in run.json as before; what prints them (the verbs, ``runs ID``, ``report``, the summary)
folds the acknowledged ones into one line ("2 acknowledged warnings: ...") instead of repeating them.
``edgebench schema acks`` prints the JSON Schema of the file.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import json
from pathlib import Path
from typing import List, Literal, Optional

from pydantic import Field
from pydantic.dataclasses import dataclass
from typing_extensions import Annotated

from edgebench.errors import ResultError, UsageError
from edgebench.schema import CLOSED, Str, expects, validate

ACKS_FILE = "acknowledged.json"
ACKS_FORMAT = "edgebench-acks"
MAX_ACKS_BYTES = 1 * 2 ** 20
Code = Annotated[Str, Field(pattern=r"^[a-z0-9][a-z0-9-]{0,63}$", json_schema_extra=expects(
    "a warning code: lowercase letters, digits and dashes, e.g. single-session"))]


@dataclass(config=CLOSED)
class Ack:
    """One acknowledged warning code."""

    code: Annotated[Code, Field(description="the warning's code, as run.json and the output name it")]
    reason: Annotated[Str, Field(max_length=500, description="why it is known and accepted (printed with it)")] = ""
    utc: Annotated[Str, Field(max_length=40, description="when it was acknowledged, ISO 8601")] = ""


@dataclass(config=CLOSED)
class AcksFile:
    """``RUNS/acknowledged.json``: the warnings acknowledged for the runs of that folder."""

    format: Annotated[Literal["edgebench-acks"], Field(description="always `edgebench-acks`")]
    version: Annotated[Literal[1], Field(description="this format's version")]
    acknowledged: Annotated[List[Ack], Field(max_length=1000, description="one entry per code")] = \
        dataclasses.field(default_factory=list)


def acks_path(runs_dir) -> Path:
    return Path(runs_dir) / ACKS_FILE


def read_acks(runs_dir) -> dict:
    """``{code: reason}`` acknowledged for ``runs_dir`` (empty without the file); ResultError (one line
    naming the file and the key) for a file that does not read."""
    p = acks_path(runs_dir)
    if not p.is_file():
        return {}
    try:
        raw = p.read_bytes()[:MAX_ACKS_BYTES + 1]
        if len(raw) > MAX_ACKS_BYTES:
            raise ResultError(f"{p} is larger than 1 MB", "remove it, or edit it down")
        data = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError) as exc:
        raise ResultError(f"{p} is not readable JSON ({type(exc).__name__})",
                          f"fix it or remove it (edgebench ack --list --runs-dir {runs_dir})") from None
    doc = validate(AcksFile, data, str(p), ResultError, "fix it or remove it")
    return {a.code: a.reason for a in doc.acknowledged}


def _write(runs_dir, acks: dict, when: dict) -> Path:
    from edgebench.results.store import write_text_atomic

    doc = {"format": ACKS_FORMAT, "version": 1,
           "acknowledged": [{"code": c, "reason": r, "utc": when.get(c, "")} for c, r in sorted(acks.items())]}
    validate(AcksFile, doc, ACKS_FILE, UsageError)
    return write_text_atomic(acks_path(runs_dir), json.dumps(doc, indent=2) + "\n")


def _times(runs_dir) -> dict:
    p = acks_path(runs_dir)
    if not p.is_file():
        return {}
    return {a["code"]: a.get("utc", "") for a in json.loads(p.read_text()).get("acknowledged", [])}


def acknowledge(runs_dir, code: str, reason: str = "") -> Path:
    """Acknowledge ``code`` for ``runs_dir`` (the folder must exist); the file written atomically."""
    if not Path(runs_dir).is_dir():
        raise UsageError(f"runs folder {runs_dir} does not exist", "check --runs-dir")
    acks, when = read_acks(runs_dir), _times(runs_dir)
    acks[code] = reason
    when[code] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    return _write(runs_dir, acks, when)


def withdraw(runs_dir, code: str) -> Optional[Path]:
    """Withdraw the acknowledgement of ``code`` (UsageError if it has none)."""
    acks = read_acks(runs_dir)
    if code not in acks:
        raise UsageError(f"{code} is not acknowledged in {runs_dir}", f"list them: edgebench ack --list --runs-dir "
                                                                        f"{runs_dir}")
    del acks[code]
    return _write(runs_dir, acks, _times(runs_dir))


def acks_for(run_dirs) -> dict:
    """The acknowledgements of the runs folders holding ``run_dirs`` (their parents), merged; a folder whose
    file does not read acknowledges nothing (the verbs that print runs never fail on it)."""
    out: dict = {}
    for parent in {Path(d).parent for d in run_dirs if d}:
        try:
            out.update(read_acks(parent))
        except ResultError:
            continue
    return out


__all__ = ["ACKS_FILE", "Ack", "AcksFile", "acknowledge", "acks_for", "acks_path", "read_acks", "withdraw"]
