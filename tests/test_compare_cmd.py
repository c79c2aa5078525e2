"""`edgebench compare A B`: ratio per stage, refusals (labels, conditions), the --max-slowdown gate, --json."""
import json

import numpy as np
import pandas as pd
import pytest
from conftest import exit_code

from edgebench.bench.compare import compare, condition_differences
from edgebench.report.comparisons import comparison_row
from edgebench.results import store
from edgebench.results.model import RunResult


def make_run(root, run_id, median_s=1e-3, label="measured", repeats=3, n=2000, seed=0, precision="int8",
             threads=1, kind="bench", cpus="0", sha=None):
    """A stored bench run with ``repeats`` runs of lognormal latencies around ``median_s``."""
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(repeats):
        run_effect = np.exp(rng.normal(0, 0.01))
        e2e = median_s * run_effect * np.exp(rng.normal(0, 0.05, n))
        rows.append(pd.DataFrame({"phase": "measure", "repeat": k, "t_start_ns": np.arange(n) * 10_000,
                                  "e2e_s": e2e, "prep_s": e2e * 0.1, "set_s": e2e * 0.05, "invoke_s": e2e * 0.8,
                                  "get_s": e2e * 0.05, "input_index": np.arange(n) % 64}))
    frame = pd.concat(rows, ignore_index=True)
    r = RunResult(run_id=run_id, created_utc="2026-01-01T00:00:00+00:00", kind=kind, status="complete", label=label)
    r.model = {"name": f"model_{run_id}", "sha256": sha or run_id * 8, "precision": precision}
    r.runtime = {"name": "ai-edge-litert", "version": "2.3.0", "kernels": "xnnpack", "threads": threads,
                 "delegate": None}
    r.board = {"name": "pi5", "system": {"cpu": {"model_name": "Cortex-A76"}}}
    r.settings = {"agent_cpus": cpus}
    r.scenario = {"name": "single-stream", "inputs": {"source": "random", "shape": [8, 8, 1], "sha256": "e" * 64}}
    med = float(np.median(frame["e2e_s"]))
    per = [float(np.median(g["e2e_s"])) for _, g in frame.groupby("repeat")]
    if kind != "accuracy":   # per_run: what the runs folder holds of each session (read back by compare)
        r.latency = {s: {"median_s": med * f, "ci_low_s": med * f * 0.98, "ci_high_s": med * f * 1.02,
                         "runs": repeats, "n": len(frame),
                         "per_run": [{"median_s": m * f, "se_log": 0.05 * 1.25 / np.sqrt(n), "df": 50, "n": n}
                                     for m in per]}
                     for s, f in (("e2e", 1.0), ("prep", 0.1), ("set", 0.05), ("invoke", 0.8), ("get", 0.05))}
    d = root / f"20260101-0000{len(list(root.iterdir())):02d}-{run_id}-pi5"
    d.mkdir()
    store.write_result(d, r)
    if kind != "accuracy":
        store.write_samples(d, frame)
    return d


@pytest.fixture
def runs(tmp_path):
    make_run(tmp_path, "base", 1e-3, seed=1)
    make_run(tmp_path, "same", 1e-3, seed=2)
    make_run(tmp_path, "slow", 1.5e-3, seed=3)
    make_run(tmp_path, "sim", 1e-3, label="simulated", seed=4)
    make_run(tmp_path, "fp32", 2e-3, precision="fp32", threads=4, cpus=None, seed=5)
    make_run(tmp_path, "acc", kind="accuracy")
    return tmp_path


def test_same_conditions_compare_every_stage(runs, capsys):
    assert exit_code("compare", "base", "slow", "--runs-dir", runs) == 0
    text = capsys.readouterr().out
    rows = {ln.split()[0]: ln.split() for ln in text.splitlines() if ln.split()}
    for stage in ("e2e", "prep", "set", "invoke", "get"):    # one line per stage: medians, ratio, CI, verdict
        assert stage in rows and len(rows[stage]) == 12, rows.get(stage)   # with the Holm-adjusted CI
    out = " ".join(text.split())
    assert "slower" in out and "Holm-adjusted over 5 stages" in out
    assert "every recorded condition is the same" in out


def test_json_is_the_comparison_to_dict(runs, capsys):
    assert exit_code("compare", "base", "slow", "--runs-dir", runs, "--json") == 0
    d = json.loads(capsys.readouterr().out)
    assert d["format"] == "edgebench-compare" and d["baseline"] == "base" and d["candidate"] == "slow"
    s = d["stages"]["e2e"]
    assert s["ratio"] == pytest.approx(1 / 1.5, rel=0.03) and s["ci_low"] < s["ratio"] < s["ci_high"]
    assert s["verdict"] == "slower" and s["runs_a"] == s["runs_b"] == 3
    assert set(d["stages"]) == {"e2e", "prep", "set", "invoke", "get"} and d["differences"] == []
    assert d["gate"] is None and d["label"] == "measured"


def test_no_difference_gives_no_verdict(runs, capsys):
    assert exit_code("compare", "base", "same", "--runs-dir", runs, "--json") == 0
    s = json.loads(capsys.readouterr().out)["stages"]["e2e"]
    assert s["ci_low"] < 1 < s["ci_high"] and s["verdict"] == "no difference resolved"


def test_refuses_measured_against_simulated(runs, capsys):
    assert exit_code("compare", "base", "sim", "--runs-dir", runs, "--allow-different") == 1
    err = capsys.readouterr().err
    assert err.startswith("error: refusing to compare measured with simulated") and err.count("\n") == 1


def test_compares_two_precisions_and_reports_differing_conditions(runs, capsys):
    # FP32 (4 threads, unpinned) against INT8: what compare is for; the differences are reported, not refused
    assert exit_code("compare", "fp32", "base", "--runs-dir", runs) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "conditions differ (3):" in out and "threads: 4 (A) vs 1 (B)" in out and "faster" in out
    assert "pinning (settings.agent_cpus): None (A) vs 0 (B)" in out
    assert "case: different invocations" in out and "edgebench bench A.tflite B.tflite" in out


def test_refuses_another_board_unless_allowed(runs, capsys):
    d = store.resolve_run("20260101-000004", runs)
    r = store.read_result(d)
    r.board = {"name": "pi4", "system": {"cpu": {"model_name": "Cortex-A72"}}}
    store.write_result(d, r)
    assert exit_code("compare", "fp32", "base", "--runs-dir", runs) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "refusing to compare runs measured under different board pi4 vs pi5" in err
    assert "CPU model" in err and "--allow-different" in err and "threads" not in err
    assert exit_code("compare", "fp32", "base", "--runs-dir", runs, "--allow-different") == 0


def test_interleaved_runs_are_compared_without_the_session_term(runs, capsys):
    for ref, other in (("base", "same"), ("same", "base")):
        d = store.resolve_run(ref, runs)
        r = store.read_result(d)
        r.settings.interleaved_with = [other]
        store.write_result(d, r)
    assert exit_code("compare", "base", "same", "--runs-dir", runs, "--json") == 0
    paired = json.loads(capsys.readouterr().out)
    assert paired["case"].startswith("interleaved") and paired["variation"]["session"] is None
    assert exit_code("compare", "base", "slow", "--runs-dir", runs, "--json") == 0
    apart = json.loads(capsys.readouterr().out)
    assert apart["case"].startswith("different") and apart["variation"]["session"]["cv"] > 0
    width = lambda c: c["speedup"]["ci_high"] / c["speedup"]["ci_low"]   # noqa: E731
    assert width(paired) < width(apart)
    for c in (paired, apart):     # the point is computed from what the interval is: always inside it
        assert c["speedup"]["ci_low"] <= c["speedup"]["ratio"] <= c["speedup"]["ci_high"]


@pytest.mark.slow
def test_max_slowdown_gate(runs, capsys):
    assert exit_code("compare", "base", "slow", "--runs-dir", runs, "--max-slowdown", "1.2") == 2
    captured = capsys.readouterr()
    assert "FAILED" in captured.out and captured.err.startswith("error: model_slow is slower than 1.2x")
    assert exit_code("compare", "base", "slow", "--runs-dir", runs, "--max-slowdown", "1.8", "--json") == 0
    gate = json.loads(capsys.readouterr().out)["gate"]
    assert gate["failed"] is False and gate["slowdown_ci_low"] < 1.5 < gate["slowdown_ci_high"]
    # the CI contains 1 but 0% lies below what one invocation against one detects: cannot decide, exit 3
    assert exit_code("compare", "base", "same", "--runs-dir", runs, "--max-slowdown", "1.0") == 3
    assert "cannot decide" in capsys.readouterr().err
    assert exit_code("compare", "base", "slow", "--runs-dir", runs, "--max-slowdown", "0") == 1


@pytest.mark.slow
def test_gate_below_its_mde_does_not_pass_silently(runs, capsys):
    assert exit_code("compare", "base", "same", "--runs-dir", runs, "--max-slowdown", "1.05", "--json") == 3
    c = json.loads(capsys.readouterr().out)
    mde = c["mde"]["ratio"]
    assert c["gate"]["undecided"] is True and c["gate"]["failed"] is False and mde > 1.05
    assert c["mde"]["power"] == 0.8 and c["mde"]["more_sessions_for"]["1.05"] > 0
    # a threshold above the detectable difference decides: it passes
    assert exit_code("compare", "base", "same", "--runs-dir", runs, "--max-slowdown", f"{mde + 0.01:.3f}") == 0
    out = capsys.readouterr().out
    assert "this comparison detects a difference of >=" in out and "passed" in out


@pytest.mark.slow
def test_every_session_on_record_of_both_sides_is_combined(tmp_path, capsys):
    for k in range(3):     # three invocations of each model, the candidate 5% slower
        make_run(tmp_path, f"a{k}", 1e-3, seed=10 + k, sha="a" * 64)
        make_run(tmp_path, f"b{k}", 1.05e-3, seed=20 + k, sha="b" * 64)
    make_run(tmp_path, "other", 3e-3, seed=30, sha="c" * 64)   # another model: pooled for variation, not a side
    assert exit_code("compare", "a0", "b0", "--runs-dir", tmp_path, "--json") == 0
    c = json.loads(capsys.readouterr().out)
    assert sorted(c["sessions"]["baseline"]) == ["a0", "a1", "a2"]
    assert sorted(c["sessions"]["candidate"]) == ["b0", "b1", "b2"]
    head = c["speedup"]
    assert head["sessions_a"] == 3 and head["sessions_b"] == 3
    assert head["this_invocation"]["se_log"] > head["se_log"]   # three sessions a side: a narrower interval
    assert exit_code("compare", "a0", "b0", "--runs-dir", tmp_path) == 0
    out = capsys.readouterr().out
    assert "every session on record combined: 3 of A" in out and "3 vs 3 sessions on record" in out
    assert exit_code("compare", "a0", "b0", "--runs-dir", tmp_path, "--only-these", "--json") == 0
    only = json.loads(capsys.readouterr().out)
    assert only["sessions"] == {} and only["speedup"]["se_log"] == pytest.approx(head["this_invocation"]["se_log"])
    assert only["mde"]["ratio"] > c["mde"]["ratio"]
    # the printed simultaneous (Holm) CI and the verdict agree: an adjusted CI excluding 1 is a verdict
    for s in (*c["stages"].values(), *only["stages"].values()):
        assert s["ci_adjusted_low"] <= s["ci_low"] and s["ci_adjusted_high"] >= s["ci_high"]
        if s["ci_adjusted_low"] > 1 or s["ci_adjusted_high"] < 1:
            assert s["verdict"] != "no difference resolved"


@pytest.mark.slow
def test_a_level_shift_against_the_sessions_on_record_is_flagged(tmp_path, capsys):
    for k in range(4):
        make_run(tmp_path, f"a{k}", 1e-3, seed=40 + k, sha="a" * 64)
        make_run(tmp_path, f"b{k}", 1e-3, seed=50 + k, sha="b" * 64)
    make_run(tmp_path, "bnew", 1.4e-3, seed=60, sha="b" * 64)    # this week B's runs sit 40% higher
    assert exit_code("compare", "a0", "bnew", "--runs-dir", tmp_path, "--json") == 0
    c = json.loads(capsys.readouterr().out)
    assert c["speedup"]["level_shift_p_b"] is not None and c["speedup"]["level_shift_p_a"] is None
    assert exit_code("compare", "a0", "bnew", "--runs-dir", tmp_path) == 0
    assert "WARNING: this run of B" in capsys.readouterr().out
    assert exit_code("compare", "a0", "b0", "--runs-dir", tmp_path, "--json") == 0
    c = json.loads(capsys.readouterr().out)
    assert c["speedup"]["level_shift_p_a"] is None and c["speedup"]["level_shift_p_b"] is None


def test_bad_input_is_one_line(runs, capsys):
    for args, needle in ((("base", "nosuch"), "no run 'nosuch'"), (("base", "acc"), "has no e2e latency"),
                         (("base", "slow", "--stage", "kernel"), "unknown stage 'kernel'")):
        assert exit_code("compare", *args, "--runs-dir", runs) == 1
        err = capsys.readouterr().err
        assert needle in err and err.count("\n") == 1, err


def test_condition_differences_lists_every_condition(runs):
    a = store.read_result(store.resolve_run("20260101-000000", runs))
    b = store.read_result(store.resolve_run("20260101-000004", runs))
    names = [d["condition"] for d in condition_differences(a, b)]
    assert names == ["threads", "pinning (settings.agent_cpus)", "model precision"]
    b.runtime.version = "2.4.0"
    b.board.system.cpu = {**(b.board.system.cpu or {}), "model_name": "Cortex-A72"}
    b.scenario.inputs.shape = [4, 4, 1]
    names = [d["condition"] for d in condition_differences(a, b)]
    assert {"runtime version", "CPU model", "inputs shape"} <= set(names)


def test_soak_runs_compare_their_sustained_window(tmp_path):
    d = make_run(tmp_path, "s1")
    frame = store.read_samples(d)
    frame["phase"] = "sustained"
    r = store.read_result(d)
    comp = compare(r, frame, r, frame)
    assert comp.speedup["ratio"] == pytest.approx(1.0)


def test_nothing_detectable_within_the_limit_is_said_not_printed_as_a_number(tmp_path, capsys):
    """Two invocations of very few, very noisy samples: the minimum detectable effect lies beyond
    the largest ratio it is quoted up to, so it is no figure (once printed as '>= 375738.5%')."""
    from edgebench.stats.power import MDE_LIMIT

    for run_id, seed in (("a", 1), ("b", 2)):
        d = make_run(tmp_path, run_id, 1e-3, repeats=2, n=12, seed=seed)
        frame = store.read_samples(d)
        frame["e2e_s"] = 1e-3 * np.exp(np.random.default_rng(seed).normal(0, 6, len(frame)))
        store.write_samples(d, frame)
    limit = f"+{100 * (MDE_LIMIT - 1):.0f}%"
    assert exit_code("compare", "a", "b", "--runs-dir", tmp_path) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"this comparison detects no difference up to {limit}" in out and "too few invocations" in out
    assert "detects a difference of >=" not in out and "now detects >=" not in out
    assert exit_code("compare", "a", "b", "--runs-dir", tmp_path, "--json") == 0
    c = json.loads(capsys.readouterr().out)
    assert c["mde"]["ratio"] is None and c["mde"]["percent"] is None and c["mde"]["beyond_limit"] is True
    assert c["mde"]["limit_ratio"] == MDE_LIMIT and "too few invocations" in c["mde"]["reason"]
    assert c["mde"]["interleaved_ratio"] is None
    # a gate cannot rest on it: it cannot decide (exit 3), and says why without a figure
    assert exit_code("compare", "a", "b", "--runs-dir", tmp_path, "--max-slowdown", "1.05") == 3
    captured = capsys.readouterr()
    gate_line = next(ln for ln in captured.out.splitlines() if ln.startswith("gate "))
    assert f"detects no slowdown up to {limit}" in gate_line and "CANNOT DECIDE" in gate_line
    err = " ".join(captured.err.split())
    assert f"detects no slowdown up to {limit}" in err and ">=" not in err
    da, db = store.resolve_run("a", tmp_path), store.resolve_run("b", tmp_path)
    c = compare(store.read_result(da), store.read_samples(da), store.read_result(db), store.read_samples(db))
    assert comparison_row("e2e", c.stages["e2e"], 1)[-1] == f"none up to {limit}"     # the report's table row
