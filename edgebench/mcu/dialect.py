"""The MLPerf Tiny dialect over a serial line (level 2): the command cycle, replies, link resync.

:class:`DialectClient` talks to a device under test over a :class:`~edgebench.mcu.link.Link`.
The contract is ``firmware/PROTOCOL.md``: a command is ASCII ending with ``%``; the
device answers CRLF lines, ``m-...`` messages and ``e-[...]`` errors, and every command
ends with ``m-ready``.

* Every wait has a deadline: a silent device is a :class:`TransportError` that says how
  much came back and the likely cause.
* The plain dialect carries no checksum, so what can be checked is checked (its
  board client sets ``checked: false`` in :class:`~edgebench.mcu.link.LinkStats`): every
  expected line present, two ``m-lap-us`` timestamps in order, the count of scores, and
  ``results%`` read again until two reads agree.
* The ``eb-`` extensions with framed, CRC-checked replies are
  :class:`edgebench.mcu.protocol.DutClient`, built on this class.

Library code: raises edgebench errors, never prints.
"""
from __future__ import annotations

import re
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from edgebench.errors import AgentError, EdgebenchError, ModelError, TransportError, UsageError
from edgebench.mcu.link import CALL_RECOVERY_S, Link, LinkStats, Recovery

DEFAULT_BAUD = 115200          # MLPerf Tiny performance mode
ENERGY_BAUD = 9600             # MLPerf Tiny energy mode
DB_CHUNK_BYTES = 32            # hex bytes per `db` command: fits the reference's 80-char command buffer
RESULT_READS = 4               # results% reads to get two that agree
SYNC_ANSWER_S = 0.5            # name% is answered at once: silence this long means its '%' was lost

_ERR_RE = re.compile(r"^e-\[(.*)\]$")
_LAP_RE = re.compile(r"^m-lap-us-(\d+)$")

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
class InferReply:
    """``infer N W`` in the MLPerf Tiny dialect: its timestamps and scores, and the host's own
    clock over the same exchange (``wall_s``: from sending the command to its ``m-ready``)."""

    n: int
    warmup: int
    lap_us: list
    results: list
    wall_s: float | None = None
    sent_s: float | None = None      # host monotonic clock when the command was sent

    @property
    def elapsed_us(self) -> int:
        if len(self.lap_us) < 2:
            raise AgentError(f"infer {self.n} {self.warmup}: expected two m-lap-us timestamps, got "
                             f"{len(self.lap_us)}",
                             hint="a firmware built for energy mode marks the window with a GPIO edge "
                                  "instead; use a performance-mode build at 115200 baud")
        return (self.lap_us[-1] - self.lap_us[0]) % (1 << 32)


@dataclass
class WindowCheck:
    """Bounds on the timed windows of ``infer N W``, whose ``m-lap-us`` carry no checksum: a digit
    damaged on the line still parses. A window is accepted when

    * (``timing`` ``real``: the device counts real time; an emulated device's clock is its own)
      it fits in the host's own clock over the same exchange, and each of its two timestamps
      sits where the run's windows put the device's clock against the host's: the first a
      steady lag after the command was sent (``h_send - L0``), the second a steady lead before
      its ``m-ready`` was read (``h_end - L1``), within the run's own scatter (:meth:`_misplaced`).
      A damaged digit moves one timestamp and not the host's clock;
    * its time per inference is within a factor ``spread`` of the run's accepted windows (the
      run's first window is accepted once a second one agrees with it).

    The bounds are on the link, never on the device's own variation (a slow window is not
    measured again for being slow, which would bias the figure); what fails is measured again
    (:meth:`DialectClient.checked_infer`). Damage smaller than the tolerance stays possible:
    the run says the link was unchecked (``checked: false``)."""

    timing: str = "real"
    spread: float = 4.0
    per_inference_s: list = field(default_factory=list)     # accepted windows
    candidates: list = field(default_factory=list)          # first windows waiting for one to agree
    offsets: list = field(default_factory=list)             # accepted (h_send, warmup, h_send - L0, h_end - L1)
    observed: list = field(default_factory=list)            # the same of every window within the run's extremes

    def judge(self, rep: InferReply) -> tuple:
        """``("accept", None)`` (the window is remembered), ``("confirm", why)`` (the run's first
        window: measure another) or ``("reject", why)``."""
        el = rep.elapsed_us / 1e6
        wall_s, sent_s = rep.wall_s, rep.sent_s
        real = self.timing == "real" and wall_s is not None and sent_s is not None
        o0 = o1 = 0.0
        if real and wall_s is not None and sent_s is not None:   # (again: mypy narrows only here)
            if el > wall_s * (1 + CLOCK_TOLERANCE) + LAP_SLACK_S:
                return "reject", f"a {el:.6g} s window in a {wall_s:.3g} s exchange (host clock)"
            o0, o1 = sent_s - rep.lap_us[0] / 1e6, sent_s + wall_s - rep.lap_us[1] / 1e6
            why = self._misplaced(rep, o0, o1)
            if why:
                return "reject", why
        per = el / rep.n
        if self.per_inference_s:
            med = statistics.median(self.per_inference_s)
            if not med / self.spread <= per <= med * self.spread:
                return "reject", (f"{per:.6g} s per inference, the run's other windows {med:.6g} s (more than "
                                  f"{self.spread:g}x apart)")
        else:
            agree = [p for p in self.candidates if p / self.spread <= per <= p * self.spread]
            if not agree:
                self.candidates.append(per)
                return "confirm", "the run's first window, not yet confirmed by a second"
            self.per_inference_s += agree
            self.candidates.clear()
        self.per_inference_s.append(per)
        if real:
            self.offsets.append((rep.sent_s, rep.warmup, o0, o1))
        return "accept", None

    def _misplaced(self, rep: InferReply, o0: float, o1: float) -> str | None:
        """Where the two timestamps sit against the host's clock (``o0 = h_send - L0``: the device's
        clock offset less its lag in starting the window; ``o1 = h_end - L1``: the offset plus the
        reply's way back), compared with the run's recent windows of the same warm-up. A window
        cannot be longer than its exchange (checked before); a later start or an earlier end than
        usual is either a damaged timestamp or a busy host: beyond ``LAP_TOLERANCE_S``, the drift
        and ``MAD_BOUND`` median absolute deviations of the run's own scatter it is measured
        again. The scatter comes from every window seen, not only the accepted ones (which would
        narrow it window by window)."""
        if not any(o[1] == rep.warmup for o in self.offsets):
            self.observed.append((rep.sent_s, rep.warmup, o0, o1))
            return None
        self.observed.append((rep.sent_s, rep.warmup, o0, o1))
        seen = [o for o in self.observed if o[1] == rep.warmup][-OFFSET_WINDOWS:]
        tol = LAP_TOLERANCE_S + DRIFT * (rep.sent_s - seen[0][0])
        for k, value, sign in ((2, o0, 1), (3, o1, -1)):
            med = statistics.median(o[k] for o in seen)
            mad = statistics.median(abs(o[k] - med) for o in seen)
            if sign * (med - value) > tol + MAD_BOUND * mad:
                return (f"a timestamp {abs(med - value) * 1e3:.3g} ms from where the run's windows put it "
                        "(host clock)")
        return None


CLOCK_TOLERANCE = 1e-3     # a real board's clock against the host's (crystals: ~1e-4)
LAP_SLACK_S = 0.002        # the host clock's resolution of an exchange (scheduling)
LAP_TOLERANCE_S = 0.003    # a timestamp may sit this far from where the run's windows put it (host jitter)
DRIFT = 2e-4               # ... plus the clocks' relative drift since (crystals: ~1e-4)
OFFSET_WINDOWS = 15        # the recent windows (of the same warm-up) a timestamp is placed from
MAD_BOUND = 10.0           # a later start / earlier end than the run's usual: beyond this many MADs of its spread
WINDOW_TRIES = 6           # windows measured for one that passes its bounds


class DialectClient:
    """MLPerf Tiny commands to one device under test. ``timeout_s`` bounds the silence within a reply."""

    def __init__(self, url: str, baud: int = DEFAULT_BAUD, timeout_s: float = 5.0, name: str | None = None):
        if not url:
            raise UsageError("no serial port given", hint="list the serial ports with: python -m serial.tools.list_ports")
        self.url, self.baud, self.timeout_s = url, int(baud), float(timeout_s)
        self.link = Link(url, self.baud)
        self.stats = LinkStats()
        self.description = f"serial {url} at {self.baud} baud" + (f" ({name})" if name else "")
        self.dut_name: str | None = None
        # an upload ended without its final line (True, or its session id): the device may still be in it
        self._upload_unclean: int | bool = False
        self.frame_max = 1024            # frame payload limit to assume before the device announced one
        self.recovery: Recovery | None = None   # the recovery budget of the call in progress

    @contextmanager
    def call(self, budget_s: float = CALL_RECOVERY_S) -> Iterator[Recovery]:
        """One call's recovery budget (:class:`~edgebench.mcu.link.Recovery`): every retry within
        it, of every step, draws from it; a call within a call shares the outer one's."""
        if self.recovery is not None:
            yield self.recovery
            return
        self.recovery = Recovery(budget_s)
        try:
            yield self.recovery
        finally:
            self.recovery = None

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
        elif m := _ERR_RE.match(line):
            reply.errors.append(m.group(1))
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

    def device_error(self, command: str, err: str) -> EdgebenchError:
        exc = self._device_error(command, err)
        echoed = err[len("Unknown command: "):] if err.startswith("Unknown command: ") else None
        sent = command.split()[0] if command.split() else ""
        garbled = (echoed is not None and echoed != sent[:32]) or (
            sent == "eb-upload" and err.startswith(("eb-upload-usage", "eb-upload-length", "eb-upload-crc:",
                                                    "eb-upload-target", "Command too long", "Too many")))
        if garbled and isinstance(exc, AgentError):
            exc = AgentError(f"{self.description} received {command!r} damaged ({err}): a noisy link?",
                             hint="check the cable and the baud rate")
        return exc

    def _device_error(self, command: str, err: str) -> EdgebenchError:
        low = err.lower()
        if "arena" in low:
            return ModelError(f"{self.description}: the model needs more arena RAM than the firmware has "
                              f"({err})", hint="use a smaller model or a board/firmware build with a larger arena")
        if low.startswith("eb-model-version"):
            return ModelError(f"{self.description} reads another blob format than this edgebench writes ({err})",
                              hint="build and flash the firmware of this edgebench (edgebench flash --board B), "
                                   "then deploy again")
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
        with self.call() as rec:
            self.link.drain(quiet_s=0.05, max_s=rec.cleanup_s(1.0))
            self.send("name")
            sent, seen, sent_at = 1, [], time.monotonic()
            for _ in range(6):
                # a lost '%' leaves name unterminated: silence past the answer time, then name% again
                # (the device reads "namename", an unknown command, then name), at most twice; every
                # wait after the first failure draws from the call's recovery budget
                wait = timeout_s if sent >= 3 else min(timeout_s, SYNC_ANSWER_S)
                try:
                    reply = self.read_reply("name", timeout_s=wait, overall_s=min(wait, max(0.3, rec.left())))
                except TransportError:
                    rec.start(at=sent_at)           # the unanswered name%'s own wait counts
                    if sent >= 3 or rec.spent():
                        raise
                    self.stats.retry("no answer to name%")
                    self.send("name")
                    sent, sent_at = sent + 1, time.monotonic()
                    continue
                name = reply.bracket("m-name-dut-")
                if name is not None:
                    self.dut_name = name
                    self.link.drain(quiet_s=0.02, max_s=rec.cleanup_s(0.5))
                    return name
                rec.start()
                seen += reply.errors + reply.lines + reply.other
                if reply.errors and sent < 3:
                    self.send("name")
                    sent, sent_at = sent + 1, time.monotonic()
        raise AgentError(f"{self.description} answered name% without m-name-dut-[...] (got {seen[:3]})",
                         hint="is an MLPerf Tiny device-under-test firmware running on this port?")

    # -- the MLPerf Tiny dialect ------------------------------------------------------------
    def name(self) -> str:
        return self.sync()

    def profile(self) -> dict:
        reply = self.command("profile")
        out = {"profile": reply.bracket("m-profile-"), "model": reply.bracket("m-model-"), "lines": reply.lines}
        for key in ("input", "results"):   # edgebench firmware with a model loaded (eb-model options)
            value = reply.bracket(f"m-eb-{key}-")
            if value is not None:
                out[key] = value
        return out

    def timestamp_mode(self) -> str | None:
        """'energy' / 'performance' when the firmware says so (the reference prints it at boot)."""
        reply = self.command("timestamp", ok_errors=True)
        if reply.first("m-lap-us-"):
            return "performance"
        return "energy" if not reply.errors else None

    def db_load(self, data: bytes, chunk_bytes: int = DB_CHUNK_BYTES, check: bool = False) -> dict:
        """The dialect's input path: ``db load N`` then ``db <hex>`` chunks until ``m-load-done``.
        ``check``: read the buffer back with ``db print`` and load again (up to 3 times) until
        it holds ``data``: the dialect carries no checksum."""
        if not data:
            raise UsageError("db load needs at least one byte")
        if check:
            for _ in range(3):
                out = self.db_load(data, chunk_bytes)
                if self.db_print() == data:
                    return out
                self.stats.retry("db print differs from the input sent")
            raise self._garbled(f"db print never gave back the {len(data)} input bytes sent")
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

    def db_print(self) -> bytes:
        """``db print``: the input buffer, 8 bytes per ``m-buffer-..`` line."""
        reply = self.command("db print")
        hexes = []
        for line in reply.lines:
            if not re.fullmatch(r"m-buffer(-[0-9a-fA-F]{2}){1,8}", line):
                raise self._garbled(f"db print line {line[:60]!r}")
            hexes += line[len("m-buffer-"):].split("-")
        return bytes.fromhex("".join(hexes))

    def infer(self, n: int, warmup: int = 0, timeout_s: float | None = None) -> InferReply:
        """``infer N W``: timestamps (``m-lap-us``) around the N inferences and the scores."""
        if n < 1 or warmup < 0:
            raise UsageError(f"infer needs N >= 1 and W >= 0, got {n} {warmup}")
        t0 = time.monotonic()
        reply = self.command(f"infer {n} {warmup}", timeout_s=timeout_s)
        wall = time.monotonic() - t0
        for needed in (f"m-warmup-start-{warmup}", "m-warmup-done", f"m-infer-start-{n}", "m-infer-done"):
            if needed not in reply.lines:
                raise AgentError(f"{self.description} answered infer {n} {warmup} without {needed!r} "
                                 f"(got {reply.lines[:6]})")
        order = [reply.lines.index(x) for x in ("m-warmup-done", f"m-infer-start-{n}", "m-infer-done")]
        laps = [int(m.group(1)) for m in map(_LAP_RE.match, reply.lines) if m]
        if order != sorted(order) or len(laps) not in (0, 2):
            raise self._garbled(f"infer {n} {warmup}: lines out of order or {len(laps)} m-lap-us lines "
                                f"(got {reply.lines[:8]})")
        if laps and laps[1] < laps[0]:
            raise self._garbled(f"infer {n} {warmup}: m-lap-us went backwards ({laps[0]} then {laps[1]})")
        return InferReply(n, warmup, laps, self._results(reply, f"infer {n} {warmup}"), wall, t0)

    def checked_infer(self, n: int, warmup: int, check: WindowCheck, timeout_s: float | None = None) -> InferReply:
        """``infer N W`` until its window passes ``check`` (the run's :class:`WindowCheck`); a window
        that fails is measured again (a retry in the link report), at most ``WINDOW_TRIES`` times."""
        why = None
        for _ in range(WINDOW_TRIES):
            got = self.link.bytes_in
            try:
                rep = self.infer(n, warmup, timeout_s=timeout_s)
                verdict, why = check.judge(rep) if len(rep.lap_us) == 2 else ("reject", "no two m-lap-us lines")
            except (AgentError, TransportError) as exc:
                if self.link.bytes_in == got:       # nothing came back: the device stopped
                    raise
                verdict, why = "reject", exc.message
            if verdict == "accept":
                return rep
            if verdict == "reject":
                self.stats.retry("window outside its bounds or reply damaged")
        raise self._garbled(f"infer {n} {warmup}: no window within its bounds in {WINDOW_TRIES} tries (last: {why})")

    def results(self) -> list:
        return self._results(self.command("results"), "results")

    def checked_results(self, first: list) -> list:
        """Scores no checksum protects: read ``results%`` again until two reads agree
        (``first``, from ``infer``, counts as a read). A read that disagrees is a retry."""
        reads = [list(first)]
        for _ in range(RESULT_READS):
            again = self.results()
            if again in reads:
                return again
            self.stats.retry("results differ between reads")
            reads.append(again)
        raise self._garbled(f"results% gave {len(reads)} different score lists in {len(reads)} reads")

    def _results(self, reply: Reply, command: str) -> list:
        text = reply.bracket("m-results-")
        if text is None:
            raise self._garbled(f"{command} without m-results-[...]")
        try:
            return [float(v) for v in text.split(",") if v.strip()]
        except ValueError:
            raise self._garbled(f"m-results-[{text[:80]}]") from None

    def close(self) -> None:
        self.link.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


__all__ = ["DialectClient", "Reply", "InferReply", "WindowCheck", "no_answer_hint", "DEFAULT_BAUD",
           "ENERGY_BAUD", "DB_CHUNK_BYTES"]
