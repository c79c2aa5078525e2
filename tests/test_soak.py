"""Soak: the steady-state verdict, soak runs on the simulated board and on fakes, Ctrl-C and
crashes, boards without a thermal source, and the CLI."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import DIGITS_INT8, CtrlCAt, interrupted_run
from typer.testing import CliRunner

from edgebench import board_protocol as bp
from edgebench import errors
from edgebench.bench.soak import SoakOptions, read_telemetry, recover_run, run_soak
from edgebench.boards.registry import get_profile
from edgebench.results import store
from edgebench.sim import SimClient, SimParams
from edgebench.stats.steady import steady_state, trend

ROOT = Path(__file__).resolve().parents[1]
SIM = get_profile("sim-pi5")


# -- the verdict -------------------------------------------------------------------------
def _series(seconds, hz, f, noise, seed=0):
    t = np.arange(0, seconds, 1 / hz)
    return t, f(t) + np.random.default_rng(seed).normal(0, noise, t.size)


def test_stationary_series_is_flat():
    t, y = _series(120, 2, lambda t: 60 + 0 * t, 0.3)
    tr = trend(t, y, 60, floor=0.5, quantity="temperature", unit="°C")
    assert tr.flat and tr.state == "flat" and tr.n == 121 and abs(tr.change) < 0.3 and abs(tr.step) < 0.3
    assert tr.change_low <= tr.change <= tr.change_high
    assert "floor ±0.50 °C: flat" in tr.reason


def test_still_heating_series_is_not_steady():
    # 0.9 °C per minute: small beside the noise of one reading, but beyond the floor per window
    t, y = _series(120, 2, lambda t: 60 + 0.015 * t, 0.4)
    tr = trend(t, y, 60, floor=0.5, quantity="temperature", unit="°C")
    assert not tr.flat and tr.state == "rising" and tr.change == pytest.approx(0.9, abs=0.3)
    # an exponential approach still 3 °C short of its end, 20 min into a 10 min time constant
    t, y = _series(1200, 2, lambda t: 90 - 25 * np.exp(-t / 600), 0.2)
    assert not trend(t, y, 60, floor=0.5).flat


def test_noisy_short_or_sparse_series_is_undetermined_not_flat():
    t, y = _series(60, 2, lambda t: 60 + 0 * t, 5.0)      # noise so large the CI exceeds the floor
    tr = trend(t, y, 60, floor=0.5)
    assert not tr.flat and tr.state == "undetermined"
    tr = trend(*_series(30, 2, lambda t: 60 + 0 * t, 0.1), 60, floor=0.5)
    assert not tr.flat and tr.state == "too-short" and "30 s of data in the 60 s window" in tr.reason
    tr = trend(np.array([0.0, 30, 60]), np.array([1.0, 1, 1]), 60, floor=0.5)
    assert tr.state == "too-short" and "only 3 points" in tr.reason


def test_latency_floor_is_relative_and_binned():
    rng = np.random.default_rng(1)
    t = np.sort(rng.uniform(0, 60, 50_000))
    flat = 0.005 * rng.lognormal(0, 0.05, t.size)
    tr = trend(t, flat, 60, rel_floor=0.01, quantity="latency", unit="s")
    assert tr.flat and tr.n == 50_000 and tr.n_points == 60 and tr.floor == pytest.approx(5e-5, rel=0.01)
    drifting = flat * (1 + 0.0005 * t)                   # +3% over the window
    assert trend(t, drifting, 60, rel_floor=0.01, quantity="latency", unit="s").state == "rising"


def test_steady_needs_both_and_says_when_thermal_cannot_be_judged():
    t, temp = _series(120, 2, lambda t: 60 + 0 * t, 0.2)
    tl, lat = _series(120, 100, lambda t: 0.005 + 0 * t, 1e-4)
    assert steady_state(t, temp, tl, lat, 60).steady
    _, heating = _series(120, 2, lambda t: 50 + 0.05 * t, 0.2)
    v = steady_state(t, heating, tl, lat, 60)
    assert not v.steady and v.latency.flat and v.temperature.state == "rising"
    v = steady_state(None, None, tl, lat, 60)
    assert v.steady and not v.thermal_judged and v.temperature is None
    assert v.reason.startswith("no thermal source: thermal steady state cannot be judged; verdict on latency only")


def test_bad_parameters():
    with pytest.raises(errors.UsageError):
        trend([0, 1], [1, 2], 0, floor=1)
    with pytest.raises(errors.UsageError, match="exactly one"):
        trend([0, 1], [1, 2], 10)
    with pytest.raises(errors.DataError):
        trend([0, 1, 2], [1, 2], 10, floor=1)


# -- soak runs on the simulated board -----------------------------------------------------
def soak(tmp_path, params=None, progress=None, **kw):
    opts = SoakOptions(**{"window_s": 30.0, "burst_s": 5.0, "max_duration_s": 600.0, **kw})
    client = SimClient(params) if params is not None else None
    return run_soak(DIGITS_INT8, SIM, opts, runs_root=tmp_path, progress=progress, client=client)


def test_soak_on_the_simulated_board_reaches_steady_state_and_stops(tmp_path):
    events = []
    result, run_dir = soak(tmp_path, progress=events.append)
    fig = result.extra.soak
    tau = SIM.simulated.tau_s
    assert result.status == "complete" and result.kind == "soak" and result.label == "simulated"
    assert fig.steady and result.stopping.steady
    th = fig.thermal
    # it heats to the trip point (80 °C) and throttles before settling; it stops well before the maximum
    assert 40 < th.time_to_first_throttle_s < 90
    # the window (30 s) must not straddle the throttle step: stop well after it, yet before 1.5 tau
    assert th.time_to_first_throttle_s + 20 <= fig.duration_s <= 1.5 * tau
    assert th.max_temp_c == pytest.approx(80.0, abs=1.0) and th.steady_temp_c == pytest.approx(79.5, abs=1.0)
    assert th.throttle_events["throttled"].events >= 1
    assert th.throttle_events["cpufreq_cap:policy0"].first_s == pytest.approx(
        th.time_to_first_throttle_s, abs=0.6)
    assert sum(f.time_s for f in th.time_at_frequency) == pytest.approx(fig.duration_s, abs=1.0)
    assert th.time_at_frequency[0].freq_hz == 2.4e9
    # burst at 2.4 GHz, sustained throttled: slower, and the ratio says so
    assert fig.burst.median_s == pytest.approx(0.005, rel=0.02)
    assert 0.55 < fig.sustained_over_burst < 0.8
    assert fig.verdict.temperature.flat and fig.verdict.latency.flat
    assert result.latency["e2e"].median_s == pytest.approx(fig.sustained.median_s)
    assert result.throughput.per_s == pytest.approx(fig.sustained.throughput_per_s)
    # achieved, never 1/median: completed inferences over the wall time of the window, from the Parquet
    frame = store.read_samples(run_dir)
    win = frame[frame["phase"] == "sustained"]
    t = win["t_start_ns"].to_numpy()
    wall = (t[-1] + win["e2e_s"].to_numpy()[-1] * 1e9 - t[0]) / 1e9
    assert result.throughput.per_s == pytest.approx(len(win) / wall, rel=0.01)
    assert result.throughput.ci_low_per_s < result.throughput.per_s < result.throughput.ci_high_per_s
    lo, hi = fig.sustained_over_burst_ci
    assert lo < fig.sustained_over_burst < hi
    assert "Sustained after" in result.extra.claim and ", simulated, " in result.extra.claim
    # progress: current temperature, frequency, latency and the verdict so far
    chunk = [e for e in events if e["event"] == "chunk"]
    assert chunk[0]["temp_c"] < 60 and chunk[0]["freq_hz"] == 2.4e9 and not chunk[0]["steady"]
    assert chunk[-1]["steady"] and chunk[-1]["latency"]["state"] == "flat"
    # stored: samples with phases, telemetry beside them, no stream left
    samples = store.read_samples(run_dir)
    assert set(samples["phase"]) == {"cold", "burst", "soak", "sustained"}
    assert (samples["phase"] == "sustained").sum() == result.latency["e2e"].n
    tel = read_telemetry(run_dir)
    assert len(tel) == th.telemetry_samples + (tel["phase"] != "soak").sum()
    assert not list(run_dir.glob("*.arrows"))
    assert store.read_result(run_dir) == result


def test_fixed_duration_soak_runs_to_the_maximum(tmp_path):
    result, _ = soak(tmp_path, until="max", max_duration_s=150.0)
    assert result.extra.soak.duration_s == pytest.approx(150.0, abs=1.5)
    assert result.extra.soak.steady             # the verdict is still reported


def test_stationary_fake_is_steady_quickly(tmp_path):
    loaded = SimParams().steady_temp_c(SimParams().power_w(2.4e9, 1.0))       # 115 °C under full load
    params = SimParams(trip_c=500.0, critical_c=600.0, initial_temp_c=loaded)   # already there
    result, _ = soak(tmp_path, params=params, max_duration_s=300.0)
    fig = result.extra.soak
    assert fig.steady and fig.duration_s <= 5.0 + 30.0 + 4.0     # burst + one window + a check interval
    assert fig.thermal.time_to_first_throttle_s is None
    assert fig.sustained_over_burst == pytest.approx(1.0, abs=0.02)
    assert "No throttling seen." in result.extra.claim


def test_still_heating_board_is_not_called_steady(tmp_path):
    # tau of 2,000 s: heating ~1.7 °C per window at the end of a 4-minute run
    params = SimParams(c_th_j_per_c=200.0, trip_c=500.0, critical_c=600.0)
    result, _ = soak(tmp_path, params=params, max_duration_s=240.0)
    fig = result.extra.soak
    assert not fig.steady and fig.duration_s >= 240.0
    assert fig.verdict.temperature.state == "rising" and fig.verdict.latency.flat
    assert [w.code for w in result.warnings] == ["steady-state-not-reached"]
    assert "Steady state NOT established" in result.extra.claim


def test_fixed_rate_soak(tmp_path):
    result, _ = soak(tmp_path, rate_hz=50.0, max_duration_s=120.0, until="max")
    assert result.scenario.name == "fixed-rate"
    assert result.extra.achieved_rate_hz == pytest.approx(50.0, rel=0.01)
    assert result.extra.soak.sustained.throughput_per_s == pytest.approx(50.0, rel=0.01)


def test_rate_the_board_cannot_sustain_is_said(tmp_path):
    result, _ = soak(tmp_path, rate_hz=400.0, max_duration_s=60.0, until="max")
    w = {w.code: w for w in result.warnings}["rate-not-sustained"]
    assert "did not sustain 400/s: achieved" in w.message


def test_cool_down_to_a_stable_baseline(tmp_path):
    params = SimParams(initial_temp_c=75.0)
    events = []
    result, _ = soak(tmp_path, params=params, cool_down=True, cool_timeout_s=900.0, progress=events.append)
    cool = result.extra.soak.cool_down
    # idle settles at 25 + 2.5 W x 10 = 50 °C; "flat" (< 0.5 °C per 30 s) is reached within ~2 °C of it
    assert cool["done"] and cool["baseline_temp_c"] == pytest.approx(50.0, abs=2.0)
    assert 150 < cool["duration_s"] < 900
    assert any(e["event"] == "cool" for e in events)
    assert result.extra.soak.thermal.start_temp_c < 52.0
    tel = read_telemetry(next(tmp_path.iterdir()))
    assert (tel["phase"] == "cool-down").sum() > 100


def test_cool_down_timeout_is_a_warning(tmp_path):
    result, _ = soak(tmp_path, params=SimParams(initial_temp_c=75.0), cool_down=True, cool_timeout_s=20.0,
                     max_duration_s=60.0, until="max")
    assert not result.extra.soak.cool_down["done"]
    assert "cool-down-timeout" in [w.code for w in result.warnings]


# -- interruptions ---------------------------------------------------------------------------
def test_ctrl_c_keeps_samples_and_marks_incomplete(tmp_path):
    progress = CtrlCAt("chunk", 20)
    with pytest.raises(KeyboardInterrupt):
        soak(tmp_path, progress=progress)
    run_dir, result = interrupted_run(tmp_path)
    samples = store.read_samples(run_dir)
    assert len(samples) == progress.seen[-1]["n"] + 1             # every inference measured, plus the cold one
    assert len(read_telemetry(run_dir)) > 30
    assert result.extra.soak.duration_s == pytest.approx(20.0, abs=1.5)
    assert "INCOMPLETE run" in result.extra.claim


def stop_with(p, sig) -> str:
    """Send ``sig`` to the measuring process ``p``, wait for it to end; its stderr."""
    try:
        p.send_signal(sig)
        err = p.stderr.read().decode(errors="replace")
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    return err


def start_measuring(args, runs_dir, journal_glob: str, min_bytes: int):
    """``edgebench ARGS`` in its own process, returned once a journal matching ``journal_glob`` under
    ``runs_dir`` holds ``min_bytes`` (a few chunks measured)."""
    p = subprocess.Popen([sys.executable, "-m", "edgebench", *map(str, args), "--runs-dir", str(runs_dir)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and p.poll() is None:
        journal = list(Path(runs_dir).glob(journal_glob))
        if journal and journal[0].stat().st_size > min_bytes:
            return p
        time.sleep(0.1)
    p.kill()
    raise AssertionError(f"edgebench {args[0]} did not start measuring: {p.stderr.read().decode(errors='replace')}")


def _soak_process(runs_dir):
    """A long soak of the simulated board (about 100 s of host time to finish), once it measures."""
    return start_measuring(["soak", DIGITS_INT8, "--board", "sim-pi5", "--until", "max", "--max-duration", "20000",
                            "--window", "30"], runs_dir, "*/samples.journal.*.arrows", 200_000)


@pytest.mark.slow
def test_sigterm_stops_the_soak_like_ctrl_c_and_keeps_the_samples(tmp_path):
    p = _soak_process(tmp_path)
    err = stop_with(p, signal.SIGTERM)
    assert p.returncode == 128 + signal.SIGTERM, err
    assert "Traceback" not in err and err.strip().splitlines()[-1] == "stopped by SIGTERM"
    (run_dir,) = store.find_runs(tmp_path)
    result = store.read_result(run_dir)
    assert result.status == "incomplete" and result.status_reason == "stopped by SIGTERM"
    samples = store.read_samples(run_dir)
    assert len(samples) > 1000 and (run_dir / "samples.parquet").exists()
    assert result.stopping.n == (samples["phase"] != "cold").sum()
    assert not list(run_dir.glob("*.arrows"))            # the journal became Parquet
    assert "INCOMPLETE run (stopped by SIGTERM)" in result.extra.claim


@pytest.mark.slow
def test_a_killed_soak_keeps_its_journal_and_recover_marks_incomplete(tmp_path):
    from edgebench.cli.app import app

    p = _soak_process(tmp_path)
    p.kill()                                             # SIGKILL: nothing runs on the way out
    p.wait(timeout=60)
    (run_dir,) = store.find_runs(tmp_path)
    assert store.read_result(run_dir).status == "running"   # what a killed soak leaves on disk
    assert list(run_dir.glob("samples.journal.*.arrows")) and list(run_dir.glob("telemetry.journal.*.arrows"))
    journalled = len(store.read_samples(run_dir))
    res = CliRunner().invoke(app, ["soak", "--recover", str(run_dir), "--json"])
    assert res.exit_code == 0, res.output
    result = store.read_result(run_dir)
    assert json.loads(res.stdout) == result.to_dict()
    assert result.status == "incomplete" and "crash or kill" in result.status_reason
    assert len(store.read_samples(run_dir)) == journalled > 1000 and not list(run_dir.glob("*.arrows"))
    assert result.extra.soak.duration_s > 5 and len(read_telemetry(run_dir)) > 10
    with pytest.raises(errors.ResultError, match="not an unfinished soak"):
        recover_run(run_dir)


def test_claim_quotes_the_clock_and_temperature_of_the_sustained_window(tmp_path):
    """The board starts at 2.40 GHz and throttles to 1.60 GHz near 80 °C: the sustained figure is
    measured at the throttled clock, and the claim must say so (not the start-of-run clock)."""
    result, _ = soak(tmp_path)        # steady state after the throttle step (about 90 s of board time)
    fig = result.extra.soak
    assert fig.steady and fig.thermal.time_to_first_throttle_s is not None
    sus, burst = fig.sustained, fig.burst
    assert burst.freq_hz == 2.4e9 and sus.freq_hz < 2.0e9
    assert sus.temp_c == pytest.approx(79.5, abs=1.5) and burst.temp_c < 60
    claim = result.extra.claim
    window = f"{sus.freq_hz / 1e9:.2f} GHz in the sustained window"
    assert window in claim and "2.40 GHz" not in claim
    assert f"{sus.temp_c:.0f} °C in the sustained window" in claim
    assert result.extra.figure_window["freq_hz"] == sus.freq_hz


def test_simulated_soak_states_the_energy_of_its_sustained_window(tmp_path):
    result, _ = soak(tmp_path)
    w, sim = result.power.window, SIM.simulated
    assert result.power.label == "simulated" and w.label == "simulated" and w.window == "sustained"
    assert w.span_s == pytest.approx(30.0, abs=2.0)
    # continuous load: the board is busy all the time, so the power lies between idle and full power
    assert sim.idle_power_w < w.avg_power_w < sim.idle_power_w + sim.dynamic_power_w
    assert w.per_inference_j == pytest.approx(w.avg_power_w / w.rate_hz, rel=1e-6)
    assert "Simulated energy" in result.extra.claim


# -- boards without telemetry ---------------------------------------------------------------
class SnapshotOnlySim(SimClient):
    """An older agent (or a microcontroller): no telemetry during runs, thermal() only."""

    capabilities = SimClient.capabilities - {bp.TELEMETRY}

    def _op_hello(self, payload):
        header, _ = super()._op_hello(payload)
        header["features"] = []
        return header, None


class NoThermalSim(SnapshotOnlySim):
    """A board that has no temperature source at all, and an agent without the telemetry feature."""

    def _op_thermal(self, payload):
        return {"available": False, "temps_c": {}, "freqs_hz": {}, "throttled": None, "clock_ns": 0,
                "errors": {}}, None


def test_board_without_thermal_source_still_soaks_and_says_so(tmp_path):
    events = []
    opts = SoakOptions(window_s=20.0, max_duration_s=300.0)
    result, _ = run_soak(DIGITS_INT8, SIM, opts, runs_root=tmp_path, client=NoThermalSim(SimParams()),
                         progress=events.append)
    fig = result.extra.soak
    assert result.status == "complete" and fig.steady is False or fig.steady is True
    assert not fig.verdict.thermal_judged and not fig.verdict.temperature
    assert fig.verdict.reason.startswith("no thermal source: thermal steady state cannot be judged")
    assert "no-thermal-source" in [w.code for w in result.warnings]
    assert any(e["event"] == "no-thermal" for e in events)
    assert fig.thermal.telemetry == "none"
    assert "thermal steady state not judged, no thermal source" in result.extra.claim


def test_snapshot_fallback_between_chunks(tmp_path):
    opts = SoakOptions(window_s=30.0, max_duration_s=400.0)
    result, _ = run_soak(DIGITS_INT8, SIM, opts, runs_root=tmp_path, client=SnapshotOnlySim(SimParams()))
    fig = result.extra.soak
    assert fig.thermal.telemetry == "between-chunks" and fig.verdict.thermal_judged
    assert fig.steady and fig.thermal.max_temp_c == pytest.approx(80.0, abs=1.0)
    assert "telemetry-between-chunks" in [w.code for w in result.warnings]
    assert fig.thermal.throttle_events["throttled"].events >= 1


def test_host_board_without_sensors_runs_latency_only(tmp_path, monkeypatch):
    monkeypatch.setenv("EDGEBENCH_SYSFS_ROOT", str(tmp_path / "empty"))   # no thermal zone, cpufreq, hwmon
    monkeypatch.setenv("PATH", str(tmp_path))                               # and no vcgencmd
    opts = SoakOptions(window_s=1.0, burst_s=0.5, max_duration_s=6.0, chunk_s=0.25)
    result, _ = run_soak(DIGITS_INT8, get_profile("host"), opts, runs_root=tmp_path / "runs")
    fig = result.extra.soak
    assert result.label == "measured" and fig.thermal.telemetry == "none"
    assert not fig.verdict.thermal_judged and "no-thermal-source" in [w.code for w in result.warnings]


# -- options and the command line ---------------------------------------------------------------
@pytest.mark.parametrize("kw,needle", [
    ({"telemetry_hz": 20.0}, "--telemetry-hz must be a finite number from 0.01 to 10 samples per second, got 20"),
    ({"rate_hz": -1.0}, "--rate must be a finite number from 0.0001 to 1,000,000 inferences per second, got -1"),
    ({"window_s": 100.0, "max_duration_s": 60.0}, "shorter than the burst"),
    ({"until": "forever"}, "--until must be one of steady, max"),
])
def test_bad_options(kw, needle, tmp_path):
    with pytest.raises(errors.UsageError) as exc:
        soak(tmp_path, **kw)
    assert needle in exc.value.message
    assert store.find_runs(tmp_path) == []


def test_cli_json_equals_the_stored_run(tmp_path):
    from edgebench.cli.app import app

    res = CliRunner().invoke(app, ["soak", str(DIGITS_INT8), "--board", "sim-pi5", "--window", "30",
                                   "--runs-dir", str(tmp_path), "--json"])
    assert res.exit_code == 0, res.output
    printed = json.loads(res.stdout)
    (run_dir,) = store.find_runs(tmp_path)
    assert printed == store.read_result(run_dir).to_dict()
    assert printed["kind"] == "soak" and printed["label"] == "simulated" and printed["extra"]["soak"]["steady"]


@pytest.mark.slow
def test_cli_text_and_errors(tmp_path):
    from edgebench.cli.app import app

    res = CliRunner().invoke(app, ["soak", str(DIGITS_INT8), "--board", "sim-pi5", "--window", "30", "--rate", "20",
                                   "--max-duration", "90", "--runs-dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "burst (first" in res.stdout and "claim:" in res.stdout and "time at frequency" in res.stdout
    assert " GHz; sustained: " in res.stdout and "per inference, average" in res.stdout
    assert "window): " in res.stdout and "[simulated]" in res.stdout
    bad = CliRunner().invoke(app, ["soak", str(DIGITS_INT8), "--board", "sim-pi5", "--rate", "fast"])
    assert bad.exit_code != 0 and "neither a number nor 'continuous'" in str(bad.exception)
