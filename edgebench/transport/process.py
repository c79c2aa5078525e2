"""A :class:`~edgebench.transport.base.Channel` over a child process's stdin/stdout.

Used by the ``local`` transport (``python -m edgebench.agent``) and by ``ssh``
(the system OpenSSH client running the agent remotely). The channel starts the
process itself, talks to it through binary unbuffered pipes, and never blocks
forever: every read and write waits on the file descriptor with a deadline
(``selectors`` + ``os.read``/``os.write``). The child's stderr is drained by a
daemon thread into a bounded tail buffer so that a crash can be explained
(:meth:`ProcessChannel.diagnostics`) and a chatty child can never fill the pipe
and stall. The child is started with :func:`~edgebench.transport.child.spawn_tied`
(its own process group, killed by the kernel when edgebench dies, SIGKILL included)
and ended with :func:`~edgebench.transport.child.stop_tied`.
"""
from __future__ import annotations

import os
import selectors
import signal
import subprocess
import threading
import time

from edgebench.errors import TransportError
from edgebench.transport.buffered import BufferedReads
from edgebench.transport.child import spawn_tied, stop_tied

_STDERR_TAIL_BYTES = 64 * 1024
_READ_CHUNK = 1 << 16


def describe_returncode(returncode: int | None) -> str:
    """'exited with signal 6 (SIGABRT)', 'exited with status 1', or 'is still running'."""
    if returncode is None:
        return "is still running"
    if returncode < 0:
        return f"exited with signal {-returncode} ({_signal_name(-returncode)})"
    text = f"exited with status {returncode}"
    if 128 < returncode <= 128 + 64:  # a shell in between reports a signal as 128+N
        sig = returncode - 128
        text += f" (a shell's way of saying signal {sig}, {_signal_name(sig)})"
    return text


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class ProcessChannel(BufferedReads):
    """Start ``argv`` and speak to it over its stdin/stdout.

    ``description`` names the far end in messages ("local agent", "ssh pi@pi5").
    ``env`` is the child's complete environment (None: inherit this process's);
    ``cwd`` its working directory. ``write_timeout_s`` bounds how long a write
    may wait for the child to drain its stdin.
    """

    def __init__(
        self,
        argv: list[str],
        description: str,
        env: dict | None = None,
        cwd: str | None = None,
        write_timeout_s: float = 60.0,
    ):
        self.argv = list(argv)
        self.description = description
        self.write_timeout_s = write_timeout_s
        try:
            # tied: own process group (a terminal's Ctrl-C reaches edgebench, which stops
            # it), and killed by the kernel if edgebench dies in any way (SIGKILL too)
            self._proc = spawn_tied(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=0,
                env=env,
                cwd=cwd,
                close_fds=True,
            )
        except OSError as exc:
            raise TransportError(
                f"cannot start {description} ({self.argv[0]}): {exc.strerror or exc}",
                hint="check that the program exists and is executable",
            ) from exc
        stdin, stdout, stderr = self._proc.stdin, self._proc.stdout, self._proc.stderr
        assert stdin is not None and stdout is not None and stderr is not None   # the three are pipes
        self._stdin, self._stdout, self._stderr = stdin, stdout, stderr
        self._in_fd = stdin.fileno()
        self._out_fd = stdout.fileno()
        os.set_blocking(self._in_fd, False)
        self._rbuf = bytearray()
        self._eof = False
        self._closed = False
        self._sel_r = selectors.DefaultSelector()
        self._sel_r.register(self._out_fd, selectors.EVENT_READ)
        self._sel_w = selectors.DefaultSelector()
        self._sel_w.register(self._in_fd, selectors.EVENT_WRITE)
        self._err_lock = threading.Lock()
        self._err_tail = bytearray()
        self._err_thread = threading.Thread(
            target=self._drain_stderr, name=f"stderr:{description}", daemon=True
        )
        self._err_thread.start()

    # -- properties -----------------------------------------------------------------
    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        return self._proc.poll()

    # -- Channel --------------------------------------------------------------------
    def write(self, data: bytes) -> None:
        if self._closed:
            raise TransportError(f"{self.description}: channel is closed")
        view = memoryview(data)
        deadline = time.monotonic() + self.write_timeout_s
        while view:
            try:
                n = os.write(self._in_fd, view)
                view = view[n:]
                continue
            except BlockingIOError:
                pass
            except (BrokenPipeError, ConnectionResetError, OSError) as exc:
                raise TransportError(
                    f"cannot write to {self.description}: it {self._state_text()}"
                ) from exc
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TransportError(
                    f"timed out after {self.write_timeout_s:g} s writing to "
                    f"{self.description} (it does not read its input)"
                )
            self._sel_w.select(min(remaining, 0.5))

    def alive(self) -> bool:
        return not self._closed and self._proc.poll() is None

    def diagnostics(self) -> str:
        if self._proc.poll() is None and self._eof:
            # Output closed: the process is usually on its way out; give it a moment.
            try:
                self._proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                pass
        if self._proc.poll() is not None:
            self._err_thread.join(timeout=1.0)
        text = f"{self.description} {describe_returncode(self._proc.poll())}"
        tail = self.stderr_tail()
        if tail:
            text += f"; stderr: {tail}"
        return text

    def stderr_tail(self, max_lines: int = 12, max_chars: int = 2000) -> str:
        """The last lines the child wrote to stderr, joined with ' | '."""
        with self._err_lock:
            raw = bytes(self._err_tail)
        lines = [ln.strip() for ln in raw.decode("utf-8", "replace").splitlines()]
        lines = [ln for ln in lines if ln][-max_lines:]
        text = " | ".join(lines)
        if len(text) > max_chars:
            text = "..." + text[-max_chars:]
        return text

    def close(self, grace_s: float = 2.0) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._stdin.close()  # EOF: a well-behaved agent exits by itself
        except OSError:
            pass
        try:
            self._proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            pass
        # then SIGTERM, SIGKILL to its whole process group (whatever it started dies too)
        stop_tied(self._proc, grace_s=grace_s)
        for sel in (self._sel_r, self._sel_w):
            sel.close()
        try:
            self._stdout.close()
        except OSError:
            pass
        self._err_thread.join(timeout=1.0)

    def __repr__(self) -> str:
        return f"ProcessChannel({self.description!r}, pid={self._proc.pid})"

    # -- internals ------------------------------------------------------------------
    def _fill(self, deadline: float, timeout_s: float, what: str, want: int = 1) -> None:
        if self._eof:
            raise TransportError(f"end of stream from {self.description} while reading {what}")
        if self._closed:
            raise TransportError(f"{self.description}: channel is closed")
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TransportError(
                f"timed out after {timeout_s:g} s waiting for {what} from "
                f"{self.description} (it {self._state_text()})"
            )
        if not self._sel_r.select(remaining):
            return  # the next call sees the deadline passed
        try:
            chunk = os.read(self._out_fd, _READ_CHUNK)
        except OSError as exc:
            raise TransportError(f"cannot read from {self.description}: {exc}") from exc
        if not chunk:
            self._eof = True
            raise TransportError(f"end of stream from {self.description} while reading {what}")
        self._rbuf += chunk

    def _state_text(self) -> str:
        return describe_returncode(self._proc.poll())

    def _drain_stderr(self) -> None:
        fd = self._stderr.fileno()
        try:
            while True:
                chunk = os.read(fd, 4096)
                if not chunk:
                    break
                with self._err_lock:
                    self._err_tail += chunk
                    excess = len(self._err_tail) - _STDERR_TAIL_BYTES
                    if excess > 0:
                        del self._err_tail[:excess]
        except OSError:
            pass
        finally:
            try:
                self._stderr.close()
            except OSError:
                pass
