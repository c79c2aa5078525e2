"""Figures of the ONNX lowering: per-operator error against onnxruntime, MobileNet-sized
conversion time, and the install size of the `onnx` extra.

1. Per operator: every graph of tests/onnx_graphs.py's CASES (one per operator of the table
   and per NCHW trap), seeded weights and inputs, is lowered to Keras and converted to an
   FP32 .tflite; the largest absolute difference of each (Keras, and the .tflite under
   LiteRT's builtin kernels) from onnxruntime is printed, with the largest reference value.
2. Conversion time: a MobileNet v1 1.0 graph (13 depthwise-separable blocks, BatchNormalization,
   Clip(0, 6); 224x224x3 input, 1000 classes) built with onnx.helper from seed 0, converted by
   ``quantize_model`` (FP32 + INT8, ``--calib-count`` seeded random NCHW calibration samples)
   ``--repeat`` times in this process; the steps' wall times from the result.
3. Install size: du of onnx and onnxruntime (packages and their .dist-info) in site-packages.

    .venv/bin/python benchmarks/onnx_lowering.py [--repeat 3] [--calib-count 32] [--size 224] [--skip-mobilenet]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))          # the graphs the tests check


def per_operator(tmp: Path) -> list:
    import keras
    import onnx
    from onnx_graphs import CASES, build

    from edgebench.quantize._tf import Quiet, import_tensorflow
    from edgebench.quantize.checks import run_fp32
    from edgebench.quantize.onnx_lower import read_onnx, reference
    from edgebench.quantize.onnx_lower.lower import lower, run_keras

    tf = import_tensorflow()
    rows = []
    for case in sorted(CASES):
        path = tmp / f"{case}.onnx"
        onnx.save(build(case), str(path))
        g = read_onnx(path)
        with Quiet():
            lowered = lower(g, keras, tf)
            fp32 = bytes(tf.lite.TFLiteConverter.from_keras_model(lowered.model).convert())
        rng = np.random.default_rng(0)
        feeds = {i.name: rng.standard_normal((8, *i.shape[1:])).astype(np.float32) for i in g.inputs}
        batch = 1 if all(isinstance(i.declared[0], int) for i in g.inputs) else None
        k = reference.check(path, lambda xs, lowered=lowered: run_keras(lowered.model, xs, 1), lowered.inputs, lowered.outputs,
                            feeds, "keras", batch)
        if len(g.inputs) == 1:
            t = reference.check(path, lambda xs, fp32=fp32: run_fp32(fp32, xs[0], 1), lowered.inputs, lowered.outputs,
                                feeds, "tflite", batch)
            t_err = t.max_abs_error
        else:
            t_err = None                      # run_fp32 feeds one input
        ref = max(o["max_abs_reference"] for o in k.outputs)
        rows.append({"case": case, "onnx_ops": sorted(lowered.operators), "keras_max_abs_error": k.max_abs_error,
                     "tflite_max_abs_error": t_err, "max_abs_reference": ref})
    return rows


def mobilenet(tmp: Path, size: int, repeat: int, calib_count: int) -> dict:
    import onnx
    from onnx_graphs import mobilenet_like

    from edgebench.quantize import QuantizeOptions, quantize_model
    from edgebench.quantize.onnx_lower.inspect import inspect_onnx

    path = tmp / "mobilenet_v1.onnx"
    onnx.save(mobilenet_like(seed=0, size=size), str(path))
    rep = inspect_onnx(path)
    x = np.random.default_rng(1).uniform(-1, 1, (calib_count, 3, size, size)).astype(np.float32)
    np.savez(tmp / "calib.npz", x=x)
    runs = []
    for k in range(repeat):
        r = quantize_model(path, tmp / "calib.npz", out=tmp / f"r{k}" / "mobilenet_int8.tflite",
                           options=QuantizeOptions())
        runs.append({**r.timings_s, "faithfulness_max_abs_error": r.lowering["faithfulness"]["max_abs_error"],
                     "int8_bytes": r.int8.bytes, "fp32_bytes": r.fp32.bytes})
    keys = [k for k in runs[0] if k not in ("faithfulness_max_abs_error", "int8_bytes", "fp32_bytes")]
    return {"params": rep.params, "macs": rep.macs, "nodes": len(rep.nodes), "onnx_bytes": rep.bytes,
            "calibration_samples": calib_count, "runs": runs,
            "median_s": {k: statistics.median(r[k] for r in runs) for k in keys}}


def install_size() -> dict:
    import importlib.metadata as md

    out = {}
    for dist in ("onnx", "onnxruntime"):
        d = md.distribution(dist)
        files = [Path(d.locate_file(f)) for f in (d.files or [])]
        out[dist] = {"version": d.version, "bytes": sum(f.stat().st_size for f in files if f.is_file())}
    out["total_bytes"] = sum(v["bytes"] for v in out.values())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--calib-count", type=int, default=32)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--skip-mobilenet", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="eb-onnx-bench-") as tmp:
        tmp = Path(tmp)
        ops = per_operator(tmp)
        mob = None if args.skip_mobilenet else mobilenet(tmp, args.size, args.repeat, args.calib_count)
    size = install_size()
    load = os.getloadavg()
    if args.json:
        print(json.dumps({"per_operator": ops, "mobilenet": mob, "install": size}, indent=2))
        return
    print(f"{'case':40s} {'Keras vs ORT':>13s} {'FP32 .tflite vs ORT':>20s} {'max |ref|':>10s}")
    for r in ops:
        t = "-" if r["tflite_max_abs_error"] is None else f"{r['tflite_max_abs_error']:.2e}"
        print(f"{r['case']:40s} {r['keras_max_abs_error']:13.2e} {t:>20s} {r['max_abs_reference']:10.3g}")
    if mob:
        print(f"\nMobileNet v1 1.0 at {args.size}x{args.size}: {mob['params']:,} parameters, {mob['macs']:,} MACs, "
              f"{mob['nodes']} nodes; {args.repeat} runs, {args.calib_count} calibration samples")
        for k, v in mob["median_s"].items():
            print(f"  {k:20s} median {v:7.2f} s  (runs: {', '.join(f'{r[k]:.2f}' for r in mob['runs'])})")
        print(f"  FP32 vs onnxruntime: max abs error {max(r['faithfulness_max_abs_error'] for r in mob['runs']):.2e}")
        print(f"  load average at the end: {load[0]:.1f} (1 min), {load[1]:.1f} (5 min) on {os.cpu_count()} CPUs")
    print(f"\ninstall size of edgebench[onnx]: onnx {size['onnx']['version']} {size['onnx']['bytes'] / 2**20:.1f} MiB, "
          f"onnxruntime {size['onnxruntime']['version']} {size['onnxruntime']['bytes'] / 2**20:.1f} MiB, "
          f"total {size['total_bytes'] / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
