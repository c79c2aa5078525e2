"""Does the INT8 model compute what the FP32 baseline computes? The check after conversion.

:func:`measure` runs the FP32 baseline and the INT8 model on the same samples (up to
:data:`AGREEMENT_SAMPLES` of the calibration data) in a child process -- an INT8 model
can crash the interpreter that runs it -- and compares their outputs, per output:

* a classifier's output (shape ``N x C``, ``C >= 2``, or ``N x C x 1 x 1``): **top-1 agreement**, the share of
  samples on which both models pick the same class;
* any other output (regression, detection maps, embeddings): the **SQNR** in dB
  (``10 log10(sum y^2 / sum (y - y_int8)^2)``, the INT8 output dequantized) and the
  relative error ``||y - y_int8|| / ||y||``.

:func:`verdict` turns the worst output's figure into a warning below the soft threshold
(:data:`WARN_AGREEMENT`, :data:`WARN_SQNR_DB`) and a ``ModelError`` below the hard one
(``QuantizeOptions.min_agreement``, ``min_sqnr_db``; default :data:`MIN_AGREEMENT`,
:data:`MIN_SQNR_DB`), which quantize raises before it renames any file into place.
The samples are the calibration samples: the INT8 model was calibrated on them, so the
figure is optimistic; it catches a broken conversion, it does not measure accuracy
(``edgebench accuracy`` does, on held-out data).

The child is ``python -m edgebench.quantize.agreement FP32 INT8 BATCH``: the samples come
as ``.npy`` bytes on stdin, the figures go back as one JSON object on stdout; nothing is
written to disk.
"""
from __future__ import annotations

import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Optional

import numpy as np

from edgebench.errors import ModelError
from edgebench.quantize.checks import run_tflite
from edgebench.quantize.result import QuantizeWarning

AGREEMENT_SAMPLES = 256     # calibration samples both models run on
WARN_AGREEMENT = 0.95       # top-1 agreement below this: a warning
MIN_AGREEMENT = 0.80        # below this (default of --min-agreement): quantize refuses the model
WARN_SQNR_DB = 20.0         # SQNR below this: a warning
MIN_SQNR_DB = 10.0          # below this (default of --min-sqnr): quantize refuses the model
CHILD_TIMEOUT_S = 600


def compare(fp32_outputs: list, int8_outputs: list, names: Optional[list] = None) -> dict:
    """The agreement figures of each output pair (float arrays ``samples x ...``)."""
    outs = []
    for k, (y, yq) in enumerate(zip(fp32_outputs, int8_outputs)):
        y, yq = np.asarray(y, dtype=np.float64), np.asarray(yq, dtype=np.float64)
        name = names[k] if names else f"output {k}"
        classes = [d for d in y.shape[1:] if d != 1]          # N x C, or N x C x 1 x 1 (a Conv head)
        if y.ndim >= 2 and len(classes) == 1 and classes[0] >= 2:
            y, yq = y.reshape(y.shape[0], -1), yq.reshape(yq.shape[0], -1)
            same = np.argmax(y, axis=1) == np.argmax(yq, axis=1)
            outs.append({"name": name, "kind": "classification", "samples": int(y.shape[0]),
                         "top1_agreement": float(np.mean(same)) if same.size else None})
        else:
            signal, noise = float(np.sum(y * y)), float(np.sum((y - yq) ** 2))
            sqnr = math.inf if noise == 0 else (10 * math.log10(signal / noise) if signal > 0 else -math.inf)
            outs.append({"name": name, "kind": "regression", "samples": int(y.shape[0]),
                         "sqnr_db": sqnr if math.isfinite(sqnr) else (None if sqnr < 0 else "inf"),
                         "relative_error": math.sqrt(noise / signal) if signal > 0 else None,
                         "max_abs_error": float(np.max(np.abs(y - yq))) if y.size else 0.0})
    return {"samples": int(np.asarray(fp32_outputs[0]).shape[0]) if fp32_outputs else 0, "outputs": outs,
            "basis": "measured (LiteRT builtin kernels, calibration samples)"}


def _sqnr(o: dict) -> float:
    v = o["sqnr_db"]
    return math.inf if v == "inf" else (-math.inf if v is None else float(v))


def verdict(figures: dict, min_agreement: float = MIN_AGREEMENT, min_sqnr_db: float = MIN_SQNR_DB
            ) -> Optional[QuantizeWarning]:
    """None when every output agrees; a warning below the soft thresholds; ModelError below the hard ones."""
    worst = None
    for o in figures["outputs"]:
        if o["kind"] == "classification" and o["top1_agreement"] is not None:
            value, hard, soft = o["top1_agreement"], min_agreement, max(WARN_AGREEMENT, min_agreement)
            text = f"top-1 agreement {value:.1%} with the FP32 baseline at output {o['name']!r}"
            limit = f"{hard:.0%} (--min-agreement)"
        elif o["kind"] == "regression":
            value, hard, soft = _sqnr(o), min_sqnr_db, max(WARN_SQNR_DB, min_sqnr_db)
            rel = o["relative_error"]
            text = (f"SQNR {value:.1f} dB against the FP32 baseline at output {o['name']!r}"
                    + (f" (relative error {rel:.3g})" if rel is not None else ""))
            limit = f"{hard:g} dB (--min-sqnr)"
        else:
            continue
        margin = (value - soft) / max(abs(soft), 1e-9)
        if value < soft and (worst is None or margin < worst[0]):
            worst = (margin, value < hard, text, limit)
    if worst is None:
        return None
    _, refuse, text, limit = worst
    where = f"on {figures['samples']} calibration samples"
    if refuse:
        raise ModelError(f"the INT8 model does not compute what the FP32 model does: {text} {where}, "
                         f"below {limit}; nothing was written",
                         "a layer whose range calibration cannot cover (an outlier activation, a bad "
                         "calibration set): edgebench inspect --layers on the INT8 model shows which; "
                         "lower the limit only if the figure is expected")
    return QuantizeWarning("low-agreement", f"the INT8 model differs from the FP32 model: {text} {where}",
                           "check it on held-out data with edgebench accuracy before trusting it", "int8",
                           tuple(figures["outputs"]))


def measure(fp32_path, int8_path, x: np.ndarray, batch: int) -> dict:
    """Both models on up to :data:`AGREEMENT_SAMPLES` of ``x``, in a child process; their figures."""
    n = (min(x.shape[0], AGREEMENT_SAMPLES) // batch) * batch
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(x[:n]), allow_pickle=False)
    root = str(Path(__file__).resolve().parents[2])      # this edgebench, whether installed or not
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)}
    try:
        proc = subprocess.run([sys.executable, "-m", "edgebench.quantize.agreement", str(fp32_path),
                               str(int8_path), str(batch)], input=buf.getvalue(), capture_output=True,
                              timeout=CHILD_TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired:
        raise ModelError(f"running the INT8 and FP32 models on {n} samples took over {CHILD_TIMEOUT_S} s",
                         "calibrate with fewer samples (--calib-count)") from None
    if proc.returncode != 0:
        tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        why = (f"killed by signal {-proc.returncode}" if proc.returncode < 0
               else (tail[-1][:300] if tail else f"exit status {proc.returncode}"))
        raise ModelError(f"the INT8 model could not be run against the FP32 model ({why}); nothing was written",
                         "a crash in the interpreter on this model: report it with the model")
    return json.loads(proc.stdout)


def _child(argv: list) -> None:  # pragma: no cover - runs in the child process

    fp32_path, int8_path, batch = argv[0], argv[1], int(argv[2])
    x = np.load(io.BytesIO(sys.stdin.buffer.read()), allow_pickle=False)
    with open(fp32_path, "rb") as f:
        fp32 = f.read()
    with open(int8_path, "rb") as f:
        int8 = f.read()
    y, names = run_tflite(fp32, x, batch, with_names=True)
    yq = run_tflite(int8, x, batch)
    sys.stdout.write(json.dumps(compare(y, yq, names)))


if __name__ == "__main__":  # pragma: no cover
    _child(sys.argv[1:])
