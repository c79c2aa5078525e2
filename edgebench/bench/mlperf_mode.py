"""MLPerf Tiny compatibility mode (level 4): measure a DUT the way MLPerf Tiny's runner does.

Any board flashed with an MLPerf Tiny reference firmware (or the edgebench firmware, which
speaks the same dialect) is measured with only that dialect, through the board client's
``mlperf-mode`` capability (the device half, :mod:`edgebench.mcu.mlperf`): for each of five
windows a different input is loaded and ``infer N W`` runs W warm-ups and N timed inferences
of at least ``window_s`` (10 s, as the runner requires); the figure is the median of the
windows' throughputs.

The DUT's ``m-model-[..]`` (``profile%``) is compared with the model's MLPerf Tiny id
(``kws01``, ``ic01``, ``vww01``, ``ad01`` when recognisable, else the given ``model_id`` or
its name): a DUT that holds another model is a warning in the run. What the MLCommons
runner needs to drive the same DUT (its ``infer N W`` for the measured speed) is stored in
``extra.mlperf.runner`` (docs/mlperf-tiny.md).

The model must already be on the device: flashed with the reference firmware, or deployed
beforehand through the client's ``deploy`` capability (``deploy=True``, the default for boards
that run edgebench firmware). The dialect reports only the aggregate time of N inferences, so
there are no per-inference samples, no confidence interval of a median latency: the result
says so. The run goes through the run skeleton (:mod:`edgebench.bench.record`): its folder
appears ``running`` before the first window, and a stop keeps the windows measured
(``incomplete``).
"""
from __future__ import annotations

import dataclasses
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from edgebench import board_protocol as bp
from edgebench.bench.mac_rate import attach_mlperf
from edgebench.bench.record import RunFolder, Status, board_client, board_section, new_result, status_of
from edgebench.boards.profile import MCU_CLIENT
from edgebench.data.inputs import load_inputs, random_inputs
from edgebench.errors import EdgebenchError, InputWarning, UsageError
from edgebench.mcu.board import FIRMWARE_NAME
from edgebench.mcu.mlperf import encode, summary
from edgebench.mcu.mlperf_ids import (
    INPUT_ENCODINGS,
    RESULTS_MODES,
    RUNNER_MODELS,
    check_model_id,
    default_model_id,
    runner_model_for,
)
from edgebench.modelfile import read_model
from edgebench.results.conditions import (
    ModelSection,
    RuntimeSection,
    ScenarioSection,
    SettingsSection,
    SystemSection,
    TimingSection,
)
from edgebench.results.figures.energy import PowerSection
from edgebench.results.figures.latency import Throughput
from edgebench.results.figures.thermal import ThermalSection
from edgebench.results.kinds import MLPERF
from edgebench.results.model import RunResult, RunWarning

ENCODINGS = INPUT_ENCODINGS
RUNNER_SILENCE_S = 5.0     # the MLCommons runner gives up on a reply silent this long (serial_device.py)
RUNNER_MIN_LOOP_S = 10.0   # ... and flags a performance loop of 5 windows shorter than this (script.py)
RUNNER_WINDOW_S = 3.0      # a window length that satisfies both
Progress = Callable[[dict], None]


@dataclass
class MlperfOptions:
    windows: int = 5
    window_s: float = 10.0            # MLPerf Tiny: at least 10 s per window
    warmup: int = 10                  # W of `infer N W` (the reference's default)
    inputs: Optional[str] = None      # .npy/.npz; None: seeded random in range
    input_count: int = 5              # distinct inputs (one per window, cycled)
    seed: int = 0
    input_range: Optional[tuple] = None
    db_chunk_bytes: int = 32          # bytes per `db <hex>` (fits the reference's 80-char command buffer)
    # How the db bytes encode the input: int8; uint8-offset, bytes q+128 (ic01/vww01 reference firmware);
    # float32 (ad01). None: the reference firmware's for a recognised MLPerf Tiny model, else int8.
    input_encoding: Optional[str] = None
    # outputs, or mse: one anomaly score (ad01). None: mse for a recognised ad01 autoencoder, else outputs.
    results: Optional[str] = None
    model_id: Optional[str] = None    # the DUT's expected m-model-[..]; None: the MLPerf Tiny id or the name
    deploy: Optional[bool] = None     # upload with eb- first; None: when the firmware is edgebench's
    max_reruns: int = 3
    # on a QEMU Cortex-M board: also price one inference with the NUCLEO-L4R5ZI cycle model
    # (edgebench.mcu.cycles, label estimated) and set it against the published anchors
    estimate: bool = True

    def validate(self) -> None:
        if self.windows < 1 or self.window_s <= 0:
            raise UsageError("MLPerf mode needs at least one window of positive length")
        if self.warmup < 0 or self.input_count < 1 or self.db_chunk_bytes < 1:
            raise UsageError("warm-up must be >= 0, input count and db chunk size >= 1")
        if self.input_encoding is not None and self.input_encoding not in ENCODINGS:
            raise UsageError(f"unknown input encoding {self.input_encoding!r}", f"use {' or '.join(ENCODINGS)}")
        if self.results is not None and self.results not in RESULTS_MODES:
            raise UsageError(f"unknown results mode {self.results!r}", f"use {' or '.join(RESULTS_MODES)}")
        if self.model_id is not None:
            check_model_id(self.model_id)


def resolve(opts: MlperfOptions, model) -> MlperfOptions:
    """``opts`` with the model id, input encoding and results filled in: what is given, else the
    conventions of the reference firmware of the MLPerf Tiny benchmark the model recognisably is
    (so the DUT is left as the MLCommons runner expects), else int8 / outputs / the model's name."""
    ref = runner_model_for(model)
    same_size = int(np.prod(model.inputs[0].shape)) == int(np.prod(model.outputs[0].shape))
    return dataclasses.replace(
        opts, model_id=opts.model_id or default_model_id(model),
        input_encoding=opts.input_encoding or (ref.input_encoding if ref else "int8"),
        results=opts.results or (ref.results if ref and (ref.results != "mse" or same_size) else "outputs"))


def prepare(model_path, profile, opts: MlperfOptions, client, emit) -> tuple:
    """Read the model, build the inputs, deploy when asked; returns (model, input set, byte inputs, info)."""
    opts.validate()
    model = read_model(model_path)
    opts = resolve(opts, model)
    tensor = model.inputs[0].to_dict()
    if tensor["dtype"] != "int8" or not tensor.get("quant"):
        raise UsageError(f"{model.name}: MLPerf Tiny mode sends int8 inputs; this model's input is {tensor['dtype']}",
                         "quantize it: edgebench quantize MODEL --calib DATA")
    inset = (load_inputs(opts.inputs, tensor, limit=opts.input_count, model=model) if opts.inputs
             else random_inputs(tensor, count=opts.input_count, seed=opts.seed, override=opts.input_range))
    hello = client.hello()
    deploy = opts.deploy if opts.deploy is not None else hello["runtime"]["name"] == FIRMWARE_NAME
    if deploy:
        bp.require(client, bp.DEPLOY, "deploying the model before MLPerf Tiny mode")
        emit({"event": "deploy", "model": model.name})
        client.deploy(model, force=False, model_id=opts.model_id, input_encoding=opts.input_encoding,
                      results=opts.results)
    from edgebench.agent.quant import make_quantizer

    q = make_quantizer(tensor, [1] + list(tensor["shape"][1:]))
    encoding = opts.input_encoding
    assert encoding is not None       # resolve() set it
    data = [encode(q(inset.x[i:i + 1]).copy(), encoding, inset.x[i]) for i in range(len(inset.x))]
    return model, inset, data, hello, deploy, opts


def dut_checks(prof: dict, model, opts: MlperfOptions) -> list[RunWarning]:
    """Warnings (run.json shape) when the DUT's profile does not match what is benchmarked: another
    model id (``m-model-[..]``), another input encoding or results mode (edgebench firmware says)."""
    expected = opts.model_id or default_model_id(model)
    out = []
    if opts.input_encoding is None or opts.results is None:
        opts = resolve(opts, model)
    if prof.get("model") != expected:
        out.append(RunWarning(code="model-id-mismatch",
                              message=f"the DUT reports m-model-[{prof.get('model')}], the model benchmarked is "
                                      f"{model.name} (MLPerf Tiny id {expected}): the figures may be another model's",
                              remedy=f"put this model on the DUT (edgebench deploy {model.name} --model-id "
                                     f"{expected}), or benchmark the model the DUT holds"))
    for key, want in (("input", opts.input_encoding), ("results", opts.results)):
        if prof.get(key) is not None and prof[key] != want:
            out.append(RunWarning(code=f"{key}-mismatch",
                                  message=f"the DUT reads {key} as {prof[key]}, this run uses {want}",
                                  remedy=f"deploy with --{'input-encoding' if key == 'input' else 'results'} "
                                         f"{want}, or run with the DUT's setting"))
    return out


def runner_advice(model_id: str, perf: dict, emulated: bool) -> dict:
    """The ``infer N W`` that makes the MLCommons runner's performance script work on this DUT:
    each window under its 5 s reply silence, five of them over its 10 s loop minimum (host wall
    time, which under QEMU is not the emulated time the throughput comes from)."""
    walls = [w["host_wall_s"] / max(w["n"] + w["warmup"], 1) for w in perf["windows"] if w.get("host_wall_s")]
    per_wall = float(np.median(walls)) if walls else None
    ref = RUNNER_MODELS.get(model_id)
    stock = ref.runner_infer if ref else None
    warm = int(stock.split()[2]) if stock else 10
    n = max(1, int(RUNNER_WINDOW_S / per_wall) - warm) if per_wall else None
    stock_n = int(stock.split()[1]) if stock else None
    stock_ok = (None if per_wall is None or stock_n is None else
                5 * (stock_n + warm) * per_wall >= RUNNER_MIN_LOOP_S
                and (stock_n + warm) * per_wall < RUNNER_SILENCE_S)
    return {"model_id": model_id, "runner_knows_id": ref is not None, "stock_infer": stock,
            "stock_infer_works": stock_ok, "suggested_infer": f"infer {n} {warm}" if n else None,
            "host_wall_s_per_inference": per_wall,
            "rule": f"one window under {RUNNER_SILENCE_S:g} s of reply silence, five windows over "
                    f"{RUNNER_MIN_LOOP_S:g} s of host wall time (aimed at {RUNNER_WINDOW_S:g} s each)",
            "timing": ("emulated: the runner's throughput comes from the device's m-lap-us, emulated "
                       "instruction counts, not a real board's speed; its log shows it only in the profile "
                       "line (EMULATED)") if emulated else "measured by the device's own clock"}


def run_mlperf(model_path, profile, opts: MlperfOptions, runs_root="runs", url: Optional[str] = None,
               progress: Optional[Progress] = None, client=None) -> tuple[RunResult, Path]:
    """MLPerf Tiny performance mode on ``profile``'s board; the result and its run folder."""
    if profile.client_kind != MCU_CLIENT:
        raise UsageError(f"MLPerf Tiny mode drives a microcontroller's MLPerf Tiny firmware; board "
                         f"{profile.name} is a {profile.kind} board", "pick an MCU board (edgebench boards)")
    emit = progress or (lambda event: None)
    with board_client(profile, url, client, emit) as client:
        bp.require(client, bp.MLPERF_MODE, "MLPerf Tiny mode")
        model, inset, data, hello, deployed, opts = prepare(model_path, profile, opts, client, emit)
        prof = client.mlperf_profile()
        mismatches = dut_checks(prof, model, opts)
        for w in mismatches:                 # one warning: line each on the CLI, now, before the long run
            warnings.warn(f"{w.message}; {w.remedy}", InputWarning, stacklevel=2)
        result = describe(model, profile, client, hello, prof, inset, opts, deployed)
        result.warnings += mismatches
        folder = RunFolder(runs_root, model.name, profile.name)
        folder.start(result)
        done: list = []
        calibration: list = []
        t0 = time.monotonic()

        def measured(ev: dict) -> None:
            if ev.get("event") == "window-done":
                done.append(ev["window"])
                calibration[:] = ev["calibration"]
            emit(ev)

        def stop(status: str, reason: str) -> None:   # a stop keeps the windows measured so far
            finish(result, summary(done, calibration, opts.window_s), model, profile, opts, client, hello, prof,
                   time.monotonic() - t0, status_of(status), reason)
            folder.save(result)

        with folder.guard(stop, lambda: bool(done)):
            perf = client.mlperf_performance(data, windows=opts.windows, window_s=opts.window_s,
                                             warmup=opts.warmup, chunk_bytes=opts.db_chunk_bytes,
                                             max_reruns=opts.max_reruns, emit=measured)
            finish(result, perf, model, profile, opts, client, hello, prof, time.monotonic() - t0)
            folder.save(result)
    assert folder.path is not None      # started above
    return result, folder.path


def describe(model, profile, client, hello: dict, prof: dict, inset, opts: MlperfOptions, deployed: bool) -> RunResult:
    """The conditions of an MLPerf Tiny run, before its first window (a ``running`` run.json)."""
    result = new_result(MLPERF.name, "emulated" if hello.get("timing") == "emulated" else "measured")
    result.model = ModelSection.model_validate(model.to_dict())
    result.runtime = RuntimeSection(name=hello["runtime"]["name"], version=hello["runtime"]["version"],
                                    kernels="reference" if hello["runtime"]["name"] == FIRMWARE_NAME else "firmware",
                                    threads=1, delegate=None,
                                    op_resolver="the firmware's own engine", device_model=prof.get("model"))
    result.board = board_section(profile, client.description)
    result.board.system = SystemSection(board={"model": profile.title}, firmware=prof, dut_name=hello.get("dut_name"))
    # the dialect's own scenario keys (windows, encoding, ids) are not declared in ScenarioSection: kept as given
    result.scenario = ScenarioSection.model_validate(
        {"name": "mlperf-tiny-performance", "batch": 1, "inputs": inset.describe(),
         "windows": opts.windows, "window_s": opts.window_s, "warmup": opts.warmup,
         "input_encoding": opts.input_encoding, "results": opts.results,
         "model_id": opts.model_id, "dut_model_id": prof.get("model"),
         "db_chunk_bytes": opts.db_chunk_bytes, "model_deployed_by_edgebench": bool(deployed)})
    result.timing = TimingSection(clock="the device's m-lap-us timestamps (µs) around N inferences",
                                  e2e_includes="N back-to-back inferences on the device, each with the firmware's "
                                               "copy of the input into the model",
                                  excludes="the db input upload (before the window), the W warm-up inferences, any "
                                           "host work; only the aggregate of N is known (no per-inference samples)")
    result.power = PowerSection(measured=False, note="no power meter: energy not measured (MLPerf Tiny energy mode "
                                                     "needs an energy monitor and the 9600-baud firmware build)")
    result.settings = SettingsSection.model_validate(
        {"procedure": "MLPerf Tiny performance mode (fixed: no precision-based stopping rule)",
         "windows": opts.windows, "window_s": opts.window_s, "warmup": opts.warmup, "seed": opts.seed})
    return result


def finish(result: RunResult, perf: dict, model, profile, opts: MlperfOptions, client, hello: dict, prof: dict,
           wall_s: float, status: Status = "complete", reason: Optional[str] = None) -> None:
    """The figures of the windows measured (all of them, or those before a stop) into ``result``."""
    label = result.label
    thermal = client.thermal() if hello.get("dialect") == "edgebench" and status == "complete" else {"available": False}
    med = perf["median_per_s"]
    result.status, result.status_reason = status, reason
    result.throughput = Throughput(per_s=med, label=label,
                                   definition=f"median over {len(perf['windows'])} windows of N / (second m-lap-us - "
                                              f"first), each at least {opts.window_s:g} s on a different input "
                                              "(MLPerf Tiny performance mode)")
    result.thermal = ThermalSection(available=bool(thermal.get("available")), start=thermal, end=thermal)
    result.settings.wall_s = wall_s
    result.warnings = [w for w in result.warnings if w.code not in ("window-too-short", "short-windows")]
    if not perf["all_windows_long_enough"]:
        result.warnings.append(RunWarning(code="window-too-short",
                                          message=f"a window stayed below {opts.window_s:g} s after reruns",
                                          remedy="check the device's m-lap-us clock"))
    if opts.window_s < 10.0:
        result.warnings.append(RunWarning(code="short-windows", message=f"windows of {opts.window_s:g} s: shorter "
                                          "than MLPerf Tiny's 10 s", remedy="use the default window length for "
                                          "figures comparable with MLPerf Tiny results"))
    result.extra.mlperf = {**perf, "latency_s": 1.0 / med if med else None,
                           "latency_definition": "1 / median throughput (mean per inference, not a median "
                                                 "of per-inference samples)",
                           "runner": runner_advice(prof.get("model") or "", perf, label == "emulated")}
    claim = _claim(result, med, model, profile, opts, len(perf["windows"]))
    if bp.LINK_REPORT in client.capabilities:
        # the figures came as plain-dialect lines (db, infer): no checksum, whatever the firmware;
        # RunFolder.save turns extra.link into its warnings
        result.extra.link = {**client.link_report(), "checked": False}
        claim += (" Unchecked link: the MLPerf Tiny dialect carries no checksum (timestamps "
                  "checked for order and count only).")
    result.extra.claim = claim
    attach_mlperf(result, profile, model.path)     # instructions/cycles per MAC from the mean latency
    if opts.estimate and status == "complete":
        attach_estimate(result, profile, model.path, opts.model_id)


def attach_estimate(result: RunResult, profile, model_path, model_id: Optional[str]) -> Optional[dict]:
    """On an emulated Cortex-M board under QEMU: ``extra.cycle_estimate``, one inference priced by
    the NUCLEO-L4R5ZI cycle model (label ``estimated``, never the run's figure), and
    ``extra.anchors``, the published MLPerf Tiny figures for ``model_id`` beside it. A board,
    model or machine it cannot serve gets the reason instead (the run itself is unaffected)."""
    fw = getattr(profile, "firmware", None)
    if result.label != "emulated" or getattr(fw, "emulator", None) != "qemu":
        return None
    # here, not at the top: the cycle model may lack an optional dependency (ImportError below), and
    # only an emulated QEMU run asks for it
    from edgebench.mcu.anchors import compare
    from edgebench.mcu.cycles import estimate_model

    try:
        est = estimate_model(model_path)
    except (EdgebenchError, ImportError) as e:
        est = {"available": False, "label": "estimated",
               "reason": getattr(e, "message", None) or f"{type(e).__name__}: {e}"}
    else:
        est["available"] = True
        est.pop("layers", None)
    result.extra.cycle_estimate = est
    result.extra.anchors = compare(model_id, est) if est["available"] else None
    return est


def _claim(result, med, model, profile, opts, windows: int) -> str:
    if not med:
        return "no throughput measured"
    stopped = "" if result.status == "complete" else f"INCOMPLETE ({result.status_reason}): "
    return (f"{stopped}{med:,.1f} inferences/s (median of {windows} windows of at least {opts.window_s:g} s, "
            f"MLPerf Tiny performance mode; mean latency {1e3 / med:.3f} ms) for {model.name} "
            f"{model.precision.upper()} on {profile.title} ({result.runtime.name} "
            f"{result.runtime.version}), {result.label}. Aggregate of N inferences only: no per-inference "
            "distribution. Energy not measured.")


__all__ = ["MlperfOptions", "run_mlperf", "prepare", "resolve", "dut_checks", "runner_advice", "describe", "finish",
           "attach_estimate"]
