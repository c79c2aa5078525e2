"""MLPerf Tiny runner compatibility: model ids, the reference firmwares' input encodings and
anomaly score, the DUT/model mismatch warning of `bench --mlperf`, the emulated-timing note.

Against the REAL posix firmware over a pty (and the M4 build under QEMU for the encodings);
host references from LiteRT's reference kernels (the `host` board, kernels=reference).
The facts about the MLCommons runner and reference firmwares these tests encode are in
docs/mlperf-tiny.md (read from mlcommons/tiny: benchmark/runner, benchmark/api,
benchmark/reference_submissions).
"""
from __future__ import annotations

import json
import os
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import DIGITS_INT8, MLPERF_DIR, require_file, require_tool

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fw_util import run_main

from edgebench.boards.registry import get_profile
from edgebench.errors import InputWarning, UsageError
from edgebench.modelfile import read_model

ROOT = Path(__file__).resolve().parents[1]
KWS = MLPERF_DIR / "kws_ref_model.tflite"
RESNET = MLPERF_DIR / "pretrainedResnet_quant.tflite"

# The runner's own parsing (benchmark/runner/device_under_test.py), restated: the lines of
# profile% it reads, and the ids its test scripts (tests*.yaml) have an entry for.
RUNNER_PROFILE_RE = re.compile(r"^m-(model|profile)-\[([^]]+)]$")
RUNNER_RESULTS_RE = re.compile(r"^m-results-\[([^]]+)\]$")
RUNNER_IDS = {"kws01", "ic01", "vww01", "ad01"}


# ----------------------------------------------------------------------------- helpers

def autoencoder(path: Path, n: int = 640, hidden: int = 16, seed: int = 3) -> Path:
    """A dense INT8 autoencoder n -> hidden (ReLU) -> n with seeded random weights (the ad01 shape)."""
    from test_firmware_engine import TinyModel

    rng = np.random.default_rng(seed)
    g = TinyModel()
    x = g.tensor((1, n), scale=2 / 255, zp=0)
    w1 = g.tensor((hidden, n), scale=0.01, zp=0, data=rng.integers(-127, 128, (hidden, n)).astype(np.int8))
    b1 = g.tensor((hidden,), "int32", scale=2 / 255 * 0.01, zp=0,
                  data=rng.integers(-2000, 2000, hidden).astype(np.int32))
    h = g.tensor((1, hidden), scale=0.08, zp=-128)
    g.op("FULLY_CONNECTED", [x, w1, b1], [h], g.options("FullyConnectedOptions", fusedActivationFunction=1))
    w2 = g.tensor((n, hidden), scale=0.01, zp=0, data=rng.integers(-127, 128, (n, hidden)).astype(np.int8))
    y = g.tensor((1, n), scale=0.03, zp=2)
    g.op("FULLY_CONNECTED", [h, w2, -1], [y], g.options("FullyConnectedOptions"))
    path.write_bytes(g.build([x], [y]))
    return path


def reference_outputs(model: Path, x: np.ndarray) -> np.ndarray:
    """int8 outputs of LiteRT's reference kernels for float inputs x (quantized by the host)."""
    from edgebench.boards.connect import open_client

    with open_client(get_profile("host")) as ref:
        sha = ref.ensure_model(read_model(model))
        ref.load(sha, kernels="reference")
        y_raw, _ = ref.infer(x)
    return np.asarray(y_raw, dtype=np.int8).reshape(len(x), -1)


def unambiguous(q: np.ndarray, scale: float, zp: int, rng) -> np.ndarray:
    """Float inputs that quantize to q under any rounding rule (no ties)."""
    return ((q.astype(np.float32) - zp) * np.float32(scale)
            + rng.uniform(-0.3, 0.3, q.shape).astype(np.float32) * np.float32(scale)).astype(np.float32)


def mse_like_the_reference(y_q: np.ndarray, oscale: float, ozp: int, x: np.ndarray) -> str:
    """The ad01 reference's score, float32 in element order, printed %.3f."""
    s = np.float32(0)
    for q, xi in zip(y_q.astype(np.int32), x.astype(np.float32)):
        d = np.float32(np.float32(q - ozp) * np.float32(oscale)) - xi
        s = np.float32(s + np.float32(d * d))
    return f"{float(np.float32(s / np.float32(len(x)))):.3f}"


# ----------------------------------------------------------------------------- model ids

def test_model_ids_the_runner_knows_are_recognised_by_shape():
    from edgebench.mcu.mlperf_ids import check_model_id, default_model_id, runner_note

    assert default_model_id(read_model(require_file(KWS))) == "kws01"      # file stem kws_ref_model crashed the runner
    assert default_model_id(read_model(require_file(RESNET))) == "ic01"
    assert default_model_id(read_model(DIGITS_INT8)) == "digits_int8"
    assert "not one the MLCommons runner has a script for" in runner_note("digits_int8", None, "int8", "outputs")
    assert "--input-encoding uint8-offset" in runner_note("ic01", None, "int8", "outputs")
    assert runner_note("kws01", None, "int8", "outputs") is None
    for bad in ("", "kws 01", "a" * 17, "ic01]", "m-ready%"):
        with pytest.raises(UsageError, match="1 to 16 characters"):
            check_model_id(bad)


def test_deploy_model_id_is_profiles_m_model(fw, capsys):
    code, out, err = run_main(capsys, "deploy", DIGITS_INT8, "--board", "posix-sim", "--url", fw, "--model-id", "vww01",
                              "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["mlperf"]["model_id"] == "vww01" and rep["mlperf"]["input_encoding"] == "int8"
    from edgebench.mcu.protocol import DutClient

    with DutClient(fw) as dut:
        dut.sync()
        prof = dut.profile()
        assert prof["model"] == "vww01" and prof["input"] == "int8" and prof["results"] == "outputs"
        runner_view = dict(m.groups() for m in map(RUNNER_PROFILE_RE.match, prof["lines"]) if m)
        assert runner_view == {"profile": "edgebench firmware 1.0", "model": "vww01"}
    code, out, err = run_main(capsys, "deploy", DIGITS_INT8, "--board", "posix-sim", "--url", fw)
    assert code == 0, err
    text = " ".join(out.split())
    assert "m-model-[digits_int8]" in text and "not one the MLCommons runner has a script for" in text


@pytest.mark.parametrize("args, message", [
    (["--model-id", "kws_ref_model_int8"], "model id 'kws_ref_model_int8' is not 1 to 16 characters"),
    (["--model-id", "kws 01"], "is not 1 to 16 characters of A-Z a-z 0-9 . _ -"),
    (["--input-encoding", "uint8"], "unknown --input-encoding 'uint8'"),
    (["--results", "score"], "unknown --results 'score'"),
])
def test_deploy_bad_mlperf_options_are_one_line(capsys, args, message):
    code, _, err = run_main(capsys, "deploy", DIGITS_INT8, "--board", "posix-sim", "--url", "/dev/null-not-used", *args)
    assert code == 1
    lines = [ln for ln in err.splitlines() if ln.startswith("error")]
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in err, err


def test_eb_model_options_and_their_errors(client):
    from edgebench.errors import ModelError

    client.deploy(read_model(DIGITS_INT8))
    dut = client.dut
    for cmd, text in (("eb-model input=uint8", "eb-model-option: 'input=uint8' is not"),
                      ("eb-model a b", "eb-model-usage"),
                      ("eb-model results=mse", "eb-model-results: mse compares output and input"),
                      ("eb-model kws01 results=mse", "the model has 64 inputs, 10 outputs")):
        reply = dut.command(cmd, ok_errors=True)
        assert reply.errors and text in reply.errors[0], (cmd, reply)
    with pytest.raises(ModelError, match="eb-model-results"):
        dut.load_model("x", results="mse")
    loaded = dut.load_model("ic01", input_encoding="uint8-offset")
    assert loaded["in"] == 64
    prof = dut.profile()
    assert (prof["model"], prof["input"], prof["results"]) == ("ic01", "uint8-offset", "outputs")


# ----------------------------------------------------------------------------- uint8-offset

def _uint8_results(client, model: Path, seed: int):
    """(device m-results per input, host reference scores) for uint8 data on a uint8-offset DUT."""
    from edgebench.agent.quant import make_quantizer
    from edgebench.mcu.mlperf import encode

    m = read_model(model)
    rep = client.deploy(m, input_encoding="uint8-offset")
    assert rep.mlperf["input_encoding"] == "uint8-offset"
    tensor = m.inputs[0].to_dict()
    shape = list(tensor["shape"][1:])
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, [3] + shape).astype(np.float32)
    quant = make_quantizer(tensor, [1] + shape)
    dut = client.dut
    got = []
    for i in range(len(x)):
        u8 = encode(quant(x[i:i + 1]).copy(), "uint8-offset")
        dut.db_load(u8, chunk_bytes=31)
        got.append(dut.infer(1, 0).results)
        assert dut.db_print() == u8               # the buffer keeps the uint8 bytes, as the reference's
    q = reference_outputs(model, x)
    out = m.outputs[0].to_dict()["quant"]
    want = (q.astype(np.float64) - out["zero_point"]) * out["scale"]
    return np.asarray(got), want


@pytest.mark.parametrize("model", [DIGITS_INT8, RESNET], ids=["digits", "resnet8-ic01"])
def test_uint8_offset_matches_the_host_reference_on_posix(client, model):
    got, want = _uint8_results(client, require_file(model), seed=5)
    assert got.shape == want.shape and np.abs(got - want).max() <= 0.0005 + 1e-9
    # the same uint8 bytes read as int8 (no shift on the device): the silent error the issue saw
    u8 = client.dut.db_print()
    client.deploy(read_model(model))
    client.dut.db_load(u8, chunk_bytes=31)
    assert np.abs(np.asarray(client.dut.infer(1, 0).results) - want[-1]).max() > 0.01


# ----------------------------------------------------------------------------- the anomaly score

def _ad_case(tmp_path, model_seed: int, rng_seed: int, n: int) -> tuple:
    """A seeded ad01-shaped autoencoder, ``n`` inputs (int8 and their unambiguous floats) and the
    host reference's outputs: (model, input quant, output quant, int8 inputs, floats, outputs)."""
    model_path = autoencoder(tmp_path / "ae.tflite", seed=model_seed)
    m = read_model(model_path)
    inq, outq = m.inputs[0].to_dict()["quant"], m.outputs[0].to_dict()["quant"]
    rng = np.random.default_rng(rng_seed)
    qs = rng.integers(-128, 128, (n, 640)).astype(np.int8)
    x = unambiguous(qs, inq["scale"], inq["zero_point"], rng)
    return m, inq, outq, qs, x, reference_outputs(model_path, x)


def test_ad_score_matches_a_host_computation(client, tmp_path):
    """results=mse: one score per input, the ad01 reference's formula, int8 and float32 inputs."""
    m, inq, outq, qs, x, y = _ad_case(tmp_path, model_seed=3, rng_seed=11, n=4)
    dut = client.dut
    from edgebench.mcu.mlperf import encode

    seen = set()
    for enc in ("float32", "int8"):
        rep = client.deploy(m, input_encoding=enc, results="mse")
        assert rep.mlperf["model_id"] == "ad01" and rep.mlperf["note"] is None or enc == "int8"
        for i in range(len(x)):
            data = encode(qs[i], enc, x[i])
            dut.db_load(data, chunk_bytes=31)
            raw = dut.command("infer 1 0").lines
            scores = [RUNNER_RESULTS_RE.match(ln).group(1) for ln in raw if RUNNER_RESULTS_RE.match(ln)]
            real = x[i] if enc == "float32" else ((qs[i].astype(np.float32) - inq["zero_point"])
                                                  * np.float32(inq["scale"])).astype(np.float32)
            want = mse_like_the_reference(y[i], outq["scale"], outq["zero_point"], real)
            assert scores == [want], (enc, i, scores, want)
            seen.add(want)
            dut.eb_infer(1, 0)
            assert np.array_equal(np.frombuffer(dut.output(), np.int8), y[i])   # same tensor as the reference
    assert len(seen) >= 4 and min(float(v) for v in seen) > 0.01, seen     # scores that tell inputs apart


# ----------------------------------------------------------------------------- bench --mlperf checks

@pytest.mark.slow
def test_bench_mlperf_warns_when_the_dut_holds_another_model(client, tmp_path):
    from edgebench.bench.mlperf_mode import MlperfOptions, run_mlperf

    ae = read_model(autoencoder(tmp_path / "ae.tflite"))
    client.deploy(read_model(DIGITS_INT8), model_id="kws01")            # the DUT says kws01
    opts = MlperfOptions(window_s=0.05, windows=2, deploy=False, input_count=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result, _ = run_mlperf(DIGITS_INT8, get_profile("posix-sim"), opts, runs_root=tmp_path, client=client)
    codes = [w.code for w in result.warnings]
    assert codes.count("model-id-mismatch") == 1
    mismatch = next(w for w in result.warnings if w.code == "model-id-mismatch")
    assert "m-model-[kws01]" in mismatch.message and "digits_int8" in mismatch.message
    lines = [str(w.message) for w in caught if issubclass(w.category, InputWarning)]
    assert len(lines) == 1 and "m-model-[kws01]" in lines[0]
    assert result.scenario.dut_model_id == "kws01" and result.scenario.model_id == "digits_int8"
    runner = result.extra.mlperf["runner"]
    assert runner["model_id"] == "kws01" and runner["stock_infer"] == "infer 70 10"
    n, w = map(int, runner["suggested_infer"].split()[1:])
    assert w == 10 and n >= 1

    client.deploy(ae, model_id="ad01", results="mse")              # the DUT reads int8, the ad01 reference float32
    opts = MlperfOptions(window_s=0.05, windows=2, deploy=False, input_count=2)
    from edgebench.errors import AgentError

    with pytest.warns(InputWarning, match="the DUT reads input as int8, this run uses float32"), \
            pytest.raises(AgentError, match="Input has 2560 bytes, model expects 640"):
        run_mlperf(tmp_path / "ae.tflite", get_profile("posix-sim"), opts, runs_root=tmp_path, client=client)

    client.deploy(ae, input_encoding="float32", results="mse")     # as the ad01 reference: no warning
    result, _ = run_mlperf(tmp_path / "ae.tflite", get_profile("posix-sim"), opts, runs_root=tmp_path,
                           client=client)
    assert not [w for w in result.warnings if w.code.endswith("-mismatch")]
    assert (result.scenario.input_encoding, result.scenario.results) == ("float32", "mse")
    assert all(len(win["results"]) == 1 for win in result.extra.mlperf["windows"])


def test_bench_mlperf_deploys_with_the_runners_conventions(client, tmp_path):
    from edgebench.bench.mlperf_mode import MlperfOptions, run_mlperf

    opts = MlperfOptions(window_s=0.05, windows=2, input_count=2, input_encoding="uint8-offset", model_id="ic01")
    result, _ = run_mlperf(DIGITS_INT8, get_profile("posix-sim"), opts, runs_root=tmp_path, client=client)
    fw = result.board.system.firmware
    assert (fw["model"], fw["input"], fw["results"]) == ("ic01", "uint8-offset", "outputs")
    assert result.scenario.input_encoding == "uint8-offset"
    assert not [w for w in result.warnings if w.code.endswith("-mismatch")]

    # a recognised MLPerf Tiny model gets its reference firmware's conventions by default
    opts = MlperfOptions(window_s=0.05, windows=2, input_count=2)
    result, _ = run_mlperf(require_file(RESNET), get_profile("posix-sim"), opts, runs_root=tmp_path, client=client)
    fw = result.board.system.firmware
    assert (fw["model"], fw["input"], fw["results"]) == ("ic01", "uint8-offset", "outputs")
    assert result.extra.mlperf["runner"]["stock_infer"] == "infer 20 5"


# ----------------------------------------------------------------------------- under QEMU (M4)

@pytest.fixture(scope="module")
def qemu_m4(tmp_path_factory):
    require_tool("arm-none-eabi-gcc")
    require_tool("qemu-system-arm")
    from edgebench.boards.connect import open_client

    old = os.environ.get("EDGEBENCH_FIRMWARE_BUILD")
    os.environ["EDGEBENCH_FIRMWARE_BUILD"] = str(tmp_path_factory.mktemp("mlperf-fw"))
    try:
        c = open_client(get_profile("qemu-m4"), timeout_s=30.0)
        try:
            yield c
        finally:
            c.close()
    finally:
        if old is None:
            os.environ.pop("EDGEBENCH_FIRMWARE_BUILD", None)
        else:
            os.environ["EDGEBENCH_FIRMWARE_BUILD"] = old


@pytest.mark.slow
@pytest.mark.parametrize("model, model_id", [(DIGITS_INT8, "digits_int8"), (RESNET, "ic01")], ids=["digits", "resnet8-ic01"])
def test_uint8_offset_and_emulated_profile_on_qemu_m4(qemu_m4, model, model_id):
    got, want = _uint8_results(qemu_m4, require_file(model), seed=9)
    assert np.abs(got - want).max() <= 0.0005 + 1e-9
    prof = qemu_m4.dut.profile()
    view = dict(m.groups() for m in map(RUNNER_PROFILE_RE.match, prof["lines"]) if m)
    assert "EMULATED timing" in view["profile"] and view["model"] == model_id


@pytest.mark.slow
def test_ad_score_on_qemu_m4(qemu_m4, tmp_path):
    m, _, outq, _, x, y = _ad_case(tmp_path, model_seed=4, rng_seed=12, n=2)
    qemu_m4.deploy(m, input_encoding="float32", results="mse")
    for i in range(len(x)):
        qemu_m4.dut.db_load(x[i].astype("<f4").tobytes(), chunk_bytes=31)
        (score,) = qemu_m4.dut.infer(1, 0, timeout_s=60).results
        assert f"{score:.3f}" == mse_like_the_reference(y[i], outq["scale"], outq["zero_point"], x[i])


# ----------------------------------------------------------------------------- bench's command line

def test_bench_mlperf_flags_reach_the_mlperf_options(capsys, monkeypatch, tmp_path):
    import edgebench.bench.mlperf_mode as mm

    seen = {}

    def fake_run(model, profile, opts, **kw):
        opts.validate()
        seen.update(model_id=opts.model_id, input_encoding=opts.input_encoding, results=opts.results)
        raise SystemExit(0)

    monkeypatch.setattr(mm, "run_mlperf", fake_run)
    code, _, err = run_main(capsys, "bench", DIGITS_INT8, "--board", "posix-sim", "--mlperf", "--url", "/dev/null",
                            "--model-id", "ic01", "--input-encoding", "uint8-offset", "--results", "outputs",
                            "--runs-dir", tmp_path)
    assert code == 0, err
    assert seen == {"model_id": "ic01", "input_encoding": "uint8-offset", "results": "outputs"}
    code, _, err = run_main(capsys, "bench", DIGITS_INT8, "--board", "posix-sim", "--mlperf", "--url", "/dev/null",
                            "--input-encoding", "uint8", "--runs-dir", tmp_path)
    assert code == 1 and "unknown input encoding 'uint8'" in err


def test_mlperf_flags_without_mlperf_are_one_line(capsys, tmp_path):
    code, _, err = run_main(capsys, "bench", DIGITS_INT8, "--board", "host", "--model-id", "kws01", "--results", "mse",
                            "--runs-dir", tmp_path)
    assert code == 1
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "--model-id, --results apply to --mlperf only" in lines[0], err
    assert not list(tmp_path.iterdir())
