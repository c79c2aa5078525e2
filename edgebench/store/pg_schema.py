"""The shared store's PostgreSQL schema as numbered migrations, and how a database is brought to it.

``schema_version`` holds one row per migration applied (number, name, when). Opening a store:

* an empty database gets every migration, in one transaction;
* an older one gets the missing migrations, in one transaction, under an advisory lock (two
  writers opening it at once: one migrates, the other waits and finds it done);
* a database *newer* than this edgebench (a migration it does not know) is refused, naming that
  migration: upgrade edgebench on this machine (docs/store.md, "Migrations").

A migration is never edited once released: a change of schema is a new entry at the end.
"""
from __future__ import annotations

from edgebench.errors import StoreError

#: (number, name, SQL): applied in order; the number is the position (1-based).
MIGRATIONS: tuple = (
    (1, "0001_runs_conditions_figures_labels_change_points", """
CREATE TABLE runs (
    run_id            text PRIMARY KEY,
    created_utc       text NOT NULL,
    kind              text NOT NULL DEFAULT '',
    status            text NOT NULL DEFAULT '',
    figure_label      text NOT NULL DEFAULT '',
    model             text NOT NULL,
    board             text NOT NULL,
    runtime           text NOT NULL DEFAULT '',
    kernels           text NOT NULL DEFAULT '',
    threads           text NOT NULL DEFAULT '',
    scenario          text NOT NULL DEFAULT '',
    model_sha256      text NOT NULL DEFAULT '',
    conditions_digest text NOT NULL DEFAULT '',
    samples_digest    text NOT NULL,
    samples_url       text NOT NULL DEFAULT '',
    edgebench_version text NOT NULL DEFAULT '',
    path              text NOT NULL DEFAULT '',
    run_json          jsonb NOT NULL,
    pushed_at         timestamptz NOT NULL DEFAULT now(),
    pushed_from       text NOT NULL DEFAULT ''
);
CREATE INDEX runs_series ON runs (model, board, runtime, kernels, threads, scenario, created_utc, run_id);
CREATE TABLE conditions (
    run_id text NOT NULL REFERENCES runs ON DELETE CASCADE,
    name   text NOT NULL,
    value  text NOT NULL,
    PRIMARY KEY (run_id, name)
);
CREATE TABLE figures (
    run_id       text NOT NULL REFERENCES runs ON DELETE CASCADE,
    metric       text NOT NULL,
    value        double precision NOT NULL,
    ci_low       double precision,
    ci_high      double precision,
    se_log       double precision,
    df           double precision,
    figure_label text NOT NULL DEFAULT 'measured',
    PRIMARY KEY (run_id, metric)
);
CREATE TABLE labels (
    run_id text NOT NULL REFERENCES runs ON DELETE CASCADE,
    name   text NOT NULL,
    value  text NOT NULL,
    PRIMARY KEY (run_id, name)
);
CREATE TABLE change_points (
    model text NOT NULL, board text NOT NULL, runtime text NOT NULL, kernels text NOT NULL,
    threads text NOT NULL, scenario text NOT NULL, metric text NOT NULL,
    idx integer NOT NULL,
    run_before text NOT NULL, run_after text NOT NULL,
    ratio double precision NOT NULL, ci_low double precision NOT NULL, ci_high double precision NOT NULL,
    p_value double precision NOT NULL,
    commit_before text NOT NULL DEFAULT '', commit_after text NOT NULL DEFAULT '',
    created_utc text NOT NULL DEFAULT '', method text NOT NULL DEFAULT '',
    PRIMARY KEY (model, board, runtime, kernels, threads, scenario, metric, idx)
);
"""),
)

#: A number no other application uses for pg_advisory_xact_lock (the migration lock).
MIGRATION_LOCK = 0x6564676562656E63   # "edgebenc"


def latest() -> tuple:
    """(number, name) of the newest migration this edgebench knows."""
    number, name, _ = MIGRATIONS[-1]
    return number, name


def ensure_schema(conn) -> int:
    """Bring the database behind ``conn`` (psycopg, not autocommit) to :data:`MIGRATIONS`; its version.

    An up-to-date store costs one read and needs no CREATE privilege (a lab may give its writers
    none); migrating takes an advisory lock, so one of several writers starting at once does it."""
    import psycopg

    try:
        with conn.transaction():
            rows = conn.execute("SELECT version, name FROM schema_version ORDER BY version").fetchall()
    except psycopg.errors.UndefinedTable:
        rows = None
    if rows is not None and _check(rows) >= {n for n, _, _ in MIGRATIONS}:
        return latest()[0]
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version integer PRIMARY KEY, name text NOT NULL,"
                     " applied_at timestamptz NOT NULL DEFAULT now())")
        done = _check(conn.execute("SELECT version, name FROM schema_version ORDER BY version").fetchall())
        for number, name, sql in MIGRATIONS:
            if number not in done:
                conn.execute(sql)
                conn.execute("INSERT INTO schema_version (version, name) VALUES (%s, %s)", (number, name))
    return latest()[0]


def _check(rows) -> set:
    """The migration numbers of ``rows`` (version, name); StoreError naming one this edgebench does not know."""
    known = {n: name for n, name, _ in MIGRATIONS}
    for version, name in rows:
        if version not in known:
            have, have_name = latest()
            raise StoreError(f"the store's schema has migration {version} ({name}), which this edgebench does "
                             f"not know (its newest is {have}, {have_name})",
                             "upgrade edgebench on this machine to the version that wrote the store")
        if known[version] != name:
            raise StoreError(f"the store's migration {version} is {name}, this edgebench's is {known[version]}",
                             "the store was made by another fork of edgebench: use its version")
    return {v for v, _ in rows}
