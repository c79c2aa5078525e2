"""layer-error on an injected outlier channel: a Keras CNN whose conv_1 channel 3 is multiplied by 100 and
conv_2's matching input channel divided by 100 (FP32 unchanged, ReLU positive-homogeneous), converted with
``quantize_model`` beside the clean model, then ``layer-error`` on 16 seeded random inputs (measured on this
computer, reference kernels). Prints what layer-error says about each: the named channel and layer, the
crushed channels and the per-channel SQNR of that layer.

    .venv/bin/python benchmarks/layer_error_outlier.py
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def main() -> None:
    from test_layer_error_channels import _models

    from edgebench.bench.layer_error import LayerErrorOptions, run_layer_error
    from edgebench.cli.render.profile import jump_text
    from edgebench.quantize import quantize_model

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for name, src in _models(tmp).items():
            r = quantize_model(src, tmp / "calib.npy", out=tmp / f"{name}_int8.tflite")
            result, _ = run_layer_error(r.int8.path, r.fp32.path, LayerErrorOptions(count=16), runs_root=tmp / "runs")
            s = result.extra.layer_error
            print(f"== {name}: output SQNR {(s.layers or [])[-1].sqnr_db:.1f} dB")
            for line in jump_text(s):
                print(line)
            for row in s["layers"]:
                ch = row.get("channels")
                if ch:
                    dbs = ", ".join("-" if v is None else f"{v:.0f}" for v in ch["sqnr_db"])
                    loc = (row.get("local") or {}).get("local_sqnr_db")
                    print(f"  layer {row['index']} {row['op']} {row['name'][:40]}: SQNR {row['sqnr_db']:.1f} dB; "
                          f"local {'-' if loc is None else f'{loc:.1f}'} dB, best {row['best_sqnr_db']:.1f} dB, "
                          f"reference {row['reference_db']:.1f} dB; "
                          f"per channel [{dbs}] dB; widest channel {ch['widest']} "
                          f"({ch['widest_share']:.0%} of the range)")


if __name__ == "__main__":
    main()
