"""The embedded results store (edgebench.store.embedded): an incremental DuckDB index over a runs folder."""
from __future__ import annotations

import json
import os
import warnings

import pytest

from tests.conftest import exit_code, require_module
from tests.store_runs import make_run

require_module("duckdb")

from edgebench.errors import InputWarning, ResultError, StoreError  # noqa: E402
from edgebench.store import rows as store_rows  # noqa: E402
from edgebench.store.base import ADDED, ALREADY, ResultsStore, SeriesKey  # noqa: E402
from edgebench.store.embedded import INDEX, EmbeddedStore, load_runs  # noqa: E402
from edgebench.store.open import open_store, redact  # noqa: E402

KEY = SeriesKey("digits_fp32", "host", "ai-edge-litert", "xnnpack", "1", "single-stream")


@pytest.fixture
def reads(monkeypatch):
    """The run folders whose run.json the store reads (rows.read_result counted)."""
    seen = []
    real = store_rows.read_result

    def counting(d):
        seen.append(os.path.basename(os.path.normpath(str(d))))
        return real(d)

    monkeypatch.setattr(store_rows, "read_result", counting)
    return seen


def test_a_new_run_costs_one_append_not_a_rescan(tmp_path, reads):
    for i in range(5):
        make_run(tmp_path, i)
    with EmbeddedStore(tmp_path) as s:
        assert s.refresh() == [] and len(reads) == 5
        reads.clear()
        d = make_run(tmp_path, 5)
        assert s.append(d).status == ADDED
        assert reads == ["run-00005"]                      # only the new run was read
        assert s.refresh() == [] and s.last_read == []     # and a refresh after it reads nothing
        make_run(tmp_path, 6)                              # a folder written without an append
        reads.clear()
        s.refresh()
        assert reads == ["run-00006"] and len(s.read_series(KEY, "e2e")) == 7


def test_append_is_idempotent_on_run_id_and_samples(tmp_path):
    d = make_run(tmp_path, 1)
    with EmbeddedStore(tmp_path) as s:
        first, again = s.append(d), s.append(d)
        assert (first.status, again.status) == (ADDED, ALREADY) and first.samples_digest == again.samples_digest
        copy = tmp_path / "copy-of-run"
        copy.mkdir()
        for name in ("run.json", "samples.parquet"):
            (copy / name).write_bytes((d / name).read_bytes())
        assert s.append(copy).status == ALREADY           # the same run in another folder: on record once
        assert len(s.read_series(KEY, "e2e")) == 1


def test_a_run_id_with_other_samples_is_refused_and_the_rest_reads(tmp_path):
    d = make_run(tmp_path, 1)
    make_run(tmp_path, 2)
    forged = tmp_path / "forged"
    forged.mkdir()
    (forged / "run.json").write_bytes((d / "run.json").read_bytes())
    (forged / "samples.parquet").write_bytes((d / "samples.parquet").read_bytes() + b"x")
    with EmbeddedStore(tmp_path) as s:
        s.append(d)
        with pytest.raises(StoreError) as exc:
            s.append(forged)
        assert "\n" not in exc.value.message and "refused" in exc.value.message
        s.refresh()
        assert [p.run_id for p in s.read_series(KEY, "e2e")] == [f"{1:012x}", f"{2:012x}"]
        assert [f for f, _ in s.problems()] == ["forged"]


def test_foreign_and_tampered_runs_are_refused_with_one_line_each(tmp_path):
    for i in range(3):
        make_run(tmp_path, i)
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "run.json").write_text(json.dumps({"format": "pyperf", "benchmarks": []}))
    tampered = make_run(tmp_path, 9)
    doc = json.loads((tampered / "run.json").read_text())
    doc["latency"]["e2e"]["median_s"] = "fast"
    (tampered / "run.json").write_text(json.dumps(doc))
    linked = make_run(tmp_path, 10)
    (linked / "samples.parquet").unlink()
    (linked / "samples.parquet").symlink_to("/etc/hostname")
    with EmbeddedStore(tmp_path) as s:
        problems = s.refresh()
        assert len(problems) == 3 and all("\n" not in p for p in problems)
        assert {f for f, _ in s.problems()} == {"foreign", tampered.name, linked.name}
        assert len(s.read_series(KEY, "e2e")) == 3
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = load_runs(tmp_path)
    assert len(frame) == 3 and sorted(frame["run_id"]) == [f"{i:012x}" for i in range(3)]
    assert sum(issubclass(w.category, InputWarning) and "skipped" in str(w.message) for w in caught) == 3


def test_a_changed_run_is_read_again_alone(tmp_path, reads):
    dirs = [make_run(tmp_path, i) for i in range(4)]
    with EmbeddedStore(tmp_path) as s:
        s.refresh()
        reads.clear()
        doc = json.loads((dirs[2] / "run.json").read_text())
        doc["extra"]["labels"] = {"commit": "c" * 40}
        (dirs[2] / "run.json").write_text(json.dumps(doc))
        os.utime(dirs[2] / "run.json", ns=(1, os.stat(dirs[2]).st_mtime_ns + 10**9))
        s.refresh()
        assert reads == [dirs[2].name]
        assert s.read_series(KEY, "e2e")[2].commit == "c" * 40
        (dirs[3] / "run.json").unlink()
        (dirs[3] / "samples.parquet").unlink()
        dirs[3].rmdir()
        s.refresh()
        assert len(s.read_series(KEY, "e2e")) == 3           # a folder that is gone is forgotten


def test_the_views_read_runs_figures_and_samples(tmp_path):
    make_run(tmp_path, 1)
    make_run(tmp_path, 2, samples=False)
    with EmbeddedStore(tmp_path) as s:
        s.refresh()
        assert s.sql("SELECT count(*) FROM runs") == [(2,)]
        metrics = {m for (m,) in s.sql("SELECT DISTINCT metric FROM figures")}
        assert {"e2e", "invoke", "throughput"} <= metrics
        import pandas as pd

        rows = len(pd.read_parquet(tmp_path / "run-00001" / "samples.parquet"))
        assert s.sql("SELECT run_id, count(*) FROM samples GROUP BY run_id") == [(f"{1:012x}", rows)]


def test_a_deleted_or_outdated_index_is_rebuilt_from_the_folder(tmp_path):
    dirs = [make_run(tmp_path, i) for i in range(3)]
    with EmbeddedStore(tmp_path) as s:
        s.append(dirs[0])                                       # an append (a run written) makes the index
        s.refresh()
        s.db.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'")
    with EmbeddedStore(tmp_path) as s:
        assert s.sql("SELECT count(*) FROM runs") == [(0,)]   # the old layout dropped ...
        s.refresh()
        assert len(s.read_series(KEY, "e2e")) == 3             # ... and rebuilt from the folders
    (tmp_path / INDEX).unlink()
    with EmbeddedStore(tmp_path) as s:
        s.refresh()
        assert len(s.read_series(KEY, "e2e")) == 3


def test_open_store_dispatches_on_the_url_and_never_prints_a_password(tmp_path):
    make_run(tmp_path, 1)
    s = open_store(None, root=tmp_path)
    try:
        assert isinstance(s, ResultsStore) and isinstance(s, EmbeddedStore)
    finally:
        s.close()
    s = open_store(f"duckdb:{tmp_path}")
    s.close()
    with pytest.raises(StoreError) as exc:
        open_store("mysql://root:hunter2@db/x", root=tmp_path)
    assert "hunter2" not in str(exc.value) and "mysql" in exc.value.message
    assert redact("postgresql://lab:hunter2@db:5432/runs") == "postgresql://lab:***@db:5432/runs"
    with pytest.raises(ResultError):
        open_store(None, root=tmp_path / "nowhere")


def test_a_shared_store_that_fails_queues_the_run_without_losing_it(tmp_path, monkeypatch):
    from edgebench.store.queue import pending
    from edgebench.store.record import put_on_record

    d = make_run(tmp_path, 1)
    monkeypatch.setenv("EDGEBENCH_STORE", "postgresql://lab:hunter2@127.0.0.1:9/runs?connect_timeout=1")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outcomes = put_on_record(d)
    assert [o.status for o in outcomes] == [ADDED]              # the local index took it
    [entry] = pending(tmp_path)
    assert entry["run_id"] == f"{1:012x}" and entry["run_dir"] == str(d.resolve())
    assert "hunter2" not in json.dumps(entry) and all("hunter2" not in str(w.message) for w in caught)
    assert any("queued" in str(w.message) for w in caught)


def test_labels_default_to_the_git_commit_of_the_current_folder(tmp_path):
    import subprocess

    from edgebench.errors import UsageError
    from edgebench.results.store import read_result
    from edgebench.store.record import label_run, parse_labels
    from tests.conftest import require_tool

    git = require_tool("git")
    d = make_run(tmp_path / "runs", 1)
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run([git, "init", "-q", str(repo)], check=True, env=env)
    subprocess.run([git, "-C", str(repo), "commit", "-q", "--allow-empty", "-m", "x"], check=True, env=env)
    head = subprocess.run([git, "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert label_run(d, ["ci=nightly"], cwd=repo) == {"commit": head, "ci": "nightly"}
    assert read_result(d).extra.labels == {"commit": head, "ci": "nightly"}
    d2 = make_run(tmp_path / "runs", 2)
    assert label_run(d2, [], cwd=tmp_path) == {}                # not a repository: no commit label
    with pytest.raises(UsageError):
        parse_labels(["no-equals-sign"])


def test_a_read_only_runs_folder_is_indexed_in_memory(tmp_path, monkeypatch):
    from edgebench.store import embedded

    for i in range(2):
        make_run(tmp_path, i)
    monkeypatch.setattr(embedded.os, "access", lambda path, mode: False)   # as a read-only share answers (not root)
    with EmbeddedStore(tmp_path) as s:
        s.refresh()
        assert len(s.read_series(KEY, "e2e")) == 2
    assert not (tmp_path / INDEX).exists()


def test_reading_leaves_no_index_and_the_first_append_makes_it(tmp_path, reads):
    dirs = [make_run(tmp_path, i) for i in range(3)]
    with EmbeddedStore(tmp_path) as s:
        s.refresh()
        assert len(s.read_series(KEY, "e2e")) == 3
    assert not (tmp_path / INDEX).exists()                      # a read indexed the folder in memory
    load_runs(tmp_path)
    assert not (tmp_path / INDEX).exists()
    d = make_run(tmp_path, 3)
    with EmbeddedStore(tmp_path) as s:
        s.refresh()
        assert s.append(d).status == ALREADY                   # indexed in memory by the refresh ...
    assert (tmp_path / INDEX).is_file()                         # ... and put on disk by the append
    reads.clear()
    with EmbeddedStore(tmp_path) as s:
        assert s.refresh() == [] and reads == [] and len(s.read_series(KEY, "e2e")) == 4
    assert dirs


def _files(root) -> list:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_read_verbs_write_nothing_into_the_runs_folder(tmp_path, monkeypatch, capsys):
    """report and check only read the runs folder: no index appears in it (and one already there
    is used, not joined by another file); a read-only folder reads the same, indexed in memory."""
    runs, out = tmp_path / "runs", tmp_path / "out"
    runs.mkdir()
    out.mkdir()
    for i in range(3):
        make_run(runs, i)
    before = _files(runs)
    assert exit_code("report", "latest", "--runs-dir", runs, "-o", out / "r.html") == 0
    assert exit_code("check", f"{0:012x}", f"{2:012x}", "--runs-dir", runs, "--max-slowdown", "1.5") in (0, 3)
    assert _files(runs) == before                               # once: .edgebench-index.duckdb
    with EmbeddedStore(runs) as s:                              # a run written: the index is made
        s.append(make_run(runs, 3))
    before = _files(runs)
    assert INDEX in before
    assert exit_code("check", f"{0:012x}", f"{3:012x}", "--runs-dir", runs, "--max-slowdown", "1.5") in (0, 3)
    assert _files(runs) == before
    (runs / INDEX).unlink()
    from edgebench.store import embedded

    real_access = os.access
    monkeypatch.setattr(embedded.os, "access",                 # as a read-only share answers (not root)
                        lambda path, mode: (not mode & os.W_OK or not str(path).startswith(str(runs)))
                        and real_access(path, mode))
    os.chmod(runs, 0o555)
    try:
        assert exit_code("report", "latest", "--runs-dir", runs, "-o", out / "r2.html") == 0
        assert exit_code("check", f"{0:012x}", f"{3:012x}", "--runs-dir", runs, "--json") == 0
    finally:
        os.chmod(runs, 0o755)
    assert INDEX not in _files(runs) and (out / "r2.html").is_file()
    capsys.readouterr()
