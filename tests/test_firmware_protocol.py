"""The firmware's wire protocol, through the posix port and real pyserial.

The MLPerf Tiny reply strings are compared byte for byte (CRLF and the closing
``m-ready`` included) with the reference firmware's (mlcommons/tiny,
``api/internally_implemented.cpp`` and ``submitter_implemented.cpp``); the
edgebench extensions against firmware/PROTOCOL.md.
"""
from __future__ import annotations

import random
import re
import struct
import subprocess
import time
import zlib

import pytest
from conftest import MLPERF_DIR
from fw_util import ABORT_FRAME, READY, Device, PosixFirmware, frame

MLPERF = MLPERF_DIR
MAX_INPUT = 65536    # EB_INPUT_MAX_BYTES of the posix port (ports/posix/port.mk)
MAX_MODEL = 1048576  # EB_MODEL_MAX_BYTES of the posix port


@pytest.fixture
def dut(posix_firmware_bin):
    with PosixFirmware(posix_firmware_bin) as device:
        yield device


def lines(data: bytes) -> list[str]:
    """Split a reply into lines, checking that each ends with CRLF."""
    text = data.decode("latin-1")
    assert text.endswith("\r\n"), data
    parts = text.split("\r\n")[:-1]
    assert all("\r" not in p and "\n" not in p for p in parts), data
    return parts


# --- MLPerf Tiny dialect ----------------------------------------------------

@pytest.mark.slow
def test_start_up_lines_like_the_reference(posix_firmware_bin):
    # pyserial drops what arrived before it opened the port, so read them on --stdio.
    out = subprocess.run([str(posix_firmware_bin), "--stdio"], input=b"", capture_output=True,
                         timeout=10).stdout
    assert re.fullmatch(rb"m-timestamp-mode-performance\r\nm-lap-us-\d+\r\n"
                        rb"m-init-done\r\nm-ready\r\n", out), out


def test_name(dut):
    assert dut.raw("name") == b"m-name-dut-[posix]\r\nm-ready\r\n"
    # what the MLPerf Tiny runner (device_under_test.py) matches
    assert re.match(r"^m-(name)-dut-\[([^]]+)]$", dut.command("name")[0]).group(2) == "posix"


def test_profile(dut):
    assert dut.raw("profile") == (b"m-profile-[edgebench firmware 1.0]\r\n"
                                  b"m-model-[none]\r\nm-ready\r\n")


def test_help_lists_every_command(dut):
    reply = lines(dut.raw("help"))
    assert reply[0].startswith("edgebench firmware 1.0")
    assert reply[1] == ""
    assert reply[-1] == "m-ready"
    text = "\n".join(reply)
    for command in ("help", "name", "timestamp", "profile", "db SUBCMD", "load N", "print",
                    "infer N [W=10]", "results", "eb-info", "eb-upload", "eb-model", "eb-infer",
                    "eb-output", "eb-temp"):
        assert command in text


def test_timestamp_is_microseconds(dut):
    first = dut.raw("timestamp")
    m1 = re.fullmatch(rb"m-lap-us-(\d+)\r\nm-ready\r\n", first)
    assert m1, first
    time.sleep(0.2)
    m2 = re.fullmatch(rb"m-lap-us-(\d+)\r\nm-ready\r\n", dut.raw("timestamp"))
    elapsed_us = int(m2.group(1)) - int(m1.group(1))
    assert 150_000 < elapsed_us < 2_000_000


def test_db_load_hex_chunks_and_print(dut):
    assert dut.raw("db load 12") == b"m-[Expecting 12 bytes]\r\nm-ready\r\n"
    assert dut.raw("db 00010203") == READY
    assert dut.raw("db 0405060708") == READY
    assert dut.raw("db 090A0b") == b"m-load-done\r\nm-ready\r\n"
    assert dut.raw("db print") == (b"m-buffer-00-01-02-03-04-05-06-07\r\n"
                                   b"m-buffer-08-09-0a-0b\r\nm-ready\r\n")


def test_db_like_the_mlperf_runner(dut):
    """DUT.load(): `db load N`, then 31 bytes (62 hex digits) per `db` command."""
    data = bytes(random.Random(1).randrange(256) for _ in range(490))
    assert dut.raw(f"db load {len(data)}") == b"m-[Expecting 490 bytes]\r\nm-ready\r\n"
    replies = [dut.raw(f"db {data[i:i + 31].hex()}") for i in range(0, len(data), 31)]
    assert replies[:-1] == [READY] * (len(replies) - 1)
    assert replies[-1] == b"m-load-done\r\nm-ready\r\n"
    dump = lines(dut.raw("db print"))
    assert dump[-1] == "m-ready"
    assert all(re.fullmatch(r"m-buffer-[0-9a-f]{2}(-[0-9a-f]{2}){0,7}", x) for x in dump[:-1])
    assert bytes.fromhex("".join(x[len("m-buffer-"):].replace("-", "") for x in dump[:-1])) == data


def test_surplus_hex_digits_are_ignored_like_the_reference(dut):
    dut.raw("db load 2")
    assert dut.raw("db 01020304") == b"m-load-done\r\nm-ready\r\n"
    assert dut.raw("db print") == b"m-buffer-01-02\r\nm-ready\r\n"


BAD_INPUT = [
    # (commands sent before, command, exact error line)
    ([], "db", "e-[Command 'db' requires a subcommand]"),
    ([], "db load", "e-[Command 'db load' requires the # of bytes]"),
    ([], "db load 0", "e-[Command 'db load' must be >0 bytes]"),
    ([], "db load -5", "e-[Command 'db load' must be >0 bytes]"),
    ([], f"db load {MAX_INPUT + 1}",
     f"e-[Supplied buffer size {MAX_INPUT + 1} exceeds maximum of {MAX_INPUT}]"),
    ([], "db load 99999999999", f"e-[Supplied buffer size 99999999999 exceeds maximum of {MAX_INPUT}]"),
    ([], "db 0102", "e-[Command 'db' needs 'db load N' first]"),
    (["db load 4"], "db 012", "e-[Insufficent number of hex digits]"),
    (["db load 4"], "db 01zz", "e-[Invalid hex digit 'zz']"),
    (["db load 1", "db 01"], "db 02", "e-[Buffer already full: send 'db load N' to load again]"),
    ([], "infer 0", "e-[Inference iterations must be >0]"),
    ([], "infer -1", "e-[Inference iterations must be >0]"),
    ([], "infer x", "e-[Inference iterations must be >0]"),
    ([], "infer 1 -3", "e-[Inference warmup must be >=0]"),
    ([], "infer 2000000001", "e-[Inference iterations must be <=2000000000]"),
    ([], "infer 1 2000000001", "e-[Inference warmup must be <=2000000000]"),
    ([], "infer 1 0", "e-[No model loaded: eb-upload model, then eb-model]"),
    ([], "results", "e-[No results: run infer first]"),
    ([], "bogus", "e-[Unknown command: bogus]"),
    ([], "x" * 600, "e-[Command too long: more than 512 bytes]"),
    ([], "a b c d e f g h i", "e-[Too many arguments]"),
    ([], "eb-temp", "e-[eb-temp-unavailable]"),
    ([], "eb-output", "e-[eb-output-none: run infer or eb-infer first]"),
    ([], "eb-infer 1", "e-[No model loaded: eb-upload model, then eb-model]"),
    ([], "eb-infer 0", "e-[Inference iterations must be >0]"),
    ([], "eb-infer 1 2 3", "e-[eb-infer-usage: eb-infer N [W] [layers]]"),
    ([], "eb-model", "e-[eb-model-none: no model uploaded (eb-upload model LEN CRC32)]"),
    ([], "eb-model bad/id", "e-[eb-model-id: 1 to 16 characters of A-Z a-z 0-9 _ - .]"),
    ([], "eb-upload model", "e-[eb-upload-usage: eb-upload model|input LEN CRC32HEX]"),
    ([], "eb-upload disk 4 0", "e-[eb-upload-target: 'disk' is neither model nor input]"),
    ([], "eb-upload model 0 0", "e-[eb-upload-length: LEN must be a decimal number >0]"),
    ([], f"eb-upload model {MAX_MODEL + 1} 0",
     f"e-[eb-upload-too-large: {MAX_MODEL + 1} bytes > model buffer of {MAX_MODEL} bytes]"),
    ([], f"eb-upload input {MAX_INPUT + 1} 0",
     f"e-[eb-upload-too-large: {MAX_INPUT + 1} bytes > input buffer of {MAX_INPUT} bytes]"),
    ([], "eb-upload model 4 xyz", "e-[eb-upload-crc: CRC32 must be 1 to 8 hex digits]"),
]


@pytest.mark.parametrize("before,command,error", BAD_INPUT,
                         ids=[c[:24] for _, c, _ in BAD_INPUT])
def test_bad_input_is_one_error_line_then_ready(dut, before, command, error):
    for cmd in before:
        dut.raw(cmd)
    assert dut.raw(command) == error.encode() + b"\r\n" + READY
    assert dut.raw("name") == b"m-name-dut-[posix]\r\nm-ready\r\n"  # still serving


def test_failed_db_load_leaves_no_stale_input(dut):
    dut.raw("db load 2")
    dut.raw("db 0102")
    dut.raw(f"db load {MAX_INPUT + 1}")
    assert dut.raw("db print") == READY
    assert dut.raw("db 03") == b"e-[Command 'db' needs 'db load N' first]\r\n" + READY


def test_bad_hex_chunk_stores_nothing(dut):
    dut.raw("db load 4")
    dut.raw("db 0102zz")
    assert dut.raw("db 01020304") == b"m-load-done\r\nm-ready\r\n"


def test_binary_garbage_is_sanitised_in_the_error(dut):
    garbage = bytes(b for b in range(1, 256) if b not in b"% \t\r\n")
    reply = dut.raw(garbage)
    assert reply.endswith(b"]\r\nm-ready\r\n") and reply.startswith(b"e-[Unknown command: ")
    assert all(0x20 <= b < 0x7F for b in reply[:-len(b"]\r\nm-ready\r\n")])
    assert len(lines(reply)) == 2
    assert dut.raw("profile").endswith(b"m-model-[none]\r\nm-ready\r\n")


def test_empty_command_answers_ready_and_whitespace_is_ignored(dut):
    assert dut.raw("") == READY
    assert dut.raw(b"\r\n name ") == b"m-name-dut-[posix]\r\nm-ready\r\n"


def test_firmware_exits_when_the_host_hangs_up(posix_firmware_bin):
    fw = PosixFirmware(posix_firmware_bin)
    assert fw.raw("name").startswith(b"m-name-dut-[posix]")
    assert fw.stop() == 0


def test_keep_open_serves_the_next_host(posix_firmware_bin):
    fw = PosixFirmware(posix_firmware_bin, "--keep-open")
    try:
        assert fw.raw("db load 2") == b"m-[Expecting 2 bytes]\r\nm-ready\r\n"
        fw.close()
        with Device(fw.path) as again:  # same device state, new connection
            assert again.raw("db 0102") == b"m-load-done\r\nm-ready\r\n"
        assert fw.proc.poll() is None
    finally:
        fw.proc.terminate()
        fw.proc.wait(timeout=5)
        fw.proc.stdout.close()
        fw.proc.stderr.close()


# --- edgebench extensions ---------------------------------------------------

def info(dut) -> dict[str, str]:
    out = {}
    for line in dut.command("eb-info"):
        m = re.fullmatch(r"m-eb-([a-z-]+)-\[([^]]*)\]", line)
        assert m, line
        out[m.group(1)] = m.group(2)
    return out


def test_eb_info_fields(dut):
    fields = info(dut)
    assert list(fields) == ["engine", "proto", "port", "timing", "counter-hz", "counter-bits",
                            "clock", "clock-ppm", "clock-fallback", "ram-bytes", "arena-bytes", "model-max-bytes", "input-max-bytes",
                            "frame-max-bytes", "cmd-max-bytes", "mode", "temp", "flash-model-bytes", "loaded"]
    assert fields["flash-model-bytes"] == "0"        # no model linked into this image
    assert fields["engine"].isdigit() and fields["proto"] == "2"
    assert fields["port"] == "posix" and fields["timing"] == "real"
    assert fields["counter-hz"] == "1000000" and fields["counter-bits"] == "32"
    assert (fields["clock"], fields["clock-ppm"], fields["clock-fallback"]) == ("host", "0", "none")
    assert fields["arena-bytes"] == "1048576"
    assert fields["model-max-bytes"] == str(MAX_MODEL)
    assert fields["input-max-bytes"] == str(MAX_INPUT)
    assert int(fields["ram-bytes"]) > MAX_MODEL + MAX_INPUT + 1048576
    assert fields["frame-max-bytes"] == "1024" and fields["cmd-max-bytes"] == "512"
    assert fields["mode"] == "performance" and fields["temp"] == "no"
    assert fields["loaded"] == "none"


class Uploader:
    """Host side of `eb-upload` for these tests: go-back-N with a window,
    rewinding on a NAK or when no ack arrives in time (PROTOCOL.md).

    ``mangle(seq, attempt, frame_bytes)`` may corrupt what goes on the wire."""

    def __init__(self, dut, *, window: int = 4, ack_timeout: float = 0.5, mangle=None):
        self.dut, self.window, self.ack_timeout = dut, window, ack_timeout
        self.mangle = mangle or (lambda seq, attempt, data: data)
        self.naks: list[int] = []
        self.sent: list[int] = []

    def start(self, target: str, length: int, crc: int) -> int:
        reply = self.dut.command(f"eb-upload {target} {length} {crc:08x}")
        assert len(reply) == 1 and reply[0].startswith("m-eb-upload-ready-["), reply
        return int(reply[0][len("m-eb-upload-ready-["):-1])

    def upload(self, target: str, data: bytes, crc: int | None = None) -> list[str]:
        """Send ``data``; return the final reply lines (before m-ready)."""
        crc = zlib.crc32(data) if crc is None else crc
        payload = self.start(target, len(data), crc)
        chunks = [data[i:i + payload] for i in range(0, len(data), payload)]
        attempts = [0] * len(chunks)
        base = nxt = 0
        while True:
            while nxt < len(chunks) and nxt < base + self.window:
                wire = self.mangle(nxt, attempts[nxt], frame(nxt, chunks[nxt]))
                attempts[nxt] += 1
                self.sent.append(nxt)
                self.dut.write(wire)
                nxt += 1
            try:
                line = self.dut.readline(timeout=self.ack_timeout)
            except AssertionError:
                nxt = base  # nothing heard: resend everything unacknowledged
                continue
            if line.startswith("m-eb-ack-"):
                base = max(base, int(line[len("m-eb-ack-"):]) + 1)
            elif line.startswith("e-[eb-nak-"):
                seq = int(line[len("e-[eb-nak-"):-1])
                self.naks.append(seq)
                base = nxt = seq
            else:
                rest = self.dut.read_until(READY).decode("latin-1").split("\r\n")[:-2]
                return [line, *rest]


def test_upload_frames_crc_ok(dut):
    data = random.Random(2).randbytes(5000)
    up = Uploader(dut)
    crc = zlib.crc32(data)
    assert up.upload("model", data) == [f"m-eb-upload-ok-[{crc:08x}]"]
    assert up.naks == [] and up.sent == [0, 1, 2, 3, 4]
    assert info(dut)["loaded"] == "none"  # uploaded, not loaded until eb-model


def test_upload_exact_replies(dut):
    data = b"0123456789"
    crc = zlib.crc32(data)
    assert dut.raw(f"eb-upload model {len(data)} {crc:x}") == (b"m-eb-upload-ready-[1024]\r\n"
                                                             + READY)
    dut.write(frame(0, data[:6]))
    assert dut.read_until(b"\r\n") == b"m-eb-ack-0\r\n"
    dut.write(frame(1, data[6:]))
    assert dut.read_until(READY) == (b"m-eb-ack-1\r\n"
                                     + f"m-eb-upload-ok-[{crc:08x}]\r\n".encode() + READY)


def test_upload_with_wrong_crc_fails_and_leaves_no_model(dut):
    data = random.Random(3).randbytes(3000)
    crc = zlib.crc32(data)
    reply = Uploader(dut).upload("model", data, crc=crc ^ 1)
    assert reply == [f"e-[eb-upload-crc-mismatch: received {crc:08x}, announced {crc ^ 1:08x}]"]
    assert dut.command("eb-model") == [
        "e-[eb-model-none: no model uploaded (eb-upload model LEN CRC32)]"]


def test_corrupted_frame_is_naked_then_retransmitted(dut):
    data = random.Random(4).randbytes(4 * 1024 + 100)

    def corrupt_frame_1_once(seq, attempt, wire):
        if seq == 1 and attempt == 0:
            wire = bytearray(wire)
            wire[100] ^= 0x40
            return bytes(wire)
        return wire

    up = Uploader(dut, mangle=corrupt_frame_1_once)
    assert up.upload("model", data) == [f"m-eb-upload-ok-[{zlib.crc32(data):08x}]"]
    assert up.naks == [1]  # one NAK: the frames after the bad one are dropped silently
    assert up.sent.count(1) == 2 and up.sent[:4] == [0, 1, 2, 3]


def _acked_then_done(dut, acks: list, data: bytes) -> None:
    """The frames ``acks`` acknowledged in this order, then the upload of ``data`` OK (its CRC) and the prompt."""
    expected = [f"m-eb-ack-{n}" for n in acks] + [f"m-eb-upload-ok-[{zlib.crc32(data):08x}]", "m-ready"]
    assert [dut.readline() for _ in expected] == expected


def test_nak_then_silence_until_the_missing_frame_arrives(dut):
    data = bytes(range(256)) * 12
    Uploader(dut).start("model", len(data), zlib.crc32(data))
    chunks = [data[i:i + 1024] for i in range(0, len(data), 1024)]
    dut.write(frame(0, chunks[0]))
    assert dut.readline() == "m-eb-ack-0"
    bad = bytearray(frame(1, chunks[1]))
    bad[-1] ^= 0xFF  # frame CRC
    dut.write(bytes(bad))
    assert dut.readline() == "e-[eb-nak-1]"
    dut.write(frame(2, chunks[2]))     # ahead of the gap: dropped, not NAKed again
    dut.expect_silence(0.3)
    dut.write(frame(0, chunks[0]))     # a duplicate is acknowledged again
    assert dut.readline() == "m-eb-ack-0"
    dut.write(frame(1, chunks[1]) + frame(2, chunks[2]))
    _acked_then_done(dut, [1, 2], data)


def test_every_damaged_frame_is_naked_at_once(dut):
    """A resend damaged again is NAKed again at once (issue 29: the host resends within a round
    trip, not after a timeout); an intact frame ahead of the gap still gets no second NAK."""
    data = bytes(range(256)) * 8
    Uploader(dut).start("model", len(data), zlib.crc32(data))
    chunks = [data[i:i + 1024] for i in range(0, len(data), 1024)]
    bad = bytearray(frame(0, chunks[0]))
    bad[-1] ^= 0xFF
    dut.write(bytes(bad))
    assert dut.readline() == "e-[eb-nak-0]"
    dut.write(frame(1, chunks[1]))     # intact, ahead of the gap: no second NAK for frame 0
    dut.expect_silence(0.3)
    dut.write(bytes(bad))              # the resend damaged again: NAKed again
    assert dut.readline() == "e-[eb-nak-0]"
    dut.write(frame(0, chunks[0]) + frame(1, chunks[1]))
    _acked_then_done(dut, [0, 1], data)


def test_dropped_bytes_recover_through_nak_and_timeout(dut):
    data = random.Random(5).randbytes(6 * 1024)

    def drop_bytes(seq, attempt, wire):
        if attempt == 0 and seq in (2, 3):
            return wire[:50] + wire[51:]  # one byte lost on the line
        return wire

    up = Uploader(dut, mangle=drop_bytes, ack_timeout=0.3)
    assert up.upload("model", data) == [f"m-eb-upload-ok-[{zlib.crc32(data):08x}]"]
    assert up.naks and up.naks[0] == 2


def test_abort_frame_ends_the_upload(dut):
    Uploader(dut).start("input", 100, 0)
    dut.write(frame(0, bytes(10)))
    assert dut.readline() == "m-eb-ack-0"
    dut.write(ABORT_FRAME)
    assert dut.read_until(READY) == b"e-[eb-upload-aborted]\r\n" + READY
    assert dut.raw("name") == b"m-name-dut-[posix]\r\nm-ready\r\n"
    assert dut.raw("db print") == READY  # the partial input is not kept


def test_frame_past_the_announced_length_is_an_error(dut):
    Uploader(dut).start("input", 10, 0)
    dut.write(frame(0, bytes(20)))
    assert dut.read_until(READY) == (b"e-[eb-upload-overrun: frame 0 goes past the announced "
                                     b"10 bytes]\r\n" + READY)


def test_upload_input_then_db_print(dut):
    data = bytes(range(20))
    assert Uploader(dut).upload("input", data) == [f"m-eb-upload-ok-[{zlib.crc32(data):08x}]"]
    assert dut.raw("db print") == (b"m-buffer-00-01-02-03-04-05-06-07\r\n"
                                   b"m-buffer-08-09-0a-0b-0c-0d-0e-0f\r\n"
                                   b"m-buffer-10-11-12-13\r\n" + READY)


def test_eb_model_on_garbage_names_the_problem(dut):
    data = random.Random(6).randbytes(300)
    Uploader(dut).upload("model", data)
    reply = dut.command("eb-model")
    assert reply == ["e-[eb-model-magic: not an edgebench model blob (magic is not EBNN)]"]
    assert info(dut)["loaded"] == "none"


def test_eb_model_on_a_wrong_version(dut):
    blob = bytearray(64)
    blob[0:4] = b"EBNN"
    blob[4:6] = struct.pack("<H", 99)
    Uploader(dut).upload("model", bytes(blob))
    (line,) = dut.command("eb-model")
    assert line.startswith("e-[eb-model-version: ") and "99" in line, line


# --- a real model, when the engine and the blob converter are there ----------

@pytest.fixture(scope="module")
def kws_blob() -> bytes:
    """The MLPerf Tiny keyword-spotting INT8 model as an engine blob."""
    from edgebench.mcu.blob import convert  # edgebench's own: a failed import is a failure, not a skip
    model = MLPERF / "kws_ref_model.tflite"
    if not model.exists():
        pytest.skip(f"{model} is missing")
    return convert(model).data


@pytest.fixture
def kws(dut, kws_blob):
    data = kws_blob
    assert Uploader(dut).upload("model", data) == [f"m-eb-upload-ok-[{zlib.crc32(data):08x}]"]
    return dut, data


def test_real_model_load_infer_results(kws):
    dut, data = kws
    (loaded,) = dut.command("eb-model kws01")
    m = re.fullmatch(r"m-eb-model-\[layers=(\d+),arena=(\d+),in=(\d+),out=(\d+)\]", loaded)
    assert m, loaded
    n_in, n_out = int(m.group(3)), int(m.group(4))
    assert (n_in, n_out) == (490, 12)
    assert dut.command("profile")[1] == "m-model-[kws01]"
    assert info(dut)["loaded"] == (f"crc32={zlib.crc32(data):08x},bytes={len(data)},"
                                   f"layers={m.group(1)},id=kws01")

    sample = random.Random(7).randbytes(n_in)
    dut.raw(f"db load {n_in}")
    for i in range(0, n_in, 31):
        dut.raw(f"db {sample[i:i + 31].hex()}")
    reply = lines(dut.raw("infer 1 0"))
    assert reply[:3] == ["m-warmup-start-0", "m-warmup-done", "m-infer-start-1"]
    t0 = re.fullmatch(r"m-lap-us-(\d+)", reply[3])
    t1 = re.fullmatch(r"m-lap-us-(\d+)", reply[4])
    assert t0 and t1 and int(t1.group(1)) >= int(t0.group(1))
    assert reply[5] == "m-infer-done"
    results = re.fullmatch(r"m-results-\[([^]]+)\]", reply[6])
    assert results, reply[6]
    scores = results.group(1).split(",")
    assert len(scores) == 12 and all(re.fullmatch(r"-?\d+\.\d{3}", s) for s in scores)
    assert abs(sum(float(s) for s in scores) - 1.0) < 0.05  # softmax output
    assert reply[7:] == ["m-ready"]
    assert dut.command("results") == [reply[6]]
    (raw,) = dut.command("eb-output")
    out = bytes.fromhex(re.fullmatch(r"m-eb-output-\[([0-9a-f]+)\]", raw).group(1))
    assert len(out) == 12
    # softmax int8 output: scale 1/256, zero point -128 -> the printed scores
    expected = [f"{(struct.unpack('b', bytes([b]))[0] + 128) / 256:.3f}" for b in out]
    assert scores == expected


def test_real_model_per_inference_and_per_layer_ticks(kws):
    dut, _ = kws
    (loaded,) = dut.command("eb-model")
    n_layers = int(re.search(r"layers=(\d+)", loaded).group(1))
    dut.raw("db load 490")
    dut.raw("db " + "00" * 245)
    dut.raw("db " + "00" * 245)
    reply = dut.command("eb-infer 70 3 layers", timeout=60)
    warm = [x for x in reply if x.startswith("m-eb-w-[")]
    timed = [x for x in reply if x.startswith("m-eb-t-[")]
    layer_lines = [x for x in reply if x.startswith("m-eb-layer-")]
    assert len(warm) == 1 and len(warm[0][8:-1].split(",")) == 3
    assert [len(x[8:-1].split(",")) for x in timed] == [32, 32, 6]
    ticks = [int(t) for x in timed for t in x[8:-1].split(",")]
    assert all(t > 0 for t in ticks)
    assert len(layer_lines) == n_layers
    for k, line in enumerate(layer_lines):
        m = re.fullmatch(r"m-eb-layer-(\d+)-\[(\d+),(\d+)\]", line)
        assert m and int(m.group(1)) == k, line
        assert int(m.group(2)) in (0, 1, 3, 4, 9, 17, 22, 25)  # TFLite builtin op codes
    assert reply[-1] == "m-eb-infer-done"
    short = dut.command("eb-infer 2 layers")
    assert short[0].startswith("m-eb-t-[") and len(short) == 1 + n_layers + 1
    assert dut.command("infer 1")[0] == "m-warmup-start-10"  # the reference's default W


def test_real_model_needs_its_input_size(kws):
    dut, _ = kws
    dut.command("eb-model")
    dut.raw("db load 10")
    assert dut.command("infer 1 0") == ["e-[Input incomplete: 0 of 10 bytes loaded]"]
    dut.raw("db " + "00" * 10)
    assert dut.command("infer 1 0") == ["e-[Input has 10 bytes, model expects 490]"]


def test_real_model_with_a_bad_crc_or_too_big_for_the_arena(kws):
    dut, data = kws
    bad = bytearray(data)
    bad[-1] ^= 0xFF  # inside the blob's own CRC-checked range
    Uploader(dut).upload("model", bytes(bad))
    (line,) = dut.command("eb-model")
    assert line.startswith("e-[eb-model-crc: "), line

    huge = bytearray(data)
    huge[36:40] = struct.pack("<I", 64 * 1024 * 1024)  # arena the model claims to need
    huge[12:16] = struct.pack("<I", zlib.crc32(bytes(huge[16:])))
    Uploader(dut).upload("model", bytes(huge))
    (line,) = dut.command("eb-model")
    assert line.startswith("e-[eb-model-arena: "), line
    assert dut.command("infer 1 0") == ["e-[No model loaded: eb-upload model, then eb-model]"]


# --- protocol 2: framed requests and replies, upload sessions that end --------

def framed(text: str, seq: int) -> bytes:
    """A framed request without its '%': text #seq:crc32(text #seq)."""
    body = f"{text} #{seq}".encode()
    return body + f":{zlib.crc32(body):08x}".encode()


def unframe(line: str, seq: int, k: int) -> str:
    """The text of a framed reply line, checking its sequence number, index and CRC."""
    m = re.fullmatch(r"(.*) #(\d+)\.(\d+):([0-9a-f]{8})", line)
    assert m, line
    assert (int(m.group(2)), int(m.group(3))) == (seq, k), line
    assert zlib.crc32(line[:m.start(4) - 1].encode("latin-1")) == int(m.group(4), 16), line
    return m.group(1)


def fcommand(dut, text: str, seq: int, start: int = 0) -> list[str]:
    """Send ``text`` framed; the texts of its reply lines up to its framed m-ready (checked)."""
    dut.send(framed(text, seq))
    return read_framed(dut, seq, start)


def read_framed(dut, seq: int, start: int = 0) -> list[str]:
    out = []
    while not out or out[-1] != "m-ready":
        out.append(unframe(dut.readline(), seq, start + len(out)))
    return out


def sid_frame(seq: int, payload: bytes, sid: int) -> bytes:
    """An upload frame of session ``sid`` (the CRC-32 is seeded with it)."""
    head = struct.pack("<HH", seq, len(payload))
    return b"\xeb\x5a" + head + payload + struct.pack("<I", zlib.crc32(head + payload, sid))


def test_framed_request_frames_every_reply_line(dut):
    assert fcommand(dut, "eb-sync n0nce", 4242) == ["m-eb-sync-[n0nce]", "m-ready"]
    texts = fcommand(dut, "eb-info", 7)
    assert texts[1] == "m-eb-proto-[2]" and texts[-1] == "m-ready"
    # the MLPerf dialect is untouched: no suffix on unframed commands
    assert dut.raw("name") == b"m-name-dut-[posix]\r\nm-ready\r\n"


def test_a_damaged_framed_request_is_not_run(dut):
    bad = framed("eb-upload input 16 0", 9).replace(b"16", b"17")
    dut.send(bad)
    assert read_framed(dut, 9) == [
        "e-[eb-request-damaged: CRC mismatch, not executed]", "m-ready"]
    assert dut.raw("name") == b"m-name-dut-[posix]\r\nm-ready\r\n"   # still in command mode


def test_late_and_duplicated_frames_after_the_upload_are_ignored(dut):
    data = bytes(range(200))
    crc = zlib.crc32(data)
    assert fcommand(dut, f"eb-upload input {len(data)} {crc:08x}", 31) == ["m-eb-upload-ready-[1024]", "m-ready"]
    dut.write(sid_frame(0, data[:100], 31) + sid_frame(1, data[100:], 31))
    assert read_framed(dut, 31, 2) == ["m-eb-ack-0", "m-eb-ack-1", f"m-eb-upload-ok-[{crc:08x}]", "m-ready"]
    # late retransmissions (some with a '%' inside), a frame of another session, an abort frame
    late = sid_frame(1, data[100:], 31) + sid_frame(0, b"db load 9%" * 5, 31) + sid_frame(0, data, 77) + ABORT_FRAME
    dut.write(late)
    assert dut.raw("name") == b"m-name-dut-[posix]\r\nm-ready\r\n"    # not one reply to the stray bytes
    assert dut.raw("eb-infer 1 0").startswith(b"e-[No model loaded")
    assert [ln for ln in lines(dut.raw("db print"))][:1] == ["m-buffer-00-01-02-03-04-05-06-07"]


def test_frames_of_another_session_are_never_stored(dut):
    data = bytes(range(64))
    crc = zlib.crc32(data)
    fcommand(dut, f"eb-upload input {len(data)} {crc:08x}", 40)
    dut.write(sid_frame(0, bytes(64), 39))          # the previous session's frame: CRC fails under 40
    assert unframe(dut.readline(), 40, 2) == "e-[eb-nak-0]"
    dut.write(sid_frame(0, data, 40))
    assert unframe(dut.readline(), 40, 3) == "m-eb-ack-0"
    assert unframe(dut.readline(), 40, 4) == f"m-eb-upload-ok-[{crc:08x}]"


def test_a_framed_command_ends_a_pending_upload(dut):
    """A host killed mid-upload: the next host's first framed request ends the upload and runs."""
    fcommand(dut, "eb-upload model 5000 0", 50)
    dut.write(sid_frame(0, bytes(300), 50)[:200])    # cut off mid-frame (the host died)
    dut.write(b"\x00" * 1034)                       # what a new session sends first: completes the frame
    assert unframe(dut.readline(), 50, 2) == "e-[eb-nak-0]"
    dut.write(framed("eb-sync abc", 51) + b"%")
    assert unframe(dut.readline(), 50, 3) == "e-[eb-upload-aborted: a new command arrived]"
    assert unframe(dut.readline(), 50, 4) == "m-ready"
    assert unframe(dut.readline(), 51, 0) == "m-eb-sync-[abc]"
    assert unframe(dut.readline(), 51, 1) == "m-ready"
    # an unframed line between frames is not a command (payload bytes could look like one)
    fcommand(dut, "eb-upload input 10 0", 52)
    dut.write(b"name%")
    dut.expect_silence(0.3)
    dut.write(ABORT_FRAME)
    assert read_framed(dut, 52, 2) == ["e-[eb-upload-aborted]", "m-ready"]


@pytest.mark.slow
def test_an_idle_upload_returns_to_command_mode_and_says_so(dut):
    dut.command("eb-upload input 100 0")
    dut.write(frame(0, bytes(10)))
    assert dut.readline() == "m-eb-ack-0"
    time.sleep(5.3)                                   # EB_UPLOAD_IDLE_MS = 5000
    reply = dut.raw("name") + dut.read_until(READY)
    assert reply == (b"e-[eb-upload-timeout: no upload byte for 5000 ms, back in command mode]\r\n" + READY
                     + b"m-name-dut-[posix]\r\n" + READY)
