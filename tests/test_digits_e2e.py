"""Digits end to end through the command line: train -> quantize -> accuracy with edge cases.

The chain a user runs: a Keras model trained here on scikit-learn's digits, `edgebench
quantize` with calibration from the train split, then `edgebench accuracy` of the INT8
model on the host board against its FP32 baseline with built-in perturbations, gated.
Needs TensorFlow (skips locally without it, fails under CI=true).
"""
from __future__ import annotations

import json

import pytest

from tests.test_quantize import require_module, run_cli

pytestmark = [pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")]


@pytest.fixture(scope="module")
def keras_model(tmp_path_factory):
    require_module("tensorflow")
    import keras

    from edgebench.data.datasets import load_digits

    d = tmp_path_factory.mktemp("e2e")
    keras.utils.set_random_seed(1)
    train = load_digits("train")
    inp = keras.Input(shape=(8, 8, 1))
    h = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(inp)
    h = keras.layers.MaxPooling2D(2)(h)
    h = keras.layers.Flatten()(h)
    out = keras.layers.Dense(10, activation="softmax")(h)
    model = keras.Model(inp, out)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(train.x, train.y, epochs=15, batch_size=32, verbose=0)
    model.save(d / "digits.keras")
    return d


def test_train_quantize_accuracy_chain(keras_model):
    d = keras_model
    q = run_cli("quantize", d / "digits.keras", "--calib", "digits:train", "-o", d / "m_int8.tflite",
                "--fp32-out", d / "m_fp32.tflite", "--json")
    assert q.returncode == 0, q.stderr
    made = json.loads(q.stdout)
    assert (d / "m_int8.tflite").exists() and (d / "m_fp32.tflite").exists()
    sidecar = json.loads((d / "m_int8.tflite.json").read_text())
    assert sidecar["calibration"]["count"] >= 100 and made["format"] == "edgebench-quantize-result"

    a = run_cli("accuracy", d / "m_int8.tflite", "--baseline", d / "m_fp32.tflite", "--data", "digits:test",
                "--board", "host", "--edge-cases", "--severities", "1,3", "--runs-dir", d / "runs",
                "--max-drop", "2.0", "--max-ece", "0.2", "--max-edge-drop", "6", "--json")  # gates on upper bounds
    assert a.returncode == 0, a.stderr
    run = json.loads(a.stdout)
    acc = run["extra"]["accuracy"]
    text = json.dumps(acc)
    # a trained model, honestly evaluated: high top-1 for both, with the paired comparison present
    assert run["kind"] == "accuracy" and run["status"] == "complete"
    assert "mcnemar" in text.lower() and "slices" in text.lower()
    assert "calibration" in run["model"] and run["model"]["calibration"]["count"] >= 100
    assert "% top-1" in run["extra"]["claim"]

    gated = run_cli("accuracy", d / "m_int8.tflite", "--baseline", d / "m_fp32.tflite", "--data",
                    "digits:test", "--board", "host", "--runs-dir", d / "runs", "--max-drop", "-1")
    assert gated.returncode == 2, gated.stderr
