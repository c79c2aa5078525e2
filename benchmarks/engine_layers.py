"""Where the engine's gains came from: `edgebench profile`'s per-layer table at a base revision and now.

For each model, runs ``edgebench profile MODEL --board qemu-m4 --repeat 1 --json`` twice: once
with the source tree of ``--base`` (a temporary detached git worktree: its own Python package
and its own firmware, built by its own code) and once with this tree, then joins the two
per-layer tables by layer index and prints, per layer, the emulated instructions before and
after, instructions per MAC before -> after, the layer's part of the whole model's gain and the
output channels whose weights are all zero (counted in the MACs; the DSP pointwise kernel writes
their constant outputs without computing them).
The default base is the engine as it stood before issue 31 (commit a931d60, the parent of
the first issue-31 kernel commit).

Every figure is EMULATED: QEMU's ``-icount shift=0`` advances virtual time 1 ns per emulated
instruction, so a layer's median seconds x 1e9 is its instruction count. Instructions are not a
real core's cycles (benchmarks/cycle_estimate.py gives the estimated cycles).

    .venv/bin/python benchmarks/engine_layers.py [--base REV] [--board qemu-m4] [--models kws ad ...] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from mcu_models import FIRMWARE_MODELS, ROOT

from edgebench.mcu import convert

#: the engine before issue 31's kernel work (the parent of e513167)
DEFAULT_BASE = "a931d60"
#: the MLPerf Tiny ids' short names (ic: ResNet-8) -> .tflite
MODELS = {"ic" if key == "resnet8" else key: path for key, path in FIRMWARE_MODELS.items()}


def profile(tree: Path, model: Path, board: str) -> list[dict]:
    """The per-layer rows of one ``edgebench profile --json`` run with the package and firmware of ``tree``."""
    env = dict(os.environ, PYTHONPATH=str(tree), EDGEBENCH_FIRMWARE_DIR=str(tree / "firmware"))
    with tempfile.TemporaryDirectory(prefix="eb-layers-") as cwd:
        p = subprocess.run([sys.executable, "-m", "edgebench", "profile", str(model), "--board", board,
                            "--repeat", "1", "--json"], cwd=cwd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        tail = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise SystemExit(f"profile of {model.name} with {tree} failed (exit {p.returncode}): {tail}")
    rows = json.loads(p.stdout)["extra"]["profile"]["layers"]
    return [{"index": r["index"], "op": r["op"], "macs": int(r.get("macs") or 0),
             "instructions": round(float(r["median_s"]) * 1e9)} for r in rows]


def zero_channels(model: Path) -> dict:
    """Layer index -> (output channels whose weights are all zero, output channels), from the
    converter (CONV_2D and FULLY_CONNECTED): an engine may write those channels' constant outputs
    without computing them (the DSP pointwise kernel does), so their MACs are counted but not done."""
    return {layer["index"]: (layer["zero_weight_channels"], layer["output_shape"][-1])
            for layer in convert(model).layers if "zero_weight_channels" in layer}


def per_mac(instructions: int, macs: int) -> float | None:
    return round(instructions / macs, 3) if macs else None


def join(before: list[dict], after: list[dict], zeros: dict) -> dict:
    if [r["op"] for r in before] != [r["op"] for r in after]:
        raise SystemExit("the two revisions' engines laid the model out differently: layers cannot be paired")
    total_b = sum(r["instructions"] for r in before)
    total_a = sum(r["instructions"] for r in after)
    macs = sum(r["macs"] for r in after)
    gain = total_b - total_a
    layers = []
    zero_macs = 0
    for b, a in zip(before, after):
        zero, oc = zeros.get(a["index"], (0, 1))
        zero_macs += a["macs"] * zero // oc
        layers.append({"index": a["index"], "op": a["op"], "macs": a["macs"],
                       "zero_weight_channels": zero, "output_channels": oc if a["index"] in zeros else None,
                       "instructions_before": b["instructions"], "instructions_after": a["instructions"],
                       "per_mac_before": per_mac(b["instructions"], a["macs"]),
                       "per_mac_after": per_mac(a["instructions"], a["macs"]),
                       "share_of_gain": round((b["instructions"] - a["instructions"]) / gain, 3) if gain else None})
    return {"instructions_before": total_b, "instructions_after": total_a, "macs": macs,
            "macs_in_zero_weight_channels": zero_macs,
            "per_mac_before": round(total_b / macs, 3), "per_mac_after": round(total_a / macs, 3), "layers": layers}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default=DEFAULT_BASE, help=f"git revision of the 'before' engine (default {DEFAULT_BASE})")
    ap.add_argument("--board", default="qemu-m4", choices=["qemu-m4", "qemu-m7"])
    ap.add_argument("--models", nargs="+", default=["kws", "ic", "vww", "ad"], choices=list(MODELS))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    base_dir = Path(tempfile.mkdtemp(prefix="eb-base-"))
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(base_dir), args.base], check=True)
    try:
        out = {"base": args.base, "board": args.board, "label": "emulated", "models": {}}
        for name in args.models:
            print(f"{name}: profiling at {args.base} and now ...", file=sys.stderr)
            out["models"][name] = join(profile(base_dir, MODELS[name], args.board),
                                       profile(ROOT, MODELS[name], args.board), zero_channels(MODELS[name]))
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base_dir)], check=False)
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print(f"emulated instructions ({args.board}, qemu -icount shift=0), engine at {args.base} -> this tree")
    for name, m in out["models"].items():
        print(f"\n{name}: {m['instructions_before']:,} -> {m['instructions_after']:,} instructions, "
              f"{m['per_mac_before']:.3f} -> {m['per_mac_after']:.3f} per MAC")
        if m["macs_in_zero_weight_channels"]:
            print(f"  ({m['macs_in_zero_weight_channels']:,} of the {m['macs']:,} MACs are in output channels whose "
                  "weights are all zero (column 'zero ch'): counted, but an engine may skip them)")
        print(f"{'#':>3} {'operator':18s} {'MACs':>9} {'before':>10} {'after':>10} {'/MAC before':>11} {'after':>6} "
              f"{'of gain':>7} {'zero ch':>8}")
        for r in m["layers"]:
            pb = f"{r['per_mac_before']:.2f}" if r["per_mac_before"] is not None else "-"
            pa = f"{r['per_mac_after']:.2f}" if r["per_mac_after"] is not None else "-"
            sg = f"{r['share_of_gain']:.1%}" if r["share_of_gain"] is not None else "-"
            zc = f"{r['zero_weight_channels']}/{r['output_channels']}" if r["zero_weight_channels"] else ""
            print(f"{r['index']:>3} {r['op']:18s} {r['macs']:>9,} {r['instructions_before']:>10,} "
                  f"{r['instructions_after']:>10,} {pb:>11} {pa:>6} {sg:>7} {zc:>8}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
