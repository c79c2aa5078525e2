"""`edgebench quantize`: Keras/SavedModel -> FP32 baseline + full-integer INT8 .tflite with sidecars.

The model is built here: a seeded tiny CNN on 8x8x1, trained 10 epochs on sklearn's digits
(edgebench.data.datasets.load_digits; after 2 its near ties put INT8/FP32 agreement below
95%), saved as .keras. TensorFlow tests skip
when tensorflow is not importable, but fail under CI=true (the CI environment must
install `edgebench[quantize]`).
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from conftest import message_lines, missing

from edgebench.errors import DataError, ModelError, UsageError
from edgebench.modelfile import read_model
from edgebench.quantize import (
    MIN_CALIBRATION_SAMPLES,
    QuantizeOptions,
    TensorFlowMissing,
    parse_preprocess,
    quantize_model,
)

ROOT = Path(__file__).resolve().parents[1]
# Keras 3.15 with numpy 2.4 (model.fit/save, not edgebench): "__array__ implementation doesn't accept a copy keyword"
pytestmark = pytest.mark.filterwarnings("ignore:__array__ implementation doesn't accept a copy keyword:DeprecationWarning")


def require_module(name: str):
    """Import ``name``; skip the test without it, but fail under CI=true."""
    try:
        if name == "tensorflow":
            from edgebench.quantize._tf import import_tensorflow  # sets TF_ENABLE_ONEDNN_OPTS=0 first

            return import_tensorflow()
        import importlib

        return importlib.import_module(name)
    except (ImportError, TensorFlowMissing) as exc:
        missing(f"{name} is not importable ({getattr(exc, 'message', exc)}; pip install 'edgebench[quantize]')")


def sha256(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def codes(result) -> set:
    return {w.code for w in result.warnings}


def load_sidecar(path) -> dict:
    return json.loads(Path(str(path) + ".json").read_text())


def run_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "edgebench", *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=cwd, env={**os.environ, "COLUMNS": "200"})


# ---------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def tf():
    return require_module("tensorflow")


@pytest.fixture(scope="module")
def work(tf, tmp_path_factory):
    """A trained tiny digits CNN (.keras) and calibration files."""
    import keras

    from edgebench.data.datasets import load_digits

    d = tmp_path_factory.mktemp("quantize")
    keras.utils.set_random_seed(0)
    train = load_digits("train")
    inp = keras.Input(shape=(8, 8, 1), name="image")
    h = keras.layers.Conv2D(8, 3, padding="same", activation="relu", name="conv")(inp)
    h = keras.layers.MaxPooling2D(2, name="pool")(h)
    h = keras.layers.Flatten(name="flatten")(h)
    h = keras.layers.Dense(16, activation="relu", name="hidden")(h)
    out = keras.layers.Dense(10, activation="softmax", name="probs")(h)
    model = keras.Model(inp, out, name="tiny_digits")
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(train.x, train.y, epochs=10, batch_size=64, shuffle=True, verbose=0)
    model.save(d / "tiny.keras")
    np.savez(d / "calib.npz", x=train.x[:200], y=train.y[:200])
    np.savez(d / "calib50.npz", x=train.x[:50])
    return {"dir": d, "model": d / "tiny.keras", "keras_model": model, "calib": d / "calib.npz",
            "calib50": d / "calib50.npz", "x": train.x}


@pytest.fixture(scope="module")
def quantized(work):
    out = work["dir"] / "a" / "tiny_int8.tflite"
    result = quantize_model(work["model"], work["calib"], out=out,
                            options=QuantizeOptions(float16=True, dynamic_range=True))
    return result


# ---------------------------------------------------------------- conversions

def test_int8_model_is_full_integer_with_int8_io(quantized):
    m = read_model(quantized.int8.path)
    assert m.precision == "int8"
    assert m.inputs[0].dtype == "int8" and m.outputs[0].dtype == "int8"
    assert m.inputs[0].shape == [1, 8, 8, 1]                       # batch fixed to 1
    assert "QUANTIZE" not in m.operators and "DEQUANTIZE" not in m.operators
    base = read_model(quantized.fp32.path)
    assert base.precision == "fp32" and base.inputs[0].shape == [1, 8, 8, 1]
    assert quantized.int8.path.endswith("tiny_int8.tflite") and quantized.fp32.path.endswith("tiny_fp32.tflite")
    assert [o.role for o in quantized.outputs][-1] == "int8"
    assert codes(quantized) <= {"onednn-enabled"}


def test_sidecars_record_provenance(quantized, work, tf):
    int8 = load_sidecar(quantized.int8.path)
    fp32 = load_sidecar(quantized.fp32.path)
    x = np.ascontiguousarray(work["x"][:200], dtype=np.float32)
    for sc, o in ((int8, quantized.int8), (fp32, quantized.fp32)):
        assert sc["format"] == "edgebench-model-sidecar" and sc["version"] == 1
        assert sc["model_sha256"] == sha256(o.path) == o.sha256
        assert sc["derived_from"]["path"] == str(work["model"])
        assert sc["derived_from"]["sha256"] == sha256(work["model"])
        assert sc["converter"]["tensorflow_version"] == tf.__version__
        assert sc["input_shape"] == [1, 8, 8, 1]
    assert int8["precision"] == "int8" and fp32["precision"] == "fp32"
    assert (int8["input_dtype"], int8["output_dtype"]) == ("int8", "int8")
    assert (fp32["input_dtype"], fp32["output_dtype"]) == ("float32", "float32")
    cal = int8["calibration"]
    assert cal["count"] == 200 and cal["sha256"] == hashlib.sha256(x.tobytes()).hexdigest()
    assert cal["source"].startswith("npz:") and str(work["calib"]) in cal["source"]
    opts = int8["converter"]["options"]
    assert opts["inference_input_type"] == "int8" and opts["supported_ops"] == ["TFLITE_BUILTINS_INT8"]
    assert opts["per_channel_weights"] is True
    assert int8["weights_quantization"] and all(w["per_channel"] for w in int8["weights_quantization"])
    assert int8["baseline"] == {"file": "tiny_fp32.tflite", "sha256": quantized.fp32.sha256}
    scale, zp = int8["input_quantization"]
    assert scale > 0 and -128 <= zp <= 127
    assert fp32["calibration"] is None
    # the same keys as the committed digits sidecars, so bench/accuracy read both alike
    digits = json.loads((ROOT / "models" / "digits" / "digits_int8.tflite.json").read_text())
    shared = {"format", "version", "model_sha256", "precision", "weights_bits", "activations_bits",
              "input_dtype", "output_dtype", "input_shape", "output_shape", "input_quantization",
              "output_quantization", "ops", "weights_quantization", "calibration", "converter"}
    assert shared <= set(digits) and shared <= set(int8)


def test_float16_and_dynamic_range_variants(quantized):
    fp16, dyn = quantized.output("fp16"), quantized.output("dynamic-range")
    assert read_model(fp16.path).precision == "fp16" and fp16.path.endswith("tiny_fp16.tflite")
    assert read_model(dyn.path).precision == "dynamic-range" and dyn.path.endswith("tiny_dynamic.tflite")
    for o in (fp16, dyn):
        sc = load_sidecar(o.path)
        assert sc["precision"] == o.precision and sc["model_sha256"] == sha256(o.path)
        assert sc["input_dtype"] == "float32" and sc["calibration"] is None


@pytest.mark.slow
def test_same_inputs_give_the_same_bytes(quantized, work):
    again = quantize_model(work["model"], work["calib"], out=work["dir"] / "b" / "tiny_int8.tflite",
                           options=QuantizeOptions(float16=True, dynamic_range=True))
    assert [o.role for o in again.outputs] == [o.role for o in quantized.outputs]
    for first, second in zip(quantized.outputs, again.outputs):
        assert Path(first.path).read_bytes() == Path(second.path).read_bytes(), first.role
        assert Path(first.sidecar_path).read_bytes() == Path(second.sidecar_path).read_bytes(), first.role


@pytest.mark.slow
def test_uint8_io_per_tensor_and_batch(work):
    r = quantize_model(work["model"], work["calib"], out=work["dir"] / "u" / "tiny_int8.tflite",
                       options=QuantizeOptions(io="uint8", per_channel=False, batch=2, calib_count=120))
    m = read_model(r.int8.path)
    assert m.inputs[0].dtype == "uint8" and m.outputs[0].dtype == "uint8"
    assert m.precision == "int8" and m.inputs[0].shape == [2, 8, 8, 1]
    sc = load_sidecar(r.int8.path)
    assert sc["input_dtype"] == "uint8" and sc["converter"]["options"]["per_channel_weights"] is False
    assert all(not w["per_channel"] for w in sc["weights_quantization"])
    assert sc["calibration"]["count"] == 120 and "evenly spaced" in sc["calibration"]["selection"]


def test_small_calibration_set_warns(work):
    r = quantize_model(work["model"], work["calib50"], out=work["dir"] / "s" / "tiny_int8.tflite")
    w = [w for w in r.warnings if w.code == "calibration-too-small"]
    assert len(w) == 1 and "50" in w[0].message and str(MIN_CALIBRATION_SAMPLES) in w[0].message
    assert load_sidecar(r.int8.path)["warnings"][0]["code"] == "calibration-too-small"
    assert "degenerate-scales" not in codes(r)


@pytest.mark.slow
def test_collapsed_activations_warn_degenerate_scales(work):
    import keras

    inp = keras.Input(shape=(8, 8, 1), name="image")
    h = keras.layers.Flatten()(inp)
    h = keras.layers.Dense(16, activation="relu", kernel_initializer="zeros", bias_initializer="zeros",
                           name="dead")(h)
    out = keras.layers.Dense(10, name="logits")(h)
    path = work["dir"] / "dead.keras"
    keras.Model(inp, out, name="dead_model").save(path)
    r = quantize_model(path, work["calib"], out=work["dir"] / "d" / "dead_int8.tflite")
    deg = [w for w in r.warnings if w.code == "degenerate-scales"]
    assert len(deg) == 1 and deg[0].model == "int8"
    assert deg[0].details and all(d["scale"] < 1e-6 for d in deg[0].details)
    assert "collapsed-output" in codes(r)
    assert {"degenerate-scales", "collapsed-output"} <= {w["code"] for w in load_sidecar(r.int8.path)["warnings"]}


@pytest.mark.slow
def test_saved_model_directory(work):
    sm = work["dir"] / "tiny_savedmodel"
    from edgebench.quantize._tf import Quiet

    with Quiet():
        work["keras_model"].export(str(sm))
    r = quantize_model(sm, work["calib"], out=work["dir"] / "sm" / "tiny_int8.tflite")
    sc = load_sidecar(r.int8.path)
    assert sc["derived_from"]["kind"] == "saved_model"
    assert sc["derived_from"]["sha256"] == sha256(sm / "saved_model.pb")
    assert sc["derived_from"]["sha256_of"] == "saved_model.pb"
    m = read_model(r.int8.path)
    assert m.precision == "int8" and m.inputs[0].shape == [1, 8, 8, 1] and m.inputs[0].dtype == "int8"


@pytest.mark.slow
def test_subclassed_model_converts_to_the_same_bytes_twice(work):
    """A subclassed model has no config to rebuild and auto-named layers: it is wrapped under a
    fixed-shape Input, and its layer names must not depend on what the process built before."""
    import keras

    @keras.saving.register_keras_serializable(package="edgebench_test")
    class Tiny(keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.flat = keras.layers.Flatten()
            self.dense = keras.layers.Dense(10)

        def call(self, x):
            return self.dense(self.flat(x))

    model = Tiny()
    model(np.zeros((1, 8, 8, 1), np.float32))
    path = work["dir"] / "subclassed.keras"
    model.save(path)
    first = quantize_model(path, work["calib"], out=work["dir"] / "sub1" / "s_int8.tflite")
    keras.layers.Dense(3)                                      # advance Keras' global name counter
    second = quantize_model(path, work["calib"], out=work["dir"] / "sub2" / "s_int8.tflite")
    assert "wrapped" in first.export
    assert first.input["model_shape"] is None and first.input["export_shape"] == [1, 8, 8, 1]
    assert Path(first.int8.path).read_bytes() == Path(second.int8.path).read_bytes()
    assert read_model(first.int8.path).precision == "int8"


@pytest.mark.slow
def test_image_folder_with_declared_preprocessing(work):
    Image = require_module("PIL.Image")
    folder = work["dir"] / "images"
    folder.mkdir()
    pixels = (work["x"][:30, :, :, 0] * 255).round().astype(np.uint8)
    for i, p in enumerate(pixels):
        Image.fromarray(p, "L").save(folder / f"{i:03d}.png")
    r = quantize_model(work["model"], folder, out=work["dir"] / "img" / "tiny_int8.tflite",
                       options=QuantizeOptions(calib_preprocess=parse_preprocess(["scale=1/255"])))
    assert r.calibration["count"] == 30 and r.calibration["source"] == f"folder:{folder}"
    assert r.calibration["preprocessing"]["scale"] == pytest.approx(1 / 255)
    got = hashlib.sha256(np.ascontiguousarray((pixels.astype(np.float64)[..., None] * (1 / 255)).astype(np.float32))
                         .tobytes()).hexdigest()
    assert r.calibration["sha256"] == got          # pixel * (1/255) in float64, then float32 (datasets' order)
    assert "calibration-too-small" in codes(r) and "calibration-unscaled" not in codes(r)


def test_interrupted_run_leaves_no_complete_looking_file(work, monkeypatch):
    import edgebench.quantize.convert as convert

    def interrupted(path):
        raise KeyboardInterrupt

    monkeypatch.setattr(convert, "_inspect", interrupted)
    out = work["dir"] / "interrupted"
    with pytest.raises(KeyboardInterrupt):
        quantize_model(work["model"], work["calib"], out=out / "tiny_int8.tflite")
    assert not out.exists() or list(out.iterdir()) == []


# ---------------------------------------------------------------- bad input

def test_missing_model_and_calibration_files(tmp_path):
    with pytest.raises(ModelError, match=r"model file .*nope\.keras does not exist"):
        quantize_model(tmp_path / "nope.keras", tmp_path / "calib.npz")
    with zipfile.ZipFile(tmp_path / "m.keras", "w") as z:
        z.writestr("config.json", "{}")
    with pytest.raises(DataError, match=r"calibration data .*calib\.npz does not exist"):
        quantize_model(tmp_path / "m.keras", tmp_path / "calib.npz")


def test_corrupt_keras_file_names_the_loader(tmp_path, work):
    bad = tmp_path / "bad.keras"
    bad.write_bytes(work["model"].read_bytes()[:300])                   # truncated archive
    with pytest.raises(ModelError, match="keras.saving.load_model") as e:
        quantize_model(bad, work["calib"])
    assert "not a Keras v3 archive" in e.value.message
    fake = tmp_path / "fake.keras"                                        # a zip, but not a Keras model
    with zipfile.ZipFile(fake, "w") as z:
        z.writestr("hello.txt", "not a model")
    with pytest.raises(ModelError, match=r"cannot load .*fake\.keras with keras\.saving\.load_model \(Keras "):
        quantize_model(fake, work["calib"])
    h5 = tmp_path / "bad.h5"
    h5.write_bytes(b"\x89HDF\r\n\x1a\n" + b"\0" * 64)
    with pytest.raises(ModelError, match=r"cannot load .*bad\.h5 with keras\.saving\.load_model"):
        quantize_model(h5, work["calib"])
    assert not list(tmp_path.glob("*.tflite"))


def test_calibration_shape_and_dtype_mismatch(tmp_path, work):
    flat = tmp_path / "flat.npz"
    np.savez(flat, x=work["x"][:120, :, :, 0])                             # N x 8 x 8: no channel axis
    with pytest.raises(DataError, match=r"shape 8x8, the model input 'image' expects N x 8x8x1") as e:
        quantize_model(work["model"], flat, out=tmp_path / "o.tflite")
    assert "\n" not in e.value.one_line()
    cplx = tmp_path / "cplx.npz"
    np.savez(cplx, x=work["x"][:120].astype(np.complex64))
    with pytest.raises(DataError, match=r"dtype complex64; the model expects float32 N x 8x8x1"):
        quantize_model(work["model"], cplx, out=tmp_path / "o.tflite")
    assert not (tmp_path / "o.tflite").exists()


def test_tensorflow_missing_gives_install_hint(tmp_path, monkeypatch):
    model = tmp_path / "m.keras"
    with zipfile.ZipFile(model, "w") as z:
        z.writestr("config.json", "{}")
    np.save(tmp_path / "c.npy", np.zeros((4, 8, 8, 1), np.float32))
    monkeypatch.setitem(sys.modules, "tensorflow", None)                  # import tensorflow -> ImportError
    with pytest.raises(TensorFlowMissing) as e:
        quantize_model(model, tmp_path / "c.npy")
    assert isinstance(e.value, UsageError)
    assert "TensorFlow is not installed" in e.value.one_line()
    assert "pip install 'edgebench[quantize]'" in e.value.one_line()


def test_bad_options_and_preprocessing():
    assert parse_preprocess(["scale=1/255", "mean=0.485,0.456,0.406", "resize=32x32;channels=3"]) == {
        "scale": pytest.approx(1 / 255), "mean": [0.485, 0.456, 0.406], "resize": (32, 32), "channels": 3}
    for bad in (["nope=1"], ["scale"], ["scale=abc"], ["resize=32"], ["scale=1", "scale=2"]):
        with pytest.raises(UsageError):
            parse_preprocess(bad)
    with pytest.raises(UsageError, match="--io must be int8 or uint8"):
        QuantizeOptions(io="int16")
    with pytest.raises(UsageError, match="--batch"):
        QuantizeOptions(batch=0)


# ---------------------------------------------------------------- command line

@pytest.mark.slow
def test_cli_json_matches_library_result(work):
    from typer.testing import CliRunner

    from edgebench.cli.app import app

    out = work["dir"] / "cli" / "tiny_int8.tflite"
    lib = quantize_model(work["model"], work["calib50"], out=out).to_dict()
    res = CliRunner().invoke(app, ["quantize", str(work["model"]), "--calib", str(work["calib50"]),
                                   "-o", str(out), "--json"])
    assert res.exit_code == 0, res.output
    cli = json.loads(res.stdout)

    def strip(d):
        d = json.loads(json.dumps(d))
        d.pop("timings_s")
        for o in d["outputs"]:
            o.pop("convert_s")
        return d

    assert strip(cli) == strip(lib)
    assert "warning: only 50 calibration sample(s)" in res.stderr


def test_cli_bad_input_is_one_line_exit_1(tmp_path):
    bad = tmp_path / "bad.keras"
    bad.write_bytes(b"not a zip")
    np.save(tmp_path / "c.npy", np.zeros((4, 8, 8, 1), np.float32))
    for args, needle in (([tmp_path / "nope.keras", "--calib", tmp_path / "c.npy"], "does not exist"),
                         ([bad, "--calib", tmp_path / "c.npy"], "not a Keras v3 archive"),
                         ([bad, "--calib", tmp_path / "c.npy", "--io", "int4"], "--io must be int8 or uint8")):
        p = run_cli("quantize", *args)
        lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
        assert p.returncode == 1 and len(lines) == 1, p.stderr
        assert lines[0].startswith("error: ") and needle in lines[0]
        assert p.stdout == ""


@pytest.mark.slow
def test_cli_calibration_mismatch_is_one_line_through_tensorflow(work, tmp_path):
    flat = tmp_path / "flat.npz"
    np.savez(flat, x=work["x"][:20, :, :, 0])
    p = run_cli("quantize", work["model"], "--calib", flat, "-o", tmp_path / "o.tflite", "--json")
    lines = message_lines(p.stderr)   # one refusal, after any progress lines
    assert p.returncode == 1 and len(lines) == 1, p.stderr
    assert "expects N x 8x8x1" in lines[0] and p.stdout == ""
