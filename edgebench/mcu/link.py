"""The serial line under the firmware protocol (level 2): lines under deadlines, byte and link counters.

:class:`Link` opens a pyserial port (a serial device, the pseudo-terminal of the posix
port or QEMU, any pyserial URL) exclusively and reads CRLF lines under deadlines.
:class:`LinkStats` counts what the protocol client had to do to get intact answers:
requests retried, lines discarded as damaged (CRC) or stale (another request's), and
whether the dialect could check its replies at all (``checked``). It goes to run.json
as ``extra.link``.

Library code: raises edgebench errors, never prints.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

from edgebench.errors import AgentError, TransportError, UsageError

_POLL_S = 0.02
_MAX_LINE = 64 * 1024
CALL_RECOVERY_S = 3.0          # what one call (all its steps, tries and cleanups) may spend recovering in all,
                               # counted from the first sign of trouble (the failed try's own wait included)
FIRST_TRY_FLOOR_S = 0.3        # once a call's budget is spent, a new step's one try (or a cleanup) gets this long


class Recovery:
    """One call's recovery budget. A composite call (an upload of many frames, a reply of many
    lines, a session start or a bench step of several requests) gets one: its clock starts at
    the first sign of trouble, and every retry of every step, and every cleanup after one, ends
    by :attr:`until`. Without a budget per call a call of k steps could wait k budgets.

    **The bound.** The clock starts at ``t0``, the moment the try that failed began waiting
    for what did not come (its request sent, its last intact line read, its frames' wait
    begun: :meth:`start` ``at=``), so the failed try's own silence counts. From then on

    * every retry, probe, back-off, drain, abort and resync waits until :meth:`bound` at the
      latest: ``until = t0 + budget_s`` (plus, for a request that makes the device work first,
      that work, and for an upload the time its frames were acknowledged without a loss between
      two acks, :meth:`credit`: clean time, not recovery), or ``floor_s`` from its start once
      ``until`` is past;
    * once ``until`` is past nothing is retried and nothing probed: a step's one try that
      fails within its ``floor_s`` ends the call, after one cleanup of at most ``floor_s``.

    A clean call would have waited at least until ``t0`` for what the failed try waited for,
    so the extra wait of a failed or recovered call is at most ``budget_s + 2 * floor_s`` (its
    last try and one cleanup after the deadline) plus ``floor_s`` for each step that still ran,
    and succeeded, after it: 3.0 + 2 x 0.3 = 3.6 s for one request or upload, 3.0 + 4 x 0.3 =
    4.2 s for a session start (``end_uploads``, ``name%``, ``eb-sync``, ``eb-info``), under the
    issue's 5 s. Not counted: for ``eb-infer`` the slack of its wait over its inferences' time;
    for a request whose work is not known (``eb-model``, a model's first ``eb-infer``) the
    silence before its probe (0.5 s), when its clock starts. Measured:
    ``benchmarks/link_faults.py --fault-calls``; the logic: tests/test_link_waits.py (a fake clock)."""

    def __init__(self, budget_s: float = CALL_RECOVERY_S):
        self.budget_s = float(budget_s)
        self.started: float | None = None

    def start(self, at: float | None = None) -> float:
        """Start the clock (once) at the first sign of trouble: ``at`` (when the failed try began
        waiting; never later than now), or now; the deadline of the call's recovery."""
        if self.started is None:
            now = time.monotonic()
            self.started = now if at is None else min(float(at), now)
        return self.started + self.budget_s

    def credit(self, progress_s: float) -> None:
        """Moves the deadline by ``progress_s`` of clean progress after the clock started (an upload's
        frames acknowledged without a loss between two acks): that time is the call's own work, which
        a clean call spends too, not recovery."""
        if self.started is not None and progress_s > 0:
            self.started = min(self.started + progress_s, time.monotonic())

    @property
    def until(self) -> float | None:
        return None if self.started is None else self.started + self.budget_s

    def left(self) -> float:
        """Seconds of recovery left (infinite before the first failure)."""
        return float("inf") if self.started is None else self.started + self.budget_s - time.monotonic()

    def spent(self, margin_s: float = 0.05) -> bool:
        return self.left() <= margin_s

    def bound(self, deadline: float, floor_s: float = FIRST_TRY_FLOOR_S, extra_s: float = 0.0) -> float:
        """``deadline`` cut to the budget (plus ``extra_s``, a request's own work) once recovery
        started, but at least ``floor_s`` from now."""
        if self.started is None:
            return deadline
        return min(deadline, max(self.started + self.budget_s + extra_s, time.monotonic() + floor_s))

    def cleanup_s(self, max_s: float, floor_s: float = FIRST_TRY_FLOOR_S) -> float:
        """How long a cleanup (a drain, an abort's answer, a probe) may wait: ``max_s``, cut to what
        is left of the budget once recovery started, but at least ``floor_s``."""
        return max_s if self.started is None else min(max_s, max(floor_s, self.left()))


@dataclass
class LinkStats:
    """What it took to get intact answers over this link."""

    checked: bool = True           # replies carried CRCs (edgebench dialect) or only shape checks (MLPerf)
    requests: int = 0              # framed requests sent (first tries)
    retries: int = 0               # requests or timed windows sent again
    discarded_lines: int = 0       # lines that failed their CRC or did not parse
    stale_lines: int = 0           # intact lines of an earlier request
    upload_restarts: int = 0       # uploads started again after a failed attempt
    resyncs: int = 0               # link resynchronisations (session start, after a failure)
    probes: int = 0                # lone '%' sent after silence (ends a request whose own '%' was lost)
    reasons: dict = field(default_factory=dict)   # why requests were retried -> count

    def retry(self, why: str) -> None:
        self.retries += 1
        self.reasons[why] = self.reasons.get(why, 0) + 1

    @property
    def needed_recovery(self) -> bool:
        return bool(self.retries or self.discarded_lines or self.upload_restarts)

    def to_dict(self) -> dict:
        return {**asdict(self), "needed_recovery": self.needed_recovery}


def link_warnings(link: dict) -> list:
    """Run warnings for a link report (:meth:`LinkStats.to_dict`): figures from a link whose
    replies carried no checksum, or that needed retries to get intact answers."""
    out = []
    if not link.get("checked", True):
        out.append({"code": "unchecked-link",
                    "message": "the device spoke the plain MLPerf Tiny dialect: its replies carry no checksum, "
                               "so figures were checked only by shape, counts, order and repeated reads",
                    "remedy": "use the edgebench firmware (framed, CRC-checked replies) where possible"})
    if link.get("retries") or link.get("discarded_lines") or link.get("upload_restarts"):
        out.append({"code": "link-retries",
                    "message": f"the serial link needed {link.get('retries', 0)} retries and "
                               f"{link.get('upload_restarts', 0)} upload restarts; {link.get('discarded_lines', 0)} "
                               "damaged reply lines were discarded (no damaged reply was used)",
                    "remedy": "check the cable, the baud rate and electrical noise near the board"})
    return out


class Link:
    """A pyserial port with line reading under deadlines and byte counters."""

    def __init__(self, url: str, baud: int):
        # lazy: serial (import serial 20 ms measured), kept off `edgebench VERB --help`
        import serial

        self.url, self.baud = url, baud
        name = url[len("serial://"):] if url.startswith("serial://") else url
        try:
            # pyserial's rfc2217:// has no write timeout (NotImplementedError): a farm's ser2net port
            self.port = serial.serial_for_url(name, baudrate=baud, timeout=_POLL_S, exclusive=True,
                                              write_timeout=None if name.startswith("rfc2217://") else 10)
        except ValueError as exc:
            raise UsageError(f"invalid serial port or setting {url!r}: {exc}",
                             hint="list the serial ports with: python -m serial.tools.list_ports") from None
        except (serial.SerialException, OSError) as exc:
            from edgebench.transport.serial import serial_open_error  # the one wording of open errors

            raise serial_open_error(name, exc) from None
        self.buf = bytearray()
        self.bytes_in = self.bytes_out = 0
        self.tail = bytearray()
        self.saw_line = False
        self.closed = False

    def write(self, data: bytes) -> None:
        # lazy: serial (import serial 20 ms measured), kept off `edgebench VERB --help`
        import serial

        try:
            self.port.write(data)
            self.bytes_out += len(data)
        except (serial.SerialException, OSError) as exc:
            raise TransportError(f"cannot write to serial {self.url}: {exc}",
                                 hint="was the board reset or the adapter unplugged?") from None

    def _fill(self, wait_s: float) -> bool:
        # lazy: serial (import serial 20 ms measured), kept off `edgebench VERB --help`
        import serial

        try:
            timeout = max(0.001, min(_POLL_S, wait_s))
            if self.port.timeout != timeout:
                self.port.timeout = timeout
            chunk = self.port.read(max(1, min(self.port.in_waiting, 1 << 16)))
        except (serial.SerialException, OSError) as exc:
            raise TransportError(f"cannot read from serial {self.url}: {exc}",
                                 hint="the device closed the link: did the firmware crash or exit?") from None
        if chunk:
            self.buf += chunk
            self.bytes_in += len(chunk)
            self.tail = (self.tail + chunk)[-160:]
        return bool(chunk)

    def poll(self, wait_s: float) -> bool:
        """Read what arrives within ``wait_s`` (at most one poll interval) into the buffer; True if any."""
        return self._fill(wait_s)

    def read_line(self, deadline: float) -> str | None:
        """One line without CR/LF, or None at the deadline."""
        while True:
            idx = self.buf.find(b"\n")
            if idx >= 0:
                raw = bytes(self.buf[:idx]).rstrip(b"\r")
                del self.buf[:idx + 1]
                self.saw_line = True
                return raw.decode("latin-1")
            if len(self.buf) > _MAX_LINE:
                raw = bytes(self.buf[:200])
                self.buf.clear()
                raise AgentError(f"serial {self.url} sent more than {_MAX_LINE} bytes without a line end "
                                 f"(starting {raw!r})", hint=f"a baud rate other than {self.baud}?")
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self._fill(left)

    def drain(self, quiet_s: float = 0.05, max_s: float = 1.0) -> bytes:
        """Read and drop whatever arrives until the line is quiet for ``quiet_s``."""
        end = time.monotonic() + max_s
        got = bytes(self.buf)
        self.buf.clear()
        quiet_until = time.monotonic() + quiet_s
        while time.monotonic() < min(end, quiet_until):
            if self._fill(quiet_s):
                got += bytes(self.buf)
                self.buf.clear()
                quiet_until = time.monotonic() + quiet_s
        return got

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            try:
                self.port.close()
            except Exception:  # noqa: BLE001 - closing a broken port must not raise
                pass


__all__ = ["Link", "LinkStats", "Recovery", "link_warnings", "CALL_RECOVERY_S"]
