"""On-device telemetry: readers against fake sysfs trees and a fake vcgencmd with the real
layouts, the agent protocol additions, and the host-side decoding and analysis."""
from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import DIGITS_INT8
from fakes.sysfs import VCGENCMD_FAILING, fake_vcgencmd, write

from edgebench import errors
from edgebench.agent import telemetry as tm
from edgebench.agent.protocol import UsageFailure
from edgebench.modelfile import read_model
from edgebench.telemetry import analysis, capture

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def pi5(tmp_path):
    """Raspberry Pi 5, Raspberry Pi OS Bookworm (kernel 6.6): the Linux trips only drive the fan
    and the critical shutdown; clock throttling at 80-85 °C is the firmware's (see vcgencmd)."""
    root = tmp_path / "pi5"
    z = "sys/class/thermal/thermal_zone0/"
    write(root, z + "type", "cpu-thermal")
    write(root, z + "temp", 61450)
    for i, (temp, kind) in enumerate([(110000, "critical"), (50000, "active"), (60000, "active"),
                                      (67500, "active"), (75000, "active")]):
        write(root, z + f"trip_point_{i}_temp", temp)
        write(root, z + f"trip_point_{i}_type", kind)
        write(root, z + f"trip_point_{i}_hyst", 0 if kind == "critical" else 2000)
    p = "sys/devices/system/cpu/cpufreq/policy0/"
    for name, value in [("scaling_cur_freq", 2400000), ("scaling_min_freq", 1500000),
                        ("scaling_max_freq", 2400000), ("cpuinfo_min_freq", 1500000),
                        ("cpuinfo_max_freq", 2400000), ("scaling_governor", "ondemand"),
                        ("affected_cpus", "0 1 2 3"),
                        ("scaling_available_frequencies",
                         " ".join(str(f) for f in range(1500000, 2400001, 100000)) + " ")]:
        write(root, p + name, value)
    write(root, "sys/class/hwmon/hwmon0/name", "cpu_thermal")
    write(root, "sys/class/hwmon/hwmon0/temp1_input", 61450)
    write(root, "sys/class/hwmon/hwmon1/name", "rpi_volt")
    write(root, "sys/class/hwmon/hwmon1/in0_lcrit_alarm", 0)   # not an _input: not a sensor channel
    write(root, "sys/class/hwmon/hwmon2/name", "pwmfan")
    write(root, "sys/class/hwmon/hwmon2/fan1_input", 2950)      # fans are not sampled
    return root


@pytest.fixture
def laptop(tmp_path):
    """x86 laptop: ACPI and package zones, intel_pstate (no frequency table), coretemp with labels,
    an INA219 power monitor (hwmon units: mV, mA, µW) and an old driver keeping its files in device/."""
    root = tmp_path / "laptop"
    for i, (kind, temp) in enumerate([("acpitz", 45000), ("x86_pkg_temp", 52000)]):
        write(root, f"sys/class/thermal/thermal_zone{i}/type", kind)
        write(root, f"sys/class/thermal/thermal_zone{i}/temp", temp)
    write(root, "sys/class/thermal/thermal_zone0/trip_point_0_temp", 105000)
    write(root, "sys/class/thermal/thermal_zone0/trip_point_0_type", "critical")
    for n in range(2):
        p = f"sys/devices/system/cpu/cpufreq/policy{n}/"
        for name, value in [("scaling_cur_freq", 3100000 - n * 100000), ("scaling_min_freq", 400000),
                            ("scaling_max_freq", 4200000), ("cpuinfo_max_freq", 4200000),
                            ("cpuinfo_min_freq", 400000), ("scaling_governor", "powersave"),
                            ("affected_cpus", str(n))]:
            write(root, p + name, value)
    h = "sys/class/hwmon/"
    write(root, h + "hwmon3/name", "coretemp")
    for i, (label, temp) in enumerate([("Package id 0", 52000), ("Core 0", 50000), ("Core 1", 51000)], 1):
        write(root, h + f"hwmon3/temp{i}_label", label)
        write(root, h + f"hwmon3/temp{i}_input", temp)
        write(root, h + f"hwmon3/temp{i}_crit", 100000)
    write(root, h + "hwmon6/name", "ina219")
    for name, value in [("in0_input", 5), ("in1_input", 5104), ("curr1_input", 850), ("power1_input", 4335000)]:
        write(root, h + "hwmon6/" + name, value)
    write(root, h + "hwmon7/device/name", "lm75")
    write(root, h + "hwmon7/device/temp1_input", 38500)
    return root


@pytest.fixture
def coral(tmp_path):
    """Coral Dev Board: SoC zone with a passive trip, and the Edge TPU's gasket/apex driver."""
    root = tmp_path / "coral"
    z = "sys/class/thermal/thermal_zone0/"
    write(root, z + "type", "cpu-thermal")
    write(root, z + "temp", 47000)
    write(root, z + "trip_point_0_temp", 85000)
    write(root, z + "trip_point_0_type", "passive")
    write(root, z + "trip_point_1_temp", 95000)
    write(root, z + "trip_point_1_type", "critical")
    a = "sys/class/apex/apex_0/"
    for name, value in [("temp", 41250), ("trip_point0_temp", 85000), ("trip_point1_temp", 90000),
                        ("trip_point2_temp", 95000), ("hw_temp_warn1", 100000), ("hw_temp_warn2", 100000),
                        ("hw_temp_warn1_en", 0), ("hw_temp_warn2_en", 1), ("temp_poll_interval", 5000)]:
        write(root, a + name, value)
    return root


@pytest.fixture
def vcgencmd(tmp_path, monkeypatch):
    """A vcgencmd that answers like Raspberry Pi firmware (Pi 5 prints frequency(0)=...), counting calls."""
    calls = tmp_path / "vcgencmd.calls"
    fake_vcgencmd(monkeypatch, tmp_path / "bin",
                  'echo "$*" >> ' + str(calls) + '\ncase "$1" in\n'
                  "  measure_temp) echo \"temp=81.7'C\" ;;\n"
                  "  measure_clock) echo 'frequency(0)=1500004352' ;;\n"
                  "  get_throttled) echo 'throttled=0x80008' ;;\n"
                  "  *) echo 'error=1 error_msg=\"Command not registered\"'; exit 2 ;;\nesac\n")
    return calls


def no_vcgencmd(monkeypatch, tmp_path):
    empty = tmp_path / "nobin"
    empty.mkdir(exist_ok=True)
    monkeypatch.setenv("PATH", str(empty))


def one(sampler) -> dict:
    sampler.sample()
    summary, arrays = sampler.take()
    assert summary["n"] == 1
    row = dict(zip(summary["channels"], arrays["tm_values"][0]))
    row.update(zip(summary["text_channels"], arrays["tm_text"][0]))
    return row


# -- readers on fake trees ---------------------------------------------------------------
def test_pi5_channels_units_and_trip_points(pi5, tmp_path, monkeypatch):
    no_vcgencmd(monkeypatch, tmp_path)
    s = tm.Sampler(root=str(pi5))
    names = [c["name"] for c in s.channels]
    assert names == ["thermal_zone0.temp_c", "policy0.cur_freq_hz", "policy0.min_freq_hz", "policy0.max_freq_hz",
                     "hwmon0.temp1.temp_c"]
    assert s.channels[0]["label"] == "cpu-thermal" and s.channels[-1]["label"] == "cpu_thermal: temp1"
    row = one(s)
    assert row["thermal_zone0.temp_c"] == pytest.approx(61.45) and row["policy0.cur_freq_hz"] == 2.4e9
    assert row["policy0.governor"] == "ondemand"
    static = s.static
    assert static["thermal_zone0"]["trips"][0] == {"index": 0, "type": "critical", "temp_c": 110.0, "hyst_c": 0.0}
    assert [t["temp_c"] for t in static["thermal_zone0"]["trips"][1:]] == [50.0, 60.0, 67.5, 75.0]
    assert static["policy0"]["available_freqs_hz"][0] == 1_500_000_000 and static["policy0"]["cpus"] == [0, 1, 2, 3]
    assert s.found == {"thermal_zone": 1, "cpufreq": 4, "hwmon": 1, "vcgencmd": 0, "apex": 0}
    s.close()


def test_values_are_reread_each_sample(pi5, tmp_path, monkeypatch):
    no_vcgencmd(monkeypatch, tmp_path)
    s = tm.Sampler(root=str(pi5), sources=["thermal_zone", "cpufreq"])
    assert one(s)["thermal_zone0.temp_c"] == pytest.approx(61.45)
    write(pi5, "sys/class/thermal/thermal_zone0/temp", 83125)          # same file, new value
    write(pi5, "sys/devices/system/cpu/cpufreq/policy0/scaling_max_freq", 1800000)
    row = one(s)
    assert row["thermal_zone0.temp_c"] == pytest.approx(83.125) and row["policy0.max_freq_hz"] == 1.8e9
    write(pi5, "sys/class/thermal/thermal_zone0/temp", "garbage")    # unreadable -> NaN, never a guess
    assert math.isnan(one(s)["thermal_zone0.temp_c"])
    s.close()


def test_laptop_hwmon_labels_units_and_old_layout(laptop, tmp_path, monkeypatch):
    no_vcgencmd(monkeypatch, tmp_path)
    s = tm.Sampler(root=str(laptop), sources=["hwmon"])
    labels = {c["name"]: c["label"] for c in s.channels}
    assert labels["hwmon3.temp1.temp_c"] == "coretemp: Package id 0"
    assert labels["hwmon7.temp1.temp_c"] == "lm75: temp1"                # files under device/
    row = one(s)
    assert row["hwmon3.temp1.temp_c"] == 52.0 and row["hwmon3.temp3.temp_c"] == 51.0
    assert row["hwmon6.in1.volt_v"] == pytest.approx(5.104) and row["hwmon6.in0.volt_v"] == pytest.approx(0.005)
    assert row["hwmon6.curr1.curr_a"] == pytest.approx(0.85) and row["hwmon6.power1.power_w"] == pytest.approx(4.335)
    units = {c["name"]: c["unit"] for c in s.channels}
    assert units["hwmon6.power1.power_w"] == "W" and units["hwmon6.curr1.curr_a"] == "A"
    s.close()
    s = tm.Sampler(root=str(laptop), sources=["cpufreq"])
    row = one(s)
    assert row["policy1.cur_freq_hz"] == 3.0e9 and "available_freqs_hz" not in s.static["policy0"]  # intel_pstate
    s.close()


def test_coral_apex_temperature_and_trip_points(coral, tmp_path, monkeypatch):
    no_vcgencmd(monkeypatch, tmp_path)
    s = tm.Sampler(root=str(coral))
    row = one(s)
    assert row["apex_0.temp_c"] == pytest.approx(41.25)
    assert s.static["apex_0"] == {"source": "apex", "trip_point0_temp_c": 85.0, "trip_point1_temp_c": 90.0,
                                  "trip_point2_temp_c": 95.0, "hw_temp_warn1_c": 100.0,
                                  "hw_temp_warn2_c": 100.0, "hw_temp_warn1_en": False,
                                  "hw_temp_warn2_en": True}
    assert s.static["thermal_zone0"]["trips"][0]["type"] == "passive"
    s.close()


def test_vcgencmd_channels_decoded_and_rate_limited(pi5, vcgencmd):
    s = tm.Sampler(root=str(pi5), sources=["vcgencmd"], interval_s=0.1, vcgencmd_interval_s=5.0)
    s.sample()
    s.sample()  # within vcgencmd's interval: not called again, NaN
    summary, arrays = s.take()
    assert summary["channels"] == ["vcgencmd.temp_c", "vcgencmd.arm_freq_hz", "vcgencmd.throttled"]
    first, second = arrays["tm_values"]
    assert first.tolist() == [81.7, 1500004352.0, float(0x80008)]
    assert np.isnan(second).all()
    assert vcgencmd.read_text().split("\n")[:3] == ["measure_temp", "measure_clock arm", "get_throttled"]
    assert len(vcgencmd.read_text().split()) == 4  # three commands, once
    assert (arrays["tm_cost_ns"] > 0).all() and summary["cost_ns"] == int(arrays["tm_cost_ns"].sum())


def test_failing_vcgencmd_gives_nan(tmp_path, monkeypatch):
    fake_vcgencmd(monkeypatch, tmp_path / "bin", VCGENCMD_FAILING, keep_path=False)
    s = tm.Sampler(root=str(tmp_path), sources=["vcgencmd"])
    assert all(math.isnan(v) for v in one(s).values())


@pytest.mark.parametrize("kw", [{"interval_s": 0.01}, {"interval_s": 0}, {"interval_s": "fast"},
                                {"sources": ["thermal", "cpufreq"]}])
def test_rate_is_bounded_and_sources_checked(kw, tmp_path):
    with pytest.raises(UsageFailure):
        tm.Sampler(root=str(tmp_path), **kw)


def test_idle_sampling_keeps_the_interval(pi5, tmp_path, monkeypatch):
    no_vcgencmd(monkeypatch, tmp_path)
    s = tm.Sampler(root=str(pi5), sources=["thermal_zone"], interval_s=0.1)
    s.idle(0.55)
    summary, arrays = s.take()
    assert 5 <= summary["n"] <= 7
    assert np.all(np.diff(arrays["tm_t_ns"]) >= 100_000_000)


# -- the agent: protocol additions ---------------------------------------------------------
@pytest.fixture
def agent(pi5, vcgencmd, tmp_path):
    from edgebench.transport.client import AgentClient
    from edgebench.transport.local import LocalTransport

    transport = LocalTransport(cache_dir=str(tmp_path / "cache"),
                               env={"EDGEBENCH_SYSFS_ROOT": str(pi5), "PATH": os.environ["PATH"]})
    client = AgentClient(transport.open(), transport.describe(), timeout_s=60)
    sha = client.ensure_model(read_model(DIGITS_INT8))
    info = client.load(sha)
    x = np.random.default_rng(0).uniform(0, 1, [16] + info["inputs"][0]["shape"][1:]).astype(np.float32)
    client.set_inputs(x)
    yield client
    client.close()


def _between_inferences(arrays: dict) -> None:
    t, e2e = arrays["t_start_ns"], arrays["e2e_ns"]
    for ts, cost in zip(arrays["tm_t_ns"], arrays["tm_cost_ns"]):
        inside = (t < ts + cost) & (ts < t + e2e)
        assert not inside.any(), "a telemetry sample overlaps an inference"


def test_agent_hello_and_telemetry_op(agent):
    hello = agent.hello()
    assert "telemetry" in hello["features"] and hello["telemetry_max_hz"] == 10
    header, body = agent.request("telemetry", interval_s=0.1, duration_s=0.35)
    assert header["clock"] == "perf_counter_ns" and 3 <= header["n"] <= 5
    names = [c["name"] for c in header["channels"]]
    assert "thermal_zone0.temp_c" in names and "vcgencmd.throttled" in names
    frame = capture.frame_from_arrays(header, capture._decode(body))
    assert frame["thermal_zone0.temp_c"].iloc[0] == pytest.approx(61.45)
    assert frame["policy0.governor"].iloc[0] == "ondemand"


@pytest.mark.parametrize("mode,rate", [("single-stream", None), ("fixed-rate", 400.0), ("offline", None)])
def test_run_samples_between_inferences_on_the_device_clock(agent, mode, rate):
    header, body = agent.request("run", mode=mode, count=1_000_000, max_time_s=0.6, rate_hz=rate,
                                 telemetry={"interval_s": 0.1, "sources": ["thermal_zone", "cpufreq"]},
                                 timeout_s=30)
    a = capture._decode(body)
    t = header["telemetry"]
    assert t["channels"] == ["thermal_zone0.temp_c", "policy0.cur_freq_hz", "policy0.min_freq_hz",
                             "policy0.max_freq_hz"]
    assert 5 <= t["n"] <= 8, t["n"]
    assert np.all(np.diff(a["tm_t_ns"]) >= 100_000_000)      # never faster than the interval
    assert a["tm_t_ns"][0] <= a["t_start_ns"][0] + 200_000_000
    _between_inferences(a)
    assert t["cost_ns"] == int(a["tm_cost_ns"].sum()) and t["cost_ns"] < 0.05 * 0.6e9
    if mode == "fixed-rate":
        assert np.diff(a["scheduled_ns"]).tolist() == [2_500_000] * (len(a["scheduled_ns"]) - 1)


def test_run_without_telemetry_has_no_telemetry(agent):
    header, a = agent.run("single-stream", 50, 5.0)
    assert "telemetry" not in header and not any(k.startswith("tm_") for k in a)


def test_sampler_schedule_runs_on_across_requests(agent):
    spec = {"interval_s": 0.2, "sources": ["thermal_zone"]}
    times = []
    for _ in range(4):
        _, body = agent.request("run", mode="single-stream", count=1_000_000, max_time_s=0.15, telemetry=spec)
        times += capture._decode(body)["tm_t_ns"].tolist()
    assert 2 <= len(times) <= 4 and np.all(np.diff(times) >= 200_000_000)


def test_agent_rejects_a_rate_above_10_hz(agent):
    with pytest.raises(errors.UsageError, match=r"in \[0.1, 60\]") as exc:
        agent.request("run", mode="single-stream", count=10, max_time_s=1.0, telemetry={"interval_s": 0.05})
    assert exc.value.hint == "at most 10 samples per second"
    with pytest.raises(errors.UsageError, match="unknown telemetry option"):
        agent.request("run", mode="single-stream", count=10, max_time_s=1.0, telemetry={"rate": 2})


# -- host side ---------------------------------------------------------------------------
def test_spec_bounds_the_rate():
    assert capture.TelemetrySpec(rate_hz=2).to_request() == {"interval_s": 0.5, "sources": None}
    with pytest.raises(errors.UsageError, match="at most|in \\(0, 10\\]"):
        capture.TelemetrySpec(rate_hz=20)


def test_snapshot_fallback_frame():
    snap = {"available": True, "temps_c": {"die": 41.5}, "freqs_hz": {"cpu": 64e6},
            "throttled": {"raw": "0x4"}, "clock_ns": 5}
    f = capture.frame_from_snapshot(snap, 123)
    assert f.to_dict("records") == [{"t_ns": 123, "cost_ns": 0, "thermal.die.temp_c": 41.5,
                                     "thermal.cpu.freq_hz": 64e6, "vcgencmd.throttled": 4.0}]
    assert capture.frame_from_snapshot({"available": False}, 1).columns.tolist() == ["t_ns", "cost_ns"]


def _frame(**cols):
    n = len(next(iter(cols.values())))
    return pd.DataFrame({"t_ns": np.arange(n, dtype=np.int64) * 1_000_000_000, "cost_ns": np.zeros(n, np.int64),
                         **cols})


def test_primary_temperature_prefers_soc_sources():
    f = _frame(**{"thermal_zone0.temp_c": [50.0, 60.0], "apex_0.temp_c": [55.0, 58.0],
                  "hwmon5.temp1.temp_c": [90.0, 90.0]})  # an NVMe drive is not the SoC
    assert analysis.primary_temp(f).tolist() == [55.0, 60.0]
    assert analysis.primary_temp(_frame(**{"hwmon3.temp1.temp_c": [40.0, np.nan]})).tolist()[0] == 40.0


def test_time_at_frequency_and_firmware_clock():
    f = _frame(**{"policy0.cur_freq_hz": [2.4e9] * 6,
                  "vcgencmd.arm_freq_hz": [2.4e9, np.nan, 1.5e9, np.nan, np.nan, 2.4e9]})
    what, freq = analysis.cpu_freq(f)
    assert what == "vcgencmd measure_clock arm" and freq.tolist() == [2.4e9, 2.4e9, 1.5e9, 1.5e9, 1.5e9, 2.4e9]
    tat = analysis.time_at_frequency(f["t_ns"], freq, t_end_ns=6_000_000_000)
    assert tat == [{"freq_hz": 2.4e9, "time_s": 3.0, "fraction": 0.5},
                   {"freq_hz": 1.5e9, "time_s": 3.0, "fraction": 0.5}]
    ev = analysis.throttle_events(f, {}, 0, 6_000_000_000)
    assert ev["causes"]["firmware_clock"] == {"events": 1, "first_s": 2.0, "time_s": 3.0}
    assert ev["first_throttle_s"] == 2.0


def test_throttle_events_by_cause():
    raw = [0x0, 0x4, 0x40004, 0x40000, 0x40008 | 0x80000, 0xC0000]  # throttled, then soft temp limit
    f = _frame(**{"vcgencmd.throttled": [float(v) for v in raw],
                  "policy0.max_freq_hz": [2.4e9, 2.4e9, 2.0e9, 2.0e9, 2.4e9, 2.4e9],
                  "thermal_zone0.temp_c": [70.0, 86.0, 87.0, 84.0, 80.0, 79.0]})
    static = {"thermal_zone0": {"source": "thermal_zone", "trips": [{"type": "passive", "temp_c": 85.0}]}}
    ev = analysis.throttle_events(f, static, 0, 6_000_000_000)
    c = ev["causes"]
    assert c["throttled"] == {"events": 1, "first_s": 1.0, "time_s": 2.0}
    assert c["soft_temp_limit"] == {"events": 1, "first_s": 4.0, "time_s": 1.0}
    assert c["under_voltage"]["events"] == 0
    assert c["cpufreq_cap:policy0"] == {"events": 1, "first_s": 2.0, "time_s": 2.0}
    assert ev["trips"]["thermal_zone0:passive@85°C"] == {"events": 1, "first_s": 1.0, "time_s": 2.0}
    assert ev["first_throttle_s"] == 1.0 and ev["occurred_unseen"] == []


def test_fixed_rate_schedule_continues_across_requests(agent):
    """``start_ns`` (protocol addition): chunks of one schedule, as a soak at a fixed rate sends them."""
    _, body = agent.request("run", mode="fixed-rate", count=20, max_time_s=2.0, rate_hz=100.0)
    first = capture._decode(body)
    nxt = int(first["scheduled_ns"][0]) + 20 * 10_000_000
    _, body = agent.request("run", mode="fixed-rate", count=20, max_time_s=2.0, rate_hz=100.0, start_ns=nxt,
                            telemetry={"interval_s": 0.1})
    second = capture._decode(body)
    sched = np.concatenate([first["scheduled_ns"], second["scheduled_ns"]])
    assert np.diff(sched).tolist() == [10_000_000] * 39
    assert np.median(second["t_start_ns"] - second["scheduled_ns"]) < 1_000_000
    with pytest.raises(errors.UsageError, match="fixed-rate mode only"):
        agent.request("run", mode="single-stream", count=5, max_time_s=1.0, start_ns=nxt)
