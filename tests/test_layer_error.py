"""`edgebench layer-error`: per-layer INT8 error against FP32 with real LiteRT (reference kernels, every
tensor kept, each model in a child process), and the estimators behind it."""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import DIGITS_FP32, DIGITS_INT8

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import MLPERF_DIR, require_file  # noqa: E402

from edgebench.results.model import RunResult  # noqa: E402
from edgebench.stats.layer_error import (  # noqa: E402
    Accumulator,
    best_sqnr_db,
    first_jump,
    layer_figures,
    local_error,
    resamples,
    sqnr_db,
)

ROOT = Path(__file__).resolve().parents[1]


def _edited(tmp_path, name: str, edit) -> Path:
    """The digits INT8 model with ``edit(subgraph)`` applied (flatbuffer object API)."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as s

    m = s.ModelT.InitFromPackedBuf(bytearray(DIGITS_INT8.read_bytes()), 0)
    edit(m.subgraphs[0])
    b = flatbuffers.Builder(1024)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    out = tmp_path / f"{name}.tflite"
    out.write_bytes(bytes(b.Output()))
    return out


def _scale_output(layer: int, factor: float):
    def edit(sg):
        q = sg.tensors[sg.operators[layer].outputs[0]].quantization
        q.scale = [float(q.scale[0]) * factor]
    return edit


# ---------------------------------------------------------------- the estimators

def _acc(signal, noise):
    a = Accumulator.empty()
    a.signal, a.noise, a.cosine = list(signal), list(noise), [1.0] * len(signal)
    return a


def test_sqnr_is_the_mean_of_each_inputs_db_and_exact_or_empty_inputs_are_left_out():
    assert sqnr_db(100.0, 1.0) == pytest.approx(20.0)
    assert sqnr_db(5.0, 0.0) is None
    fig = layer_figures(_acc([100.0, 100.0, 100.0, 0.0, 50.0], [1.0, 0.1, 0.0, 1.0, 0.5]))
    assert fig.sqnr_db == pytest.approx(70 / 3) and fig.n_exact == 1 and fig.n_zero == 1   # 20, 30, 20 dB
    assert fig.sqnr_ci[0] < 70 / 3 < fig.sqnr_ci[1]
    a = Accumulator.empty()
    r = np.random.default_rng(0).normal(size=(10, 50))
    a.add(r, r + 0.01 * np.random.default_rng(1).normal(size=r.shape), (0.05, 0, -128, 127))
    fig = layer_figures(a)
    assert fig.sqnr_db == pytest.approx(40.0, abs=1.0) and fig.sqnr_ci[0] < fig.sqnr_db < fig.sqnr_ci[1]
    assert fig.cosine > 0.9999 and fig.saturated_share == 0.0
    assert fig.output_sqnr_db == pytest.approx(10 * math.log10(1 / (0.05 ** 2 / 12)), abs=1.0)


def test_saturation_is_counted_outside_the_levels():
    a = Accumulator.empty()
    r = np.array([[0.0, 1.0, 2.0, 10.0]])
    a.add(r, np.clip(r, -1.28, 1.27), (0.01, 0, -128, 127))      # range -1.285 .. 1.275
    assert a.saturated == [0.5] and a.below == [0.0]
    assert a.clip[0] == pytest.approx((2 - 1.275) ** 2 + (10 - 1.275) ** 2)


def test_the_noise_budget_gives_a_layers_own_noise():
    n = 40
    jitter = np.random.default_rng(0).normal(1.0, 0.01, n)
    inp = _acc([1.0] * n, 1e-4 * jitter)                  # 40 dB in
    out = _acc([1.0] * n, (1e-4 + 1e-3) * jitter)         # plus a layer adding 30 dB of its own
    d = local_error([inp], out, resamples(n))
    assert d["local_sqnr_db"] == pytest.approx(30.0, abs=0.01)
    assert d["drop_db"] == pytest.approx(40 - 10 * math.log10(1 / 1.1e-3), abs=0.01)
    assert d["local_ci"][0] < 30.0 < d["local_ci"][1] and d["drop_ci"][0] < d["drop_db"] < d["drop_ci"][1]
    better = _acc([1.0] * n, [0.5e-4] * n)
    assert local_error([inp], better, resamples(n))["local_sqnr_db"] is None   # adds nothing


def test_first_jump_is_relative_to_what_each_tensor_allows_over_its_own_range():
    def d(local, lo, hi):
        return {"local_sqnr_db": local, "local_ci": [lo, hi]}

    locals_ = [d(45, 44, 46), None, d(30, 29, 31), d(20, 19, 21)]
    assert first_jump(locals_, [47, 48, 46, 47], 6.0) == (2, "typical")
    assert first_jump(locals_, [47, 48, 46, 47], 20.0) == (3, "typical")
    assert first_jump(locals_, [None, 48, None, 47], 6.0) == (3, "typical")   # no reference: not judged
    assert first_jump([d(44, 38, 46)], [47], 6.0) is None                     # its interval reaches the mark
    tail = {**d(45, 44, 46), "worst_tenth_sqnr_db": 22.0, "worst_tenth_ci": [18.0, 25.0]}
    assert first_jump([d(45, 44, 46), tail], [47, 47], 6.0) == (1, "worst tenth")


def test_the_worst_tenth_of_the_inputs_is_an_order_statistic_with_its_interval():
    from edgebench.stats.layer_error import worst_tenth

    n = 60
    inp = _acc([1.0] * n, [1e-6] * n)
    noise = np.full(n, 1e-4)
    noise[:20] = 1e-2                                    # a third of the inputs badly hurt
    got = worst_tenth(_acc([1.0] * n, noise), inp)
    assert got["worst_tenth_sqnr_db"] == pytest.approx(20.0, abs=0.1)
    assert got["worst_tenth_ci"][0] <= got["worst_tenth_sqnr_db"] <= got["worst_tenth_ci"][1] < 40.0


def test_the_best_range_reference_is_what_8_bits_give_over_the_observed_range():
    a = Accumulator.empty()
    r = np.random.default_rng(0).uniform(0, 1, size=(20, 1000))
    a.add(r, r)
    expected = 10 * math.log10(np.mean(r ** 2) / ((1 / 255) ** 2 / 12))
    assert best_sqnr_db(a) == pytest.approx(expected, abs=0.3)


# ---------------------------------------------------------------- the verb, real LiteRT

def test_the_bundled_digits_model_has_no_jump(cli, tmp_path):
    got = cli("layer-error", DIGITS_INT8, "--baseline", DIGITS_FP32, "--data", "digits", "--count", "32", "--runs-dir", tmp_path,
              "--json")
    assert got.returncode == 0, got.stderr
    run = RunResult.from_dict(json.loads(got.stdout))
    s = run.extra.layer_error
    layers = s.layers or []
    assert run.kind == "layer-error" and run.status == "complete" and s.n == 32
    assert [r.op for r in layers] == ["CONV_2D", "CONV_2D", "MAX_POOL_2D", "RESHAPE", "FULLY_CONNECTED", "SOFTMAX"]
    assert all(r.matched_by == "name" for r in layers)
    assert all(r.sqnr_db > 35 and r.sqnr_ci[0] <= r.sqnr_db <= r.sqnr_ci[1] for r in layers)
    assert all(r.cosine > 0.999 for r in layers)
    assert not s.first_jump and s.input.op == "input" and s.input.sqnr_db > 50
    assert all(r.best_sqnr_db > 40 and r.best_sqnr_db - r.local.local_sqnr_db < 6
               for r in layers if r.local.local_sqnr_db is not None)
    conv = layers[0]
    assert conv.weights["per_channel"] and conv.weights["sqnr_db"] > 30 and not conv.explained_by
    assert run.runtime.kernels == "reference" and run.runtime.other("preserve_all_tensors")
    assert run.runtime.other("baseline")["kernels"] == "reference"


@pytest.mark.slow
def test_a_layer_whose_range_is_too_narrow_is_pointed_at(cli, tmp_path):
    """conv2's output scale divided by 8 (a calibration that saw a eighth of its real range): the first
    jump is conv2, explained by saturation; the layers before it are untouched."""
    bad = _edited(tmp_path, "narrow", _scale_output(1, 1 / 8))
    got = cli("layer-error", bad, "--baseline", DIGITS_FP32, "--data", "digits", "--count", "32", "--runs-dir", tmp_path,
              "--json")
    assert got.returncode == 0, got.stderr
    s = json.loads(got.stdout)["extra"]["layer_error"]
    assert s["first_jump"]["index"] == 1 and s["first_jump"]["op"] == "CONV_2D"
    assert any("saturate" in why for why in s["first_jump"]["explained_by"])
    assert s["layers"][0]["sqnr_db"] > 40 and s["layers"][1]["saturated_share"] > 0.1
    got = cli("layer-error", bad, "--baseline", DIGITS_FP32, "--data", "digits", "--count", "32", "--runs-dir", tmp_path)
    assert "first jump: layer 1 CONV_2D" in " ".join(got.stdout.split())


@pytest.mark.slow
def test_a_layer_whose_range_is_far_too_wide_is_pointed_at(cli, tmp_path):
    bad = _edited(tmp_path, "wide", _scale_output(0, 30.0))
    got = cli("layer-error", bad, "--baseline", DIGITS_FP32, "--data", "digits", "--count", "32", "--runs-dir", tmp_path,
              "--json")
    assert got.returncode == 0, got.stderr
    s = json.loads(got.stdout)["extra"]["layer_error"]
    assert s["first_jump"]["index"] == 0
    assert any("levels" in why for why in s["first_jump"]["explained_by"])


@pytest.mark.slow
def test_layers_whose_names_differ_are_matched_by_position_with_a_note(cli, tmp_path):
    def rename(sg):
        for op in sg.operators:
            sg.tensors[op.outputs[0]].name = b"renamed/" + sg.tensors[op.outputs[0]].name
    renamed = _edited(tmp_path, "renamed", rename)
    got = cli("layer-error", renamed, "--baseline", DIGITS_FP32, "--count", "8", "--runs-dir", tmp_path, "--json")
    assert got.returncode == 0, got.stderr
    run = json.loads(got.stdout)
    s = run["extra"]["layer_error"]
    assert all(r["matched_by"] == "position" for r in s["layers"]) and "matched by graph position" in s["notes"][0]
    assert [w["code"] for w in run["warnings"]] == ["random-inputs"]


@pytest.mark.slow
def test_resnet8_residual_adds_take_their_worst_input(tmp_path):
    from edgebench.bench.layer_error import LayerErrorOptions, run_layer_error

    q = require_file(MLPERF_DIR / "pretrainedResnet_quant.tflite")
    f = require_file(MLPERF_DIR / "pretrainedResnet.tflite")
    r, _ = run_layer_error(q, f, LayerErrorOptions(count=8), runs_root=tmp_path)
    layers = r.extra.layer_error.layers or []
    assert len(layers) == 16
    assert [x.matched_by for x in layers].count("position") == 1      # Identity_int8 / Identity
    adds = [x for x in layers if x.op == "ADD"]
    assert len(adds) == 3 and all(x.local and x.local.worst_input in (0, 1) for x in adds)
    assert all(x.sqnr_db > 10 for x in layers)


@pytest.mark.parametrize("args, message", [
    ((DIGITS_INT8, "--baseline", DIGITS_INT8), "is a int8 model, not a float one"),
    ((DIGITS_FP32, "--baseline", DIGITS_FP32), "there is no quantization error to locate"),
    ((DIGITS_INT8, "--baseline", DIGITS_FP32, "--data", "digits", "--inputs", "x.npy"), "--data and --inputs exclude each other"),
    ((DIGITS_INT8, "--baseline", DIGITS_FP32, "--count", "1"), "'--count': must be a whole number from 2 to 1,000,000, got 1"),
    ((DIGITS_INT8, "--baseline", DIGITS_FP32, "--kernels", "gpu"), "unknown kernel set 'gpu'"),
    ((DIGITS_INT8, "--baseline", ROOT / "models" / "missing.tflite"), "does not exist"),
])
def test_bad_input_is_one_line(cli, tmp_path, args, message):
    got = cli("layer-error", *args, "--runs-dir", tmp_path)
    assert got.returncode == 1 and message in got.stderr and "Traceback" not in got.stderr
    assert not list(tmp_path.glob("*"))
