"""The microcontroller board client (level 2, used by boards/): the agent interface over the firmware protocol.

:class:`McuClient` exposes the client interface of the Linux agent
(:class:`~edgebench.transport.client.AgentClient`) over the firmware protocol
(:class:`~edgebench.mcu.protocol.DutClient`), so ``run_bench`` and ``run_accuracy``
drive a microcontroller unchanged. What differs is stated in what it returns: inputs
are quantized on the host (outside the device timing: ``prep_ns`` is 0), each input is
uploaded before its inferences, and the device times each inference with its own
counter (``invoke_ns`` = ``e2e_ns`` = ticks / counter-hz; ``set_ns`` = ``get_ns`` = 0).

What it took to get intact answers over the link (:meth:`McuClient.link_report`) is in
``status()["link"]``; the benchmarks store it as ``extra.link`` in run.json.
:func:`open_mcu` opens one (for :func:`edgebench.boards.connect.open_client`), starting the board's
emulator when its profile says so.
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from edgebench import board_protocol as bp
from edgebench.agent.quant import dequantize, make_quantizer
from edgebench.errors import AgentError, DataError, ModelError, TransportError, UsageError
from edgebench.mcu.blob import convert
from edgebench.mcu.firmware import FirmwareSession
from edgebench.mcu.frames import crc32
from edgebench.mcu.mlperf import accuracy_scores, performance
from edgebench.mcu.mlperf_ids import (
    INPUT_ENCODINGS,
    RESULTS_MODES,
    check_choice,
    check_model_id,
    default_model_id,
    runner_model_for,
    runner_note,
)
from edgebench.mcu.protocol import EB_PROTO, DutClient, clock_of
from edgebench.mcu.serial_ports import resolve_url
from edgebench.mcu.upload import DEFAULT_WINDOW
from edgebench.modelfile import ModelFile

FIRMWARE_NAME = "edgebench-firmware"
MLPERF_NAME = "mlperf-tiny-reference"
MAX_TICKS_PER_CALL = 32          # one m-eb-t line
TARGET_CALL_S = 0.05             # device time aimed at per eb-infer call in run()
UPLOAD_TRIES = 3                 # an upload whose outcome is unknown is started again, whole
UPLOAD_RESTART_S = 0.5           # ... if at least this much of the call's recovery budget is left
HOST_QUANTIZED = "inputs quantized on the host with the same rule as the reference (round half to even)"
FIRST_CALL_WAIT_S = 60.0         # the first inference of a model, before anything says how long it takes


@dataclass
class DeployReport:
    """What ``deploy`` did: the model, its blob, the upload and the device's load reply."""

    board: str
    model: dict
    blob_bytes: int
    peak_arena_bytes: int | None
    flash_bytes: int | None
    device: dict
    upload: dict
    loaded: dict
    converter: dict = field(default_factory=dict)
    # MLPerf Tiny compatibility: model_id (profile%'s m-model-[..]), input_encoding, results,
    # runner_model (the benchmark it is recognisably one of), note (what the MLCommons runner would trip over)
    mlperf: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


class McuClient:
    """The board-client interface (:class:`~edgebench.board_protocol.BoardClient`) over a device
    running edgebench (or MLPerf Tiny) firmware."""

    def __init__(self, dut, profile, session: FirmwareSession | None = None):
        self.dut = dut
        self.profile = profile
        self.session = session
        self.description = dut.description + (f", {session.describe()}" if session else "")
        self.info: dict = {}
        self.dialect: str | None = None
        self._models: dict = {}           # sha -> ModelFile
        self._deployed: dict = {}         # sha -> DeployReport
        self._loaded_sha: str | None = None
        self._on_device: str | None = None  # sha of the model the device holds now
        self._pool: np.ndarray | None = None   # int8 inputs (N, bytes)
        self._input_on_device: int | None = None
        self._tick_s: float | None = None   # device seconds of one inference of the loaded model (median)
        self._need_s: float | None = None   # host wall seconds one inference of it needs at most (measured)
        self._hello: dict | None = None

    # -- information ------------------------------------------------------------------
    def hello(self) -> dict:
        if self._hello is not None:
            return self._hello
        with self.dut.call():     # end_uploads, sync, resync and info: one recovery budget
            return self._hello_call()

    def _hello_call(self) -> dict:
        if not self.profile.mlperf_only:
            self.dut.end_uploads()        # whatever an earlier, killed session left the device in
        name = self.dut.sync()
        if self.profile.mlperf_only:
            self.dialect = "mlperf"       # never send eb- commands to it
        else:
            try:
                self.dut.resync()
                self.info = self.dut.info()
                self.dialect = "edgebench"
            except AgentError as exc:
                if "does not know" not in exc.message:
                    raise
                self._refuse_old_protocol()
                self.dialect = "mlperf"
        self.dut.stats.checked = self.dialect == "edgebench"
        if self.dialect == "edgebench":
            runtime = {"name": FIRMWARE_NAME, "version": str(self.info["engine"])}
            # an image built for silicon says "real"; under an emulator it is not
            timing = "emulated" if self.session is not None and not self.session.keeps_time else self.info["timing"]
        else:
            prof = self.dut.profile()
            runtime = {"name": MLPERF_NAME, "version": prof.get("profile") or "unknown"}
            kind = self.profile.firmware.emulator_kind if self.profile.firmware else None
            timing = "emulated" if kind and kind.emulated else "real"
        self._hello = {"protocol": f"mlperf-tiny+eb{self.info.get('proto')}" if self.info else "mlperf-tiny",
                       "agent_version": f"{runtime['name']} {runtime['version']}", "runtime": runtime,
                       "runtime_error": None, "timing": timing, "dialect": self.dialect, "dut_name": name,
                       "firmware": dict(self.info), "python": None, "numpy": None, "pid": None}
        return self._hello

    def _refuse_old_protocol(self) -> None:
        """A firmware that does not know eb-sync may be an older edgebench one: say so, not 'MLPerf'."""
        reply = self.dut.command("eb-info", ok_errors=True)
        proto = reply.bracket("m-eb-proto-")
        if proto is not None:
            raise AgentError(f"{self.dut.description} speaks edgebench protocol {proto}, this host {EB_PROTO}",
                             hint="rebuild/flash the firmware of this edgebench version (edgebench flash)")

    @property
    def capabilities(self) -> frozenset:
        """Outputs, a link report and MLPerf Tiny mode always; per-layer timing and deploying a model
        with edgebench's extensions (known after ``hello``). No fixed-rate: the firmware has no
        device-side scheduler."""
        self.hello()
        extra = {bp.LAYER_TIMING, bp.DEPLOY} if self.dialect == "edgebench" else set()
        return frozenset({bp.OUTPUTS, bp.LINK_REPORT, bp.MLPERF_MODE, *extra})

    def link_report(self) -> dict:
        """What it took to get intact answers: ``checked`` (replies carried CRCs), retries,
        discarded and stale lines, restarted uploads, resyncs; stored as run.json ``extra.link``."""
        return self.dut.stats.to_dict()

    def sysinfo(self) -> dict:
        hello = self.hello()
        port = self.info.get("port") or "unknown"
        cpu = (f"{self.profile.soc}; edgebench firmware port {port}" if self.dialect == "edgebench"
               else f"{self.profile.soc}; MLPerf Tiny firmware {hello['runtime']['version']}")
        hz = self.info.get("counter-hz")
        model = (f"edgebench firmware port {port}, {self.info.get('timing')} timing, counter {hz:,} Hz"
                 if self.dialect == "edgebench" else f"MLPerf Tiny firmware {hello['runtime']['version']}")

        # the core clock's source and accuracy (eb-info clock): what every seconds figure rests on
        system = {"board": {"model": model, "clock": clock_of(self.info) if self.dialect == "edgebench" else None},
                  "cpu": {"model_name": cpu.strip("; ")},
                  "firmware": {**self.info, "dut_name": hello["dut_name"], "dialect": self.dialect},
                  "link": self.dut.description,
                  "emulator": self.session.describe() if self.session else None,
                  # the exact build an emulated board ran (built by edgebench, or given with --image)
                  "firmware_image": ({k: self.session.to_dict()[k] for k in ("image", "image_sha256")}
                                     if self.session else None)}
        return {"system": system, "collector_errors": {}}

    def thermal(self) -> dict:
        temps, errors = {}, {}
        # under an emulator the sensor is a register model (edgebench/mcu/l4r5_model.py: a fixed 25 °C),
        # not a die: no temperature is recorded from it
        if self.info.get("temp") == "yes" and self.session is None:
            try:
                mc = self.dut.temp_mc()
                if mc is not None:
                    temps["die"] = mc / 1000.0
            except AgentError as exc:
                errors["eb-temp"] = exc.message
        return {"available": bool(temps), "temps_c": temps, "freqs_hz": {}, "throttled": None,
                "clock_ns": time.perf_counter_ns(), "errors": errors}

    def status(self) -> dict:
        return {"model_loaded": self._loaded_sha is not None,
                "pool": 0 if self._pool is None else len(self._pool), "dut_name": self.dut.dut_name,
                "link": self.link_report()}

    # -- models -----------------------------------------------------------------------
    def _model(self, model: ModelFile) -> ModelFile:
        if model.sha256 not in self._models:
            _check_int8(model)
            self._models[model.sha256] = model
        return self._models[model.sha256]

    def deploy(self, model: ModelFile, force: bool = True, model_id: str | None = None,
               input_encoding: str = "int8", results: str = "outputs") -> DeployReport:
        """Convert to a blob, check it fits, upload it, check the CRC, load it (``eb-model``).

        ``model`` is :func:`edgebench.modelfile.read_model`'s result: its bytes are not read or
        hashed again. ``force=False`` skips the upload when the device already holds this blob
        (``eb-info``'s ``loaded`` CRC-32 and size), as the agent's model cache does.
        ``model_id`` is what ``profile%`` reports as ``m-model-[..]`` (default: the MLCommons
        runner's id when the model is recognisably an MLPerf Tiny one, else its name);
        ``input_encoding`` and ``results`` choose the MLPerf Tiny reference firmware's
        behaviours on the device (:mod:`edgebench.mcu.mlperf_ids`)."""
        with self.dut.call():     # info, the upload (and its restarts) and eb-model: one recovery budget
            return self._deploy(model, force, model_id, input_encoding, results)

    def _deploy(self, model: ModelFile, force: bool, model_id: str | None, input_encoding: str,
                results: str) -> DeployReport:
        model_id = check_model_id(model_id) if model_id is not None else default_model_id(model)
        check_choice(input_encoding, INPUT_ENCODINGS, "input encoding")
        check_choice(results, RESULTS_MODES, "results mode")
        self._need_edgebench("deploying a model")
        model = self._model(model)
        sha, label = model.sha256, model.name
        converted = convert(model, name=label)
        blob, arena, flash = converted.data, converted.peak_arena_bytes, converted.flash_bytes
        report = {k: v for k, v in converted.to_dict().items() if k != "layers"}
        crc = f"{crc32(blob):08x}"
        held = str(self.dut.info().get("loaded", "")).startswith(f"crc32={crc},bytes={len(blob)},")
        if len(blob) > int(self.info["model-max-bytes"]) and not (held and not force):
            raise ModelError(f"model {label}: its blob is {len(blob):,} bytes, board {self.profile.name} holds "
                             f"at most {int(self.info['model-max-bytes']):,} in RAM",
                             f"link it into the firmware image instead: edgebench flash --board {self.profile.name} "
                             f"--model {model.path or 'MODEL'} (or use a smaller model)")
        if arena is not None and int(arena) > int(self.info["arena-bytes"]):
            raise ModelError(f"model {label} needs {int(arena):,} bytes of arena RAM, board "
                             f"{self.profile.name} has {int(self.info['arena-bytes']):,}",
                             "use a smaller model or a board/firmware build with a larger arena")
        self._input_on_device = None
        if not force and held:
            up = {"skipped": True, "reason": "the device already holds this blob (eb-info loaded)", "crc32": crc,
                  "bytes": len(blob)}
        else:
            self._on_device = self._loaded_sha = None
            up = self._upload("model", blob).to_dict()
        loaded = self.dut.load_model(model_id, input_encoding=input_encoding, results=results)
        want_in = int(np.prod(model.inputs[0].shape))
        want_out = int(np.prod(model.outputs[0].shape))
        if loaded["in"] != want_in or loaded["out"] != want_out:
            raise ModelError(f"model {label}: the device loaded {loaded['in']} input / {loaded['out']} output "
                             f"bytes, the .tflite has {want_in} / {want_out}", "the blob converter and the "
                             "firmware disagree; report this as a bug")
        self._on_device = self._loaded_sha = sha
        self._tick_s = self._need_s = None
        rep = DeployReport(board=self.profile.name, model={"name": label, "sha256": sha, "bytes": model.bytes,
                                                           "precision": model.precision},
                           blob_bytes=len(blob), peak_arena_bytes=None if arena is None else int(arena),
                           flash_bytes=None if flash is None else int(flash),
                           device={k: self.info.get(k) for k in ("port", "engine", "timing", "arena-bytes",
                                                                  "model-max-bytes", "counter-hz")},
                           upload=up, loaded=loaded, converter=_plain(report),
                           mlperf=_mlperf_settings(model, model_id, input_encoding, results))
        self._deployed[sha] = rep
        return rep

    def _upload(self, target: str, data: bytes):
        """``DutClient.upload``, started again whole (up to ``UPLOAD_TRIES``) after a failure whose
        outcome is unknown or that the link caused: the device holds nothing from a failed one."""
        with self.dut.call() as rec:
            for attempt in range(UPLOAD_TRIES):
                try:
                    return self.dut.upload(target, data, window=DEFAULT_WINDOW)
                except TransportError as exc:
                    # started again only within the call's recovery budget (a damaged link costs
                    # seconds, not tries x timeouts)
                    if exc.hint != "retry the upload" and "not acknowledged" not in exc.message \
                            or attempt == UPLOAD_TRIES - 1 or rec.spent(UPLOAD_RESTART_S):
                        raise
                    self.dut.stats.upload_restarts += 1
                    self.dut.end_uploads()
                    self.dut.resync()

    def ensure_model(self, model: ModelFile) -> str:
        sha = self._model(model).sha256
        self.hello()
        if self.dialect == "edgebench" and self._on_device != sha:
            self.deploy(model, force=False)
        return sha

    def has_model(self, sha256: str) -> bool:
        return self._on_device == sha256

    def load(self, sha256: str, kernels: str = "reference", threads: int = 1, delegate: str | None = None,
             batch: int = 1, name: str | None = None, preserve_all_tensors: bool = False) -> dict:
        if preserve_all_tensors:
            bp.require(self, bp.TENSORS, "keeping intermediate tensors")
        if sha256 not in self._models:
            raise ModelError(f"model {sha256[:12]} was not given to {self.profile.name}", "ensure_model first")
        if delegate:
            raise UsageError(f"board {self.profile.name} is a microcontroller: no delegate {delegate!r}")
        if batch != 1:
            raise UsageError(f"board {self.profile.name} runs batch 1 only, got batch {batch}")
        model = self._models[sha256]
        t0 = time.perf_counter()
        if self.dialect == "edgebench":
            if self._on_device != sha256:
                raise ModelError(f"model {model.name} is not on {self.profile.name}", "ensure_model first")
            self.dut.load_model(default_model_id(model))   # int8 inputs, output bytes: what run() sends and reads
        load_s = time.perf_counter() - t0
        if self._loaded_sha != sha256:
            self._tick_s = self._need_s = None
        self._loaded_sha = sha256
        self._input_on_device = None
        hello = self.hello()
        engine = ("edgebench firmware INT8 engine (reference-kernel semantics)" if self.dialect == "edgebench"
                  else "MLPerf Tiny reference firmware (its own kernels)")
        return {
            "inputs": [_detail(t) for t in model.inputs], "outputs": [_detail(t) for t in model.outputs],
            "runtime": hello["runtime"], "kernels": "reference" if self.dialect == "edgebench" else "firmware",
            "kernels_requested": kernels, "op_resolver": engine, "threads": 1, "delegate": None, "batch": 1,
            "batch_resizable": False, "load_s": load_s,
            "load_note": "eb-model round trip over the serial link, host-timed",
            "timing": self.timing_description(),
        }

    def timing_description(self) -> dict:
        hz = self.info.get("counter-hz")
        return {
            "clock": f"device counter at {hz} Hz ({self.info.get('timing')}), port {self.info.get('port')}",
            "e2e_includes": "the engine running every layer once on the device (invoke); the input is in "
                            "device RAM before the timed window",
            "excludes": "input quantization (done on the host, outside the device timing), upload of each "
                        "input over the serial link, output read; prep/set/get are 0 by construction",
        }

    # -- inputs and inference ---------------------------------------------------------
    def _need_edgebench(self, doing: str) -> None:
        self.hello()
        if self.dialect != "edgebench":
            raise UsageError(f"board {self.profile.name} runs an MLPerf Tiny firmware without the edgebench "
                             f"extensions: {doing} needs them", "use MLPerf Tiny mode (--mlperf)")

    def _quantize(self, x: np.ndarray) -> np.ndarray:
        if self._loaded_sha is None:
            raise UsageError("no model is loaded", "load a model first")
        detail = _detail(self._models[self._loaded_sha].inputs[0])
        x = np.ascontiguousarray(x, dtype=np.float32)
        want = list(detail["shape"][1:])
        if x.ndim != len(want) + 1 or list(x.shape[1:]) != want:
            raise DataError(f"input shape {list(x.shape)} does not fit the model: expected [N, {', '.join(map(str, want))}]")
        q = make_quantizer(detail, [1] + want)
        return np.stack([q(x[i:i + 1]).copy().reshape(-1) for i in range(len(x))]).astype(np.int8)

    def set_inputs(self, x: np.ndarray) -> int:
        """Keep the pool on the host, quantized there (the device timing excludes it)."""
        self._need_edgebench("per-inference timing")
        self._pool = pool = self._quantize(x)
        self._input_on_device = None
        return len(pool)

    def _need_time(self) -> None:
        """Refuse to time anything under an emulator that keeps no time (unicorn): its counter is not
        the image's speed, whichever command (eb-infer, MLPerf Tiny's infer) reads it."""
        if self.session is not None and not self.session.keeps_time:
            raise UsageError(f"board {self.profile.name} runs on {self.session.describe()}: it executes the "
                             "image's instructions but keeps no time, so no latency comes from it",
                             "use verify, accuracy or selftest here; measure latency on the real board or under QEMU")

    def _put_input(self, j: int) -> None:
        if self._input_on_device != j:
            self._input_on_device = None
            assert self._pool is not None, "set_inputs comes first"
            self._upload("input", self._pool[j].tobytes())
            self._input_on_device = j

    def run(self, mode: str, count: int, max_time_s: float, rate_hz: float | None = None,
            start_index: int = 0) -> tuple[dict, dict]:
        """Inferences timed by the device counter, grouped per uploaded input (``eb-infer N 0``)."""
        self._need_time()
        if self._pool is None:
            raise UsageError("no inputs are set", "set_inputs first")
        if mode == "fixed-rate":
            raise UsageError(f"board {self.profile.name}: the fixed-rate scenario needs a device-side "
                             "scheduler the firmware does not have", "use single-stream or offline")
        if mode not in ("single-stream", "offline"):
            raise UsageError(f"unknown run mode {mode!r}")
        hz = int(self.info["counter-hz"])
        n_pool = len(self._pool)
        j = int(start_index) % n_pool
        ticks: list = []
        starts: list = []
        index: list = []
        t_end = time.monotonic() + max_time_s
        while len(ticks) < count:
            per_call = MAX_TICKS_PER_CALL if self._tick_s is None else \
                int(max(1, min(MAX_TICKS_PER_CALL, TARGET_CALL_S / max(self._tick_s, 1e-9))))
            k = min(count - len(ticks), per_call)
            with self.dut.call():     # a step (the input's upload, eb-infer): one recovery budget
                self._put_input(j)
                t_host = time.monotonic_ns()
                got = self._eb_infer(k)["ticks"]
            ns = [t * 1_000_000_000 // hz for t in got]
            offset = t_host
            for d in ns:
                starts.append(offset)
                offset += d
            ticks += ns
            index += [j] * k
            self._tick_s = float(np.median(ns)) / 1e9 if ns else self._tick_s
            j = (j + 1) % n_pool
            if time.monotonic() >= t_end:
                break
        e2e = np.asarray(ticks, dtype=np.int64)
        zero = np.zeros(len(e2e), dtype=np.int64)
        arrays = {"t_start_ns": np.asarray(starts, dtype=np.int64), "prep_ns": zero, "set_ns": zero.copy(),
                  "invoke_ns": e2e.copy(), "get_ns": zero.copy(), "e2e_ns": e2e,
                  "input_index": np.asarray(index, dtype=np.int64)}
        header = {"n": len(e2e), "clock": f"device counter {hz} Hz", "batch": 1, "mode": mode,
                  "note": "t_start_ns: host clock at each eb-infer plus the device-timed inferences before it"}
        return header, arrays

    def _eb_infer(self, k: int) -> dict:
        """``eb-infer k 0`` with waits that follow from what this model is known to need
        (:func:`edgebench.mcu.protocol.infer_waits`); before anything is known, up to
        ``FIRST_CALL_WAIT_S`` for the first line (a lost request ``%`` is still probed for at
        once). Each call's wall time per inference teaches the next its bound."""
        need = self._per_inference_need()
        before = (self.dut.stats.retries, self.dut.stats.probes)
        t0 = time.monotonic()
        out = self.dut.eb_infer(k, 0, timeout_s=None if need else max(self.dut.timeout_s, FIRST_CALL_WAIT_S),
                                per_inference_s=need)
        wall = (time.monotonic() - t0) / k
        if (self.dut.stats.retries, self.dut.stats.probes) == before:     # a clean call: a measure
            self._need_s = wall if self._need_s is None else min(self._need_s, wall)
        return out

    def _per_inference_need(self) -> float | None:
        """Seconds one inference needs at most: the least wall time per inference of a clean call
        (link and host included), and at least the device's own time when its clock is real."""
        if self._need_s is None:
            return None
        device = self._tick_s if self.info.get("timing") == "real" and self._tick_s else 0.0
        return max(self._need_s, device)

    def run_layers(self, n: int, warmup: int = 0, index: int = 0) -> dict:
        """``eb-infer N W layers`` on pool input ``index`` (capability ``layer-timing``): ``ns``, the N
        inferences timed whole by the device counter, and ``layers``, one more inference timed layer by
        layer (``{"layer", "op", "ticks", "ns"}``, the blob's layer index and TFLite operator code);
        firmware/PROTOCOL.md, eb-infer details."""
        self._need_edgebench("per-layer timing")
        self._need_time()
        if self._pool is None:
            raise UsageError("no inputs are set", "set_inputs first")
        self._put_input(int(index) % len(self._pool))
        hz = int(self.info["counter-hz"])
        got = self.dut.eb_infer(n, warmup, layers=True, timeout_s=self._infer_timeout(n + warmup + 1))
        ns = [t * 1_000_000_000 // hz for t in got["ticks"]]
        if ns:
            self._tick_s = float(np.median(ns)) / 1e9
        return {"ns": ns, "counter_hz": hz,
                "layers": [{**x, "ns": x["ticks"] * 1_000_000_000 // hz} for x in got["layers"]]}

    def _infer_timeout(self, k: int) -> float:
        """The MLPerf dialect's ``infer k 0`` (no probe: a lone '%' is unsafe on the reference firmware)."""
        need = self._per_inference_need()
        if need is None:
            return max(self.dut.timeout_s, FIRST_CALL_WAIT_S)
        return self.dut.timeout_s + 3.0 * k * need

    def infer(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Output 0 for every sample: int8 from ``eb-output`` (edgebench) or the scores of ``infer 1 0``."""
        out = self.infer_all(x)
        return out["y"], out["y_float"]

    def infer_all(self, x: np.ndarray) -> dict:
        self.hello()
        if self._loaded_sha is None:
            raise UsageError("no model is loaded", "load a model first")
        model = self._models[self._loaded_sha]
        detail = _detail(model.outputs[0])
        q = self._quantize(x)
        shape = [len(q)] + list(detail["shape"][1:])
        size = int(np.prod(detail["shape"][1:]))
        raw = np.empty((len(q), size), dtype=np.int8)
        if self.dialect == "edgebench":
            for i in range(len(q)):
                self._input_on_device = None
                self._upload("input", q[i].tobytes())
                self._eb_infer(1)
                y = self.dut.output()
                if len(y) != size:
                    raise AgentError(f"{self.description}: eb-output gave {len(y)} bytes, the model has {size}")
                raw[i] = np.frombuffer(y, dtype=np.int8)
            y_raw = raw.reshape(shape)
            return {"y": y_raw, "y_float": dequantize(detail, y_raw), "note": HOST_QUANTIZED}
        scores = np.empty((len(q), size), dtype=np.float32)
        for i in range(len(q)):
            self.dut.db_load(q[i].tobytes(), check=True)
            t0 = time.monotonic()
            reply = self.dut.infer(1, 0, timeout_s=self._infer_timeout(1))
            self._need_s = min(self._need_s or math.inf, time.monotonic() - t0)
            res = self.dut.checked_results(reply.results)
            if len(res) != size:
                raise AgentError(f"{self.description}: m-results has {len(res)} scores, the model has {size}")
            scores[i] = res
        quant = detail["quant"]
        requant = np.clip(np.rint(scores / quant["scale"]) + quant["zero_point"], -128, 127).astype(np.int8)
        return {"y": requant.reshape(shape), "y_float": scores.reshape(shape),
                "note": f"{HOST_QUANTIZED}; MLPerf Tiny firmware prints rounded scores: y is requantized from "
                        "them; the dialect has no checksum: inputs read back with db print, scores read until two "
                        "reads agree"}

    # -- MLPerf Tiny mode (capability mlperf-mode: the plain dialect only) ----------------
    def mlperf_profile(self) -> dict:
        """The DUT's ``profile%``: ``profile`` and ``model`` (m-model-[..]); edgebench firmware adds
        ``input`` and ``results`` (its MLPerf Tiny settings)."""
        self.hello()
        return self.dut.profile()

    def mlperf_performance(self, inputs: list, windows: int = 5, window_s: float = 10.0, warmup: int = 10,
                           chunk_bytes: int = 32, max_reruns: int = 3, emit=None) -> dict:
        """MLPerf Tiny performance windows on the DUT's ``db`` byte ``inputs``
        (:func:`edgebench.mcu.mlperf.performance`)."""
        timing = self.hello().get("timing") or "real"
        self._need_time()
        return performance(self.dut, inputs, windows=windows, window_s=window_s, warmup=warmup,
                           chunk_bytes=chunk_bytes, max_reruns=max_reruns, emit=emit, timing=timing)

    def mlperf_scores(self, inputs: list, chunk_bytes: int = 32, emit=None) -> np.ndarray:
        """``infer 1 0`` per ``db`` byte input: the scores of ``m-results-[...]`` (N, classes)."""
        self.hello()
        return accuracy_scores(self.dut, inputs, chunk_bytes=chunk_bytes, emit=emit)

    # -- lifetime ---------------------------------------------------------------------
    def close(self) -> None:
        try:
            self.dut.close()
        finally:
            if self.session is not None:
                self.session.stop()

    def shutdown(self) -> None:
        pass

    def __enter__(self) -> "McuClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_mcu(profile, start_emulator: bool = False, timeout_s: float = 10.0, image=None) -> McuClient:
    """The client of ``profile``'s board at its transport's serial address; with ``start_emulator``
    (the profile's URL is ``emulator``) its emulator is started first, with ``image`` if given.
    Called by :func:`edgebench.boards.connect.open_client`, the one way a verb reaches a board."""
    session = None
    address = profile.transport.url
    if start_emulator:
        session = FirmwareSession(profile, image=image)
        address = session.start()
    else:
        address = resolve_url(profile)          # transport.url auto: the port with the board's USB ids
    try:
        dut = DutClient(address, baud=profile.transport.baud or 115200, timeout_s=timeout_s)
    except BaseException:
        if session:
            session.stop()
        raise
    client = McuClient(dut, profile, session)
    try:
        client.hello()
    except BaseException as exc:
        client.close()
        if session and isinstance(exc, TransportError) and not session.alive():
            raise TransportError(f"{session.describe()} exited: {session.log_tail() or 'no output'}") from None
        raise
    return client


def _detail(t) -> dict:
    d = t.to_dict()
    d.setdefault("index", 0)
    d.setdefault("shape_signature", list(d["shape"]))
    return d


def _plain(obj):
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, (np.integer, np.floating)):
        return obj.item()
    return obj if isinstance(obj, (str, int, float, bool, type(None))) else str(obj)


def _mlperf_settings(model, model_id: str, input_encoding: str, results: str) -> dict:
    ref = runner_model_for(model)
    return {"model_id": model_id, "input_encoding": input_encoding, "results": results,
            "runner_model": ref.to_dict() if ref else None,
            "note": runner_note(model_id, model, input_encoding, results)}


def _check_int8(model) -> None:
    for role, tensors in (("input", model.inputs), ("output", model.outputs)):
        if len(tensors) != 1:
            raise ModelError(f"{model.name} has {len(tensors)} {role}s; the firmware runs single-input, "
                             "single-output models")
        t = tensors[0]
        if t.dtype != "int8" or not t.scale:
            raise ModelError(f"{model.name}: {role} {t.name!r} is {t.dtype}, the firmware runs INT8 models "
                             f"with int8 {role}s", "quantize it: edgebench quantize MODEL --calib DATA")


__all__ = ["McuClient", "DeployReport", "open_mcu", "FIRMWARE_NAME", "MLPERF_NAME"]
