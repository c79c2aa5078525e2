"""The committed digits reference model: hashes, contracts and recorded accuracy.

Uses only numpy + ai_edge_litert (no TensorFlow), as the product does; the accuracy is measured
through the product's own inference (the agent's ``infer``). The files are
produced by models/digits/build.py; if this test fails after a rebuild, the card,
sidecars and models were not regenerated together.
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter, OpResolverType

from edgebench.agent.loop import Runner
from edgebench.agent.runtime import LoadedModel

DIGITS = Path(__file__).resolve().parents[1] / "models" / "digits"
MODELS = {"fp32": "digits_fp32.tflite", "int8": "digits_int8.tflite"}
ALLOWED_OPS = {
    "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "MAX_POOL_2D",
    "AVERAGE_POOL_2D", "ADD", "RESHAPE", "SOFTMAX",
}
SIDECAR_KEYS = {
    "format", "version", "model_sha256", "precision", "weights_bits", "activations_bits",
    "input_dtype", "output_dtype", "calibration", "converter", "source_script", "test_accuracy",
}
MIN_ACCURACY = 0.95
ACCURACY_TOLERANCE = 0.005  # 0.5 accuracy points


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def card() -> str:
    return (DIGITS / "model_card.md").read_text()


@pytest.fixture(scope="module")
def card_hashes(card) -> dict[str, str]:
    """file name -> sha256 from the card's Files table."""
    rows = re.findall(r"^\| `([^`]+)` \(\d+ bytes\) \| `([0-9a-f]{64})` \|$", card, re.M)
    return dict(rows)


@pytest.fixture(scope="module")
def sidecars() -> dict[str, dict]:
    return {p: json.loads((DIGITS / (f + ".json")).read_text()) for p, f in MODELS.items()}


@pytest.fixture(scope="module")
def test_data():
    with np.load(DIGITS / "digits_test.npz", allow_pickle=False) as z:
        return z["x"], z["y"]


@pytest.fixture(scope="module")
def calib_data():
    with np.load(DIGITS / "digits_calib.npz", allow_pickle=False) as z:
        return z["x"], z["y"]


def _interpreter(precision: str, delegates: bool = True) -> Interpreter:
    kw = {} if delegates else {
        "experimental_op_resolver_type": OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES}
    it = Interpreter(model_path=str(DIGITS / MODELS[precision]), num_threads=1, **kw)
    it.allocate_tensors()
    return it


def _predict(precision: str, x: np.ndarray) -> np.ndarray:
    """Class predictions the way the product infers (the agent's ``infer``: its quantization, batch 1)."""
    runner = Runner(LoadedModel(str(DIGITS / MODELS[precision])), x[:1])
    # argmax is invariant under the (monotonic) output dequantization
    return runner.infer(x)["y"].argmax(axis=-1).astype(np.int64)


@pytest.fixture(scope="module")
def predictions(test_data) -> dict[str, np.ndarray]:
    x, _ = test_data
    return {p: _predict(p, x) for p in MODELS}


# --- provenance -----------------------------------------------------------------

def test_all_files_present():
    for name in (*MODELS.values(), *(f + ".json" for f in MODELS.values()),
                 "digits_test.npz", "digits_calib.npz", "model_card.md", "build.py"):
        assert (DIGITS / name).is_file(), name


def test_card_lists_every_artifact(card_hashes):
    assert set(card_hashes) == {*MODELS.values(), "digits_test.npz", "digits_calib.npz"}


@pytest.mark.parametrize("precision", sorted(MODELS))
def test_model_sha256_matches_card_and_sidecar(precision, card_hashes, sidecars):
    actual = _sha256(DIGITS / MODELS[precision])
    assert sidecars[precision]["model_sha256"] == actual
    assert card_hashes[MODELS[precision]] == actual


@pytest.mark.parametrize("name", ["digits_test.npz", "digits_calib.npz"])
def test_data_sha256_matches_card(name, card_hashes):
    assert card_hashes[name] == _sha256(DIGITS / name)


def test_test_data_sha256_matches_sidecars(sidecars, test_data):
    actual = _sha256(DIGITS / "digits_test.npz")
    for sc in sidecars.values():
        assert sc["test_data"]["sha256"] == actual
        assert sc["test_data"]["count"] == len(test_data[1])


@pytest.mark.parametrize("precision", sorted(MODELS))
def test_sidecar_schema(precision, sidecars):
    sc = sidecars[precision]
    assert SIDECAR_KEYS <= set(sc)
    assert sc["format"] == "edgebench-model-sidecar"
    assert sc["version"] == 1
    assert sc["precision"] == precision
    assert sc["source_script"] == "models/digits/build.py"
    assert (Path(__file__).resolve().parents[1] / sc["source_script"]).is_file()
    assert isinstance(sc["converter"]["tensorflow_version"], str)
    assert isinstance(sc["converter"]["options"], dict)
    bits = 8 if precision == "int8" else 32
    assert sc["weights_bits"] == bits and sc["activations_bits"] == bits
    if precision == "fp32":
        assert sc["calibration"] is None


def test_calibration_set_matches_sidecar_and_card(sidecars, card, calib_data, test_data):
    x, y = calib_data
    cal = sidecars["int8"]["calibration"]
    assert cal["source"] == "sklearn.datasets.load_digits train split, first 200"
    assert cal["count"] == 200 == len(x) == len(y)
    assert x.dtype == np.float32 and x.shape == (200, 8, 8, 1)
    sha = hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest()
    assert cal["sha256"] == sha
    assert sha in card
    # calibration comes from the train split: no calibration image is in the test split
    xt, _ = test_data
    test_rows = {r.tobytes() for r in xt.reshape(len(xt), -1)}
    train_dupes_in_test = sum(r.tobytes() in test_rows for r in x.reshape(len(x), -1))
    assert train_dupes_in_test == 0


def test_test_data_contract(test_data):
    x, y = test_data
    assert x.dtype == np.float32 and x.shape == (540, 8, 8, 1)
    assert y.dtype == np.int64 and y.shape == (540,)
    assert 0.0 <= float(x.min()) and float(x.max()) <= 1.0
    # preprocessing is pixel/16: every value is a multiple of 1/16
    assert np.array_equal(x * 16.0, np.round(x * 16.0))
    assert set(np.unique(y)) == set(range(10))


# --- model contracts ----------------------------------------------------------------

def test_int8_model_io():
    it = _interpreter("int8")
    inp, out = it.get_input_details(), it.get_output_details()
    assert len(inp) == 1 and len(out) == 1
    assert inp[0]["dtype"] == np.int8
    assert out[0]["dtype"] == np.int8
    assert list(inp[0]["shape"]) == [1, 8, 8, 1]
    assert list(out[0]["shape"]) == [1, 10]
    assert inp[0]["quantization"][0] > 0 and out[0]["quantization"][0] > 0


def test_fp32_model_io():
    it = _interpreter("fp32")
    inp, out = it.get_input_details()[0], it.get_output_details()[0]
    assert inp["dtype"] == np.float32 and out["dtype"] == np.float32
    assert list(inp["shape"]) == [1, 8, 8, 1]
    assert list(out["shape"]) == [1, 10]


@pytest.mark.parametrize("precision", sorted(MODELS))
def test_sidecar_io_matches_model(precision, sidecars):
    it = _interpreter(precision)
    inp, out = it.get_input_details()[0], it.get_output_details()[0]
    sc = sidecars[precision]
    assert sc["input_dtype"] == np.dtype(inp["dtype"]).name
    assert sc["output_dtype"] == np.dtype(out["dtype"]).name
    if precision == "int8":
        assert sc["input_quantization"] == pytest.approx(list(inp["quantization"]))
        assert sc["output_quantization"] == pytest.approx(list(out["quantization"]))


@pytest.mark.parametrize("precision", sorted(MODELS))
def test_ops_within_mcu_engine_set(precision, sidecars):
    it = _interpreter(precision, delegates=False)
    ops = {d["op_name"] for d in it._get_ops_details()}
    assert ops <= ALLOWED_OPS, ops - ALLOWED_OPS
    assert sorted(ops) == sidecars[precision]["ops"]


def test_int8_weights_are_per_channel_int8():
    it = _interpreter("int8", delegates=False)
    tensors = {t["index"]: t for t in it.get_tensor_details()}
    weighted = [op for op in it._get_ops_details()
                if op["op_name"] in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")]
    assert weighted
    for op in weighted:
        w = tensors[int(op["inputs"][1])]
        assert w["dtype"] == np.int8, op["op_name"]
        n_out = int(w["shape"][0]) if op["op_name"] != "DEPTHWISE_CONV_2D" else int(w["shape"][-1])
        assert len(w["quantization_parameters"]["scales"]) == n_out, op["op_name"]


# --- accuracy ------------------------------------------------------------------------

@pytest.mark.parametrize("precision", sorted(MODELS))
def test_accuracy_meets_floor_and_matches_record(precision, predictions, test_data, sidecars):
    _, y = test_data
    acc = float(np.mean(predictions[precision] == y))
    assert acc >= MIN_ACCURACY, f"{precision} accuracy {acc:.4f} < {MIN_ACCURACY}"
    recorded = sidecars[precision]["test_accuracy"]
    assert abs(acc - recorded) <= ACCURACY_TOLERANCE, (acc, recorded)


def test_card_records_accuracies(card, sidecars):
    for precision, fname in MODELS.items():
        m = re.search(rf"^\| {precision.upper()} \(`{re.escape(fname)}`\) \| ([0-9.]+) \|", card, re.M)
        assert m, precision
        assert float(m.group(1)) == pytest.approx(sidecars[precision]["test_accuracy"], abs=5e-5)


def test_int8_agreement_with_fp32(predictions, sidecars):
    agreement = float(np.mean(predictions["int8"] == predictions["fp32"]))
    recorded = sidecars["int8"]["agreement_with_fp32"]
    assert abs(agreement - recorded) <= ACCURACY_TOLERANCE, (agreement, recorded)
