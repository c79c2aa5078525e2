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


# ---------------------------------------------------------------- writer, abandoned runs, journal

def _dead_pid() -> int:
    import subprocess
    import sys

    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_running_run_names_its_writer_and_a_finished_one_does_not(tmp_path):
    import os
    import socket

    r = _result(status="running")
    store.write_result(tmp_path, r)
    w = json.loads((tmp_path / store.RUN_JSON).read_text())["extra"]["writer"]
    assert w["pid"] == os.getpid() and w["host"] == socket.gethostname()
    loaded = store.read_result(tmp_path)
    assert store.run_status(loaded) == "running"          # this process is alive
    loaded.status = "complete"
    store.write_result(tmp_path, loaded)
    assert "writer" not in json.loads((tmp_path / store.RUN_JSON).read_text())["extra"]
    assert not list(tmp_path.glob("*.tmp"))


def test_a_running_run_whose_process_is_gone_is_abandoned(tmp_path):
    import socket

    r = _result(status="running")
    r.extra = {"writer": {**store.writer_info(), "pid": _dead_pid()}}
    assert store.run_status(r) == "abandoned"
    assert "is gone" in store.abandoned_reason(r)
    # the pid exists but belongs to a process started at another time: reused
    me = store.writer_info()
    if me["process_start_ticks"] is not None and me["boot_id"]:
        r.extra = {"writer": {**me, "process_start_ticks": me["process_start_ticks"] + 1}}
        assert "another process" in store.abandoned_reason(r)
        r.extra = {"writer": {**me, "boot_id": "another-boot"}}
        assert "restarted" in store.abandoned_reason(r)
    # another host cannot be checked; a run without a writer cannot either; finished runs never are
    r.extra = {"writer": {**me, "pid": _dead_pid(), "host": socket.gethostname() + "-elsewhere"}}
    assert store.run_status(r) == "running"
    r.extra = {}
    assert store.run_status(r) == "running"
    done = _result(status="incomplete")
    done.extra = {"writer": {**me, "pid": _dead_pid()}}
    assert store.run_status(done) == "incomplete"


def test_load_runs_reports_abandoned_runs(tmp_path):
    d = tmp_path / "run-a"
    d.mkdir()
    r = _result(status="running")
    store.write_result(d, r)
    data = json.loads((d / store.RUN_JSON).read_text())
    data["extra"]["writer"]["pid"] = _dead_pid()
    (d / store.RUN_JSON).write_text(json.dumps(data))
    runs, _ = __import__("edgebench").load_runs(tmp_path)
    assert list(runs["status"]) == ["abandoned"]


def test_journal_appends_and_reads_back(tmp_path):
    import numpy as np

    j = store.open_journal(tmp_path)
    j.append({"phase": np.array(["warmup", "measure"]), "e2e_s": np.array([1.0, 2.0])})
    j.append(pd.DataFrame({"phase": ["measure"], "e2e_s": [3.0]}))
    assert j.append({"phase": np.array([], dtype=str), "e2e_s": np.array([])}) == 0
    frame = store.read_journal(tmp_path)
    assert list(frame["e2e_s"]) == [1.0, 2.0, 3.0] and list(frame["phase"]) == ["warmup", "measure", "measure"]
    # a chunk with another column starts a new segment instead of dropping the column
    j.append({"phase": np.array(["measure"]), "e2e_s": np.array([4.0]), "repeat": np.array([1])})
    j.close()
    assert len(store.journal_paths(tmp_path)) == 2
    frame = store.read_journal(tmp_path)
    assert list(frame["e2e_s"]) == [1.0, 2.0, 3.0, 4.0] and frame["repeat"].iloc[-1] == 1
    # read_samples falls back on the journal while there is no samples.parquet
    assert len(store.read_samples(tmp_path)) == 4
    store.write_samples(tmp_path, frame)
    j.remove()
    assert store.journal_paths(tmp_path) == [] and len(store.read_samples(tmp_path)) == 4
    assert store.read_journal(tmp_path).empty
    with pytest.raises(ValueError):
        store.open_journal(tmp_path, "../escape")


def test_journal_keeps_whole_chunks_of_a_torn_tail(tmp_path):
    import numpy as np

    j = store.open_journal(tmp_path, "telemetry")
    for k in range(3):
        j.append({"t_ns": np.arange(4) + 10 * k})
    (path,) = store.journal_paths(tmp_path, "telemetry")
    size = path.stat().st_size
    j.append({"t_ns": np.arange(4) + 30})
    j._file.flush()
    with open(path, "r+b") as f:        # a kill in the middle of the fourth chunk
        f.truncate(size + (path.stat().st_size - size) // 2)
    frame = store.read_journal(tmp_path, "telemetry")
    assert len(frame) == 12 and frame["t_ns"].iloc[-1] == 23
    # a resumed run appends to a new segment, never over the old one
    j2 = store.open_journal(tmp_path, "telemetry")
    j2.append({"t_ns": np.array([99])})
    j2.close()
    assert len(store.journal_paths(tmp_path, "telemetry")) == 2
    assert store.read_journal(tmp_path, "telemetry")["t_ns"].iloc[-1] == 99


def test_journal_survives_sigkill(tmp_path):
    import signal
    import subprocess
    import sys

    script = (
        "import sys, numpy as np\n"
        "from edgebench.results import store\n"
        "j = store.open_journal(sys.argv[1])\n"
        "for k in range(5):\n"
        "    j.append({'e2e_s': np.full(100, float(k))})\n"
        "print('written', flush=True)\n"
        "sys.stdin.read()\n")
    p = subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "written"
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    frame = store.read_journal(tmp_path)
    assert len(frame) == 500 and sorted(set(frame["e2e_s"])) == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_write_parquet_is_atomic(tmp_path, monkeypatch):
    frame = pd.DataFrame({"e2e_s": [1.0, 2.0]})
    path = store.write_parquet(tmp_path / "x.parquet", frame)
    assert list(pd.read_parquet(path)["e2e_s"]) == [1.0, 2.0]

    def broken(self, f, index=False):
        f.write(b"half a file")
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", broken)
    with pytest.raises(OSError, match="disk full"):
        store.write_parquet(path, pd.DataFrame({"e2e_s": [3.0]}))
    monkeypatch.undo()
    assert list(pd.read_parquet(path)["e2e_s"]) == [1.0, 2.0]   # the old file is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.parquet"]
