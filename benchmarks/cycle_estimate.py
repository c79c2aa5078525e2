"""Estimated latency on NUCLEO-L4R5ZI at 120 MHz (cycle model) for the MLPerf Tiny models, beside the anchors.

Builds the nucleo-l4r5zi firmware (unless ``--image``), runs one inference of each model (after one warm-up) on
unicorn with the Cortex-M4 / STM32L4R5 timing model of ``edgebench.mcu.cycles`` and prints the
estimate, its bounds, the emulated instruction count, and the published TFLM + CMSIS-NN
reference and best figures of ``edgebench.mcu.anchors``; ``--json`` adds each layer's estimated
cycles (the firmware's per-layer DWT timing of one more inference, under the same model). Every latency here is ESTIMATED
(a model of the core and flash applied to an emulated instruction stream), never measured.

    .venv/bin/python benchmarks/cycle_estimate.py [--json] [--image ELF] [--models kws01 ic01 ...]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mcu_models import FIRMWARE_MODELS  # noqa: E402

from edgebench.mcu.anchors import compare, lines  # noqa: E402
from edgebench.mcu.cycles import estimate_model, sentence  # noqa: E402

#: MLPerf Tiny benchmark id -> .tflite (found where the tests find them: tests/mlperf_models.py)
MODELS = {"kws01": FIRMWARE_MODELS["kws"], "ic01": FIRMWARE_MODELS["resnet8"],
          "vww01": FIRMWARE_MODELS["vww"], "ad01": FIRMWARE_MODELS["ad"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--image", type=Path, help="the nucleo-l4r5zi ELF (default: built with make)")
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = []
    for mid in args.models:
        est = estimate_model(MODELS[mid], image=args.image)     # est["layers"]: estimated cycles per layer
        out.append({"model_id": mid, "estimate": est, "anchors": compare(mid, est)})
        if not args.json:
            print(f"{mid} ({est['model_name']}): {sentence(est)}; {est['cycles_per_mac']:.2f} c/MAC, "
                  f"{est['cycles_per_instruction']:.3f} cycles/instruction")
            for line in lines(out[-1]["anchors"]):
                print(f"  {line}")
    if args.json:
        print(json.dumps({"label": "estimated", "models": out}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
