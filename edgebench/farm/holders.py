"""Which edgebench process holds a labgrid place (level 2a): a record per place on this computer.

labgrid knows a place's holder only as ``HOST/USER``: a command killed outright (SIGKILL, a
crash, a power cut) leaves its places acquired by that same host and user, and the next
command cannot tell a dead holder from a live one. Each :class:`~edgebench.farm.lease.Lease`
therefore records its process while it holds the place (pid, host, boot id and the process's
start time: :func:`edgebench.results.store.writer_info`), in
``$XDG_STATE_HOME/edgebench/farm/<coordinator>/<place>.json`` (default ``~/.local/state``), and
removes the record on release. A place acquired by this host and user whose recorded process
is gone (:func:`edgebench.results.store.writer_gone`) is held by nobody: ``edgebench farm
--take-over PLACE`` releases it.

Library code: raises edgebench errors, never prints.
"""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from edgebench.results.files import atomic_write
from edgebench.results.store import writer_gone, writer_info


def state_dir() -> Path:
    """``$XDG_STATE_HOME/edgebench/farm`` (default ``~/.local/state/edgebench/farm``)."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "edgebench" / "farm"


def record_path(coordinator: str, place: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", coordinator)
    return state_dir() / safe / f"{re.sub(r'[^A-Za-z0-9_.:-]+', '_', place)}.json"


def record(coordinator: str, place: str, **extra) -> Path | None:
    """Record this process as the holder of ``place`` (best effort: a read-only home holds none)."""
    path = record_path(coordinator, place)
    data = {**writer_info(), "place": place, "coordinator": coordinator, "argv": sys.argv[1:][:40], **extra}
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        text = json.dumps(data, indent=2, default=str) + "\n"
        return atomic_write(path, lambda f: f.write(text.encode("utf-8")))
    except (OSError, ValueError):
        return None


def read(coordinator: str, place: str) -> dict | None:
    """The recorded holder of ``place``, or None (no record, or one that does not parse)."""
    try:
        data = json.loads(record_path(coordinator, place).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def forget(coordinator: str, place: str, only_mine: bool = True) -> None:
    """Remove the record of ``place`` (``only_mine``: only when this process wrote it)."""
    held = read(coordinator, place)
    if held is None or (only_mine and held.get("pid") != os.getpid()):
        return
    try:
        record_path(coordinator, place).unlink()
    except OSError:
        pass


def gone(held: dict) -> str | None:
    """Why the process of the holder record ``held`` is known to be gone; None if it may be alive."""
    return writer_gone(held)


def gone_holder(coordinator: str, place: str) -> tuple[dict, str] | None:
    """``(record, why)`` when the edgebench process recorded as holding ``place`` is known to be
    gone; None when there is no record or its process may be alive."""
    held = read(coordinator, place)
    if not held:
        return None
    why = gone(held)
    return (held, why) if why else None


def describe(held: dict) -> str:
    """'edgebench pid 4242 (bench ...)' for messages."""
    argv = " ".join(str(a) for a in (held.get("argv") or [])[:3])
    return f"edgebench pid {held.get('pid')}" + (f" ({argv} ...)" if argv else "")


__all__ = ["describe", "forget", "gone", "gone_holder", "read", "record", "record_path", "state_dir"]
