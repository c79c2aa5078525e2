"""Validation on target (level 4): the board's outputs against the host's reference kernels.

:func:`run_verify` runs the same inputs (seeded random in the model's input range, or a
user file) through the model on the board (through :func:`edgebench.boards.connect.open_client`:
the Linux agent, or a microcontroller's firmware) and through LiteRT with
``OpResolverType.BUILTIN_REF`` in a child process on this computer (the local agent),
then compares the raw output tensors: how many output bytes differ and the largest
difference in LSB (units of the output's quantization step) per output.

A board whose profile promises bit-exactness (``firmware.bit_exact`` on a
microcontroller running edgebench firmware) *fails* when any byte differs: the result's
``gate`` says so and the CLI exits with status 2. Elsewhere (Linux boards with XNNPACK or
builtin kernels, MLPerf Tiny reference firmware) differences are expected and reported.
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, Optional

import numpy as np

from edgebench import board_protocol as bp
from edgebench import ranges as R
from edgebench.bench.record import Label, RunFolder, board_section, new_result
from edgebench.boards.connect import open_client
from edgebench.boards.registry import get_profile
from edgebench.data.inputs import load_inputs, random_inputs
from edgebench.errors import UsageError
from edgebench.mcu.board import FIRMWARE_NAME
from edgebench.modelfile import read_model
from edgebench.ranges import check_fields
from edgebench.results.conditions import BoardSection, ModelSection, RuntimeSection, ScenarioSection
from edgebench.results.figures.verify import VerifyFigure
from edgebench.results.model import RunResult, RunWarning

Progress = Callable[[dict], None]


@dataclass
class VerifyOptions:
    inputs: Optional[str] = None      # .npy/.npz; None: seeded random in range
    count: int = 32
    seed: int = 0
    input_range: Optional[tuple] = None
    kernels: Optional[str] = None     # the board's kernels (Linux); None: xnnpack on Linux
    cpus: Optional[str] = None        # pin a local agent to these CPUs ("0", "2,3")

    def validate(self) -> None:
        check_fields(self, {"count": R.COUNT, "seed": R.SEED})
        if self.kernels is not None and self.kernels not in ("xnnpack", "builtin", "reference"):
            raise UsageError(f"unknown kernel set {self.kernels!r}", "use xnnpack, builtin or reference")


@dataclass
class VerifyResult:
    """Board vs reference outputs; ``gate`` decides the exit status."""

    created_utc: str
    board: dict
    model: dict
    device: dict
    reference: dict
    inputs: dict
    outputs: list
    bit_exact: bool
    gate: dict
    label: Label = "measured"
    notes: list = field(default_factory=list)
    format: str = "edgebench-verify"
    schema_version: int = 1
    run_id: Optional[str] = None          # the stored run (``runs_root`` given), else None
    run_dir: Optional[str] = None

    @property
    def failed(self) -> bool:
        return self.gate.get("passed") is False

    def to_dict(self) -> dict:
        return asdict(self)

    #: what of a VerifyResult a stored run keeps under ``extra.verify`` (the rest has its own sections)
    STORED = ("device", "reference", "outputs", "bit_exact", "gate", "notes")

    @classmethod
    def from_run(cls, result: RunResult, run_dir=None) -> "VerifyResult":
        """The VerifyResult a stored ``verify`` run holds (for ``edgebench runs ID``): the JSON
        ``verify --json`` prints, so its sections as plain dicts."""
        v = result.extra.verify.to_dict()
        empty: Dict[str, Any] = {"outputs": [], "notes": [], "bit_exact": None}  # the rest: {} where a run lacks it
        stored: Dict[str, Any] = {k: v.get(k) if v.get(k) is not None else empty.get(k, {}) for k in cls.STORED}
        return cls(created_utc=result.created_utc, board=result.board.to_dict(), model=result.model.to_dict(),
                   inputs=result.scenario.inputs.to_dict(), label=result.label,
                   run_id=result.run_id, run_dir=str(run_dir) if run_dir else None, **stored)


def compare_outputs(device: np.ndarray, reference: np.ndarray, name: str = "output 0",
                    quant: Optional[dict] = None) -> dict:
    """Differing bytes, differing samples and the largest difference in LSB of one output."""
    a, b = np.asarray(device), np.asarray(reference)
    if a.shape != b.shape or a.dtype != b.dtype:
        raise UsageError(f"{name}: device gave {a.dtype}{list(a.shape)}, reference {b.dtype}{list(b.shape)}")
    n = len(a)
    ab = a.reshape(n, -1).view(np.uint8) if n else a.reshape(0, 0)
    bb = b.reshape(n, -1).view(np.uint8) if n else b.reshape(0, 0)
    bytes_diff = ab != bb
    out: Dict[str, Any] = {"name": name, "dtype": str(a.dtype), "shape": list(a.shape[1:]), "samples": int(n),
           "bytes": int(ab.size), "differing_bytes": int(bytes_diff.sum()),
           "differing_samples": int(bytes_diff.any(axis=1).sum()) if n else 0}
    if a.dtype.kind in "iu":
        diff = np.abs(a.astype(np.int64) - b.astype(np.int64)).reshape(n, -1)
        out.update({"unit": "LSB", "max_diff_lsb": int(diff.max()) if diff.size else 0,
                    "mean_abs_diff_lsb": float(diff.mean()) if diff.size else 0.0,
                    "elements_off_by": {str(k): int((diff == k).sum()) for k in np.unique(diff) if k > 0}})
        if quant:
            out["max_diff_real"] = out["max_diff_lsb"] * float(np.ravel(quant["scale"])[0])
    else:
        diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
        out.update({"unit": "absolute (float output: no LSB)", "max_diff_lsb": None,
                    "max_abs_diff": float(diff.max()) if diff.size else 0.0})
    out["top1_agreement"] = _top1(a, b)
    return out


def _top1(a: np.ndarray, b: np.ndarray) -> Optional[float]:
    if a.ndim < 2 or a.reshape(len(a), -1).shape[1] < 2 or not len(a):
        return None
    return float(np.mean(a.reshape(len(a), -1).argmax(1) == b.reshape(len(b), -1).argmax(1)))


def promises_bit_exact(profile, hello: dict) -> bool:
    """Only a board whose profile's firmware says so (a microcontroller), running edgebench firmware."""
    fw = profile.firmware
    runtime = (hello.get("runtime") or {}).get("name")
    return bool(fw is not None and fw.bit_exact and runtime == FIRMWARE_NAME)


def _outputs(out: dict) -> list:
    keys = ["y"] + sorted((k for k in out if k.startswith("y") and k[1:].isdigit()), key=lambda k: int(k[1:]))
    return [out[k] for k in keys if k in out]


def per_input_frame(dev: list, ref: list):
    """One row per input and output: differing bytes and the largest difference (LSB for integer
    outputs, absolute for float ones) -- the samples of a stored verify run."""
    import pandas as pd  # ~1 s to import (measured): only when a verify run is stored

    rows = []
    for k, (a, b) in enumerate(zip(dev, ref)):
        a, b = np.asarray(a), np.asarray(b)
        n = len(a)
        if a.shape != b.shape or not n:
            continue
        differ = (a.reshape(n, -1).view(np.uint8) != b.reshape(n, -1).view(np.uint8)).sum(axis=1)
        diff = np.abs(a.astype(np.float64) - b.astype(np.float64)).reshape(n, -1).max(axis=1)
        rows.append(pd.DataFrame({"input_index": np.arange(n, dtype=np.int64), "output": np.full(n, k),
                                  "differing_bytes": differ.astype(np.int64), "max_diff": diff}))
    cols = {"input_index": "int64", "output": "int64", "differing_bytes": "int64", "max_diff": "float64"}
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame({c: pd.Series(dtype=t) for c, t in cols.items()})


def store_verify(v: VerifyResult, runs_root, frame) -> None:
    """Store ``v`` as a ``verify`` run (run.json + per-input samples) through the run skeleton,
    complete at once (nothing is stored for a verify stopped before both sides answered)."""
    result = new_result("verify", v.label)
    result.status = "complete"
    result.model, result.board = ModelSection.model_validate(v.model), BoardSection.model_validate(v.board)
    runtime = v.device.get("runtime") or {}            # what the board's agent said: a free-form reply
    result.runtime = RuntimeSection(name=runtime.get("name"), version=runtime.get("version"),
                                    kernels=v.device.get("kernels"), op_resolver=v.device.get("op_resolver"))
    result.scenario = ScenarioSection(name="verify", inputs=v.inputs)
    result.extra.verify = VerifyFigure.model_validate({k: getattr(v, k) for k in VerifyResult.STORED})
    if v.failed:
        result.warnings.append(RunWarning(code="not-bit-exact", message=v.gate.get("reason"),
                                          remedy="a firmware/engine bug: report it with this model and the run "
                                                 "folder"))
    folder = RunFolder(runs_root, v.model["name"], v.board["name"])
    folder.start(result)
    folder.save(result, frame)
    v.run_id, v.run_dir = result.run_id, str(folder.path)


def run_verify(model_path, profile, opts: VerifyOptions, url: Optional[str] = None, client=None,
               reference_client=None, progress: Optional[Progress] = None, runs_root=None) -> VerifyResult:
    """Run ``opts``' inputs on the board and on the host reference kernels; compare; with
    ``runs_root``, store the comparison as a ``verify`` run there."""
    opts.validate()
    model = read_model(model_path)
    emit = progress or (lambda event: None)
    tensor = model.inputs[0].to_dict()
    inputs = (load_inputs(opts.inputs, tensor, limit=opts.count, model=model)
              if opts.inputs
              else random_inputs(tensor, count=opts.count, seed=opts.seed, override=opts.input_range))
    kernels = opts.kernels or "xnnpack"      # a microcontroller runs its firmware's engine whatever is asked
    opened = []
    try:
        if client is None:
            emit({"event": "connect", "board": profile.name})
            client = open_client(profile, url, cpus=opts.cpus)
            opened.append(client)
        hello = client.hello()
        sha = client.ensure_model(model)
        loaded = client.load(sha, kernels=kernels, threads=1, name=model.name)
        emit({"event": "infer", "where": profile.name, "n": len(inputs.x)})
        bp.require(client, bp.OUTPUTS, f"verify on board {profile.name}")
        dev_out = client.infer_all(inputs.x)
        dev = _outputs(dev_out)
        link = client.link_report() if bp.LINK_REPORT in client.capabilities else None   # a serial link's checks
        if reference_client is None:
            emit({"event": "connect", "board": "host (reference kernels, child process)"})
            reference_client = open_client(get_profile("host"))
            opened.append(reference_client)
        ref_hello = reference_client.hello()
        rsha = reference_client.ensure_model(model)
        ref_loaded = reference_client.load(rsha, kernels="reference", threads=1, name=model.name)
        emit({"event": "infer", "where": "host reference", "n": len(inputs.x)})
        ref = _outputs(reference_client.infer_all(inputs.x))
    finally:
        for c in opened:
            c.close()
    n_out = min(len(dev), len(ref))
    details = loaded.get("outputs") or []
    outputs = [compare_outputs(dev[k], ref[k], name=(details[k]["name"] if k < len(details) else f"output {k}"),
                               quant=(details[k].get("quant") if k < len(details) else None))
               for k in range(n_out)]
    exact = all(o["differing_bytes"] == 0 for o in outputs)
    promised = promises_bit_exact(profile, hello)
    if promised:
        gate = {"applies": True, "passed": exact,
                "rule": "bit-exact with the reference kernels (the board's profile promises it)",
                "reason": None if exact else "outputs differ from the reference kernels"}
    else:
        ran = loaded.get("kernels", kernels)
        why = ("the board's profile does not promise bit-exact outputs" if profile.firmware is not None
               else f"{ran} kernels are not the reference kernels: differences are expected and reported"
               if ran != "reference"
               else "reference kernels on a Linux board: reported, not gated (runtime versions may differ)")
        gate = {"applies": False, "passed": None, "rule": None, "reason": why}
    notes = []
    if n_out < max(len(dev), len(ref)):
        notes.append(f"compared {n_out} output(s): the board returned {len(dev)}, the reference {len(ref)}")
    if dev_out.get("note"):        # what the board's client did differently (a microcontroller: host quantization)
        notes.append(dev_out["note"])
    if link and (link.get("retries") or link.get("upload_restarts")):
        notes.append(f"the serial link needed {link['retries']} retries and {link['upload_restarts']} upload "
                     f"restarts ({link['discarded_lines']} damaged lines discarded; only CRC-checked replies used)")
    if link and link.get("checked") is False:
        notes.append("unchecked link: the plain MLPerf Tiny dialect carries no checksum (inputs read back, "
                     "scores read until two reads agree)")
    result = VerifyResult(
        created_utc=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        board=board_section(profile, client.description).to_dict(),    # plain, as from_run's: --json prints it
        model={"name": model.name, "path": model.path, "sha256": model.sha256, "precision": model.precision},
        device={"runtime": hello.get("runtime"), "kernels": loaded.get("kernels", kernels),
                "op_resolver": loaded.get("op_resolver"), "timing": hello.get("timing"), "link": link},
        reference={"runtime": ref_hello.get("runtime"), "kernels": ref_loaded.get("kernels"),
                   "op_resolver": ref_loaded.get("op_resolver"), "where": "this computer, a child process"},
        inputs=inputs.describe(), outputs=outputs, bit_exact=exact, gate=gate,
        label="measured", notes=notes)
    if runs_root is not None:
        store_verify(result, runs_root, per_input_frame(dev[:n_out], ref[:n_out]))
    return result


__all__ = ["VerifyOptions", "VerifyResult", "run_verify", "store_verify", "per_input_frame", "compare_outputs",
           "promises_bit_exact"]
