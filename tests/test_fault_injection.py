"""Fault injection: a serial proxy between host and the posix firmware corrupts and drops bytes.

:class:`SerialProxy` bridges two pseudo-terminals in Python: it opens the firmware's
pty as the "cable" and makes a new pty for the host, forwarding bytes both ways. At a
seeded rate it flips a random bit of a byte or drops it, and it can limit the rate of
the link to that of a UART (``bytes_per_s``; 115200 baud 8N1 = 11,520 bytes/s, used by
benchmarks/upload_rate.py).

The properties under test: an upload either arrives intact (the device's CRC-32 of the
whole upload matches, the model loads, outputs are bit-exact) or fails with a clear
error, never a silently wrong model or input (issue 4); and every reply that reaches a
result is the one the device sent: an output vector or a timing list damaged on the way,
in either direction, is discarded and asked for again, or the call fails loudly (issue 9).
The proxy keeps the device's bytes before any fault, so a timing list the host accepted
is compared with what the device really printed for that request's sequence number.
"""
from __future__ import annotations

import os
import random
import select
import sys
import threading
import time
import tty
from pathlib import Path

import numpy as np
import pytest
from conftest import DIGITS_INT8, MLPERF_DIR

sys.path.insert(0, str(Path(__file__).resolve().parent))

from edgebench.errors import AgentError, EdgebenchError, ModelError, TransportError
from edgebench.modelfile import read_model

ROOT = Path(__file__).resolve().parents[1]
KWS = MLPERF_DIR / "kws_ref_model.tflite"


class SerialProxy:
    """The firmware's pty <-> a new pty for the host, with seeded faults and an optional rate limit.

    ``corrupt`` / ``drop`` / ``insert`` (a random byte after this one): per-byte probabilities (each
    direction in ``directions``:
    ``h2d`` host to device, ``d2h`` device to host) while ``enabled``. ``bytes_per_s``
    paces both directions like a UART of that byte rate.
    """

    def __init__(self, device_path: str, seed: int = 0, corrupt: float = 0.0, drop: float = 0.0,
                 bytes_per_s: float | None = None, directions=("h2d", "d2h"), insert: float = 0.0):
        self.device_path = device_path
        self.rng = random.Random(seed)
        self.corrupt, self.drop, self.insert = corrupt, drop, insert
        self.bytes_per_s = bytes_per_s
        self.directions = set(directions)
        self.enabled = True
        self.stats = {"h2d": 0, "d2h": 0, "corrupted": 0, "dropped": 0, "inserted": 0}
        self.clean_d2h = bytearray()          # what the device sent, before any fault
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads: list = []
        self.host_path: str | None = None

    def start(self) -> str:
        self.dev_fd = os.open(self.device_path, os.O_RDWR | os.O_NOCTTY)
        tty.setraw(self.dev_fd)
        self.master_fd, self.slave_fd = os.openpty()   # the proxy keeps the slave open: no EIO on hang-up
        tty.setraw(self.slave_fd)
        self.host_path = os.ttyname(self.slave_fd)
        for src, dst, name in ((self.master_fd, self.dev_fd, "h2d"), (self.dev_fd, self.master_fd, "d2h")):
            t = threading.Thread(target=self._pump, args=(src, dst, name), daemon=True)
            t.start()
            self._threads.append(t)
        return self.host_path

    def _faults(self, data: bytes, direction: str) -> bytes:
        if not self.enabled or direction not in self.directions or not (self.corrupt or self.drop or self.insert):
            return data
        out = bytearray()
        with self._lock:
            for b in data:
                r = self.rng.random()
                if r < self.drop:
                    self.stats["dropped"] += 1
                    continue
                if r < self.drop + self.corrupt:
                    b ^= 1 << self.rng.randrange(8)
                    self.stats["corrupted"] += 1
                out.append(b)
                if self.drop + self.corrupt <= r < self.drop + self.corrupt + self.insert:
                    out.append(self.rng.randrange(256))
                    self.stats["inserted"] += 1
        return bytes(out)

    def _pump(self, src: int, dst: int, direction: str) -> None:
        free_at = time.monotonic()
        piece = max(1, int((self.bytes_per_s or 1e9) * 0.002))
        while not self._stop.is_set():
            try:
                ready, _, _ = select.select([src], [], [], 0.05)
                if not ready:
                    continue
                data = os.read(src, 4096)
            except OSError:
                if self._stop.is_set():
                    return
                time.sleep(0.01)
                continue
            if not data:
                continue
            self.stats[direction] += len(data)
            if direction == "d2h":
                self.clean_d2h += data
            data = self._faults(data, direction)
            for i in range(0, len(data), piece if self.bytes_per_s else len(data) or 1):
                chunk = data[i:i + piece] if self.bytes_per_s else data
                if self.bytes_per_s:
                    now = time.monotonic()
                    free_at = max(free_at, now) + len(chunk) / self.bytes_per_s
                    if free_at > now:
                        time.sleep(free_at - now)
                try:
                    os.write(dst, chunk)
                except OSError:
                    pass
                if not self.bytes_per_s:
                    break

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=2)
        for fd in (getattr(self, "dev_fd", None), getattr(self, "master_fd", None), getattr(self, "slave_fd", None)):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass

    def __enter__(self) -> "SerialProxy":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


# --------------------------------------------------------------------------------------- fixtures

@pytest.fixture
def device(posix_firmware_bin):
    """A running posix firmware; yields its pty."""
    from edgebench.boards.registry import get_profile
    from edgebench.mcu.firmware import FirmwareSession

    with FirmwareSession(get_profile("posix-sim"), image=posix_firmware_bin) as session:
        yield session.url


def _dut(url, timeout_s=3.0):
    from edgebench.mcu.protocol import DutClient

    return DutClient(url, timeout_s=timeout_s)


def _db_print(dut) -> bytes:
    reply = dut.command("db print")
    hexes = []
    for line in reply.lines:
        assert line.startswith("m-buffer-"), line
        hexes += line[len("m-buffer-"):].split("-")
    return bytes.fromhex("".join(hexes))


CLEAR = ("upload", "crc", "not acknowledged", "answer", "frame", "error", "stopped answering", "garbled")


def _is_clear(exc: EdgebenchError) -> bool:
    text = exc.one_line().lower()
    return len(text.splitlines()) == 1 and any(word in text for word in CLEAR)


# --------------------------------------------------------------------------------------- tests

@pytest.mark.parametrize("seed,rate,tries", [(0, 0.0005, 12), (1, 0.002, 12), (2, 0.005, 12), (3, 0.03, 3)])
def test_input_upload_through_a_noisy_link_is_intact_or_fails_clearly(device, seed, rate, tries):
    """Binary input uploads through links that corrupt a fraction ``rate`` of the bytes (and drop
    half as many), both ways; read back with `db print` over the clean link afterwards."""
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 256, size=20_000, dtype=np.uint8).tobytes()
    with SerialProxy(device, seed=seed, corrupt=rate, drop=rate / 2) as proxy:
        dut = _dut(proxy.host_path)
        try:
            proxy.enabled = False
            dut.sync()
            proxy.enabled = True
            try:
                stats = dut.upload("input", data, ack_timeout_s=0.3, max_tries=tries)
                outcome = "ok"
            except (TransportError, AgentError) as exc:
                assert _is_clear(exc), exc.one_line()
                outcome = "failed"
            proxy.enabled = False
            time.sleep(0.3)
            dut.sync()
            if rate <= 0.0005:
                assert outcome == "ok", "a mildly noisy link must get through (retransmission)"
            if tries <= 3:
                assert outcome == "failed", "3% of bytes damaged with 3 tries a frame cannot get through"
            if outcome == "ok":
                assert _db_print(dut) == data, "upload reported ok but the device holds other bytes"
                assert stats.retransmits + stats.timeouts + stats.naks > 0 or proxy.stats["corrupted"] == 0
            else:
                # whatever the device holds is not marked complete: inference refuses it or it equals nothing
                info = dut.command("eb-infer 1 0", ok_errors=True)
                assert info.errors, "a failed upload must not leave a usable input behind"
        finally:
            dut.close()
    assert proxy.stats["corrupted"] + proxy.stats["dropped"] > 0


@pytest.mark.parametrize("seed,model,rate", [(0, "digits", 0.0005), (1, "kws", 0.001), (2, "digits", 0.002)])
def test_model_upload_through_a_noisy_link_loads_bit_exact_or_fails_clearly(device, seed, model, rate):
    """A model deployed through a noisy link either gives bit-exact outputs or a clear error."""
    from edgebench.bench.verify import VerifyOptions, run_verify
    from edgebench.boards.registry import get_profile
    from edgebench.mcu.board import McuClient

    profile = get_profile("posix-sim")
    model = {"kws": KWS, "digits": DIGITS_INT8}[model]
    with SerialProxy(device, seed=100 + seed, corrupt=rate, drop=rate / 2) as proxy:
        proxy.enabled = False
        client = McuClient(_dut(proxy.host_path), profile)
        try:
            client.hello()
            proxy.enabled = True
            try:
                report = client.deploy(read_model(model))
                outcome = "ok"
            except (TransportError, AgentError, ModelError) as exc:
                assert _is_clear(exc), exc.one_line()
                outcome = "failed"
            proxy.enabled = False
            time.sleep(0.3)
            client.dut.sync()
            if outcome == "ok":
                assert report.upload["crc32"] == report.upload["crc32"].lower()
                result = run_verify(model, profile, VerifyOptions(count=8), client=client)
                assert result.bit_exact, result.outputs
            else:
                # the device holds no loaded model: nothing silently wrong can run
                assert "none" in str(client.dut.info()["loaded"]) or client.dut.command(
                    "eb-infer 1 0", ok_errors=True).errors
                client._on_device = None
                client.deploy(read_model(model))   # a clean link recovers
                assert run_verify(model, profile, VerifyOptions(count=4), client=client).bit_exact
        finally:
            client.dut.close()
    assert proxy.stats["corrupted"] + proxy.stats["dropped"] > 0


def test_a_link_that_goes_dead_mid_upload_fails_clearly_and_recovers(device):
    """Every frame byte lost (the command got through): a clear error; once the link is back,
    the next sync aborts the half-done upload and the device answers again."""
    from edgebench.mcu.frames import FRAME_MAGIC

    with SerialProxy(device, seed=7, drop=1.0, directions=("h2d",)) as proxy:
        proxy.enabled = False
        dut = _dut(proxy.host_path, timeout_s=1.0)
        dut.sync()
        write = dut.link.write

        def dead_from_first_frame(data: bytes) -> None:
            if data[:2] == FRAME_MAGIC:
                proxy.enabled = True
            write(data)

        dut.link.write = dead_from_first_frame
        with pytest.raises(TransportError) as info:
            dut.upload("input", b"\x01" * 5000, ack_timeout_s=0.1, max_tries=3)
        assert "not acknowledged after 3 tries" in info.value.one_line()
        assert "nothing was loaded" in info.value.one_line()
        proxy.enabled = False
        dut.link.write = write
        assert dut.sync() == "posix"          # the abort frame got the device out of upload mode
        assert dut.command("eb-infer 1 0", ok_errors=True).errors   # and no input is marked loaded
        dut.close()


# --------------------------------------------------------------------------------------- framed replies

class CleanLog:
    """The lines the device sent, from the proxy's log of its bytes before any fault, read
    incrementally: :meth:`lines` gives the complete lines that came since the last call."""

    def __init__(self, proxy: SerialProxy):
        self.proxy, self.pos, self.tail = proxy, 0, ""

    def lines(self) -> list:
        data = bytes(self.proxy.clean_d2h[self.pos:])
        self.pos += len(data)
        lines = (self.tail + data.decode("latin-1")).split("\r\n")
        self.tail = lines.pop()
        return lines


class CleanTicks:
    """The m-eb-t values the device printed per request sequence number (:class:`CleanLog`)."""

    def __init__(self, proxy: SerialProxy):
        self.log, self.by_seq = CleanLog(proxy), {}

    def get(self, seq: int) -> list:
        import re

        for line in self.log.lines():
            m = re.fullmatch(r"m-eb-t-\[([0-9,]*)\] #(\d+)\.(\d+):[0-9a-f]{8}", line)
            if m:
                if m.group(3) == "0":       # a reply's first line: a new client may reuse a sequence number
                    self.by_seq[int(m.group(2))] = []
                self.by_seq.setdefault(int(m.group(2)), []).extend(int(v) for v in m.group(1).split(",") if v)
        return self.by_seq.get(seq, [])


def checked_calls(dut, proxy: SerialProxy, truth: bytes, calls: int) -> dict:
    """``calls`` calls, alternately eb-output and eb-infer 8: how many answers were accepted,
    how many of those differ from what the device sent (silently wrong), how many failed
    with a typed error (and those errors' one-line texts)."""
    clean = CleanTicks(proxy)
    out = {"calls": calls, "accepted": 0, "silently_wrong": 0, "failed_loudly": 0, "errors": []}
    for i in range(calls):
        try:
            if i % 2 == 0:
                wrong = dut.output() != truth
            else:
                wrong = dut.eb_infer(8, 0)["ticks"] != clean.get(dut.last_seq)
            out["accepted"] += 1
            out["silently_wrong"] += int(wrong)
        except EdgebenchError as exc:
            out["failed_loudly"] += 1
            out["errors"].append(exc)
    return out


def corrupted_trial(url: str, truth: bytes, direction: str, rate: float, calls: int, seed: int,
                    timeout_s: float) -> dict:
    """:func:`checked_calls` through a proxy damaging one direction at ``rate`` per byte (and
    dropping at rate/4), after a resync on the clean link; with the link and proxy counters."""
    with SerialProxy(url, seed=seed, corrupt=rate, drop=rate / 4, directions=(direction,)) as proxy:
        dut = _dut(proxy.host_path, timeout_s=timeout_s)
        try:
            proxy.enabled = False
            dut.end_uploads()
            dut.resync()
            proxy.enabled = True
            out = {"direction": direction, "rate_per_byte": rate, **checked_calls(dut, proxy, truth, calls),
                   "link": dut.stats.to_dict()}
        finally:
            dut.close()
    return {**out, "proxy": dict(proxy.stats)}


@pytest.fixture
def digits_on_device(device):
    """The digits model deployed on a clean link, one input uploaded, its true output read."""
    return deploy_digits(device)


def deploy_digits(device) -> bytes:
    """Deploy digits on the firmware at ``device`` over a clean link, upload one seeded input, run it;
    the device's output bytes (the truth a corrupted trial is checked against)."""
    from edgebench.boards.registry import get_profile
    from edgebench.mcu.board import McuClient

    client = McuClient(_dut(device), get_profile("posix-sim"))
    client.hello()
    client.deploy(read_model(DIGITS_INT8))
    client.dut.upload("input", bytes(np.random.default_rng(0).integers(-128, 128, 64, dtype=np.int8)))
    client.dut.eb_infer(1, 0)
    truth = client.dut.output()
    client.dut.close()
    return truth


@pytest.mark.fuzz
@pytest.mark.slow
@pytest.mark.parametrize("direction", ["d2h", "h2d"])
@pytest.mark.parametrize("rate", [1e-3, 1e-2])
def test_no_silently_wrong_output_or_timing_list(device, digits_on_device, direction, rate):
    """eb-output and eb-infer through a link that flips and drops bytes in one direction:
    every answer accepted is exactly what the device sent (0 silently wrong); the rest fail loudly."""
    calls = 80 if rate <= 1e-3 else 30
    got = corrupted_trial(device, digits_on_device, direction, rate, calls, seed=int(rate * 1e4) + len(direction),
                          timeout_s=0.5)
    wrong, failed, stats = got["silently_wrong"], got["failed_loudly"], got["link"]
    assert all(_is_clear(exc) for exc in got["errors"]), [exc.one_line() for exc in got["errors"]]
    assert wrong == 0, f"{wrong} damaged answers accepted as valid"
    assert got["proxy"]["corrupted"] + got["proxy"]["dropped"] > 0
    assert stats["retries"] > 0                        # the damage was seen and recovered
    if rate <= 1e-3:
        assert failed == 0, "at 1e-3 per byte, retries get every answer through"
    assert failed < calls / 2                          # ... and most answers at 1e-2


def test_a_stale_reply_is_discarded(device, digits_on_device):
    """The reply to an earlier request that nobody read arrives first: it is not taken."""
    from edgebench.mcu.frames import encode_request

    dut = _dut(device)
    try:
        dut.end_uploads()
        dut.resync()
        dut.link.write(encode_request("eb-infer 3 0", 60000))  # its reply is still on the line
        before = dut.stats.stale_lines
        assert dut.output() == digits_on_device
        assert dut.stats.stale_lines - before >= 3           # m-eb-t, m-eb-infer-done, m-ready of #60000
    finally:
        dut.close()


def test_a_host_killed_mid_upload_leaves_a_board_that_works(device, tmp_path):
    """SIGKILL of a host in the middle of a model upload; the next session resyncs and deploys."""
    import signal
    import subprocess

    from edgebench.boards.registry import get_profile
    from edgebench.mcu.board import McuClient

    script = tmp_path / "upload.py"
    script.write_text(
        "import sys, time\n"
        "from edgebench.mcu.protocol import DutClient\n"
        "d = DutClient(sys.argv[1])\n"
        "d.end_uploads(); d.resync()\n"
        "w = d.link.write\n"
        "def slow(b):\n"
        "    w(b)\n"
        "    if b[:2] == b'\\xeb\\x5a':\n"
        "        print('frame', flush=True); time.sleep(0.05)\n"
        "d.link.write = slow\n"
        "d.upload('model', bytes(200_000))\n")
    proc = subprocess.Popen([sys.executable, str(script), device], stdout=subprocess.PIPE, text=True)
    try:
        for _ in range(3):
            assert proc.stdout.readline().strip() == "frame"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    client = McuClient(_dut(device), get_profile("posix-sim"))
    try:
        t0 = time.monotonic()
        assert client.hello()["dialect"] == "edgebench"
        assert time.monotonic() - t0 < 5, "the first command after the kill must not wait out a timeout"
        assert "none" in str(client.dut.info()["loaded"])         # nothing half-uploaded is kept
        client.deploy(read_model(DIGITS_INT8))
        assert client.dut.load_model()["layers"] > 0
    finally:
        client.dut.close()
