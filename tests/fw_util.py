"""Shared pytest helpers for the firmware (firmware/): build, run, talk.

* ``build_firmware(port, build_dir)`` runs ``make -C firmware PORT=... BUILD=...``
  and returns the image path; ``build_fuzz(build_dir)`` builds the fuzz target.
* ``posix_firmware_bin`` is a session fixture (tests/conftest.py loads this module as a plugin)
  giving the posix firmware built once per test session, in a build folder kept between
  sessions (make rebuilds only what changed); every module shares it.
* ``PosixFirmware(binary)`` starts the posix firmware, reads the pty path it
  prints (``eb-posix: serial on /dev/pts/N``) and opens it with real pyserial;
  use it as a context manager. It is a ``Device``.
* ``run_fresh(argv, timeout)`` runs a program from a fresh small parent, so its peak RSS
  (``ru_maxrss``, libFuzzer's ``-rss_limit_mb``) does not start at the pytest process's.
* ``Device(path)`` talks to any firmware on a serial port: ``raw(cmd)`` is the
  exact reply bytes up to and including ``m-ready\\r\\n``; ``command(cmd)`` the
  reply lines without CRLF and without the final ``m-ready``.
* ``frame(seq, payload)`` is one binary upload frame (firmware/PROTOCOL.md).
* ``fw`` (a running posix firmware's pty) and ``client`` (an edgebench client of it) are
  fixtures to import beside ``posix_firmware_bin``; ``run_main(capsys, *args)`` runs the
  console entry point in-process and gives (exit code, stdout, stderr).

Failures carry what was received, so a wrong reply is readable in the report.
"""
from __future__ import annotations

import os
import selectors
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIRMWARE_DIR = REPO / "firmware"
READY = b"m-ready\r\n"

_built: dict[tuple[str, str], Path] = {}


def make_env() -> dict:
    """The environment for a make of our own: not a sub-make of one running the tests (`make test`'s
    MAKEFLAGS/MAKELEVEL would add -w and "Entering directory" lines to what we read)."""
    return {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}


def _make(args: list[str], build_dir: Path) -> None:
    cmd = ["make", "--no-print-directory", f"-j{os.cpu_count() or 2}", "-C", str(FIRMWARE_DIR),
           f"BUILD={build_dir}", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=make_env())
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n"
                           f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")


def build_firmware(port: str = "posix", build_dir: Path | None = None) -> Path:
    """Build the firmware for ``port``; return the image (posix: an executable)."""
    build_dir = Path(build_dir or FIRMWARE_DIR / "build" / port).resolve()
    key = (port, str(build_dir))
    if key not in _built:
        _make([f"PORT={port}"], build_dir)
        image = subprocess.run(["make", "-s", "--no-print-directory", "-C", str(FIRMWARE_DIR), f"PORT={port}",
                                f"BUILD={build_dir}", "print-FW_IMAGE"],
                               capture_output=True, text=True, check=True, env=make_env()).stdout.strip()
        _built[key] = Path(image)
    return _built[key]


# The hop of run_fresh: a small process that forks the command and passes on its exit status
# (signals as 128+N, as a shell does). Its own child is forked from this small process, not from pytest.
_HOP = ("import subprocess, sys\n"
        "rc = subprocess.call(sys.argv[1:])\n"
        "sys.exit(128 - rc if rc < 0 else rc)\n")


def run_fresh(argv: list, timeout: float, text: bool = True) -> subprocess.CompletedProcess:
    """``subprocess.run(argv, capture_output=True)`` from a fresh, small parent instead of this process.

    Linux carries a process's peak RSS into the programs it starts: a child created with
    vfork/posix_spawn (what subprocess uses) shares its parent's memory map until it execs, and
    exec records that map's high-water mark as the new program's own ``ru_maxrss``. After
    TensorFlow or a 1.5 GB array in the pytest process, libFuzzer (whose ``-rss_limit_mb`` reads
    ``ru_maxrss``) would see that peak and stop at its first input. Here a fresh Python hop forks
    the command, so its ``ru_maxrss`` starts from the hop's ~10 MB whatever ran in pytest before.
    On timeout the hop's process group (its own session) is killed and TimeoutExpired raised."""
    import signal

    with subprocess.Popen([sys.executable, "-S", "-c", _HOP, *map(str, argv)], start_new_session=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=text) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def build_fuzz(build_dir: Path) -> Path:
    """Build the libFuzzer target of the command parser; return its path."""
    build_dir = Path(build_dir).resolve()
    _make(["fuzz"], build_dir)
    return build_dir / "fuzz" / "fuzz_proto"


def cached_build_dir(port: str) -> Path:
    """A build folder that outlives the test session, one per build configuration: make rebuilds what
    changed (the objects depend on their sources and headers, -MMD), and a change to a makefile or
    another checkout gives a new folder. Under $EDGEBENCH_FIRMWARE_BUILD (as edgebench's own builds), else ~/.cache/edgebench."""
    import hashlib

    mk = [FIRMWARE_DIR / "Makefile", *sorted(FIRMWARE_DIR.rglob("*.mk"))]
    # the checkout's own path too: two clones (or worktrees) must not share one folder, where make's
    # timestamps would keep the objects of the other's sources
    key = hashlib.sha256(str(FIRMWARE_DIR).encode() + b"".join(p.read_bytes() for p in mk if p.is_file())
                         ).hexdigest()[:12]
    base = os.environ.get("EDGEBENCH_FIRMWARE_BUILD") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "edgebench", "firmware")
    return Path(base) / f"test-{port}-{key}"


@pytest.fixture(scope="session")
def posix_firmware_bin() -> Path:
    """The posix firmware, built once per session (shared across modules) into :func:`cached_build_dir`,
    so a session whose sources did not change builds nothing; pytest-xdist's workers take turns (a lock)."""
    import fcntl

    if sys.platform == "win32":
        pytest.skip("the posix firmware needs a POSIX system (pseudo-terminals)")
    build_dir = cached_build_dir("posix")
    build_dir.mkdir(parents=True, exist_ok=True)
    with open(build_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return build_firmware("posix", build_dir)


@pytest.fixture
def fw(posix_firmware_bin):
    """A running posix firmware (as `edgebench flash --board posix-sim` keeps one); its pty."""
    from edgebench.boards.registry import get_profile
    from edgebench.mcu.firmware import FirmwareSession

    with FirmwareSession(get_profile("posix-sim"), image=posix_firmware_bin) as session:
        yield session.url


@pytest.fixture
def client(fw):
    """An open edgebench client of that firmware."""
    from edgebench.boards.connect import open_client
    from edgebench.boards.registry import get_profile

    c = open_client(get_profile("posix-sim"), url=fw)
    yield c
    c.close()


def run_main(capsys, *args) -> tuple[int, str, str]:
    """The console entry point in-process: (exit code, stdout, stderr)."""
    from edgebench.cli.app import main

    code = 0
    try:
        main([str(a) for a in args])
    except SystemExit as exc:
        code = exc.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err


def frame(seq: int, payload: bytes) -> bytes:
    """One upload frame: EB 5A seq:u16le len:u16le payload crc32(seq,len,payload):u32le."""
    head = struct.pack("<HH", seq & 0xFFFF, len(payload))
    return b"\xeb\x5a" + head + payload + struct.pack("<I", zlib.crc32(head + payload))


ABORT_FRAME = frame(0xFFFF, b"")


class Device:
    """A firmware on a serial port, through pyserial (8N1, no flow control)."""

    def __init__(self, path: str, *, baudrate: int = 115200, timeout: float = 10.0):
        import serial

        self.path = path
        self.timeout = timeout
        self.serial = serial.Serial(path, baudrate=baudrate, timeout=timeout)

    def write(self, data: bytes) -> None:
        self.serial.write(data)
        self.serial.flush()

    def send(self, command: str | bytes) -> None:
        """Send one command; the terminating '%' is added."""
        data = command.encode() if isinstance(command, str) else command
        self.write(data + b"%")

    def read_until(self, marker: bytes = READY, timeout: float | None = None) -> bytes:
        """Bytes up to and including ``marker``; AssertionError on timeout."""
        self.serial.timeout = self.timeout if timeout is None else timeout
        data = self.serial.read_until(marker)
        if not data.endswith(marker):
            raise AssertionError(f"no {marker!r} within {self.serial.timeout} s on "
                                 f"{self.path}; received {data!r}")
        return data

    def readline(self, timeout: float | None = None) -> str:
        """One reply line without its CRLF; AssertionError on timeout."""
        return self.read_until(b"\r\n", timeout).decode("latin-1")[:-2]

    def expect_silence(self, seconds: float) -> None:
        """Assert that nothing arrives for ``seconds``."""
        self.serial.timeout = seconds
        data = self.serial.read(1)
        if data:
            data += self.serial.read(self.serial.in_waiting)
            raise AssertionError(f"expected no reply, received {data!r}")

    def raw(self, command: str | bytes, timeout: float | None = None) -> bytes:
        """The exact reply to ``command``, up to and including ``m-ready\\r\\n``."""
        self.send(command)
        return self.read_until(READY, timeout)

    def command(self, command: str | bytes, timeout: float | None = None) -> list[str]:
        """The reply lines to ``command`` (CRLF stripped), without the final m-ready."""
        data = self.raw(command, timeout)
        lines = data.decode("latin-1").split("\r\n")
        assert lines[-2:] == ["m-ready", ""], data
        return lines[:-2]

    def close(self) -> None:
        self.serial.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class PosixFirmware(Device):
    """The posix firmware in a subprocess, reached through its pseudo-terminal."""

    def __init__(self, binary: Path, *args: str, timeout: float = 10.0, start_timeout: float = 10.0):
        self.proc = subprocess.Popen([str(binary), *args], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            path = self._read_pty_path(start_timeout)
            super().__init__(path, timeout=timeout)
        except BaseException:
            self.proc.kill()
            self.proc.wait(timeout=5)
            raise

    def _read_pty_path(self, start_timeout: float) -> str:
        prefix = b"eb-posix: serial on "
        line = b""
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            deadline = time.monotonic() + start_timeout
            while not line.endswith(b"\n"):
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    raise AssertionError(f"the firmware printed no pty path in {start_timeout} s "
                                         f"(got {line!r})")
                chunk = os.read(self.proc.stdout.fileno(), 1)
                if not chunk:
                    raise AssertionError(f"the firmware exited ({self.proc.wait()}) before "
                                         f"printing its pty path: {self.proc.stderr.read()!r}")
                line += chunk
        if not line.startswith(prefix):
            raise AssertionError(f"unexpected first line from the firmware: {line!r}")
        return line[len(prefix):].decode().strip()

    def stop(self, timeout: float = 5.0) -> int:
        """Hang up (close the serial port) and return the firmware's exit code."""
        if self.serial.is_open:
            self.close()
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
            raise AssertionError("the firmware did not exit after the host hung up") from None
        finally:
            self.proc.stdout.close()
            self.proc.stderr.close()

    def __exit__(self, *exc) -> None:
        self.stop()
