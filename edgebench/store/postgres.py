"""A lab's shared results store (level 2a): PostgreSQL for the rows, a folder or S3 bucket for the samples.

``postgresql://USER:PASSWORD@HOST:PORT/DB?samples=SAMPLES_URL`` (or ``$EDGEBENCH_STORE_SAMPLES``
for the samples URL; :mod:`edgebench.store.bucket`) — psycopg 3 (``lab`` extra), imported here only.
The schema is versioned (:mod:`edgebench.store.pg_schema`) and brought up to date on connect.

Appending a run (:meth:`PostgresStore.append`) with many writers at once:

1. the run folder is read and validated (:func:`edgebench.store.rows.run_rows`: a tampered or
   foreign run is refused before anything is sent);
2. its ``samples.parquet`` is put in the bucket under its digest (a no-op when there);
3. one transaction inserts the run row (``ON CONFLICT (run_id) DO NOTHING``), its conditions,
   figures and labels, and commits. A second writer of the same run waits on the first's row
   lock and then finds it: the same samples digest is :data:`~edgebench.store.base.ALREADY`,
   another digest is refused (:class:`~edgebench.errors.StoreError`). A writer killed before
   the commit leaves nothing (PostgreSQL rolls back the transaction of a closed connection);
   at most an orphan samples object, which no run names.

Every message shows the URL without its password (:func:`edgebench.store.open.redact`).
``$EDGEBENCH_STORE_PAUSE_IN_COMMIT`` (seconds) sleeps inside the transaction before the commit:
a test hook (tests/test_store_postgres.py kills a writer there).
"""
from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from edgebench.errors import ResultError, StoreError, StoreUnreachable
from edgebench.results.files import refuse_link
from edgebench.results.model import RunResult
from edgebench.results.store import RUN_JSON, SAMPLES
from edgebench.store.base import ADDED, ALREADY, AppendOutcome, ChangePoint, SeriesKey
from edgebench.store.open import redact
from edgebench.store.rows import RunRows, point_of, run_rows

if TYPE_CHECKING:
    from edgebench.store.bucket import FolderBucket, S3Bucket

SAMPLES_ENV = "EDGEBENCH_STORE_SAMPLES"
PAUSE_ENV = "EDGEBENCH_STORE_PAUSE_IN_COMMIT"
CONNECT_TIMEOUT_S = 5
_KEY = ("model", "board", "runtime", "kernels", "threads", "scenario")
_RUN_COLS = ("run_id", "created_utc", "kind", "status", "figure_label", *_KEY, "model_sha256", "conditions_digest",
             "samples_digest", "samples_url", "edgebench_version", "path", "run_json", "pushed_from")
_INSERT_RUN = (f"INSERT INTO runs ({', '.join(_RUN_COLS)}) VALUES ({', '.join(['%s'] * len(_RUN_COLS))}) "
               "ON CONFLICT (run_id) DO NOTHING RETURNING run_id")


def split_url(url: str) -> tuple:
    """(the libpq URL, the samples URL or "") of a store URL: ``samples=`` is edgebench's, not libpq's."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    samples = next((v for k, v in query if k == "samples"), "") or os.environ.get(SAMPLES_ENV, "")
    rest = urlencode([(k, v) for k, v in query if k != "samples"])
    return urlunsplit((parts.scheme, parts.netloc, parts.path, rest, parts.fragment)), samples


def _password(url: str) -> str:
    try:
        return urlsplit(url).password or ""
    except ValueError:
        return ""


class PostgresStore:
    """:class:`~edgebench.store.base.ResultsStore` on a PostgreSQL database (one connection)."""

    def __init__(self, url: str):
        self.url = redact(url)
        self._dsn, self.samples_url = split_url(url)
        self._secret = _password(url)
        self._bucket: FolderBucket | S3Bucket | None = None
        self._conn = self._connect()
        try:
            from edgebench.store.pg_schema import ensure_schema

            ensure_schema(self._conn)
        except StoreError:
            self.close()
            raise
        except Exception as exc:
            self.close()
            raise self._error(exc, "prepare") from None

    # -- errors: one line, never the password
    def _clean(self, text: str) -> str:
        text = redact(" ".join(str(text).split()))
        return text.replace(self._secret, "***") if self._secret else text

    def _error(self, exc: Exception, doing: str) -> StoreError:
        import psycopg

        text = self._clean(str(exc))
        if isinstance(exc, psycopg.OperationalError):
            hint = ("check the user name and password (a ~/.pgpass entry keeps it off the command line)"
                    if "password" in text or "authentication" in text
                    else "is the server running and reachable? the run stays queued: edgebench push sends it later")
            return StoreUnreachable(f"cannot {doing} the results store {self.url}: {text}", hint)
        return StoreError(f"the results store {self.url} failed to {doing}: {text}")

    def _connect(self):
        try:
            import psycopg
        except ImportError:
            raise StoreError("the PostgreSQL results store needs psycopg",
                             "pip install 'edgebench[lab]'") from None
        try:
            return psycopg.connect(self._dsn, connect_timeout=CONNECT_TIMEOUT_S, application_name="edgebench")
        except psycopg.OperationalError as exc:
            raise self._error(exc, "reach") from None
        except Exception as exc:   # a malformed URL (psycopg.ProgrammingError, ValueError)
            raise StoreError(f"results store URL {self.url} is not valid: {self._clean(str(exc))}",
                             "write postgresql://USER@HOST:PORT/DATABASE") from None

    def bucket(self):
        if self._bucket is None and self.samples_url:
            from edgebench.store.bucket import open_bucket

            self._bucket = open_bucket(self.samples_url)
        return self._bucket

    # -- the protocol
    def append(self, run_dir) -> AppendOutcome:
        rows = run_rows(run_dir)
        run = rows.run
        folder = Path(run_dir)
        refuse_link(folder / RUN_JSON)
        try:
            doc = json.loads((folder / RUN_JSON).read_bytes())
        except (OSError, ValueError) as exc:
            raise ResultError(f"cannot read {folder / RUN_JSON}: {exc}") from None
        samples_url = self._put_samples(folder, run["samples_digest"])
        values = {**run, "samples_url": samples_url, "run_json": json.dumps(doc, default=str),
                  "pushed_from": socket.gethostname()}
        import psycopg

        try:
            with self._conn.transaction():
                inserted = self._conn.execute(_INSERT_RUN, [str(values.get(c) or "") if c not in ("run_json",)
                                                            else values[c] for c in _RUN_COLS]).fetchone()
                if inserted is None:
                    row = self._conn.execute("SELECT samples_digest FROM runs WHERE run_id = %s",
                                             (run["run_id"],)).fetchone()
                    held = row[0] if row else ""
                    if held != run["samples_digest"]:
                        raise StoreError(f"run {run['run_id']} is in the store {self.url} with other samples "
                                         f"(digest {held[:12]}, this folder's {run['samples_digest'][:12]})",
                                         "a run id names one run: this folder was changed after it was pushed")
                    return AppendOutcome(run["run_id"], ALREADY, run["samples_digest"])
                self._insert_parts(run, rows)
                pause = float(os.environ.get(PAUSE_ENV) or 0)
                if pause > 0:
                    time.sleep(pause)
        except psycopg.Error as exc:
            raise self._error(exc, "append to") from None
        return AppendOutcome(run["run_id"], ADDED, run["samples_digest"])

    def _put_samples(self, folder: Path, digest: str) -> str:
        """Put the samples in the bucket before the row commits; their URL ("" without a bucket)."""
        bucket = self.bucket()
        if bucket is None or not digest:
            return ""
        from edgebench.store.bucket import digest_bytes, samples_key

        path = folder / SAMPLES
        refuse_link(path)
        data = path.read_bytes()
        if digest_bytes(data) != digest:
            raise ResultError(f"{path} changed while it was being pushed", "push it again")
        key = samples_key(digest)
        bucket.put(key, data)
        return f"{bucket.url.rstrip('/')}/{key}"

    def _insert_parts(self, run: dict, rows: RunRows) -> None:
        cur = self._conn.cursor()
        rid = run["run_id"]
        cur.executemany("INSERT INTO labels (run_id, name, value) VALUES (%s, %s, %s)",
                        [(rid, k, v) for k, v in sorted(rows.labels.items())])
        cur.executemany("INSERT INTO conditions (run_id, name, value) VALUES (%s, %s, %s)",
                        [(rid, k, v) for k, v in conditions_of(rows.result).items()])
        cur.executemany("INSERT INTO figures (run_id, metric, value, ci_low, ci_high, se_log, df, figure_label) "
                        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                        [(rid, f["metric"], f["value"], f.get("ci_low"), f.get("ci_high"), f.get("se_log"),
                          f.get("df"), f.get("figure_label") or run.get("figure_label") or "")
                         for f in rows.figures])

    def _query(self, sql: str, params=()) -> list:
        import psycopg

        try:
            with self._conn.transaction():
                return self._conn.execute(sql, params).fetchall()
        except psycopg.Error as exc:
            raise self._error(exc, "read") from None

    def series(self) -> list:
        rows = self._query(f"SELECT DISTINCT {', '.join(_KEY)} FROM runs ORDER BY {', '.join(_KEY)}")
        return [SeriesKey(*r) for r in rows]

    def read_series(self, key: SeriesKey, metric: str) -> list:
        where = " AND ".join(f"r.{k} = %s" for k in _KEY)
        rows = self._query(
            "SELECT r.run_id, r.created_utc, r.figure_label, r.model_sha256, r.conditions_digest, "
            "f.metric, f.value, f.ci_low, f.ci_high, f.se_log, f.df, f.figure_label, "
            "(SELECT COALESCE(jsonb_object_agg(l.name, l.value), '{}'::jsonb) FROM labels l WHERE l.run_id = r.run_id) "
            f"FROM runs r JOIN figures f ON f.run_id = r.run_id AND f.metric = %s WHERE {where} "
            "ORDER BY r.created_utc, r.run_id", (metric, *[getattr(key, k) for k in _KEY]))
        out = []
        for (rid, created, rlabel, sha, cond, m, value, lo, hi, se, df, flabel, labels) in rows:
            run = {"run_id": rid, "created_utc": created, "figure_label": rlabel, "model_sha256": sha,
                   "conditions_digest": cond, "labels": labels or {}}
            out.append(point_of(run, {"metric": m, "value": value, "ci_low": lo, "ci_high": hi, "se_log": se,
                                      "df": df, "figure_label": flabel}))
        return out

    def record_changes(self, key: SeriesKey, metric: str, changes: list) -> None:
        import psycopg

        where = " AND ".join(f"{k} = %s" for k in _KEY)
        cols = ("index", "run_before", "run_after", "ratio", "ci_low", "ci_high", "p_value", "commit_before",
                "commit_after", "created_utc", "method")
        try:
            with self._conn.transaction():
                self._conn.execute(f"DELETE FROM change_points WHERE {where} AND metric = %s",
                                   (*[getattr(key, k) for k in _KEY], metric))
                self._conn.cursor().executemany(
                    f"INSERT INTO change_points ({', '.join(_KEY)}, metric, idx, {', '.join(cols[1:])}) "
                    f"VALUES ({', '.join(['%s'] * (len(_KEY) + 1 + len(cols)))})",
                    [(*[getattr(key, k) for k in _KEY], metric, *[getattr(c, n) for n in cols]) for c in changes])
        except psycopg.Error as exc:
            raise self._error(exc, "record change points in") from None

    def changes(self, key: SeriesKey, metric: str) -> list:
        where = " AND ".join(f"{k} = %s" for k in _KEY)
        rows = self._query("SELECT idx, run_before, run_after, ratio, ci_low, ci_high, p_value, commit_before, "
                           f"commit_after, created_utc, method FROM change_points WHERE {where} AND metric = %s "
                           "ORDER BY idx", (*[getattr(key, k) for k in _KEY], metric))
        return [ChangePoint(*r) for r in rows]

    def count_runs(self) -> int:
        """How many runs the store holds."""
        return int(self._query("SELECT count(*) FROM runs")[0][0])

    def close(self) -> None:
        conn, self._conn = getattr(self, "_conn", None), None
        if conn is not None:
            try:
                conn.close()
            except Exception:   # closing a broken connection: nothing left to release
                pass


def conditions_of(result: RunResult) -> dict:
    """The conditions a run was measured under as name -> JSON text (what its conditions digest covers)."""
    system = result.board.system
    parts = {"runtime": result.runtime.to_dict(), "board.kind": result.board.kind, "board.os": system.os,
             "board.cpu": system.cpu, "board.software": system.software,
             "scenario": {k: v for k, v in result.scenario.to_dict().items() if k != "inputs"},
             "timing": {k: v for k, v in result.timing.to_dict().items() if k in ("clock", "stages", "excludes")},
             "settings": result.settings.to_dict(), "edgebench": result.edgebench_version}
    return {k: json.dumps(v, sort_keys=True, default=str) for k, v in parts.items() if v not in (None, {}, "")}


def connect(url: str, root=None) -> PostgresStore:
    """The shared store at ``url`` (``root``, the local runs folder, is not used: the store is remote)."""
    return PostgresStore(url)


__all__ = ["PostgresStore", "conditions_of", "connect", "split_url"]
