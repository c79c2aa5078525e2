"""Per-layer INT8 error of the digits model calibrated well and calibrated badly on purpose.

The bundled digits INT8 model (models/digits) against its FP32 model, then the same trained
network quantized three times by `edgebench quantize`: with the bundled calibration set (200
training images); with a narrow subset of it (the first 20 training images of one digit: the
activations of the other nine digits are outside what calibration saw); and with the bundled
images dimmed to a fifth of their brightness (the input range itself too narrow).
`edgebench layer-error` on each, on the digits test split; prints where the error first jumps
and why.

Needs TensorFlow (the quantize extra) and scikit-learn (the digits data). About a minute.

    python benchmarks/layer_error_figures.py [--out DIR] [--digit 1] [--dim 0.2] [--count 64]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DIGITS = ROOT / "models" / "digits"


def _build_module():
    spec = importlib.util.spec_from_file_location("digits_build", DIGITS / "build.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def train_keras(out: Path) -> Path:
    """The digits network trained with models/digits/build.py's recipe, batch fixed to 1, as .keras."""
    b = _build_module()
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.keras.utils.set_random_seed(b.SEED)
    tf.config.experimental.enable_op_determinism()
    x_train, y_train, _, _ = b.load_data()
    model = b.build_model(tf)
    model.compile(optimizer=tf.keras.optimizers.Adam(learning_rate=b.LEARNING_RATE),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x_train, y_train, epochs=b.EPOCHS, batch_size=b.BATCH_SIZE, shuffle=True, verbose=0)
    export = b.build_model(tf, batch_size=1)
    export.set_weights(model.get_weights())
    path = out / "digits.keras"
    export.save(path)
    return path


def edgebench(*args) -> dict:
    cmd = [sys.executable, "-m", "edgebench", *map(str, args)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr}")
    return json.loads(done.stdout) if "--json" in args else {}


def layer_error(model: Path, baseline: Path, runs: Path, count: int) -> dict:
    return edgebench("layer-error", model, "--baseline", baseline, "--data", "digits", "--count", count,
                     "--runs-dir", runs, "--json")


def summary(name: str, run: dict) -> dict:
    s = run["extra"]["layer_error"]
    jump = s.get("first_jump")
    rows = [{"index": r["index"], "op": r["op"], "sqnr_db": r["sqnr_db"], "ci": r["sqnr_ci"],
             "output_sqnr_db": r["output_sqnr_db"], "best_sqnr_db": r["best_sqnr_db"],
             "local_sqnr_db": (r.get("local") or {}).get("local_sqnr_db"),
             "worst_tenth_db": (r.get("local") or {}).get("worst_tenth_sqnr_db"),
             "saturated_share": r["saturated_share"]} for r in [s["input"]] + s["layers"]]
    return {"model": name, "n": s["n"], "layers": rows,
            "first_jump": None if not jump else {"index": jump["index"], "op": jump["op"], "which": jump["which"],
                                                 "explained_by": jump["explained_by"]}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None, help="keep the models and runs here (default: a temp dir)")
    ap.add_argument("--digit", type=int, default=1, help="the one digit of the narrow calibration subset")
    ap.add_argument("--dim", type=float, default=0.2, help="brightness of the dimmed calibration images")
    ap.add_argument("--count", type=int, default=64, help="test inputs compared")
    args = ap.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="edgebench-layer-error-"))
    out.mkdir(parents=True, exist_ok=True)
    runs = out / "runs"
    results = [summary("digits_int8 (bundled)", layer_error(DIGITS / "digits_int8.tflite",
                                                            DIGITS / "digits_fp32.tflite", runs, args.count))]
    keras = train_keras(out)
    calib = np.load(DIGITS / "digits_calib.npz")["x"]
    x_train, y_train, _, _ = _build_module().load_data()
    np.savez(out / "calib_good.npz", x=calib)
    np.savez(out / "calib_one-digit.npz", x=x_train[y_train == args.digit][:20])
    np.savez(out / "calib_dim.npz", x=(calib * np.float32(args.dim)).astype(np.float32))
    for tag in ("good", "one-digit", "dim"):
        int8 = out / f"digits_{tag}_int8.tflite"
        fp32 = out / f"digits_{tag}_fp32.tflite"
        edgebench("quantize", keras, "--calib", out / f"calib_{tag}.npz", "-o", int8, "--fp32-out", fp32)
        results.append(summary(f"digits re-quantized, {tag} calibration", layer_error(int8, fp32, runs, args.count)))
    for r in results:
        print(f"\n{r['model']} ({r['n']} test inputs)")
        for x in r["layers"]:
            loc = "none" if x["local_sqnr_db"] is None else f"{x['local_sqnr_db']:.1f}"
            loc += "  worst 10% " + ("none" if x["worst_tenth_db"] is None else f"{x['worst_tenth_db']:.1f}")
            where = "in" if x["index"] is None else x["index"]
            print(f"  {where} {x['op']:<16} SQNR {x['sqnr_db']:6.1f} dB [{x['ci'][0]:.1f}, {x['ci'][1]:.1f}]  "
                  f"output q. {x['output_sqnr_db']:.1f}  best {x['best_sqnr_db']:.1f}  local {loc}  "
                  f"saturated {100 * x['saturated_share']:.2f}%")
        j = r["first_jump"]
        at = "none" if not j else ("the model input" if j["index"] is None else f"layer {j['index']} {j['op']}")
        print(f"  first jump: {at}" + ("" if not j else f" ({j['which']} input): " + "; ".join(j["explained_by"] or
                                                                          ["(no parameter stands out)"])))
    (out / "layer_error_figures.json").write_text(json.dumps(results, indent=1))
    print(f"\nmodels, runs and figures in {out}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.exit(main())
