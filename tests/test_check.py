"""`edgebench check`: each rule's verdicts on runs built to pass, warn or fail it; the command."""
import copy
import json

from conftest import exit_code  # the command line in this process; its exit code

from edgebench.report import check as ck
from edgebench.results import store
from edgebench.results.model import RunResult

SHA_INT8, SHA_FP32, SHA_KWS = "a" * 64, "b" * 64, "c" * 64


def _lat(median, runs=3, ci=True):
    per_run = [{"median_s": median * f, "ci_low_s": median * f * 0.99, "ci_high_s": median * f * 1.01, "n": 1000}
               for f in (0.99, 1.0, 1.01)[:runs]]
    return {"n": 1000 * runs, "median_s": median, "ci_low_s": median * 0.97 if ci else None,
            "ci_high_s": median * 1.03 if ci else None, "runs": runs, "per_run": per_run, "between_run_cv": 0.01,
            "n_eff": 500, "p99_s": median * 1.5}


def bench(run_id="r1", precision="int8", sha=SHA_INT8, name="digits_int8", board="pi5", label="measured", **over):
    bits = 8 if precision == "int8" else 32
    r = RunResult(run_id=run_id, created_utc="2026-01-01T00:00:00+00:00", kind="bench", status="complete",
                  label=label)
    r.model = {"name": name, "sha256": sha, "precision": precision, "weights_bits": bits, "activations_bits": bits,
               "inputs": [{"shape": [1, 8, 8, 1]}]}
    r.runtime = {"name": "ai-edge-litert", "version": "2.3.0", "kernels": "xnnpack", "threads": 1, "delegate": None}
    r.board = {"name": board, "system": {"cpu": {"model_name": "Cortex-A76"}}}
    r.scenario = {"name": "single-stream", "batch": 1,
                  "inputs": {"source": "random", "shape": [8, 8, 1], "count": 64, "range": [0, 1], "sha256": "d" * 64}}
    r.timing = {"e2e_includes": "input quantization, invoke, output read", "excludes": None}
    r.latency = {"e2e": _lat(1e-3), "invoke": _lat(0.8e-3)}
    r.cold_start = {"load_s": 0.01, "first_inference_s": 0.003}
    for k, v in over.items():
        setattr(r, k, v)
    return r


def accuracy(run_id="acc", sha=SHA_INT8, resolvable=True, mdd=1.2, relative=True):
    r = RunResult(run_id=run_id, created_utc="2026-01-01T00:00:00+00:00", kind="accuracy", status="complete")
    r.model = {"name": "digits_int8", "sha256": sha, "precision": "int8", "weights_bits": 8, "activations_bits": 8,
               "inputs": [{"shape": [1, 8, 8, 1]}]}
    r.runtime = {"name": "ai-edge-litert", "version": "2.3.0", "kernels": "xnnpack", "threads": 1}
    r.board = {"name": "pi5"}
    r.scenario = {"name": "accuracy", "inputs": {"source": "digits", "shape": [8, 8, 1], "count": 5000}}
    rel = {"candidate_pct_of_baseline_correct": 99.5, "diff_points": -0.5, "error_increase_pct": 25.0,
           "baseline_errors": 100, "candidate_errors": 125} if relative else {"diff_points": -0.5}
    r.extra = {"accuracy": {
        "paired": {"n": 5000, "candidate_accuracy": 0.975, "baseline_accuracy": 0.98, "diff_points": -0.5},
        "relative": rel,
        "resolution": {"n": 5000, "mdd_points": mdd, "observed_diff_points": -0.5, "resolvable": resolvable,
                       "resolvable_at_all": True},
        "candidate": {"board": "pi5", "runtime": {"name": "ai-edge-litert", "version": "2.3.0", "kernels": "xnnpack"}},
        "baseline": {"board": "pi5", "where": "board", "model": {"name": "digits_fp32", "sha256": SHA_FP32},
                     "runtime": {"name": "ai-edge-litert", "version": "2.3.0", "kernels": "xnnpack"}}}}
    return r


def soak(run_id="soak", steady=True):
    r = bench(run_id=run_id)
    r.kind = "soak"
    r.latency = {"e2e": _lat(1.2e-3, runs=1)}
    r.extra = {"soak": {"steady": steady, "duration_s": 300.0, "sustained_over_burst": 0.8}}
    return r


def energy(run_id="en", duty=True, label="measured"):
    r = bench(run_id=run_id)
    r.kind = "energy"
    r.power = {"measured": label == "measured", "label": label, "idle": {"power_w": 2.0},
               "inference": {"energy_j": 0.004}}
    if duty:
        r.power.duty_cycle = {"rate_hz": 10.0, "duty": 0.01, "avg_power_w": 2.03}
    return r


def verdict(rule, runs):
    v = rule(runs)
    assert v.verdict in ck.VERDICTS and v.evidence and v.title
    return v


def test_verdict_and_report_serialise():
    rep = ck.check([bench(), accuracy()])
    d = rep.to_dict()
    assert d["format"] == "edgebench-check" and d["runs"] == ["r1", "acc"]
    assert len(d["verdicts"]) == len(ck.RULES) == 19
    assert {v["rule"] for v in d["verdicts"]} >= {"single-run", "burst-as-sustained", "mixed-labels"}
    assert all(set(v) >= {"rule", "title", "verdict", "evidence", "remedy", "source", "runs"} for v in d["verdicts"])
    assert sum(d["counts"].values()) == 19
    json.dumps(d)


def test_speedup_without_accuracy():
    fp32 = bench("f", precision="fp32", sha=SHA_FP32, name="digits_fp32")
    assert verdict(ck.speedup_without_accuracy, [fp32]).verdict == ck.NA
    assert verdict(ck.speedup_without_accuracy, [bench()]).verdict == ck.WARN
    v = verdict(ck.speedup_without_accuracy, [fp32, bench()])
    assert v.verdict == ck.FAIL and "no accuracy run" in v.evidence and v.remedy
    v = verdict(ck.speedup_without_accuracy, [fp32, bench(), accuracy()])
    assert v.verdict == ck.PASS and "acc" in v.evidence and "97.5%" in v.evidence
    other = accuracy(sha=SHA_KWS)  # an accuracy run of another model does not count
    assert verdict(ck.speedup_without_accuracy, [fp32, bench(), other]).verdict == ck.FAIL


def test_precision_and_kernels_hidden():
    assert verdict(ck.precision_and_kernels, [bench()]).verdict == ck.PASS
    hidden = bench()
    hidden.runtime.kernels = None
    hidden.model = {k: v for k, v in hidden.model.to_dict().items() if k != "weights_bits"}
    v = verdict(ck.precision_and_kernels, [bench(), hidden])
    assert v.verdict == ck.FAIL and "kernels or delegate" in v.evidence and "weights bits" in v.evidence


def test_kernel_only_timing():
    assert "= 80%" in verdict(ck.kernel_only_as_e2e, [bench()]).evidence
    only = bench(latency={"invoke": _lat(1e-3)})
    assert verdict(ck.kernel_only_as_e2e, [only]).verdict == ck.FAIL
    unstated = bench(timing={})
    assert verdict(ck.kernel_only_as_e2e, [unstated]).verdict == ck.WARN
    assert verdict(ck.kernel_only_as_e2e, [accuracy()]).verdict == ck.NA


def test_invoke_only_figure_sold_as_end_to_end():
    # firmware that times the engine alone: prep/set/get are 0, the 'e2e' median is the invoke median
    mcu = bench(latency={"e2e": _lat(1e-3), "invoke": _lat(1e-3), "prep": _lat(0.0), "set": _lat(0.0),
                         "get": _lat(0.0)})
    for st in ("prep", "set", "get"):
        mcu.latency[st].median_s = 0.0
    mcu.extra = {"claim": "1,000 inferences/s achieved single-stream (...), end-to-end incl. the engine"}
    v = verdict(ck.kernel_only_as_e2e, [mcu])
    assert v.verdict == ck.FAIL and "kernel alone" in v.evidence and "sells it as end-to-end" in v.evidence
    from edgebench.report.claim import claim

    mcu.scenario.inputs = {}
    mcu.extra = {}
    mcu.extra.claim = claim(mcu)        # the claim of such a run says so itself now
    assert "KERNEL ONLY" in mcu.extra.claim and "end-to-end" not in mcu.extra.claim
    assert verdict(ck.kernel_only_as_e2e, [mcu]).verdict == ck.WARN


def test_one_model_only_counts_baselines_and_variants():
    assert verdict(ck.one_model_only, [bench(), bench("r2")]).verdict == ck.WARN
    assert verdict(ck.one_model_only, [bench(), accuracy()]).verdict == ck.PASS  # the FP32 baseline is a model too
    assert verdict(ck.one_model_only, [bench(), bench("k", sha=SHA_KWS, name="kws")]).verdict == ck.PASS


def test_baseline_on_other_hardware_or_precision():
    fp32 = bench("f", precision="fp32", sha=SHA_FP32, name="digits_fp32")
    assert verdict(ck.baseline_mismatch, [bench()]).verdict == ck.NA
    assert verdict(ck.baseline_mismatch, [fp32, bench()]).verdict == ck.PASS  # one factor: the model
    elsewhere = bench("f", precision="fp32", sha=SHA_FP32, name="digits_fp32", board="pi4")
    v = verdict(ck.baseline_mismatch, [elsewhere, bench()])
    assert v.verdict == ck.FAIL and "2 factors" in v.evidence and "hardware" in v.evidence
    acc = accuracy()
    acc.extra.accuracy.baseline.board = "host"
    acc.extra.accuracy.baseline.runtime = {"kernels": "reference", "name": "ai-edge-litert", "version": "2.3.0"}
    v = verdict(ck.baseline_mismatch, [acc])
    assert v.verdict == ck.WARN and "kernels: reference vs xnnpack" in v.evidence


def test_preprocessing_excluded():
    assert verdict(ck.preprocessing_excluded, [bench()]).verdict == ck.PASS
    exc = bench(timing={"e2e_includes": "invoke", "excludes": "feature extraction"})
    assert "feature extraction" in verdict(ck.preprocessing_excluded, [exc]).evidence
    assert verdict(ck.preprocessing_excluded, [exc]).verdict == ck.WARN
    assert verdict(ck.preprocessing_excluded, [bench(timing={})]).verdict == ck.FAIL


def test_input_size():
    assert verdict(ck.input_size, [bench()]).verdict == ck.PASS
    r = bench()
    r.scenario.inputs = {}
    assert verdict(ck.input_size, [r]).verdict == ck.FAIL
    r = bench()
    r.scenario.inputs.shape = [4, 4, 1]
    v = verdict(ck.input_size, [r])
    assert v.verdict == ck.FAIL and "8×8×1" in v.evidence
    r = bench()
    r.scenario.batch = 8
    assert verdict(ck.input_size, [r]).verdict == ck.WARN


def test_relative_accuracy():
    v = verdict(ck.relative_accuracy, [accuracy()])
    assert v.verdict == ck.PASS and "-0.50 accuracy points" in v.evidence and "+25.0% errors" in v.evidence
    assert verdict(ck.relative_accuracy, [accuracy(relative=False)]).verdict == ck.WARN
    assert verdict(ck.relative_accuracy, [bench()]).verdict == ck.NA


def test_single_run_and_no_interval():
    assert verdict(ck.single_run, [bench()]).verdict == ck.PASS
    one = bench(latency={"e2e": _lat(1e-3, runs=1)})
    v = verdict(ck.single_run, [one])
    assert v.verdict == ck.WARN and "run-to-run" in v.evidence
    none = bench(latency={"e2e": _lat(1e-3, runs=1, ci=False)})
    assert verdict(ck.single_run, [none]).verdict == ck.FAIL
    assert verdict(ck.single_run, [accuracy()]).verdict == ck.NA
    first = bench(latency={"e2e": {**_lat(1e-3), "sessions": 1}})
    v = verdict(ck.single_run, [first])
    assert v.verdict == ck.WARN and "one invocation" in v.evidence and "run the same bench command" in v.remedy
    later = bench(latency={"e2e": {**_lat(1e-3), "sessions": 4, "between_session_cv": 0.021}})
    v = verdict(ck.single_run, [later])
    assert v.verdict == ck.PASS and "3 earlier invocation(s) (between-session CV 2.1%)" in v.evidence


def test_burst_sold_as_sustained():
    v = verdict(ck.burst_as_sustained, [bench()])
    assert v.verdict == ck.WARN and "no soak" in v.evidence
    assert verdict(ck.burst_as_sustained, [bench(), soak()]).verdict == ck.PASS
    assert verdict(ck.burst_as_sustained, [soak(steady=False)]).verdict == ck.WARN
    other_board = soak()
    other_board.board = {"name": "pi4"}
    assert verdict(ck.burst_as_sustained, [bench(), other_board]).verdict == ck.WARN


def test_power_without_duty_cycle():
    assert verdict(ck.power_without_duty_cycle, [bench()]).verdict == ck.NA
    assert verdict(ck.power_without_duty_cycle, [energy()]).verdict == ck.PASS
    v = verdict(ck.power_without_duty_cycle, [energy(duty=False)])
    assert v.verdict == ck.FAIL and v.remedy


def test_test_set_too_small():
    assert verdict(ck.small_test_set, [accuracy()]).verdict == ck.PASS
    v = verdict(ck.small_test_set, [accuracy(resolvable=False, mdd=3.1)])
    assert v.verdict == ck.WARN and "3.10 points" in v.evidence
    a = accuracy()
    a.extra.accuracy.resolution.resolvable_at_all = False
    assert verdict(ck.small_test_set, [a]).verdict == ck.FAIL
    # the same unresolvable test set under a claimed speed-up (FP32 and INT8 latency runs): fail, not warn
    fp32 = bench("f", precision="fp32", sha=SHA_FP32, name="digits_fp32")
    v = verdict(ck.small_test_set, [accuracy(resolvable=False, mdd=3.1), bench(), fp32])
    assert v.verdict == ck.FAIL and "a speed-up is claimed" in v.evidence


def _with_sessions(r, medians, combined=()):
    r.latency["e2e"].session_runs = list(combined)
    return {r.run_id: [{"run_id": f"s{k}", "median_s": m} for k, m in enumerate(medians)]}


def test_best_of_n():
    assert ck.best_of_n([bench()]).verdict == ck.NA            # nothing known of the folder
    r = bench()
    v = ck.best_of_n([r], _with_sessions(r, [1.05e-3, 1.08e-3, 1.1e-3]))
    assert v.verdict == ck.FAIL and "fastest of 4 sessions" in v.evidence and "latest run" in v.remedy
    r = bench()
    assert ck.best_of_n([r], _with_sessions(r, [0.95e-3, 1.01e-3])).verdict == ck.PASS   # not the fastest
    r = bench()   # the fastest of equal sessions (one in N by chance): their median inside its interval
    v = ck.best_of_n([r], _with_sessions(r, [1.005e-3, 1.01e-3, 1.02e-3]))
    assert v.verdict == ck.PASS and "the fastest, but their median lies inside its interval" in v.evidence
    r = bench()
    v = ck.best_of_n([r], _with_sessions(r, [0.95e-3, 1.06e-3, 1.07e-3]))
    assert v.verdict == ck.WARN and "lies above this run's interval" in v.evidence
    r = bench()
    v = ck.best_of_n([r], _with_sessions(r, [1.05e-3, 1.08e-3], combined=("s0", "s1")))
    assert v.verdict == ck.PASS and "all combined" in v.evidence
    r = bench()
    assert ck.best_of_n([r], {r.run_id: []}).verdict == ck.PASS


def test_variation_levels():
    old = bench()
    old.throughput = {"per_s": 1000.0}
    v = verdict(ck.variation_levels, [old])
    assert v.verdict == ck.FAIL and "no interval" in v.evidence and "between-invocation term" in v.evidence
    new = bench()
    new.latency["e2e"].session_variation = {"description": "between invocations CV 1.2% (df 13): pooled"}
    new.throughput = {"per_s": 1000.0, "ci_low_per_s": 900.0, "ci_high_per_s": 1100.0}
    v = verdict(ck.variation_levels, [new])
    assert v.verdict == ck.PASS and "CV 1.2%" in v.evidence and "900" in v.evidence
    assert verdict(ck.variation_levels, [accuracy()]).verdict == ck.NA


def test_gates_mean_one_thing():
    a = accuracy()
    assert ck.gates([a]).verdict == ck.NA
    a.extra.accuracy.validation = {"rows": [{}], "failed": [], "default_exceeded": ["top-1 accuracy"]}
    v = verdict(ck.gates, [a])
    assert v.verdict == ck.WARN and "not set by the user" in v.evidence
    a.extra.accuracy.validation.failed = ["top-1 accuracy"]
    assert verdict(ck.gates, [a]).verdict == ck.FAIL
    a.extra.accuracy.validation = {"rows": [{}], "failed": [], "default_exceeded": []}
    assert verdict(ck.gates, [a]).verdict == ck.PASS


def test_cold_start():
    v = verdict(ck.cold_start, [bench()])
    assert v.verdict == ck.PASS and "3.0x the warm median" in v.evidence
    assert verdict(ck.cold_start, [bench(cold_start={})]).verdict == ck.WARN


def test_mixed_labels():
    assert verdict(ck.mixed_labels, [bench(), bench("r2")]).verdict == ck.PASS
    v = verdict(ck.mixed_labels, [bench(), bench("sim", label="simulated")])
    assert v.verdict == ck.FAIL and "sim" in v.evidence
    v = verdict(ck.mixed_labels, [energy(label="estimated (datasheet)")])
    assert v.verdict == ck.WARN and "energy estimated" in v.evidence


def _store(tmp_path, *runs):
    for r in runs:
        d = tmp_path / f"20260101-000000-{r.run_id}"
        d.mkdir()
        r2 = copy.deepcopy(r)
        store.write_result(d, r2)
    return tmp_path


def test_check_command_json_strict_and_errors(tmp_path, capsys):
    root = _store(tmp_path, bench(), bench("sim", label="simulated"))
    assert exit_code("check", "r1", "sim", "--runs-dir", root, "--json") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["format"] == "edgebench-check" and out["counts"]["fail"] >= 1
    assert exit_code("check", "r1", "sim", "--runs-dir", root, "--strict") == 2
    captured = capsys.readouterr()
    assert "mixed-labels" in captured.err and "fail" in captured.out and captured.err.count("\n") == 1
    assert exit_code("check", "r1", "--runs-dir", root, "--strict") == 0  # one measured run: warns, no fail
    capsys.readouterr()
    assert exit_code("check", "nosuch", "--runs-dir", root) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: no run 'nosuch'") and err.count("\n") == 1
