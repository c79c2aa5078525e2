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
(:func:`open_journal`): Arrow IPC stream segments ``<name>.journal.NNNN.arrows``,
fsync'd after every chunk, so a run killed at any moment (SIGKILL, power loss)
keeps every chunk appended before; :func:`read_journal` reads them back (a torn
last batch is ignored). At the end the verb writes ``samples.parquet`` with
:func:`write_samples` (atomic, durable) and removes the journal.
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
from typing import Any, BinaryIO, Optional

from edgebench.errors import InputWarning, ResultError
from edgebench.results.model import RunResult

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
    a finished run carries no writer.
    """
    path = Path(run_dir) / RUN_JSON
    data = result.to_dict()
    extra = dict(data.get("extra") or {})
    if result.status == "running":
        extra["writer"] = writer_info()
    else:
        extra.pop("writer", None)
    data["extra"] = extra
    text = json.dumps(data, indent=2, default=_json_default) + "\n"
    _atomic_write(path, lambda f: f.write(text.encode("utf-8")))
    return path


def _atomic_write(path: Path, write) -> None:
    """``write(f)`` into a temporary file beside ``path``, fsync it, rename it over ``path``."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise
    fsync_dir(path.parent)


def fsync_dir(path) -> None:
    """fsync a folder, so a file renamed into it survives a power cut (a no-op where a folder
    cannot be opened, e.g. Windows)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # not possible on every system (Windows)
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


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
    _atomic_write(path, lambda f: frame.to_parquet(f, index=False))
    return path


def write_text_atomic(path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically and durably (temporary file, fsync, rename)."""
    path = Path(path)
    _atomic_write(path, lambda f: f.write(text.encode("utf-8")))
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
    """Why a ``running`` run is known to have no live writer any more; None when it may be alive.

    Only a writer on this computer can be checked: same host name and (where recorded)
    the same boot; then its pid must exist and, where recorded, have the same start time
    (a reused pid is another process). A run without writer information, or written on
    another host, is never called abandoned.
    """
    if result.status != "running":
        return None
    w = (result.extra or {}).get("writer")
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
    path = p / RUN_JSON if p.is_dir() else p
    if not path.exists():
        raise ResultError(f"{p} is not a run folder (no {RUN_JSON})", "list runs with `edgebench runs`")
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


def read_samples(run_dir):
    """The run's ``samples.parquet``; for a run that never got that far (still running, or
    killed), what its journal holds; an empty DataFrame when there is neither."""
    import pandas as pd

    path = Path(run_dir) / SAMPLES
    if not path.exists():
        return read_journal(run_dir) if journal_paths(run_dir) else pd.DataFrame()
    return pd.read_parquet(path)


def find_runs(root="runs") -> list[Path]:
    """Run folders under ``root`` (newest last); ``root`` may itself be a run folder."""
    r = Path(root)
    if (r / RUN_JSON).exists():
        return [r]
    if not r.is_dir():
        return []
    return sorted(p.parent for p in r.glob(f"*/{RUN_JSON}"))


def resolve_run(ref, root="runs") -> Path:
    """A run folder from a path, ``latest``, a unique prefix of its folder name, or a unique
    prefix of its run id (the short id ``edgebench runs`` lists)."""
    p = Path(ref)
    if (p / RUN_JSON).exists():
        return p
    runs = find_runs(root)
    if ref == "latest" and runs:
        return runs[-1]
    text = str(ref)
    hits = [r for r in runs if r.name.startswith(text)]
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        raise ResultError(f"{ref!r} matches {len(hits)} runs under {root}", "give more of the name")
    for r in runs:
        try:
            if read_result(r).run_id.startswith(text):
                hits.append(r)
        except ResultError:  # a damaged run.json is not this run
            continue
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise ResultError(f"no run {ref!r} under {root}", "list runs with `edgebench runs`")
    raise ResultError(f"run id {ref!r} matches {len(hits)} runs under {root}", "give more of the id")


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

JOURNAL_SUFFIX = ".arrows"


def journal_paths(run_dir, name: str = "samples") -> list[Path]:
    """The journal segments of ``name`` in ``run_dir``, in the order they were written."""
    return sorted(Path(run_dir).glob(f"{name}.journal.[0-9][0-9][0-9][0-9]{JOURNAL_SUFFIX}"))


class Journal:
    """Append-only, crash-safe sample chunks of one run (see :func:`open_journal`).

    Each :meth:`append` writes one Arrow record batch and (``durable``) fsyncs it
    before returning. A chunk whose columns or types differ from the current
    segment's starts a new segment, so nothing is dropped or coerced silently.
    """

    def __init__(self, run_dir, name: str = "samples", durable: bool = True):
        if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
            raise ValueError(f"journal name {name!r}: letters, digits, '_' and '-' only")
        self.run_dir = Path(run_dir)
        self.name = name
        self.durable = durable
        self.rows = 0
        self.segments: list[Path] = []
        existing = journal_paths(self.run_dir, name)
        self._next = int(existing[-1].name.split(".")[-2]) + 1 if existing else 0
        self._file: Optional[BinaryIO] = None
        self._writer: Any = None     # a pyarrow RecordBatchStreamWriter while a segment is open
        self._schema: Any = None

    def append(self, data) -> int:
        """Append one chunk (a pandas DataFrame, or a dict of equal-length arrays); returns its rows."""
        import pyarrow as pa

        table = _arrow_table(data)
        if table.num_rows == 0:
            return 0
        if self._writer is not None and not table.schema.equals(self._schema):
            if set(table.schema.names) == set(self._schema.names):
                try:
                    table = table.select(self._schema.names).cast(self._schema)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                    self._close_segment()
            else:
                self._close_segment()
        if self._writer is None:
            self._open_segment(table.schema)
        assert self._file is not None
        for batch in table.to_batches():
            self._writer.write_batch(batch)
        self._file.flush()
        if self.durable:
            os.fsync(self._file.fileno())
        self.rows += table.num_rows
        return table.num_rows

    def _open_segment(self, schema) -> None:
        import pyarrow as pa

        path = self.run_dir / f"{self.name}.journal.{self._next:04d}{JOURNAL_SUFFIX}"
        self._next += 1
        self._file = file = open(path, "xb")
        self._writer = pa.ipc.new_stream(file, schema)
        self._schema = schema
        self.segments.append(path)
        if self.durable:
            file.flush()
            os.fsync(file.fileno())
            fsync_dir(self.run_dir)

    def _close_segment(self) -> None:
        if self._writer is not None:
            self._writer.close()  # writes the end-of-stream marker
            self._writer = None
        if self._file is not None:
            self._file.flush()
            if self.durable:
                os.fsync(self._file.fileno())
            self._file.close()
            self._file = None
        self._schema = None

    def close(self) -> None:
        """Finish the current segment; the journal stays on disk (read it with :func:`read_journal`)."""
        self._close_segment()

    def read(self):
        """Everything appended so far (all segments of this name in the folder) as a DataFrame."""
        if self._file is not None:
            self._file.flush()
        return read_journal(self.run_dir, self.name)

    def remove(self) -> None:
        """Close and delete every segment (after their rows were written elsewhere)."""
        self.close()
        remove_journal(self.run_dir, self.name)

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_journal(run_dir, name: str = "samples", durable: bool = True) -> Journal:
    """A :class:`Journal` appending to ``<run_dir>/<name>.journal.NNNN.arrows``.

    Segments already there (a resumed run) are kept and numbered after. ``durable``
    fsyncs every chunk (survives power loss, not only a killed process).
    """
    return Journal(run_dir, name, durable)


def read_journal(run_dir, name: str = "samples"):
    """Every complete chunk journalled under ``name`` as one DataFrame (empty if none).

    A batch cut short by a kill ends its segment; an empty or unreadable segment
    (killed while it was created) contributes nothing. Columns missing from some
    segments are NaN/None there.
    """
    import pandas as pd
    import pyarrow as pa

    frames = []
    for path in journal_paths(run_dir, name):
        batches, schema = [], None
        try:
            with pa.OSFile(str(path), "rb") as f:
                reader = pa.ipc.open_stream(f)
                schema = reader.schema
                while True:
                    try:
                        batches.append(reader.read_next_batch())
                    except StopIteration:
                        break
                    except (pa.ArrowInvalid, OSError):  # torn by a kill
                        break
        except (pa.ArrowInvalid, OSError):
            continue
        if batches:
            frames.append(pa.Table.from_batches(batches, schema=schema).to_pandas())
        elif schema is not None and not frames:
            frames.append(schema.empty_table().to_pandas())
    if not frames:
        return pd.DataFrame()
    frames = [f for f in frames if len(f)] or frames[:1]
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)


def remove_journal(run_dir, name: str = "samples") -> None:
    """Delete the journal segments of ``name`` (call after their rows are safely in Parquet)."""
    for path in journal_paths(run_dir, name):
        try:
            path.unlink()
        except FileNotFoundError:
            pass
    fsync_dir(Path(run_dir))


def _arrow_table(data):
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    if isinstance(data, pa.Table):
        return data
    if not isinstance(data, pd.DataFrame):
        cols = {str(k): np.asarray(v) for k, v in dict(data or {}).items()}
        lengths = {len(v) if v.ndim else 1 for v in cols.values()}
        if len(lengths) > 1:
            raise ValueError(f"journal chunk columns differ in length: {sorted(lengths)}")
        data = pd.DataFrame(cols)
    return pa.Table.from_pandas(data, preserve_index=False)
