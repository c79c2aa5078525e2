"""Energy: integration on constructed signals, the analysis of a constructed run, the duty-cycle
model, the orchestration on the host board with fake meters, and the `energy` command."""
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import DIGITS_INT8
from typer.testing import CliRunner

from edgebench.bench.energy import estimate_energy, measure_energy
from edgebench.bench.energy_analysis import EnergyOptions, TimedClient, analyse
from edgebench.boards.profile import BoardProfile
from edgebench.boards.registry import get_profile
from edgebench.cli.app import app
from edgebench.errors import UsageError
from edgebench.power.base import MeterError, MeterInfo, PolledMeter, Samples
from edgebench.results import store
from edgebench.results.model import RunResult
from edgebench.stats.energy import (
    bracket_offset,
    duty_point,
    event_energies,
    event_regions,
    events_mean_ci,
    idle_power,
    mean_ci,
    mean_power,
    parse_rate,
    window_energy,
)

ROOT = Path(__file__).resolve().parents[1]
MS = 1e-3


def signal(t0, t1, dt, level, spans):
    """Interval samples of ``level`` W with ``(a, b, watts)`` spans laid over it."""
    t = np.arange(t0, t1, dt)
    p = np.full(t.size, level)
    mid = t + dt / 2
    for a, b, w in spans:
        p[(mid >= a) & (mid < b)] = w
    return Samples(t, np.full(t.size, dt), p)


# ---------------------------------------------------------------------------
# integration, hand-computed


def test_ten_ms_window_at_half_a_watt_above_idle():
    s = signal(0, 0.1, 1 * MS, 0.1, [(0.040, 0.050, 0.6)])
    e, covered = window_energy(s.t_s, s.dt_s, s.power_w, [0.040], [0.050])
    assert e[0] == pytest.approx(6e-3) and covered[0] == pytest.approx(0.010)
    ev = event_energies(s.t_s, s.dt_s, s.power_w, [0.040], [0.050], idle_w=0.1, max_margin_s=0.02)
    assert ev.window_j == pytest.approx([6e-3])                 # 5 mJ event + 1 mJ idle share
    assert ev.inference_above_idle_j == pytest.approx([5e-3])
    assert ev.event_j == pytest.approx([5e-3]) and ev.wake_j == pytest.approx([0.0], abs=1e-15)
    assert ev.coverage == pytest.approx([1.0])


def test_wake_up_is_energy_above_idle_around_the_window():
    # 2 ms at 0.3 W before the window (wake-up), 1 ms at 0.2 W after (wind-down)
    s = signal(0, 0.1, 0.5 * MS, 0.1, [(0.038, 0.040, 0.3), (0.040, 0.050, 0.6), (0.050, 0.051, 0.2)])
    ev = event_energies(s.t_s, s.dt_s, s.power_w, [0.040], [0.050], idle_w=0.1, max_margin_s=0.01)
    assert ev.inference_above_idle_j == pytest.approx([5e-3])
    assert ev.wake_j == pytest.approx([0.2 * 2e-3 + 0.1 * 1e-3])  # 0.4 mJ + 0.1 mJ
    assert ev.event_j == pytest.approx([5.5e-3])


def test_partial_overlap_and_gaps():
    t = np.array([0.0, 1.0, 3.0])  # a gap from 2 s to 3 s
    dt = np.array([1.0, 1.0, 1.0])
    p = np.array([2.0, 4.0, 8.0])
    e, cov = window_energy(t, dt, p, [0.5, 1.5, 0.0], [1.5, 3.5, 10.0])
    assert e == pytest.approx([0.5 * 2 + 0.5 * 4, 0.5 * 4 + 0.5 * 8, 2 + 4 + 8])
    assert cov == pytest.approx([1.0, 1.0, 3.0])  # the gap is not covered
    with pytest.raises(Exception, match="overlap"):
        window_energy([0.0, 0.5], [1.0, 1.0], [1.0, 1.0], [0], [1])


def test_back_to_back_samples_hours_after_boot_do_not_overlap():
    # a 1 kHz meter on a monotonic clock 4.75 h after boot: t[k] + dt != t[k+1] by float rounding
    t = 17105.34536037 + np.arange(1096) * 0.001
    dt = np.full(t.size, 0.001)
    assert np.any(t[:-1] + dt[:-1] > t[1:] + 1e-12)           # the rounding the old check tripped on
    e, cov = window_energy(t, dt, np.full(t.size, 2.0), [t[0]], [t[-1] + 0.001])
    assert e[0] == pytest.approx(2.0 * 1.096) and cov[0] == pytest.approx(1.096)
    with pytest.raises(Exception, match="overlap"):           # a real overlap (1 µs) is still refused
        window_energy(t[:2], [0.001001, 0.001], [1.0, 1.0], [t[0]], [t[1]])


def test_regions_never_overlap():
    a, b = event_regions([0.0, 0.1, 0.13], [0.01, 0.11, 0.14], max_margin_s=0.05)
    assert a == pytest.approx([-0.05, 0.055, 0.12]) and b == pytest.approx([0.055, 0.12, 0.19])


def test_mean_power_ci_covers_the_truth():
    rng = np.random.default_rng(1)
    t = np.arange(0, 2, 1 * MS)
    p = 0.25 + rng.normal(0, 0.01, t.size)
    ci, frac = mean_power(t, np.full(t.size, MS), p, 0.0, 2.0)
    assert frac == pytest.approx(1.0) and ci.ci_low < 0.25 < ci.ci_high and ci.ci_high - ci.ci_low < 0.002
    idle = idle_power(t, np.full(t.size, MS), p, [(0.0, 0.5), (1.5, 2.0)])
    assert idle["ci_low_w"] < 0.25 < idle["ci_high_w"] and not idle["drift"]
    p2 = p.copy()
    p2[t >= 1.0] += 0.05
    assert idle_power(t, np.full(t.size, MS), p2, [(0.0, 0.5), (1.5, 2.0)])["drift"]


def test_event_energy_interval_sees_dependence_between_events():
    # energies of successive events drift with the board's state (AR(1), lag-1 0.9): a Student t over
    # events as if independent covers the true mean about half the time; batch means near the nominal 95%
    rng = np.random.default_rng(3)
    hits = {"batch": 0, "iid": 0}
    reps = 200
    for _ in range(reps):
        e = np.zeros(400)
        for i in range(1, e.size):
            e[i] = 0.9 * e[i - 1] + rng.normal(0, 1e-4)
        e += 1e-3
        for key, ci in (("batch", events_mean_ci(e)), ("iid", mean_ci(e))):
            hits[key] += ci.ci_low < 1e-3 < ci.ci_high
    assert hits["batch"] / reps >= 0.85 and hits["iid"] / reps < 0.75
    assert "batch means" in events_mean_ci(e).method
    few = events_mean_ci(e[:10])   # too few events for batches: said so
    assert few.ci_low is not None and "treated as independent" in few.method


def test_bracket_offset():
    dev_first, dev_last = np.array([1.0, 2.0, 3.0]), np.array([1.2, 2.2, 3.2])
    off = 100.0
    br = np.column_stack([dev_first + off - 0.002, dev_last + off + 0.001, dev_first, dev_last])
    est = bracket_offset(br)
    assert est["consistent"] and abs(est["offset_s"] - off) <= est["uncertainty_s"] <= 0.0016
    drift = br.copy()
    drift[2, :2] += 0.5  # the third request's reply came late and early at once: clocks disagree
    drift[2, 0] += 0.1
    assert not bracket_offset(drift)["consistent"]


# ---------------------------------------------------------------------------
# the duty-cycle model


def test_duty_cycle_arithmetic():
    p = duty_point(1e-3, 5e-3, rate_hz=2.0)
    assert p.avg_power_w == pytest.approx(1e-3 + 5e-3 * 2)  # 11 mW
    q = duty_point(1e-3, 5e-3, duty=0.5, event_s=10 * MS)
    assert q.rate_hz == pytest.approx(50.0) and q.avg_power_w == pytest.approx(1e-3 + 5e-3 * 50)
    assert q.asleep_fraction == pytest.approx(0.5)
    assert duty_point(0.1, 1e-3, duty=1.0, event_s=0.01).asleep_fraction == pytest.approx(0.0)


@pytest.mark.parametrize("duty", [0, -0.1, 1.01, float("nan")])
def test_duty_outside_range_is_one_clear_line(duty):
    with pytest.raises(UsageError, match="outside \\(0, 1\\]"):
        duty_point(1e-3, 1e-3, duty=duty, event_s=0.01)


def test_unsustainable_rate_says_the_achievable_one():
    with pytest.raises(UsageError) as e:
        duty_point(1e-3, 1e-3, rate_hz=200.0, event_s=10 * MS)
    line = e.value.one_line()
    assert "cannot sustain 200/s" in line and "at most 100/s" in line


def test_parse_rate():
    assert parse_rate("10") == 10 and parse_rate("1/s") == 1 and parse_rate("2/min") == pytest.approx(1 / 30)
    assert parse_rate("30/h") == pytest.approx(30 / 3600)
    for bad in ("fast", "0/s", "-1", "3/week"):
        with pytest.raises(UsageError):
            parse_rate(bad)


# ---------------------------------------------------------------------------
# the analysis of a constructed run (remote clock, chunks, warm-up, marker)


def constructed_run(tmp_path, with_marker=False):
    """21 inferences (1 cold, 5 warm-up, 15 measured) at 10/s in two chunks of 10, 10 ms each; the device
    clock is 100 s behind the host; the board idles at 0.1 W, infers at 0.6 W and wakes at 0.3 W for 2 ms."""
    starts_dev = np.concatenate([[0.5], 1.0 + 0.1 * np.arange(20)])
    phase = ["cold"] + ["warmup"] * 5 + ["measure"] * 15
    frame = pd.DataFrame({"phase": phase, "t_start_ns": (starts_dev * 1e9).round().astype(np.int64),
                          "e2e_s": np.full(21, 0.010)})
    for stage in ("prep", "set", "invoke", "get"):
        frame[f"{stage}_s"] = 0.0025
    run_dir = store.new_run_dir(tmp_path, "m", "b")
    store.write_samples(run_dir, frame)
    result = RunResult(run_id="r1", created_utc="2026-01-01T00:00:00+00:00", status="complete",
                       scenario={"rate_hz": 10.0})
    timed = TimedClient(None, local=False)
    off = 100.0
    ns = frame["t_start_ns"].to_numpy()
    for a, b in ((0, 1), (1, 11), (11, 21)):
        first, last_end = starts_dev[a], starts_dev[b - 1] + 0.010
        timed.brackets.append((first + off - 0.001, last_end + off + 0.001, first, last_end))
        timed.chunks.append({"mode": "single-stream" if a == 0 else "fixed-rate", "n": b - a,
                             "first_ns": int(ns[a]), "last_ns": int(ns[b - 1])})
    host = starts_dev + off
    spans = [(h - 0.002, h, 0.3) for h in host] + [(h, h + 0.010, 0.6) for h in host]
    s = signal(99.0, 104.5, 0.5 * MS, 0.1, spans)
    if with_marker:
        s.events_t_s = np.sort(np.concatenate([host, host + 0.010]))
        s.events_kind = ["ris"] * s.events_t_s.size
    marks = {"idle_before": (99.0, 100.4), "idle_after": (103.2, 104.5)}
    return result, run_dir, s, timed, marks


@pytest.mark.parametrize("marker", [False, True])
def test_analysis_of_a_constructed_run(tmp_path, marker):
    result, run_dir, s, timed, marks = constructed_run(tmp_path, with_marker=marker)
    info = MeterInfo("constructed", 2000.0, "board", "fake of its interface")
    analyse(result, run_dir, s, info, timed, marks, EnergyOptions(rate_hz=10.0), 10.0, marker_board=marker)
    p = result.power
    assert result.kind == "energy" and p.measured is True and p.boundary == "board"
    assert p.tested_against == "fake of its interface" and p.sample_rate_hz == 2000.0
    assert p.idle.power_w == pytest.approx(0.1)
    assert p.inference.energy_j == pytest.approx(6e-3)          # 0.6 W x 10 ms
    assert p.inference.above_idle_j == pytest.approx(5e-3)
    assert p.wake_up.energy_j == pytest.approx(0.2 * 2e-3)      # 0.4 mJ
    assert p.event.energy_j == pytest.approx(5.4e-3)
    assert p.inference.n == 13
    assert p.excluded == {"warmup": 5, "chunk_end": 2, "not_covered_by_meter": 0}
    assert p.average.model_w == pytest.approx(0.1 + 5.4e-3 * 10, rel=1e-3)
    assert p.average.measured_w == pytest.approx(0.154, rel=1e-3)
    assert p.duty_cycle.avg_power_w == pytest.approx(0.154)
    if marker:
        assert p.alignment.method.startswith("GPIO marker") and p.alignment.n_windows == 21
    else:
        assert p.alignment.offset_s == pytest.approx(100.0, abs=0.0011)
        assert p.alignment.uncertainty_s <= 0.0011
    stored = store.read_result(run_dir)
    assert stored == result
    events = pd.read_parquet(run_dir / "energy_events.parquet")
    assert int(events["used"].sum()) == 13 and len(pd.read_parquet(run_dir / "power.parquet")) == len(s)


# ---------------------------------------------------------------------------
# orchestration on the host board, with fake meters


class CounterMeter(PolledMeter):
    """A fake energy counter: a constant power plus a little noise, on the host clock."""

    rate_hz = 200.0

    def __init__(self, watts=2.0, **kw):
        super().__init__(**kw)
        self.watts = watts
        self._rng = np.random.default_rng(0)

    def _poll(self):
        return ("energy", self.watts * time.perf_counter() + self._rng.normal(0, 1e-6))

    def describe(self):
        return MeterInfo("fake energy counter", self.rate_hz, "board", "fake of its interface")


FAST = dict(idle_s=0.5, min_samples=30, min_time_s=1.0, max_time_s=3.0)


@pytest.fixture(scope="module")
def host_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("energy")
    meter = CounterMeter()
    result, run_dir = measure_energy(DIGITS_INT8, get_profile("host"), EnergyOptions(rate_hz=50.0, **FAST), meter,
                                     runs_root=root)
    return result, run_dir, root


def test_energy_run_on_the_host_board(host_run):
    result, run_dir, _ = host_run
    p = result.power
    assert result.kind == "energy" and result.status == "complete" and result.scenario.name == "fixed-rate"
    assert p.measured is True and p.instrument == "fake energy counter" and p.label == "measured"
    assert p.tested_against == "fake of its interface" and p.sample_rate_hz == 200.0
    assert p.alignment.offset_s == 0.0 and "same clock" in p.alignment.method
    assert p.idle.power_w == pytest.approx(2.0, rel=1e-3)
    # a constant 2 W: each window holds 2 W x its duration, nothing above idle
    events = pd.read_parquet(run_dir / "energy_events.parquet")
    ratio = events["window_j"].to_numpy() / events["duration_s"].to_numpy()
    assert np.median(ratio) == pytest.approx(2.0, rel=0.02)  # (a reader thread delayed under load skews a few)
    assert p.inference.energy_j == pytest.approx(events.loc[events["used"], "window_j"].mean())
    assert abs(p.event.energy_j) < 1e-4
    assert p.average.requested_rate_hz == 50.0 and p.average.rate_hz == pytest.approx(50.0, rel=0.3)
    assert p.average.measured_w == pytest.approx(2.0, rel=1e-3)
    assert p.inference.n >= 20 and p.excluded["warmup"] >= 10
    assert (run_dir / "power.parquet").exists() and (run_dir / "energy_events.parquet").exists()
    assert store.read_result(run_dir) == result


def test_absent_meter_fails_before_running(tmp_path):
    from edgebench.power.sysfs import RaplMeter

    with pytest.raises(MeterError, match="no RAPL powercap zone"):
        measure_energy(DIGITS_INT8, get_profile("host"), EnergyOptions(rate_hz=10.0, **FAST),
                       RaplMeter(zone=str(tmp_path / "intel-rapl:9")), runs_root=tmp_path / "runs")
    assert store.find_runs(tmp_path / "runs") == []


def test_own_power_meter_refuses_a_remote_board(tmp_path):
    from edgebench.power.sysfs import RaplMeter

    with pytest.raises(UsageError) as e:
        measure_energy(DIGITS_INT8, get_profile("raspberry-pi-5"), EnergyOptions(rate_hz=1.0), RaplMeter(), runs_root=tmp_path)
    assert "measures the computer running edgebench" in e.value.one_line()


def test_meter_stopping_mid_run_keeps_partial_data_and_marks_the_run(tmp_path):
    release, hang = threading.Event(), threading.Event()
    chunks = []

    class Hanging(CounterMeter):
        def _poll(self):
            if hang.is_set():
                release.wait(30)  # a read that never returns: the driver hung
            return super()._poll()

    def progress(ev):
        if ev["event"] == "chunk":
            chunks.append(ev)
            if len(chunks) == 2:  # hang once the run has measured something
                hang.set()

    try:
        with pytest.raises(MeterError) as e:
            measure_energy(DIGITS_INT8, get_profile("host"), EnergyOptions(rate_hz=50.0, **{**FAST, "max_time_s": 8.0}),
                           Hanging(stall_timeout_s=0.3), runs_root=tmp_path, progress=progress)
    finally:
        release.set()
    assert "no reading for" in e.value.one_line() and "partial data kept in" in e.value.one_line()
    (run_dir,) = store.find_runs(tmp_path)
    result = store.read_result(run_dir)
    assert result.status == "incomplete" and result.kind == "energy"
    assert result.power.measured is True and result.power.samples["complete"] is False
    assert len(pd.read_parquet(run_dir / "power.parquet")) > 50


DATASHEET_BOARD = {
    "schema": 1, "name": "host-datasheet", "title": "host with datasheet figures", "kind": "linux",
    "transport": {"type": "local"}, "runtimes": ["ai_edge_litert"], "kernels": ["xnnpack", "builtin", "reference"],
    "default_threads": 1,
    "datasheet": {"source": "a test datasheet", "idle_power_w": 1.0, "typical_load_power_w": 3.0},
}


def test_no_meter_estimates_from_the_datasheet_and_says_so(tmp_path):
    from edgebench.cli.render.energy import energy_lines

    profile = BoardProfile.from_dict(DATASHEET_BOARD)
    result, run_dir = estimate_energy(DIGITS_INT8, profile, EnergyOptions(rate_hz=50.0, **FAST), runs_root=tmp_path)
    p = result.power
    e2e = result.latency["e2e"].median_s
    assert p.measured is False and p.label == "estimated (datasheet)" and p.instrument is None
    assert p.inference.energy_j == pytest.approx(3.0 * e2e) and p.event.energy_j == pytest.approx(2.0 * e2e)
    assert p.idle.label == p.inference.label == "estimated (datasheet)"
    assert p.duty_cycle.avg_power_w == pytest.approx(1.0 + 2.0 * e2e * 50)
    lines = energy_lines(result, run_dir)
    assert lines and all(line.rstrip().endswith("[estimated (datasheet)]") for line in lines)
    with pytest.raises(UsageError, match="no datasheet power figures"):
        estimate_energy(DIGITS_INT8, get_profile("host"), EnergyOptions(rate_hz=1.0), runs_root=tmp_path)


# ---------------------------------------------------------------------------
# the command


@pytest.fixture
def fake_rapl(tmp_path):
    zone = tmp_path / "intel-rapl:0"
    zone.mkdir()
    (zone / "name").write_text("package-0\n")
    (zone / "max_energy_range_uj").write_text("262143328850\n")
    (zone / "energy_uj").write_text("0\n")
    stop = threading.Event()
    t0 = time.perf_counter()

    def counter():
        while not stop.is_set():
            tmp = zone / "energy_uj.tmp"
            tmp.write_text(f"{int((time.perf_counter() - t0) * 3e6)}\n")
            os.replace(tmp, zone / "energy_uj")
            time.sleep(0.001)

    th = threading.Thread(target=counter, daemon=True)
    th.start()
    yield zone
    stop.set()
    th.join()


def test_cli_json_equals_the_stored_run(tmp_path, fake_rapl):
    args = ["energy", str(DIGITS_INT8), "--meter", "rapl", "--meter-port", str(fake_rapl), "--rate", "20/s",
            "--idle-s", "0.5", "--min-time", "1", "--max-time", "2", "--min-samples", "20",
            "--runs-dir", str(tmp_path / "runs")]
    res = CliRunner().invoke(app, args + ["--json"])
    assert res.exit_code == 0, res.output
    printed = json.loads(res.stdout)
    (run_dir,) = store.find_runs(tmp_path / "runs")
    assert printed == store.read_result(run_dir).to_dict()
    assert printed["kind"] == "energy" and printed["power"]["boundary"] == "soc"
    assert printed["power"]["idle"]["power_w"] == pytest.approx(3.0, rel=0.05)
    shown = CliRunner().invoke(app, args)
    assert shown.exit_code == 0 and "idle power" in shown.stdout and "[measured]" in shown.stdout


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "edgebench", *map(str, args)], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("args,needle", [
    (["--rate", "1/s", "--duty", "0.5"], "either --rate or --duty"),
    (["--duty", "1.5"], "'--duty': must be a finite number from 1e-06 to 1"),
    (["--rate", "0"], "rate must be positive"),
    (["--rate", "1/s", "--meter", "nosuch"], "unknown power meter 'nosuch'"),
    (["--rate", "1/s", "--meter", "rapl", "--meter-port", "/nonexistent/intel-rapl:0"], "no RAPL powercap zone"),
    (["--rate", "1/s", "--meter", "lpm01a"], "needs its serial port"),
    (["--rate", "1/s"], "no datasheet power figures"),
])
def test_bad_input_gives_one_line_and_exit_1(tmp_path, args, needle):
    p = run_cli("energy", DIGITS_INT8, "--runs-dir", tmp_path, *args)
    assert p.returncode == 1, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.strip() and "…" not in ln]
    assert len(lines) == 1 and needle in lines[0], p.stderr
    assert store.find_runs(tmp_path) == []


def test_duty_cycle_becomes_a_rate_from_measured_latency(tmp_path):
    profile = BoardProfile.from_dict(DATASHEET_BOARD)
    result, _ = estimate_energy(DIGITS_INT8, profile, EnergyOptions(duty=0.02, **FAST), runs_root=tmp_path)
    assert result.scenario.duty == 0.02 and result.scenario.rate_hz > 0
    assert result.power.duty_cycle.requested_duty == 0.02
    realized = result.power.duty_cycle.duty
    assert realized == pytest.approx(result.power.inference.duration_s * result.scenario.rate_hz)
    warned = any(w.code == "duty-not-met" for w in result.warnings)
    assert warned == (abs(realized - 0.02) > 0.2 * 0.02)


# ---------------------------------------------------------------------------
# a simulated board: its power model through the meter interface


def test_simulated_board_energy_through_the_meter_interface(tmp_path):
    """sim-pi5: idle 2.5 W; an inference keeps it busy for 5 ms at 2.4 GHz, adding its dynamic power 6.5 W,
    so 32.5 mJ above idle per inference and 2.5 W + 32.5 mJ x 20/s = 3.15 W on average at 20/s."""
    from edgebench.cli.render.energy import energy_lines
    from edgebench.power.base import PowerMeter
    from edgebench.sim import SimClient
    from edgebench.sim.meter import SimMeter

    assert isinstance(SimMeter(SimClient()), PowerMeter)
    res = CliRunner().invoke(app, ["energy", str(DIGITS_INT8), "--board", "sim-pi5", "--rate", "20", "--min-time", "1",
                                   "--max-time", "5", "--idle-s", "2", "--runs-dir", str(tmp_path), "--json"])
    assert res.exit_code == 0, res.output
    printed = json.loads(res.stdout)
    (run_dir,) = store.find_runs(tmp_path)
    result = store.read_result(run_dir)
    assert printed == result.to_dict()
    p = result.power
    assert result.kind == "energy" and result.label == "simulated" and p.label == "simulated"
    for key in ("idle", "inference", "event", "average", "duty_cycle"):
        assert getattr(p, key).label == "simulated", key
    assert p.idle.power_w == pytest.approx(2.5)
    assert p.inference.above_idle_j == pytest.approx(6.5 * 0.005, rel=0.03)
    assert p.event.energy_j == pytest.approx(6.5 * 0.005, rel=0.03)
    # the schedule continues on the board's clock across chunks: the requested rate is the achieved one
    assert p.average.rate_hz == pytest.approx(20.0, rel=0.01)
    assert p.average.measured_w == pytest.approx(2.5 + 6.5 * 0.005 * 20.0, rel=0.01)     # 3.15 W
    assert p.alignment.method.startswith("same clock: the meter reads the simulated board's own clock")
    assert p.samples["clock"] == "device" and (run_dir / "power.parquet").exists()
    assert not any(w.code in ("simulated-board-energy", "meter-too-slow-for-inference") for w in result.warnings)
    assert result.extra.claim.startswith("SIMULATED") and "simulated with simulated power model" in \
        result.extra.claim
    lines = energy_lines(result, run_dir)
    assert all(line.endswith("[simulated]") for line in lines if line.startswith("  ") and "  [" in line)
    assert "measured" not in lines[0]
    # the board model has no wake-up: what is left (idle 2.4999999999998486 W) is floating-point rounding,
    # printed as not resolved, never as "0.265 pJ (95% CI 0.243-0.287 pJ)"
    assert p.wake_up.resolved is False and p.event.resolved is True
    assert abs(p.wake_up.energy_j) <= p.wake_up.resolution_j < 1e-9
    assert any("wake-up per event" in line and "not resolved" in line for line in lines)


def test_a_simulated_board_refuses_a_meter(tmp_path):
    p = run_cli("energy", DIGITS_INT8, "--board", "sim-pi5", "--rate", "1/s", "--meter", "rapl", "--runs-dir", tmp_path)
    assert p.returncode == 1 and "is simulated: its power comes from its power model" in p.stderr
    assert store.find_runs(tmp_path) == []


@pytest.mark.slow
def test_a_killed_energy_run_is_finished_from_its_journal(tmp_path):
    """SIGKILL in the middle of the workload: the power samples and inference windows journaled per chunk
    give the energy figures of what was measured (idle from the window before the run only)."""
    from test_soak import start_measuring

    p = start_measuring(["energy", DIGITS_INT8, "--board", "sim-pi5", "--rate", "20", "--min-time", "100",
                         "--max-time", "120", "--idle-s", "2"], tmp_path, "*/windows.journal.*.arrows", 20_000)
    p.kill()
    p.wait(timeout=60)
    (run_dir,) = store.find_runs(tmp_path)
    assert store.read_result(run_dir).status == "running" and (run_dir / "energy.json").exists()
    res = CliRunner().invoke(app, ["energy", "--recover", str(run_dir), "--json"])
    assert res.exit_code == 0, res.output
    result = store.read_result(run_dir)
    assert json.loads(res.stdout) == result.to_dict()
    assert result.kind == "energy" and result.status == "incomplete" and "crash or kill" in result.status_reason
    p_ = result.power
    assert p_.label == "simulated" and len(p_.idle.windows) == 1
    assert p_.idle.power_w == pytest.approx(2.5)
    assert p_.event.energy_j == pytest.approx(6.5 * 0.005, rel=0.03) and p_.inference.n > 100
    assert (run_dir / "power.parquet").exists() and (run_dir / "energy_events.parquet").exists()
    assert not list(run_dir.glob("*.journal.*")) and not (run_dir / "energy.json").exists()
    again = CliRunner().invoke(app, ["energy", "--recover", str(run_dir)])
    assert again.exit_code == 1 and "not an unfinished energy run" in str(again.exception)


def test_a_finished_energy_run_leaves_no_journal(tmp_path):
    res = CliRunner().invoke(app, ["energy", str(DIGITS_INT8), "--board", "sim-pi5", "--rate", "20", "--min-time", "1",
                                   "--max-time", "3", "--idle-s", "1", "--runs-dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    (run_dir,) = store.find_runs(tmp_path)
    assert store.read_result(run_dir).status == "complete"
    assert not list(run_dir.glob("*.journal.*")) and not (run_dir / "energy.json").exists()


def test_the_idle_powers_error_is_shared_by_every_event():
    """Idle power is one estimate subtracted from every event: its error does not average down over
    events, so the above-idle interval is at least the idle interval times the event's duration."""
    from edgebench.stats.energy import MeanCI, with_shared_term

    events = MeanCI(1.0e-3, 0.9e-3, 1.1e-3, 400, 1e-3)
    wide = with_shared_term(events, 0.3e-3, "the idle power's interval")
    assert wide.mean == events.mean and wide.ci_high - wide.mean == pytest.approx(np.hypot(0.1e-3, 0.3e-3))
    assert "shared by every event" in wide.method
    assert with_shared_term(events, None, "x") is events
