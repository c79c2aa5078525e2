"""Untrusted run folders (issue 22, items 2 and 5): no symbolic link is written or read through,
temporary files cannot be planted, journal chunks are checksummed, and a damaged run.json or
journal still recovers what is intact (and says what was not)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import DIGITS_INT8

from edgebench.errors import ResultError
from edgebench.results import journal, store

ROOT = Path(__file__).resolve().parents[1]


def _result(**kw):
    from edgebench.results.model import RunResult

    return RunResult(run_id="abc123def456", created_utc="2026-01-01T00:00:00+00:00", **kw)


def run_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "edgebench", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


# ------------------------------------------------------------------------------- item 2: links

def test_a_planted_temp_file_link_is_never_written_through(tmp_path):
    """The old writer opened `.run.json.<pid>.tmp` without O_EXCL: a link planted under that
    name (for this pid and the next ones) sent the run's text into the link's target."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    d = tmp_path / "run"
    d.mkdir()
    for pid in range(os.getpid(), os.getpid() + 3):
        for name in (store.RUN_JSON, store.SAMPLES):
            os.symlink(victim, d / f".{name}.{pid}.tmp")
    with pytest.raises(ResultError, match="symbolic link to .*victim.txt, outside the folder"):
        store.write_result(d, _result(status="complete"))      # the folder is refused as it is
    from edgebench.results.files import atomic_write

    atomic_write(d / store.RUN_JSON, lambda f: f.write(b"{}"))  # and the writer itself never follows one
    store.write_samples(d, pd.DataFrame({"e2e_s": [1.0]}))
    assert victim.read_text() == "precious\n"
    assert not (d / store.RUN_JSON).is_symlink() and (d / store.RUN_JSON).read_bytes() == b"{}"
    assert len(pd.read_parquet(d / store.SAMPLES)) == 1
    assert not [p for p in d.iterdir() if p.name.endswith(".tmp") and not p.is_symlink()]   # nothing left over


def test_atomic_write_gives_the_file_the_usual_mode(tmp_path):
    old = os.umask(0o022)
    try:
        store.write_result(tmp_path, _result(status="complete"))
    finally:
        os.umask(old)
    assert (tmp_path / store.RUN_JSON).stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize("name", [store.RUN_JSON, store.SAMPLES, "power.parquet"])
def test_a_run_folder_with_a_link_out_of_it_is_refused(tmp_path, name):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    d = tmp_path / "runs" / "20260101-000000-m-b"
    d.mkdir(parents=True)
    store.write_result(d, _result(status="running"))
    if name == store.RUN_JSON:
        os.replace(d / name, tmp_path / "moved.json")
        os.symlink(tmp_path / "moved.json", d / name)
    else:
        os.symlink(victim, d / name)
    with pytest.raises(ResultError, match="symbolic link"):
        store.read_result(d)
    with pytest.raises(ResultError, match="symbolic link"):
        store.write_result(d, _result(status="incomplete"))
    with pytest.raises(ResultError, match="symbolic link"):
        store.open_journal(d)
    assert victim.read_text() == "precious\n"


def test_links_inside_the_folder_are_fine_and_a_linked_folder_is_not_written(tmp_path):
    d = tmp_path / "run"
    (d / "points").mkdir(parents=True)
    store.write_result(d, _result(status="complete"))
    os.symlink(d / store.RUN_JSON, d / "points" / "same.json")     # stays inside: harmless
    assert store.read_result(d).status == "complete"
    link = tmp_path / "link"
    os.symlink(d, link)
    assert store.read_result(link).status == "complete"             # reading a linked folder: fine
    with pytest.raises(ResultError, match="run folder .* is a symbolic link"):
        store.write_result(link, _result(status="incomplete"))


def test_a_fifo_in_a_run_folder_is_refused_not_waited_on(tmp_path):
    store.write_result(tmp_path, _result(status="complete"))
    os.mkfifo(tmp_path / store.SAMPLES)
    with pytest.raises(ResultError, match="samples.parquet is a named pipe"):
        store.read_samples(tmp_path)


def test_recover_through_a_planted_link_is_refused_on_the_command_line(tmp_path):
    """The issue's demonstration: `bench --recover` on a folder whose run.json temp name is a link."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    d = tmp_path / "runs" / "20260101-000000-digits-host"
    d.mkdir(parents=True)
    store.write_result(d, _result(status="running", kind="bench"))
    os.symlink(victim, d / "samples.journal.0000.arrows")
    p = run_cli("bench", "--recover", d)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert "symbolic link" in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert victim.read_text() == "precious\n"


def test_a_run_reference_too_long_for_a_file_name_is_one_line(tmp_path):
    from edgebench.results.store import resolve_run

    with pytest.raises(ResultError, match="no run 'xxxx") as info:
        resolve_run("x" * 5000, tmp_path)
    assert len(info.value.one_line()) < 300


# ------------------------------------------------------------------------------- item 5: journals

def _journal(tmp_path, chunks=6, name="samples"):
    j = store.open_journal(tmp_path, name)
    for k in range(chunks):
        j.append({"phase": np.array(["measure"] * 4), "e2e_s": np.arange(4) * 0.001 + k,
                  "t_start_ns": np.arange(4, dtype=np.int64) + 1000 * k})
    j.close()
    return journal.paths(tmp_path, name)[0]


@pytest.mark.slow  # a read of the journal per byte of it
def test_every_flipped_byte_of_a_journal_is_caught_or_harmless(tmp_path):
    """Flip each byte of a samples journal in turn: what is read back is always a prefix of the
    chunks written (never a changed value), and any lost chunk is named as damage."""
    store.write_result(tmp_path, _result(status="running"))
    path = _journal(tmp_path)
    truth = store.read_journal(tmp_path)
    assert len(truth) == 24 and truth.attrs["journal_damage"] == []
    clean = path.read_bytes()
    rng = np.random.default_rng(0)
    for pos in range(len(clean)):
        data = bytearray(clean)
        data[pos] ^= 1 << int(rng.integers(8))
        path.write_bytes(bytes(data))
        got = store.read_journal(tmp_path)
        n = len(got)
        assert n % 4 == 0 and n <= 24, pos
        if n:
            pd.testing.assert_frame_equal(got.reset_index(drop=True), truth.iloc[:n].reset_index(drop=True))
        if n < 24:
            assert got.attrs["journal_damage"], f"byte {pos}: {24 - n} rows lost without a word"
    path.write_bytes(clean)


def test_a_torn_last_chunk_is_not_damage(tmp_path):
    path = _journal(tmp_path, chunks=3)
    size = path.stat().st_size
    with open(path, "r+b") as f:
        f.truncate(size - 5)
    data = journal.read_chunks(tmp_path, "samples")
    assert data.chunks == 2 and data.damage == [] and data.torn == [path.name]


def test_a_journal_of_the_format_before_checksums_is_still_read(tmp_path):
    import pyarrow as pa

    table = pa.table({"e2e_s": [1.0, 2.0]})
    with pa.OSFile(str(tmp_path / "samples.journal.0000.arrows"), "wb") as f:
        with pa.ipc.new_stream(f, table.schema) as w:
            w.write_table(table)
    assert list(store.read_journal(tmp_path)["e2e_s"]) == [1.0, 2.0]


@pytest.fixture
def killed_bench(tmp_path, monkeypatch):
    """A bench run on the simulated board whose process 'died' right before finishing: run.json
    says running, its samples and repeats journals are on disk."""
    from edgebench.bench.latency import BenchOptions, BenchSession
    from edgebench.boards.registry import get_profile

    monkeypatch.setattr(BenchSession, "finish", lambda self, status, reason: None)
    opts = BenchOptions(min_samples=50, min_time_s=0.2, max_time_s=5, repeat=2, max_repeats=2, sessions=1)
    session = BenchSession(DIGITS_INT8, get_profile("sim-pi5"), opts, runs_root=tmp_path / "runs")
    session.run()
    monkeypatch.undo()
    d = session.run_dir
    assert store.read_result(d).status == "running" and journal.paths(d, "repeats")
    return d


def test_a_flipped_byte_in_the_repeats_journal_still_recovers(killed_bench):
    from edgebench.bench.latency import recover_bench

    (seg,) = journal.paths(killed_bench, "repeats")
    data = bytearray(seg.read_bytes())
    data[-3] ^= 0x40                      # inside the last chunk: the second repeat's cold start
    seg.write_bytes(bytes(data))
    r = recover_bench(killed_bench)
    assert r.status == "incomplete"
    codes = {w.code: w.message for w in r.warnings}
    assert "repeats.journal.0000.arrows: chunk" in codes["journal-damaged"]
    assert store.read_result(killed_bench).status == "incomplete"


def test_a_damaged_run_json_is_recovered_from_the_journal(killed_bench):
    from edgebench.bench.latency import recover_bench

    before = store.read_result(killed_bench)
    (killed_bench / store.RUN_JSON).write_text('{"format": "edgebench-run", "run_id": ')   # torn
    r = recover_bench(killed_bench)
    assert r.status == "incomplete" and r.run_id == before.run_id
    assert r.latency["e2e"].n > 0 and "run-json-damaged" in {w.code for w in r.warnings}
    stored = json.loads((killed_bench / store.RUN_JSON).read_text())
    assert stored["status"] == "incomplete" and stored["extra"]["recovery"]["run_json"]


def test_a_damaged_run_json_without_journals_says_so(tmp_path):
    from edgebench.bench.latency import recover_bench

    (tmp_path / store.RUN_JSON).write_text("{")
    with pytest.raises(ResultError, match="no journal of the run keeps an intact copy"):
        recover_bench(tmp_path)
