"""Run results: schema round trip, folder handling, claim sentence, load_runs."""
import json

import pandas as pd
import pytest

from edgebench.errors import ResultError
from edgebench.report import format as fmt
from edgebench.report.claim import claim
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
    r.thermal.end.throttled = {"raw": "0x50005", "under_voltage_now": True, "throttled_now": True,
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


def test_load_runs_gives_one_frame_and_load_samples_the_samples(tmp_path):
    import edgebench

    d = store.new_run_dir(tmp_path, "kws", "pi5")
    store.write_result(d, _result())
    store.write_samples(d, pd.DataFrame({"phase": ["cold", "measure"], "e2e_s": [0.01, 0.001]}))
    runs = edgebench.load_runs(tmp_path)
    assert isinstance(runs, pd.DataFrame)
    assert list(runs["run_id"]) == ["abc123"] and list(runs["short_id"]) == ["abc123"]
    assert runs.loc[0, "e2e_median_s"] == 0.00065
    assert runs.loc[0, "temp_start_c"] == 48.0 and runs.loc[0, "temp_end_c"] == 71.0
    assert not runs.loc[0, "throttled"]
    assert pd.isna(runs.loc[0, "top1"]) and pd.isna(runs.loc[0, "energy_per_inference_j"])  # not 0
    samples = edgebench.load_samples(tmp_path)
    assert list(samples["run_id"]) == ["abc123", "abc123"] and list(samples["e2e_s"]) == [0.01, 0.001]
    assert store.resolve_run("latest", tmp_path) == d
    with pytest.raises(ResultError, match="no run"):
        store.resolve_run("zzz", tmp_path)


def _kinds(tmp_path):
    """A bench run, a thread sweep, an accuracy run and an energy run with the figures each kind stores."""
    bench = _result(run_id="aa11bb")
    sweep = _result(run_id="aa11cc", kind="sweep", latency={}, label="simulated", thermal={})
    sweep.runtime = {**sweep.runtime, "threads": "1,4"}
    sweep.extra = {"points": [{"max_temp_c": 70.5, "steady_temp_c": 70.1, "throttled": False},
                              {"max_temp_c": 81.0, "steady_temp_c": 80.2, "throttled": True}]}
    acc = _result(run_id="ff0001", kind="accuracy", latency={})
    acc.extra = {"accuracy": {"accuracy": {"candidate": {"top1": {"n": 540, "accuracy": 0.97, "ci_low": 0.95,
                                                                  "ci_high": 0.98}},
                                           "baseline": {"top1": {"n": 540, "accuracy": 0.98}}},
                              "paired": {"diff_points": -1.0, "diff_ci_low_points": -2.0,
                                         "diff_ci_high_points": 0.1, "mcnemar_p": 0.2}}}
    energy = _result(run_id="ee0001", kind="energy")
    energy.power = {"label": "measured", "inference": {"energy_j": 2e-3, "ci_low_j": 1.9e-3, "ci_high_j": 2.1e-3,
                                                       "label": "measured"},
                    "idle": {"power_w": 0.5}, "duty_cycle": {"avg_power_w": 0.7}}
    for i, r in enumerate((bench, sweep, acc, energy)):
        d = tmp_path / f"2026112{i}-000000-m-b"
        d.mkdir(parents=True)
        store.write_result(d, r)
    return tmp_path


def test_runs_table_has_one_type_per_column_and_each_kinds_figures(tmp_path):
    from edgebench.results.table import COLUMNS, load_runs

    runs = load_runs(_kinds(tmp_path)).set_index("run_id")
    assert list(runs.reset_index().columns) == list(COLUMNS)
    assert str(runs["threads"].dtype) == "Int64" and str(runs["threads_list"].dtype) == "string"
    assert runs.loc["aa11bb", "threads"] == 1 and pd.isna(runs.loc["aa11cc", "threads"])
    assert runs.loc["aa11cc", "threads_list"] == "1,4"
    assert runs.loc["aa11cc", "temp_max_c"] == 81.0 and runs.loc["aa11cc", "throttled"]
    assert runs.loc["ff0001", "top1"] == 0.97 and runs.loc["ff0001", "top1_diff_ci_high_points"] == 0.1
    assert runs.loc["ee0001", "energy_per_inference_j"] == 2e-3 and runs.loc["ee0001", "idle_power_w"] == 0.5
    assert pd.isna(runs.loc["aa11bb", "idle_power_w"]) and pd.isna(runs.loc["aa11bb", "temp_max_c"])
    # short ids: unique prefixes of at least 6 characters
    assert dict(zip(runs.index, runs["short_id"])) == {"aa11bb": "aa11bb", "aa11cc": "aa11cc", "ff0001": "ff0001",
                                                       "ee0001": "ee0001"}
    assert store.resolve_run("ff00", tmp_path).name.startswith("20261122")
    with pytest.raises(ResultError, match="run id 'aa11' matches 2 runs"):
        store.resolve_run("aa11", tmp_path)


def test_short_ids_grow_until_unique():
    from edgebench.results.table import short_ids

    assert short_ids(["abcdef1234", "abcdef5678", "0123456789"]) == {
        "abcdef1234": "abcdef1", "abcdef5678": "abcdef5", "0123456789": "012345"}


def test_csv_and_parquet_exports_read_back_with_the_same_figures(tmp_path):
    from typer.testing import CliRunner

    from edgebench.cli.app import app
    from edgebench.results.table import load_runs

    root = _kinds(tmp_path / "runs")
    res = CliRunner().invoke(app, ["runs", "--runs-dir", str(root), "--csv", str(tmp_path / "r.csv"),
                                   "--parquet", str(tmp_path / "r.parquet")])
    assert res.exit_code == 0, res.output
    assert "4 runs written to" in res.stdout
    frame = load_runs(root)
    back = pd.read_parquet(tmp_path / "r.parquet")
    pd.testing.assert_frame_equal(back, frame, check_dtype=False)
    assert str(back["threads"].dtype) == "Int64"
    csv = pd.read_csv(tmp_path / "r.csv")
    assert list(csv["run_id"]) == list(frame["run_id"]) and list(csv["top1"].isna()) == list(frame["top1"].isna())
    one = CliRunner().invoke(app, ["runs", "ee00", "--runs-dir", str(root), "--csv", str(tmp_path / "one.csv")])
    assert one.exit_code == 0 and list(pd.read_csv(tmp_path / "one.csv")["run_id"]) == ["ee0001"]


@pytest.mark.parametrize("args,needle", [
    (["--csv", "out.txt"], "must end in .csv"),
    (["--parquet", "nofolder/out.parquet"], "does not exist"),
])
def test_export_refuses_bad_file_names_and_writes_nothing(tmp_path, args, needle, monkeypatch):
    import subprocess
    import sys

    root = _kinds(tmp_path / "runs")
    monkeypatch.chdir(tmp_path)
    p = subprocess.run([sys.executable, "-m", "edgebench", "runs", "--runs-dir", str(root), *args],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and p.stderr.startswith("error: ") and needle in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1 and sorted(x.name for x in tmp_path.iterdir()) == ["runs"]


def test_runs_listing_fits_80_columns(tmp_path):
    import os
    import subprocess
    import sys

    root = _kinds(tmp_path)
    p = subprocess.run([sys.executable, "-m", "edgebench", "runs", "--runs-dir", str(root)], capture_output=True,
                       text=True, timeout=60, env={**os.environ, "COLUMNS": "80"})
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert max(len(ln.rstrip()) for ln in lines) <= 80
    rows = [ln for ln in lines if ln[:6] in ("aa11bb", "aa11cc", "ff0001", "ee0001")]
    assert len(rows) == 4          # one line per run: nothing wrapped, the typed id shown whole
    assert "top-1 97.0%" in p.stdout and "simulated" in p.stdout


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
    runs = __import__("edgebench").load_runs(tmp_path)
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


def test_a_damaged_run_is_skipped_with_a_warning_not_a_failed_listing(tmp_path):
    import subprocess
    import sys

    import edgebench
    from edgebench.errors import InputWarning

    root = _kinds(tmp_path / "runs")
    bad = root / "20261129-000000-m-b"
    bad.mkdir()
    (bad / store.RUN_JSON).write_text("{ cut short")
    with pytest.warns(InputWarning, match="skipped .*20261129-000000-m-b.*unreadable JSON"):
        runs = edgebench.load_runs(root)
    assert len(runs) == 4
    p = subprocess.run([sys.executable, "-m", "edgebench", "runs", "--runs-dir", str(root)], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0 and p.stderr.startswith("warning: skipped") and p.stderr.count("\n") == 1, p.stderr
    assert "ff0001" in p.stdout
