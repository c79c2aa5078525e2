"""`edgebench history` and the regression-on-record check over a runs folder's index."""
from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import DIGITS_FP32

from tests.conftest import require_module
from tests.store_runs import make_run

require_module("duckdb")

from edgebench.errors import UsageError  # noqa: E402
from edgebench.store.embedded import EmbeddedStore  # noqa: E402
from edgebench.store.history import find_series, history  # noqa: E402

OLD, NEW = "a" * 64, "b" * 64


def swapped_series(root, n_before: int = 8, n_after: int = 8, slower: float = 1.3, seed: int = 0):
    """Runs of one model name: ``n_before`` with one file, then ``n_after`` with a slower one (and a
    commit label per run)."""
    rng = np.random.default_rng(seed)
    for i in range(n_before + n_after):
        after = i >= n_before
        median = 1e-3 * (slower if after else 1.0) * float(np.exp(rng.normal(0, 0.02)))
        make_run(root, i, median_s=median, model_sha256=NEW if after else OLD, labels={"commit": commit(i)})


def commit(i: int) -> str:
    return f"c{i:02d}".ljust(40, "0")


def test_the_history_marks_the_model_change_and_finds_the_change_point(tmp_path):
    swapped_series(tmp_path)
    with EmbeddedStore(tmp_path) as s:
        s.refresh()
        key = find_series(s, "digits_fp32", "host")
        h = history(s, key, "e2e")
    assert len(h.points) == 16 and h.marks[8] == ["model"] and all(m == [] for i, m in enumerate(h.marks) if i != 8)
    [c] = h.changes
    assert c.index == 8 and 1.2 < c.ratio < 1.4 and c.ci_low > 1 and h.regression(c)
    assert (c.commit_before, c.commit_after) == (commit(7), commit(8))


def test_a_steady_series_has_no_change_point(tmp_path):
    swapped_series(tmp_path, slower=1.0)
    with EmbeddedStore(tmp_path) as s:
        s.refresh()
        h = history(s, find_series(s, "digits_fp32", "host"), "e2e")
    assert h.changes == [] and len(h.points) == 16


def test_by_commit_folds_the_runs_of_one_commit(tmp_path):
    for i in range(6):
        make_run(tmp_path, i, median_s=1e-3 * (1 + 0.01 * i), labels={"commit": f"{i // 2:040x}"})
    make_run(tmp_path, 7, median_s=1e-3)                       # no commit label
    with EmbeddedStore(tmp_path) as s:
        s.refresh()
        h = history(s, find_series(s, "digits_fp32", "host"), "e2e", by="commit")
    assert [p.commit for p in h.points] == [f"{i:040x}" for i in range(3)] and h.left_out == 1
    assert h.points[0].value == pytest.approx(1e-3 * np.sqrt(1.01), rel=1e-9)    # geometric mean of its two runs


def test_several_series_name_what_to_narrow_by(tmp_path):
    make_run(tmp_path, 1)
    d = make_run(tmp_path, 2)
    doc = json.loads((d / "run.json").read_text())
    doc["scenario"]["name"] = "offline"
    (d / "run.json").write_text(json.dumps(doc))
    with EmbeddedStore(tmp_path) as s:
        s.refresh()
        with pytest.raises(UsageError) as exc:
            find_series(s, "digits_fp32", "host")
        assert "--scenario" in exc.value.hint
        assert find_series(s, "digits_fp32", "host", scenario="offline").scenario == "offline"
        with pytest.raises(UsageError):
            find_series(s, "digits_fp32", "pi5")


def test_check_warns_of_a_regression_on_record(tmp_path):
    from edgebench.bench.sessions import check_on_record
    from edgebench.results.store import find_runs, read_result

    swapped_series(tmp_path)
    dirs = find_runs(tmp_path)
    last, first = dirs[-1], dirs[0]
    report = check_on_record([(last, read_result(last)), (first, read_result(first))])
    [v] = [v for v in report.verdicts if v.rule == "regression-on-record"]
    assert v.verdict == "warn" and "moved ×1.2" in v.evidence and f"commits {commit(7)[:10]}..{commit(8)[:10]}" in v.evidence
    assert "000000000000: no regression" in v.evidence          # the first run is before the change


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "edgebench", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


@pytest.mark.slow
def test_the_history_verb_prints_json_csv_and_changes(tmp_path):
    swapped_series(tmp_path)
    p = _cli("history", "digits_fp32", "--board", "host", "--runs-dir", str(tmp_path), "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["format"] == "edgebench-history" and len(doc["points"]) == 16
    assert [c["index"] for c in doc["changes"]] == [8] and doc["changes"][0]["regression"] is True
    assert doc["points"][8]["changed"] == ["model"] and doc["points"][0]["ci_low"] < doc["points"][0]["value"]
    p = _cli("history", "digits_fp32", "--board", "host", "--runs-dir", str(tmp_path), "--csv", "-")
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    assert len(rows) == 16 and rows[8]["changed"] == "model" and float(rows[8]["change_ratio"]) > 1.2
    out = tmp_path / "history.csv"                           # or a file, written like every other file
    p = _cli("history", "digits_fp32", "--board", "host", "--runs-dir", str(tmp_path), "--csv", str(out))
    assert p.returncode == 0 and list(csv.DictReader(io.StringIO(out.read_text()))) == rows
    p = _cli("history", "digits_fp32", "--board", "host", "--runs-dir", str(tmp_path), "--changes")
    assert p.returncode == 0 and "regression at point 8" in p.stdout
    with EmbeddedStore(tmp_path) as s:                       # --changes records them in the store
        key = find_series(s, "digits_fp32", "host")
        assert [c.index for c in s.changes(key, "e2e")] == [8]
    p = _cli("history", "nomodel", "--board", "host", "--runs-dir", str(tmp_path))
    assert p.returncode == 1 and p.stderr.count("\n") <= 2 and "Traceback" not in p.stderr


@pytest.mark.slow
def test_the_report_draws_the_trend_with_its_change_point(tmp_path):
    runs = tmp_path / "runs"
    swapped_series(runs)
    p = _cli("report", "run-00015", "--runs-dir", str(runs), "-o", str(tmp_path / "r.html"), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    text = (tmp_path / "r.html").read_text()
    start = text.index("<h2>History: digits_fp32 on host")
    section = text[start:text.index("<h2>", start + 4)]
    assert "data:image/png;base64," in section and "a change point (red: a regression)" in section


@pytest.mark.slow
def test_a_bench_run_is_labelled_indexed_and_queued_for_an_unreachable_store(tmp_path):

    from edgebench.results.store import find_runs, read_result
    from edgebench.store.queue import pending

    model = DIGITS_FP32
    runs = tmp_path / "runs"
    p = _cli("bench", str(model), "--board", "host", "--runs-dir", str(runs), "--min-samples", "50", "--min-time",
             "0.2", "--max-time", "2", "--repeat", "2", "--max-repeats", "2", "-q", "--label", "ci=nightly",
             "--store", "postgresql://lab:hunter2@127.0.0.1:9/runs?connect_timeout=1", cwd=tmp_path)
    assert p.returncode in (0, 2), p.stderr
    [d] = find_runs(runs)
    assert read_result(d).extra.labels == {"ci": "nightly"}        # tmp_path is no git repository
    with EmbeddedStore(runs) as s:
        assert s.last_read == [] and [k.model for k in s.series()] == ["digits_fp32"]
        s.refresh()
        assert s.last_read == []                                  # the verb appended it: nothing left to read
    [entry] = pending(runs)
    assert entry["run_id"] == read_result(d).run_id and "hunter2" not in p.stderr + json.dumps(entry)
    assert "queued" in p.stderr and "Traceback" not in p.stderr
