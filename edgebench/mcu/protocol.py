"""The edgebench firmware protocol client (level 2): framed ``eb-`` requests over the MLPerf Tiny dialect.

:class:`DutClient` is the :class:`~edgebench.mcu.dialect.DialectClient` plus the
edgebench extensions of ``firmware/PROTOCOL.md`` (protocol 2):

* Every ``eb-`` request is framed (:func:`~edgebench.mcu.frames.encode_request`): a fresh
  sequence number and a CRC-32. Every line of its reply carries that sequence number,
  the line's index and a CRC-32, and the reply ends with a framed ``m-ready``. A reply
  is accepted only when lines 0..k all arrived intact; damaged lines (CRC) and stale ones
  (another sequence number, or unframed) are discarded and counted in :attr:`stats`.
* A request whose reply is incomplete is sent again (a new sequence number) after a short
  backoff: the read-only ones (info, output, temp, sync) and ``eb-model`` /
  ``eb-infer``, whose rerun replaces the first run whole (a timed window is never
  stitched from two runs). An upload restarts from its ``eb-upload`` request
  (:mod:`edgebench.mcu.upload`).
* Every session begins with :meth:`end_uploads` (zeros and the abort frame end any
  upload a crashed host left behind) and :meth:`resync` (``eb-sync <nonce>``, answered
  with a framed echo, so every older reply has been read).

Library code: raises edgebench errors, never prints.
"""
from __future__ import annotations

import re
import secrets
import time

from edgebench.errors import AgentError, TransportError, UsageError
from edgebench.mcu.dialect import DialectClient, Reply
from edgebench.mcu.frames import FRAME_OVERHEAD, abort_frame, encode_request, parse_reply_line
from edgebench.mcu.link import FIRST_TRY_FLOOR_S
from edgebench.mcu.upload import UploadMixin

EB_PROTO = 2
RETRIES = 16                   # further tries of a request whose reply did not arrive intact (the call's
                               # recovery budget bounds their time)
END_WAIT_S = 0.25              # after a reply's last content line, how long its m-ready may take
PROBE_S = 0.5                  # silence before the first reply line after which a lone '%' is sent
ANSWER_S = 2.0                 # a request the device answers at once: the most its first line may take
GAP_MIN_S = 0.5                # the least silence allowed between two lines of one reply
WAIT_FACTOR = 3.0              # a device may take this many times the work it is known to need ...
WAIT_MARGIN_S = 0.3            # ... plus this, plus the transmit time of a reply line at the baud rate
TICKS_PER_LINE = 32            # eb-infer timings per m-eb-w-/m-eb-t- line (firmware/core/eb_timing.c)

_KV_RE = re.compile(r"^m-eb-([a-z0-9-]+?)-\[(.*)\]$")
_PROTO_RE = re.compile(r"^m-eb-proto-\[(\d+)\]$")


class _Incomplete(Exception):
    """A framed reply with a line missing: the request is sent again."""


class DutClient(UploadMixin, DialectClient):
    """MLPerf Tiny commands plus framed, CRC-checked ``eb-`` requests to one device."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._seq = secrets.randbelow(0xFFFF)     # a new host starts away from an old one's numbers
        self.last_seq = 0
        # probes (a lone '%') only once eb-info showed edgebench firmware: the MLPerf Tiny reference
        # firmware does not survive an empty command
        self.probing = False
        self.payload_hint: int | None = None      # upload frames' payload: what the last upload ended with
        self._since: float | None = None          # when the try in progress began waiting for what it lacks

    # -- framed requests ----------------------------------------------------------------
    def _next_seq(self) -> int:
        self._seq = self._seq % 0xFFFF + 1
        return self._seq

    def request(self, text: str, timeout_s: float | None = None, end: tuple = (), retries: int = RETRIES,
                ok_errors: bool = False, probe_s: float | None = PROBE_S, gap_s: float | None = None,
                stitch: bool = False, work_s: float = 0.0) -> Reply:
        """Send ``text`` framed and return its intact reply (lines without frame suffixes).

        Silence is bounded by what the request needs, not by one long timeout:

        * ``timeout_s``: how long the device may take before the first line of its reply (the
          work it has to do first, e.g. the inferences of ``eb-infer``); None: a request
          answered at once (``ANSWER_S`` and the transmit time, at most the client's timeout);
        * ``probe_s``: after this much silence (or ``timeout_s``, if shorter) a lone ``%`` is
          sent, once (on edgebench firmware: once :meth:`info` succeeded), and ``timeout_s``
          starts again: when the request's ``%`` was lost on the way the device holds the
          request unterminated and never answers; the probe ends that line, so the
          (CRC-checked) request runs now instead of after a timeout. A device that is busy
          answers the probe after its reply with an unframed ``m-ready``, a stale line
          (firmware/PROTOCOL.md: an empty command). That ``m-ready`` before any line of the
          reply means the device is past the request without answering it framed (its frame
          word was damaged): it is sent again at once; None: no probe;
        * ``gap_s``: how long the device may be silent between two lines of its reply once it
          started (a number, or a function of the reply so far); None: twice the time its
          first line took (at least ``GAP_MIN_S``), as the lines of a long reply come at the
          pace of its first;
        * ``end``: prefixes of the reply's last content line; once it is in (with every line
          before it), a lost ``m-ready`` costs at most ``END_WAIT_S``;
        * ``work_s``: the time the device needs before it answers (``eb-infer``'s inferences): once
          the call's recovery budget runs (after a failed try or a probe), a try may wait that
          long past it; a generous ``timeout_s`` alone (``eb-model``) never extends it;
        * ``stitch``: the reply is the same on every try (``eb-info``): intact lines are kept by
          their index across tries, so a long reply completes on a link that rarely carries all
          of it intact at once.

        Sent again, with backoff, when the reply is incomplete, silent past these bounds, or
        the device says the request was damaged."""
        if "%" in text or "\n" in text or "#" in text:
            raise UsageError(f"command {text!r} may not contain '%', '#' or a line break")
        if timeout_s is None:      # answered at once: the transmit time of the request and a line, and a margin
            silence = min(self.timeout_s, ANSWER_S + 12 * (len(text) + 200) / max(self.baud, 1))
        else:
            silence = timeout_s
        why = "no answer"
        silent = 0                 # tries in a row that got no byte back at all
        parts: dict | None = {} if stitch else None
        with self.call() as rec:   # every try draws from the call's one recovery budget
            for attempt in range(retries + 1):
                if attempt:
                    rec.start(at=self._since)       # the failed try's own wait counts
                    if rec.left() + work_s <= 0.05:   # a request with work first gets that again
                        break
                    self.stats.retry(why)
                    time.sleep(min(0.02 * 2 ** attempt, 0.25, max(0.0, rec.left() - 0.05)))
                    if self._upload_unclean is True:
                        # an eb-upload whose earlier try may have started an upload: a device in upload
                        # mode drops a damaged command line unanswered, so end that upload first (the
                        # abort frame of session 0; in command mode a stray frame, skipped)
                        self.link.write(abort_frame(0))
                else:
                    self.stats.requests += 1
                until = rec.bound(float("inf"), extra_s=work_s) if rec.until is not None else None
                seq = self.last_seq = self._next_seq()
                got_before = self.link.bytes_in
                self.link.write(encode_request(text, seq))
                try:
                    reply = self._read_framed(text, seq, silence, end, probe_s, gap_s, until, parts,
                                              at_once=timeout_s is None, work_s=work_s)
                except _Incomplete as exc:
                    why, silent = str(exc), 0
                    continue
                except TransportError as exc:
                    # nothing at all, twice in a row: the device stopped (a lost request gets one more try)
                    silent = silent + 1 if self.link.bytes_in == got_before else 0
                    rec.start(at=self._since)
                    if self.link.bytes_in == 0 or silent >= 2 and not self._alive():
                        raise self._not_answering(text, exc) from None
                    why = "no intact end of reply"
                    continue
                if reply.errors and reply.errors[0].startswith("eb-request-damaged"):
                    why = "request damaged on the way in"
                    continue
                if reply.errors and not ok_errors:
                    raise self.device_error(text, reply.errors[0])
                return reply
        raise TransportError(f"{self.description}: no intact answer to {text.split()[0]!r} in {attempt + 1} "
                             f"tries within the call's {rec.budget_s:g} s recovery budget (last: {why}; "
                             f"{self.stats.discarded_lines} damaged lines so far); the board answers, the link "
                             "damages its bytes", hint="the link damages too many bytes: check the cable and the "
                                                       "baud rate")

    def _read_framed(self, text: str, seq: int, silence: float, end: tuple, probe_s: float | None,
                     gap_s: float | None, until: float | None = None, parts: dict | None = None,
                     at_once: bool = False, work_s: float = 0.0) -> Reply:
        reply = Reply(text)

        def stitched(last: int) -> Reply:
            assert parts is not None   # only a request that keeps its lines' parts is stitched
            missing = [i for i in range(last) if i not in parts]
            if missing:
                raise _Incomplete(f"reply line {missing[0]} lost")
            if end and not parts.get(last - 1, "").startswith(end):
                # an m-ready of a shorter answer (e-[eb-request-damaged] lost, its m-ready #.1 intact)
                # must not end a reply stitched from the lines of earlier tries
                raise _Incomplete("reply ended before its last content line")
            whole = Reply(text)
            for i in range(last):
                self._classify(whole, parts[i])
            return whole

        k = 0
        ended = False
        sent = last = time.monotonic()
        first = None                              # when the first line of this reply (or a damaged one) came
        # the first sign of trouble should this try fail (Recovery.start's at): when it began waiting for
        # what did not come: its request sent (plus the device's known work), then its last intact line
        self._since = sent + work_s if at_once or work_s else None
        rec = self.recovery
        # a probe is recovery: none once the call's budget is spent (a step then gets one try)
        probe, probed = probe_s is not None and self.probing and not (rec is not None and rec.spent()), False
        while True:
            if ended:
                deadline = last + END_WAIT_S
            elif first is None:
                deadline = sent + (min(probe_s, silence) if probe and probe_s is not None else silence)
            else:
                gap = gap_s(reply) if callable(gap_s) else gap_s
                deadline = last + (gap if gap is not None else max(GAP_MIN_S, 2.0 * (first - sent)))
            if until is not None:
                deadline = min(deadline, until)   # a retry within the recovery budget
            raw = self.link.read_line(deadline)
            if raw is None:
                if ended:                         # every content line in: the m-ready was lost
                    return reply if parts is None else stitched(k)
                if probe and first is None:
                    probe, probed = False, True   # the request's '%' may have been lost: end its line
                    self.stats.probes += 1
                    self.link.write(b"%")
                    if rec is not None:           # a probe is recovery: the call's budget and the work left
                        rec.start(at=self._since)  # a request answered at once: since it was sent
                    sent = time.monotonic()       # the request may run only now: its whole time again
                    if at_once and probe_s is not None:   # ... which for a request answered at once is the probe's
                        silence = min(silence, probe_s)
                    if rec is not None:
                        bound = rec.bound(float("inf"), extra_s=work_s)
                        until = bound if until is None else min(until, bound)
                    continue
                raise self._silence(text, reply, time.monotonic() - (sent if first is None else last))
            got = parse_reply_line(raw)
            if got.damaged:
                self.stats.discarded_lines += 1
                first, last = first or time.monotonic(), time.monotonic()
                self._since = last
                continue
            if not got.framed:
                self._unframed(text, got.text)
                if first is None and (got.text.startswith("e-[eb-request-damaged") or
                                      got.text == "m-ready" and probed):
                    # the device read our request without its frame word (a '#' or a digit lost), or
                    # answered the probe, which it reads after our request: nothing framed will come
                    raise _Incomplete("request not answered as framed")
                continue
            if got.seq != seq:
                self.stats.stale_lines += 1
                if got.text.startswith("e-[eb-request-damaged") and first is None:
                    raise _Incomplete("request damaged on the way in")   # its sequence number damaged too
                continue
            first, last = first or time.monotonic(), time.monotonic()
            self._since = last
            if parts is not None:
                if got.text.startswith("e-["):     # an error is this try's whole answer: nothing to stitch
                    parts.clear()
                    self._classify(reply, got.text)
                    return reply
                if got.text == "m-ready":
                    return stitched(got.index)
                parts[got.index] = got.text
                k = got.index + 1
                if got.text.startswith(end) and end:
                    ended = True
                continue
            if got.index != k:
                raise _Incomplete(f"reply line {k} lost")
            k += 1
            if got.text == "m-ready":
                return reply
            self._classify(reply, got.text)
            if got.text.startswith(end) and end or got.text.startswith("e-["):
                ended = True

    def _alive(self, probes: int = 2, wait_s: float = 0.5) -> bool:
        """A damaged link or a dead board? Up to ``probes`` probes (a lone ``%``, on edgebench firmware;
        the dialect's ``name%`` otherwise), ``wait_s`` each: any byte back means the board runs."""
        rec = self.recovery
        if rec is not None and rec.left() < 2 * wait_s:
            probes = 1                 # the call's budget is (nearly) spent: one probe tells a dead board
        for _ in range(probes):
            got = self.link.bytes_in
            self.stats.probes += 1
            # on edgebench firmware the probe also ends an upload the device may be in (whose '%' lines
            # it ignores): zeros complete a partial frame, the abort frame of session 0 ends the upload
            # (answered), in command mode both are skipped and the '%' is answered
            self.link.write(b"\x00" * (self.frame_max + FRAME_OVERHEAD) + abort_frame(0) + b"%"
                            if self.probing else b"name%")
            # within the call's budget, at least the floor plus the probe's transmit time (a slow baud rate)
            floor = FIRST_TRY_FLOOR_S + 10 * (self.frame_max + FRAME_OVERHEAD + 8) / max(self.baud, 1)
            end = time.monotonic() + (wait_s if rec is None else rec.cleanup_s(wait_s, floor))
            while time.monotonic() < end and self.link.bytes_in == got:
                self.link.poll(end - time.monotonic())
            if self.link.bytes_in != got:
                self.link.drain(quiet_s=0.02, max_s=0.3 if rec is None else rec.cleanup_s(0.3))
                if self.probing:
                    self._upload_unclean = False      # the abort frame ended any upload
                return True
        return False

    def _not_answering(self, text: str, exc: TransportError) -> TransportError:
        if self.link.bytes_in == 0:
            return exc
        return TransportError(f"{self.description}: board not answering: nothing came back to {text.split()[0]!r} "
                              "nor to 2 probes after it", hint="the firmware may have crashed or be stuck; reset "
                              "the board (a damaged link would still answer a probe)")

    def _unframed(self, text: str, line: str) -> None:
        """An unframed line while waiting for a framed reply: stale, unless it says the firmware
        does not frame (protocol 1) or does not know the command at all."""
        self.stats.stale_lines += 1
        m = _PROTO_RE.match(line)
        if m and int(m.group(1)) != EB_PROTO:
            raise AgentError(f"{self.description} speaks edgebench protocol {m.group(1)}, this host {EB_PROTO}",
                             hint="rebuild/flash the firmware of this edgebench version (edgebench flash)")
        word = text.split()[0]
        if line == f"e-[Unknown command: {word}]":
            raise self.device_error(text, line[3:-1])

    # -- session ------------------------------------------------------------------------
    def end_uploads(self) -> None:
        """Zeros that complete any partial frame, then the abort frame of session 0: the device
        leaves any upload an earlier (killed) host left it in; in command mode it skips them."""
        self.link.write(b"\x00" * (self.frame_max + FRAME_OVERHEAD) + abort_frame(0))
        self._upload_unclean = False
        self.link.drain(quiet_s=0.05, max_s=1.0 if self.recovery is None else self.recovery.cleanup_s(1.0))

    def resync(self) -> str:
        """``eb-sync <nonce>`` answered by its framed echo: every older reply has been read."""
        self.stats.resyncs += 1
        nonce = secrets.token_hex(4)
        reply = self.request(f"eb-sync {nonce}", end=("m-eb-sync-",))   # answered at once
        if reply.bracket("m-eb-sync-") != nonce:
            raise self._garbled(f"eb-sync {nonce} answered {reply.lines[:2]}")
        return nonce

    def sync(self, timeout_s: float = 2.0) -> str:
        """The dialect's ``name%`` sync; after an upload that did not end, the abort frame first."""
        if self._upload_unclean:
            sid = self._upload_unclean if self._upload_unclean is not True else 0
            self._abort(self.frame_max, sid)
            self._abort(self.frame_max, 0)
        return super().sync(timeout_s)

    # -- edgebench extensions -----------------------------------------------------------
    def info(self) -> dict:
        """``eb-info``: engine/protocol versions, timing, counter, memory sizes."""
        reply = self.request("eb-info", end=("m-eb-loaded-",), stitch=True)
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
        if "clock" in out and not isinstance(out.get("clock-ppm"), int):
            raise AgentError(f"{self.description}: eb-info clock-ppm {out.get('clock-ppm')!r} is not a count")
        self.probing = True
        return out

    def load_model(self, model_id: str | None = None, input_encoding: str = "int8",
                   results: str = "outputs") -> dict:
        """``eb-model [ID] [input=E] [results=R]``: load the uploaded blob; returns layers, arena, in,
        out (bytes). ``ID`` (1-16 of A-Z a-z 0-9 _ - .) is what ``profile%`` then reports as
        m-model-[ID]; ``input_encoding`` (int8, uint8-offset, float32) how the device reads the input
        buffer, ``results`` (outputs, mse) what ``m-results`` reports (PROTOCOL.md)."""
        cmd = "eb-model" + (f" {model_id}" if model_id else "")
        if input_encoding != "int8":
            cmd += f" input={input_encoding}"
        if results != "outputs":
            cmd += f" results={results}"
        reply = self.request(cmd, timeout_s=max(self.timeout_s, 10.0), end=("m-eb-model-",))
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

    def eb_infer(self, n: int, warmup: int = 0, layers: bool = False, timeout_s: float | None = None,
                 per_inference_s: float | None = None) -> dict:
        """``eb-infer N W [layers]``: each inference's ticks (and per-layer ticks of the last one).
        A reply with a line missing reruns the whole call: the samples are one run's.

        ``per_inference_s``: what one inference is known to take (host wall time, measured):
        the silences allowed before and between the reply's lines follow from it (the work the
        device has left before its next line, :func:`infer_waits`). Without it, ``timeout_s``
        bounds the first line and later lines come at the pace of the first."""
        if n < 1 or warmup < 0:
            raise UsageError(f"eb-infer needs N >= 1 and W >= 0, got {n} {warmup}")
        cmd = f"eb-infer {n} {warmup}" + (" layers" if layers else "")
        gap_s = None
        if per_inference_s is not None:
            first_s, gap_s = infer_waits(n, warmup, layers, per_inference_s, self.baud)
            timeout_s = first_s if timeout_s is None else timeout_s
        reply = self.request(cmd, timeout_s=timeout_s, end=("m-eb-infer-done",), gap_s=gap_s, work_s=timeout_s or 0.0)
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
        reply = self.request("eb-output", end=("m-eb-output-",))
        text = reply.bracket("m-eb-output-")
        if text is None or len(text) % 2 or not re.fullmatch(r"[0-9a-fA-F]*", text):
            raise self._garbled("eb-output without m-eb-output-[<hex>]")
        return bytes.fromhex(text)

    def temp_mc(self) -> int | None:
        """Die temperature in milli-°C, or None where the port has no sensor."""
        reply = self.request("eb-temp", ok_errors=True, end=("m-eb-temp-mc-",))
        if reply.errors:
            if "unavailable" in reply.errors[0]:
                return None
            raise self.device_error("eb-temp", reply.errors[0])
        text = reply.bracket("m-eb-temp-mc-")
        if text is None or not re.fullmatch(r"-?\d+", text):
            raise self._garbled("eb-temp without m-eb-temp-mc-[<milli °C>]")
        return int(text)


def infer_waits(n: int, warmup: int, layers: bool, per_inference_s: float, baud: int) -> tuple:
    """(silence allowed before the first line, gap function) for ``eb-infer N W [layers]`` when one
    inference takes ``per_inference_s``: before each line the device runs the inferences that line
    reports (at most ``TICKS_PER_LINE``: warm-ups first, then timed ones, then the per-layer one);
    after the last timing line only short lines follow. Each bound is ``WAIT_FACTOR`` times that
    work plus ``WAIT_MARGIN_S`` and the transmit time of a full line at ``baud``."""
    margin = WAIT_MARGIN_S + 12 * TICKS_PER_LINE / max(baud / 10.0, 1.0)

    def before_next(w_left: int, t_left: int) -> float:
        work = min(w_left, TICKS_PER_LINE) if w_left else min(t_left, TICKS_PER_LINE) if t_left else int(layers)
        return WAIT_FACTOR * work * per_inference_s + margin

    def gap(reply) -> float:
        w_seen = sum(_count(line, "m-eb-w-[") for line in reply.lines)
        t_seen = sum(_count(line, "m-eb-t-[") for line in reply.lines)
        return max(GAP_MIN_S, before_next(max(0, warmup - w_seen), max(0, n - t_seen)))

    return max(GAP_MIN_S, before_next(warmup, n)), gap


def _count(line: str, prefix: str) -> int:
    if not line.startswith(prefix):
        return 0
    body = line[len(prefix):-1]
    return body.count(",") + 1 if body else 0


#: clock sources (eb-info ``clock``) that are not an oscillator on the board: no accuracy verdict
VIRTUAL_CLOCKS = ("emulated", "host")


def clock_of(info: dict) -> dict | None:
    """The firmware's core clock from its ``eb-info`` (``clock``, ``clock-ppm``, ``clock-fallback``):
    ``{"source", "ppm", "fallback", "virtual"}``; ``ppm`` is the port's documented bound of the
    frequency error (None when no bound applies), ``fallback`` the source it wanted but could not start
    (None when it got it). None for firmware that does not say (built before these fields)."""
    if not info or "clock" not in info:
        return None
    ppm = info.get("clock-ppm")
    fallback = info.get("clock-fallback")
    return {"source": str(info["clock"]), "ppm": ppm if isinstance(ppm, int) and ppm > 0 else None,
            "fallback": None if fallback in (None, "none") else str(fallback),
            "virtual": str(info["clock"]) in VIRTUAL_CLOCKS}


__all__ = ["DutClient", "EB_PROTO", "infer_waits", "clock_of", "VIRTUAL_CLOCKS"]
