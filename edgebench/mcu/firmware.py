"""Microcontroller firmware on the host side (level 2): building it, running emulated boards, flashing.

* :func:`build_firmware` runs ``make -C firmware PORT=<port> BUILD=<dir>`` (make decides
  whether anything needs rebuilding).
* :class:`FirmwareSession` starts and supervises the firmware of an emulated board, the
  posix build on a pseudo-terminal or QEMU (``edgebench.mcu.qemu``), and hands out the
  serial URL; a context manager, used by ``edgebench flash`` in the foreground and by
  :func:`edgebench.mcu.board.open_mcu` so ``bench``/``deploy``/``verify``/``accuracy``
  start it themselves. The posix firmware runs tied to edgebench
  (:func:`edgebench.transport.child.spawn_tied`): no kill of edgebench leaves it behind.
* :func:`flash_board` runs a real board's flasher (argv, no shell).

Library code: raises edgebench errors, never prints.
"""
from __future__ import annotations

import hashlib
import os
import re
import selectors
import shutil
import subprocess
import threading
import time
from pathlib import Path

import edgebench
from edgebench.errors import AgentError, ResultError, TransportError, UsageError
from edgebench.mcu.qemu import QemuBoard
from edgebench.mcu.unicorn_board import UnicornBoard
from edgebench.results.files import write_new_or_same
from edgebench.transport.child import spawn_tied, stop_tied

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
    # one folder per source tree: make decides by timestamps, so two installs (or checkouts) sharing
    # one folder could keep each other's objects
    tree = hashlib.sha256(str(firmware_dir()).encode()).hexdigest()[:8]
    return Path(cache) / "edgebench" / "firmware" / f"{port}-{tree}"


def require_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise UsageError(f"{name} is not installed", f"install it: {INSTALL_HINTS.get(name, 'see docs/mcu.md')}")
    return path


def build_firmware(port: str, out: Path | None = None, timeout_s: float = 600.0, model=None) -> Path:
    """``make -C firmware PORT=port BUILD=out``; returns the firmware image (posix binary or ELF).

    ``model`` (a .tflite path or a :class:`~edgebench.modelfile.ModelFile`): link its blob into the
    image (``EB_MODEL_BLOB=``; read in place from flash, loaded at start-up), built in a directory
    of its own under ``out`` named by the blob's CRC-32."""
    src = firmware_dir()
    out = Path(out) if out else build_dir(port)
    make_vars = []
    if model is not None:
        out, blob_path = _stage_blob(model, out)
        make_vars.append(f"EB_MODEL_BLOB={blob_path}")
    out.mkdir(parents=True, exist_ok=True)
    make = require_tool("make")
    if port != "posix":
        require_tool("arm-none-eabi-gcc")
    try:
        proc = subprocess.run([make, f"-j{os.cpu_count() or 2}", "-C", str(src), f"PORT={port}", f"BUILD={out}",
                               *make_vars], capture_output=True, text=True, timeout=timeout_s,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise UsageError(f"building the {port} firmware took more than {timeout_s:g} s") from None
    if proc.returncode != 0:
        log = (proc.stderr or proc.stdout).strip()
        over = re.search(r"region `(\w+)' overflowed by (\d+) bytes", log)
        if over:
            raise UsageError(f"the {port} firmware does not fit the board's {over.group(1)}: over by "
                             f"{int(over.group(2)):,} bytes" + (" with the model's blob linked in" if model else ""),
                             "use a smaller model, or deploy it into RAM (edgebench deploy) if it fits there"
                             if model else f"lower the buffer sizes in firmware/ports/{port}/port.mk")
        tail = " | ".join(log.splitlines()[-3:])
        raise UsageError(f"building the {port} firmware failed (make exit {proc.returncode}): {tail}",
                         f"run make -C {src} PORT={port} BUILD={out} {' '.join(make_vars)} to see the full log")
    return firmware_image(port, out)


def _stage_blob(model, out: Path) -> tuple:
    """The model's blob written to ``out/model-<crc32>/model.ebm`` (unchanged bytes are not rewritten,
    so make relinks only when the model changed); (that build directory, the blob's path)."""
    # lazy: numpy (import numpy 460 ms measured), kept off `edgebench VERB --help`
    from edgebench.mcu.blob import convert
    from edgebench.modelfile import read_model

    blob = convert(model if not isinstance(model, (str, os.PathLike)) else read_model(model))

    where = out / f"model-{blob.crc32:08x}"   # a name anyone can compute from a public model: no links
    path = where / "model.ebm"
    try:
        write_new_or_same(path, blob.data, "model blob")
    except ResultError as exc:
        raise UsageError(exc.message, exc.hint) from None
    except OSError as exc:
        raise UsageError(f"cannot write the model blob {path}: {exc.strerror or exc}",
                         "check the build folder, its permissions and the free space") from None
    return where, path


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
        self._proc: subprocess.Popen | None = None
        self._emulator: UnicornBoard | QemuBoard | None = None
        self._tail: list = []

    def start(self) -> str:
        image = self.image = self.image or build_firmware(self.fw.port)
        if not image.is_file():
            raise UsageError(f"firmware image {image} does not exist")
        self.url = getattr(self, f"_start_{self.fw.emulator}")(image)   # one per boards.profile.EMULATORS
        return self.url

    def _start_posix(self, image: Path) -> str:
        # --keep-open: serve one host connection after another until we stop it; tied to edgebench
        self._proc = spawn_tied([str(image), "--keep-open"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT)
        out = self._proc.stdout
        assert out is not None       # stdout=PIPE
        sel = selectors.DefaultSelector()
        sel.register(out, selectors.EVENT_READ)
        deadline = time.monotonic() + self.start_timeout_s
        line = b""
        while not line.endswith(b"\n") and time.monotonic() < deadline:
            if sel.select(timeout=0.1):
                ch = out.read1(1) if hasattr(out, "read1") else out.read(1)
                if not ch:
                    break
                line += ch
        sel.close()
        m = re.search(rb"serial on (\S+)", line)
        if not m:
            self.stop()
            raise AgentError(f"the posix firmware {image} did not announce its pty (first line {line[:120]!r})",
                             hint="expected 'eb-posix: serial on /dev/pts/N' as its first line")
        threading.Thread(target=self._drain, args=(out,), daemon=True).start()
        return m.group(1).decode()

    def _drain(self, out) -> None:
        for raw in iter(out.readline, b""):
            self._tail = (self._tail + [raw.decode("utf-8", "replace").rstrip()])[-20:]

    def _start_unicorn(self, image: Path) -> str:
        self._emulator = UnicornBoard(image, chip=self.fw.machine)
        return self._emulator.start()

    def _start_qemu(self, image: Path) -> str:
        require_tool("qemu-system-arm")
        self._emulator = QemuBoard(self.fw.machine, str(image), icount_shift=self.fw.icount_shift)
        return self._emulator.start()

    def alive(self) -> bool:
        if self._proc is not None:
            return self._proc.poll() is None
        if self._emulator is not None:
            return bool(self._emulator.running)
        return False

    def describe(self) -> str:
        what = {"posix": f"posix firmware ({self.image.name if self.image else 'eb-firmware'})",
                "qemu": f"qemu-system-arm -M {self.fw.machine} -icount shift={self.fw.icount_shift}",
                "unicorn": f"unicorn instruction-set emulator ({self.fw.machine} register models)"}
        return f"{what[self.fw.emulator]} started by edgebench"

    @property
    def keeps_time(self) -> bool:
        """False under an emulator whose counter is not the image's speed (unicorn): no latency may come from it."""
        return self.fw.emulator_kind.keeps_time

    def to_dict(self) -> dict:
        pid = self._proc.pid if self._proc is not None else getattr(self._emulator, "pid", None)
        return {"board": self.profile.name, "url": self.url, "emulator": self.fw.emulator,
                "machine": self.fw.machine, "icount_shift": self.fw.icount_shift, "port": self.fw.port,
                "image": str(self.image) if self.image else None, "image_sha256": self._image_sha256(),
                "pid": pid,
                "timing": self.fw.emulator_kind.timing}

    def _image_sha256(self) -> str | None:
        """The firmware image's sha256 (a run names the exact build it ran, --image or built)."""
        if self.image is None or not self.image.is_file():
            return None
        if getattr(self, "_sha", None) is None:
            self._sha = hashlib.sha256(self.image.read_bytes()).hexdigest()
        return self._sha

    def log_tail(self) -> str:
        if self._emulator is not None:
            return " | ".join(ln for ln in self._emulator.output().splitlines()[-3:] if ln.strip())
        return " | ".join(self._tail[-3:])

    def wait(self, poll_s: float = 0.5) -> int | None:
        """Block while the emulator runs (Ctrl-C raises KeyboardInterrupt); its exit status."""
        while self.alive():
            time.sleep(poll_s)
        if self._emulator is not None:
            return self._emulator.returncode
        return self._proc.returncode if self._proc is not None else None

    def stop(self) -> None:
        if self._emulator is not None:
            qemu, self._emulator = self._emulator, None
            qemu.stop()
        if self._proc is not None:
            stop_tied(self._proc)

    def __enter__(self) -> "FirmwareSession":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def flash_board(profile, image: str | os.PathLike | None = None, url: str | None = None,
                timeout_s: float = 600.0, flasher: str | None = None, model=None,
                wait_started_s: float = 10.0) -> dict:
    """Flash a real board: build its port's image (with ``model``'s blob linked in, if given)
    unless ``image`` is given, write it with ``flasher`` (a back-end of
    :data:`edgebench.mcu.flashers.FLASHERS`; default the profile's ``flasher.tool``), then wait
    for the firmware to answer on its serial port (``url``, or the profile's, found by USB ids
    when ``auto``). The profile's own argv (``{image}``, ``{url}``, ``{name}`` filled, no shell)
    runs for a tool the table does not know."""
    # lazy: numpy (import numpy 460 ms measured), kept off `edgebench VERB --help`
    from edgebench.mcu.flashers import FLASHERS, flash_with

    fl = profile.flasher
    name = flasher or (fl.tool if fl else None)
    if name is None:
        raise UsageError(f"board {profile.name} has no flasher in its profile",
                         f"add flasher: {{tool, argv}} to the profile (docs/boards.md), or pick one with --flasher "
                         f"({', '.join(FLASHERS)})")
    if flasher is not None and flasher not in FLASHERS:
        raise UsageError(f"unknown flasher {flasher!r}", f"pick one of {', '.join(FLASHERS)}")
    fw = profile.firmware
    if image is None:
        if fw is None or fw.port is None:
            raise UsageError(f"board {profile.name} has no firmware port in this edgebench to build",
                             "give a prebuilt image: edgebench flash --board B --image FILE")
        image = build_firmware(fw.port, model=model)
    elif model is not None:
        raise UsageError("--model builds an image with the model linked in; --image flashes one as it is",
                         "give one of the two")
    image = Path(image)
    if not image.is_file():
        raise UsageError(f"firmware image {image} does not exist")
    targets = dict(getattr(fl, "targets", ()) or ()) if fl else {}
    if name in FLASHERS and (flasher is not None or name in targets):
        done = flash_with(FLASHERS[name], profile, image, timeout_s=timeout_s)
    else:
        done = _run_profile_argv(profile, image, url, timeout_s)
    done.update(board=profile.name, elf=str(image), started=_wait_started(profile, url, wait_started_s))
    return done


def _run_profile_argv(profile, image: Path, url: str | None, timeout_s: float) -> dict:
    # lazy: numpy (import numpy 460 ms measured), kept off `edgebench VERB --help`
    from edgebench.mcu.flashers import FLASHERS, PLUG_IN

    argv = profile.flasher.command(image=str(image), url=url or profile.transport.url or "", name=profile.name)
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
    known = FLASHERS.get(profile.flasher.tool)
    if known is not None and any(re.search(p, "\n".join(out)) for p in known.no_probe):
        raise TransportError(f"{argv[0]} found no probe or board to flash {profile.name}", PLUG_IN)
    if proc.returncode != 0:
        raise TransportError(f"{argv[0]} failed to flash {profile.name} (exit {proc.returncode}): "
                             + " | ".join(out[-3:]), "is the board connected, powered, and not in use?")
    return {"flasher": profile.flasher.tool, "image": str(image), "argv": argv, "returncode": proc.returncode,
            "elapsed_s": time.monotonic() - t0, "output_tail": out[-5:]}


def _wait_started(profile, url: str | None, timeout_s: float) -> dict:
    """After flashing: the firmware's answer to ``name%`` on the board's serial port (it resets into
    the new image), or why it could not be asked."""
    # lazy: numpy, serial (import numpy 460 ms, serial 20 ms measured), kept off `edgebench VERB --help`
    from edgebench.mcu.protocol import DutClient
    from edgebench.mcu.serial_ports import resolve_url

    try:
        address = resolve_url(profile, url)
    except TransportError as exc:
        return {"ok": False, "port": None, "reason": exc.message}
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with DutClient(address, baud=profile.transport.baud or 115200, timeout_s=2.0) as dut:
                return {"ok": True, "port": address, "name": dut.sync()}
        except (TransportError, AgentError) as exc:
            if time.monotonic() >= deadline:
                return {"ok": False, "port": address, "reason": exc.message}
            time.sleep(0.5)


__all__ = ["FirmwareSession", "flash_board", "build_firmware", "build_dir", "firmware_dir", "firmware_image",
           "require_tool", "INSTALL_HINTS"]
