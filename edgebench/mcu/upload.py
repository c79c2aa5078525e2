"""Binary uploads over the firmware protocol (level 2): CRC-checked frames of one upload session.

:class:`UploadMixin` (part of :class:`edgebench.mcu.protocol.DutClient`) sends a model
blob or an input in frames with a window of frames in flight, go-back-N retransmission
on a NAK or a timeout, cumulative acknowledgements, and checks the device's CRC-32 of
the whole upload against its own, so an upload arrives intact or fails with a clear
error. The ``eb-upload`` request is framed; its sequence number is the upload session
id that seeds every frame's CRC, and the device's acknowledgements are framed reply
lines of that request, so a line of another session or a damaged one is never acted on.

Library code: raises edgebench errors, never prints.
"""
from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from edgebench.errors import AgentError, EdgebenchError, TransportError, UsageError
from edgebench.mcu.frames import FRAME_OVERHEAD, abort_frame, crc32, encode_frame, parse_reply_line
from edgebench.mcu.link import Link, LinkStats, Recovery

if TYPE_CHECKING:
    from edgebench.mcu.dialect import Reply

DEFAULT_WINDOW = 4
START_PAYLOAD = 512            # first frames' payload; doubles after clean runs up to the device's limit
FILLER = b"\x00" * 8           # after each burst of frames: the device skips zeros between frames and in
                               # command mode (whitespace); a frame that lost a byte is completed, fails its CRC
                               # and is NAKed within one round trip instead of after a timeout
MIN_PAYLOAD = 32               # frames are never halved below this
FIRST_FRAME_TRIES = 3          # the first frame sent this often, never acknowledged: a new session, smaller frames
RECOVERY_S = 2.5               # an upload with no frame acknowledged for this long fails (the link is too damaged);
                               # every wait also ends with the call's recovery budget (edgebench.mcu.link.Recovery)

_ACK_RE = re.compile(r"^m-eb-ack-(\d+)$")
_NAK_RE = re.compile(r"^e-\[eb-nak-(\d+)\]$")
_ERR_RE = re.compile(r"^e-\[(.*)\]$")
_READY_RE = re.compile(r"^m-eb-upload-ready-\[(\d+)\]$")
_OK_RE = re.compile(r"^m-eb-upload-ok-\[([0-9a-fA-F]{1,8})\]$")


class _Smaller(Exception):
    """The first frame of an upload does not get through at its size: start again with ``size``."""

    def __init__(self, size: int):
        super().__init__(size)
        self.size = size


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


class UploadMixin:
    """``upload`` for a client with ``link``, ``request``, ``call``, ``stats``, ``description``, ``device_error``."""

    if TYPE_CHECKING:   # what the client the mixin is part of (DialectClient, DutClient) provides
        link: Link
        stats: LinkStats
        description: str
        last_seq: int
        recovery: Recovery | None
        _upload_unclean: int | bool

        @contextmanager
        def call(self, budget_s: float = ...) -> Iterator[Recovery]: ...

        def request(self, text: str, timeout_s: float | None = None, end: tuple = (), retries: int = ...,
                    ok_errors: bool = False, probe_s: float | None = ..., gap_s: float | None = None,
                    stitch: bool = False, work_s: float = 0.0) -> Reply: ...

        def device_error(self, command: str, err: str) -> EdgebenchError: ...

    def upload(self, target: str, data: bytes, window: int = DEFAULT_WINDOW, ack_timeout_s: float = 1.0,
               max_tries: int = 24, payload: int | None = None) -> UploadStats:
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
        with self.call():          # the request, every frame's resends and the cleanup draw from one budget
            while True:
                try:
                    return self._upload_once(target, data, window, ack_timeout_s, max_tries, payload)
                except _Smaller as exc:     # the first frame does not get through: smaller frames, a new session
                    payload = exc.size
                    self.stats.upload_restarts += 1

    def _upload_once(self, target, data, window, ack_timeout_s, max_tries, payload) -> UploadStats:
        crc = crc32(data)
        t0 = time.perf_counter()
        out0 = self.link.bytes_out
        cmd = f"eb-upload {target} {len(data)} {crc:08x}"
        # Framed: a damaged request is not run and is resent; a resent one ends the upload its
        # first copy may have started (a framed command line ends a pending upload).
        self._upload_unclean = True
        reply = self.request(cmd)
        text = reply.bracket("m-eb-upload-ready-")
        if text is None or not text.isdigit() or not 1 <= int(text) <= 0xFFFF:
            self._upload_unclean = False
            raise AgentError(f"{self.description} answered {cmd!r} with {reply.lines[:2]}, "
                             "expected m-eb-upload-ready-[<payload max>]")
        pmax = int(text)
        sid = self.last_seq
        self._upload_unclean = sid
        size = min(pmax, payload or self.start_payload())
        stats = UploadStats(target, len(data), f"{crc:08x}", 0, pmax, window)
        final = self._send_frames(sid, data, size, stats, window, ack_timeout_s, max_tries)
        if final.lower() != f"{crc:08x}":
            raise TransportError(f"upload of {len(data)} bytes to {target} on {self.description}: the device "
                                 f"reports CRC-32 {final.lower()}, the host sent {crc:08x}", hint="retry the upload")
        stats.elapsed_s = time.perf_counter() - t0
        stats.wire_bytes = self.link.bytes_out - out0
        return stats

    def start_payload(self) -> int:
        """The first frames' payload: what the last upload ended with on this link (halved on
        losses, doubled after clean runs); before any upload, ``START_PAYLOAD``, or less when the
        link already damaged lines: about half the bytes expected between two damaged ones
        (a frame that rarely arrives whole keeps its size until acknowledged)."""
        hint = getattr(self, "payload_hint", None)
        if hint:
            return int(hint)
        damage = self.stats.discarded_lines + self.stats.retries
        moved = self.link.bytes_in + self.link.bytes_out
        if not damage or not moved:
            return START_PAYLOAD
        target = 0.5 * moved / damage - FRAME_OVERHEAD
        size = MIN_PAYLOAD
        while size * 2 <= min(target, START_PAYLOAD):
            size *= 2
        return size

    def _send_frames(self, sid, data, size, stats, window, ack_timeout_s, max_tries) -> str:
        """Go-back-N: up to ``window`` frames in flight; acks are cumulative (the device
        re-acknowledges a duplicate); a NAK (one per missing frame) or ``ack_timeout_s``
        without progress resends from the oldest unacknowledged frame, in smaller frames
        when that frame was lost before."""
        rec = self.recovery or Recovery()   # upload() opened the call
        pmax = size                # the timeouts' scale: the first frames' size
        dev_max = stats.payload_max  # frames grow after clean runs up to the device's limit
        offs: list = []            # frame i covers data[offs[i]:offs[i] + lens[i]]
        lens: list = []
        base = nxt = 0
        tries: dict = {}           # offset of a frame's first byte -> times sent
        resent_at = -1             # the base a NAK already sent us back to
        clean = 0
        sent_at: dict = {}         # frame index -> (time of its first sending, bytes in flight then incl. it)
        srtt: float | None = None  # smoothed round trip per byte in flight (a UART's RTT grows with it)
        rttvar = 0.0               # its mean deviation (set with srtt)
        rto = ack_timeout_s        # smoothed RTT + 4 deviations (RFC 6298) for the bytes now in flight
        final_wait = False
        final: str | None = None
        waited_from = progress_at = time.monotonic()
        lossless = True            # no loss since the last ack: the next ack's wait was progress (Recovery.credit)
        # the back-off's ceiling: twice the transmit time of a full window at the baud rate, at least
        # 0.2 s, at most 4 ack timeouts (a long fixed ceiling made a few lost acks cost tens of seconds)
        wire_s = window * (pmax + FRAME_OVERHEAD) * 10 / max(getattr(self, "baud", 115200), 1)
        rto_cap = min(max(ack_timeout_s, 0.05) * 4, max(0.2, 2 * wire_s + 0.1))
        rto = min(rto, rto_cap)

        def done() -> bool:
            return base == len(offs) and bool(offs) and offs[-1] + lens[-1] >= len(data)

        def go_back(to: int) -> None:
            # Frames already sent keep their boundaries (the device may hold one whose ack was
            # lost, and frame k must mean the same bytes every time); only new frames get smaller.
            nonlocal nxt, size, clean
            nxt, clean = to, 0
            if to < len(offs) and tries.get(offs[to], 0) >= 2 and size > MIN_PAYLOAD:
                size = max(MIN_PAYLOAD, size // 2)
            self.payload_hint = size
            if base == 0 and to == 0 and lens and tries.get(0, 0) >= FIRST_FRAME_TRIES and lens[0] >= 4 * MIN_PAYLOAD \
                    and stats.naks:      # the device answers: its frames arrive damaged, smaller ones get through
                # nothing acknowledged and the first frame keeps its size while it is in flight: a new
                # upload session (nothing of this one can fit its frames) with frames a quarter the size
                self._abort(dev_max, sid)
                self.payload_hint = max(MIN_PAYLOAD, lens[0] // 4)
                raise _Smaller(self.payload_hint)

        while True:
            burst = nxt
            while nxt < base + window:
                start = offs[nxt - 1] + lens[nxt - 1] if nxt else 0
                if start >= len(data):
                    break
                if nxt == len(offs):
                    offs.append(start)
                    lens.append(min(size, len(data) - start))
                if self._count_try(sid, len(data), start, tries, max_tries, stats, dev_max) > 1:
                    stats.retransmits += 1
                else:
                    inflight = offs[nxt] + lens[nxt] - (offs[base] if base < len(offs) else 0)
                    sent_at[nxt] = (time.monotonic(), inflight + FRAME_OVERHEAD * (nxt - base + 1))
                stats.frames += 1
                self.link.write(encode_frame(nxt, data[start:start + lens[nxt]], sid))
                nxt += 1
            if nxt > burst:
                self.link.write(FILLER)     # completes a last frame that lost a byte: its NAK comes at once
            if time.monotonic() - progress_at > RECOVERY_S or rec.spent():
                self._abort(dev_max, sid)
                raise TransportError(
                    f"upload to {stats.target} on {self.description} failed: no frame acknowledged for "
                    f"{time.monotonic() - progress_at:.2g} s or the call's {rec.budget_s:g} s recovery budget "
                    f"spent, at byte {offs[base] if base < len(offs) else len(data):,} of {len(data):,} "
                    f"({stats.naks} NAKs, {stats.timeouts} timeouts, the device answering); nothing was loaded",
                    hint="the link loses or corrupts too many bytes: check the cable, lower the baud rate")
            raw = self.link.read_line(min(waited_from + rto, progress_at + RECOVERY_S, rec.until or float("inf")))
            if raw is None and time.monotonic() < waited_from + rto:
                continue                            # the recovery budget is up: checked above
            if raw is None:
                rec.start(at=waited_from)           # the unanswered wait counts from its start
                lossless = False
                stats.timeouts += 1
                rto = min(rto * 2, rto_cap)      # back off, as TCP does, up to a few window times
                if final is not None:               # the ok line came intact, its m-ready did not
                    self._upload_unclean = False
                    return final
                if done():
                    if final_wait:
                        raise self._unknown_outcome(stats, "no final answer after every frame was acknowledged")
                    final_wait, waited_from = True, time.monotonic()
                    continue
                go_back(base)
                resent_at, waited_from = base, time.monotonic()
                continue
            got = parse_reply_line(raw)
            if got.damaged or not got.framed:
                self.stats.discarded_lines += 1
                if got.damaged and base < nxt and final is None:
                    # an ack or NAK damaged on the way back: the oldest frame again now (a duplicate is
                    # acknowledged again, acks are cumulative), not after a timeout
                    rec.start()
                    lossless = False
                    self._resend_one(sid, data, offs[base], lens[base], base, tries, max_tries, stats, dev_max)
                    waited_from = time.monotonic()
                continue
            if got.seq != sid:
                self.stats.stale_lines += 1          # another request's or session's line
                continue
            line = got.text
            if line == "m-ready":
                if final is not None:
                    self._upload_unclean = False
                    return final
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
                        rto = min(max((srtt + 4 * rttvar) * window_bytes * 1.5 + 0.02, 0.05), rto_cap)
                    base = s + 1
                    if lossless and tries.get(offs[s]) == 1:
                        # a frame sent once, acknowledged with no loss since the last ack: progress, not
                        # recovery (a resent frame's ack is recovery); the deadline moves with it
                        rec.credit(now - progress_at)
                    lossless = True
                    waited_from = progress_at = now
                    clean += 1
                    if clean >= 8 and size < dev_max:
                        size, clean = min(dev_max, size * 2), 0
                        self.payload_hint = size
                continue
            m = _NAK_RE.match(line)
            if m:
                rec.start()
                lossless = False
                stats.naks += 1
                if resent_at != base:
                    go_back(base)
                    resent_at = base
                elif int(m.group(1)) == base & 0xFFFF and base < nxt:
                    # The device NAKs every damaged frame at once (PROTOCOL.md): after the go-back, a
                    # NAK for the same frame is its resend damaged again (or an old frame still in
                    # flight): send that one frame again now, not the window, and not after a timeout.
                    self._resend_one(sid, data, offs[base], lens[base], base, tries, max_tries, stats, dev_max)
                waited_from = time.monotonic()
                continue
            ok = _OK_RE.match(line)
            if ok:
                final = ok.group(1).rjust(8, "0")    # then m-ready, which a lost line must not cost 60 s
                waited_from, rto, final_wait = time.monotonic(), min(rto, 0.5), True
                continue
            err = _ERR_RE.match(line)
            if err and err.group(1).startswith("eb-upload-"):   # the device ended the upload
                self._upload_unclean = False
                self.link.drain(quiet_s=0.02, max_s=0.3)    # its m-ready
                text = err.group(1)
                if text.startswith("eb-upload-crc-mismatch"):
                    m = re.search(r"announced ([0-9a-f]{8})", text)
                    what = ("the command announcing it was damaged on the way (CRC-32 announced as "
                            f"{m.group(1)}, sent {stats.crc32})" if m and m.group(1) != stats.crc32
                            else f"the device's CRC-32 of the whole upload does not match ({text})")
                    raise TransportError(f"upload of {stats.bytes:,} bytes to {stats.target} on {self.description} "
                                         f"refused: {what}; nothing was loaded", hint="retry the upload")
                raise self.device_error(f"eb-upload {stats.target}", text)
            # anything else is a reply line damaged on the way back: the timeout recovers it

    def _resend_one(self, sid, data, start, length, index, tries, max_tries, stats, pmax) -> None:
        """Frame ``index`` (bytes ``start``..) once more, counted against its tries."""
        self._count_try(sid, len(data), start, tries, max_tries, stats, pmax)
        stats.retransmits += 1
        stats.frames += 1
        self.link.write(encode_frame(index, data[start:start + length], sid) + FILLER)

    def _count_try(self, sid, total, start, tries, max_tries, stats, pmax) -> int:
        """One more send of the frame at byte ``start`` of ``total``: its count of tries. Past
        ``max_tries`` the upload session is aborted and the upload fails (nothing was loaded)."""
        n = tries[start] = tries.get(start, 0) + 1
        if n > max_tries:
            self._abort(pmax, sid)
            raise TransportError(
                f"upload to {stats.target} on {self.description} failed: the frame at byte {start:,} of "
                f"{total:,} was not acknowledged after {max_tries} tries ({stats.naks} NAKs, "
                f"{stats.timeouts} timeouts); nothing was loaded",
                hint="the link loses or corrupts too many bytes: check the cable, lower the baud rate")
        return n

    def _unknown_outcome(self, stats: UploadStats, why: str) -> TransportError:
        self._upload_unclean = False     # the device is back in command mode
        return TransportError(f"upload of {stats.bytes:,} bytes to {stats.target} on {self.description}: {why}; "
                              "its outcome is unknown, so it is treated as failed", hint="retry the upload")

    def _abort(self, payload_max: int, sid: int = 0) -> None:
        """Zeros that complete any partial frame, then the abort frame (seq 0xFFFF, no payload):
        the device leaves upload mode with e-[eb-upload-aborted] (in command mode it skips
        a stray frame unanswered)."""
        try:
            self.link.write(b"\x00" * (min(payload_max, 0xFFFF) + FRAME_OVERHEAD) + abort_frame(sid))
            max_s = 2.0 if self.recovery is None else self.recovery.cleanup_s(2.0)
            if b"eb-upload-aborted" in self.link.drain(quiet_s=0.2, max_s=max_s):
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


__all__ = ["UploadMixin", "UploadStats", "DEFAULT_WINDOW", "START_PAYLOAD"]
