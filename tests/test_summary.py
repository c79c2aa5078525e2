"""The one-screen summary, warnings ranked and folded across runs, acknowledged warnings, peak memory."""
import json

import pytest
from conftest import DIGITS_INT8
from test_check import SHA_FP32, accuracy, bench

from edgebench.bench.memory import HWM, MAXRSS, mcu_memory, process_memory
from edgebench.boards.registry import get_profile
from edgebench.report.check import check
from edgebench.report.summary import fit_text, memory_text, summarise
from edgebench.report.warnings import acknowledged_line, fold
from edgebench.results import acks, store

W = {"spread": {"code": "spread", "message": "latencies vary", "remedy": "close other programs"},
     "single": {"code": "single-session", "message": "first session", "remedy": "run it again"},
     "nosensor": {"code": "no-thermal-source", "message": "no sensor", "remedy": "add one"}}


def _runs():
    a = bench("r1", warnings=[W["spread"], W["nosensor"]])
    b = bench("r2", precision="fp32", sha=SHA_FP32, name="digits_fp32", warnings=[W["nosensor"], W["single"],
                                                                                   W["spread"]])
    c = bench("r3", name="digits_int8", board="qemu-m4", label="emulated", warnings=[W["single"]])
    return a, b, c


def test_warnings_are_folded_by_code_and_ranked_by_what_they_change():
    groups, acked = fold(_runs())
    codes = [g.code for g in groups]
    # the emulated label first (not a real board's speed), then uncertainty, then conditions
    assert codes == ["label-emulated", "single-session", "spread", "no-thermal-source"]
    spread = groups[2]
    assert spread.runs == ["r1", "r2"] and spread.remedy == "close other programs" and acked == []


def test_a_failed_gate_is_first():
    r = accuracy()
    r.extra.accuracy.validation = {"failed": ["top-1 drop"]}
    r.warnings = [W["spread"]]
    groups, _ = fold([r])
    assert groups[0].code == "gate-failed" and "top-1 drop" in groups[0].message
    # an acknowledged.json edited by hand cannot fold a failed gate away
    groups, acked = fold([r], {"gate-failed": "known", "spread": ""})
    assert groups[0].code == "gate-failed" and [g.code for g in acked] == ["spread"]


def test_acknowledged_warnings_are_kept_apart_for_one_line():
    groups, acked = fold(_runs(), {"no-thermal-source": "CI VM", "spread": ""})
    assert [g.code for g in acked] == ["spread", "no-thermal-source"]
    assert "spread" not in [g.code for g in groups]
    assert acknowledged_line({g.code: g.acknowledged for g in acked}) == \
        "2 acknowledged warnings: spread, no-thermal-source (CI VM)"


def test_the_summary_has_a_row_per_model_and_board_with_check_icons():
    a, b, c = _runs()
    acc = accuracy("acc")
    acc.board = {"name": "pi5"}
    acc.extra.accuracy.accuracy = {"candidate": {"top1": {"accuracy": 0.975, "ci_low": 0.97, "ci_high": 0.98}}}
    acc.extra.accuracy.paired.diff_ci_low_points, acc.extra.accuracy.paired.diff_ci_high_points = -0.9, -0.1
    a.extra = {"memory": {"peak_rss_bytes": 48 * 2 ** 20, "rss_bytes": 40 * 2 ** 20, "basis": HWM}}
    runs = [a, b, c, acc]
    s = summarise(runs, check(runs), {"no-thermal-source": "CI VM"}, ("INT8 is 0.5x the speed of FP32",))
    rows = {(r.model, r.board): r for r in s.rows}
    assert set(rows) == {("digits_int8", "pi5"), ("digits_fp32", "pi5"), ("digits_int8", "qemu-m4")}
    int8 = rows[("digits_int8", "pi5")]
    assert int8.runs == ["r1", "acc"]                     # the bench and the accuracy run of one model, one row
    assert int8.headline.startswith("e2e 1.00 ms [") and int8.headline.endswith("]")
    assert int8.accuracy == "-0.50 pt [-0.90, -0.10]" and int8.memory == "peak RSS 48.0 MiB"
    cell = int8.check()
    assert cell.count("✅") == 1 and ("⚠️" in cell or "❌" in cell)
    assert rows[("digits_int8", "qemu-m4")].label == "emulated"
    assert s.acknowledged_line == "1 acknowledged warning: no-thermal-source (CI VM)"
    assert s.answers == ["INT8 is 0.5x the speed of FP32"]
    json.dumps(s.to_dict())


def test_process_memory_prefers_the_high_water_mark_and_keeps_the_peak_of_repeats():
    m = process_memory({"rss_bytes": 100, "maxrss_bytes": 900, "hwm_bytes": 300})
    assert m == {"peak_rss_bytes": 300, "rss_bytes": 100, "basis": HWM}
    assert process_memory({"rss_bytes": 100, "maxrss_bytes": 900})["basis"] == MAXRSS
    later = process_memory({"rss_bytes": 90, "hwm_bytes": 200}, before=m)
    assert later["peak_rss_bytes"] == 300 and later["rss_bytes"] == 90
    assert process_memory({}) is None


def test_a_microcontroller_run_has_its_arena_and_the_fit_against_the_board():
    mem = mcu_memory(str(DIGITS_INT8), get_profile("qemu-m4"))
    assert mem["arena_bytes"] > 0 and mem["model_bytes"] > 0
    assert {c["what"] for c in mem["fit"]} >= {"arena"} and all(c["fits"] for c in mem["fit"])
    assert memory_text(mem).startswith("arena ")
    assert fit_text(mem).startswith("fits: ")


def test_ack_is_recorded_for_the_folder_and_runs_print_it_folded(tmp_path, cli):
    run = bench("abc123def456", warnings=[W["nosensor"], W["spread"]])
    run_dir = tmp_path / "20260101-000000-digits_int8-pi5"
    run_dir.mkdir()
    store.write_result(run_dir, run)
    shown = cli("runs", "abc123", "--runs-dir", tmp_path)
    assert "warning (no-thermal-source)" in shown.stdout and "acknowledged" not in shown.stdout
    r = cli("ack", "no-thermal-source", "--reason", "CI VM", "--runs-dir", tmp_path)
    assert r.returncode == 0 and "1 run(s) there carry it" in r.stdout, r.stdout + r.stderr
    assert acks.read_acks(tmp_path) == {"no-thermal-source": "CI VM"}
    shown = cli("runs", "abc123", "--runs-dir", tmp_path)
    assert "warning (no-thermal-source)" not in shown.stdout and "warning (spread)" in shown.stdout
    assert "1 acknowledged warning: no-thermal-source (CI VM)" in shown.stdout
    assert store.read_result(run_dir).warnings[0].code == "no-thermal-source"     # still recorded
    listed = cli("ack", "--list", "--runs-dir", tmp_path, "--json")
    assert json.loads(listed.stdout)["acknowledged"] == {"no-thermal-source": "CI VM"}
    assert cli("ack", "no-thermal-source", "--remove", "--runs-dir", tmp_path).returncode == 0
    assert acks.read_acks(tmp_path) == {}


@pytest.mark.parametrize("args, words", [
    (("ack", "Not A Code"), "CODE: "),
    (("ack", "spread", "--remove"), "spread is not acknowledged"),
    (("ack",), "missing CODE"),
    (("ack", "gate-failed", "--reason", "known"), "gate-failed changes the verdict: it cannot be acknowledged"),
])
def test_ack_refuses_bad_input_in_one_line(tmp_path, cli, args, words):
    r = cli(*args, "--runs-dir", tmp_path)
    assert r.returncode == 1 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_a_damaged_acks_file_is_one_line(tmp_path, cli):
    (tmp_path / acks.ACKS_FILE).write_text(json.dumps({"format": "edgebench-acks", "version": 1,
                                                      "acknowledged": [{"code": 3}]}))
    r = cli("ack", "--list", "--runs-dir", tmp_path)
    assert r.returncode == 1 and "acknowledged.json" in r.stderr and "acknowledged" in r.stderr
    assert acks.acks_for([tmp_path / "some-run"]) == {}     # printing runs never fails on it


def test_a_run_prints_every_warning_of_its_own_ranked(tmp_path, cli):
    twice = [{"code": "rate-not-sustained", "message": f"point {i} fell behind", "remedy": "lower --rate"}
             for i in (1, 2)]
    run = bench("fed456abc123", warnings=[W["spread"], *twice])
    run_dir = tmp_path / "20260101-000000-digits_int8-pi5"
    run_dir.mkdir()
    store.write_result(run_dir, run)
    lines = [ln for ln in cli("runs", "fed456", "--runs-dir", tmp_path).stdout.splitlines()
             if ln.startswith("warning (")]
    assert [ln.split(")")[0] for ln in lines] == ["warning (rate-not-sustained"] * 2 + ["warning (spread"]
    assert "point 1 fell behind" in lines[0] and "point 2 fell behind" in lines[1]


def test_fit_is_judged_per_placement():
    ram = {"what": "RAM", "need_bytes": 300, "have_bytes": 200, "fits": False, "placement": "ram"}
    flash = {"what": "flash", "need_bytes": 100, "have_bytes": 1000, "fits": True, "placement": "flash"}
    arena = {"what": "arena", "need_bytes": 50, "have_bytes": 100, "fits": True, "placement": "both"}
    assert fit_text({"fit": [ram, flash, arena]}, short=True) == "fits (arena 50%)"   # linked into flash it fits
    assert fit_text({"fit": [ram, arena]}).startswith("DOES NOT FIT: RAM 300 B of 200 B (150%)")


def test_the_report_opens_with_the_summary_and_says_each_remedy_once():
    from edgebench.report.html import RunData, render_html, render_markdown

    runs = _runs()[:2]
    datas = [RunData(result=r, path=f"runs/{r.run_id}") for r in runs]
    report = check(runs)
    page = render_html(datas, report, acks={"no-thermal-source": "CI VM"})
    assert page.index("<h2>Summary</h2>") < page.index("<h2>Claim</h2>")
    assert page.count("close other programs") == 1          # spread's remedy, two runs
    assert "1 acknowledged warning: no-thermal-source (CI VM)" in page and "add one" not in page
    md = render_markdown(datas, report)
    head = md[:md.index("> **r1**")]
    assert "| digits\\_int8 | pi5 | measured |" in head and head.count("close other programs") == 1
