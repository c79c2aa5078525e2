"""The ``serial`` transport: talk to an agent already running on a serial console.

The board runs the agent on its side of the line, e.g. on a Linux USB gadget
console: ``python3 -m edgebench.agent --tty /dev/ttyGS0 --baud 115200``. Here we
open the host's end with pyserial's ``serial_for_url`` (so a device path such as
``/dev/ttyUSB0`` or ``COM3``, ``rfc2217://host:port``, ``socket://host:port`` and
``loop://`` all work), always with an exclusive lock so two programs never
interleave bytes on one line.

Serial links give no sign of whether anything listens: a silent port simply
never answers. :class:`SerialChannel` therefore counts what it sees so that a
timeout can say whether nothing at all came back (agent not running, wrong
port, wrong baud rate) or bytes came back that were not agent frames (a login
shell or boot log on that console, or a wrong baud rate).
"""
from __future__ import annotations

import errno
import time

import serial  # pyserial (absolute import: this module is edgebench.transport.serial)

from edgebench.errors import TransportError, UsageError
from edgebench.transport.buffered import BufferedReads

_POLL_S = 0.05  # pyserial read timeout per poll; reads return as soon as data arrives
FIRST_BYTE_S = 15.0  # an agent already serving on the line answers its first request within this
_WRITE_CHUNK = 4096
_TAIL_BYTES = 160
_FRAME_MAGIC = b"EB1 "

_LIST_PORTS_HINT = "list the serial ports with: python -m serial.tools.list_ports"
_BUSY_HINT = "is another program (screen, minicom, another edgebench) using it?"


def _port_name(url: str) -> str:
    """``serial:///dev/ttyUSB0`` -> ``/dev/ttyUSB0``; pyserial URLs pass unchanged."""
    if url.startswith("serial://"):
        return url[len("serial://"):]
    return url


class SerialChannel(BufferedReads):
    """A :class:`~edgebench.transport.base.Channel` over an open pyserial port."""

    def __init__(self, port, url: str, baud: int, description: str | None = None,
                 write_timeout_s: float = 5.0):
        self._port = port
        self.url = url
        self.baud = baud
        self.description = description or f"serial {url} at {baud} baud"
        self._rbuf = bytearray()
        self._closed = False
        self._dead: str | None = None  # why the port stopped working, if it did
        self.bytes_in = 0
        self.bytes_out = 0
        self._tail = bytearray()
        self._saw_frame = False
        self._first_read: float | None = None   # when this channel first waited for a byte
        # Bound each pyserial write call: one chunk's time on the wire plus the slack.
        # (pyserial's rfc2217:// has no write timeout: NotImplementedError; its socket sends do not stall)
        if not url.startswith("rfc2217://"):
            self._port.write_timeout = write_timeout_s + _WRITE_CHUNK * 10 / max(baud, 1)

    # -- Channel --------------------------------------------------------------------
    def write(self, data: bytes) -> None:
        self._check_usable()
        view = memoryview(data)
        try:
            for i in range(0, len(view), _WRITE_CHUNK):
                chunk = view[i:i + _WRITE_CHUNK]
                n = self._port.write(chunk)
                if n is not None and n != len(chunk):
                    raise serial.SerialTimeoutException("short write")
                self.bytes_out += len(chunk)
            # No flush(): tcdrain has no timeout and could hang on a stalled line.
        except serial.SerialTimeoutException as exc:
            raise TransportError(
                f"timed out writing to {self.description} after {self.bytes_out} bytes "
                "(the line is blocked: flow control, or nothing reads the other end)",
                hint="check the cable and that the board's side is open",
            ) from exc
        except (serial.SerialException, OSError) as exc:
            self._dead = str(exc)
            raise TransportError(f"cannot write to {self.description}: {exc}") from exc

    def alive(self) -> bool:
        return not self._closed and self._dead is None and bool(self._port.is_open)

    def diagnostics(self) -> str:
        text = (f"serial port {self.url} at {self.baud} baud: received {self.bytes_in} bytes, "
                f"sent {self.bytes_out}")
        if self._dead:
            return f"{text}; the port failed: {self._dead}"
        hint = self.silence_hint()
        return f"{text}; {hint}" if hint else text

    def silence_hint(self) -> str | None:
        """Why no agent frame came back, judged from what did come back (or None)."""
        if self.bytes_in == 0:
            return ("nothing came back: is the agent running on the board's console "
                    f"(python3 -m edgebench.agent --tty /dev/ttyGS0 --baud {self.baud}), "
                    "is this the right port, and does the board use the same baud rate?")
        if not self._saw_frame:
            tail = bytes(self._tail).decode("ascii", "replace")
            tail = "".join(ch if ch.isprintable() else "." for ch in tail)[-80:]
            return (f"none of the bytes was an agent frame (last: {tail!r}): a login shell "
                    "or boot log on this console instead of the agent, or a baud rate other "
                    f"than {self.baud}?")
        return None

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._port.close()
        except Exception:  # noqa: BLE001 - closing a broken port must not raise
            pass

    def __repr__(self) -> str:
        return f"SerialChannel({self.url!r}, baud={self.baud})"

    # -- internals ------------------------------------------------------------------
    def _check_usable(self) -> None:
        if self._closed:
            raise TransportError(f"{self.description}: channel is closed")
        if self._dead is not None:
            raise TransportError(f"{self.description} failed earlier: {self._dead}")

    def _fill(self, deadline: float, timeout_s: float, what: str, want: int) -> None:
        self._check_usable()
        now = time.monotonic()
        self._first_read = self._first_read or now
        if self.bytes_in == 0 and now - self._first_read > FIRST_BYTE_S:
            # the agent serves on a line that is already open: complete silence this long means no agent
            raise TransportError(f"no byte at all in {FIRST_BYTE_S:g} s", hint=self.silence_hint())
        remaining = deadline - now
        if remaining <= 0:
            raise TransportError(
                f"timed out after {timeout_s:g} s waiting for {what} from {self.description} "
                f"({self.bytes_in} bytes received so far)",
                hint=self.silence_hint(),
            )
        try:
            wanted = _POLL_S if remaining >= _POLL_S else max(remaining, 0.001)
            if self._port.timeout != wanted:  # pyserial reconfigures the port on every set
                self._port.timeout = wanted
            waiting = self._port.in_waiting
            chunk = self._port.read(max(1, min(max(want, waiting), 1 << 16)))
        except (serial.SerialException, OSError) as exc:
            self._dead = str(exc)
            raise TransportError(
                f"cannot read from {self.description}: {exc}",
                hint="was the adapter unplugged or the board reset?",
            ) from exc
        if chunk:
            self._rbuf += chunk
            self.bytes_in += len(chunk)
            self._tail += chunk
            if len(self._tail) > _TAIL_BYTES:
                del self._tail[:-_TAIL_BYTES]
            if not self._saw_frame and _FRAME_MAGIC in self._rbuf:
                self._saw_frame = True


def serial_open_error(name: str, exc: Exception) -> TransportError:
    """The one clear error for a serial port ``name`` that failed to open with ``exc``.

    Classifies the OS error (missing, busy, permission denied, no device behind it) into a
    :class:`TransportError` whose hint says what to do. Used by every serial opener.
    """
    code = getattr(exc, "errno", None)
    text = str(exc)
    low = text.lower()
    if code == errno.ENOENT or "no such file" in low or "filenotfounderror" in low \
            or "cannot find the file" in low:
        return TransportError(f"serial port {name} does not exist", hint=_LIST_PORTS_HINT)
    if code in (errno.EBUSY, errno.EAGAIN, errno.EWOULDBLOCK) or "exclusively lock" in low \
            or "busy" in low or "access is denied" in low:
        return TransportError(f"serial port {name} is busy", hint=_BUSY_HINT)
    if code == errno.EACCES or "permission denied" in low:
        return TransportError(
            f"permission denied opening serial port {name}",
            hint="add yourself to the group owning it, e.g. sudo usermod -aG dialout "
            "$USER, then log in again",
        )
    if code == errno.ENXIO or code == errno.ENODEV:
        return TransportError(f"serial port {name} exists but has no device behind it",
                              hint=f"was the adapter unplugged? {_LIST_PORTS_HINT}")
    return TransportError(f"cannot open serial port {name}: {text}", hint=_LIST_PORTS_HINT)


class SerialTransport:
    """Attach to an agent serving on a serial line (``--tty``) at ``baud``.

    ``url`` is anything pyserial's ``serial_for_url`` accepts (``/dev/ttyUSB0``,
    ``COM3``, ``rfc2217://host:port``, ``loop://``), optionally prefixed with
    ``serial://``. ``timeout_s`` is how long a write may stall (per 4 KiB chunk,
    on top of that chunk's time on the wire); read timeouts are the caller's.
    """

    kind = "serial"

    def __init__(self, url: str, baud: int = 115200, timeout_s: float = 5.0):
        if not url:
            raise UsageError("no serial port given", hint=_LIST_PORTS_HINT)
        if int(baud) <= 0:
            raise UsageError(f"invalid baud rate {baud!r}", hint="e.g. 115200")
        self.url = url
        self.port_name = _port_name(url)
        self.baud = int(baud)
        self.timeout_s = timeout_s

    def describe(self) -> str:
        return f"serial {self.port_name} at {self.baud} baud"

    def open(self) -> SerialChannel:
        try:
            port = serial.serial_for_url(
                self.port_name, baudrate=self.baud, timeout=_POLL_S, exclusive=True,
                write_timeout=None if self.port_name.startswith("rfc2217://") else self.timeout_s,
            )
        except ValueError as exc:
            raise UsageError(f"invalid serial port or setting {self.url!r}: {exc}",
                             hint=_LIST_PORTS_HINT) from exc
        except (serial.SerialException, OSError) as exc:
            raise serial_open_error(self.port_name, exc) from exc
        try:
            port.reset_input_buffer()  # stale bytes of an earlier session are not ours
        except (serial.SerialException, OSError):
            pass
        return SerialChannel(port, self.port_name, self.baud, self.describe(),
                             write_timeout_s=self.timeout_s)

    def __repr__(self) -> str:
        return f"SerialTransport({self.url!r}, baud={self.baud})"
