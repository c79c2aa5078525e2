"""How long `edgebench quantize` takes, on the digits model and (if it can be rebuilt) MLPerf Tiny KWS.

1. digits: rebuilds the Keras digits CNN with exactly models/digits/build.py's recipe
   (split, seed, op determinism, one thread, 40 epochs), saves it as .keras, and
   quantizes it with the committed calibration set (models/digits/digits_calib.npz,
   200 samples) ``--repeat`` times in this process, then once through the command
   line in a fresh process (which includes importing TensorFlow). Also says whether
   the FP32/INT8 bytes equal the committed models/digits/*.tflite.
2. MLPerf Tiny KWS (DS-CNN): a .tflite cannot be loaded back into Keras (see
   KWS_WHY below). The script instead rebuilds the same graph in Keras by hand
   from the operators of kws_ref_model_float32.tflite and transplants its folded
   weights, checks the rebuilt model against the .tflite on random inputs, and
   times quantizing it with *synthetic* calibration data (Speech Commands MFCC
   features are not available here: the timing is real, the INT8 model is not a
   usable KWS model).

    .venv/bin/python benchmarks/quantize_time.py [--repeat 5] [--epochs 40] [--skip-kws]
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DIGITS = ROOT / "models" / "digits"
KWS_FP32 = ROOT.parent / "shared" / "models" / "mlperf-tiny" / "kws_ref_model_float32.tflite"

KWS_WHY = (
    "kws_ref_model_float32.tflite cannot be loaded back into Keras: a .tflite file is an "
    "inference-only flatbuffer of TFLite operators (CONV_2D, DEPTHWISE_CONV_2D, ...) with "
    "constant buffers; it has no Keras layer configs, no variables and no training graph "
    "(BatchNormalization is already folded into the convolution weights and biases, dropout "
    "removed), and TensorFlow has no .tflite -> Keras/SavedModel importer. MLPerf Tiny's "
    "Keras training code and its trained .h5 checkpoint are not part of ../shared/models/mlperf-tiny/."
)


def _load_build_module():
    spec = importlib.util.spec_from_file_location("digits_build", DIGITS / "build.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)   # sets TF_ENABLE_ONEDNN_OPTS=0; imports numpy only
    return mod


def _sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _summary(values) -> str:
    if not values:
        return "n/a"
    med = statistics.median(values)
    return f"median {med:.3f} s (min {min(values):.3f}, max {max(values):.3f}, n={len(values)})"


def rebuild_digits(build, tf, epochs: int, out: Path) -> Path:
    """models/digits/build.py's training, step by step, saved as .keras."""
    x_train, y_train, _x_test, _y_test = build.load_data()
    model = build.build_model(tf)
    model.compile(optimizer=tf.keras.optimizers.Adam(learning_rate=build.LEARNING_RATE),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    from edgebench.quantize._tf import Quiet

    with Quiet():   # TensorFlow's C++ log lines during fit
        model.fit(x_train, y_train, epochs=epochs, batch_size=build.BATCH_SIZE, shuffle=True, verbose=0)
        path = out / "digits.keras"
        model.save(path)
    return path


def time_digits(args, tf, build, work: Path) -> dict:
    from edgebench.quantize import quantize_model

    t0 = time.perf_counter()
    model = rebuild_digits(build, tf, args.epochs, work)
    train_s = time.perf_counter() - t0
    calib = DIGITS / "digits_calib.npz"
    runs = []
    for i in range(args.repeat):
        t = time.perf_counter()
        r = quantize_model(model, calib, out=work / f"run{i}" / "digits_int8.tflite")
        runs.append((time.perf_counter() - t, r))
    first = runs[0][1]
    same = all(Path(r.int8.path).read_bytes() == Path(first.int8.path).read_bytes() for _, r in runs)
    cli_t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "edgebench", "quantize", str(model), "--calib", str(calib),
                        "-o", str(work / "cli" / "digits_int8.tflite"), "--json"],
                       capture_output=True, text=True, timeout=600)
    cli_s = time.perf_counter() - cli_t
    cli = json.loads(p.stdout) if p.returncode == 0 else None
    committed = {"fp32": _sha(DIGITS / "digits_fp32.tflite"), "int8": _sha(DIGITS / "digits_int8.tflite")}
    steps = {k: [r.timings_s[k] for _, r in runs if k in r.timings_s]
             for k in ("load_model", "load_calibration", "prepare_export", "convert_fp32", "convert_int8",
                       "check_and_write")}
    return {
        "train_s": train_s, "epochs": args.epochs,
        "in_process_s": [t for t, _ in runs], "steps_s": steps,
        "first_call_import_tensorflow_s": first.timings_s.get("import_tensorflow"),
        "cli_fresh_process_s": cli_s, "cli_ok": cli is not None, "cli_stderr": p.stderr.strip()[-300:],
        "cli_same_bytes": bool(cli and cli["outputs"][-1]["sha256"] == first.int8.sha256),
        "same_bytes_every_run": same,
        "int8_sha256": first.int8.sha256, "fp32_sha256": first.fp32.sha256,
        "equals_committed": {"fp32": first.fp32.sha256 == committed["fp32"],
                             "int8": first.int8.sha256 == committed["int8"]},
        "warnings": [w.code for w in first.warnings],
    }


# ---------------------------------------------------------------- KWS: transplant into Keras

def _kws_ops(path: Path) -> list:
    from ai_edge_litert import schema_py_generated as s

    m = s.ModelT.InitFromPackedBuf(bytearray(path.read_bytes()), 0)
    sg = m.subgraphs[0]
    names = {v: k for k, v in vars(s.BuiltinOperator).items() if isinstance(v, int) and not k.startswith("_")}

    hybrid = []

    def const(i):
        """A constant tensor as float32; int8 weights (dynamic-range) dequantized with their scales."""
        t = sg.tensors[i]
        buf = m.buffers[t.buffer].data
        if buf is None or len(buf) == 0:
            return None
        shape = [int(d) for d in t.shape]
        if t.type == s.TensorType.INT32:
            return np.frombuffer(bytes(bytearray(buf)), dtype=np.int32).reshape(shape)
        if t.type == s.TensorType.INT8:
            q = np.frombuffer(bytes(bytearray(buf)), dtype=np.int8).reshape(shape).astype(np.float32)
            scale = np.asarray(t.quantization.scale, dtype=np.float32)
            zp = np.asarray(t.quantization.zeroPoint, dtype=np.float32)
            axis = int(t.quantization.quantizedDimension)
            bshape = [1] * len(shape)
            bshape[axis] = -1
            hybrid.append((t.name.decode() if isinstance(t.name, bytes) else str(t.name), scale.size))
            return ((q - zp.reshape(bshape if zp.size > 1 else [1] * len(shape)))
                    * scale.reshape(bshape if scale.size > 1 else [1] * len(shape))).astype(np.float32)
        return np.frombuffer(bytes(bytearray(buf)), dtype=np.float32).reshape(shape)

    ops = []
    for op in sg.operators:
        code = m.operatorCodes[op.opcodeIndex]
        name = names[max(code.builtinCode or 0, code.deprecatedBuiltinCode or 0)]
        ops.append((name, [const(i) if i >= 0 else None for i in op.inputs], op.builtinOptions))
    shape = [int(d) for d in sg.tensors[sg.inputs[0]].shape]
    return shape, ops, hybrid


def rebuild_kws_keras(tf, path: Path):
    """A Keras model with the .tflite's operators and weights (only the DS-CNN's op set)."""
    keras = tf.keras
    shape, ops, hybrid = _kws_ops(path)
    act = {0: None, 1: "relu", 3: "relu6"}
    pad = {0: "same", 1: "valid"}
    inp = keras.Input(shape=tuple(shape[1:]), name="input_1")
    h, weights = inp, []
    for name, ins, o in ops:
        if name == "CONV_2D":
            w, b = ins[1], ins[2]                                   # TFLite OHWI -> Keras HWIO
            layer = keras.layers.Conv2D(w.shape[0], w.shape[1:3], strides=(o.strideH, o.strideW),
                                        padding=pad[o.padding], activation=act[o.fusedActivationFunction])
            h = layer(h)
            weights.append((layer, [w.transpose(1, 2, 3, 0), b]))
        elif name == "DEPTHWISE_CONV_2D":
            w, b = ins[1], ins[2]                                   # TFLite 1HW(C*M) -> Keras HWCM
            layer = keras.layers.DepthwiseConv2D(w.shape[1:3], strides=(o.strideH, o.strideW),
                                                 padding=pad[o.padding], depth_multiplier=o.depthMultiplier,
                                                 activation=act[o.fusedActivationFunction])
            h = layer(h)
            weights.append((layer, [w[0].reshape(w.shape[1], w.shape[2], -1, o.depthMultiplier), b]))
        elif name == "AVERAGE_POOL_2D":
            h = keras.layers.AveragePooling2D((o.filterHeight, o.filterWidth), strides=(o.strideH, o.strideW),
                                              padding=pad[o.padding])(h)
        elif name == "RESHAPE":
            h = keras.layers.Flatten()(h)
        elif name == "FULLY_CONNECTED":
            w, b = ins[1], ins[2]                                   # TFLite (out, in) -> Keras (in, out)
            layer = keras.layers.Dense(w.shape[0], activation=act[o.fusedActivationFunction])
            h = layer(h)
            weights.append((layer, [w.T, b]))
        elif name == "SOFTMAX":
            h = keras.layers.Softmax()(h)
        else:
            raise NotImplementedError(f"operator {name} is not handled by this transplant")
    model = keras.Model(inp, h, name="ds_cnn_transplant")
    for layer, ws in weights:
        layer.set_weights(ws)
    return model, shape, hybrid


def _first_layer_rel_error(tf, model, x) -> float:
    """max |keras - tflite| / max |tflite| at the output of the first CONV_2D (one sample)."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    it = Interpreter(model_path=str(KWS_FP32), experimental_preserve_all_tensors=True, num_threads=1,
                     experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    t = it.get_tensor(it._get_ops_details()[0]["outputs"][0])
    k = np.asarray(tf.keras.Model(model.inputs, model.layers[1].output)([x]))
    return float(np.max(np.abs(t - k)) / np.max(np.abs(t)))


def time_kws(tf, work: Path, repeat: int) -> dict:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    from edgebench.quantize import quantize_model

    model, shape, hybrid = rebuild_kws_keras(tf, KWS_FP32)
    rng = np.random.default_rng(0)
    # MFCC-like magnitudes; only the agreement of two implementations of one function is checked here.
    x = (rng.standard_normal((100, *shape[1:])) * 20.0).astype(np.float32)
    interp = Interpreter(model_path=str(KWS_FP32), num_threads=1,
                         experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    interp.allocate_tensors()
    i_in, i_out = interp.get_input_details()[0]["index"], interp.get_output_details()[0]["index"]
    ref = []
    for k in range(len(x)):
        interp.set_tensor(i_in, x[k:k + 1])
        interp.invoke()
        ref.append(interp.get_tensor(i_out)[0].copy())
    ref = np.stack(ref)
    got = model.predict(x, batch_size=50, verbose=0)
    max_diff = float(np.max(np.abs(got - ref)))
    first_layer = _first_layer_rel_error(tf, model, x[:1])
    top1 = float(np.mean(got.argmax(1) == ref.argmax(1)))
    path = work / "kws_transplant.keras"
    model.save(path)
    calib = work / "kws_synthetic_calib.npz"
    np.savez(calib, x=(rng.standard_normal((200, *shape[1:])) * 20.0).astype(np.float32))
    runs = []
    for i in range(repeat):
        t = time.perf_counter()
        r = quantize_model(path, calib, out=work / f"kws{i}" / "kws_int8.tflite")
        runs.append((time.perf_counter() - t, r))
    first = runs[0][1]
    from edgebench.modelfile import read_model

    original = read_model(KWS_FP32)
    return {"original_precision": original.precision, "int8_weight_tensors": len(hybrid),
            "max_abs_diff_softmax": max_diff, "first_conv_rel_error": first_layer, "top1_agreement": top1, "samples": len(x),
            "in_process_s": [t for t, _ in runs],
            "convert_int8_s": [r.timings_s["convert_int8"] for _, r in runs],
            "convert_fp32_s": [r.timings_s["convert_fp32"] for _, r in runs],
            "int8_bytes": first.int8.bytes, "fp32_bytes": first.fp32.bytes,
            "same_bytes_every_run": all(r.int8.sha256 == first.int8.sha256 for _, r in runs),
            "warnings": [w.code for w in first.warnings]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="quantizations per model in this process")
    ap.add_argument("--epochs", type=int, default=None, help="digits training epochs (default: build.py's 40)")
    ap.add_argument("--skip-kws", action="store_true")
    args = ap.parse_args(argv)
    build = _load_build_module()
    args.epochs = args.epochs or build.EPOCHS

    from edgebench.quantize._tf import import_tensorflow

    t = time.perf_counter()
    tf = import_tensorflow()
    import_s = time.perf_counter() - t
    # build.py's determinism settings, before any op runs
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.keras.utils.set_random_seed(build.SEED)
    tf.config.experimental.enable_op_determinism()

    print(f"host: {os.uname().machine}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, "
          f"TensorFlow {tf.__version__}, numpy {np.__version__}")
    print(f"import tensorflow: {import_s:.2f} s (paid once per process)")
    with tempfile.TemporaryDirectory(prefix="edgebench-qtime-") as tmp:
        work = Path(tmp)
        d = time_digits(args, tf, build, work)
        print("\n== digits CNN (models/digits/build.py recipe, 200 calibration samples, FP32 + INT8)")
        print(f"training ({d['epochs']} epochs, not part of quantize): {d['train_s']:.1f} s")
        print(f"quantize in process (model load + calibration + 2 conversions + checks + writes): "
              f"{_summary(d['in_process_s'])}")
        for k, v in d["steps_s"].items():
            print(f"  {k:<18} {_summary(v)}")
        print(f"edgebench quantize in a fresh process (incl. Python start + TensorFlow import): "
              f"{d['cli_fresh_process_s']:.2f} s" + ("" if d["cli_ok"] else f" FAILED: {d['cli_stderr']}"))
        print(f"same bytes on every run: {d['same_bytes_every_run']}; CLI run gives the same INT8 bytes: "
              f"{d['cli_same_bytes']}")
        print(f"INT8 sha256 {d['int8_sha256']}; equals committed digits_int8.tflite: {d['equals_committed']['int8']}")
        print(f"FP32 sha256 {d['fp32_sha256']}; equals committed digits_fp32.tflite: {d['equals_committed']['fp32']}")
        print(f"warnings: {d['warnings'] or 'none'}")

        print("\n== MLPerf Tiny KWS (DS-CNN) FP32")
        print("Can it be loaded back as Keras? No. " + KWS_WHY)
        if args.skip_kws:
            return 0
        if not KWS_FP32.is_file():
            print(f"(not found: {KWS_FP32})")
            return 0
        k = time_kws(tf, work, args.repeat)
        print("Rebuilt instead by transplanting its folded weights into a hand-written Keras graph of the same "
              "operators (conv 10x4/2, 4 x depthwise 3x3 + pointwise 1x1, average pool, dense 12, softmax):")
        if k["original_precision"] != "fp32":
            print(f"  NOTE: despite its name, kws_ref_model_float32.tflite is {k['original_precision']} by "
                  f"read_model: {k['int8_weight_tensors']} CONV_2D weight tensors are int8 (per-tensor scale), "
                  "the depthwise and dense weights and all activations float32. The rebuild dequantizes "
                  "those weights; TFLite's hybrid kernels also quantize activations on the fly, so the "
                  "two cannot agree exactly.")
        print(f"  agreement with the .tflite on {k['samples']} random inputs: max |softmax diff| "
              f"{k['max_abs_diff_softmax']:.2e}, top-1 agreement {k['top1_agreement']:.2%}; after the first "
              f"CONV_2D the relative difference is {k['first_conv_rel_error']:.2%}, about one int8 step "
              f"(1/127 = 0.79%) of the hybrid kernel's activation quantization: consistent with a correct "
              "transplant plus that rounding, not with a wrong layer")
        print(f"  quantize in process (FP32 + INT8, 200 SYNTHETIC calibration samples): {_summary(k['in_process_s'])}")
        print(f"    convert_int8 {_summary(k['convert_int8_s'])}")
        print(f"    convert_fp32 {_summary(k['convert_fp32_s'])}")
        print(f"  INT8 {k['int8_bytes']} bytes, FP32 {k['fp32_bytes']} bytes; same bytes every run: "
              f"{k['same_bytes_every_run']}; warnings: {k['warnings'] or 'none'}")
        print("  The timing is real; the INT8 model is not a usable KWS model (calibrated on noise, "
              "not on Speech Commands MFCC features).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
