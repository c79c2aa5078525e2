"""The embedded results store (level 2a): a DuckDB index over a runs folder, with SQL views.

The runs folder stays the source of truth; the index (``<runs>/.edgebench-index.duckdb``)
holds, per run folder, the rows :func:`edgebench.store.rows.result_rows` makes of it, and the
folder's modification time when it was read. It is kept up to date incrementally:

* :meth:`EmbeddedStore.append` (what every run-writing verb calls) reads the one new run
  and inserts its rows: no scan of the other folders;
* :meth:`EmbeddedStore.refresh` (before a read) lists the folder names and their
  modification times (one ``stat`` each) and reads only the folders that are new or changed
  since the index saw them, and forgets those that are gone.

A folder that is not a valid edgebench run (foreign, tampered, holding a link out of it), or
that claims a run id the index holds from another folder with other samples, is refused: it
is remembered with its one-line problem (:meth:`EmbeddedStore.problems`) and the rest of the
history reads as before. Queries go through the views ``runs``, ``figures`` (figure rows with
their series key) and ``samples`` (``read_parquet`` over the indexed runs' samples files).

The index is a cache: deleting it loses nothing (the next read rebuilds it), and one of an
older layout is rebuilt. Only a verb that writes a run into the folder creates it (the first
:meth:`EmbeddedStore.append`): a verb that only reads (report, check, compare, history,
``load_runs``) uses the index when it is already there and writable, and otherwise indexes the
folder in memory, so reading a results folder never leaves a file in it (``history
--changes``, which asks for its change points to be kept, makes it too). DuckDB lets one process write a database file at a time; a writer
that finds it locked for longer than :data:`LOCK_WAIT_S` leaves the run to the next refresh.
"""
from __future__ import annotations

import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path

from edgebench.errors import ResultError, StoreError
from edgebench.results.files import refuse_link
from edgebench.results.store import RUN_JSON, SAMPLES
from edgebench.store.base import ADDED, ALREADY, METRICS, AppendOutcome, ChangePoint, SeriesKey
from edgebench.store.rows import FIGURE_COLUMNS, RUN_COLUMNS, RunRows, point_of, run_rows

INDEX = ".edgebench-index.duckdb"
SCHEMA_VERSION = 1
LOCK_WAIT_S = 5.0
KEY_COLUMNS = ("model", "board", "runtime", "kernels", "threads", "scenario")

_TABLES = f"""
CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS folder_state (folder VARCHAR PRIMARY KEY, mtime_ns BIGINT, run_id VARCHAR,
                                         problem VARCHAR);
CREATE TABLE IF NOT EXISTS run_rows (folder VARCHAR PRIMARY KEY, created_epoch DOUBLE, flat VARCHAR,
    {", ".join(f"{c} VARCHAR" for c in RUN_COLUMNS if c != "path")});
CREATE TABLE IF NOT EXISTS figure_rows (folder VARCHAR, run_id VARCHAR, metric VARCHAR, value DOUBLE,
    ci_low DOUBLE, ci_high DOUBLE, se_log DOUBLE, df DOUBLE, figure_label VARCHAR);
CREATE TABLE IF NOT EXISTS change_points (series VARCHAR, metric VARCHAR, position INTEGER, doc VARCHAR);
"""


_TABLE_NAMES = ("meta", "folder_state", "run_rows", "figure_rows", "change_points")


def _epoch(text) -> float:
    try:
        t = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    return (t if t.tzinfo else t.replace(tzinfo=timezone.utc)).timestamp()


def _mtime_ns(path: Path) -> int | None:
    """The latest modification time of a run folder and its two files (a rename into the folder
    changes the folder's; an in-place edit changes only the file's)."""
    try:
        times = [path.stat().st_mtime_ns]
    except OSError:
        return None
    for name in (RUN_JSON, SAMPLES):
        try:
            times.append((path / name).stat().st_mtime_ns)
        except OSError:
            pass
    return max(times)


def _writable(path: Path) -> bool:
    """Whether the index at ``path`` can be written: its folder (DuckDB keeps a write-ahead log
    beside it) and, when it exists, the file."""
    return os.access(path.parent, os.W_OK) and (not os.path.lexists(path) or os.access(path, os.W_OK))


def _connect(path: Path, wait_s: float = LOCK_WAIT_S, create: bool = False):
    """``(database, on disk)``: the index database at ``path`` when it exists (``create``: or is to be
    made) and can be written; otherwise in memory (a read of a folder without an index, or a
    read-only share: every read then indexes the folder afresh)."""
    import duckdb

    if not (create or os.path.lexists(path)) or not _writable(path):
        return duckdb.connect(":memory:"), False
    refuse_link(path, "index")
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return duckdb.connect(str(path)), True
        except duckdb.IOException as exc:   # another process holds the write lock
            if time.monotonic() >= deadline:
                raise StoreError(f"the runs index {path} is busy ({exc})".splitlines()[0],
                                 "another edgebench process is writing it; try again") from None
            time.sleep(0.05)


class EmbeddedStore:
    """A :class:`~edgebench.store.base.ResultsStore` over the runs folder ``root`` (module doc)."""

    def __init__(self, root="runs", url: str = "", wait_s: float = LOCK_WAIT_S):
        self.root = Path(root)
        self.url = url or f"duckdb:{self.root}"
        if not self.root.is_dir():
            raise ResultError(f"no runs folder {self.root}", "give the folder the runs are in (default: runs)")
        self.path, self.wait_s = self.root / INDEX, wait_s
        self.db, self.on_disk = _connect(self.path, wait_s)     # created by the first append only
        self._samples_stale = True
        self._prepare()
        #: what each refresh read: folder names (read_result was called on these only)
        self.last_read: list = []

    # ------------------------------------------------------------------ set-up
    def _prepare(self) -> None:
        self.db.execute(_TABLES)
        row = self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is not None and row[0] != str(SCHEMA_VERSION):   # an index of another layout: rebuilt
            for table in ("folder_state", "run_rows", "figure_rows", "change_points", "meta"):
                self.db.execute(f"DROP TABLE IF EXISTS {table}")
            self.db.execute(_TABLES)
        if row is None or row[0] != str(SCHEMA_VERSION):     # an index up to date is not written by opening it
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])
        self._views()

    def _persist(self) -> None:
        """Put the index on disk for an append (a run written into the folder), with what this
        store has indexed in memory so far; nothing when the folder cannot be written."""
        if self.on_disk or not _writable(self.path):
            return
        import duckdb

        refuse_link(self.path, "index")
        if not os.path.lexists(self.path):
            name = str(self.path).replace("'", "''")
            mem = self.db.execute("SELECT current_database()").fetchone()[0]
            try:
                self.db.execute(f"ATTACH '{name}' AS disk")
            except duckdb.Error:        # another process made it meanwhile: that one is used below
                pass
            else:
                try:
                    self.db.execute(_TABLES.replace("EXISTS ", "EXISTS disk."))
                    for table in _TABLE_NAMES:
                        self.db.execute(f"INSERT INTO disk.{table} SELECT * FROM {mem}.main.{table}")
                finally:
                    self.db.execute("DETACH disk")
        self.db.close()
        try:
            self.db, self.on_disk = _connect(self.path, self.wait_s, create=True)
        except (StoreError, duckdb.Error):          # busy: this append stays in memory, the next refresh has it
            self.db, self.on_disk = duckdb.connect(":memory:"), False
        self._prepare()

    def _views(self) -> None:
        root = str(self.root.resolve()).replace("'", "''")
        cols = ", ".join(c for c in RUN_COLUMNS if c != "path")
        self.db.execute(f"CREATE OR REPLACE TEMP VIEW runs AS SELECT {cols}, '{root}/' || folder AS path, "
                        "created_epoch FROM run_rows")
        keys = ", ".join(f"r.{c}" for c in KEY_COLUMNS)
        self.db.execute(f"CREATE OR REPLACE TEMP VIEW figures AS SELECT f.run_id, f.metric, f.value, f.ci_low, "
                        f"f.ci_high, f.se_log, f.df, f.figure_label, {keys}, r.created_utc, r.created_epoch "
                        "FROM figure_rows f JOIN run_rows r USING (folder)")
        self._samples_stale = True

    def _samples_view(self) -> None:
        """The ``samples`` view over the indexed runs' samples files (an explicit list: a refused
        folder's file is never read); made when a query first needs it."""
        self._samples_stale = False
        root = self.root.resolve()
        files = [(str(root / folder / SAMPLES), folder) for (folder,) in
                 self.db.execute("SELECT folder FROM run_rows WHERE samples_digest <> '' ORDER BY folder").fetchall()]
        if files:
            listed = ", ".join("'" + f.replace("'", "''") + "'" for f, _ in files)
            self.db.execute(
                f"CREATE OR REPLACE TEMP VIEW samples AS SELECT r.run_id, s.* EXCLUDE (filename) "
                f"FROM read_parquet([{listed}], filename = true, union_by_name = true) s "
                f"JOIN run_rows r ON s.filename = '{str(root).replace(chr(39), chr(39) * 2)}/' || r.folder || '/{SAMPLES}'")
        else:
            self.db.execute("CREATE OR REPLACE TEMP VIEW samples AS SELECT CAST(NULL AS VARCHAR) AS run_id "
                            "WHERE false")

    # ------------------------------------------------------------------ writing
    def append(self, run_dir) -> AppendOutcome:
        """Index the run in ``run_dir`` (a folder of this runs folder): ResultError for a folder that
        is not a valid run, StoreError when its run id is held with other samples (module doc)."""
        d = Path(run_dir)
        if d.resolve().parent != self.root.resolve():
            raise StoreError(f"{d} is not a folder of the runs folder {self.root}",
                             "the embedded store indexes its own runs folder; copy the run there")
        self._persist()
        mtime = _mtime_ns(d)
        try:
            rows = run_rows(d)
        except (ResultError, StoreError) as exc:
            self._remember(d.name, mtime, None, exc.message)
            raise
        return self._insert(d.name, mtime, rows)

    def _insert(self, folder: str, mtime, rows: RunRows) -> AppendOutcome:
        run = rows.run
        digest = run["samples_digest"]
        held = self.db.execute("SELECT folder, samples_digest FROM run_rows WHERE run_id = ?",
                               [run["run_id"]]).fetchall()
        for other, other_digest in held:
            if other != folder and other_digest != digest:
                message = (f"{folder}: run {run['run_id']} is already on record from {other} with other samples "
                           f"(a copy that was changed, or a forged id): refused")
                self._remember(folder, mtime, run["run_id"], message)
                raise StoreError(message, "keep one copy of a run; measure again for a new one")
            if other != folder:          # the same run copied into another folder: on record once
                self._remember(folder, mtime, run["run_id"], None)
                return AppendOutcome(run["run_id"], ALREADY, digest)
        same = [h for h in held if h[0] == folder]
        if same and same[0][1] == digest and self._state(folder) == mtime:
            return AppendOutcome(run["run_id"], ALREADY, digest)
        from edgebench.results.table import flat_row

        flat = json.dumps(flat_row(rows.result, self.root / folder), default=str)
        values = [run[c] if c != "labels" else json.dumps(run[c], sort_keys=True) for c in RUN_COLUMNS if c != "path"]
        self.db.execute("BEGIN TRANSACTION")
        try:
            self.db.execute("DELETE FROM run_rows WHERE folder = ?", [folder])
            self.db.execute("DELETE FROM figure_rows WHERE folder = ?", [folder])
            self.db.execute(f"INSERT INTO run_rows VALUES (?, ?, ?, {', '.join('?' for c in RUN_COLUMNS if c != 'path')})",
                            [folder, _epoch(run["created_utc"]), flat, *values])
            if rows.figures:
                self.db.executemany("INSERT INTO figure_rows VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                    [[folder, *[f.get(c) for c in FIGURE_COLUMNS]] for f in rows.figures])
            self.db.execute("INSERT OR REPLACE INTO folder_state VALUES (?, ?, ?, NULL)",
                            [folder, mtime, run["run_id"]])
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        if not same and digest:
            self._samples_stale = True
        return AppendOutcome(run["run_id"], ALREADY if same and same[0][1] == digest else ADDED, digest)

    def _state(self, folder: str):
        row = self.db.execute("SELECT mtime_ns FROM folder_state WHERE folder = ?", [folder]).fetchone()
        return None if row is None else row[0]

    def _remember(self, folder: str, mtime, run_id, problem) -> None:
        self.db.execute("INSERT OR REPLACE INTO folder_state VALUES (?, ?, ?, ?)", [folder, mtime, run_id, problem])
        if problem:
            self._samples_stale = True
            self.db.execute("DELETE FROM run_rows WHERE folder = ?", [folder])
            self.db.execute("DELETE FROM figure_rows WHERE folder = ?", [folder])

    def refresh(self) -> list:
        """Bring the index up to date with the folder (module doc); the problems of the folders it
        read now and refused (one line each)."""
        known = dict(self.db.execute("SELECT folder, mtime_ns FROM folder_state").fetchall())
        seen, todo = set(), []
        with os.scandir(self.root) as it:
            for entry in it:
                if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
                    continue
                seen.add(entry.name)
                mtime = _mtime_ns(Path(entry.path))
                if known.get(entry.name) != mtime:
                    todo.append((entry.name, mtime))
        gone = [f for f in known if f not in seen]
        for folder in gone:
            for table in ("folder_state", "run_rows", "figure_rows"):
                self.db.execute(f"DELETE FROM {table} WHERE folder = ?", [folder])
        self.last_read, problems = [], []
        for folder, mtime in sorted(todo):
            d = self.root / folder
            if not (d / RUN_JSON).exists():
                continue                                  # being created, or not a run: looked at again
            self.last_read.append(folder)
            try:
                rows = run_rows(d)
            except StoreError:                            # still running: looked at again next time
                continue
            except ResultError as exc:
                self._remember(folder, mtime, None, exc.message)
                problems.append(exc.message)
                continue
            try:
                self._insert(folder, mtime, rows)
            except StoreError as exc:
                problems.append(exc.message)
        if gone or todo:
            self._samples_stale = True
        return problems

    def problems(self) -> list:
        """``[(folder, problem)]`` of every folder the index refused (one line each)."""
        return self.db.execute("SELECT folder, problem FROM folder_state WHERE problem IS NOT NULL "
                               "ORDER BY folder").fetchall()

    # ------------------------------------------------------------------ reading
    def series(self) -> list:
        cols = ", ".join(KEY_COLUMNS)
        rows = self.db.execute(f"SELECT DISTINCT {cols} FROM run_rows ORDER BY {cols}").fetchall()
        return [SeriesKey(*(v or "" for v in row)) for row in rows]

    def read_series(self, key: SeriesKey, metric: str) -> list:
        if metric not in METRICS:
            raise StoreError(f"unknown metric {metric!r}", f"one of {', '.join(METRICS)}")
        where = " AND ".join(f"r.{c} = ?" for c in KEY_COLUMNS)
        got = self.db.execute(
            "SELECT r.run_id, r.created_utc, r.model_sha256, r.conditions_digest, r.labels, r.figure_label, "
            "f.metric, f.value, f.ci_low, f.ci_high, f.se_log, f.df, f.figure_label "
            f"FROM run_rows r JOIN figure_rows f USING (folder) WHERE {where} AND f.metric = ? "
            "AND r.status = 'complete' ORDER BY r.created_epoch, r.run_id",
            [*(getattr(key, c) for c in KEY_COLUMNS), metric]).fetchall()
        out, seen = [], set()
        for row in got:
            if row[0] in seen:
                continue
            seen.add(row[0])
            run = dict(zip(("run_id", "created_utc", "model_sha256", "conditions_digest", "labels", "figure_label"),
                           row[:6]))
            fig = dict(zip(("metric", "value", "ci_low", "ci_high", "se_log", "df", "figure_label"), row[6:]))
            out.append(point_of(run, fig))
        return out

    def flat_rows(self) -> list:
        """The :func:`~edgebench.results.table.flat_row` of every indexed run (folder name order)."""
        out = []
        for folder, text in self.db.execute("SELECT folder, flat FROM run_rows ORDER BY folder").fetchall():
            row = json.loads(text)
            row["path"] = str(self.root / folder)
            out.append(row)
        return out

    def indexed_folders(self) -> set:
        return {f for (f,) in self.db.execute("SELECT folder FROM run_rows").fetchall()}

    def record_changes(self, key: SeriesKey, metric: str, changes: list) -> None:
        """Keep ``changes`` beside the series (``history --changes`` asks for it: the index is made)."""
        self._persist()
        series = json.dumps(key.to_dict(), sort_keys=True)
        self.db.execute("DELETE FROM change_points WHERE series = ? AND metric = ?", [series, metric])
        if changes:
            self.db.executemany("INSERT INTO change_points VALUES (?, ?, ?, ?)",
                                [[series, metric, i, json.dumps(c.to_dict())] for i, c in enumerate(changes)])

    def changes(self, key: SeriesKey, metric: str) -> list:
        series = json.dumps(key.to_dict(), sort_keys=True)
        rows = self.db.execute("SELECT doc FROM change_points WHERE series = ? AND metric = ? ORDER BY position",
                               [series, metric]).fetchall()
        return [ChangePoint.from_dict(json.loads(doc)) for (doc,) in rows]

    def sql(self, query: str, params=None) -> list:
        """Rows of a read-only query over the views ``runs``, ``figures``, ``samples``."""
        if self._samples_stale and "samples" in query.lower():
            self._samples_view()
        return self.db.execute(query, params or []).fetchall()

    def close(self) -> None:
        db, self.db = getattr(self, "db", None), None
        if db is not None:
            db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def load_runs(root="runs"):
    """The runs under ``root`` as :func:`edgebench.results.table.runs_frame` (what
    ``edgebench.load_runs`` returns), read through the index: only new or changed folders are
    read; runs still being written are read directly. A refused folder is left out with one
    :class:`~edgebench.errors.InputWarning`. Anything but a runs folder (a run folder, a run id),
    or an index another process is writing, is read without the index."""
    import warnings

    from edgebench.errors import InputWarning
    from edgebench.results import table
    from edgebench.results.store import read_result

    r = Path(root)
    if not r.is_dir() or (r / RUN_JSON).exists():
        return table.load_runs(root)
    try:
        store = EmbeddedStore(r, wait_s=1.0)
    except StoreError:
        return table.load_runs(root)
    with store:
        store.refresh()
        rows = store.flat_rows()
        refused = dict(store.problems())
        indexed = store.indexed_folders()
    for problem in refused.values():
        warnings.warn(f"skipped {problem}", InputWarning, stacklevel=2)
    for d in table.find_runs(r):            # not indexed: still running, or a copy of an indexed run
        if d.name in indexed or d.name in refused:
            continue
        try:
            result = read_result(d)
        except ResultError as exc:
            warnings.warn(f"skipped {exc.message}", InputWarning, stacklevel=2)
            continue
        rows.append(table.flat_row(result, d))
    rows.sort(key=lambda row: Path(row["path"]).name)
    return table.runs_frame(rows)


def connect(url: str, root="runs") -> EmbeddedStore:
    """The embedded store of ``url`` (``""``, ``duckdb:``, ``duckdb:RUNS_FOLDER`` or a runs folder),
    its index brought up to date."""
    text = str(url or "")
    path = text[len("duckdb:"):] if text.startswith("duckdb:") else text
    store = EmbeddedStore(Path(path) if path else Path(root), url=text)
    return store


__all__ = ["INDEX", "EmbeddedStore", "connect", "load_runs"]
