"""quantize compares the INT8 model with its FP32 baseline (edgebench.quantize.agreement).

Figures from :func:`compare` and the thresholds of :func:`verdict` are checked on arrays;
the whole path on a Keras model with a planted outlier activation: one unit fires, 10,000
times larger than the rest, on a single calibration sample, so the INT8 tensor that adds it
to the hidden layer gets a scale that crushes every other value. FP32 is unaffected on the
other samples; quantize must refuse the INT8 model and leave no file behind.
"""
from __future__ import annotations

import numpy as np
import pytest
import test_quantize as tq

from edgebench.errors import ModelError
from edgebench.quantize import QuantizeOptions, quantize_model
from edgebench.quantize.agreement import MIN_AGREEMENT, WARN_AGREEMENT, compare, verdict

tf, work, load_sidecar, run_cli = tq.tf, tq.work, tq.load_sidecar, tq.run_cli   # the fixtures and helpers
pytestmark = pytest.mark.filterwarnings("ignore:__array__ implementation doesn't accept a copy keyword:DeprecationWarning")


def _logits(labels, classes=10):
    y = np.zeros((len(labels), classes))
    y[np.arange(len(labels)), labels] = 1.0
    return y


def test_top1_agreement_and_thresholds():
    ref = np.arange(100) % 10
    same = compare([_logits(ref)], [_logits(ref)])
    assert same["outputs"][0] == {**same["outputs"][0], "kind": "classification", "top1_agreement": 1.0}
    assert verdict(same) is None
    head = compare([_logits(ref)[:, :, None, None]], [_logits(ref)[:, :, None, None]])["outputs"][0]
    assert head["kind"] == "classification" and head["top1_agreement"] == 1.0     # a Conv head, N x C x 1 x 1
    half = ref.copy()
    half[:10] = (half[:10] + 1) % 10                  # 90%: between the hard and the soft limit
    w = verdict(compare([_logits(ref)], [_logits(half)]))
    assert MIN_AGREEMENT < 0.9 < WARN_AGREEMENT and w.code == "low-agreement" and "90.0%" in w.message
    bad = (ref + 1) % 10
    bad[:30] = ref[:30]                               # 30%: refused
    with pytest.raises(ModelError) as exc:
        verdict(compare([_logits(ref)], [_logits(bad)]))
    assert "top-1 agreement 30.0%" in exc.value.message and "--min-agreement" in exc.value.message
    assert verdict(compare([_logits(ref)], [_logits(bad)]), min_agreement=0.25) is not None   # warned only


def test_regression_sqnr():
    rng = np.random.default_rng(0)
    y = rng.normal(size=(64, 1))
    ok = compare([y], [y + 0.01 * rng.normal(size=y.shape)])["outputs"][0]
    assert ok["kind"] == "regression" and 35 < ok["sqnr_db"] < 45 and ok["relative_error"] < 0.02
    assert verdict({"samples": 64, "outputs": [ok]}) is None
    noisy = compare([y], [y + 0.5 * rng.normal(size=y.shape)])
    with pytest.raises(ModelError, match="SQNR"):
        verdict(noisy)
    assert compare([y], [y])["outputs"][0]["sqnr_db"] == "inf"


def _planted_outlier_model(work, path):
    import keras

    src = work["keras_model"]
    calib = np.load(work["calib"])["x"].astype(np.float32)
    inp = keras.Input(shape=(8, 8, 1), name="image")
    flat = src.get_layer("flatten")(src.get_layer("pool")(src.get_layer("conv")(inp)))
    h = src.get_layer("hidden")(flat)
    w = np.random.default_rng(1).normal(size=(flat.shape[-1], 1)).astype(np.float32)
    feats = keras.Model(inp, flat)(calib).numpy() @ w
    theta = float(np.sort(feats[:, 0])[-2])           # fires on the top calibration sample only
    spike = keras.layers.Dense(16, activation="relu", name="spike")
    spike_out = spike(flat)
    spike.set_weights([np.tile(w, (1, 16)), np.full(16, -theta, np.float32)])
    mixed = keras.layers.Add(name="mixed")([h, keras.layers.Rescaling(1e4, name="planted")(spike_out)])
    out = src.get_layer("probs")(mixed)
    keras.Model(inp, out, name="planted_outlier").save(path)


@pytest.mark.slow
def test_planted_outlier_is_refused_and_nothing_is_written(work):
    model = work["dir"] / "planted.keras"
    _planted_outlier_model(work, model)
    out = work["dir"] / "planted" / "planted_int8.tflite"
    with pytest.raises(ModelError) as exc:
        quantize_model(model, work["calib"], out=out)
    assert "top-1 agreement" in exc.value.message and "nothing was written" in exc.value.message
    assert not out.parent.exists() or list(out.parent.iterdir()) == []
    proc = run_cli("quantize", model, "--calib", work["calib"], "-o", out, "--quiet")
    assert proc.returncode != 0 and proc.stderr.strip().splitlines()[-1].startswith("error: "), proc.stderr
    assert "top-1 agreement" in proc.stderr and "Traceback" not in proc.stderr
    r = quantize_model(model, work["calib"], out=out, options=QuantizeOptions(min_agreement=0.0))
    assert "low-agreement" in {w.code for w in r.warnings}          # still warned when let through
    side = load_sidecar(r.int8.path)
    assert side["agreement"]["outputs"][0]["top1_agreement"] < MIN_AGREEMENT


@pytest.mark.slow
def test_clean_model_records_agreement(work):
    r = quantize_model(work["model"], work["calib"], out=work["dir"] / "agr" / "tiny_int8.tflite")
    a = r.agreement["outputs"][0]
    assert a["kind"] == "classification" and a["top1_agreement"] >= WARN_AGREEMENT
    assert r.agreement["samples"] == 200 and load_sidecar(r.int8.path)["agreement"] == r.agreement
    assert r.to_dict()["agreement"] == r.agreement
    assert "low-agreement" not in {w.code for w in r.warnings}
