"""`edgebench profile`: per-layer time on a Linux board (isolated operators, a real local agent and
real LiteRT), on a microcontroller (the real posix firmware over a pty; KWS and ResNet-8 on the
real firmware under qemu-system-arm), stored as a run of kind profile, compared layer by layer."""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import DIGITS_INT8

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import MLPERF_DIR, require_file, require_tool  # noqa: E402

from edgebench.bench.profile import ProfileOptions, run_profile  # noqa: E402
from edgebench.boards.registry import get_profile  # noqa: E402
from edgebench.results import store  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
QUICK = ("--repeat", "2", "--op-time", "0.05", "--whole-time", "0.2")


@pytest.mark.slow
def test_isolated_operators_on_the_host(cli, tmp_path):
    got = cli("profile", DIGITS_INT8, "--board", "host", *QUICK, "--runs-dir", tmp_path, "--json")
    assert got.returncode == 0, got.stderr
    run = json.loads(got.stdout)
    p = run["extra"]["profile"]
    assert run["kind"] == "profile" and run["status"] == "complete" and run["label"] == "measured"
    assert p["method"] == "isolated" and p["repeats"] == 2
    fixed = next(r for r in p["layers"] if r["key"] == "fixed")      # the per-invocation fixed cost, its own row
    assert not fixed["in_sum"] and fixed["median_s"] > 0
    assert p["methods_info"][0]["fixed_cost_median_s"] > 0
    rows = [r for r in p["layers"] if r["key"] != "fixed"]
    assert [r["op"] for r in rows] == ["CONV_2D", "CONV_2D", "MAX_POOL_2D", "RESHAPE", "FULLY_CONNECTED", "SOFTMAX"]
    assert all(r["median_s"] > 0 and r["ci_low_s"] <= r["median_s"] <= r["ci_high_s"] for r in rows)
    assert [r["macs"] for r in rows][:2] == [9_216, 165_888] and rows[0]["output_shapes"] == [[1, 8, 8, 16]]
    assert p["sum_s"] == pytest.approx(sum(r["median_s"] for r in rows))
    net = p["sum_ratio_net"]                  # the fixed cost paid once, as the whole model pays it
    assert net["ratio"] == pytest.approx((p["sum_s"] - 5 * fixed["median_s"]) / p["whole"]["median_s"])
    assert net["ratio"] < p["sum_ratio"]["ratio"] and len(net["per_repeat"]) == 2
    ratio = p["sum_ratio"]
    assert ratio["ratio"] == pytest.approx(p["sum_s"] / p["whole"]["median_s"])
    assert ratio["ci_low"] <= ratio["ratio"] <= ratio["ci_high"] and ratio["runs"] == 2
    assert [w["code"] for w in p["warnings"]] == ["isolated-timings"]
    assert any("values it sees inside the model" in n for n in p["notes"])
    assert {g["op"] for g in p["by_op"]} == {r["op"] for r in rows}
    conv = next(g for g in p["by_op"] if g["op"] == "CONV_2D")
    assert conv["count"] == 2 and conv["time_s"] == pytest.approx(rows[0]["median_s"] + rows[1]["median_s"])
    assert not p["per_mac"]["available"]                       # a Linux board's time is not a count of cycles
    folder = store.find_runs(tmp_path)[0]
    samples = store.read_samples(folder)
    assert set(samples["row"]) == {"whole", "fixed"} | {f"op:{k}" for k in range(6)}
    assert sorted(samples["repeat"].unique()) == [0, 1]
    got = cli("runs", folder.name, "--runs-dir", tmp_path)
    assert got.returncode == 0 and "sum of layers" in got.stdout


@pytest.mark.slow
def test_the_human_table(cli, tmp_path):
    got = cli("profile", DIGITS_INT8, "--board", "host", *QUICK, "--runs-dir", tmp_path)
    assert got.returncode == 0, got.stderr
    out = " ".join(got.stdout.split())
    for text in ("layer by layer: isolated", "FULLY_CONNECTED", "165,888", "sum of layers",
                 "of the whole", "isolated timings omit cache and fusion effects", "by operator: CONV_2D ×2"):
        assert text in out, text


@pytest.mark.parametrize("args, message", [
    (("--method", "device-counter"), "runs on microcontrollers with edgebench firmware; board host is not one"),
    (("--method", "psychic"), "unknown profile method 'psychic'"),
    (("--repeat", "0"), "'--repeat': must be a whole number from 1 to 1000, got 0"),
    (("--op-time", "-1"), "'--op-time': must be a finite number from 0.001 to 3600 s, got -1"),
    (("--kernels", "fast"), "unknown kernel set 'fast'"),
    (("--board", "sim-pi5"), "board sim-pi5 is simulated: a power and latency model has no layers to time"),
])
def test_bad_input_is_one_line(cli, tmp_path, args, message):
    board = "host"
    if args[0] == "--board":
        board, args = args[1], args[2:]
    got = cli("profile", DIGITS_INT8, "--board", board, *args, "--runs-dir", tmp_path)
    assert got.returncode == 1 and message in got.stderr and "Traceback" not in got.stderr
    assert not list(tmp_path.glob("*"))


@pytest.mark.slow
def test_a_stop_keeps_what_was_measured(tmp_path):
    """Ctrl-C (or SIGTERM/SIGHUP, raised as KeyboardInterrupt by the CLI) after the first repeat: the
    run is kept, incomplete, with the first repeat's figures; nothing is left running."""
    seen = []

    def progress(ev):
        seen.append(ev["event"])
        if ev["event"] == "repeat" and ev["repeat"] == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_profile(DIGITS_INT8, get_profile("host"), ProfileOptions(repeat=3, op_time_s=0.05, whole_time_s=0.2),
                    runs_root=tmp_path, progress=progress)
    folder = store.find_runs(tmp_path)[0]
    r = store.read_result(folder)
    assert r.status == "incomplete" and "interrupted" in r.status_reason
    assert r.extra.profile.repeats == 1 and all(x.median_s for x in r.extra.profile.layers or [])
    assert set(store.read_samples(folder)["repeat"]) == {0} and not store.journal_paths(folder)


@pytest.mark.slow
def test_without_the_models_inner_values_operators_get_random_ones_and_say_so(tmp_path, monkeypatch):
    import edgebench.bench.profile as profile

    monkeypatch.setattr(profile, "try_host_tensors", lambda *a, **k: (None, "no runtime on this computer"))
    r, _ = run_profile(DIGITS_INT8, get_profile("host"), ProfileOptions(repeat=1, op_time_s=0.05, whole_time_s=0.2),
                       runs_root=tmp_path)
    notes = " ".join(r.extra.profile.notes or [])
    assert "seeded random values" in notes and "no runtime on this computer" in notes
    assert all(x.median_s for x in r.extra.profile.layers or [])


# ---------------------------------------------------------------- microcontrollers

@pytest.mark.slow
def test_device_counter_on_the_posix_firmware(cli, tmp_path, posix_firmware_bin):
    got = cli("profile", DIGITS_INT8, "--board", "posix-sim", "--image", posix_firmware_bin, "--repeat", "2",
              "--layer-samples", "6", "--runs-dir", tmp_path, "--json")
    assert got.returncode == 0, got.stderr
    p = json.loads(got.stdout)["extra"]["profile"]
    assert p["method"] == "device-counter" and p["clock_resolution_s"] == pytest.approx(1e-6)
    assert all(r["median_s"] is not None for r in p["layers"])
    assert not p["per_mac"]["available"] and "this computer" in p["per_mac"]["reason"]
    assert 0.8 < p["sum_ratio"]["ratio"] < 1.25          # host time: noisy, but the same work
    got = cli("profile", DIGITS_INT8, "--board", "posix-sim", "--image", posix_firmware_bin, "--method", "isolated",
              "--runs-dir", tmp_path)
    assert got.returncode == 1 and "runs on Linux boards and this computer" in got.stderr


@pytest.mark.slow
def test_layer_timings_survive_a_narrow_counter_wrapping(tmp_path, posix_firmware_bin, monkeypatch):
    """The posix firmware with an 18-bit microsecond counter (it wraps every 262 ms, like a narrow
    hardware timer): ~1,300 KWS inferences and their layers, timed across the wraps, are all their
    few-millisecond durations (the core takes differences modulo the counter's width; without that
    a wrapped interval reads as ~2^32 ticks)."""
    monkeypatch.setenv("EB_POSIX_COUNTER_BITS", "18")
    from edgebench.boards.connect import open_client
    from edgebench.modelfile import read_model

    model = read_model(require_file(MLPERF_DIR / "kws_ref_model.tflite"))
    with open_client(get_profile("posix-sim"), image=posix_firmware_bin) as board:
        assert board.info["counter-bits"] == 18
        board.load(board.ensure_model(model))
        board.set_inputs(np.zeros((1, 49, 10, 1), np.float32))
        whole, sums = [], []
        for _ in range(40):
            got = board.run_layers(32, 0)
            whole += got["ns"]
            sums.append(sum(x["ns"] for x in got["layers"]))
            assert all(0 <= x["ns"] < 200_000_000 for x in got["layers"]), got["layers"]
    wraps = sum(whole) / 262.144e6                 # wraps expected to fall inside timed inferences
    assert wraps > 3 and max(whole) < 200_000_000 and min(whole) > 0, (wraps, max(whole))
    assert max(sums) < 200_000_000 and min(sums) > 0


def test_the_sum_of_layers_timed_a_few_times_has_an_interval_from_its_repeats():
    """Three per-layer inferences a repeat (``--layer-samples 3``) are too few for a within-repeat
    interval of any row; two repeats still give the sum against the whole an interval, Student t on
    the repeats' log ratios. One repeat gives none, and nothing compares a missing bound."""
    from edgebench.bench.profile_summary import row_summary, sum_ratio

    rng = np.random.default_rng(7)
    runs = [{"whole": 3e-3 * (1 + 0.001 * rng.normal(size=6)), "a": 1e-3 * (1 + 0.001 * rng.normal(size=3)),
             "b": 2e-3 * (1 + 0.001 * rng.normal(size=3))} for _ in range(2)]
    summary = lambda key, k: row_summary([r[key] for r in runs[:k]], 40e-9)  # noqa: E731
    assert summary("a", 2).per_repeat[0].ci_low_s is None              # the case at hand
    q = sum_ratio([summary("a", 2), summary("b", 2)], summary("whole", 2), 40e-9)
    assert q.runs == 2 and q.ci_low is not None, q
    assert 0.95 < q.ci_low <= q.ratio <= q.ci_high < 1.05 and "Student t on the log ratios" in q.ci_method
    same = [{"whole": np.full(6, 3e-3), "a": np.full(3, 1e-3), "b": np.full(3, 2e-3)}] * 2   # emulated: exact
    exact = sum_ratio([row_summary([r[k] for r in same]) for k in ("a", "b")], row_summary([r["whole"] for r in same]))
    assert exact.ci_low == pytest.approx(1.0) and exact.ci_high == pytest.approx(1.0)
    one = sum_ratio([summary("a", 1), summary("b", 1)], summary("whole", 1), 40e-9)
    assert one.ci_low is None and one.ci_high is None and "no interval" in one.ci_method



def test_the_sum_of_layers_interval_holds_when_the_rows_errors_are_correlated():
    """Rows timed on the same inferences err together: two rows of 1 ms with a 1% standard error each
    may make a 2 ms sum with a 1% one (fully correlated), not 0.71% (independent). The sum's interval
    is the one a single 2 ms row with a 1% error gives."""
    from edgebench.bench.profile_summary import sum_ratio
    from edgebench.results.figures.profile import LayerTime

    def fig(est, rel=0.01, runs=3):
        lo, hi = est * math.exp(-1.959964 * rel), est * math.exp(1.959964 * rel)
        return LayerTime.model_validate(
            {"median_s": est, "per_repeat": [{"estimate_s": est, "ci_low_s": lo, "ci_high_s": hi}] * runs})

    whole = fig(2e-3, 1e-6)
    two, one = sum_ratio([fig(1e-3), fig(1e-3)], whole, 0.0, "emulated"), sum_ratio([fig(2e-3)], whole, 0.0, "emulated")
    assert two.ci_low == pytest.approx(one.ci_low) and two.ci_high == pytest.approx(one.ci_high)


def test_an_emulated_boards_repeats_take_no_between_repeat_allowance_unless_they_show_one():
    """Emulated figures are instruction counts: repeats that agree give the within-repeat width; a
    measured board's keeps the stated 1% prior between repeats."""
    from edgebench.bench.profile_summary import row_summary, sum_ratio

    rng = np.random.default_rng(3)
    runs = [{k: m * (1 + 1e-5 * rng.normal(size=200)) for k, m in (("whole", 3e-3), ("a", 1e-3), ("b", 2e-3))}
            for _ in range(3)]

    def width(label):
        rows = [row_summary([r[k] for r in runs], 0.0, label) for k in ("a", "b")]
        q = sum_ratio(rows, row_summary([r["whole"] for r in runs], 0.0, label), 0.0, label)
        return q.ci_high / q.ci_low - 1.0

    assert width("emulated") < 1e-3 < width("measured")

def _mlperf_model(name: str) -> Path:
    require_tool("arm-none-eabi-gcc")
    require_tool("qemu-system-arm")
    return Path(require_file(MLPERF_DIR / name))


@pytest.mark.slow
@pytest.mark.qemu
@pytest.mark.parametrize("name", ["kws_ref_model.tflite", "pretrainedResnet_quant.tflite"])
def test_mlperf_tiny_models_on_qemu_m4_sum_to_the_whole_within_2_percent(tmp_path, name):
    model = _mlperf_model(name)
    r, _ = run_profile(model, get_profile("qemu-m4"), ProfileOptions(repeat=2, layer_samples=3),
                       runs_root=tmp_path)
    p = r.extra.profile.to_dict()
    assert r.label == "emulated" and p["method"] == "device-counter"
    ratio = p["sum_ratio"]
    assert 0.98 <= ratio["ci_low"] <= ratio["ratio"] <= ratio["ci_high"] <= 1.02, ratio
    assert p["per_mac"]["unit"] == "instructions" and p["per_mac"]["label"] == "emulated"
    convs = [x for x in p["layers"] if x["op"] == "CONV_2D"]
    assert convs and all(0.5 < x["per_mac"] < 10 for x in convs)
    assert not p["warnings"]


# ---------------------------------------------------------------- layer by layer, two runs

def _fake_run(tmp_path, name: str, factors: dict, seed: int):
    """A stored profile run of three layers with AR(1) samples; ``factors`` slows rows down."""
    from edgebench.bench.record import new_result
    from edgebench.results.conditions import ModelSection
    from edgebench.results.figures.profile import LayerTime, ProfileFigure

    rng = np.random.default_rng(seed)
    rows = []
    frames = []
    base = {"whole": 3e-3, "op:0": 1e-3, "op:1": 1.5e-3, "op:2": 0.5e-3}
    for key, med in base.items():
        med = med * factors.get(key, 1.0)
        for k in range(3):
            e = np.zeros(200)
            for i in range(1, 200):
                e[i] = 0.5 * e[i - 1] + rng.normal(0, 0.01)
            x = med * np.exp(e + rng.normal(0, 0.005))
            frames.append(pd.DataFrame({"repeat": k, "row": key, "latency_s": x, "statistic": "sample"}))
        if key != "whole":
            rows.append({"key": key, "index": int(key[3:]), "op": "CONV_2D", "name": key, "median_s": med,
                         "in_sum": True})
    r = new_result("profile", "measured")
    r.model = ModelSection(name=name)
    r.extra.profile = ProfileFigure(method="device-counter", statistic="median", layers=rows,
                                    whole=LayerTime(median_s=base["whole"]), clock_resolution_s=1e-9)
    return r, pd.concat(frames, ignore_index=True)


def test_compare_points_at_the_layer_that_got_slower(tmp_path):
    from edgebench.bench.profile_compare import compare_layers, sentence

    a, sa = _fake_run(tmp_path, "build-1", {}, 1)
    # one invocation of each side: the between-invocation variance is known from its prior alone (CV 3%, 2 df:
    # t(2)), so a 30% slowdown of one layer is not resolved over Holm-adjusted layers; 1.6 is
    b, sb = _fake_run(tmp_path, "build-2", {"op:1": 1.6, "whole": 1.6}, 2)
    c = compare_layers(a, sa, b, sb)
    assert c["slower"] == ["op:1"] and c["faster"] == []
    row = next(x for x in c["rows"] if x["key"] == "op:1")
    assert row["ci_low"] > 1.0 and row["ratio"] == pytest.approx(1.6, rel=0.05) and row["runs_a"] == 3
    assert next(x for x in c["rows"] if x["key"] == "whole")["verdict"] == "slower"
    assert "layer 1 CONV_2D 1.6" in sentence(c)
    a2, sa2 = _fake_run(tmp_path, "build-1", {}, 3)        # A/A: the same build twice
    assert compare_layers(a, sa, a2, sa2)["slower"] == []


@pytest.mark.slow
def test_compare_command_takes_two_profile_runs(cli, tmp_path):
    for _ in range(2):
        assert cli("profile", DIGITS_INT8, "--board", "host", *QUICK, "--runs-dir", tmp_path).returncode == 0
    a, b = sorted(store.find_runs(tmp_path))
    got = cli("compare", a.name, b.name, "--runs-dir", tmp_path, "--json")
    assert got.returncode == 0, got.stderr
    c = json.loads(got.stdout)
    assert c["format"] == "edgebench-profile-compare" and len(c["rows"]) == 8     # whole, 6 operators, fixed cost
    assert {r["key"] for r in c["rows"]} >= {"whole", "fixed"}
    got = cli("compare", a.name, b.name, "--runs-dir", tmp_path)
    assert got.returncode == 0 and "layer by layer" in got.stdout


@pytest.mark.parametrize("reply", [
    {"ns": [1000, 1000], "layers": [{"layer": 0, "ns": 400}, {"layer": 7, "ns": 500}]},   # an index not in the blob
    {"ns": [1000, 1000], "layers": [{"layer": 0, "ns": 400}, {"layer": 0, "ns": 500}]},   # one layer twice
    {"ns": [1000], "layers": [{"layer": 0, "ns": 400}, {"layer": 1, "ns": 500}]},         # whole times missing
])
def test_a_device_counter_reply_is_checked_before_it_becomes_a_layer_time(reply):
    from types import SimpleNamespace

    from edgebench import board_protocol as bp
    from edgebench.bench.profile_methods import collect_device_counter
    from edgebench.errors import AgentError

    client = SimpleNamespace(capabilities=frozenset({bp.LAYER_TIMING}), description="a fake board",
                             ensure_model=lambda m: "sha", load=lambda *a, **k: {}, set_inputs=lambda x: 1,
                             run_layers=lambda *a, **k: {**reply, "counter_hz": 1e9})
    run = SimpleNamespace(blob=({0: 0, 1: 1}, {}, 2), model=SimpleNamespace(name="m"), profile=SimpleNamespace(name="b"),
                          opts=SimpleNamespace(layer_samples=1, warmup=0), inputs=SimpleNamespace(x=None),
                          emit=lambda ev: None)
    with pytest.raises(AgentError, match="were asked for"):
        collect_device_counter(run, client, 0)
