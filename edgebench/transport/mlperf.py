"""The host side of the firmware wire protocol (level 2): MLPerf Tiny dialect + ``eb-`` extensions.

:class:`DutClient` talks to a device under test over pyserial (a serial port,
a pseudo-terminal of the posix port or QEMU, any pyserial URL). The contract is
``firmware/PROTOCOL.md``: a command is ASCII ending with ``%``; the device
answers CRLF lines, ``m-...`` messages and ``e-[...]`` errors, and every command
ends with ``m-ready``.

* Every wait has a deadline: a silent device is a :class:`TransportError` that
  says how much came back and the likely cause (nothing at all: wrong port, or
  a firmware built for energy mode at 9600 baud; bytes that are not protocol
  lines: a wrong baud rate).
* Replies are parsed strictly: a reply that does not have the documented form
  is an :class:`AgentError` naming the command and the line.
* :meth:`DutClient.upload` sends binary CRC-checked frames with a window of
  frames in flight, go-back-N retransmission on a NAK or a timeout, cumulative
  acknowledgements, and checks the device's CRC-32 of the whole upload against
  its own, so an upload arrives intact or fails with a clear error.

Library code: raises edgebench errors, never prints.
"""
from __future__ import annotations

import re
import struct
import time
import zlib
from dataclasses import asdict, dataclass, field

from edgebench.errors import AgentError, ModelError, TransportError, UsageError

DEFAULT_BAUD = 115200          # MLPerf Tiny performance mode
ENERGY_BAUD = 9600             # MLPerf Tiny energy mode
EB_PROTO = 1
FRAME_MAGIC = b"\xeb\x5a"
FRAME_OVERHEAD = 10            # magic 2 + seq 2 + len 2 + crc 4
DEFAULT_WINDOW = 4
START_PAYLOAD = 512            # first frames' payload; doubles after clean runs up to the device's limit
DB_CHUNK_BYTES = 32            # hex bytes per `db` command: fits the reference's 80-char command buffer
_POLL_S = 0.02
_MAX_LINE = 64 * 1024

_ACK_RE = re.compile(r"^m-eb-ack-(\d+)$")
_NAK_RE = re.compile(r"^e-\[eb-nak-(\d+)\]$")
_ERR_RE = re.compile(r"^e-\[(.*)\]$")
_KV_RE = re.compile(r"^m-eb-([a-z0-9-]+?)-\[(.*)\]$")
_LAP_RE = re.compile(r"^m-lap-us-(\d+)$")


def crc32(data: bytes) -> int:
    """IEEE 802.3 CRC-32 (zlib's), as the firmware computes it."""
    return zlib.crc32(data) & 0xFFFFFFFF


def encode_frame(seq: int, payload: bytes) -> bytes:
    """One upload frame: magic, seq u16 le, len u16 le, payload, CRC-32 of seq+len+payload (u32 le)."""
    head = struct.pack("<HH", seq & 0xFFFF, len(payload))
    return FRAME_MAGIC + head + payload + struct.pack("<I", crc32(head + payload))


def no_answer_hint(baud: int) -> str:
    """The likely causes when a port stays silent at ``baud``."""
    if baud == DEFAULT_BAUD:
        return (f"is the firmware running and is this its port? no answer at {DEFAULT_BAUD} baud — "
                f"is the firmware built for energy mode at {ENERGY_BAUD}? (set transport.baud: "
                f"{ENERGY_BAUD} in the board profile)")
    if baud == ENERGY_BAUD:
        return (f"is the firmware running and is this its port? no answer at {ENERGY_BAUD} baud — "
                f"is the firmware built for performance mode at {DEFAULT_BAUD}?")
    return (f"is the firmware running and is this its port? no answer at {baud} baud — MLPerf Tiny "
            f"firmware uses {DEFAULT_BAUD} (performance mode) or {ENERGY_BAUD} (energy mode)")


@dataclass
class Reply:
    """One command's answer: its ``m-`` lines (without ``m-ready``), errors, other lines."""

    command: str
    lines: list = field(default_factory=list)
    errors: list = field(default_factory=list)   # the text inside e-[...]
    other: list = field(default_factory=list)    # lines that are neither (the reference prints a few)

    def first(self, prefix: str) -> str | None:
        return next((ln for ln in self.lines if ln.startswith(prefix)), None)

    def bracket(self, prefix: str) -> str | None:
        """The text inside ``<prefix>[...]`` of the first such line."""
        line = self.first(prefix + "[")
        if line is None or not line.endswith("]"):
            return None
        return line[len(prefix) + 1:-1]


@dataclass
class UploadStats:
    target: str
    bytes: int
    crc32: str
    frames: int
    payload_max: int
    window: int
    retransmits: int = 0
    naks: int = 0
    timeouts: int = 0
    elapsed_s: float = 0.0
    wire_bytes: int = 0

    @property
    def bytes_per_s(self) -> float | None:
        return self.bytes / self.elapsed_s if self.elapsed_s > 0 else None

    def to_dict(self) -> dict:
        return {**asdict(self), "bytes_per_s": self.bytes_per_s}


@dataclass
class InferReply:
    """``infer N W`` in the MLPerf Tiny dialect: its timestamps and scores."""

    n: int
    warmup: int
    lap_us: list
    results: list

    @property
    def elapsed_us(self) -> int:
        if len(self.lap_us) < 2:
            raise AgentError(f"infer {self.n} {self.warmup}: expected two m-lap-us timestamps, got "
                             f"{len(self.lap_us)}",
                             hint="a firmware built for energy mode marks the window with a GPIO edge "
                                  "instead; use a performance-mode build at 115200 baud")
        return (self.lap_us[-1] - self.lap_us[0]) % (1 << 32)


class _Link:
    """A pyserial port with line reading under deadlines and byte counters."""

    def __init__(self, url: str, baud: int):
        import serial

        from edgebench.transport.serial import SerialTransport

        self.url, self.baud = url, baud
        name = url[len("serial://"):] if url.startswith("serial://") else url
        try:
            self.port = serial.serial_for_url(name, baudrate=baud, timeout=_POLL_S, write_timeout=10,
                                              exclusive=True)
        except ValueError as exc:
            raise UsageError(f"invalid serial port or setting {url!r}: {exc}",
                             hint="list the serial ports with: python -m serial.tools.list_ports") from None
        except (serial.SerialException, OSError) as exc:
            raise SerialTransport(name, baud)._open_error(exc) from None
        self.buf = bytearray()
        self.bytes_in = self.bytes_out = 0
        self.tail = bytearray()
        self.saw_line = False
        self.closed = False

    def write(self, data: bytes) -> None:
        import serial

        try:
            self.port.write(data)
            self.bytes_out += len(data)
        except (serial.SerialException, OSError) as exc:
            raise TransportError(f"cannot write to serial {self.url}: {exc}",
                                 hint="was the board reset or the adapter unplugged?") from None

    def _fill(self, wait_s: float) -> bool:
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


class DutClient:
    """Commands to one device under test. ``timeout_s`` bounds the silence within a reply."""

    def __init__(self, url: str, baud: int = DEFAULT_BAUD, timeout_s: float = 5.0, name: str | None = None):
        if not url:
            raise UsageError("no serial port given", hint="list the serial ports with: python -m serial.tools.list_ports")
        self.url, self.baud, self.timeout_s = url, int(baud), float(timeout_s)
        self.link = _Link(url, self.baud)
        self.description = f"serial {url} at {self.baud} baud" + (f" ({name})" if name else "")
        self.dut_name: str | None = None
        self._upload_unclean = False     # an upload ended without its final line: the device may still be in it
        self.frame_max = 1024            # frame payload limit to assume before the device announced one

    # -- the command cycle ----------------------------------------------------------------
    def send(self, text: str) -> None:
        if "%" in text or "\n" in text:
            raise UsageError(f"command {text!r} may not contain '%' or a line break")
        self.link.write(text.encode("ascii") + b"%")

    def read_reply(self, command: str, timeout_s: float | None = None, overall_s: float | None = None) -> Reply:
        """Lines until ``m-ready``; ``timeout_s`` of silence or ``overall_s`` in all raises."""
        silence = self.timeout_s if timeout_s is None else timeout_s
        end = time.monotonic() + overall_s if overall_s else None
        reply = Reply(command)
        while True:
            deadline = time.monotonic() + silence
            if end is not None:
                deadline = min(deadline, end)
            line = self.link.read_line(deadline)
            if line is None:
                raise self._silence(command, reply, silence)
            if line == "m-ready":
                return reply
            self._classify(reply, line)

    @staticmethod
    def _classify(reply: Reply, line: str) -> None:
        if line.startswith("m-"):
            reply.lines.append(line)
        elif _ERR_RE.match(line):
            reply.errors.append(_ERR_RE.match(line).group(1))
        elif line.strip():
            reply.other.append(line)

    def _garbled(self, what: str) -> AgentError:
        """A reply that does not parse: reply lines carry no checksum, so say what likely happened."""
        return AgentError(f"{self.description}: garbled or unexpected reply: {what}",
                          "a noisy link, a wrong baud rate, or firmware other than edgebench's: "
                          "check the cable and --url, then retry")

    def command(self, text: str, timeout_s: float | None = None, overall_s: float | None = None,
                ok_errors: bool = False) -> Reply:
        """Send ``text%`` and read its reply; an ``e-[...]`` line raises AgentError unless ``ok_errors``."""
        self.send(text)
        reply = self.read_reply(text, timeout_s, overall_s)
        if reply.errors and not ok_errors:
            raise self.device_error(text, reply.errors[0])
        return reply

    def device_error(self, command: str, err: str):
        exc = self._device_error(command, err)
        echoed = err[len("Unknown command: "):] if err.startswith("Unknown command: ") else None
        sent = command.split()[0] if command.split() else ""
        exc.garbled = (echoed is not None and echoed != sent[:32]) or (
            sent == "eb-upload" and err.startswith(("eb-upload-usage", "eb-upload-length", "eb-upload-crc:",
                                                    "eb-upload-target", "Command too long", "Too many")))
        if exc.garbled and isinstance(exc, AgentError):
            exc = AgentError(f"{self.description} received {command!r} damaged ({err}): a noisy link?",
                             hint="check the cable and the baud rate")
            exc.garbled = True
        return exc

    def _device_error(self, command: str, err: str):
        low = err.lower()
        if "arena" in low:
            return ModelError(f"{self.description}: the model needs more arena RAM than the firmware has "
                              f"({err})", hint="use a smaller model or a board/firmware build with a larger arena")
        if low.startswith("eb-model") or low.startswith("eb-upload-too") or "version" in low:
            return ModelError(f"{self.description} rejected the model: {err}",
                              hint="redeploy with this edgebench (edgebench deploy MODEL --board B)")
        if low.startswith("unknown command") and command.startswith("eb-") and err.endswith(command.split()[0]):
            return AgentError(f"{self.description} does not know {command.split()[0]!r} ({err})",
                              hint="the firmware speaks only the MLPerf Tiny dialect: use MLPerf Tiny mode "
                                   "(--mlperf) or flash the edgebench firmware")
        return AgentError(f"{self.description} answered {command!r} with an error: {err}")

    def _silence(self, command: str, reply: Reply, waited_s: float | None = None) -> TransportError:
        got = self.link.bytes_in
        what = f"waiting for the answer to {command.split()[0]!r}"
        if got == 0:
            return TransportError(f"no answer from {self.description} {what}", hint=no_answer_hint(self.baud))
        if not self.link.saw_line:
            tail = bytes(self.link.tail).decode("ascii", "replace")
            tail = "".join(ch if ch.isprintable() else "." for ch in tail)[-60:]
            return TransportError(
                f"garbled answer from {self.description} {what}: {got} bytes but no protocol line "
                f"(last: {tail!r})", hint=f"a baud rate other than {self.baud} on the device "
                f"(MLPerf Tiny: {DEFAULT_BAUD} performance, {ENERGY_BAUD} energy mode)?")
        partial = f" after {len(reply.lines)} lines" if reply.lines else ""
        return TransportError(f"{self.description} stopped answering while {what}{partial} "
                              f"(no m-ready within {waited_s or self.timeout_s:g} s)",
                              hint="the firmware may have crashed or be stuck; reset the board")

    def sync(self, timeout_s: float = 2.0) -> str:
        """Get in step with the device: drop stale output, send ``name%`` and read replies
        until the one with ``m-name-dut-[...]`` (a start-up banner may come first; a
        half-typed command left on the line spoils one ``name``, which is then resent).
        Sends nothing else: a lone ``%`` is unsafe on the reference firmware."""
        if self._upload_unclean:
            pmax = self._upload_unclean
            self._abort(pmax if pmax is not True else self.frame_max)
        self.link.drain(quiet_s=0.05, max_s=1.0)
        self.send("name")
        sent, seen = 1, []
        for _ in range(6):
            reply = self.read_reply("name", timeout_s=timeout_s)
            name = reply.bracket("m-name-dut-")
            if name is not None:
                self.dut_name = name
                self.link.drain(quiet_s=0.02, max_s=0.5)
                return name
            seen += reply.errors + reply.lines + reply.other
            if reply.errors and sent < 2:
                self.send("name")
                sent += 1
        raise AgentError(f"{self.description} answered name% without m-name-dut-[...] (got {seen[:3]})",
                         hint="is an MLPerf Tiny device-under-test firmware running on this port?")

    # -- the MLPerf Tiny dialect ------------------------------------------------------------
    def name(self) -> str:
        return self.sync()

    def profile(self) -> dict:
        reply = self.command("profile")
        return {"profile": reply.bracket("m-profile-"), "model": reply.bracket("m-model-"),
                "lines": reply.lines}

    def timestamp_mode(self) -> str | None:
        """'energy' / 'performance' when the firmware says so (the reference prints it at boot)."""
        reply = self.command("timestamp", ok_errors=True)
        if reply.first("m-lap-us-"):
            return "performance"
        return "energy" if not reply.errors else None

    def db_load(self, data: bytes, chunk_bytes: int = DB_CHUNK_BYTES) -> dict:
        """The dialect's input path: ``db load N`` then ``db <hex>`` chunks until ``m-load-done``."""
        if not data:
            raise UsageError("db load needs at least one byte")
        t0 = time.perf_counter()
        reply = self.command(f"db load {len(data)}")
        expect = f"m-[Expecting {len(data)} bytes]"
        if expect not in reply.lines:
            raise AgentError(f"{self.description} did not accept db load {len(data)}: "
                             f"{(reply.lines + reply.other)[:2]}",
                             hint="the input may be larger than the device's input buffer")
        done = False
        for i in range(0, len(data), chunk_bytes):
            reply = self.command("db " + data[i:i + chunk_bytes].hex())
            done = "m-load-done" in reply.lines
        if not done:
            raise AgentError(f"{self.description} did not answer m-load-done after {len(data)} bytes")
        return {"bytes": len(data), "elapsed_s": time.perf_counter() - t0, "chunk_bytes": chunk_bytes}

    def infer(self, n: int, warmup: int = 0, timeout_s: float | None = None) -> InferReply:
        """``infer N W``: timestamps (``m-lap-us``) around the N inferences and the scores."""
        if n < 1 or warmup < 0:
            raise UsageError(f"infer needs N >= 1 and W >= 0, got {n} {warmup}")
        reply = self.command(f"infer {n} {warmup}", timeout_s=timeout_s)
        for needed in (f"m-warmup-start-{warmup}", "m-warmup-done", f"m-infer-start-{n}", "m-infer-done"):
            if needed not in reply.lines:
                raise AgentError(f"{self.description} answered infer {n} {warmup} without {needed!r} "
                                 f"(got {reply.lines[:6]})")
        laps = [int(m.group(1)) for m in map(_LAP_RE.match, reply.lines) if m]
        return InferReply(n, warmup, laps, self._results(reply, f"infer {n} {warmup}"))

    def results(self) -> list:
        return self._results(self.command("results"), "results")

    def _results(self, reply: Reply, command: str) -> list:
        text = reply.bracket("m-results-")
        if text is None:
            raise self._garbled(f"{command} without m-results-[...]")
        try:
            return [float(v) for v in text.split(",") if v.strip()]
        except ValueError:
            raise self._garbled(f"m-results-[{text[:80]}]") from None

    # -- edgebench extensions -----------------------------------------------------------
    def info(self) -> dict:
        """``eb-info``: engine/protocol versions, timing, counter, memory sizes."""
        reply = self.command("eb-info")
        out: dict = {}
        for line in reply.lines:
            m = _KV_RE.match(line)
            if not m:
                raise AgentError(f"{self.description}: eb-info line {line!r} is not m-eb-<key>-[<value>]")
            key, value = m.group(1), m.group(2)
            out[key] = int(value) if re.fullmatch(r"\d+", value) else value
        for key in ("engine", "proto", "port", "timing", "counter-hz", "arena-bytes", "model-max-bytes",
                    "input-max-bytes"):
            if key not in out:
                raise AgentError(f"{self.description}: eb-info lacks {key!r} (got {sorted(out)})",
                                 hint="firmware and edgebench versions differ")
        if out["proto"] != EB_PROTO:
            raise AgentError(f"{self.description} speaks edgebench protocol {out['proto']}, this host {EB_PROTO}",
                             hint="rebuild/flash the firmware of this edgebench version (edgebench flash)")
        if isinstance(out.get("frame-max-bytes"), int):
            self.frame_max = out["frame-max-bytes"]
        if out["timing"] not in ("real", "emulated"):
            raise AgentError(f"{self.description}: eb-info timing {out['timing']!r} is not real or emulated")
        if not isinstance(out["counter-hz"], int) or out["counter-hz"] <= 0:
            raise AgentError(f"{self.description}: eb-info counter-hz {out['counter-hz']!r} is not positive")
        return out

    def upload(self, target: str, data: bytes, window: int = DEFAULT_WINDOW, ack_timeout_s: float = 1.0,
               max_tries: int = 12, payload: int | None = None) -> UploadStats:
        """Binary upload of ``data`` to ``target`` (``model`` or ``input``) in CRC-checked frames.

        Frames start at 512 bytes of payload (or ``payload``) and double after each run of
        8 clean acknowledgements up to the device's announced maximum; after repeated losses
        new frames are halved (down to 32 bytes), so a noisy link still gets through. A
        frame, once sent, always covers the same bytes."""
        if target not in ("model", "input"):
            raise UsageError(f"upload target must be model or input, got {target!r}")
        if not data:
            raise UsageError(f"nothing to upload to {target}")
        if window < 1:
            raise UsageError(f"window must be at least 1, got {window}")
        crc = crc32(data)
        t0 = time.perf_counter()
        out0 = self.link.bytes_out
        cmd = f"eb-upload {target} {len(data)} {crc:08x}"
        for attempt in range(3):          # a command garbled on the way in is answered e-[...]: resend it
            self._upload_unclean = True
            self.send(cmd)
            try:
                pmax = self._upload_ready(cmd)
                break
            except AgentError as exc:
                if attempt == 2 or not getattr(exc, "garbled", False):
                    raise
        self._upload_unclean = pmax
        size = min(pmax, payload or START_PAYLOAD)
        stats = UploadStats(target, len(data), f"{crc:08x}", 0, pmax, window)
        final = self._send_frames(cmd, data, size, stats, window, ack_timeout_s, max_tries)
        if final.lower() != f"{crc:08x}":
            raise TransportError(f"upload of {len(data)} bytes to {target} on {self.description}: the device "
                                 f"reports CRC-32 {final.lower()}, the host sent {crc:08x}", hint="retry the upload")
        stats.elapsed_s = time.perf_counter() - t0
        stats.wire_bytes = self.link.bytes_out - out0
        return stats

    def _upload_ready(self, cmd: str) -> int:
        deadline = time.monotonic() + self.timeout_s
        while True:
            line = self.link.read_line(deadline)
            if line is None:
                raise self._silence(cmd, Reply(cmd))
            m = re.match(r"^m-eb-upload-ready-\[(\d+)\]$", line)
            if m:
                pmax = int(m.group(1))
                if not 1 <= pmax <= 0xFFFF:
                    raise AgentError(f"{self.description}: frame payload size {pmax} out of range")
                return pmax
            err = _ERR_RE.match(line)
            if err:
                self._upload_unclean = False
                self._finish_error(cmd)
                raise self.device_error(cmd, err.group(1))
            if line.strip() and line != "m-ready":
                raise AgentError(f"{self.description} answered {cmd!r} with {line[:80]!r}, "
                                 "expected m-eb-upload-ready-[<payload max>]")

    def _finish_error(self, cmd: str) -> None:
        """Read up to the m-ready that closes a failed command (best effort)."""
        try:
            self.read_reply(cmd, timeout_s=min(self.timeout_s, 1.0))
        except TransportError:
            pass

    def _send_frames(self, cmd, data, size, stats, window, ack_timeout_s, max_tries) -> str:
        """Go-back-N: up to ``window`` frames in flight; acks are cumulative (the device
        re-acknowledges a duplicate); a NAK (one per missing frame) or ``ack_timeout_s``
        without progress resends from the oldest unacknowledged frame, in smaller frames
        when that frame was lost before."""
        pmax = size
        offs: list = []            # frame i covers data[offs[i]:offs[i] + lens[i]]
        lens: list = []
        base = nxt = 0
        tries: dict = {}           # offset of a frame's first byte -> times sent
        resent_at = -1             # the base a NAK already sent us back to
        clean = 0
        sent_at: dict = {}         # frame index -> (time of its first sending, bytes in flight then incl. it)
        srtt = rttvar = None       # smoothed round trip per byte in flight (a UART's RTT grows with it)
        rto = ack_timeout_s        # smoothed RTT + 4 deviations (RFC 6298) for the bytes now in flight
        final_wait = False
        ready_pending = True
        waited_from = time.monotonic()

        def done() -> bool:
            return base == len(offs) and bool(offs) and offs[-1] + lens[-1] >= len(data)

        def go_back(to: int) -> None:
            # Frames already sent keep their boundaries (the device may hold one whose ack was
            # lost, and frame k must mean the same bytes every time); only new frames get smaller.
            nonlocal nxt, size, clean
            nxt, clean = to, 0
            if to < len(offs) and tries.get(offs[to], 0) >= 2 and size > 32:
                size = max(32, size // 2)

        while True:
            while nxt < base + window:
                start = offs[nxt - 1] + lens[nxt - 1] if nxt else 0
                if start >= len(data):
                    break
                if nxt == len(offs):
                    offs.append(start)
                    lens.append(min(size, len(data) - start))
                tries[start] = tries.get(start, 0) + 1
                if tries[start] > max_tries:
                    self._abort(pmax)
                    raise TransportError(
                        f"upload to {stats.target} on {self.description} failed: the frame at byte {start:,} of "
                        f"{len(data):,} was not acknowledged after {max_tries} tries ({stats.naks} NAKs, "
                        f"{stats.timeouts} timeouts); nothing was loaded",
                        hint="the link loses or corrupts too many bytes: check the cable, lower the baud rate")
                if tries[start] > 1:
                    stats.retransmits += 1
                else:
                    inflight = offs[nxt] + lens[nxt] - (offs[base] if base < len(offs) else 0)
                    sent_at[nxt] = (time.monotonic(), inflight + FRAME_OVERHEAD * (nxt - base + 1))
                stats.frames += 1
                self.link.write(encode_frame(nxt, data[start:start + lens[nxt]]))
                nxt += 1
            line = self.link.read_line(waited_from + rto)
            if line is None:
                stats.timeouts += 1
                rto = min(rto * 2, max(ack_timeout_s, 0.05) * 4)      # back off, as TCP does
                if done():
                    if final_wait:
                        raise self._unknown_outcome(stats, "no final answer after every frame was acknowledged")
                    final_wait, waited_from = True, time.monotonic()
                    continue
                go_back(base)
                resent_at, waited_from = base, time.monotonic()
                continue
            if line == "m-ready" and ready_pending:
                ready_pending = False      # the eb-upload command's own m-ready, after m-eb-upload-ready
                continue
            if line == "m-ready":
                raise self._unknown_outcome(stats, "the device ended the upload, its answer was damaged on the way")
            m = _ACK_RE.match(line)
            if m:
                s = self._abs_seq(int(m.group(1)), base, nxt)
                if s is not None and s >= base:
                    now = time.monotonic()
                    if tries.get(offs[s]) == 1 and s in sent_at:   # Karn: only frames sent once
                        t_sent, nbytes = sent_at[s]
                        per = (now - t_sent) / nbytes
                        srtt, rttvar = (per, per / 2) if srtt is None else \
                            (0.875 * srtt + 0.125 * per, 0.75 * rttvar + 0.25 * abs(srtt - per))
                    if srtt is not None:
                        # the next ack comes at the latest after every byte still in flight has gone
                        ahead = (offs[nxt - 1] + lens[nxt - 1] - offs[s] - lens[s]) + FRAME_OVERHEAD * (nxt - s - 1)
                        window_bytes = max(ahead, size + FRAME_OVERHEAD)
                        rto = min(max((srtt + 4 * rttvar) * window_bytes * 1.5 + 0.02, 0.05),
                                  max(ack_timeout_s, 0.05) * 4)
                    base = s + 1
                    waited_from = now
                    clean += 1
                    if clean >= 8 and size < pmax:
                        size, clean = min(pmax, size * 2), 0
                continue
            m = _NAK_RE.match(line)
            if m:
                stats.naks += 1
                if resent_at != base:
                    go_back(base)
                    resent_at = base
                waited_from = time.monotonic()
                continue
            ok = re.match(r"^m-eb-upload-ok-\[([0-9a-fA-F]{1,8})\]$", line)
            if ok:
                self._upload_unclean = False
                self.read_reply(cmd)             # up to m-ready
                return ok.group(1).rjust(8, "0")
            err = _ERR_RE.match(line)
            if err and err.group(1).startswith("eb-upload-"):   # the device ended the upload
                self._upload_unclean = False
                self._finish_error(cmd)
                text = err.group(1)
                if text.startswith("eb-upload-crc-mismatch"):
                    m = re.search(r"announced ([0-9a-f]{8})", text)
                    what = ("the command announcing it was damaged on the way (CRC-32 announced as "
                            f"{m.group(1)}, sent {stats.crc32})" if m and m.group(1) != stats.crc32
                            else f"the device's CRC-32 of the whole upload does not match ({text})")
                    raise TransportError(f"upload of {stats.bytes:,} bytes to {stats.target} on {self.description} "
                                         f"refused: {what}; nothing was loaded", hint="retry the upload")
                raise self.device_error(cmd, text)
            # anything else is a reply line damaged on the way back: the timeout recovers it

    def _unknown_outcome(self, stats: UploadStats, why: str) -> TransportError:
        self._upload_unclean = False     # the device is back in command mode
        return TransportError(f"upload of {stats.bytes:,} bytes to {stats.target} on {self.description}: {why}; "
                              "its outcome is unknown, so it is treated as failed", hint="retry the upload")

    def _abort(self, payload_max: int) -> None:
        """Zeros that complete any partial frame, then the abort frame (seq 0xFFFF, no payload):
        the device leaves upload mode with e-[eb-upload-aborted] (in command mode the bytes
        are one unknown command, answered when the next ``%`` comes)."""
        try:
            self.link.write(b"\x00" * (min(payload_max, 0xFFFF) + FRAME_OVERHEAD) + encode_frame(0xFFFF, b""))
            if b"eb-upload-aborted" in self.link.drain(quiet_s=0.2, max_s=2.0):
                self._upload_unclean = False
        except TransportError:
            pass

    @staticmethod
    def _abs_seq(seq16: int, base: int, nxt: int) -> int | None:
        """The frame index of a 16-bit sequence number among the frames sent (base-1 .. nxt-1)."""
        for cand in range(max(base - 1, 0), nxt):
            if cand & 0xFFFF == seq16:
                return cand
        return None

    def load_model(self, model_id: str | None = None) -> dict:
        """``eb-model [ID]``: load the uploaded blob; returns layers, arena, in, out (bytes).
        ``ID`` (1-16 of A-Z a-z 0-9 _ - .) is what ``profile%`` then reports as m-model-[ID]."""
        cmd = "eb-model" + (f" {model_id}" if model_id else "")
        reply = self.command(cmd, timeout_s=max(self.timeout_s, 10.0))
        text = reply.bracket("m-eb-model-")
        if text is None:
            raise self._garbled(f"eb-model without m-eb-model-[...] (got {reply.lines[:3]})")
        out = {}
        for part in text.split(","):
            key, _, value = part.partition("=")
            if not value.isdigit():
                raise self._garbled(f"m-eb-model-[{text}]")
            out[key.strip()] = int(value)
        for key in ("layers", "arena", "in", "out"):
            if key not in out:
                raise self._garbled(f"m-eb-model-[{text}] (no {key})")
        return out

    def eb_infer(self, n: int, warmup: int = 0, layers: bool = False,
                 timeout_s: float | None = None) -> dict:
        """``eb-infer N W [layers]``: each inference's ticks (and per-layer ticks of the last one)."""
        if n < 1 or warmup < 0:
            raise UsageError(f"eb-infer needs N >= 1 and W >= 0, got {n} {warmup}")
        cmd = f"eb-infer {n} {warmup}" + (" layers" if layers else "")
        reply = self.command(cmd, timeout_s=timeout_s)
        ticks: list = []
        per_layer: list = []
        done = False
        for line in reply.lines:
            m = re.match(r"^m-eb-t-\[([0-9,]*)\]$", line)
            if m:
                ticks += [int(v) for v in m.group(1).split(",") if v]
                continue
            m = re.match(r"^m-eb-layer-(\d+)-\[([^,\]]+),(\d+)\]$", line)
            if m:
                per_layer.append({"layer": int(m.group(1)), "op": m.group(2), "ticks": int(m.group(3))})
                continue
            if line == "m-eb-infer-done":
                done = True
        if not done or len(ticks) != n:
            raise AgentError(f"{self.description} answered {cmd!r} with {len(ticks)} timings (expected {n})"
                             + ("" if done else " and no m-eb-infer-done"))
        return {"ticks": ticks, "layers": per_layer}

    def output(self) -> bytes:
        reply = self.command("eb-output")
        text = reply.bracket("m-eb-output-")
        if text is None or len(text) % 2 or not re.fullmatch(r"[0-9a-fA-F]*", text):
            raise self._garbled("eb-output without m-eb-output-[<hex>]")
        return bytes.fromhex(text)

    def temp_mc(self) -> int | None:
        """Die temperature in milli-°C, or None where the port has no sensor."""
        reply = self.command("eb-temp", ok_errors=True)
        if reply.errors:
            if "unavailable" in reply.errors[0]:
                return None
            raise self.device_error("eb-temp", reply.errors[0])
        text = reply.bracket("m-eb-temp-mc-")
        if text is None or not re.fullmatch(r"-?\d+", text):
            raise self._garbled("eb-temp without m-eb-temp-mc-[<milli °C>]")
        return int(text)

    def close(self) -> None:
        self.link.close()

    def __enter__(self) -> "DutClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


__all__ = ["DutClient", "Reply", "UploadStats", "InferReply", "crc32", "encode_frame", "no_answer_hint",
           "DEFAULT_BAUD", "ENERGY_BAUD", "DEFAULT_WINDOW", "DB_CHUNK_BYTES", "FRAME_OVERHEAD"]
