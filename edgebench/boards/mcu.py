"""Microcontroller boards (level 3): firmware sessions and the adapter the benchmarks drive.

* :func:`build_firmware` runs ``make -C firmware PORT=<port> BUILD=<dir>`` (make decides
  whether anything needs rebuilding).
* :class:`FirmwareSession` starts and supervises the firmware of an emulated board, the
  posix build on a pseudo-terminal or QEMU (``edgebench.mcu.qemu``), and hands out the
  serial URL; a context manager, used by ``edgebench flash`` in the foreground and by
  :func:`open_mcu` so ``bench``/``deploy``/``verify``/``accuracy`` start it themselves.
* :class:`McuClient` exposes the client interface of the Linux agent
  (:class:`~edgebench.transport.client.AgentClient`) over the firmware protocol
  (:class:`~edgebench.transport.mlperf.DutClient`), so ``run_bench`` and
  ``run_accuracy`` drive a microcontroller unchanged. What differs is stated in what it
  returns: inputs are quantized on the host (outside the device timing: ``prep_ns`` is 0),
  each input is uploaded before its inferences, and the device times each inference with
  its own counter (``invoke_ns`` = ``e2e_ns`` = ticks / counter-hz; ``set_ns`` = ``get_ns``
  = 0).
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from edgebench.errors import AgentError, ModelError, TransportError, UsageError

FIRMWARE_NAME = "edgebench-firmware"
MLPERF_NAME = "mlperf-tiny-reference"
MAX_TICKS_PER_CALL = 32          # one m-eb-t line
TARGET_CALL_S = 0.05             # device time aimed at per eb-infer call in run()
INSTALL_HINTS = {
    "make": "sudo apt install make gcc",
    "qemu-system-arm": "sudo apt install qemu-system-arm",
    "arm-none-eabi-gcc": "sudo apt install gcc-arm-none-eabi libnewlib-arm-none-eabi",
    "openocd": "sudo apt install openocd",
    "pyocd": "pip install pyocd",
    "nrfjprog": "install Nordic's nRF Command Line Tools (and SEGGER J-Link) from nordicsemi.com",
    "esptool.py": "pip install esptool",
    "esptool": "pip install esptool",
    "picotool": "sudo apt install picotool, or build github.com/raspberrypi/picotool",
}


# ----------------------------------------------------------------------------- building

def firmware_dir() -> Path:
    """The firmware sources: ``$EDGEBENCH_FIRMWARE_DIR``, ``firmware/`` of the source checkout,
    or ``edgebench/_data/firmware`` of an installed wheel (the wheel ships core/, ports/, Makefile)."""
    import edgebench

    env = os.environ.get("EDGEBENCH_FIRMWARE_DIR")
    package = Path(edgebench.__file__).resolve().parent
    path = Path(env) if env else next(
        (p for p in (package.parent / "firmware", package / "_data" / "firmware") if (p / "Makefile").is_file()),
        package.parent / "firmware")
    if not (path / "Makefile").is_file():
        raise UsageError(f"firmware sources not found at {path} (no Makefile)",
                         "build from a source checkout of edgebench, set EDGEBENCH_FIRMWARE_DIR, "
                         "or pass a prebuilt image with --image")
    return path


def build_dir(port: str) -> Path:
    base = os.environ.get("EDGEBENCH_FIRMWARE_BUILD")
    if base:
        return Path(base) / port
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "edgebench" / "firmware" / port


def require_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise UsageError(f"{name} is not installed", f"install it: {INSTALL_HINTS.get(name, 'see docs/mcu.md')}")
    return path


def build_firmware(port: str, out: Path | None = None, timeout_s: float = 600.0) -> Path:
    """``make -C firmware PORT=port BUILD=out``; returns the firmware image (posix binary or ELF)."""
    src = firmware_dir()
    out = Path(out) if out else build_dir(port)
    out.mkdir(parents=True, exist_ok=True)
    make = require_tool("make")
    if port != "posix":
        require_tool("arm-none-eabi-gcc")
    try:
        proc = subprocess.run([make, f"-j{os.cpu_count() or 2}", "-C", str(src), f"PORT={port}", f"BUILD={out}"], capture_output=True,
                              text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise UsageError(f"building the {port} firmware took more than {timeout_s:g} s") from None
    if proc.returncode != 0:
        tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])
        raise UsageError(f"building the {port} firmware failed (make exit {proc.returncode}): {tail}",
                         f"run make -C {src} PORT={port} BUILD={out} to see the full log")
    return firmware_image(port, out)


def firmware_image(port: str, out: Path) -> Path:
    """The image firmware/Makefile leaves in ``out``: ``eb-firmware`` (posix) or ``eb-firmware.elf``."""
    image = out / ("eb-firmware" if port == "posix" else "eb-firmware.elf")
    if not image.is_file():
        raise UsageError(f"make built the {port} firmware but {image} is not there")
    return image


# ----------------------------------------------------------------------------- running emulated boards

class FirmwareSession:
    """Starts the firmware of an emulated board (posix or QEMU) and stops it on exit.

    ``url`` is the pseudo-terminal to open. ``image`` replaces the built one.
    """

    def __init__(self, profile, image: str | os.PathLike | None = None, start_timeout_s: float = 30.0):
        fw = getattr(profile, "firmware", None)
        if fw is None or fw.emulator is None:
            raise UsageError(f"board {profile.name} is not emulated: nothing to start",
                             "for a real board use edgebench flash --board B --image FILE")
        self.profile, self.fw = profile, fw
        self.image = Path(image) if image else None
        self.start_timeout_s = start_timeout_s
        self.url: str | None = None
        self._proc = None
        self._qemu = None
        self._tail: list = []

    def start(self) -> str:
        image = self.image = self.image or build_firmware(self.fw.port)
        if not image.is_file():
            raise UsageError(f"firmware image {image} does not exist")
        if self.fw.emulator == "posix":
            self.url = self._start_posix(image)
        else:
            self.url = self._start_qemu(image)
        return self.url

    def _start_posix(self, image: Path) -> str:
        import selectors

        # --keep-open: serve one host connection after another until we stop it
        self._proc = subprocess.Popen([str(image), "--keep-open"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, start_new_session=True)
        sel = selectors.DefaultSelector()
        sel.register(self._proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + self.start_timeout_s
        line = b""
        while not line.endswith(b"\n") and time.monotonic() < deadline:
            if sel.select(timeout=0.1):
                ch = self._proc.stdout.read1(1) if hasattr(self._proc.stdout, "read1") else self._proc.stdout.read(1)
                if not ch:
                    break
                line += ch
        sel.close()
        m = re.search(rb"serial on (\S+)", line)
        if not m:
            self.stop()
            raise AgentError(f"the posix firmware {image} did not announce its pty (first line {line[:120]!r})",
                             hint="expected 'eb-posix: serial on /dev/pts/N' as its first line")
        threading.Thread(target=self._drain, daemon=True).start()
        return m.group(1).decode()

    def _drain(self) -> None:
        for raw in iter(self._proc.stdout.readline, b""):
            self._tail = (self._tail + [raw.decode("utf-8", "replace").rstrip()])[-20:]

    def _start_qemu(self, image: Path) -> str:
        require_tool("qemu-system-arm")
        from edgebench.mcu.qemu import QemuBoard

        self._qemu = QemuBoard(self.fw.machine, str(image), icount_shift=self.fw.icount_shift)
        return self._qemu.start()

    def alive(self) -> bool:
        if self._proc is not None:
            return self._proc.poll() is None
        if self._qemu is not None:
            return bool(self._qemu.running)
        return False

    def describe(self) -> str:
        if self.fw.emulator == "posix":
            return f"posix firmware started by edgebench ({self.image.name if self.image else 'eb-firmware'})"
        return f"qemu-system-arm -M {self.fw.machine} -icount shift={self.fw.icount_shift} started by edgebench"

    def to_dict(self) -> dict:
        pid = self._proc.pid if self._proc is not None else getattr(self._qemu, "pid", None)
        return {"board": self.profile.name, "url": self.url, "emulator": self.fw.emulator,
                "machine": self.fw.machine, "icount_shift": self.fw.icount_shift, "port": self.fw.port,
                "image": str(self.image) if self.image else None, "pid": pid,
                "timing": "emulated" if self.fw.emulator == "qemu" else "real (host CPU)"}

    def log_tail(self) -> str:
        if self._qemu is not None:
            return " | ".join(ln for ln in self._qemu.output().splitlines()[-3:] if ln.strip())
        return " | ".join(self._tail[-3:])

    def wait(self, poll_s: float = 0.5) -> int | None:
        """Block while the emulator runs (Ctrl-C raises KeyboardInterrupt); its exit status."""
        while self.alive():
            time.sleep(poll_s)
        if self._qemu is not None:
            return self._qemu.returncode
        return self._proc.returncode if self._proc is not None else None

    def stop(self) -> None:
        if self._qemu is not None:
            qemu, self._qemu = self._qemu, None
            qemu.stop()
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=5)

    def __enter__(self) -> "FirmwareSession":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def flash_board(profile, image: str | os.PathLike | None = None, url: str | None = None,
                timeout_s: float = 600.0) -> dict:
    """Run a real board's flasher (argv, no shell) with ``{image}``, ``{url}``, ``{name}`` filled."""
    fl = profile.flasher
    if fl is None:
        raise UsageError(f"board {profile.name} has no flasher in its profile",
                         "add flasher: {tool, argv} to the profile (docs/boards.md)")
    fw = profile.firmware
    if image is None:
        if fw is None or fw.port is None:
            raise UsageError(f"board {profile.name} has no firmware port in this edgebench to build",
                             "give a prebuilt image: edgebench flash --board B --image FILE")
        image = build_firmware(fw.port)
    image = Path(image)
    if not image.is_file():
        raise UsageError(f"firmware image {image} does not exist")
    argv = fl.command(image=str(image), url=url or profile.transport.url or "", name=profile.name)
    exe = shutil.which(argv[0])
    if exe is None:
        raise UsageError(f"{argv[0]} (the flasher of board {profile.name}) is not installed",
                         f"install it: {INSTALL_HINTS.get(argv[0], 'see its vendor documentation')}")
    t0 = time.monotonic()
    try:
        proc = subprocess.run([exe] + argv[1:], capture_output=True, text=True, timeout=timeout_s,
                              stdin=subprocess.DEVNULL, errors="replace")
    except subprocess.TimeoutExpired:
        raise TransportError(f"{argv[0]} did not finish flashing {profile.name} within {timeout_s:g} s",
                             "is the board connected and powered?") from None
    out = (proc.stdout + proc.stderr).strip().splitlines()
    if proc.returncode != 0:
        raise TransportError(f"{argv[0]} failed to flash {profile.name} (exit {proc.returncode}): "
                             + " | ".join(out[-3:]), "is the board connected, powered, and not in use?")
    return {"board": profile.name, "image": str(image), "argv": argv, "returncode": proc.returncode,
            "elapsed_s": time.monotonic() - t0, "output_tail": out[-5:]}


# ----------------------------------------------------------------------------- the adapter

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

    def to_dict(self) -> dict:
        return asdict(self)


class McuClient:
    """The agent client interface over a device running edgebench (or MLPerf Tiny) firmware."""

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
        self._pool = None                 # int8 inputs (N, bytes)
        self._input_on_device: int | None = None
        self._tick_s: float | None = None
        self._hello: dict | None = None

    # -- information ------------------------------------------------------------------
    def hello(self) -> dict:
        if self._hello is not None:
            return self._hello
        name = self.dut.sync()
        if mlperf_only(self.profile):
            self.dialect = "mlperf"       # never send eb- commands to it
        else:
            try:
                self.info = self.dut.info()
                self.dialect = "edgebench"
            except AgentError as exc:
                if "does not know" not in exc.message:
                    raise
                self.dialect = "mlperf"
        if self.dialect == "edgebench":
            runtime = {"name": FIRMWARE_NAME, "version": str(self.info["engine"])}
            timing = self.info["timing"]
        else:
            prof = self.dut.profile()
            runtime = {"name": MLPERF_NAME, "version": prof.get("profile") or "unknown"}
            timing = "emulated" if self.profile.firmware and self.profile.firmware.emulator == "qemu" else "real"
        self._hello = {"protocol": f"mlperf-tiny+eb{self.info.get('proto')}" if self.info else "mlperf-tiny",
                       "agent_version": f"{runtime['name']} {runtime['version']}", "runtime": runtime,
                       "runtime_error": None, "timing": timing, "dialect": self.dialect, "dut_name": name,
                       "firmware": dict(self.info), "python": None, "numpy": None, "pid": None}
        return self._hello

    def sysinfo(self) -> dict:
        hello = self.hello()
        port = self.info.get("port") or "unknown"
        cpu = (f"{self.profile.soc}; edgebench firmware port {port}" if self.dialect == "edgebench"
               else f"{self.profile.soc}; MLPerf Tiny firmware {hello['runtime']['version']}")
        hz = self.info.get("counter-hz")
        model = (f"edgebench firmware port {port}, {self.info.get('timing')} timing, counter {hz:,} Hz"
                 if self.dialect == "edgebench" else f"MLPerf Tiny firmware {hello['runtime']['version']}")
        system = {"board": {"model": model}, "cpu": {"model_name": cpu.strip("; ")},
                  "firmware": {**self.info, "dut_name": hello["dut_name"], "dialect": self.dialect},
                  "link": self.dut.description,
                  "emulator": self.session.describe() if self.session else None}
        return {"system": system, "collector_errors": {}}

    def thermal(self) -> dict:
        temps, errors = {}, {}
        if self.info.get("temp") == "yes":
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
                "pool": 0 if self._pool is None else len(self._pool), "dut_name": self.dut.dut_name}

    # -- models -----------------------------------------------------------------------
    def _model(self, data: bytes, name: str | None):
        from edgebench.runtime.tflite_file import parse_model

        sha = hashlib.sha256(data).hexdigest()
        if sha not in self._models:
            model = parse_model(data, f"{name or sha[:12]}.tflite")
            _check_int8(model)
            self._models[sha] = model
        return sha, self._models[sha]

    def deploy(self, data: bytes, name: str | None = None, force: bool = True) -> DeployReport:
        """Convert to a blob, check it fits, upload it, check the CRC, load it (``eb-model``).

        ``force=False`` skips the upload when the device already holds this blob
        (``eb-info``'s ``loaded`` CRC-32 and size), as the agent's model cache does."""
        from edgebench.mcu.blob import convert
        from edgebench.transport.mlperf import crc32

        self._need_edgebench("deploying a model")
        sha, model = self._model(data, name)
        label = model.name
        converted = convert(bytes(data), name=label)
        blob, arena, flash = converted.data, converted.peak_arena_bytes, converted.flash_bytes
        report = {k: v for k, v in converted.to_dict().items() if k != "layers"}
        if len(blob) > int(self.info["model-max-bytes"]):
            raise ModelError(f"model {label}: its blob is {len(blob):,} bytes, board {self.profile.name} holds "
                             f"at most {int(self.info['model-max-bytes']):,}",
                             "use a smaller model or a board/firmware build with a larger model buffer")
        if arena is not None and int(arena) > int(self.info["arena-bytes"]):
            raise ModelError(f"model {label} needs {int(arena):,} bytes of arena RAM, board "
                             f"{self.profile.name} has {int(self.info['arena-bytes']):,}",
                             "use a smaller model or a board/firmware build with a larger arena")
        self._input_on_device = None
        crc = f"{crc32(blob):08x}"
        held = str(self.dut.info().get("loaded", ""))
        if not force and held.startswith(f"crc32={crc},bytes={len(blob)},"):
            up = {"skipped": True, "reason": "the device already holds this blob (eb-info loaded)", "crc32": crc,
                  "bytes": len(blob)}
        else:
            self._on_device = self._loaded_sha = None
            up = self._upload("model", blob).to_dict()
        loaded = self.dut.load_model(_model_id(label))
        want_in = int(np.prod(model.inputs[0].shape))
        want_out = int(np.prod(model.outputs[0].shape))
        if loaded["in"] != want_in or loaded["out"] != want_out:
            raise ModelError(f"model {label}: the device loaded {loaded['in']} input / {loaded['out']} output "
                             f"bytes, the .tflite has {want_in} / {want_out}", "the blob converter and the "
                             "firmware disagree; report this as a bug")
        self._on_device = self._loaded_sha = sha
        rep = DeployReport(board=self.profile.name, model={"name": label, "sha256": sha, "bytes": len(data),
                                                           "precision": model.precision},
                           blob_bytes=len(blob), peak_arena_bytes=None if arena is None else int(arena),
                           flash_bytes=None if flash is None else int(flash),
                           device={k: self.info.get(k) for k in ("port", "engine", "timing", "arena-bytes",
                                                                  "model-max-bytes", "counter-hz")},
                           upload=up, loaded=loaded, converter=_plain(report))
        self._deployed[sha] = rep
        return rep

    def _upload(self, target: str, data: bytes):
        """``DutClient.upload``, retried once after a failure whose hint says to retry (a
        damaged announcement or final answer): the device holds nothing from the failed one."""
        from edgebench.transport.mlperf import DEFAULT_WINDOW

        try:
            return self.dut.upload(target, data, window=DEFAULT_WINDOW)
        except TransportError as exc:
            if exc.hint != "retry the upload":
                raise
            self.dut.sync()
            return self.dut.upload(target, data, window=DEFAULT_WINDOW)

    def ensure_model(self, model_bytes: bytes, name: str | None = None) -> str:
        sha, _ = self._model(model_bytes, name)
        self.hello()
        if self.dialect == "edgebench" and self._on_device != sha:
            self.deploy(model_bytes, name, force=False)
        return sha

    def has_model(self, sha256: str) -> bool:
        return self._on_device == sha256

    def load(self, sha256: str, kernels: str = "reference", threads: int = 1, delegate: str | None = None,
             batch: int = 1, name: str | None = None) -> dict:
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
            self.dut.load_model(_model_id(model.name))
        load_s = time.perf_counter() - t0
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
        from edgebench.agent.loop import make_quantizer

        if self._loaded_sha is None:
            raise UsageError("no model is loaded", "load a model first")
        detail = _detail(self._models[self._loaded_sha].inputs[0])
        x = np.ascontiguousarray(x, dtype=np.float32)
        want = list(detail["shape"][1:])
        if x.ndim != len(want) + 1 or list(x.shape[1:]) != want:
            from edgebench.errors import DataError

            raise DataError(f"input shape {list(x.shape)} does not fit the model: expected [N, {', '.join(map(str, want))}]")
        q = make_quantizer(detail, [1] + want)
        return np.stack([q(x[i:i + 1]).copy().reshape(-1) for i in range(len(x))]).astype(np.int8)

    def set_inputs(self, x: np.ndarray) -> int:
        """Keep the pool on the host, quantized there (the device timing excludes it)."""
        self._need_edgebench("per-inference timing")
        self._pool = self._quantize(x)
        self._input_on_device = None
        return len(self._pool)

    def _put_input(self, j: int) -> None:
        if self._input_on_device != j:
            self._input_on_device = None
            self._upload("input", self._pool[j].tobytes())
            self._input_on_device = j

    def run(self, mode: str, count: int, max_time_s: float, rate_hz: float | None = None,
            start_index: int = 0) -> tuple[dict, dict]:
        """Inferences timed by the device counter, grouped per uploaded input (``eb-infer N 0``)."""
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
        ticks, starts, index = [], [], []
        t_end = time.monotonic() + max_time_s
        while len(ticks) < count:
            per_call = MAX_TICKS_PER_CALL if self._tick_s is None else \
                int(max(1, min(MAX_TICKS_PER_CALL, TARGET_CALL_S / max(self._tick_s, 1e-9))))
            k = min(count - len(ticks), per_call)
            self._put_input(j)
            t_host = time.monotonic_ns()
            got = self.dut.eb_infer(k, 0, timeout_s=self._infer_timeout(k))["ticks"]
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

    def _infer_timeout(self, k: int) -> float:
        if self._tick_s is None:
            return max(self.dut.timeout_s, 60.0)
        return self.dut.timeout_s + 3.0 * k * self._tick_s

    def infer(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Output 0 for every sample: int8 from ``eb-output`` (edgebench) or the scores of ``infer 1 0``."""
        out = self.infer_all(x)
        return out["y"], out["y_float"]

    def infer_all(self, x: np.ndarray) -> dict:
        from edgebench.agent.loop import dequantize

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
                self.dut.eb_infer(1, 0, timeout_s=self._infer_timeout(1))
                y = self.dut.output()
                if len(y) != size:
                    raise AgentError(f"{self.description}: eb-output gave {len(y)} bytes, the model has {size}")
                raw[i] = np.frombuffer(y, dtype=np.int8)
            y_raw = raw.reshape(shape)
            return {"y": y_raw, "y_float": dequantize(detail, y_raw)}
        scores = np.empty((len(q), size), dtype=np.float32)
        for i in range(len(q)):
            self.dut.db_load(q[i].tobytes())
            res = self.dut.infer(1, 0, timeout_s=self._infer_timeout(1)).results
            if len(res) != size:
                raise AgentError(f"{self.description}: m-results has {len(res)} scores, the model has {size}")
            scores[i] = res
        quant = detail["quant"]
        requant = np.clip(np.rint(scores / quant["scale"]) + quant["zero_point"], -128, 127).astype(np.int8)
        return {"y": requant.reshape(shape), "y_float": scores.reshape(shape),
                "note": "MLPerf Tiny firmware prints rounded scores: y is requantized from them"}

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


def mlperf_only(profile) -> bool:
    """The profile says the board runs MLPerf Tiny reference firmware (first runtime ``mlperf_tiny``)."""
    return bool(getattr(profile, "runtimes", ()) and profile.runtimes[0] == "mlperf_tiny")


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


def _model_id(name: str) -> str:
    """The ``eb-model ID`` (profile%'s m-model-[...]): 1-16 of A-Z a-z 0-9 _ - ."""
    return (re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:16]) or "model"


def _check_int8(model) -> None:
    for role, tensors in (("input", model.inputs), ("output", model.outputs)):
        if len(tensors) != 1:
            raise ModelError(f"{model.name} has {len(tensors)} {role}s; the firmware runs single-input, "
                             "single-output models")
        t = tensors[0]
        if t.dtype != "int8" or not t.scale:
            raise ModelError(f"{model.name}: {role} {t.name!r} is {t.dtype}, the firmware runs INT8 models "
                             f"with int8 {role}s", "quantize it: edgebench quantize MODEL --calib DATA")


def open_mcu(profile, url: str | None = None, timeout_s: float = 10.0, image=None) -> McuClient:
    """The adapter for ``profile``'s board; starts its emulator when the profile says ``url: emulator``."""
    from edgebench.boards.profile import EMULATOR_URL
    from edgebench.boards.registry import with_transport_url
    from edgebench.transport.mlperf import DutClient

    if url:
        profile = with_transport_url(profile, url)
    session = None
    address = profile.transport.url
    if address == EMULATOR_URL:
        session = FirmwareSession(profile, image=image)
        address = session.start()
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


__all__ = ["McuClient", "FirmwareSession", "flash_board", "DeployReport", "open_mcu", "build_firmware", "firmware_dir",
           "firmware_image", "require_tool", "mlperf_only", "INSTALL_HINTS", "FIRMWARE_NAME", "MLPERF_NAME"]
