"""`edgebench check --max-slowdown`: the same session-combining comparison as `compare` (sessions per
side, MDE, CANNOT DECIDE with exit 3), `--only-these`; the report's comparisons; read_history by board."""
import json
import shutil

import pytest

from edgebench.bench.compare import compare_stored
from edgebench.bench.sessions import read_history
from edgebench.results import store
from tests.conftest import exit_code
from tests.test_compare_cmd import make_run


@pytest.fixture
def sessions(tmp_path):
    """Three invocations of each of two models, the candidate 10% slower; a third model on record."""
    for k in range(3):
        make_run(tmp_path, f"a{k}", 1e-3, seed=10 + k, sha="a" * 64)
        make_run(tmp_path, f"b{k}", 1.10e-3, seed=20 + k, sha="b" * 64)
        make_run(tmp_path, f"t{k}", 1e-3, seed=30 + k, sha="d" * 64)      # an A/A twin of a
    return tmp_path


@pytest.mark.slow
def test_check_gate_is_compare_gate(sessions, capsys):
    assert exit_code("check", "a0", "b0", "--runs-dir", sessions, "--max-slowdown", "1.05", "--json") == 2
    doc = json.loads(capsys.readouterr().out)
    (c,) = doc["comparisons"]
    assert sorted(c["sessions"]["baseline"]) == ["a0", "a1", "a2"]
    assert sorted(c["sessions"]["candidate"]) == ["b0", "b1", "b2"]
    assert c["gate"]["failed"] is True and c["gate"]["mde"] is not None
    v = next(v for v in doc["verdicts"] if v["rule"] == "slowdown-gate")
    assert v["verdict"] == "fail" and "3 vs 3 sessions" in v["evidence"]
    # the same comparison compare makes: its gate and interval, figure for figure
    assert exit_code("compare", "a0", "b0", "--runs-dir", sessions, "--max-slowdown", "1.05", "--json") == 2
    ref = json.loads(capsys.readouterr().out)
    assert ref["gate"]["slowdown_ci_low"] == pytest.approx(c["gate"]["slowdown_ci_low"])
    assert ref["mde"] == c["mde"]


def test_check_gate_text_names_sessions_and_mde(sessions, capsys):
    assert exit_code("check", "a0", "b0", "--runs-dir", sessions, "--max-slowdown", "1.05") == 2
    captured = capsys.readouterr()
    out = " ".join(captured.out.split())
    assert "every session on record combined: 3 of A (a0, a" in out
    assert "this comparison detects a difference of >=" in out and "gate --max-slowdown 1.05" in out
    assert "FAILED" in out and captured.err.startswith("error: model_b0 is slower than 1.05x")


def test_check_gate_aa_does_not_fail(sessions, capsys):
    rc = exit_code("check", "a0", "t0", "--runs-dir", sessions, "--max-slowdown", "1.05", "--json")
    c = json.loads(capsys.readouterr().out)["comparisons"][0]
    assert rc in (0, 3) and c["gate"]["failed"] is False
    assert (rc == 3) == c["gate"]["undecided"]


def test_check_gate_cannot_decide_below_mde(sessions, capsys):
    # these two runs alone: one invocation against one cannot resolve 1%
    assert exit_code("check", "a0", "t0", "--runs-dir", sessions, "--max-slowdown", "1.01", "--only-these") == 3
    captured = capsys.readouterr()
    assert "CANNOT DECIDE" in captured.out and "cannot decide" in captured.err
    assert exit_code("check", "a0", "t0", "--runs-dir", sessions, "--max-slowdown", "1.01", "--only-these",
               "--json") == 3
    c = json.loads(capsys.readouterr().out)["comparisons"][0]
    assert c["sessions"] == {} and c["gate"]["undecided"] is True


def test_check_gate_baseline_and_bad_input(sessions, capsys):
    assert exit_code("check", "b0", "a0", "--runs-dir", sessions, "--max-slowdown", "1.05", "--baseline-run", "a0",
               "--json") == 2
    assert json.loads(capsys.readouterr().out)["comparisons"][0]["baseline"] == "a0"
    assert exit_code("check", "a0", "--runs-dir", sessions, "--max-slowdown", "1.05") == 1
    err = capsys.readouterr().err
    assert err.startswith("error: --max-slowdown needs a second latency run") and "Traceback" not in err
    assert exit_code("check", "a0", "b0", "--runs-dir", sessions, "--max-slowdown", "1.05", "--baseline-run", "t0") == 1
    assert "is not a run with e2e latency among the runs checked" in capsys.readouterr().err
    # without a gate, check is unchanged: no comparison, no slowdown rule
    assert exit_code("check", "a0", "b0", "--runs-dir", sessions, "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["comparisons"] == [] and all(v["rule"] != "slowdown-gate" for v in doc["verdicts"])


def test_read_history_selects_by_recorded_board_not_folder_name(sessions):
    a0 = next(d for d in sessions.iterdir() if d.name.endswith("-a0-pi5"))
    ra = store.read_result(a0)
    before = {rec.run_id for rec in read_history(ra, sessions, later_too=True)}
    assert {"a1", "a2", "b0"} <= before
    for d in list(sessions.iterdir()):       # folders renamed: no board slug left in any name
        if d != a0:
            shutil.move(d, d.with_name(d.name.replace("-pi5", "-renamed")))
    assert {rec.run_id for rec in read_history(ra, sessions, later_too=True)} == before
    other = next(d for d in sessions.iterdir() if d.name.endswith("-b1-renamed"))
    r = store.read_result(other)
    r.board.name = "jetson"    # another board as recorded, whatever the folder says
    store.write_result(other, r)
    assert "b1" not in {rec.run_id for rec in read_history(ra, sessions, later_too=True)}


@pytest.mark.slow
def test_report_comparisons_are_compare_stored(sessions, tmp_path):
    from edgebench.cli.report_cmd import _comparisons, gather
    from edgebench.report.html import render_html, render_markdown

    a0, b0 = (next(d for d in sessions.iterdir() if d.name.endswith(f"-{x}-pi5")) for x in ("a0", "b0"))
    datas = [gather(a0), gather(b0)]
    (c,) = _comparisons(datas)
    ref = compare_stored(a0, store.read_result(a0), b0, store.read_result(b0), stage="e2e",
                         stages=("e2e", "invoke"))
    assert c.stages["e2e"]["ratio"] == pytest.approx(ref.stages["e2e"]["ratio"])
    assert c.stages["e2e"]["sessions_a"] == 3 and c.mde == ref.mde
    from edgebench.report.check import CheckReport

    md = render_markdown(datas, CheckReport([], []), [c])
    plain = md.replace("\\", "")
    assert "sessions A/B" in plain and "| e2e |" in plain and "| 3/3 |" in plain
    assert "this comparison detects" in plain and "every session on record combined: 3 of A" in plain
    html = render_html(datas, CheckReport([], []), [c])
    assert "simultaneous CI (Holm)" in html and "detects (80% power)" in html and "3 of A" in html
