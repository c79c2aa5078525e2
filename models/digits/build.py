#!/usr/bin/env python3
"""Deterministically rebuild the edgebench `digits` reference model.

    python models/digits/build.py [--out models/digits]

Needs TensorFlow (tensorflow-cpu), scikit-learn and numpy; ai-edge-litert is used
for the accuracy measurement when installed (falls back to tf.lite.Interpreter).
The product itself never imports TensorFlow: it only consumes the committed
artefacts written here:

    digits_fp32.tflite        float32 model, input [1,8,8,1] float32, output [1,10] float32
    digits_int8.tflite        full-integer model, int8 input and output, per-channel weights
    digits_*.tflite.json      edgebench model sidecars
    digits_test.npz           test split (x float32 Nx8x8x1 in [0,1], y int64)
    digits_calib.npz          calibration subset (first 200 train samples, split order)
    model_card.md             data, split, preprocessing, architecture, calibration,
                              accuracies, hashes, rebuild command

Everything that determines the bytes is fixed here: data split, seeds, epochs, batch
size, optimiser, thread count, op determinism, and the timestamps inside the .npz
zip containers.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import sys
import time
import zipfile

# Must be set before TensorFlow is imported: oneDNN kernels and multi-threaded
# reductions are sources of run-to-run floating point differences.
# Forced (not setdefault) so a caller's environment cannot change the bytes.
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

# ---------------------------------------------------------------------------
# Declared recipe (everything recorded in the model card comes from here)
# ---------------------------------------------------------------------------
SEED = 0
TEST_SIZE = 0.3
SPLIT_RANDOM_STATE = 0
EPOCHS = 40
BATCH_SIZE = 32
LEARNING_RATE = 1e-3
CALIB_COUNT = 200
CALIB_SOURCE = f"sklearn.datasets.load_digits train split, first {CALIB_COUNT}"
SOURCE_SCRIPT = "models/digits/build.py"
# The microcontroller engine implements exactly these builtin ops.
ALLOWED_OPS = {
    "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "MAX_POOL_2D",
    "AVERAGE_POOL_2D", "ADD", "RESHAPE", "SOFTMAX",
}
SIDECAR_FORMAT = "edgebench-model-sidecar"
SIDECAR_VERSION = 1


def sha256_bytes(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def save_npz_deterministic(path: str, **arrays: np.ndarray) -> bytes:
    """Like np.savez_compressed, but with fixed zip timestamps so the bytes are reproducible.

    (Deflate output is stable for a given zlib; the array-content sha256 values in the
    card do not depend on zlib at all.)"""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(arrays):
            arr_buf = io.BytesIO()
            np.lib.format.write_array(arr_buf, np.ascontiguousarray(arrays[name]), allow_pickle=False)
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, arr_buf.getvalue(), compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
    data = buf.getvalue()
    with open(path, "wb") as f:
        f.write(data)
    return data


def load_data():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    # Preprocessing: raw pixel values are integers 0..16 -> /16.0 -> float32 in [0, 1], NHWC.
    x = (digits.images.astype(np.float64) / 16.0).astype(np.float32).reshape(-1, 8, 8, 1)
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=TEST_SIZE, random_state=SPLIT_RANDOM_STATE, stratify=y)
    return (np.ascontiguousarray(x_train), y_train,
            np.ascontiguousarray(x_test), y_test)


def build_model(tf, batch_size=None):
    keras = tf.keras
    inputs = keras.Input(shape=(8, 8, 1), batch_size=batch_size, name="image")
    h = keras.layers.Conv2D(16, 3, padding="same", activation="relu", name="conv1")(inputs)
    h = keras.layers.Conv2D(32, 3, padding="valid", activation="relu", name="conv2")(h)
    h = keras.layers.MaxPooling2D(2, name="pool")(h)
    h = keras.layers.Flatten(name="flatten")(h)
    h = keras.layers.Dense(10, name="logits")(h)
    outputs = keras.layers.Softmax(name="probs")(h)
    return keras.Model(inputs, outputs, name="digits_cnn")


ARCHITECTURE = [
    ("input", "1x8x8x1 float32 (batch fixed to 1 in the exported models)"),
    ("conv1", "Conv2D 16 filters 3x3, stride 1, padding same, ReLU -> 1x8x8x16"),
    ("conv2", "Conv2D 32 filters 3x3, stride 1, padding valid, ReLU -> 1x6x6x32"),
    ("pool", "MaxPool 2x2, stride 2 -> 1x3x3x32"),
    ("flatten", "Flatten -> 1x288"),
    ("logits", "Dense 10"),
    ("probs", "Softmax -> 1x10"),
]


def make_interpreter(model_bytes: bytes, delegates: bool = True):
    try:
        from ai_edge_litert.interpreter import Interpreter, OpResolverType
        name = "ai_edge_litert"
    except ImportError:  # pragma: no cover - fallback when ai-edge-litert is absent
        import tensorflow as tf
        Interpreter = tf.lite.Interpreter
        OpResolverType = tf.lite.experimental.OpResolverType
        name = "tf.lite"
    kw = {} if delegates else {
        "experimental_op_resolver_type": OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES}
    interp = Interpreter(model_content=model_bytes, num_threads=1, **kw)
    interp.allocate_tensors()
    return interp, name


def op_names(interp) -> list[str]:
    return sorted({d["op_name"] for d in interp._get_ops_details()})


def run_tflite(model_bytes: bytes, x: np.ndarray):
    """Return (class predictions, float probabilities, runtime name) for every sample, batch 1."""
    interp, runtime = make_interpreter(model_bytes)
    inp = interp.get_input_details()[0]
    out = interp.get_output_details()[0]
    in_scale, in_zp = inp["quantization"]
    out_scale, out_zp = out["quantization"]
    probs = np.zeros((len(x), out["shape"][-1]), dtype=np.float32)
    for i in range(len(x)):
        xi = x[i:i + 1]
        if inp["dtype"] == np.int8:
            xi = np.clip(np.round(xi / in_scale) + in_zp, -128, 127).astype(np.int8)
        interp.set_tensor(inp["index"], xi)
        interp.invoke()
        o = interp.get_tensor(out["index"])[0]
        if out["dtype"] == np.int8:
            o = (o.astype(np.float32) - out_zp) * out_scale
        probs[i] = o
    return probs.argmax(axis=1), probs, runtime


def tensor_info(model_bytes: bytes) -> dict:
    # No default delegate here, so the op list shows the builtin ops, not DELEGATE.
    interp, _ = make_interpreter(model_bytes, delegates=False)
    inp = interp.get_input_details()[0]
    out = interp.get_output_details()[0]
    ops = op_names(interp)
    tensors = {t["index"]: t for t in interp.get_tensor_details()}
    weights = []  # weight quantization of every op that has a constant filter/weight input
    for op in interp._get_ops_details():
        if op["op_name"] not in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"):
            continue
        w = tensors[int(op["inputs"][1])]
        qp = w.get("quantization_parameters") or {}
        scales = qp.get("scales")
        n = 0 if scales is None else len(scales)
        weights.append({
            "op": op["op_name"], "op_index": int(op["index"]),
            "weight_dtype": np.dtype(w["dtype"]).name, "weight_shape": [int(v) for v in w["shape"]],
            "scales": n, "per_channel": n > 1,
            "quantized_dimension": int(qp.get("quantized_dimension", 0)) if n else None,
        })
    return {
        "input_dtype": np.dtype(inp["dtype"]).name,
        "output_dtype": np.dtype(out["dtype"]).name,
        "input_shape": [int(v) for v in inp["shape"]],
        "output_shape": [int(v) for v in out["shape"]],
        "input_quantization": [float(inp["quantization"][0]), int(inp["quantization"][1])],
        "output_quantization": [float(out["quantization"][0]), int(out["quantization"][1])],
        "ops": ops,
        "weights": weights,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__))),
                    help="output directory (default: the directory of this script, models/digits)")
    args = ap.parse_args(argv)
    out_dir = args.out
    os.makedirs(out_dir, exist_ok=True)
    t0 = time.monotonic()

    import tensorflow as tf

    # Determinism: seeds (python, numpy, tf), deterministic kernels, one thread.
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.keras.utils.set_random_seed(SEED)
    tf.config.experimental.enable_op_determinism()

    x_train, y_train, x_test, y_test = load_data()
    x_calib = np.ascontiguousarray(x_train[:CALIB_COUNT])
    y_calib = y_train[:CALIB_COUNT]
    calib_sha = sha256_bytes(x_calib.tobytes())

    # ---- train ----------------------------------------------------------
    model = build_model(tf)
    model.compile(optimizer=tf.keras.optimizers.Adam(learning_rate=LEARNING_RATE),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x_train, y_train, epochs=EPOCHS, batch_size=BATCH_SIZE, shuffle=True, verbose=0)
    keras_acc = float(np.mean(model.predict(x_test, batch_size=256, verbose=0).argmax(1) == y_test))
    print(f"keras test accuracy: {keras_acc:.4f}")

    # ---- export -------------------------------------------------------------
    # Export from a twin model whose input batch is fixed to 1 (same weights).
    export_model = build_model(tf, batch_size=1)
    export_model.set_weights(model.get_weights())

    conv = tf.lite.TFLiteConverter.from_keras_model(export_model)
    fp32_bytes = conv.convert()
    fp32_options = {"optimizations": [], "supported_ops": ["TFLITE_BUILTINS"],
                    "inference_input_type": "float32", "inference_output_type": "float32"}

    def representative_dataset():
        for i in range(CALIB_COUNT):
            yield [x_calib[i:i + 1]]

    conv = tf.lite.TFLiteConverter.from_keras_model(export_model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = representative_dataset
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    conv.inference_input_type = tf.int8
    conv.inference_output_type = tf.int8
    int8_bytes = conv.convert()
    int8_options = {"optimizations": ["DEFAULT"], "supported_ops": ["TFLITE_BUILTINS_INT8"],
                    "inference_input_type": "int8", "inference_output_type": "int8",
                    "representative_dataset": CALIB_SOURCE,
                    "per_channel_weights": True}

    # ---- verify + measure ---------------------------------------------------
    fp32_info = tensor_info(fp32_bytes)
    int8_info = tensor_info(int8_bytes)
    for name, info in (("fp32", fp32_info), ("int8", int8_info)):
        bad = set(info["ops"]) - ALLOWED_OPS
        if bad:
            raise SystemExit(f"{name} model uses ops outside the MCU engine set: {sorted(bad)}")
        if info["input_shape"] != [1, 8, 8, 1]:
            raise SystemExit(f"{name} model input shape {info['input_shape']} != [1,8,8,1]")
    assert fp32_info["input_dtype"] == "float32" and fp32_info["output_dtype"] == "float32"
    assert int8_info["input_dtype"] == "int8" and int8_info["output_dtype"] == "int8"
    if not all(w["per_channel"] and w["weight_dtype"] == "int8" for w in int8_info["weights"]):
        raise SystemExit(f"int8 model weights are not all per-channel int8: {int8_info['weights']}")

    fp32_pred, _, runtime = run_tflite(fp32_bytes, x_test)
    int8_pred, _, _ = run_tflite(int8_bytes, x_test)
    fp32_acc = float(np.mean(fp32_pred == y_test))
    int8_acc = float(np.mean(int8_pred == y_test))
    agreement = float(np.mean(int8_pred == fp32_pred))
    n_test = int(len(y_test))
    fp32_correct = int(np.sum(fp32_pred == y_test))
    int8_correct = int(np.sum(int8_pred == y_test))
    # 95% Wilson interval, so the card states how much a 540-sample test set can resolve.
    def wilson(k, n, z=1.96):
        p = k / n
        d = 1 + z * z / n
        c = (p + z * z / (2 * n)) / d
        h = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
        return float(c - h), float(c + h)
    # Discordant pairs (McNemar) between FP32 and INT8 correctness.
    fp32_only = int(np.sum((fp32_pred == y_test) & (int8_pred != y_test)))
    int8_only = int(np.sum((int8_pred == y_test) & (fp32_pred != y_test)))
    print(f"tflite ({runtime}) fp32 acc {fp32_acc:.4f}  int8 acc {int8_acc:.4f}  agreement {agreement:.4f}")

    # ---- write artefacts ---------------------------------------------------
    paths = {
        "fp32": os.path.join(out_dir, "digits_fp32.tflite"),
        "int8": os.path.join(out_dir, "digits_int8.tflite"),
    }
    with open(paths["fp32"], "wb") as f:
        f.write(fp32_bytes)
    with open(paths["int8"], "wb") as f:
        f.write(int8_bytes)
    test_npz = save_npz_deterministic(os.path.join(out_dir, "digits_test.npz"),
                                      x=x_test.astype(np.float32), y=y_test.astype(np.int64))
    calib_npz = save_npz_deterministic(os.path.join(out_dir, "digits_calib.npz"),
                                       x=x_calib.astype(np.float32), y=y_calib.astype(np.int64))
    fp32_sha = sha256_bytes(fp32_bytes)
    int8_sha = sha256_bytes(int8_bytes)
    test_npz_sha = sha256_bytes(test_npz)
    calib_npz_sha = sha256_bytes(calib_npz)
    calib_block = {"source": CALIB_SOURCE, "count": CALIB_COUNT, "sha256": calib_sha}

    def sidecar(precision, sha, info, options, acc, calibration):
        return {
            "format": SIDECAR_FORMAT,
            "version": SIDECAR_VERSION,
            "model_sha256": sha,
            "precision": precision,
            "weights_bits": 8 if precision == "int8" else 32,
            "activations_bits": 8 if precision == "int8" else 32,
            "input_dtype": info["input_dtype"],
            "output_dtype": info["output_dtype"],
            "input_shape": info["input_shape"],
            "output_shape": info["output_shape"],
            "input_quantization": info["input_quantization"] if precision == "int8" else None,
            "output_quantization": info["output_quantization"] if precision == "int8" else None,
            "preprocessing": "pixel / 16.0 -> float32 in [0,1], NHWC 1x8x8x1",
            "ops": info["ops"],
            "weights_quantization": info["weights"] if precision == "int8" else None,
            "calibration": calibration,
            "converter": {"tensorflow_version": tf.__version__, "options": options},
            "source_script": SOURCE_SCRIPT,
            "test_data": {"file": "digits_test.npz", "sha256": test_npz_sha, "count": n_test},
            "test_accuracy": acc,
        }

    sidecars = {
        "fp32": sidecar("fp32", fp32_sha, fp32_info, fp32_options, fp32_acc, None),
        "int8": sidecar("int8", int8_sha, int8_info, int8_options, int8_acc, calib_block),
    }
    sidecars["int8"]["agreement_with_fp32"] = agreement
    sidecars["int8"]["baseline"] = {"file": "digits_fp32.tflite", "sha256": fp32_sha}   # accuracy --baseline auto
    for p in ("fp32", "int8"):
        with open(paths[p] + ".json", "w") as f:
            json.dump(sidecars[p], f, indent=2, sort_keys=False)
            f.write("\n")

    lo32, hi32 = wilson(fp32_correct, n_test)
    lo8, hi8 = wilson(int8_correct, n_test)
    arch = "\n".join(f"| `{n}` | {d} |" for n, d in ARCHITECTURE)
    per_ch = "\n".join(
        f"  - op {w['op_index']} {w['op']}: int8 weights {'x'.join(map(str, w['weight_shape']))}, "
        f"{w['scales']} scales on axis {w['quantized_dimension']}" for w in int8_info["weights"])
    iq, oq = int8_info["input_quantization"], int8_info["output_quantization"]
    card = f"""# digits: edgebench reference model

A deliberately small CNN for the scikit-learn `digits` data set (8x8 greyscale handwritten
digits). It exists so that every edgebench path (host runtimes, Linux boards, the
microcontroller engine) has a model whose data, training and conversion are fully
reproducible from a committed script without any download.

**Generated by `{SOURCE_SCRIPT}` - do not edit by hand.**

## Rebuild

```
python3 -m venv .venv-tf
.venv-tf/bin/pip install tensorflow-cpu=={tf.__version__} scikit-learn numpy ai-edge-litert
.venv-tf/bin/python models/digits/build.py --out models/digits
```

Built with TensorFlow {tf.__version__}, scikit-learn {_sklearn_version()}, numpy {np.__version__};
accuracies measured with the `{runtime}` interpreter (batch 1, 1 thread).

## Data

- Source: `sklearn.datasets.load_digits()` (1797 images, 10 classes; ships with scikit-learn).
- Split: `train_test_split(test_size={TEST_SIZE}, random_state={SPLIT_RANDOM_STATE}, stratify=y)`
  -> train {len(y_train)} / test {n_test}.
- Preprocessing (the model's input contract): pixel value (0..16) / 16.0 -> float32 in [0, 1],
  shape N x 8 x 8 x 1 (NHWC). For the INT8 model the input is quantized with
  scale {iq[0]!r}, zero point {iq[1]} (`q = clip(round(x / scale) + zp, -128, 127)`); the output
  is dequantized with scale {oq[0]!r}, zero point {oq[1]}.
- `digits_test.npz`: the test split, `x` float32 {n_test}x8x8x1, `y` int64. File sha256
  `{test_npz_sha}`; sha256 of the `x` array bytes `{sha256_bytes(x_test.tobytes())}`.

## Architecture

| layer | description |
|---|---|
{arch}

Trained with Adam (lr {LEARNING_RATE}), sparse categorical cross-entropy, batch {BATCH_SIZE},
{EPOCHS} epochs, shuffled, seed {SEED} (`tf.keras.utils.set_random_seed`), op determinism enabled,
1 intra-op / 1 inter-op thread, `TF_ENABLE_ONEDNN_OPTS=0`.

TFLite ops: FP32 {", ".join(fp32_info["ops"])}; INT8 {", ".join(int8_info["ops"])}
(all within the microcontroller engine's set; the INT8 model has no QUANTIZE/DEQUANTIZE ops).

## Calibration set (INT8)

- Source: {CALIB_SOURCE} (train split in `train_test_split` order, never the test split).
- Count: {CALIB_COUNT}.
- sha256 of the calibration array bytes (`x`, float32 C-order, {CALIB_COUNT}x8x8x1): `{calib_sha}`.
- Stored as `digits_calib.npz` (`x`, `y`), file sha256 `{calib_npz_sha}`.
- Converter: `optimizations=[DEFAULT]`, `supported_ops=[TFLITE_BUILTINS_INT8]`,
  `inference_input_type=int8`, `inference_output_type=int8`, int32 biases; weights per-channel
  (note: FULLY_CONNECTED is per-channel too, which an engine must support):
{per_ch}

## Accuracy on the test split ({n_test} images)

| model | accuracy | correct | 95% CI (Wilson) |
|---|---|---|---|
| FP32 (`digits_fp32.tflite`) | {fp32_acc:.4f} | {fp32_correct}/{n_test} | {lo32:.4f} - {hi32:.4f} |
| INT8 (`digits_int8.tflite`) | {int8_acc:.4f} | {int8_correct}/{n_test} | {lo8:.4f} - {hi8:.4f} |

- INT8 top-1 agreement with FP32: {agreement:.4f} ({int(round(agreement * n_test))}/{n_test}).
- Discordant samples: FP32 right / INT8 wrong {fp32_only}, INT8 right / FP32 wrong {int8_only}.
- Keras model before conversion: {keras_acc:.4f}.
- With {n_test} test images one image is {100.0 / n_test:.2f} accuracy points; differences smaller than
  the confidence intervals above are not resolved by this test set.

## Files

| file | sha256 |
|---|---|
| `digits_fp32.tflite` ({len(fp32_bytes)} bytes) | `{fp32_sha}` |
| `digits_int8.tflite` ({len(int8_bytes)} bytes) | `{int8_sha}` |
| `digits_test.npz` ({len(test_npz)} bytes) | `{test_npz_sha}` |
| `digits_calib.npz` ({len(calib_npz)} bytes) | `{calib_npz_sha}` |

Sidecars `digits_fp32.tflite.json` and `digits_int8.tflite.json` carry the same hashes,
precision, calibration and converter options in machine-readable form.

## Determinism

{DETERMINISM_NOTE}
"""
    with open(os.path.join(out_dir, "model_card.md"), "w") as f:
        f.write(card)

    dt = time.monotonic() - t0
    print(f"fp32 {fp32_sha} ({len(fp32_bytes)} B)")
    print(f"int8 {int8_sha} ({len(int8_bytes)} B)")
    print(f"wrote {out_dir} in {dt:.1f} s")
    return 0


def _sklearn_version() -> str:
    import sklearn
    return sklearn.__version__


DETERMINISM_NOTE = """\
The script fixes every input to the build: the split (`random_state`), the seeds
(`tf.keras.utils.set_random_seed`), deterministic kernels (`enable_op_determinism`), one
intra-op and one inter-op thread, oneDNN off (`TF_ENABLE_ONEDNN_OPTS=0`), a fixed epoch
count, and fixed timestamps inside the `.npz` zip containers.

Checked when the script was written: three separate runs (TensorFlow 2.21.0, tensorflow-cpu
wheel, Linux x86_64, Python 3.11) produced byte-identical `.tflite`, `.npz`, `.json` and
`model_card.md` files, so the hashes above are what a rebuild with the pinned versions
should reproduce. Byte identity is not promised across TensorFlow versions or CPU
families (floating-point training kernels may differ); in that case the accuracy figures,
not the hashes, are the contract, and the card and sidecars must be regenerated together
with the models."""

if __name__ == "__main__":
    sys.exit(main())
