"""Sweep: a grid of soaks on the simulated board (simulated time: seconds per grid), its folder,
table and plots, rates the board cannot sustain, bad duty cycles, Ctrl-C, and the CLI."""
from __future__ import annotations

import dataclasses
import json
import struct
from pathlib import Path

import pandas as pd
import pytest
from conftest import DIGITS_FP32, DIGITS_INT8
from typer.testing import CliRunner

from edgebench import errors
from edgebench.bench.soak import read_telemetry
from edgebench.bench.sweep import SweepOptions, grid, plot_note, run_sweep
from edgebench.boards.registry import get_profile
from edgebench.results import store

ROOT = Path(__file__).resolve().parents[1]
SIM = get_profile("sim-pi5")
FAST = {"window_s": 30.0, "burst_s": 5.0, "max_duration_per_point_s": 300.0}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def png_size(path: Path) -> tuple:
    """(width, height) from a PNG's IHDR chunk; asserts the signature first."""
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC and data[12:16] == b"IHDR", f"{path.name} is not a PNG"
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """Two duty cycles × two model variants (INT8, FP32) on the simulated board."""
    root = tmp_path_factory.mktemp("sweep")
    events: list = []
    opts = SweepOptions(duty=(0.1, 1.0), variants=(str(DIGITS_FP32),), **FAST)
    result, run_dir = run_sweep(DIGITS_INT8, SIM, opts, runs_root=root, progress=events.append)
    return result, run_dir, events, root


def by_point(result) -> dict:
    return {(p.duty, p.model.precision): p for p in result.extra.points}


# -- the grid --------------------------------------------------------------------------------
def test_grid_order_lightest_load_first():
    from edgebench.modelfile import read_model

    models = [read_model(DIGITS_INT8), read_model(DIGITS_FP32)]
    pts = grid(SweepOptions(duty=(1.0, 0.1), threads=(1, 4)), models)
    assert [(p.load, p.model.precision, p.threads) for p in pts] == [
        (0.1, "int8", 1), (0.1, "int8", 4), (0.1, "fp32", 1), (0.1, "fp32", 4),
        (1.0, "int8", 1), (1.0, "int8", 4), (1.0, "fp32", 1), (1.0, "fp32", 4)]


def test_two_by_two_grid_finishes_with_a_verdict_per_point(swept):
    result, run_dir, _, _ = swept
    assert result.kind == "sweep" and result.status == "complete" and result.label == "simulated"
    pts = result.extra.points
    assert [(p.id, p.duty, p.model.precision) for p in pts] == [
        ("p01", 0.1, "int8"), ("p02", 0.1, "fp32"), ("p03", 1.0, "int8"), ("p04", 1.0, "fp32")]
    for p in pts:
        assert p.status == "complete" and isinstance(p.steady, bool) and p.verdict
        assert "temperature:" in p.verdict and "latency:" in p.verdict
        assert p.label == "simulated" and p.energy.label == "simulated"
        soak = store.read_result(run_dir / p.run_dir)     # each point is a full soak run, inside the sweep
        assert soak.kind == "soak" and soak.label == "simulated" and soak.run_id == p.run_id
        assert soak.model.precision == p.model.precision
        assert (run_dir / p.run_dir / "samples.parquet").exists()
        assert len(read_telemetry(run_dir / p.run_dir)) > 10
    assert all(p.steady for p in pts)      # on this board every point settles well within 300 s
    assert result.stopping.to_dict() == {"points": 4, "finished": 4, "steady": 4, "failed": 0, "not_run": 0}
    codes = [w.code for w in result.warnings]
    assert "simulated-ignores-config" in codes       # variants cannot differ on the simulated board: said


def test_hotter_faster_and_cheaper_per_inference_at_higher_duty(swept):
    result = swept[0]
    pts = by_point(result)
    for prec in ("int8", "fp32"):
        lo, hi = pts[(0.1, prec)], pts[(1.0, prec)]
        assert hi.steady_temp_c > lo.steady_temp_c + 10
        assert hi.throttled and not lo.throttled
        assert hi.sustained_freq_hz < lo.sustained_freq_hz == 2.4e9
        assert hi.throughput_per_s > 5 * lo.throughput_per_s
        assert hi.energy.avg_power_w > lo.energy.avg_power_w
        assert lo.energy.per_inference_j > hi.energy.per_inference_j  # idle spread over fewer
    low = pts[(0.1, "int8")]
    # duty 0.1 of a 5 ms inference is 20/s; the board model's power there is 2.5 W + 0.1 x 6.5 W
    assert low.requested_rate_hz == pytest.approx(20.0, rel=0.03)
    assert low.throughput_per_s == pytest.approx(20.0, rel=0.03)
    assert low.realized_duty == pytest.approx(0.1, rel=0.05)
    assert low.energy.avg_power_w == pytest.approx(3.15, rel=0.02)
    assert low.energy.per_inference_j == pytest.approx(3.15 / 20.0, rel=0.03)
    assert pts[(1.0, "int8")].requested_rate_hz is None      # duty 1: continuous load


def test_each_point_quotes_the_clock_and_temperature_of_its_own_window(swept):
    result, run_dir, _, _ = swept
    pts = by_point(result)
    hot, cool = pts[(1.0, "int8")], pts[(0.1, "int8")]
    assert hot.sustained_freq_hz < 2.0e9 and cool.sustained_freq_hz == 2.4e9
    assert hot.sustained_temp_c == pytest.approx(79.5, abs=1.5) and cool.sustained_temp_c < 70
    claim = result.extra.claim
    assert f"p03 (duty 1, digits_int8 (int8)) {hot.throughput_per_s:,.3g}/s at {hot.sustained_temp_c:.0f} °C, " \
           f"{hot.sustained_freq_hz / 1e9:.2f} GHz (sustained window)" in claim
    assert f"at {cool.sustained_temp_c:.0f} °C, 2.40 GHz (sustained window)" in claim
    # a point's energy is its soak's own record of its window
    soak = store.read_result(run_dir / hot.run_dir)
    assert hot.energy == soak.power.window and soak.power.window.window == "sustained"
    assert soak.extra.figure_window["freq_hz"] == hot.sustained_freq_hz


def test_battery_takes_one_points_window_power_and_says_which(swept):
    from edgebench.cli.battery_cmd import battery_estimate

    result, run_dir, _, root = swept

    def est(duty=None, rate=None):
        return battery_estimate(str(run_dir), root, "18650", None, None, 0.8, 0.85, None, None, None, rate, duty,
                                None, None, None)

    with pytest.raises(errors.UsageError, match="has 2 points with energy: say which") as exc:
        est(duty=1.0)              # two variants at duty 1: INT8 and FP32
    assert "p03: duty 1" in exc.value.one_line() and "p04: duty 1" in exc.value.one_line()
    with pytest.raises(errors.UsageError, match="no point with energy at duty 0.3"):
        est(duty=0.3)
    with pytest.raises(errors.UsageError, match="pick a point with --duty"):
        est(rate="10/s")
    p03 = by_point(result)[(1.0, "int8")]
    point = battery_estimate(str(run_dir / p03.run_dir), root, "18650", None, None, 0.8, 0.85, None, None, None,
                             None, None, None, None, None)   # a point's folder is a soak run of its own
    assert point.load["avg_power_w"] == pytest.approx(p03.energy.avg_power_w)
    assert point.load["label"] == "simulated"


def _sweep_process(runs_dir):
    """A sweep whose first point runs for long (about 100 s of host time), once that point measures."""
    from test_soak import start_measuring

    return start_measuring(["sweep", DIGITS_INT8, "--board", "sim-pi5", "--duty", "0.5,1", "--window", "30",
                            "--max-duration-per-point", "20000"], runs_dir, "*/points/*/samples.journal.*.arrows",
                           100_000)


@pytest.mark.slow
def test_sigterm_stops_the_sweep_like_ctrl_c(tmp_path):
    import signal

    from test_soak import stop_with

    p = _sweep_process(tmp_path)
    err = stop_with(p, signal.SIGTERM)
    assert p.returncode == 128 + signal.SIGTERM and "Traceback" not in err, err
    assert "stopped by SIGTERM: 0 of 2 points finished; kept, marked incomplete" in err
    (run_dir,) = store.find_runs(tmp_path)
    r = store.read_result(run_dir)
    assert r.status == "incomplete" and r.status_reason.startswith("stopped by SIGTERM: 0 of 2 points finished")
    p1, p2 = r.extra.points
    assert p1.status == "incomplete" and p1.status_reason == "stopped by SIGTERM" and p2.status == "not-run"
    point = store.read_result(run_dir / p1.run_dir)
    assert point.status_reason == "stopped by SIGTERM" and len(store.read_samples(run_dir / p1.run_dir)) > 1000
    assert not list(run_dir.rglob("*.arrows"))


@pytest.mark.slow
def test_a_killed_sweep_is_finished_by_recover(tmp_path):
    from edgebench.cli.app import app

    p = _sweep_process(tmp_path)
    p.kill()
    p.wait(timeout=60)
    (run_dir,) = store.find_runs(tmp_path)
    assert store.read_result(run_dir).status == "running"
    res = CliRunner().invoke(app, ["sweep", "--recover", str(run_dir), "--json"])
    assert res.exit_code == 0, res.output
    r = store.read_result(run_dir)
    assert json.loads(res.stdout) == r.to_dict()
    assert r.status == "incomplete" and "crash or kill" in r.status_reason and "0 of 2 points finished" in r.status_reason
    p1, p2 = r.extra.points
    assert p1.status == "incomplete" and "recovered from its journal" in p1.status_reason
    assert p1.run_dir.startswith("points/p01-") and p2.status == "not-run"
    point = store.read_result(run_dir / p1.run_dir)
    assert point.status == "incomplete" and len(store.read_samples(run_dir / p1.run_dir)) > 1000
    assert not list(run_dir.rglob("*.arrows")) and len(pd.read_parquet(run_dir / "points.parquet")) == 2
    again = CliRunner().invoke(app, ["sweep", "--recover", str(run_dir)])
    assert again.exit_code == 1 and "not an unfinished sweep" in str(again.exception)


def test_folder_table_and_pngs(swept):
    result, run_dir, _, root = swept
    assert store.find_runs(root) == [run_dir]       # the points live inside the sweep's folder
    assert store.read_result(run_dir) == result
    table = pd.read_parquet(run_dir / "points.parquet")
    assert list(table["id"]) == ["p01", "p02", "p03", "p04"]
    assert list(table["steady_temp_c"]) == [p.steady_temp_c for p in result.extra.points]
    assert set(table["energy_label"]) == {"simulated"} and set(table["label"]) == {"simulated"}
    assert result.extra.plots == ["timeseries.png", "throughput_energy.png"]
    w, h = png_size(run_dir / "timeseries.png")
    assert w >= 1000 and h >= 4 * 150                 # a row of small multiples per point
    w, h = png_size(run_dir / "throughput_energy.png")
    assert w >= 800 and h >= 400
    for name in result.extra.plots:
        assert (run_dir / name).stat().st_size > 20_000


def test_progress_names_the_point(swept):
    events = swept[2]
    kinds = [e["event"] for e in events]
    assert kinds.count("point-start") == 4 and kinds.count("point-done") == 4
    assert kinds[kinds.index("sweep-start")] == "sweep-start"
    chunks = [e for e in events if e["event"] == "chunk"]
    assert {e["point"] for e in chunks} == {1, 2, 3, 4} and all("temp_c" in e for e in chunks)


# -- bad input and interruptions -------------------------------------------------------------------
@pytest.mark.parametrize("duty,needle", [
    ("0.5,1.5", "error: --duty must be a finite number from 1e-06 to 1 (the fraction of time spent inferring), "
                "got 1.5"),
    ("0", "error: --duty must be a finite number from 1e-06 to 1 (the fraction of time spent inferring), got 0"),
    ("-0.1", "error: --duty must be a finite number from 1e-06 to 1 (the fraction of time spent inferring), "
             "got -0.1"),
    ("half", "error: --duty 'half' is not a number"),
])
def test_bad_duty_is_one_clear_line(duty, needle, tmp_path, capsys):
    from edgebench.cli.app import main

    with pytest.raises(SystemExit) as exc:
        main(["sweep", str(DIGITS_INT8), "--board", "sim-pi5", "--duty", duty, "--runs-dir", str(tmp_path)])
    assert exc.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(needle), err
    assert not list(tmp_path.iterdir())                # nothing was started


def test_bad_options_are_refused_before_anything_runs(tmp_path):
    for opts, needle in [
        (SweepOptions(duty=(0.5,), rate_hz=(10.0,)), "not both"),
        (SweepOptions(duty=(2.0,)), "--duty must be a finite number from 1e-06 to 1"),
        (SweepOptions(delegates=("edgetpu",)), "has no delegate 'edgetpu'"),
        (SweepOptions(threads=(0,)), "threads"),
        (SweepOptions(window_s=60.0, max_duration_per_point_s=30.0), "shorter than the burst"),
    ]:
        with pytest.raises(errors.UsageError, match=None) as exc:
            run_sweep(DIGITS_INT8, SIM, opts, runs_root=tmp_path)
        assert needle in exc.value.message
    with pytest.raises(errors.UsageError, match="same model"):
        run_sweep(DIGITS_INT8, SIM, SweepOptions(variants=(str(DIGITS_INT8),)), runs_root=tmp_path)
    assert not list(tmp_path.iterdir())


def test_ctrl_c_keeps_finished_points_and_marks_the_sweep_incomplete(tmp_path):
    def progress(ev):
        if ev["event"] == "chunk" and ev["point"] == 2 and ev["elapsed_s"] > 10:
            raise KeyboardInterrupt

    opts = SweepOptions(duty=(0.1, 1.0), threads=(1, 4), **FAST)   # two duty cycles x two thread counts
    with pytest.raises(KeyboardInterrupt):
        run_sweep(DIGITS_INT8, SIM, opts, runs_root=tmp_path, progress=progress)
    (run_dir,) = store.find_runs(tmp_path)
    r = store.read_result(run_dir)
    assert r.status == "incomplete" and "Ctrl-C" in r.status_reason and "1 of 4 points finished" in r.status_reason
    p1, p2, p3, p4 = r.extra.points
    assert (p1.status, p1.threads, p1.steady) == ("complete", 1, True)
    assert p2.status == "incomplete" and p2.threads == 4 and "Ctrl-C" in p2.status_reason
    assert store.read_result(run_dir / p2.run_dir).status == "incomplete"   # its samples are kept
    assert len(store.read_samples(run_dir / p2.run_dir)) > 100
    assert p3.status == p4.status == "not-run" and p3.run_dir is None
    assert len(pd.read_parquet(run_dir / "points.parquet")) == 4
    png_size(run_dir / "timeseries.png")
    assert "INCOMPLETE sweep" in r.extra.claim


# -- labels ---------------------------------------------------------------------------------------------
def test_estimated_energy_on_a_measured_board_is_labelled_apart(tmp_path, monkeypatch):
    from edgebench.boards.profile import ESTIMATED_LABEL, Datasheet

    monkeypatch.setenv("EDGEBENCH_SYSFS_ROOT", str(tmp_path / "empty"))   # a host without sensors: fast, quiet
    monkeypatch.setenv("PATH", str(tmp_path))
    host = dataclasses.replace(get_profile("host"), datasheet=Datasheet(
        source="test figures", idle_power_w=2.0, typical_load_power_w=6.0))
    opts = SweepOptions(duty=(1.0,), window_s=1.0, burst_s=0.5, max_duration_per_point_s=4.0)
    r, run_dir = run_sweep(DIGITS_INT8, host, opts, runs_root=tmp_path / "runs")
    (p,) = r.extra.points
    assert r.label == p.label == "measured" and p.energy.label == ESTIMATED_LABEL
    # continuous, yet busy only while inferring: the achieved rate x the median latency (host round trips
    # between chunks are idle time); the estimate is idle + (load - idle) x that fraction
    busy = p.energy.busy_fraction
    assert busy == pytest.approx(min(1.0, p.throughput_per_s * p.latency.median_s))
    assert 0.3 < busy <= 1.0
    assert p.energy.avg_power_w == pytest.approx(2.0 + 4.0 * busy, rel=1e-9)
    assert "energy-estimated" in [w.code for w in r.warnings]
    assert r.power.label == ESTIMATED_LABEL and r.power.measured is False
    assert "labels differ by panel" in plot_note(r.label, r.power.label)
    assert plot_note("simulated", "simulated") == "all figures simulated"


# -- the command line ---------------------------------------------------------------------------------------
def test_cli_json_equals_the_stored_run(tmp_path):
    from edgebench.cli.app import app

    res = CliRunner().invoke(app, ["sweep", str(DIGITS_INT8), "--board", "sim-pi5", "--duty", "0.5,1", "--window", "30",
                                   "--max-duration-per-point", "300", "--runs-dir", str(tmp_path), "--json"])
    assert res.exit_code == 0, res.output
    printed = json.loads(res.stdout)
    (run_dir,) = store.find_runs(tmp_path)
    assert printed == store.read_result(run_dir).to_dict()
    assert printed["kind"] == "sweep" and printed["label"] == "simulated"
    assert [p["duty"] for p in printed["extra"]["points"]] == [0.5, 1.0]


def test_cli_table_says_when_a_rate_is_not_sustained_and_goes_on(tmp_path):
    from edgebench.cli.app import app

    res = CliRunner().invoke(app, ["sweep", str(DIGITS_INT8), "--board", "sim-pi5", "--rate", "50,400", "--threads", "1",
                                   "--window", "30", "--max-duration-per-point", "120", "--runs-dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    out = res.stdout
    for column in ("point", "inf/s", "median [95% CI]", "°C", "GHz", "throttled", "J/inf", "steady after"):
        assert column in out
    assert "asked 400/s: NOT" in out and "(simulated)" in out and "all figures simulated" in out
    assert "warning (rate-not-sustained): p02" in out
    (run_dir,) = store.find_runs(tmp_path)
    p50, p400 = store.read_result(run_dir).extra.points
    assert p50.status == p400.status == "complete"           # the sweep went on
    assert p50.rate_sustained and p50.throughput_per_s == pytest.approx(50.0, rel=0.01)
    assert p400.rate_sustained is False and p400.achieved_rate_hz < 200
    assert f"achieved {p400.achieved_rate_hz:.4g}/s" in p400.rate_message


def test_cli_ctrl_c_shows_the_finished_points_and_exits_130(tmp_path, monkeypatch, capsys):
    from edgebench.cli import sweep_cmd
    from edgebench.cli.app import main

    real = sweep_cmd._keeping

    def keeping(show, state):      # the progress the sweep is given, on a terminal or in a log alike
        callback = real(show, state)

        def interrupting(ev):
            callback(ev)
            if ev["event"] == "point-start" and ev["index"] == 2:
                raise KeyboardInterrupt

        return interrupting

    monkeypatch.setattr(sweep_cmd, "_keeping", keeping)
    with pytest.raises(SystemExit) as exc:
        main(["sweep", str(DIGITS_INT8), "--board", "sim-pi5", "--duty", "0.5,1", "--window", "30",
              "--max-duration-per-point", "300", "--runs-dir", str(tmp_path), "--json"])
    assert exc.value.code == 130
    captured = capsys.readouterr()
    printed = json.loads(captured.out)
    (run_dir,) = store.find_runs(tmp_path)
    assert printed == store.read_result(run_dir).to_dict() and printed["status"] == "incomplete"
    assert [p["status"] for p in printed["extra"]["points"]] == ["complete", "not-run"]
    assert "interrupted by the user (Ctrl-C): 1 of 2 points finished; kept, marked incomplete" in captured.err
