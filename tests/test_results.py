"""Run results: schema round trip, folder handling, claim sentence, load_runs."""
import json

import pandas as pd
import pytest

from edgebench.errors import ResultError
from edgebench.report.claim import claim
from edgebench.report import format as fmt
from edgebench.results import store
from edgebench.results.model import SCHEMA_VERSION, RunResult


def _result(**kw) -> RunResult:
    r = RunResult(run_id="abc123", created_utc="2026-11-22T00:00:00+00:00", status="complete",
                  edgebench_version="0.1.0")
    r.model = {"name": "kws_ref_model", "precision": "int8", "sha256": "00" * 32}
    r.runtime = {"name": "ai_edge_litert", "version": "2.3.0", "kernels": "xnnpack", "threads": 1,
                 "delegate": None}
    r.board = {"name": "raspberry-pi-5", "title": "Raspberry Pi 5 Model B",
               "system": {"cpu": {"model_name": "Cortex-A76", "logical_cpus": 4},
                          "cpufreq": {"policies": {"policy0": {"governor": "performance",
                                                               "scaling_cur_freq_hz": 2.4e9}}}}}
    r.scenario = {"name": "single-stream", "batch": 1}
    r.timing = {"e2e_includes": "input quantization, transfer, invoke, output read and dequantization"}
    r.latency = {"e2e": {"n": 12000, "median_s": 0.00065, "ci_low_s": 0.00064, "ci_high_s": 0.00066,
                         "ci_level": 0.95, "p99_s": 0.00091}}
    r.throughput = {"per_s": 1538.46}
    r.thermal = {"available": True, "start": {"available": True, "temps_c": {"cpu": 48.0}},
                 "end": {"available": True, "temps_c": {"cpu": 71.0},
                         "throttled": {"raw": "0x0", "throttled_now": False,
                                       "under_voltage_now": False}}}
    r.stopping = {"target_reached": True, "reason": "ok"}
    for k, v in kw.items():
        setattr(r, k, v)
    return r


def test_round_trip_through_json(tmp_path):
    r = _result()
    d = tmp_path / "run"
    d.mkdir()
    store.write_result(d, r)
    back = store.read_result(d)
    assert back == r
    assert json.loads((d / "run.json").read_text())["schema_version"] == SCHEMA_VERSION


def test_unknown_schema_version_is_refused(tmp_path):
    d = tmp_path / "run"
    d.mkdir()
    data = _result().to_dict()
    data["schema_version"] = 99
    (d / "run.json").write_text(json.dumps(data))
    with pytest.raises(ResultError, match="schema_version 99"):
        store.read_result(d)


def test_not_a_run_is_refused(tmp_path):
    (tmp_path / "run.json").write_text('{"hello": 1}')
    with pytest.raises(ResultError, match="not an edgebench run"):
        store.read_result(tmp_path)


def test_bad_label_is_refused():
    data = _result().to_dict()
    data["label"] = "guessed"
    with pytest.raises(ResultError, match="label"):
        RunResult.from_dict(data)


def test_claim_sentence_carries_conditions():
    text = claim(_result())
    assert text.startswith("1,538 inferences/s achieved single-stream (median 650 µs, 95% CI 640–660 µs "
                           "over 1 run of 12,000 inferences, p99 910 µs")
    assert "kws_ref_model INT8 (XNNPACK, 1 thread, ai_edge_litert 2.3.0)" in text
    assert "end-to-end incl. input quantization" in text
    assert "on Raspberry Pi 5 Model B (Cortex-A76, 4 CPUs, 2.40 GHz, governor performance, not pinned" in text
    assert "measured, 48→71 °C during the run, not throttled" in text
    assert "Burst figure, not sustained" in text
    assert "Energy not measured." in text
    assert "Accuracy not measured in this run." in text


def test_non_measured_claims_say_so_first():
    assert claim(_result(label="emulated")).startswith("EMULATED (instruction counts under an emulator")
    assert claim(_result(label="simulated")).startswith("SIMULATED (a physics model")
    assert claim(_result()).startswith("1,538 inferences/s")


def test_claim_names_throttling_causes():
    r = _result()
    r.thermal["end"]["throttled"] = {"raw": "0x50005", "under_voltage_now": True, "throttled_now": True,
                                     "freq_capped_now": False}
    assert "throttled now (under_voltage, throttled)" in claim(r)


def test_claim_says_incomplete_and_unknown_thermal():
    r = _result(status="incomplete", status_reason="interrupted by the user (Ctrl-C)",
                thermal={"available": False, "start": {"available": False}, "end": None},
                stopping={"target_reached": False, "reason": "maximum time 30 s reached"})
    text = claim(r)
    assert "thermal state unknown (no thermal sensor)" in text
    assert "INCOMPLETE run (interrupted by the user (Ctrl-C))." in text
    assert "Precision target not reached: maximum time 30 s reached." in text


@pytest.mark.parametrize("seconds,text", [(0.00065, "650 µs"), (0.0123, "12.3 ms"), (2.5, "2.50 s"),
                                          (0.000001234, "1.23 µs")])
def test_duration_format(seconds, text):
    assert fmt.duration(seconds) == text


def test_new_run_dir_never_reuses(tmp_path):
    a = store.new_run_dir(tmp_path, "m", "b", now=0)
    b = store.new_run_dir(tmp_path, "m", "b", now=0)
    assert a != b and a.is_dir() and b.is_dir()


def test_load_runs_gives_frames(tmp_path):
    d = store.new_run_dir(tmp_path, "kws", "pi5")
    store.write_result(d, _result())
    store.write_samples(d, pd.DataFrame({"phase": ["cold", "measure"], "e2e_s": [0.01, 0.001]}))
    runs, samples = __import__("edgebench").load_runs(tmp_path)
    assert list(runs["run_id"]) == ["abc123"]
    assert runs.loc[0, "e2e_median_s"] == 0.00065
    assert list(samples["run_id"]) == ["abc123", "abc123"]
    assert store.resolve_run("latest", tmp_path) == d
    with pytest.raises(ResultError, match="no run"):
        store.resolve_run("zzz", tmp_path)


def test_compare_refuses_to_mix_measured_and_simulated():
    from edgebench.bench.compare import compare

    with pytest.raises(ResultError, match="refusing to compare measured with simulated figures"):
        compare(_result(), pd.DataFrame(), _result(label="simulated"), pd.DataFrame())
