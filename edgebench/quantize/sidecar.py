"""Sidecar JSON beside each written model, and atomic writes (level 2).

The sidecar format is ``edgebench-model-sidecar`` version 1 (:mod:`edgebench.provenance`), the one
of models/digits/*.tflite.json (written by models/digits/build.py), with these keys
added by ``quantize``: ``derived_from`` (the source model and its sha256),
``baseline`` (the FP32 file the other variants were made beside), ``created_by``
and ``warnings``. ``calibration`` is filled for the INT8 model only (the others
are not calibrated). Nothing time- or host-dependent is written, so the same
inputs give the same sidecar bytes.

Writes: every file is first written to a hidden temporary file in its target
folder (``.NAME.XXXX.partial``) and flushed to disk, and only when every model
and sidecar of the run is on disk are they renamed into place, each model just
before its sidecar (an older sidecar at the target is removed first, so a model
is never left beside a sidecar describing other bytes). An interruption during
conversion or writing leaves no file under a final name; temporary files are
removed on the way out. A SIGKILL cannot remove them: their names carry the writer's
process id (``.NAME.PID.XXXX.partial``), and the next quantize writing into that folder
removes those of writers that are gone (:func:`remove_stale`).
"""
from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Optional

from edgebench import __version__
from edgebench.provenance import SIDECAR_FORMAT, SIDECAR_VERSION, check_sidecar
from edgebench.results.store import fsync_dir

_WEIGHT_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV", "CONV_3D")


def io_quantization(t):
    return [float(t.scale[0]), int(t.zero_point[0]) if t.zero_point else 0] if t.scale else None


def weights_quantization(report) -> list:
    """Quantization of the constant weight input of each conv/fully-connected operator."""
    out = []
    for layer in report.layers:
        if layer.op not in _WEIGHT_OPS or len(layer.inputs) < 2 or layer.inputs[1] < 0:
            continue
        w = report.tensors[layer.inputs[1]]
        n = len(w.scale)
        out.append({"op": layer.op, "op_index": layer.index, "weight_dtype": w.dtype,
                    "weight_shape": list(w.shape), "scales": n, "per_channel": n > 1,
                    "quantized_dimension": (w.quantized_dimension if n > 1 else 0) if n else None})
    return out


def build(role: str, report, source: dict, converter: dict, calibration, preprocessing,
          baseline, warnings: list, extra: Optional[dict] = None) -> dict:
    """The sidecar dict of one converted model (``report``: runtime.inspect.ModelReport; ``extra``: keys of
    its source's kind, e.g. an ONNX model's ``layout`` and ``lowering``), checked against its schema
    (:class:`edgebench.provenance.Sidecar`) before anything is written."""
    m = report.model
    inp, out = report.inputs[0], report.outputs[0]
    quantized_io = inp.dtype in ("int8", "uint8")
    wq = weights_quantization(report) if m.weights_dtype in ("int8", "uint8") else None
    return check_sidecar({
        "format": SIDECAR_FORMAT,
        "version": SIDECAR_VERSION,
        "model_sha256": m.sha256,
        "precision": m.precision,
        "weights_bits": m.weights_bits,
        "activations_bits": m.activations_bits,
        "input_dtype": inp.dtype,
        "output_dtype": out.dtype,
        "input_shape": list(inp.shape),
        "output_shape": list(out.shape),
        "input_quantization": io_quantization(inp) if quantized_io else None,
        "output_quantization": io_quantization(out) if out.dtype in ("int8", "uint8") else None,
        "preprocessing": preprocessing,
        "ops": sorted(report.operators),
        "weights_quantization": wq,
        "calibration": calibration,
        "converter": converter,
        "derived_from": source,
        "baseline": baseline,
        **(extra or {}),
        "created_by": f"edgebench {__version__} quantize ({role})",
        "warnings": [w.to_dict() for w in warnings],
    }, f"the {role} model's sidecar")


def dumps(data: dict) -> bytes:
    return (json.dumps(data, indent=2, sort_keys=False) + "\n").encode("utf-8")


def write_temp(target: Path, data: bytes) -> Path:
    """Write ``data`` to a hidden temporary file beside ``target``, flushed to disk."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=str(target.parent), prefix=f".{target.name}.{os.getpid()}.", suffix=".partial")
    try:
        os.fchmod(fd, 0o666 & ~_umask())      # mkstemp makes 0600; final files get the usual mode
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def remove_stale(targets) -> list:
    """Remove the temporary files (``.NAME.PID.XXXX.partial``) that a killed quantize left beside each
    of ``targets``: those of a process that is gone, and those of an older edgebench that put no
    process id in the name. Another live quantize's files are left alone. The paths removed."""
    removed = []
    for target in targets:
        target = Path(target)
        if not target.parent.is_dir():
            continue
        pattern = re.compile(re.escape(f".{target.name}.") + r"(?:(\d+)\.)?[^/]*\.partial$")
        for entry in target.parent.iterdir():
            m = pattern.match(entry.name)
            if m is None or (m.group(1) is not None and _alive(int(m.group(1)))):
                continue
            try:
                entry.unlink()            # a link planted under such a name: the link goes, not its target
                removed.append(entry)
            except OSError:
                pass
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def commit(pairs: list) -> None:
    """Rename ``[(model_tmp, model_path, sidecar_tmp, sidecar_path), ...]`` into place, in order."""
    for model_tmp, model_path, side_tmp, side_path in pairs:
        side_path.unlink(missing_ok=True)
        os.replace(model_tmp, model_path)
        os.replace(side_tmp, side_path)
    for folder in {p.parent for _, p, _, _ in pairs} | {p.parent for _, _, _, p in pairs}:
        fsync_dir(folder)


