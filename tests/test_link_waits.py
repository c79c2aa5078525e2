"""Waits on the firmware link follow from what the device needs (issue 22, item 1).

A lost byte must not cost a long timeout: a request whose '%' was lost is ended by a probe,
the silences before and between the lines of an eb-infer reply follow from the measured time
of one inference, and the first call of a model (nothing known yet) still probes at once.
The real posix firmware behind the fault-injecting proxy of test_fault_injection.py, and a
scripted device with the firmware's line discipline (a command runs only once its '%' came).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import DIGITS_INT8  # noqa: E402
from test_fault_injection import SerialProxy  # noqa: E402

from edgebench.mcu.frames import crc32  # noqa: E402


class LineDevice:
    """A scripted device that, like the firmware, collects bytes until '%' and only then answers:
    each framed request pops one reply of ``script`` (``None`` lines are lost on the way back).
    ``drop_terminator`` loses the '%' of the next request."""

    def __init__(self, script: list, drop_terminator: bool = False):
        self.script, self.drop_terminator = script, drop_terminator
        self.line = b""
        self.pending: list = []
        self.commands: list = []

    def write(self, data: bytes) -> None:
        for b in data:
            ch = bytes([b])
            if ch == b"%" and self.drop_terminator and self.line:
                self.drop_terminator = False
                continue
            if ch != b"%":
                self.line += ch
                continue
            line, self.line = self.line, b""
            self.commands.append(line)
            if b" #" not in line:
                self.pending.append("m-ready")          # an empty command: unframed m-ready
                continue
            seq = int(line.rsplit(b"#", 1)[1].split(b":")[0])
            for k, text in enumerate(self.script.pop(0) if self.script else []):
                if text is not None:
                    body = f"{text} #{seq}.{k}"
                    self.pending.append(f"{body}:{crc32(body.encode()):08x}")

    def read_line(self, deadline: float):
        if self.pending:
            return self.pending.pop(0)
        time.sleep(max(0.0, min(deadline - time.monotonic(), 5.0)))
        return None


def _dut(device: LineDevice):
    from edgebench.mcu.protocol import DutClient

    dut = DutClient("loop://", timeout_s=60.0)
    dut.probing = True            # as after eb-info on edgebench firmware
    def read_line(deadline: float):
        line = device.read_line(deadline)
        if line is not None:
            dut.link.bytes_in += len(line) + 2
        return line

    dut.link.write, dut.link.read_line = device.write, read_line
    return dut


def test_a_lost_request_terminator_is_ended_by_a_probe_not_a_timeout():
    device = LineDevice([["m-eb-t-[7]", "m-eb-infer-done", "m-ready"]], drop_terminator=True)
    dut = _dut(device)
    t0 = time.monotonic()
    assert dut.eb_infer(1, 0, timeout_s=60.0)["ticks"] == [7]    # nothing known yet: 60 s for the first line
    assert time.monotonic() - t0 < 10, "the device held the request unterminated: the probe must end it"
    assert dut.stats.probes == 1 and dut.stats.retries == 0
    assert device.commands[0].startswith(b"eb-infer 1 0 #")      # the held request ran, whole


def test_a_lost_last_line_costs_what_the_inferences_need_not_the_first_call_wait():
    """m-eb-infer-done and m-ready both lost after the last timing line: once one inference is known
    to take 1 ms the reply is given up after a fraction of a second and asked for again."""
    device = LineDevice([["m-eb-t-[5,5]", None, None], ["m-eb-t-[5,5]", "m-eb-infer-done", "m-ready"]])
    dut = _dut(device)
    t0 = time.monotonic()
    assert dut.eb_infer(2, 0, per_inference_s=0.001)["ticks"] == [5, 5]
    assert time.monotonic() - t0 < 5
    assert dut.stats.retries == 1


def test_waits_follow_the_work_left_before_each_line():
    from edgebench.mcu.dialect import Reply
    from edgebench.mcu.protocol import GAP_MIN_S, WAIT_FACTOR, infer_waits

    first, gap = infer_waits(100, 40, False, 0.1, 115200)
    assert first == pytest.approx(WAIT_FACTOR * 32 * 0.1, abs=0.5)         # 32 warm-ups before the first line
    reply = Reply("eb-infer", lines=["m-eb-w-[" + ",".join(["1"] * 32) + "]"])
    assert gap(reply) == pytest.approx(WAIT_FACTOR * 8 * 0.1, abs=0.5)    # the last 8 warm-ups
    reply.lines += ["m-eb-w-[" + ",".join(["1"] * 8) + "]"] + ["m-eb-t-[" + ",".join(["1"] * 32) + "]"] * 3
    assert gap(reply) == pytest.approx(WAIT_FACTOR * 4 * 0.1, abs=0.5)    # 4 timed ones left
    reply.lines.append("m-eb-t-[1,1,1,1]")
    assert gap(reply) == GAP_MIN_S                                          # only short lines left


@pytest.fixture
def device(posix_firmware_bin):
    from edgebench.boards.registry import get_profile
    from edgebench.mcu.firmware import FirmwareSession

    with FirmwareSession(get_profile("posix-sim"), image=posix_firmware_bin) as session:
        yield session.url


class DropOnce(SerialProxy):
    """Drops the '%' of the first host-to-device write that starts with ``prefix`` (once armed)."""

    def __init__(self, *args, prefix: bytes, **kw):
        super().__init__(*args, **kw)
        self.prefix, self.armed, self.dropped = prefix, False, 0

    def _faults(self, data: bytes, direction: str) -> bytes:
        if self.armed and direction == "h2d" and self.prefix in data and data.endswith(b"%"):
            self.armed = False
            self.dropped += 1
            return data[:-1]
        return data


@pytest.mark.qemu  # the posix firmware as a process
@pytest.mark.parametrize("verb_call", ["first", "later"])
def test_verify_with_one_lost_terminator_does_not_stall(device, verb_call):
    """The issue's case: the '%' ending an eb-infer request lost, on the first call of the model
    (nothing known about its speed) and on a later one: one probe, no retry, no long wait."""
    from edgebench.boards.registry import get_profile
    from edgebench.mcu.board import McuClient
    from edgebench.mcu.protocol import DutClient
    from edgebench.modelfile import read_model

    with DropOnce(device, prefix=b"eb-infer") as proxy:
        client = McuClient(DutClient(proxy.host_path, timeout_s=5.0), get_profile("posix-sim"))
        try:
            client.hello()
            sha = client.ensure_model(read_model(DIGITS_INT8))
            client.load(sha)
            x = np.random.default_rng(0).random((4, 8, 8, 1), dtype=np.float32)
            if verb_call == "later":
                client.infer_all(x[:1])
            proxy.armed = True
            t0 = time.monotonic()
            out = client.infer_all(x)
            took = time.monotonic() - t0
        finally:
            client.close()
    assert proxy.dropped == 1 and out["y"].shape[0] == 4
    assert client.dut.stats.probes == 1 and client.dut.stats.retries == 0
    assert took < 10, f"{took:.1f} s: a lost byte waited out a timeout"


# ------------------------------------------------------------------ the plain dialect's windows (item 6)

def _window(k: int, el_us: int, sent: float, lag_s=0.002, back_s=0.003, n=100):
    """The k-th window of a run on a device whose clock reads ``sent`` as 1000 s + sent: the window
    starts ``lag_s`` after the command was sent, its reply is read ``back_s`` after it ends."""
    from edgebench.mcu.dialect import InferReply

    l0 = int((1000 + sent + lag_s) * 1e6)
    return InferReply(n, 0, [l0, l0 + el_us], [0.0], wall_s=lag_s + el_us / 1e6 + back_s, sent_s=sent)


def test_a_damaged_timestamp_is_measured_again_a_slow_window_is_not():
    from edgebench.mcu.dialect import WindowCheck

    check = WindowCheck(timing="real")
    assert check.judge(_window(0, 85_000, 0.0))[0] == "confirm"          # the run's first window waits for a second
    for k in range(1, 12):
        assert check.judge(_window(k, 85_000 + 37 * k, 1.0 * k))[0] == "accept"
    good = _window(12, 85_000, 12.0)
    # 88017819 read as 888017819 (the issue): the window becomes 800 s in a 90 ms exchange
    grown = _window(12, 85_000, 12.0)
    grown.lap_us[1] += 800_000_000
    assert check.judge(grown)[0] == "reject"
    # a digit of the second timestamp 0.04 s lower: the window looks shorter; the host's clock says otherwise
    shrunk = _window(12, 85_000, 12.0)
    shrunk.lap_us[1] -= 40_000
    verdict, why = check.judge(shrunk)
    assert verdict == "reject" and "where the run's windows put it" in why
    # a slow window whose timestamps sit where the host's clock puts them is the device's own: accepted
    assert check.judge(_window(12, 150_000, 12.0))[0] == "accept"
    assert check.judge(good)[0] == "accept"


def test_emulated_windows_are_bounded_by_the_other_windows_only():
    from edgebench.mcu.dialect import WindowCheck

    check = WindowCheck(timing="emulated")
    far = _window(0, 85_000, 0.0)
    far.wall_s = 0.001                    # an emulated clock may run ahead of the host's
    assert check.judge(far)[0] == "confirm" and check.judge(_window(1, 86_000, 1.0))[0] == "accept"
    assert check.judge(_window(2, 850_000, 2.0))[0] == "reject"          # 10x the run's other windows


INFO = ["m-eb-engine-[3]", "m-eb-proto-[2]", "m-eb-port-[posix]", "m-eb-timing-[real]", "m-eb-counter-hz-[1000000]",
        "m-eb-counter-bits-[32]", "m-eb-arena-bytes-[65536]", "m-eb-model-max-bytes-[131072]",
        "m-eb-input-max-bytes-[4096]", "m-eb-frame-max-bytes-[1024]", "m-eb-loaded-[none]", "m-ready"]


def test_a_long_reply_is_stitched_from_the_intact_lines_of_several_tries():
    """eb-info (the same on every try) through a link that never carries it whole: line 2 lost on
    the first try, line 0 on the second; the lines of both make the reply (issue 29)."""
    first, second = list(INFO), list(INFO)
    first[2] = None
    second[0] = None
    dut = _dut(LineDevice([first, second]))
    info = dut.info()
    assert info["port"] == "posix" and info["engine"] == 3 and info["frame-max-bytes"] == 1024
    assert dut.stats.retries == 1


def test_an_error_answer_is_never_stitched_into_a_reply():
    """A try answered e-[eb-request-damaged] (its request damaged on the way in) leaves nothing behind:
    its m-ready (index 1) must not stand in for a line of the next try's reply."""
    second = list(INFO)
    second[1] = None                    # line 1 lost: the damaged try's m-ready #.1 must not fill it
    device = LineDevice([["e-[eb-request-damaged: CRC mismatch, not executed]", "m-ready"], second, INFO])
    dut = _dut(device)
    assert dut.info()["proto"] == 2
    assert dut.stats.retries == 2


@pytest.mark.slow
def test_a_board_that_stops_answering_is_told_from_a_damaged_link():
    """After a working exchange the device falls silent: the request gets its tries, then two probes
    (the abort frame and a lone '%'); nothing answers them, so 'board not answering', not a link error."""
    from edgebench.errors import TransportError

    device = LineDevice([["m-eb-temp-mc-[41000]", "m-ready"]])
    dut = _dut(device)
    assert dut.temp_mc() == 41000
    dut.link.write = lambda data: None   # the board died: nothing it is sent is answered
    with pytest.raises(TransportError) as err:
        dut.request("eb-output")
    assert "board not answering" in err.value.message and dut.stats.probes >= 2


@pytest.mark.slow
def test_a_damaged_link_that_answers_probes_fails_as_a_link_error():
    """Every answer to eb-output loses a line, forever: the retries end within the recovery budget
    with a link error (the board answers), never 'board not answering'."""
    from edgebench.errors import TransportError

    device = LineDevice([[None, "m-ready"] for _ in range(40)])     # the content line lost every time
    dut = _dut(device)
    with pytest.raises(TransportError) as err:
        dut.output()
    from edgebench.mcu.protocol import RETRIES

    assert "the link damages its bytes" in err.value.message
    assert len(device.commands) <= RETRIES + 1


def test_one_call_has_one_recovery_budget_however_many_steps():
    """Two requests in one call (a composite call: a session start, a bench step): the first spends the
    call's recovery budget on retries, so the second gets its first try and no retry, instead of a
    budget of its own (which made a call of k steps wait k budgets)."""
    from edgebench.errors import TransportError

    device = LineDevice([[None, None] for _ in range(40)])      # every reply lost; probes are answered
    dut = _dut(device)
    with dut.call(budget_s=0.6) as rec:
        with pytest.raises(TransportError) as first:
            dut.output()
        assert "recovery budget" in first.value.message and rec.spent()
        before = len(device.commands)
        with pytest.raises(TransportError):
            dut.temp_mc()
    sent = [c for c in device.commands[before:] if c]           # the probes are empty commands
    assert len(sent) == 1 and sent[0].startswith(b"eb-temp #")
    assert dut.recovery is None                                 # the call ended with its block


@pytest.mark.slow
def test_a_request_outside_a_call_is_its_own_call():
    """Without an enclosing call each request gets a budget of its own: a second request retries again."""
    from edgebench.errors import TransportError

    device = LineDevice([[None, None] for _ in range(40)])
    dut = _dut(device)
    for request in (dut.output, dut.temp_mc):
        before = len(device.commands)
        with pytest.raises(TransportError):
            request()
        assert len([c for c in device.commands[before:] if c]) >= 2


def test_recovery_bounds_waits_only_once_started():
    from edgebench.mcu.link import Recovery

    rec = Recovery(budget_s=10.0)
    assert rec.until is None and rec.left() == float("inf") and rec.bound(123.0) == 123.0
    until = rec.start()
    assert rec.start() == until == rec.until                 # the first failure starts the clock, once
    assert rec.bound(until + 50) == until and rec.bound(until - 5) == until - 5
    spent = Recovery(budget_s=0.0)
    spent.start()
    assert spent.spent() and spent.bound(time.monotonic() + 60, floor_s=1.0) <= time.monotonic() + 1.0
    assert spent.cleanup_s(2.0, floor_s=0.3) == 0.3 and Recovery().cleanup_s(2.0) == 2.0
    early = Recovery(budget_s=10.0)
    early.start(at=time.monotonic() - 4.0)                    # the failed try began waiting 4 s ago
    assert 5.0 < early.left() <= 6.0
    later = Recovery(budget_s=10.0)
    later.start(at=time.monotonic() + 100.0)                  # never later than now
    assert later.left() <= 10.0
    early.credit(3.0)                                         # clean progress moves the deadline ...
    assert 8.0 < early.left() <= 9.0
    early.credit(100.0)                                       # ... never to more than a fresh budget
    assert early.left() <= 10.0
    idle = Recovery()
    idle.credit(5.0)                                          # before any trouble nothing to move
    assert idle.until is None


def test_upload_frames_start_from_what_the_link_showed():
    """The first frames' payload: the last upload's size on this link; before any upload, the default on
    an undamaged link and about half the bytes between two damaged lines on a damaged one."""
    from types import SimpleNamespace

    from edgebench.mcu.link import LinkStats
    from edgebench.mcu.upload import MIN_PAYLOAD, START_PAYLOAD, UploadMixin

    client = UploadMixin()
    client.stats, client.link = LinkStats(), SimpleNamespace(bytes_in=50_000, bytes_out=50_000)
    assert client.start_payload() == START_PAYLOAD                  # nothing damaged yet
    client.stats.discarded_lines = 100                              # one damage in 1,000 bytes
    assert client.start_payload() == 256
    client.stats.discarded_lines = 1000                             # one in 100 (1e-2 per byte)
    assert client.start_payload() == MIN_PAYLOAD
    client.payload_hint = 128                                       # what the last upload ended with
    assert client.start_payload() == 128


def test_a_short_answer_whose_error_line_was_lost_does_not_end_a_stitched_reply():
    """eb-info's first try keeps line 0 only; the second is answered e-[eb-request-damaged] whose error
    line is lost and whose m-ready #.1 arrives: that m-ready must not end the reply as lines 0..0."""
    first = [INFO[0]] + [None] * (len(INFO) - 1)
    device = LineDevice([first, [None, "m-ready"], INFO])
    dut = _dut(device)
    info = dut.info()
    assert info["proto"] == 2 and "engine" in info
    assert dut.stats.retries == 2


class FakeClock:
    """A clock that moves only when the client waits: a wait ends at its deadline at once."""

    def __init__(self):
        self.t = 1000.0

    def monotonic(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        self.t += max(0.0, s)


def _fake_time_dut(monkeypatch, device: LineDevice, probing: bool):
    """A DutClient on ``device`` whose every wait runs on a :class:`FakeClock` (no wall time is measured:
    what is asserted is the budget logic). Replies take 1 ms a line; silence lasts to the deadline."""
    from types import SimpleNamespace

    import edgebench.mcu.dialect
    import edgebench.mcu.link
    import edgebench.mcu.protocol
    import edgebench.mcu.upload
    from edgebench.mcu.protocol import DutClient

    clock = FakeClock()
    fake = SimpleNamespace(monotonic=clock.monotonic, perf_counter=clock.monotonic, sleep=clock.sleep,
                           monotonic_ns=lambda: int(clock.t * 1e9))
    for mod in (edgebench.mcu.dialect, edgebench.mcu.link, edgebench.mcu.protocol, edgebench.mcu.upload):
        monkeypatch.setattr(mod, "time", fake)
    dut = DutClient("loop://", timeout_s=5.0)
    dut.probing = probing
    dut.link.bytes_in = 1000                  # the board answered before (name%): not a silent port

    def take() -> str:
        clock.t += 0.001
        line = device.pending.pop(0)
        dut.link.bytes_in += len(line) + 2
        return line

    def read_line(deadline: float):
        if device.pending:
            return take()
        clock.t = max(clock.t, deadline)
        return None

    def poll(wait_s: float) -> bool:
        if device.pending:
            take()
            return True
        clock.t += wait_s
        return False

    def drain(quiet_s: float = 0.05, max_s: float = 1.0) -> bytes:
        got = "".join(device.pending)
        device.pending.clear()
        clock.t += min(quiet_s, max_s)
        return got.encode()

    dut.link.write, dut.link.read_line, dut.link.poll, dut.link.drain = device.write, read_line, poll, drain
    return dut, clock


LOST = [None, None, None]     # a reply lost whole on the way back


def test_a_calls_recovery_counts_the_failed_trys_own_silence(monkeypatch):
    """eb-sync at session start (no probes yet: the first try waits its full answer time) on a link that
    loses every reply: the call gives up within the budget counted from the request that went
    unanswered, plus the floor of the last try and one of its cleanup (Recovery's bound), not after the
    first try's silence and a whole budget more."""
    from edgebench.errors import TransportError
    from edgebench.mcu.link import CALL_RECOVERY_S, FIRST_TRY_FLOOR_S
    from edgebench.mcu.protocol import ANSWER_S

    device = LineDevice([LOST] * 40)
    dut, clock = _fake_time_dut(monkeypatch, device, probing=False)
    t0 = clock.t
    with pytest.raises(TransportError, match="the link damages its bytes"), dut.call():
        dut.resync()
    spent = clock.t - t0
    assert spent > ANSWER_S                                        # the first try waited its full answer time
    assert spent <= CALL_RECOVERY_S + 2 * FIRST_TRY_FLOOR_S + 0.05  # ... and that wait was part of the budget
    assert CALL_RECOVERY_S + 2 * FIRST_TRY_FLOOR_S < 5.0


def test_a_composite_call_ends_within_one_budget_and_its_floors(monkeypatch):
    """A session-like call: eb-sync recovers after three lost replies (probing: '%' after 0.5 s), then
    eb-output's replies are all lost. The whole call, both steps, ends within one budget from the first
    unanswered request plus the floors; the first step's recovery is not paid again by the second."""
    from edgebench.errors import TransportError
    from edgebench.mcu.link import CALL_RECOVERY_S, FIRST_TRY_FLOOR_S

    device = LineDevice([])
    dut, clock = _fake_time_dut(monkeypatch, device, probing=True)
    nonce = {}

    def write(data: bytes) -> None:          # the eb-sync answer echoes the nonce of the request
        if b"eb-sync " in data and len(device.commands) >= 3:
            nonce["n"] = data.split(b"eb-sync ")[1].split(b" ")[0].decode()
            device.script = [[f"m-eb-sync-[{nonce['n']}]", "m-ready"]] + [LOST] * 40
        LineDevice.write(device, data)

    device.script = [LOST] * 3
    dut.link.write = write
    t0 = clock.t
    with pytest.raises(TransportError, match="eb-output"), dut.call() as rec:
        dut.resync()
        assert rec.started == pytest.approx(t0, abs=0.01)          # the clock started at the first request
        dut.output()
    assert clock.t - t0 <= CALL_RECOVERY_S + 2 * FIRST_TRY_FLOOR_S + 0.05
    assert dut.stats.retries >= 3 and dut.recovery is None
