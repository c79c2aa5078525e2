"""Acknowledged warnings of a runs folder (level 0): ``RUNS/acknowledged.json``, described once.

A known condition of a machine ("this computer has no cpufreq", "single session on purpose") is
acknowledged once for a runs folder with ``edgebench ack CODE --reason TEXT``. Every run keeps its
warnings in run.json as before; what prints them (the verbs, ``runs ID``, ``report``, the summary)
folds the acknowledged ones into one line ("2 acknowledged warnings: ...") instead of repeating them.
``edgebench schema acks`` prints the JSON Schema of the file.
"""
from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import json
import os
import stat
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


MAX_ACKS_DEPTH = 8     # the format nests 3 deep; a file of nested brackets is refused before it is parsed
LOCK_FILE = ".acknowledged.lock"


def _depth(raw: bytes) -> int:
    """How deep ``[`` and ``{`` nest in a JSON text (strings skipped), without parsing it."""
    depth = deepest = 0
    in_str = esc = False
    for b in raw:
        if in_str:
            if esc:
                esc = False
            elif b == 0x5C:
                esc = True
            elif b == 0x22:
                in_str = False
        elif b == 0x22:
            in_str = True
        elif b in (0x5B, 0x7B):
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_ACKS_DEPTH:
                    return deepest
        elif b in (0x5D, 0x7D):
            depth -= 1
    return deepest


def _load(runs_dir) -> Optional[AcksFile]:
    """The validated file, None without one; ResultError (one line) for a link, anything but a regular
    file, more than 1 MB, brackets nested deeper than the format, or a file that does not read."""
    from edgebench.results.files import read_regular

    p = acks_path(runs_dir)
    fix = f"fix it or remove it (edgebench ack --list --runs-dir {runs_dir})"
    raw = read_regular(p, MAX_ACKS_BYTES, "acknowledgements file")
    if raw is None:
        return None
    if len(raw) > MAX_ACKS_BYTES:
        raise ResultError(f"{p} is larger than 1 MB", "remove it, or edit it down")
    if _depth(raw) > MAX_ACKS_DEPTH:
        raise ResultError(f"{p} nests deeper than {MAX_ACKS_DEPTH} levels, not an acknowledgements file", fix)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise ResultError(f"{p} is not readable JSON ({type(exc).__name__})", fix) from None
    return validate(AcksFile, data, str(p), ResultError, "fix it or remove it")


def read_acks(runs_dir) -> dict:
    """``{code: reason}`` acknowledged for ``runs_dir`` (empty without the file); ResultError (one line
    naming the file and the key) for a file that does not read, is a link or is out of bounds."""
    doc = _load(runs_dir)
    return {a.code: a.reason for a in doc.acknowledged} if doc is not None else {}


def _times(runs_dir) -> dict:
    doc = _load(runs_dir)
    return {a.code: a.utc for a in doc.acknowledged} if doc is not None else {}


def _write(runs_dir, acks: dict, when: dict) -> Path:
    from edgebench.results.store import write_text_atomic

    doc = {"format": ACKS_FORMAT, "version": 1,
           "acknowledged": [{"code": c, "reason": r, "utc": when.get(c, "")} for c, r in sorted(acks.items())]}
    validate(AcksFile, doc, ACKS_FILE, UsageError)
    return write_text_atomic(acks_path(runs_dir), json.dumps(doc, indent=2) + "\n")


@contextlib.contextmanager
def _locked(runs_dir):
    """An exclusive lock on ``RUNS/.acknowledged.lock`` (made without following a link) around a
    read-modify-write of the file, so concurrent ``ack``s each keep theirs."""
    try:
        import fcntl
    except ImportError:     # Windows: no advisory locks; one ack at a time is the user's affair
        yield
        return
    path = Path(runs_dir) / LOCK_FILE
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        raise ResultError(f"cannot lock {path} ({exc.strerror or exc})",
                          "it must be a regular file (not a link) in a folder you can write") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ResultError(f"{path} is not a regular file", "remove it")
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def acknowledge(runs_dir, code: str, reason: str = "") -> Path:
    """Acknowledge ``code`` for ``runs_dir`` (the folder must exist); the file written atomically, under
    the folder's lock."""
    if not Path(runs_dir).is_dir():
        raise UsageError(f"runs folder {runs_dir} does not exist", "check --runs-dir")
    with _locked(runs_dir):
        doc = _load(runs_dir)
        acks = {a.code: a.reason for a in doc.acknowledged} if doc is not None else {}
        when = {a.code: a.utc for a in doc.acknowledged} if doc is not None else {}
        acks[code] = reason
        when[code] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        return _write(runs_dir, acks, when)


def withdraw(runs_dir, code: str) -> Optional[Path]:
    """Withdraw the acknowledgement of ``code`` (UsageError if it has none)."""
    with _locked(runs_dir):
        acks, when = read_acks(runs_dir), _times(runs_dir)
        if code not in acks:
            raise UsageError(f"{code} is not acknowledged in {runs_dir}",
                             f"list them: edgebench ack --list --runs-dir {runs_dir}")
        del acks[code]
        return _write(runs_dir, acks, when)


def acks_for(run_dirs, problems: Optional[list] = None) -> dict:
    """The acknowledgements of the runs folders holding ``run_dirs`` (their parents), merged; a folder whose
    file does not read acknowledges nothing (the verbs that print runs never fail on it): its one-line
    reason is appended to ``problems`` for the caller to print as a warning."""
    out: dict = {}
    for parent in sorted({Path(d).parent for d in run_dirs if d}):
        try:
            out.update(read_acks(parent))
        except ResultError as exc:
            if problems is not None:
                problems.append(f"acknowledgements ignored: {exc.one_line()}")
            continue
    return out


__all__ = ["ACKS_FILE", "Ack", "AcksFile", "acknowledge", "acks_for", "acks_path", "read_acks", "withdraw"]
