"""Child processes that die with edgebench (level 2).

Every long-lived child edgebench starts (local agents, the posix firmware, QEMU, socat)
goes through :func:`spawn_tied`:

- it runs in a process group of its own (``start_new_session``), so a terminal's Ctrl-C
  reaches edgebench first and edgebench decides how its children stop, and
  :func:`stop_tied` can end the child *and* anything it started;
- on Linux it gets a parent-death signal (``prctl(PR_SET_PDEATHSIG, SIGKILL)``): when
  edgebench dies, however it dies (SIGKILL included), the kernel kills the child. The
  signal fires when the *thread* that spawned the child exits, so spawn from the main
  thread or from a thread that lives as long as the child (edgebench does).

On systems without ``prctl`` (macOS) only the process group is set, and :func:`stop_tied`
on every normal exit path is what ends the child.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
from pathlib import Path

_PR_SET_PDEATHSIG = 1


def _libc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:  # pragma: no cover - every Linux libc has it
        return None


_LIBC = _libc()


def _die_with_parent() -> None:  # runs in the child between fork and exec
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def spawn_tied(argv: list, **popen_kwargs) -> subprocess.Popen:
    """``subprocess.Popen(argv, ...)`` in its own session, killed by the kernel if edgebench dies.

    ``argv`` is a list (never a shell string). Keyword arguments go to Popen unchanged,
    except ``start_new_session`` and ``preexec_fn``, which this function owns.
    """
    if isinstance(argv, (str, bytes)):
        raise TypeError("spawn_tied takes an argv list, not a shell string")
    popen_kwargs.pop("start_new_session", None)
    popen_kwargs.pop("preexec_fn", None)
    return subprocess.Popen(list(argv), start_new_session=True,
                            preexec_fn=_die_with_parent if _LIBC is not None else None, **popen_kwargs)


def stop_tied(proc: subprocess.Popen, grace_s: float = 2.0) -> int | None:
    """End ``proc`` and its process group: SIGTERM, then SIGKILL after ``grace_s``. Returns its code."""
    if proc.poll() is None:
        _signal_group(proc, signal.SIGTERM)
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            pass
    # the group may outlive its leader (a child the child started): kill what is left
    _signal_group(proc, signal.SIGKILL)
    try:
        return proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL cannot be ignored
        return None


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)  # the child leads its own group (start_new_session)
    except (ProcessLookupError, PermissionError):
        try:
            proc.send_signal(sig)
        except (ProcessLookupError, OSError):
            pass


def proc_stat(pid: int) -> tuple | None:
    """(parent pid, state letter, start time in clock ticks, name) of a process from Linux's
    /proc/<pid>/stat, or None when it is gone (or elsewhere than Linux)."""
    try:
        raw = Path(f"/proc/{int(pid)}/stat").read_text()
    except (OSError, ValueError):
        return None
    try:  # "pid (comm) state ppid ...": comm may hold spaces and parentheses; field 22 is starttime
        rest = raw[raw.rindex(")") + 2:].split()
        return int(rest[1]), rest[0], int(rest[19]), raw[raw.index("(") + 1:raw.rindex(")")]
    except (ValueError, IndexError):
        return None


def descendants(pid: int) -> dict:
    """{pid: (start time, name)} of every live process below ``pid`` (Linux; {} elsewhere).

    With the start time a pid names one process even after the pid is reused, so a caller
    can ask later, with :func:`still_alive`, whether exactly these processes are gone.
    """
    children: dict = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return {}
    for entry in entries:
        if entry.isdigit():
            st = proc_stat(int(entry))
            if st is not None and st[1] != "Z":
                children.setdefault(st[0], []).append((int(entry), st))
    out, todo = {}, [pid]
    while todo:
        for child, st in children.get(todo.pop(), []):
            out[child] = (st[2], st[3])
            todo.append(child)
    return out


def still_alive(procs: dict) -> dict:
    """{pid: name} of those of ``procs`` (from :func:`descendants`) still running: the same pid
    and start time, and not a zombie (a zombie has stopped; only its exit status is left)."""
    out = {}
    for pid, (start, name) in procs.items():
        st = proc_stat(pid)
        if st is not None and st[2] == start and st[1] != "Z":
            out[pid] = name
    return out


__all__ = ["spawn_tied", "stop_tied", "descendants", "still_alive", "proc_stat"]
