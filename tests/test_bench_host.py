"""`bench` on the host board: the real agent as a child process, real LiteRT."""
from pathlib import Path

import numpy as np
import pytest
from conftest import CtrlCAt, interrupted_run

from edgebench.bench.latency import BenchOptions, run_bench
from edgebench.boards.registry import get_profile
from edgebench.errors import DataError, UsageError
from edgebench.results import store

DIGITS = Path(__file__).resolve().parents[1] / "models" / "digits"
INT8 = DIGITS / "digits_int8.tflite"


def _opts(**kw):
    base = dict(min_samples=50, min_time_s=0.3, max_time_s=2.0, chunk_time_s=0.1)
    base.update(kw)
    return BenchOptions(**base)


@pytest.fixture(scope="module")
def single(tmp_path_factory, host):
    root = tmp_path_factory.mktemp("runs")
    return run_bench(INT8, host, _opts(), runs_root=root)


@pytest.mark.slow
def test_single_stream_result_is_complete_and_conditioned(single):
    result, run_dir = single
    assert result.status == "complete" and result.label == "measured"
    e2e = result.latency["e2e"]
    assert e2e.n >= 50
    assert e2e.ci_low_s <= e2e.median_s <= e2e.ci_high_s
    assert e2e.min_s <= e2e.p50_s <= e2e.p90_s
    # e2e covers the other stages
    assert e2e.median_s >= result.latency["invoke"].median_s
    assert result.model.sha256 == __import__("hashlib").sha256(INT8.read_bytes()).hexdigest()
    assert result.model.precision == "int8"
    assert result.model.calibration["count"] == 200  # copied from the sidecar
    assert result.runtime.name and result.runtime.version
    assert result.runtime.kernels == "xnnpack" and result.runtime.threads == 1
    assert result.cold_start.load_s > 0 and result.cold_start.first_inference_s > 0
    assert result.warmup.n_warmup >= 10
    assert result.scenario.inputs.source == "random" and result.scenario.inputs.seed == 0
    assert result.board.system.os
    assert result.power.measured is False
    assert result.extra.claim.startswith(f"{result.throughput.per_s:,.0f} inferences/s achieved single-stream")
    # achieved throughput counts the time between inferences too: below 1/median
    assert result.throughput.per_s < result.throughput.inverse_median_per_s
    assert "over 3 runs" in result.extra.claim
    assert e2e.runs == 3 and len(e2e.per_run) == 3 and e2e.n_eff > 0
    assert "log figures of 3 runs" in e2e.ci_method and "between-invocation" in e2e.ci_method
    tp = result.throughput   # achieved, with an interval over repeats and sessions
    assert tp.ci_low_per_s < tp.per_s < tp.ci_high_per_s and len(tp.per_repeat) == 3
    assert result.timing.clock_resolution_s > 0
    # the agent quantized each distinct input before the timed loop, and the claim says so
    assert result.timing.prep == "precomputed"
    assert "input quantization is done once per distinct input before the timed loop" in result.extra.claim
    mem = result.extra.memory      # the agent's peak resident memory (VmHWM), over the repeats
    assert mem.peak_rss_bytes >= mem.rss_bytes > 1_000_000 and "VmHWM" in mem.basis


def test_samples_parquet_matches_result(single):
    result, run_dir = single
    frame = store.read_samples(run_dir)
    counts = frame["phase"].value_counts().to_dict()
    assert counts["cold"] == result.settings.repeat == 3  # one cold start per fresh process
    assert sorted(frame["repeat"].unique()) == [0, 1, 2]
    assert counts["warmup"] == result.warmup.n_warmup
    assert counts["measure"] == result.latency["e2e"].n
    meas = frame.loc[frame["phase"] == "measure", "e2e_s"].to_numpy()
    assert np.median(meas) == pytest.approx(result.latency["e2e"].median_s)
    assert np.all(np.diff(frame["t_start_ns"].to_numpy()) > 0)
    assert store.read_result(run_dir) == result


def test_reference_kernels_and_fixed_rate(tmp_path, host):
    result, _ = run_bench(INT8, host, _opts(kernels="reference", scenario="fixed-rate", rate_hz=200.0,
                                            min_samples=40, max_time_s=1.0), runs_root=tmp_path)
    assert result.runtime.kernels == "reference"
    assert result.extra.achieved_rate_hz == pytest.approx(200.0, rel=0.05)
    assert result.extra.lateness_median_s >= 0


def test_fixed_rate_below_one_request_per_chunk_keeps_its_schedule(tmp_path, host):
    # 5/s with 0.1 s chunks: most chunks hold no request; the schedule must continue
    # across chunks instead of restarting (which would run requests back to back).
    result, run_dir = run_bench(INT8, host, _opts(scenario="fixed-rate", rate_hz=5.0, min_samples=12,
                                                  min_time_s=0.5, max_time_s=3.0, min_warmup=2),
                                runs_root=tmp_path)
    assert result.extra.achieved_rate_hz == pytest.approx(5.0, rel=0.05)
    frame = store.read_samples(run_dir)
    for _, rep in frame[frame["phase"] != "cold"].groupby("repeat"):
        gaps = np.diff(rep["t_start_ns"].to_numpy()) / 1e9
        assert gaps.min() > 0.15  # never back to back within a repeat


def test_agent_pinned_to_one_cpu_reports_it(tmp_path, host):
    import os

    cpu = min(os.sched_getaffinity(0))
    result, _ = run_bench(INT8, host, _opts(cpus=str(cpu)), runs_root=tmp_path)
    assert result.board.system.cpu["affinity"] == [cpu]
    assert result.settings.agent_cpus == str(cpu)
    assert f"pinned to CPUs {cpu}" in result.board.transport


def test_cpus_only_for_local_boards(tmp_path):
    with pytest.raises(UsageError, match="--cpus pins a local agent"):
        run_bench(INT8, get_profile("raspberry-pi-5"), _opts(cpus="0"), runs_root=tmp_path)


def test_offline_scenario(tmp_path, host):
    result, _ = run_bench(INT8, host, _opts(scenario="offline"), runs_root=tmp_path)
    assert result.throughput.per_s > 0
    assert "wall time of the measuring windows" in result.throughput.definition


def test_interrupted_run_keeps_samples_and_says_incomplete(tmp_path, host):
    with pytest.raises(KeyboardInterrupt):
        run_bench(INT8, host, _opts(max_time_s=10.0, min_time_s=5.0), runs_root=tmp_path,
                  progress=CtrlCAt("chunk", 3))
    run_dir, result = interrupted_run(tmp_path)
    assert len(store.read_samples(run_dir)) > 10
    assert "INCOMPLETE run" in result.extra.claim


def test_bad_inputs_leave_no_run_folder(tmp_path, host):
    bad = tmp_path / "x.npy"
    np.save(bad, np.zeros((3, 5, 5, 1), np.float32))
    runs = tmp_path / "runs"
    with pytest.raises(DataError, match="do not fit"):
        run_bench(INT8, host, _opts(inputs=str(bad)), runs_root=runs)
    assert store.find_runs(runs) == []


def test_user_inputs_are_used(tmp_path, host):
    data = np.load(DIGITS / "digits_test.npz")["x"][:16]
    p = tmp_path / "in.npz"
    np.savez(p, x=data)
    result, _ = run_bench(INT8, host, _opts(inputs=str(p)), runs_root=tmp_path / "runs")
    assert result.scenario.inputs.source == str(p)
    assert result.scenario.inputs.count == 16


@pytest.mark.parametrize("kw,match", [({"scenario": "burst"}, "unknown scenario"),
                                      ({"kernels": "fast"}, "unknown kernel set"),
                                      ({"scenario": "fixed-rate"}, "positive --rate"),
                                      ({"scenario": "fixed-rate", "rate_hz": float("inf")}, "finite number from"),
                                      ({"rate_hz": 10.0}, "fixed-rate only"),
                                      ({"repeat": 0}, "--repeat"),
                                      ({"threads": 0}, "threads")])
def test_bad_options(tmp_path, host, kw, match):
    with pytest.raises(UsageError, match=match):
        run_bench(INT8, host, _opts(**kw), runs_root=tmp_path)


def test_killed_bench_keeps_finished_repeats_and_recovers(tmp_path):
    """SIGKILL during the third repeat: the two finished repeats are on disk, `runs` would see
    the folder `running`, and `bench --recover` turns it into an incomplete run with figures."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from edgebench.bench.latency import recover_bench

    runs = tmp_path / "runs"
    proc = subprocess.Popen([sys.executable, "-m", "edgebench", "bench", str(INT8), "--board", "host",
                             "--runs-dir", str(runs), "--repeat", "3", "--min-time", "1.5", "--max-time", "60"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    run_dir = None
    while time.monotonic() < deadline:
        found = store.find_runs(runs)
        if found:
            run_dir = found[0]
            frame = store.read_samples(run_dir)
            if len(frame) and frame["repeat"].nunique() >= 2:
                break
        time.sleep(0.2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert run_dir is not None
    assert store.read_result(run_dir).status == "running"
    r = recover_bench(run_dir)
    k = r.latency["e2e"].runs
    started = int(r.status_reason.split("the samples of the ")[1].split(" repeat(s)")[0])
    assert r.status == "incomplete" and started in (k, k + 1)   # the third may have been cut in its warm-up
    assert k >= 2 and r.latency["e2e"].ci_low_s is not None
    assert store.read_result(run_dir).status == "incomplete"
    assert store.journal_paths(run_dir) == []
    with pytest.raises(Exception, match="not an unfinished bench run"):
        recover_bench(run_dir)


def test_killed_single_repeat_keeps_its_journalled_chunks(tmp_path):
    """SIGKILL in the middle of the only repeat: no repeat finished, but every chunk measured
    before the kill is in the journal, and --recover turns them into figures."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from edgebench.bench.latency import recover_bench

    runs = tmp_path / "runs"
    proc = subprocess.Popen([sys.executable, "-m", "edgebench", "bench", str(INT8), "--board", "host",
                             "--runs-dir", str(runs), "--repeat", "1", "--max-repeats", "1",
                             "--min-time", "30", "--max-time", "60"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    run_dir, journalled = None, 0
    try:
        while time.monotonic() < deadline:
            found = store.find_runs(runs)
            if found:
                run_dir = found[0]
                frame = store.read_journal(run_dir)
                journalled = int((frame["phase"] == "measure").sum()) if len(frame) else 0
                if journalled >= 2000:
                    break
            time.sleep(0.2)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert run_dir is not None and journalled >= 2000
    assert not (run_dir / store.SAMPLES).exists()          # no repeat had finished
    assert len(store.read_samples(run_dir)) >= journalled  # readers fall back on the journal
    r = recover_bench(run_dir)
    assert r.status == "incomplete" and "the samples of the 1 repeat(s) it had started" in r.status_reason
    assert r.latency["e2e"].runs == 1
    assert r.latency["e2e"].n >= journalled - r.warmup.n_warmup - 1
    assert r.cold_start.per_repeat[0]["first_inference_s"] > 0
    assert len(store.read_samples(run_dir)) >= journalled and store.journal_paths(run_dir) == []


@pytest.mark.parametrize("args,words", [
    (["--scenario", "fixed-rate", "--rate", "inf"], "must be a finite number from 0.0001"),
    (["--rate", "10"], "--rate applies to --scenario fixed-rate only"),
    (["--mlperf"], "--mlperf drives a microcontroller"),
    (["--repeat", "0"], "'--repeat': must be a whole number from 1 to 1000, got 0"),
])
def test_bad_bench_options_are_one_line_and_leave_no_run(tmp_path, args, words):
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "edgebench", "bench", str(INT8), "--board", "host",
                          "--runs-dir", str(tmp_path), *args], capture_output=True, text=True, timeout=60)
    assert res.returncode == 1
    assert words in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) <= 2   # the error and, at most, what to do
    assert store.find_runs(tmp_path) == []


def test_recover_from_the_command_line(tmp_path, host):
    import subprocess
    import sys

    result, run_dir = run_bench(INT8, host, _opts(repeat=2, max_repeats=2), runs_root=tmp_path)
    # pretend the process died after writing its repeats
    result.status = "running"
    store.write_result(run_dir, result)
    res = subprocess.run([sys.executable, "-m", "edgebench", "bench", "--recover", str(run_dir), "--json"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    import json

    assert json.loads(res.stdout)["status"] == "incomplete"
    res = subprocess.run([sys.executable, "-m", "edgebench", "bench", "--recover", str(run_dir)],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 1 and "not an unfinished bench run" in res.stderr


@pytest.mark.slow
def test_two_models_run_interleaved_and_compare_without_the_session_term(tmp_path, capsys):
    """`bench A.tflite B.tflite`: one invocation, repeats A B A B, each run naming the other, and
    `compare` says it judged them without the variation between invocations."""
    import json

    from conftest import exit_code

    fp32 = DIGITS / "digits_fp32.tflite"
    assert exit_code("bench", INT8, fp32, "--board", "host", "--repeat", "2", "--min-time", "0.3", "--max-time", "4",
               "--min-samples", "50", "--runs-dir", tmp_path, "--json") == 0
    a, b = json.loads(capsys.readouterr().out)
    assert a["settings"]["interleaved_with"] == [b["run_id"]] and b["settings"]["interleaved_with"] == [a["run_id"]]
    assert a["latency"]["e2e"]["runs"] == b["latency"]["e2e"]["runs"] == 2
    frames = [store.read_samples(d) for d in store.find_runs(tmp_path)]
    assert all(sorted(f["repeat"].unique()) == [0, 1] for f in frames)
    assert exit_code("compare", b["run_id"], a["run_id"], "--runs-dir", tmp_path) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "case: the runs were interleaved in one invocation" in out
    assert exit_code("bench", INT8, INT8, "--board", "host", "--runs-dir", tmp_path) == 1   # the same model twice
    assert "named twice" in capsys.readouterr().err


@pytest.mark.slow
def test_a_cold_statistics_import_is_spent_time_not_measuring_window(tmp_path, host, monkeypatch):
    # scipy.stats and arch take seconds to import cold (3-4 s on this machine); the wait used to
    # fall inside the first repeat's measuring window, which then measured one chunk of a 2.5 s
    # allowance, and to be reserved again as start-up for every later repeat
    import time

    import edgebench.bench.latency as latency

    latency.preload()                         # the real imports now, whatever ran before this test
    calls = []

    def cold_preload():                       # a cold machine's import: 1.5 s on the first call, none after
        calls.append(1)
        time.sleep(1.5 if len(calls) == 1 else 0)

    monkeypatch.setattr(latency, "preload", cold_preload)
    rules = []

    class Recorded(latency.StopRule):
        def __init__(self, **kw):
            super().__init__(**kw)
            rules.append(self)

    monkeypatch.setattr(latency, "StopRule", Recorded)
    result, run_dir = run_bench(INT8, host, _opts(repeat=2, max_repeats=2, min_samples=10**6, min_time_s=0.2,
                                                  max_time_s=7.0), runs_root=tmp_path)
    assert len(calls) == 2 and len(rules) == 2
    frame = store.read_samples(run_dir)
    for k, rule in enumerate(rules):
        t = frame[(frame["repeat"] == k) & (frame["phase"] != "cold")]["t_start_ns"].to_numpy() / 1e9
        window = t.max() - t.min()
        assert window > 0.6 * rule.max_time_s, (k, window, rule.max_time_s)   # not eaten by the wait
