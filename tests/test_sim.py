"""The simulated board: RC physics, DVFS with hysteresis, determinism, the client interface,
labels ('simulated' everywhere, never mixed with measured) and the profile block."""
from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import DIGITS_INT8

from edgebench import errors
from edgebench.boards.profile import BoardProfile
from edgebench.boards.registry import get_profile
from edgebench.modelfile import read_model
from edgebench.sim import SimClient, SimParams
from edgebench.sim.physics import SimBoard
from edgebench.telemetry import capture

ROOT = Path(__file__).resolve().parents[1]
NO_THROTTLE = dict(trip_c=500.0, critical_c=600.0, sensor_noise_c=0.0)


def client_for(params: SimParams, seed=None) -> SimClient:
    c = SimClient(params, seed=seed)
    info = c.load(c.ensure_model(read_model(DIGITS_INT8)))
    c.set_inputs(np.zeros([8] + info["inputs"][0]["shape"][1:], np.float32))
    return c


# -- physics -------------------------------------------------------------------------------
def test_rc_node_reaches_63_percent_at_tau():
    p = SimParams(ambient_c=25.0, initial_temp_c=25.0, r_th_c_per_w=8.0, c_th_j_per_c=15.0, **NO_THROTTLE)
    b = SimBoard(p)
    power = p.power_w(p.f_max, 1.0)
    final = p.ambient_c + power * p.r_th_c_per_w          # ambient + P R
    b.advance(int(p.tau_s * 1e9), busy=1.0)               # tau = R C = 120 s
    assert p.tau_s == 120.0
    assert b.temp_c == pytest.approx(25.0 + (1 - math.exp(-1)) * (final - 25.0), rel=1e-9)
    b.advance(int(9 * p.tau_s * 1e9), busy=1.0)
    assert b.temp_c == pytest.approx(final, abs=0.01)
    assert b.energy_j == pytest.approx(power * 10 * p.tau_s, rel=1e-9)


def test_63_percent_point_through_the_client():
    p = SimParams(ambient_c=20.0, initial_temp_c=20.0, **NO_THROTTLE)
    c = client_for(p)
    final = p.steady_temp_c(p.power_w(p.f_max, 1.0))
    c.run("single-stream", 1_000_000, max_time_s=p.tau_s)  # continuous load for tau (no telemetry: 100% busy)
    got = c.thermal()["temps_c"]["cpu-thermal"]
    assert (got - 20.0) / (final - 20.0) == pytest.approx(1 - math.exp(-1), abs=0.002)


def test_power_and_latency_models():
    p = SimParams()
    assert p.power_w(p.f_max, 0.0) == p.idle_power_w
    assert p.power_w(p.f_max, 1.0) == pytest.approx(p.idle_power_w + p.dynamic_power_w)
    f = p.freqs_hz[0]
    rel = f * p.volt(f) ** 2 / (p.f_max * p.max_volt_v ** 2)
    assert p.power_w(f, 1.0) == pytest.approx(p.idle_power_w + p.dynamic_power_w * rel)
    assert p.latency_at(p.f_max) == pytest.approx(p.latency_s)
    assert p.latency_at(p.f_max / 2) == pytest.approx(p.fixed_latency_s + 2 * (p.latency_s - p.fixed_latency_s))
    assert p.start_temp_c() == p.ambient_c + p.idle_power_w * p.r_th_c_per_w


def test_throttles_at_the_trip_point_with_hysteresis():
    p = SimParams(sensor_noise_c=0.0)   # trip 80 °C, hysteresis 2 °C, poll 0.25 s
    b = SimBoard(p)
    step = b.poll_ns
    first_drop = None
    end = b.now_ns + 600 * 10**9
    while b.now_ns < end:                       # 10 minutes of full load
        b.advance(step, 1.0)
        if first_drop is None and b.level < b.top:
            first_drop = b.temp_c
    assert first_drop is not None and p.trip_c <= first_drop < p.trip_c + 0.2
    assert b.flags_now["throttled"] and b.flags_occurred["throttled"]
    assert b.throttled_raw() & 0x4 and b.throttled_raw() & 0x40000
    assert p.trip_c - p.hysteresis_c <= b.temp_c < p.trip_c + 1.0   # held near the trip, not at 115 °C
    throttled_level = b.level
    # idle: the cap comes back up only once the temperature is below trip - hysteresis
    raised_at = None
    while b.level == throttled_level:
        b.advance(step, 0.0)
        if b.level > throttled_level:
            raised_at = b.temp_c
    assert raised_at < p.trip_c - p.hysteresis_c
    assert raised_at > p.trip_c - p.hysteresis_c - 0.5
    while b.level < b.top:
        b.advance(step, 0.0)
    assert not b.flags_now["throttled"] and b.flags_occurred["throttled"]   # "occurred" is sticky


def test_critical_temperature_drops_to_the_lowest_clock():
    p = SimParams(initial_temp_c=90.0, sensor_noise_c=0.0)
    b = SimBoard(p)
    b.advance(b.poll_ns, 1.0)
    assert b.freq_hz == p.freqs_hz[0]


def test_deterministic_under_seed():
    def trace(seed):
        c = client_for(SimParams(), seed=seed)
        header, body = c.request("run", mode="single-stream", count=1_000_000, max_time_s=90.0,
                                 telemetry={"interval_s": 0.5})
        return capture._decode(body)

    a, b, other = trace(3), trace(3), trace(4)
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    assert not np.array_equal(a["e2e_ns"][:100], other["e2e_ns"][:100])


def test_simulated_time_does_not_sleep():
    c = client_for(SimParams())
    t0 = time.monotonic()
    header, arrays = c.run("fixed-rate", 1_000_000, max_time_s=1200.0, rate_hz=100.0)
    assert time.monotonic() - t0 < 10.0
    assert header["n"] == 120_001 and header["elapsed_s"] == pytest.approx(1200.0, abs=0.1)
    assert np.diff(arrays["scheduled_ns"]).tolist()[:3] == [10_000_000] * 3


def test_run_arrays_like_the_agent():
    c = client_for(SimParams(noise_cv=0.0))
    header, a = c.run("single-stream", 20, 10.0, start_index=5)
    assert header["n"] == 20 and header["clock"].startswith("perf_counter_ns")
    assert np.all(a["e2e_ns"] == a["prep_ns"] + a["set_ns"] + a["invoke_ns"] + a["get_ns"])
    assert np.all(np.diff(a["t_start_ns"]) == a["e2e_ns"][:-1])    # back to back on the simulated clock
    assert a["e2e_ns"][0] == 5_000_000 and a["input_index"].tolist()[:4] == [5, 6, 7, 0]
    header, a = c.run("single-stream", 1_000_000, 0.5)
    assert a["t_start_ns"][-1] + a["e2e_ns"][-1] >= a["t_start_ns"][0] + 0.5e9   # stops after max_time_s
    header, a = c.run("fixed-rate", 1_000_000, 0.5, rate_hz=50)
    assert header["n"] == 26 and np.all(a["t_start_ns"] == a["scheduled_ns"])


def test_fixed_rate_beyond_capacity_is_late_not_faster():
    c = client_for(SimParams(noise_cv=0.0))
    header, a = c.run("fixed-rate", 1_000_000, 1.0, rate_hz=400.0)   # 2.5 ms period, 5 ms inferences
    late = a["t_start_ns"] - a["scheduled_ns"]
    assert np.all(late >= 0) and late[-1] > 0.4e9
    assert np.all(np.diff(a["t_start_ns"]) >= a["e2e_ns"][:-1])


def test_telemetry_channels_look_like_a_pi():
    c = client_for(SimParams())
    header, body = c.request("telemetry", interval_s=0.5, duration_s=2.0)
    assert header["n"] == 5 and header["static"]["thermal_zone0"]["trips"][0]["temp_c"] == 80.0
    frame = capture.frame_from_arrays(header, capture._decode(body))
    assert frame["thermal_zone0.temp_c"].iloc[0] == pytest.approx(50.0, abs=0.5)
    assert frame["policy0.cur_freq_hz"].iloc[0] == 1.5e9     # idle: the CPU sits at its lowest clock
    assert frame["policy0.governor"].iloc[0] == "schedutil"
    with pytest.raises(errors.UsageError, match=r"in \[0.1, 60\]") as exc:
        c.request("telemetry", interval_s=0.01)
    assert exc.value.hint == "at most 10 samples per second"


def test_hello_says_simulated_and_infer_is_refused():
    c = client_for(SimParams())
    hello = c.hello()
    assert hello["timing"] == "simulated" and hello["protocol"] == 1 and "telemetry" in hello["features"]
    with pytest.raises(errors.UsageError, match="computes no outputs"):
        c.infer(np.zeros((1, 8, 8, 1), np.float32))
    with pytest.raises(errors.DataError, match="does not fit"):
        c.set_inputs(np.zeros((2, 3, 3, 1), np.float32))


# -- labels -----------------------------------------------------------------------------------
def test_bench_on_the_simulated_board_is_labelled_simulated(tmp_path):
    from edgebench.bench.latency import BenchOptions, run_bench

    result, run_dir = run_bench(DIGITS_INT8, get_profile("sim-pi5"), BenchOptions(min_samples=50, min_time_s=0.5,
                                                                           max_time_s=3.0), runs_root=tmp_path)
    assert result.label == "simulated"
    assert result.latency["e2e"].label == "simulated" and result.throughput.label == "simulated"
    assert result.cold_start.label == "simulated"
    assert ", simulated, " in result.extra.claim and ", measured, " not in result.extra.claim


def test_simulated_and_measured_are_never_mixed():
    from edgebench.results.model import RunResult, refuse_mixed_labels

    sim = RunResult(run_id="a", created_utc="x", label="simulated")
    real = RunResult(run_id="b", created_utc="x", label="measured")
    assert refuse_mixed_labels(sim, dataclasses.replace(sim, run_id="c")) == "simulated"
    with pytest.raises(errors.ResultError, match="refusing to compare measured with simulated"):
        refuse_mixed_labels(real, sim)


# -- the profile -------------------------------------------------------------------------------
def test_sim_profile_and_connect():
    from edgebench.boards.connect import open_client

    p = get_profile("sim-pi5")
    assert p.transport.type == "sim" and p.simulated.tau_s == 100.0
    assert BoardProfile.from_dict(p.to_dict()) == p
    client = open_client(p)
    assert isinstance(client, SimClient) and client.params == p.simulated
    with pytest.raises(errors.UsageError, match="simulated: --url does not apply"):
        open_client(p, url="pi@10.0.0.7")


def _profile(**over):
    d = get_profile("sim-pi5").to_dict()
    d.pop("origin")
    d.update(over)
    return d


@pytest.mark.parametrize("over,needle", [
    ({"simulated": {"r_th_c_per_w": -1}}, "simulated.r_th_c_per_w: expected a positive number, got -1"),
    ({"simulated": {"tau": 5}}, "simulated.tau: unknown key"),
    ({"simulated": {"freqs_hz": [2e9, 1e9]}}, "simulated.freqs_hz: expected distinct frequencies in increasing"),
    ({"simulated": {"critical_c": 70}}, "simulated.critical_c: must be at least trip_c"),
    ({"transport": {"type": "local"}}, "simulated: only allowed with transport type sim"),
    ({"transport": {"type": "sim", "url": "x"}}, "transport.url: not allowed for transport type sim"),
    ({"kind": "mcu", "runtimes": ["edgebench_firmware"]}, "transport.type: expected serial for kind mcu"),
])
def test_profile_validation(over, needle):
    with pytest.raises(errors.ProfileError) as exc:
        BoardProfile.from_dict(_profile(**over), "boards/x.yaml")
    assert needle in str(exc.value)


def test_sim_transport_without_block_uses_defaults():
    d = _profile()
    d.pop("simulated")
    assert BoardProfile.from_dict(d).simulated == SimParams()
