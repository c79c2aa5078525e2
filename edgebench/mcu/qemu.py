"""Launch and supervise firmware under ``qemu-system-arm`` with its UART on a pty.

The MPS2 ports of the firmware (``firmware/ports/mps2-an386`` Cortex-M4F and
``mps2-an500`` Cortex-M7) run under QEMU's machine models of the same names. QEMU
puts the board's UART0 on a pseudo-terminal and prints its path on start-up::

    char device redirected to /dev/pts/7 (label serial0)

:class:`QemuBoard` starts the emulator (an argv list, never a shell), waits for that
line with a timeout, returns the pty path for pyserial to open, and stops the
emulator on :meth:`QemuBoard.stop` or when leaving its ``with`` block. QEMU runs in a
process group of its own with a parent-death signal (:func:`edgebench.transport.child.spawn_tied`):
if edgebench dies without stopping it, even by SIGKILL, the kernel ends it::

    with QemuBoard("mps2-an386", "build/m4/edgebench.elf", icount_shift=0) as board:
        port = serial.Serial(board.pty_path, 115200, timeout=1)

With ``icount_shift=N`` QEMU runs in instruction-counting mode: each emulated
instruction advances virtual time by 2**N ns, so the board's 25 MHz counter counts
emulated instructions (40 instructions per tick at shift 0) and repeats to +-1 tick
from run to run. Such timings are ``emulated``: they are not the speed of a real
Cortex-M4/M7. With ``icount_shift=None`` QEMU runs ``-icount shift=auto``: virtual
time is paced to the host's clock and ticks depend on the host's load.
"""
from __future__ import annotations

import os
import queue
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
import weakref
from collections import deque
from pathlib import Path
from typing import Any, Iterable, Sequence

from edgebench.errors import TransportError
from edgebench.transport.child import spawn_tied, stop_tied

QEMU_PROGRAM = "qemu-system-arm"

#: QEMU machine -> what runs on it (for messages and board profiles). ``serial`` is the index
#: of the UART the port talks on among the machine's serial devices (netduinoplus2: USART1..6 are
#: serial0..5, and the Nucleo's virtual COM port is USART2).
MACHINES: dict[str, dict[str, Any]] = {
    "mps2-an386": {"cpu": "cortex-m4", "port": "mps2-an386", "counter_hz": 25_000_000, "serial": 0},
    "mps2-an500": {"cpu": "cortex-m7", "port": "mps2-an500", "counter_hz": 25_000_000, "serial": 0},
    "netduinoplus2": {"cpu": "cortex-m4", "port": "netduinoplus2", "counter_hz": 25_000_000, "serial": 1},
}

_PTY_LINE = re.compile(r"char device redirected to (\S+) \(label (\S+)\)")
_INSTALL_HINT = "install it: apt-get install qemu-system-arm"


class QemuError(TransportError):
    """QEMU is missing, could not start, or died."""


class QemuMissingError(QemuError):
    """``qemu-system-arm`` is not installed."""


def find_qemu(program: str = QEMU_PROGRAM) -> str:
    """Absolute path of the emulator, or :class:`QemuMissingError` saying how to get it."""
    if os.sep in program:
        if os.access(program, os.X_OK):
            return program
        raise QemuMissingError(f"{program} is not an executable file", hint=_INSTALL_HINT)
    path = shutil.which(program)
    if path is None:
        raise QemuMissingError(f"{program} is not installed (not found on PATH)",
                               hint=_INSTALL_HINT)
    return path


def _stop_process(proc: subprocess.Popen, timeout_s: float) -> None:
    """SIGTERM to QEMU's process group, then SIGKILL after ``timeout_s``; always reaps it."""
    stop_tied(proc, grace_s=timeout_s)
    if proc.stdin is not None:
        try:
            proc.stdin.close()
        except OSError:
            pass
    # proc.stdout belongs to the reader thread: it ends at EOF and closes it.


class QemuBoard:
    """One ``qemu-system-arm`` process running a firmware ELF, UART0 on a pty.

    :param machine: QEMU machine (``mps2-an386``, ``mps2-an500``; any ``-M`` value works).
    :param elf: the firmware image (``-kernel``).
    :param icount_shift: ``-icount shift=N`` (deterministic, instruction-counting
        virtual time), or ``None`` for ``shift=auto`` (virtual time paced to the
        host's clock: neither repeatable nor a real board's speed).
    :param extra_args: further QEMU arguments, appended as given (argv items).
    :param semihosting: pass ``-semihosting-config enable=on,target=native`` so that a
        firmware's semihosting ``SYS_EXIT`` ends QEMU with its status.
    :param qemu: the emulator program (name on PATH or a path).
    :param start_timeout_s: how long :meth:`start` waits for the pty line.
    :param connect_wait_s: how long the CPU stays stopped after the pty is opened,
        so that QEMU's once-a-second poll sees it connected (see ``_connect_and_run``).
    """

    def __init__(self, machine: str, elf: str | os.PathLike, icount_shift: int | None = 0,
                 extra_args: Sequence[str] = (), *, semihosting: bool = True,
                 qemu: str = QEMU_PROGRAM, start_timeout_s: float = 10.0,
                 connect_wait_s: float = 1.1):
        if icount_shift is not None and not (0 <= int(icount_shift) <= 10):
            raise QemuError(f"icount_shift must be 0..10 (or None), not {icount_shift!r}")
        if isinstance(extra_args, (str, bytes)):
            raise QemuError("extra_args must be a list of argv items, not one string")
        self.machine = machine
        self.elf = Path(elf)
        self.icount_shift = None if icount_shift is None else int(icount_shift)
        self.extra_args = tuple(str(a) for a in extra_args)
        self.semihosting = semihosting
        self.qemu = qemu
        self.start_timeout_s = start_timeout_s
        self.connect_wait_s = connect_wait_s
        self.pty_path: str | None = None
        self._keeper_fd: int | None = None
        self._proc: subprocess.Popen | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._tail: deque[str] = deque(maxlen=40)
        self._reader: threading.Thread | None = None
        self._finalizer: weakref.finalize | None = None

    # -- argv -------------------------------------------------------------------------
    def argv(self, qemu_path: str | None = None) -> list[str]:
        """The emulator's command line (a list; nothing goes through a shell)."""
        # -S: the CPU starts stopped; start() resumes it with the monitor's `cont`
        # once QEMU has seen the pty opened (see start()). The monitor is on stdio
        # (a pipe), never on the board's UART.
        argv = [qemu_path or self.qemu, "-M", self.machine,
                "-display", "none", "-nodefaults", "-S", "-monitor", "stdio"]
        argv += ["-serial", "null"] * self.serial_index + ["-serial", "pty"]
        argv += ["-kernel", str(self.elf)]
        # Always in instruction-counting mode: with a fixed shift, virtual time is
        # deterministic; without one, shift=auto paces it to the host's clock. Plain
        # TCG (no -icount) is avoided: there QEMU 7.2 stalls the UART's input (the
        # firmware's WFI wake-up of QEMU's main loop only exists under -icount; see
        # firmware/ports/mps2-common/eb_port_mps2.c, eb_port_getc).
        shift = "auto" if self.icount_shift is None else str(self.icount_shift)
        argv += ["-icount", f"shift={shift}"]
        if self.semihosting:
            argv += ["-semihosting-config", "enable=on,target=native"]
        argv += list(self.extra_args)
        return argv

    @property
    def serial_index(self) -> int:
        """Which of the machine's serial devices is the board's host link (its ``-serial pty``)."""
        return int(MACHINES.get(self.machine, {}).get("serial", 0))

    @property
    def timing_label(self) -> str:
        """How the counter's ticks must be labelled: always ``emulated`` under QEMU."""
        return "emulated"

    @property
    def instructions_per_tick(self) -> float | None:
        """Emulated instructions per 25 MHz counter tick under ``-icount`` (else None).

        With ``shift=N`` one instruction is 2**N ns of virtual time and one tick is
        40 ns, so a tick is 40 / 2**N instructions (40 at shift 0; checked by
        benchmarks/engine_instructions.py with a loop of known length).
        """
        if self.icount_shift is None:
            return None
        hz = MACHINES.get(self.machine, {}).get("counter_hz", 25_000_000)
        return (1e9 / hz) / (2 ** self.icount_shift)

    # -- life cycle -------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    @property
    def returncode(self) -> int | None:
        return None if self._proc is None else self._proc.poll()

    def output(self) -> str:
        """The last lines QEMU printed (stdout and stderr), for error messages."""
        return "\n".join(self._tail)

    def start(self) -> str:
        """Start QEMU; return the pty path of the board's UART0.

        Raises :class:`QemuMissingError` without ``qemu-system-arm``, :class:`QemuError`
        when the ELF is missing, QEMU exits early, or no pty line comes in time.
        """
        if self.running:
            assert self.pty_path is not None
            return self.pty_path
        qemu_path = find_qemu(self.qemu)
        if not self.elf.is_file():
            raise QemuError(f"firmware image {self.elf} does not exist",
                            hint="build it first: make -C firmware PORT=<port> BUILD=<dir>")
        argv = self.argv(qemu_path)
        try:
            # tied to edgebench: its own process group (a terminal's Ctrl-C reaches edgebench,
            # which stops it) and killed by the kernel when edgebench dies, SIGKILL included
            self._proc = spawn_tied(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, text=True, errors="replace", bufsize=1)
        except OSError as exc:
            raise QemuError(f"cannot run {qemu_path}: {exc}", hint=_INSTALL_HINT) from exc
        # Stop the emulator if the Python process ends without stop() (a finalizer
        # also runs at interpreter exit).
        self._finalizer = weakref.finalize(self, _stop_process, self._proc, 2.0)
        self._reader = threading.Thread(target=self._drain, args=(self._proc,),
                                        name=f"qemu-{self._proc.pid}", daemon=True)
        self._reader.start()

        deadline = time.monotonic() + self.start_timeout_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.stop()
                raise QemuError(
                    f"{self.machine}: QEMU printed no pty path within "
                    f"{self.start_timeout_s:g} s", hint=self._tail_hint())
            try:
                line = self._lines.get(timeout=min(remaining, 0.2))
            except queue.Empty:
                continue
            if line is None:  # QEMU exited
                code = self._proc.wait()
                self.stop()
                raise QemuError(f"{self.machine}: QEMU exited with status {code} "
                                "before opening the serial pty", hint=self._tail_hint())
            match = _PTY_LINE.search(line)
            if match and match.group(2) == f"serial{self.serial_index}":
                self.pty_path = match.group(1)
                break
        self._connect_and_run()
        return self.pty_path

    def _connect_and_run(self) -> None:
        """Hold the pty open, give QEMU time to notice, then start the CPU.

        QEMU's pty back-end (chardev/char-pty.c) drops guest output while no one has
        the pty open, and polls for an opener only once a second. So the CPU waits
        stopped (-S) until that poll has seen our descriptor - the firmware's
        start-up lines are then never lost - and the descriptor stays open until
        stop(): QEMU never sees the pty closed, and clients (pyserial, another
        edgebench process) may close and reopen it without losing output.
        """
        assert self._proc is not None and self.pty_path is not None
        try:
            self._keeper_fd = os.open(self.pty_path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        except OSError as exc:
            self.stop()
            raise QemuError(f"cannot open QEMU's serial pty {self.pty_path}: {exc}") from exc
        time.sleep(self.connect_wait_s)
        if self._proc.poll() is not None:
            code = self._proc.returncode
            self.stop()
            raise QemuError(f"{self.machine}: QEMU exited with status {code} at start-up",
                            hint=self._tail_hint())
        self._monitor("cont")

    def read_memory(self, address: int, size: int, timeout_s: float = 10.0) -> bytes:
        """``size`` bytes of the guest's physical memory at ``address`` (QEMU monitor
        ``pmemsave``), e.g. to read a stack's high-water mark. The guest keeps running."""
        if not self.running:
            raise QemuError(f"{self.machine}: QEMU is not running")
        with tempfile.TemporaryDirectory(prefix="eb-qemu-") as tmp:
            path = Path(tmp) / "mem.bin"
            self._monitor(f'pmemsave {int(address)} {int(size)} "{path}"')
            deadline = time.monotonic() + timeout_s
            while time.monotonic() < deadline:
                if path.is_file() and path.stat().st_size >= size:
                    time.sleep(0.05)  # let QEMU finish and close the file
                    return path.read_bytes()[:size]
                self.check_alive()
                time.sleep(0.02)
        raise QemuError(f"{self.machine}: QEMU did not dump {size} bytes at {address:#x} "
                        f"within {timeout_s:g} s", hint=self._tail_hint())

    def _monitor(self, command: str) -> None:
        """One human-monitor command on QEMU's stdin (no reply awaited)."""
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write(command + "\n")
            self._proc.stdin.flush()
        except (OSError, ValueError) as exc:
            raise QemuError(f"{self.machine}: cannot send {command!r} to the QEMU monitor: {exc}",
                            hint=self._tail_hint()) from exc

    def _drain(self, proc: subprocess.Popen) -> None:
        """Reader thread: keep QEMU's output pipe empty (QEMU never blocks on it)."""
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                line = line.rstrip("\n")
                self._tail.append(line)
                if self.pty_path is None:  # only start() reads the queue
                    self._lines.put(line)
        except (OSError, ValueError):
            pass
        try:
            proc.stdout.close()
        except OSError:
            pass
        self._lines.put(None)

    def _tail_hint(self) -> str:
        tail = " | ".join(t for t in self._tail if t.strip())
        return f"QEMU said: {tail}" if tail else "QEMU printed nothing"

    def stop(self, timeout_s: float = 5.0) -> int | None:
        """Stop the emulator (SIGTERM, then SIGKILL); returns its exit status."""
        proc = self._proc
        if proc is None:
            return None
        _stop_process(proc, timeout_s)
        if self._keeper_fd is not None:
            try:
                os.close(self._keeper_fd)
            except OSError:
                pass
            self._keeper_fd = None
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        if self._reader is not None:
            self._reader.join(timeout=1.0)
        return proc.returncode

    def wait(self, timeout_s: float) -> int:
        """Wait for QEMU to exit on its own (e.g. semihosting SYS_EXIT); its status."""
        if self._proc is None:
            raise QemuError("QEMU was not started")
        try:
            return self._proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired as exc:
            raise QemuError(f"{self.machine}: QEMU still running after {timeout_s:g} s") \
                from exc

    def check_alive(self) -> None:
        """Raise :class:`QemuError` with QEMU's last words if it is no longer running."""
        if self._proc is not None and self._proc.poll() is not None:
            raise QemuError(f"{self.machine}: QEMU exited with status "
                            f"{self._proc.returncode}", hint=self._tail_hint())

    def __enter__(self) -> "QemuBoard":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = f"pid {self.pid} on {self.pty_path}" if self.running else "stopped"
        return f"QemuBoard({self.machine!r}, {str(self.elf)!r}, {state})"


def qemu_argv_summary(argv: Iterable[str]) -> str:
    """A copy-pasteable rendering of an argv (for logs and docs)."""
    return " ".join(shlex.quote(a) for a in argv)
