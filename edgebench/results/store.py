"""Run folders on disk (level 0: load and dump only).

A run is a folder ``<root>/<YYYYmmdd-HHMMSS>-<model>-<board>/`` holding

* ``run.json``: the :class:`~edgebench.results.model.RunResult` (written
  atomically: a temporary file renamed over the old one);
* ``samples.parquet``: one row per timed inference (device clock), columns
  ``phase`` (``cold``/``warmup``/``measure``), ``t_start_ns``, and the stage
  durations in seconds ``e2e_s``, ``prep_s``, ``set_s``, ``invoke_s``, ``get_s``.

While a run is in progress its status is ``running`` and ``extra.writer`` names
the process writing it (pid, host name, boot id, process start time); a run
stopped by Ctrl-C, a signal or an error keeps what it measured and says
``incomplete`` with the reason. A run that measured nothing is removed, so no
folder looks complete that is not. A ``running`` run whose writer is gone (same
host, pid gone or reused, or the computer restarted since) is *listed* as
``abandoned`` (:func:`run_status`); its folder is not changed.

Measuring verbs append their samples as they come to a *journal*
(:func:`open_journal`, :mod:`edgebench.results.journal`): checksummed chunks in segments
``<name>.journal.NNNN.arrows``, fsync'd after every chunk, so a run killed at any moment
(SIGKILL, power loss) keeps every chunk appended before; :func:`read_journal` reads back
the intact ones (a torn last chunk is ignored, a damaged one ends what is used). At the
end the verb writes ``samples.parquet`` with :func:`write_samples` (atomic, durable) and
removes the journal. A recovery (``--recover``) starts from :func:`read_unfinished`.

Run folders are shared (CI caches, a lab's NAS): files are written without following
symbolic links, and a folder holding a link that leads out of it is refused
(:mod:`edgebench.results.files`).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import sys
import time
from pathlib import Path

from edgebench.errors import InputWarning, ResultError
from edgebench.results import journal as _journal
from edgebench.results.files import (
    atomic_write,
    check_run_folder,
    check_writable_folder,
    fsync_dir,  # noqa: F401 (quantize.sidecar's import of it)
)
from edgebench.results.journal import Journal
from edgebench.results.model import RunResult, RunWarning

RUN_JSON = "run.json"
SAMPLES = "samples.parquet"


def slug(text: str) -> str:
    """``text`` made safe for a file name: runs of other characters become ``-``, at most 60 long."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:60] or "x"


def new_run_dir(root, model_name: str, board_name: str, now: float | None = None) -> Path:
    """Create and return a fresh run folder under ``root`` (never reuses one)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now if now is not None else time.time()))
    base = Path(root) / f"{stamp}-{slug(model_name)}-{slug(board_name)}"
    path, k = base, 1
    while True:
        try:
            path.mkdir(parents=True, exist_ok=False)
            return path
        except FileExistsError:
            k += 1
            path = base.with_name(f"{base.name}-{k}")


def write_result(run_dir, result: RunResult) -> Path:
    """Write run.json atomically and durably (temporary file, fsync, rename).

    While ``result.status`` is ``running`` the file also names this process as its
    writer (``extra.writer``), so a listing can tell a live run from an abandoned one;
    a finished run carries no writer. A recovered run (``extra.recovery``, see
    :func:`read_unfinished`) gets the warnings saying what its recovery left out.
    """
    path = check_writable_folder(run_dir) / RUN_JSON
    if result.extra.recovery:   # a recovered run always says what its recovery left out
        result.warnings = [w for w in result.warnings if w.code not in RECOVERY_CODES] + recovery_warnings(result)
    data = result.to_dict()                   # the document written: plain dicts from here on
    extra = {k: v for k, v in data.get("extra", {}).items() if k != "writer"}
    if result.status == "running":
        extra["writer"] = writer_info()
    data["extra"] = extra
    text = json.dumps(data, indent=2, default=_json_default) + "\n"
    atomic_write(path, lambda f: f.write(text.encode("utf-8")))
    return path


def _json_default(obj):
    import numpy as np  # only for numpy scalars that slipped into a dict

    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def write_parquet(path, frame) -> Path:
    """Write a pandas DataFrame as Parquet atomically and durably (temporary file, fsync, rename)."""
    path = Path(path)
    atomic_write(path, lambda f: frame.to_parquet(f, index=False))
    return path


def write_text_atomic(path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically and durably (temporary file, fsync, rename)."""
    path = Path(path)
    atomic_write(path, lambda f: f.write(text.encode("utf-8")))
    return path


def write_samples(run_dir, frame) -> Path:
    """Write the per-inference samples (a pandas DataFrame) as ``samples.parquet``, atomically."""
    return write_parquet(Path(run_dir) / SAMPLES, frame)


# ---------------------------------------------------------------- who writes a running run

def _boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


def _start_ticks(pid: int) -> int | None:
    """A process's start time (clock ticks after boot, Linux /proc), None where unknown."""
    try:
        raw = Path(f"/proc/{int(pid)}/stat").read_text()
    except (OSError, ValueError):
        return None
    try:  # "pid (comm) state ppid ...": comm may hold spaces and parentheses; field 22 is starttime
        return int(raw[raw.rindex(")") + 2:].split()[19])
    except (ValueError, IndexError):
        return None


def writer_info() -> dict:
    """This process as the writer of a running run: pid, host name, boot id, start time."""
    return {"pid": os.getpid(), "host": socket.gethostname(), "boot_id": _boot_id(),
            "process_start_ticks": _start_ticks(os.getpid()), "platform": sys.platform}


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    except (OSError, OverflowError, ValueError):
        return False
    return True


def abandoned_reason(result: RunResult) -> str | None:
    """Why a ``running`` run is known to have no live writer any more; None when it may be alive
    (:func:`writer_gone` of its ``extra.writer``)."""
    if result.status != "running":
        return None
    return writer_gone(result.extra.writer)


def writer_gone(w) -> str | None:
    """Why the process ``w`` (a :func:`writer_info` record) is known to be gone; None when it may
    be alive.

    Only a process on this computer can be checked: same host name and (where recorded)
    the same boot; then its pid must exist and, where recorded, have the same start time
    (a reused pid is another process). A record without that information, or written on
    another host, is never called gone.
    """
    if not isinstance(w, dict) or w.get("host") != socket.gethostname():
        return None
    try:
        pid = int(w["pid"])
    except (KeyError, TypeError, ValueError):
        return None
    boot = _boot_id()
    if w.get("boot_id") and boot and w["boot_id"] != boot:
        return f"its process (pid {pid}) was running before this computer restarted"
    if pid <= 0 or not _pid_exists(pid):
        return f"its process (pid {pid} on {w['host']}) is gone"
    started = w.get("process_start_ticks")
    if started is not None and w.get("boot_id") and boot:
        now = _start_ticks(pid)
        if now is not None and now != started:
            return f"its process (pid {pid} on {w['host']}) is gone; the pid now belongs to another process"
    return None


def run_status(result: RunResult) -> str:
    """The status to show for a run: its stored status, or ``abandoned`` for a ``running``
    run whose writer is gone (see :func:`abandoned_reason`)."""
    return "abandoned" if abandoned_reason(result) is not None else result.status


def discard_run_dir(run_dir) -> None:
    shutil.rmtree(run_dir, ignore_errors=True)


MAX_RUN_JSON_BYTES = 16 * 2 ** 20   # the largest run.json edgebench reads (the runs it writes: under 1 MB)
MAX_NESTING = 64                   # levels of nesting in a run.json (the runs it writes: under 15)


def read_result(run_dir) -> RunResult:
    """The run.json of a run folder (or the file itself), validated against its schema
    (:class:`~edgebench.results.model.RunResult`): ResultError, one line naming the file and the
    key, when it is missing, too large, not JSON, nested too deeply or of the wrong shape."""
    p = Path(run_dir)
    path = p / RUN_JSON if _is_dir(p) else p
    if not _exists(path):
        raise ResultError(f"{_short(p)} is not a run folder (no {RUN_JSON})", "list runs with `edgebench runs`")
    check_run_folder(path.parent)
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_RUN_JSON_BYTES + 1)
    except OSError as exc:
        raise ResultError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    return parse_result(raw, str(path))


def parse_result(raw: bytes, source: str) -> RunResult:
    """A run.json's bytes as a RunResult: bounded in size and nesting, then validated."""
    if len(raw) > MAX_RUN_JSON_BYTES:
        raise ResultError(f"{source}: larger than {MAX_RUN_JSON_BYTES // 2 ** 20} MB, more than any run edgebench "
                          "writes", "the file is damaged or not a run")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        what = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise ResultError(f"{source}: unreadable JSON ({what})", "the file is damaged") from None
    depth = _nesting(data)
    if depth > MAX_NESTING:
        raise ResultError(f"{source}: nested {depth} levels deep, more than any run edgebench writes "
                          f"({MAX_NESTING})", "the file is damaged")
    return RunResult.from_dict(data, source)


def _nesting(doc) -> int:
    """How many levels of lists and objects ``doc`` nests (counted without recursion)."""
    deepest, todo = 0, [(doc, 1)]
    while todo:
        node, level = todo.pop()
        if isinstance(node, dict):
            node = list(node.values())
        if isinstance(node, list):
            deepest = max(deepest, level)
            todo.extend((child, level + 1) for child in node if isinstance(child, (dict, list)))
    return deepest


def _exists(path: Path) -> bool:
    try:                      # a name too long for the system (ENAMETOOLONG) names nothing
        return path.exists()
    except OSError:
        return False


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


def _short(ref, limit: int = 80) -> str:
    """A user's run reference for a message: at most ``limit`` characters."""
    text = str(ref)
    return text if len(text) <= limit else f"{text[:limit - 1]}…"


def read_samples(run_dir):
    """The run's ``samples.parquet``; for a run that never got that far (still running, or
    killed), what its journal holds; an empty DataFrame when there is neither."""
    import pandas as pd

    path = check_run_folder(run_dir) / SAMPLES
    if not path.exists():
        return read_journal(run_dir) if journal_paths(run_dir) else pd.DataFrame()
    return pd.read_parquet(path)


def find_runs(root="runs") -> list[Path]:
    """Run folders under ``root`` (newest last); ``root`` may itself be a run folder."""
    r = Path(root)
    if _exists(r / RUN_JSON):
        return [r]
    if not _is_dir(r):
        return []
    return sorted(p.parent for p in r.glob(f"*/{RUN_JSON}"))


def resolve_run(ref, root="runs") -> Path:
    """A run folder from a path, ``latest``, a unique prefix of its folder name, or a unique
    prefix of its run id (the short id ``edgebench runs`` lists)."""
    p = Path(ref)
    if _exists(p / RUN_JSON):
        return p
    runs = find_runs(root)
    if ref == "latest" and runs:
        return runs[-1]
    text = str(ref)
    hits = [r for r in runs if r.name.startswith(text)]
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        raise ResultError(f"{_short(ref)!r} matches {len(hits)} runs under {root}", "give more of the name")
    for r in runs:
        try:
            if read_result(r).run_id.startswith(text):
                hits.append(r)
        except ResultError:  # a damaged run.json is not this run
            continue
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise ResultError(f"no run {_short(ref)!r} under {root}", "list runs with `edgebench runs`")
    raise ResultError(f"run id {_short(ref)!r} matches {len(hits)} runs under {root}", "give more of the id")


def read_results(refs, root="runs") -> list:
    """``[(folder, RunResult)]`` of run references (:func:`resolve_run`); a run whose run.json does not
    read or validate is skipped with one :class:`~edgebench.errors.InputWarning` naming the file and
    the key, so one bad run hides no other. ResultError when none is left (the first one's problem);
    an unknown reference is an error, not a skip."""
    import warnings

    out, problems = [], []
    for d in dict.fromkeys(resolve_run(ref, root) for ref in refs):
        try:
            out.append((d, read_result(d)))
        except ResultError as exc:
            problems.append(exc)
    if not out and problems:
        raise problems[0]
    for problem in problems:
        warnings.warn(skipped(problem), InputWarning, stacklevel=2)
    return out


def skipped(exc: ResultError) -> str:
    """The warning for a run left out because its run.json does not read: ``skipped FILE: KEY: what``."""
    return f"skipped {exc.message}"


# ---------------------------------------------------------------- journal: samples that survive a kill
# (edgebench.results.journal: checksummed chunks; each new segment keeps a copy of run.json)

JOURNAL_SUFFIX = _journal.SUFFIX
journal_paths = _journal.paths
read_journal = _journal.read
remove_journal = _journal.remove


def open_journal(run_dir, name: str = "samples", durable: bool = True) -> Journal:
    """A :class:`~edgebench.results.journal.Journal` appending to ``<run_dir>/<name>.journal.NNNN.arrows``.

    Segments already there (a resumed run) are kept and numbered after. ``durable``
    fsyncs every chunk (survives power loss, not only a killed process). Each new segment
    starts with a copy of the run's run.json as it is then, so the journal alone can
    finish the run when run.json is damaged (:func:`read_unfinished`).
    """
    d = check_writable_folder(run_dir)
    return Journal(d, name, durable, run_copy=lambda: _run_copy(d))


def _run_copy(run_dir: Path) -> bytes | None:
    try:
        return (run_dir / RUN_JSON).read_bytes() if (run_dir / RUN_JSON).is_file() else None
    except OSError:
        return None


def read_unfinished(run_dir) -> RunResult:
    """The result of a run to recover (``--recover``): its run.json, or, when that is damaged,
    the newest intact copy its journals keep. Either way ``extra.recovery`` says what recovery
    has to go on: where the result came from and what of the journals was damaged (left out)."""
    d = Path(run_dir)
    if not _is_dir(d):
        raise ResultError(f"{_short(d)} is not a run folder", "give the folder of the run to recover")
    check_writable_folder(d)
    damage = {name: _journal.read_chunks(d, name) for name in _journal.names(d)}
    note: dict = {"journal_damage": [line for data in damage.values() for line in data.damage]}
    try:
        result = read_result(d)
    except ResultError as exc:
        copies = [(path.stat().st_mtime_ns, path, text) for data in damage.values() for path, text in data.run_copies]
        for _, path, text in sorted(copies, key=lambda c: c[0], reverse=True):
            try:
                result = RunResult.from_dict(json.loads(text), f"{path.name} (copy of {RUN_JSON})")
            except (ValueError, ResultError):
                continue
            note["run_json"] = (f"{RUN_JSON} was damaged ({exc.message}); the run was recovered from the copy "
                                f"in {path.name}")
            break
        else:
            raise ResultError(f"{exc.message}; no journal of the run keeps an intact copy of it",
                              "nothing to recover this run from") from None
    if note["journal_damage"] or note.get("run_json"):
        result.extra.recovery = note
    return result


RECOVERY_CODES = ("run-json-damaged", "journal-damaged")


def recovery_warnings(result: RunResult) -> list:
    """Run warnings for what a recovery had to leave out (``extra.recovery`` of :func:`read_unfinished`:
    a free-form note)."""
    note: dict = dict(result.extra.recovery or {})
    out = []
    if note.get("run_json"):
        out.append(RunWarning(code="run-json-damaged", message=note["run_json"],
                              remedy="the run's description is the one of the journal's copy: compare it with "
                                     "the command"))
    if note.get("journal_damage"):
        out.append(RunWarning(code="journal-damaged",
                              message="the journal had damaged chunks; the run keeps what came before them: "
                                      + "; ".join(note["journal_damage"]),
                              remedy="check the disk or the copy the run folder came from; run the measurement "
                                     "again"))
    return out
