"""The shared results store on a real PostgreSQL server (tests/pg_fixture.py: initdb/pg_ctl on 127.0.0.1).

Idempotent appends, refusals that leave the rest readable, a wrong password in one line, a schema of a
newer edgebench, 8 concurrent `python -m edgebench push` processes, a push SIGKILLed inside its
transaction, the store offline then back (the run queued, then pushed), samples in a folder and in an
S3 bucket (moto's server on 127.0.0.1: a fake of S3 itself, not of edgebench).
"""
from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import message_lines, require_module, run_edgebench

from edgebench.errors import ResultError, StoreError, StoreUnreachable
from edgebench.results import store as rstore
from edgebench.results.model import RunResult
from edgebench.store import queue
from edgebench.store.base import ADDED, ALREADY, ChangePoint

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
_names = itertools.count()


def make_run(root: Path, run_id: str, median_s: float = 1e-3, seed: int = 0, commit: str = "") -> Path:
    """A stored bench run of model ``kws`` on board ``pi5`` with 2 repeats of lognormal latencies."""
    rng = np.random.default_rng(seed)
    n = 200
    e2e = median_s * np.exp(rng.normal(0, 0.05, 2 * n))
    frame = pd.DataFrame({"phase": "measure", "repeat": np.repeat([0, 1], n), "t_start_ns": np.arange(2 * n) * 1000,
                          "e2e_s": e2e, "prep_s": e2e * 0.1, "set_s": e2e * 0.05, "invoke_s": e2e * 0.8,
                          "get_s": e2e * 0.05})
    r = RunResult(run_id=run_id, created_utc=f"2026-01-01T00:{seed % 60:02d}:00+00:00", kind="bench",
                  status="complete", label="measured")
    r.model = {"name": "kws", "sha256": "a" * 64, "precision": "int8"}
    r.runtime = {"name": "ai-edge-litert", "version": "2.3.0", "kernels": "xnnpack", "threads": 1}
    r.board = {"name": "pi5", "system": {"cpu": {"model_name": "Cortex-A76"}}}
    r.scenario = {"name": "single-stream"}
    if commit:
        r.extra = {"labels": {"commit": commit}}
    med = float(np.median(e2e))
    r.latency = {s: {"median_s": med * f, "ci_low_s": med * f * 0.98, "ci_high_s": med * f * 1.02, "runs": 2,
                     "n": 2 * n} for s, f in (("e2e", 1.0), ("invoke", 0.8))}
    d = root / f"20260101-000000-{run_id}"
    d.mkdir(parents=True)
    rstore.write_result(d, r)
    rstore.write_samples(d, frame)
    return d


@pytest.fixture
def db(pg_server):
    """A fresh database on the session's server: its URL."""
    return pg_server.create_database(f"t{os.getpid()}_{next(_names)}")


def _open(url: str):
    from edgebench.store.open import open_store

    return open_store(url)


def _count(url: str, table: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("EDGEBENCH_STORE", "EDGEBENCH_STORE_PAUSE_IN_COMMIT")}
    return {**env, "PYTHONPATH": str(ROOT), **extra}


def test_append_is_idempotent_and_reads_back(db, tmp_path):
    samples = tmp_path / "bucket"
    d = make_run(tmp_path / "runs", "r1", commit="abc123")
    st = _open(f"{db}?samples={samples.as_uri()}")
    try:
        first, again = st.append(d), st.append(d)
        assert (first.status, again.status) == (ADDED, ALREADY)
        assert first.samples_digest == again.samples_digest != ""
        [key] = st.series()
        assert (key.model, key.board, key.kernels, key.threads) == ("kws", "pi5", "xnnpack", "1")
        [point] = st.read_series(key, "e2e")
        assert point.run_id == "r1" and point.commit == "abc123"
        assert point.ci_low < point.value < point.ci_high and point.se_log > 0
        stored = samples / "samples" / first.samples_digest[:2] / f"{first.samples_digest}.parquet"
        assert stored.read_bytes() == (d / "samples.parquet").read_bytes()
        cp = ChangePoint(index=1, run_before="r0", run_after="r1", ratio=1.1, ci_low=1.05, ci_high=1.15,
                         p_value=0.001, commit_before="a", commit_after="b", method="test")
        st.record_changes(key, "e2e", [cp])
        st.record_changes(key, "e2e", [cp])     # replaced, not added
        assert st.changes(key, "e2e") == [cp]
    finally:
        st.close()
    assert _count(db, "runs") == 1 and _count(db, "figures") == 2 and _count(db, "labels") == 1
    assert _count(db, "conditions") > 0


def test_same_id_other_samples_is_refused_and_the_rest_reads(db, tmp_path):
    d = make_run(tmp_path / "a", "r1", seed=1)
    other = make_run(tmp_path / "b", "r1", seed=2)          # the same run id, other samples
    st = _open(db)
    try:
        assert st.append(d).status == ADDED
        with pytest.raises(StoreError, match="other samples"):
            st.append(other)
        [key] = st.series()
        assert [p.run_id for p in st.read_series(key, "e2e")] == ["r1"]
    finally:
        st.close()


def test_tampered_and_foreign_runs_are_refused_on_one_line(db, tmp_path):
    runs = tmp_path / "runs"
    good = make_run(runs, "good", seed=3)
    tampered = make_run(runs, "tampered", seed=4)
    doc = json.loads((tampered / "run.json").read_text())
    doc["latency"]["e2e"]["median_s"] = "fast"
    (tampered / "run.json").write_text(json.dumps(doc))
    foreign = runs / "foreign"
    foreign.mkdir()
    (foreign / "run.json").write_text(json.dumps({"name": "not an edgebench run"}))
    res = run_edgebench("push", good, tampered, foreign, "--store", db, "--json")
    assert res.returncode == 1
    by_dir = {Path(r["run_dir"]).name: r for r in json.loads(res.stdout)["runs"]}
    assert by_dir[good.name]["status"] == ADDED
    assert by_dir[tampered.name]["status"] == "refused" and by_dir[foreign.name]["status"] == "refused"
    assert all("\n" not in r["message"] for r in by_dir.values())
    assert "Traceback" not in res.stderr and len(message_lines(res.stderr)) == 1
    st = _open(db)
    try:
        [key] = st.series()
        assert [p.run_id for p in st.read_series(key, "e2e")] == ["good"]
    finally:
        st.close()


def test_wrong_password_is_one_line_without_it_and_the_run_is_queued(pg_server, db, tmp_path):
    runs = tmp_path / "runs"
    d = make_run(runs, "r1")
    secret = "not-the-password-42"
    bad = db.replace(f":{pg_server.password}@", f":{secret}@")
    res = run_edgebench("push", d, "--store", bad, "--runs-dir", runs)
    assert res.returncode == 1
    assert secret not in res.stderr + res.stdout and pg_server.password not in res.stderr + res.stdout
    assert "password authentication failed" in res.stdout
    assert "Traceback" not in res.stderr and len(message_lines(res.stderr)) == 1
    [entry] = queue.pending(runs)
    assert entry["run_id"] == "r1" and secret not in json.dumps(entry)
    res = run_edgebench("push", "--store", db, "--runs-dir", runs)     # the right one: the queue drains
    assert res.returncode == 0, res.stderr
    assert queue.pending(runs) == [] and _count(db, "runs") == 1


def test_a_newer_schema_names_its_migration(db):
    import psycopg

    _open(db).close()
    with psycopg.connect(db) as conn:
        conn.execute("INSERT INTO schema_version (version, name) VALUES (2, '0002_from_the_future')")
    with pytest.raises(StoreError, match="0002_from_the_future") as err:
        _open(db)
    assert not isinstance(err.value, StoreUnreachable)


def test_a_bad_url_is_one_line(tmp_path):
    from edgebench.store.open import open_store

    with pytest.raises(StoreError) as err:
        open_store("postgresql://me:sekrit@127.0.0.1:1/nothing")     # nothing listens on port 1
    assert "sekrit" not in err.value.one_line() and "***" in err.value.one_line()
    assert isinstance(err.value, StoreUnreachable)


def test_eight_concurrent_pushes_lose_and_duplicate_nothing(db, tmp_path):
    runs = tmp_path / "runs"
    dirs = [make_run(runs, f"r{i:02d}", seed=i) for i in range(24)]
    # writer w pushes 9 runs starting at 3w: neighbours overlap, every run is pushed by 2 to 3 writers
    plans = [[dirs[(3 * w + k) % 24] for k in range(9)] for w in range(8)]
    procs = [subprocess.Popen([sys.executable, "-m", "edgebench", "push", *map(str, plan), "--store", db, "--json",
                               "--runs-dir", str(tmp_path / f"q{w}")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
             for w, plan in enumerate(plans)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, [e for _, e in outs]
    statuses = [r["status"] for out, _ in outs for r in json.loads(out)["runs"]]
    assert len(statuses) == 72 and statuses.count(ADDED) == 24 and statuses.count(ALREADY) == 48
    assert _count(db, "runs") == 24 and _count(db, "figures") == 48
    import psycopg

    with psycopg.connect(db) as conn:     # every run whole: its two figures, none of another's
        per_run = conn.execute("SELECT r.run_id, count(f.metric) FROM runs r LEFT JOIN figures f USING (run_id) "
                               "GROUP BY r.run_id").fetchall()
    assert sorted(per_run) == [(f"r{i:02d}", 2) for i in range(24)]


def test_a_finished_run_is_put_on_record_in_the_shared_store(db, tmp_path):
    from edgebench.store.record import put_on_record

    d = make_run(tmp_path / "runs", "r1")
    outcomes = put_on_record(d, db)
    assert [o.status for o in outcomes][-1] == ADDED and _count(db, "runs") == 1
    assert put_on_record(d, db)[-1].status == ALREADY and _count(db, "runs") == 1


def _in_transaction(url: str) -> bool:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return bool(conn.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'edgebench' "
                                 "AND state = 'idle in transaction' AND datname = current_database()").fetchone()[0])


def _paused_in_commit(url: str) -> bool:
    """A push is in its pause before the commit: its transaction is open and its last statement
    inserted the figures (the schema check at connect is a transaction of its own, before the samples)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return bool(conn.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'edgebench' "
                                 "AND state = 'idle in transaction' AND datname = current_database() "
                                 "AND query LIKE 'INSERT INTO figures%'").fetchone()[0])


def _wait(predicate, timeout: float = 120.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_a_push_killed_inside_its_transaction_leaves_nothing(db, tmp_path):
    runs = tmp_path / "runs"
    d = make_run(runs, "r1")
    bucket = tmp_path / "bucket"
    url = f"{db}?samples={bucket.as_uri()}"
    proc = subprocess.Popen([sys.executable, "-m", "edgebench", "push", str(d), "--store", url],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=_env(EDGEBENCH_STORE_PAUSE_IN_COMMIT="300"))
    try:
        assert _wait(lambda: _paused_in_commit(db)), "the push never reached its pause before the commit"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert _wait(lambda: not _in_transaction(db)), "the killed writer's transaction was not rolled back"
    for table in ("runs", "figures", "labels", "conditions"):
        assert _count(db, table) == 0, table
    assert len(list(bucket.rglob("*.parquet"))) == 1       # the samples went first: at most an orphan object
    res = run_edgebench("push", d, "--store", url, "--json")
    assert res.returncode == 0 and json.loads(res.stdout)["runs"][0]["status"] == ADDED
    assert _count(db, "runs") == 1 and _count(db, "figures") == 2


def test_pushes_killed_at_random_times_leave_each_run_absent_or_whole(db, tmp_path):
    import random

    runs = tmp_path / "runs"
    dirs = [make_run(runs, f"k{i}", seed=i, commit=f"c{i}") for i in range(6)]
    bucket = tmp_path / "bucket"
    url = f"{db}?samples={bucket.as_uri()}"
    argv = [sys.executable, "-m", "edgebench", "push", "--store", url]
    t0 = time.monotonic()
    subprocess.run([*argv, str(dirs[0])], check=True, capture_output=True, env=_env(), timeout=300)
    whole = time.monotonic() - t0                  # one push process, start to end, on this machine now
    rng = random.Random(28)
    for d in dirs[1:]:                             # killed anywhere from start-up to the commit
        proc = subprocess.Popen([*argv, str(d)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env())
        try:
            proc.wait(timeout=rng.uniform(0.3, 1.0) * whole)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
    assert _wait(lambda: not _in_transaction(db))
    import psycopg

    def parts() -> dict:
        with psycopg.connect(db) as conn:
            return {rid: (nf, nl) for rid, nf, nl in conn.execute(
                "SELECT r.run_id, (SELECT count(*) FROM figures f WHERE f.run_id = r.run_id), "
                "(SELECT count(*) FROM labels l WHERE l.run_id = r.run_id) FROM runs r").fetchall()}

    seen = parts()
    assert "k0" in seen and all(v == (2, 1) for v in seen.values()), seen     # absent, or whole
    res = run_edgebench("push", *dirs, "--store", url, "--json")
    assert res.returncode == 0, res.stderr
    assert parts() == {f"k{i}": (2, 1) for i in range(6)}


def test_the_store_offline_then_back(tmp_path):
    require_module("psycopg")
    from pg_fixture import PgServer

    try:
        server = PgServer().start()
    except (OSError, RuntimeError) as exc:
        pytest.skip(f"PostgreSQL could not start: {exc}")   # pg_server (the session's) reports the cause
    try:
        runs = tmp_path / "runs"
        d = make_run(runs, "r1")
        server.stop(remove=False)
        from edgebench.errors import InputWarning
        from edgebench.store.record import put_on_record

        with pytest.warns(InputWarning, match="queued"):      # a verb finishing its run with the store down
            put_on_record(d, server.url())
        assert [e["run_id"] for e in queue.pending(runs)] == ["r1"]
        res = run_edgebench("push", "--store", server.url(), "--runs-dir", runs, "--json")
        assert res.returncode == 1 and json.loads(res.stdout)["runs"][0]["status"] == "queued"
        assert "Traceback" not in res.stderr and server.password not in res.stderr + res.stdout
        assert [e["run_id"] for e in queue.pending(runs)] == ["r1"]
        assert d.is_dir() and (d / "samples.parquet").is_file()       # nothing lost
        server.restart()
        res = run_edgebench("push", "--store", server.url(), "--runs-dir", runs, "--json")
        assert res.returncode == 0, res.stderr
        assert [r["status"] for r in json.loads(res.stdout)["runs"]] == [ADDED]
        assert queue.pending(runs) == [] and _count(server.url(), "runs") == 1
        res = run_edgebench("push", d, "--store", server.url(), "--runs-dir", runs, "--json")
        assert json.loads(res.stdout)["runs"][0]["status"] == ALREADY
    finally:
        server.stop()


def test_samples_in_an_s3_bucket(db, tmp_path, monkeypatch):
    require_module("boto3")
    server_mod = require_module("moto.server")
    server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        for k, v in (("AWS_ACCESS_KEY_ID", "test"), ("AWS_SECRET_ACCESS_KEY", "test"),
                     ("AWS_DEFAULT_REGION", "us-east-1"), ("EDGEBENCH_S3_ENDPOINT", endpoint)):
            monkeypatch.setenv(k, v)
        import boto3

        s3 = boto3.client("s3", endpoint_url=endpoint)
        s3.create_bucket(Bucket="lab")
        d = make_run(tmp_path / "runs", "r1")
        st = _open(f"{db}?samples=s3://lab/edgebench")
        try:
            outcome = st.append(d)
        finally:
            st.close()
        key = f"edgebench/samples/{outcome.samples_digest[:2]}/{outcome.samples_digest}.parquet"
        body = s3.get_object(Bucket="lab", Key=key)["Body"].read()
        assert body == (d / "samples.parquet").read_bytes()
        with pytest.raises(ResultError, match="s3://missing"):
            bad = _open(f"{db}?samples=s3://missing/x")
            try:
                bad.append(make_run(tmp_path / "more", "r2", seed=5))
            finally:
                bad.close()
        assert _count(db, "runs") == 1       # the run whose samples could not be stored was not committed
    finally:
        server.stop()


def test_history_reads_the_shared_store_and_finds_the_shift(db, tmp_path):
    runs = tmp_path / "runs"
    dirs = [make_run(runs / f"m{i}", f"h{i:02d}", median_s=1e-3 if i < 6 else 1.3e-3, seed=i, commit=f"c{i:02d}")
            for i in range(12)]
    assert run_edgebench("push", *dirs, "--store", db).returncode == 0
    res = run_edgebench("history", "kws", "--board", "pi5", "--store", db, "--changes", "--json",
                        "--runs-dir", tmp_path / "empty")
    assert res.returncode == 0, res.stderr
    h = json.loads(res.stdout)
    assert [p["run_id"] for p in h["points"]] == [f"h{i:02d}" for i in range(12)]
    assert [c["index"] for c in h["changes"]] == [6] and h["changes"][0]["commit_after"] == "c06"
    st = _open(db)
    try:
        [key] = st.series()
        assert [c.run_after for c in st.changes(key, "e2e")] == ["h06"]      # recorded in the shared store
    finally:
        st.close()


def test_a_writer_role_without_create_privilege_pushes(pg_server, db, tmp_path):
    import psycopg

    _open(db).close()                                    # migrated by the database's owner
    role = f"writer_{db.rsplit('/', 1)[1]}"
    with psycopg.connect(db, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'w-secret'")
        conn.execute(f"GRANT SELECT ON schema_version TO {role}")
        conn.execute(f"GRANT SELECT, INSERT ON runs, conditions, figures, labels TO {role}")
        conn.execute(f"GRANT SELECT, INSERT, DELETE ON change_points TO {role}")
        conn.execute(f"REVOKE CREATE ON SCHEMA public FROM PUBLIC, {role}")
    url = db.replace(f"edgebench:{pg_server.password}@", f"{role}:w-secret@")
    res = run_edgebench("push", make_run(tmp_path / "runs", "r1"), "--store", url, "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["runs"][0]["status"] == ADDED and _count(db, "runs") == 1
