"""Battery-life estimates against hand-computed cases; presets; bad input; `battery` --json parity."""
import json

import pytest
from conftest import DIGITS_INT8
from typer.testing import CliRunner

from edgebench.bench.battery import (
    HOURS_PER_MONTH,
    PRESETS,
    Load,
    estimate,
    figures_from_run,
    load_from_figures,
    make_cell,
    preset,
)
from edgebench.cli.app import app
from edgebench.cli.battery_cmd import battery_estimate, battery_lines
from edgebench.errors import ResultError, UsageError
from edgebench.results import store
from edgebench.results.model import RunResult


def test_two_aa_at_one_milliwatt_hand_computed():
    # 3000 mAh x 3.0 V = 9 Wh; x 0.8 usable = 7.2 Wh; 1 mW / 0.85 = 1.17647 mW from the cells
    est = estimate(preset("2xAA"), Load(1e-3, "given"), usable=0.8, regulator_eff=0.85,
                   self_discharge_pct_per_month=0.0)
    assert est.energy_nominal_wh == pytest.approx(9.0) and est.energy_usable_wh == pytest.approx(7.2)
    assert est.battery_power_w == pytest.approx(1e-3 / 0.85)
    assert est.life_h == pytest.approx(6120.0)  # 7.2 Wh / 1.17647 mW = 255 days
    assert est.life_days == pytest.approx(255.0)


def test_self_discharge_and_derating_hand_computed():
    # CR2032: 225 mAh x 3.0 V = 0.675 Wh; derated to 90% at -10 °C; usable 0.9 -> 0.54675 Wh
    # 20 µW at 90% efficiency = 22.2222 µW; self-discharge 1%/month of 0.675 Wh = 9.2404 µW
    est = estimate(preset("CR2032"), Load(20e-6, "measured"), usable=0.9, regulator_eff=0.9,
                   self_discharge_pct_per_month=1.0, temp_c=-10, temp_derate=0.9)
    p_self = 0.01 * 0.675 / HOURS_PER_MONTH
    assert est.self_discharge_w == pytest.approx(p_self)
    assert est.life_h == pytest.approx(0.675 * 0.9 * 0.9 / (20e-6 / 0.9 + p_self))
    assert est.assumptions["temp_derate"] == 0.9 and est.label == "estimated from measured power"


def test_preset_self_discharge_is_used_and_its_source_stated():
    est = estimate(preset("2xAA"), Load(1e-3, "given"))
    assert est.assumptions["self_discharge_source"] == "preset"
    assert est.self_discharge_w == pytest.approx(10 / 180 / 100 * 9.0 / HOURS_PER_MONTH)
    est2 = estimate(preset("lipo-1000"), Load(1e-3, "given"))
    assert any("self-discharge not included" in n for n in est2.notes)


def test_every_preset_states_its_source():
    assert set(PRESETS) == {"2xAA", "CR2032", "18650", "lipo-1000"}
    for cell in PRESETS.values():
        assert cell.source and cell.capacity_mah > 0 and cell.voltage_v > 0
    assert PRESETS["CR2032"].capacity_mah == 225 and PRESETS["2xAA"].capacity_mah == 3000
    assert 2500 <= PRESETS["18650"].capacity_mah <= 3500 and PRESETS["lipo-1000"].voltage_v == 3.7


def test_temperature_without_a_sourced_curve_is_not_derated_and_says_so():
    est = estimate(preset("2xAA"), Load(1e-3, "given"), temp_c=-20)
    assert est.energy_usable_wh == pytest.approx(9.0 * 0.8)
    assert any("not derated for -20 °C" in n for n in est.notes)
    with pytest.raises(UsageError, match="outside the CR2032 cell's rated range -20 to 70 °C"):
        estimate(preset("CR2032"), Load(1e-3, "given"), temp_c=-30)


@pytest.mark.parametrize("kwargs,needle", [
    ({"usable": 1.2}, "usable fraction 1.2 is outside (0, 1]"),
    ({"usable": 0}, "usable fraction 0 is outside (0, 1]"),
    ({"regulator_eff": 0}, "regulator efficiency 0 is outside (0, 1]"),
    ({"self_discharge_pct_per_month": -1}, "self-discharge -1%/month"),
    ({"temp_derate": 1.5}, "temperature derating 1.5"),
])
def test_bad_assumptions(kwargs, needle):
    with pytest.raises(UsageError) as e:
        estimate(preset("2xAA"), Load(1e-3, "given"), **kwargs)
    assert needle in e.value.one_line()


def test_cells():
    with pytest.raises(UsageError) as e:
        make_cell("AAA")
    assert "presets: 2xAA, CR2032, 18650, lipo-1000" in e.value.one_line()
    with pytest.raises(UsageError, match="custom cell needs --capacity-mah and --voltage"):
        make_cell("custom", 1000)
    c = make_cell("custom", 500, 3.7)
    assert (c.capacity_mah, c.voltage_v, c.source) == (500, 3.7, "given by the user")
    c2 = make_cell("18650", capacity_mah=2600)
    assert c2.capacity_mah == 2600 and "capacity_mah given by the user" in c2.source
    with pytest.raises(UsageError, match="capacity must be positive"):
        make_cell("custom", -5, 3.0)


def test_load_from_the_duty_cycle_model_with_bounds():
    load = load_from_figures(1e-3, 10e-3, "measured", duty=0.1, event_s=0.1,
                             idle_ci=(0.9e-3, 1.1e-3), event_ci=(9e-3, 11e-3))
    assert load.detail["rate_hz"] == pytest.approx(1.0)      # 0.1 / 0.1 s
    assert load.avg_power_w == pytest.approx(11e-3)
    assert (load.ci_low_w, load.ci_high_w) == (pytest.approx(9.9e-3), pytest.approx(12.1e-3))
    est = estimate(preset("2xAA"), load)
    assert est.life_low_h < est.life_h < est.life_high_h
    with pytest.raises(UsageError, match="cannot sustain 20/s"):
        load_from_figures(1e-3, 10e-3, "measured", rate_hz=20, event_s=0.1)


def energy_run(tmp_path, boundary="board"):
    result = RunResult(run_id="e1", created_utc="2026-01-01T00:00:00+00:00", kind="energy", status="complete",
                       model={"name": "kws"}, board={"name": "nucleo"}, scenario={"name": "fixed-rate", "rate_hz": 1.0})
    result.power = {"measured": True, "label": "measured", "boundary": boundary, "instrument": "LPM01A",
                    "idle": {"power_w": 50e-6, "ci_low_w": 48e-6, "ci_high_w": 52e-6, "label": "measured"},
                    "event": {"energy_j": 300e-6, "ci_low_j": 290e-6, "ci_high_j": 310e-6, "label": "measured"},
                    "inference": {"energy_j": 320e-6, "duration_s": 0.05, "label": "measured"},
                    "average": {"rate_hz": 0.998, "label": "measured"}}
    run_dir = store.new_run_dir(tmp_path, "kws", "nucleo")
    store.write_result(run_dir, result)
    return result, run_dir


def test_from_a_stored_run(tmp_path):
    result, run_dir = energy_run(tmp_path)
    figs = figures_from_run(result)
    assert figs["idle_w"] == 50e-6 and figs["event_j"] == 300e-6 and figs["rate_hz"] == 0.998
    est = battery_estimate(str(run_dir), tmp_path, "CR2032", None, None, 0.8, 0.85, 0.0, None, None,
                           "1/min", None, None, None, None)
    p = 50e-6 + 300e-6 / 60
    assert est.load["avg_power_w"] == pytest.approx(p) and est.load["label"] == "measured"
    assert est.life_h == pytest.approx(0.675 * 0.8 / (p / 0.85))
    lines = battery_lines(est)
    assert "[estimated from measured power]" in lines[0] and "[datasheet:" in lines[1] and "[assumed]" in lines[2]
    not_energy = RunResult(run_id="b", created_utc="x")
    with pytest.raises(ResultError, match="has no energy figures"):
        figures_from_run(not_energy)


def test_partial_boundary_warns_that_life_is_overestimated(tmp_path):
    _, run_dir = energy_run(tmp_path, boundary="soc")
    est = battery_estimate(str(run_dir), tmp_path, "18650", None, None, 0.8, 0.85, None, None, None,
                           None, None, None, None, None)
    assert any("measured only 'soc'" in n for n in est.notes)


def test_cli_json_parity_and_labels(tmp_path):
    _, run_dir = energy_run(tmp_path)
    res = CliRunner().invoke(app, ["battery", str(run_dir), "--cell", "CR2032", "--rate", "1/min", "--json"])
    assert res.exit_code == 0, res.output
    printed = json.loads(res.stdout)
    expected = battery_estimate(str(run_dir), "runs", "CR2032", None, None, 0.8, 0.85, None, None, None,
                                "1/min", None, None, None, None).to_dict()
    assert printed == json.loads(json.dumps(expected))
    assert printed["load"]["label"] == "measured" and printed["assumptions"]["label"].startswith("assumed")
    assert printed["cell"]["source"] and printed["label"] == "estimated from measured power"
    given = CliRunner().invoke(app, ["battery", "--idle-w", "0.001", "--event-above-idle-j", "0", "--rate", "1/s",
                                     "--cell", "2xAA", "--self-discharge-pct-per-month", "0", "--json"])
    assert json.loads(given.stdout)["life_h"] == pytest.approx(6120.0)
    shown = CliRunner().invoke(app, ["battery", "--idle-w", "0.001", "--event-above-idle-j", "0", "--rate", "1/s",
                                     "--self-discharge-pct-per-month", "0"])
    assert shown.exit_code == 0 and "battery life 255 days" in shown.stdout and "[given" in shown.stdout


def run_cli(*args):
    from conftest import run_edgebench

    return run_edgebench("battery", *args)


@pytest.mark.parametrize("args,needle", [
    (["--cell", "AAA", "--idle-w", "1e-3", "--event-above-idle-j", "0", "--rate", "1"], "unknown battery preset 'AAA'"),
    (["--idle-w", "1e-3"], "give a stored run (energy, soak or sweep), or --idle-w with --event-above-idle-j"),
    (["--idle-w", "1e-3", "--event-above-idle-j", "1e-3", "--duty", "0", "--event-s", "0.01"],
     "'--duty': must be a finite number from 1e-06 to 1"),
    (["--idle-w", "1e-3", "--event-above-idle-j", "1e-3", "--duty", "0.5"], "needs the duration of one event"),
    (["--idle-w", "1e-3", "--event-above-idle-j", "1e-3", "--rate", "200", "--event-s", "0.01"],
     "achievable rate is at most 100/s"),
    (["--idle-w", "1e-3", "--event-above-idle-j", "1e-3", "--rate", "1", "--duty", "0.5"], "either --rate or --duty"),
    (["nosuchrun", "--runs-dir", "."], "no run 'nosuchrun'"),
    # the two forms of an event, and the old name beside the new one
    (["--idle-w", "0.05", "--active-w", "2", "--event-s", "1", "--event-above-idle-j", "1.95", "--duty", "0.01"],
     "give the event as --event-above-idle-j J or as --active-w W with --event-s S, not both"),
    (["--idle-w", "0.05", "--event-j", "1", "--event-above-idle-j", "1", "--rate", "1"],
     "--event-j is the old name of --event-above-idle-j"),
    (["--idle-w", "0.05", "--active-w", "2", "--duty", "0.01"], "--active-w needs --event-s"),
    (["--idle-w", "0.05", "--active-w", "0.01", "--event-s", "1", "--duty", "0.01"],
     "active power 0.01 W is below the idle power 0.05 W"),
])
def test_bad_input_gives_one_line_and_exit_1(args, needle):
    p = run_cli(*args)
    assert p.returncode == 1, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and needle in lines[0], p.stderr


def test_active_power_form_gives_the_books_reality_check():
    """50 mW idle, 2 W active for 1 s at 1% duty: 0.05 + (2 - 0.05) x 1 s x 0.01/s = 69.5 mW
    (the energy-above-idle form read '2' as 2 J above idle and gave 70.0 mW)."""
    res = CliRunner().invoke(app, ["battery", "--active-w", "2", "--idle-w", "0.05", "--duty", "0.01",
                                   "--event-s", "1", "--json"])
    assert res.exit_code == 0, res.output
    est = json.loads(res.stdout)
    assert est["load"]["avg_power_w"] == pytest.approx(0.0695, abs=1e-12)
    assert est["load"]["detail"]["event_j"] == pytest.approx(1.95) and est["load"]["detail"]["active_w"] == 2.0
    shown = CliRunner().invoke(app, ["battery", "--active-w", "2", "--idle-w", "0.05", "--duty", "0.01",
                                     "--event-s", "1"])
    text = " ".join(shown.stdout.split())   # rich wraps at the console's width
    assert "69.5 mW at the board" in text and "(active 2 W - idle 0.05 W) x 1 s" in text
    assert "per event above idle" in text


def test_the_old_event_name_still_means_energy_above_idle_and_says_so():
    new = battery_estimate(None, "runs", "2xAA", None, None, 0.8, 0.85, None, None, None, "1/s", None, 0.05, 2.0,
                           None)
    old = battery_estimate(None, "runs", "2xAA", None, None, 0.8, 0.85, None, None, None, "1/s", None, 0.05, None,
                           None, event_j=2.0)
    assert old.load["avg_power_w"] == new.load["avg_power_w"] == pytest.approx(2.05)
    assert any("ABOVE IDLE" in n and "deprecated" in n for n in old.notes)
    assert not any("deprecated" in n for n in new.notes)


def test_a_simulated_soak_gives_its_sustained_window_power(tmp_path):
    from edgebench.bench.soak import SoakOptions, run_soak
    from edgebench.boards.registry import get_profile

    model = DIGITS_INT8
    result, run_dir = run_soak(model, get_profile("sim-pi5"), SoakOptions(rate_hz=20.0, window_s=30.0,
                                                                          max_duration_s=120.0, until="max"),
                               runs_root=tmp_path)
    w = result.power.window
    est = battery_estimate(str(run_dir), tmp_path, "18650", None, None, 0.8, 0.85, None, None, None, None, None,
                           None, None, None)
    assert est.load["avg_power_w"] == pytest.approx(w.avg_power_w) and est.load["label"] == "simulated"
    assert 2.5 < w.avg_power_w < 2.5 + 6.5 * 0.2           # idle + a tenth-ish of the dynamic power at 20/s
    text = "\n".join(battery_lines(est))
    win = result.power.window
    assert (f"the average over the soak's {win.window} window ({win.t_from_s:.0f}-{win.t_to_s:.0f} s "
            "after the load started) at 20/s") in text
    assert win.t_to_s - win.t_from_s == pytest.approx(30.0, abs=1.0)
    assert f"soak run {result.run_id}" in text and "[simulated:" in text
    with pytest.raises(UsageError, match="its power is the average at its own load"):
        battery_estimate(str(run_dir), tmp_path, "18650", None, None, 0.8, 0.85, None, None, None, "1/s", None,
                         None, None, None)
    with pytest.raises(UsageError, match="do not apply"):
        battery_estimate(str(run_dir), tmp_path, "18650", None, None, 0.8, 0.85, None, None, None, None, None,
                         0.1, None, None)


def test_a_sweep_point_is_picked_by_its_duty_and_named(tmp_path):
    points = [{"id": f"p0{i}", "name": f"duty {d:g}", "duty": d, "requested_rate_hz": None, "steady": True,
               "throughput_per_s": 200 * d, "realized_duty": d, "model": {"name": "kws"},
               "energy": {"avg_power_w": 2.5 + 6.5 * d, "per_inference_j": (2.5 + 6.5 * d) / (200 * d),
                          "rate_hz": 200 * d, "label": "simulated"}}
              for i, d in enumerate((0.1, 1.0), start=1)]
    result = RunResult(run_id="sw", created_utc="2026-01-01T00:00:00+00:00", kind="sweep", status="complete",
                       label="simulated", model={"name": "kws"}, board={"name": "sim-pi5"},
                       power={"measured": False, "label": "simulated", "boundary": "the simulated board"},
                       extra={"axis": "duty", "points": points})
    run_dir = store.new_run_dir(tmp_path, "kws-sweep", "sim-pi5")
    store.write_result(run_dir, result)
    est = battery_estimate(str(run_dir), tmp_path, "2xAA", None, None, 0.8, 0.85, None, None, None, None, 0.1,
                           None, None, None)
    assert est.load["avg_power_w"] == pytest.approx(3.15) and est.load["detail"]["source"]["point"] == "p01"
    assert "sweep point p01 (duty 0.1), its sustained window" in "\n".join(battery_lines(est))
    with pytest.raises(UsageError, match="has 2 points with energy: say which"):
        battery_estimate(str(run_dir), tmp_path, "2xAA", None, None, 0.8, 0.85, None, None, None, None, None,
                         None, None, None)


def test_an_estimate_from_a_real_energy_run_names_its_instrument(tmp_path):
    """The meter of the run (power.instrument, what `energy` writes) is named in the estimate's source,
    its --json and its text; a soak's or sweep's window names how its power is known (power.method)
    apart from the instrument it never had."""
    model = DIGITS_INT8
    res = CliRunner().invoke(app, ["energy", str(model), "--board", "sim-pi5", "--rate", "20", "--idle-s", "0.5",
                                   "--min-time", "1", "--max-time", "2", "--runs-dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    (run_dir,) = store.find_runs(tmp_path)
    power = store.read_result(run_dir).power
    assert power.instrument                                    # what the energy writer sets
    est = battery_estimate(str(run_dir), tmp_path, "18650", None, None, 0.8, 0.85, None, None, None, None, None,
                           None, None, None)
    assert est.load["detail"]["source"]["instrument"] == power.instrument
    assert f"meter: {power.instrument}" in "\n".join(battery_lines(est))
    shown = CliRunner().invoke(app, ["battery", str(run_dir), "--cell", "18650", "--json", "--runs-dir",
                                     str(tmp_path)])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["load"]["detail"]["source"]["instrument"] == power.instrument
    # a window with no instrument: the instrument stays None, the method is named as the method
    sweep = RunResult(run_id="sw", created_utc="2026-01-01T00:00:00+00:00", kind="sweep", status="complete",
                      label="simulated", model={"name": "kws"}, board={"name": "sim-pi5"},
                      power={"measured": False, "label": "simulated", "boundary": "the simulated board",
                             "instrument": None, "method": "the simulated board's energy counter"},
                      extra={"axis": "duty", "points": [
                          {"id": "p01", "name": "duty 1", "duty": 1.0, "steady": True, "throughput_per_s": 200,
                           "realized_duty": 1.0, "model": {"name": "kws"},
                           "energy": {"avg_power_w": 9.0, "rate_hz": 200, "label": "simulated"}}]})
    figs = figures_from_run(sweep)
    assert figs["instrument"] is None and figs["method"] == "the simulated board's energy counter"
