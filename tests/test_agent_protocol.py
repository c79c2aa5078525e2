"""Framing of the agent protocol: both ends share edgebench.agent.protocol."""
from __future__ import annotations

import io

import numpy as np
import pytest

from edgebench.agent import protocol


class Stream:
    """An in-memory byte stream with the two callables read_message expects."""

    def __init__(self, data: bytes):
        self.f = io.BytesIO(data)

    def read_line(self, max_bytes: int) -> bytes:
        return self.f.readline(max_bytes)

    def read_exact(self, n: int) -> bytes:
        data = self.f.read(n)
        if len(data) != n:
            raise protocol.EndOfStream()
        return data

    def read(self, noise=None):
        return protocol.read_message(self.read_line, self.read_exact, noise=noise)


def test_round_trip_with_payload_and_noise():
    payload = bytes(range(256)) * 3 + b"\nEB1 {not a header}\n"
    data = (b"Linux raspberrypi 6.6.31 #1 SMP\n"
            b"INFO: Created TensorFlow Lite XNNPACK delegate for CPU.\n"
            + protocol.encode_message({"id": 7, "op": "put_model", "sha256": "ab"}, payload)
            + protocol.encode_message({"id": 8, "op": "hello"}))
    s, noise = Stream(data), []
    header, body = s.read(noise)
    assert header == {"id": 7, "op": "put_model", "sha256": "ab", "payload_bytes": len(payload)}
    assert body == payload
    assert len(noise) == 2 and noise[1].startswith(b"INFO:")
    header, body = s.read()
    assert header == {"id": 8, "op": "hello"} and body == b""
    with pytest.raises(protocol.EndOfStream):
        s.read()


def test_header_line_is_compact_and_single_line():
    frame = protocol.encode_message({"id": 1, "op": "x", "text": "a\nb", "v": np.int64(3)})
    line, rest = frame.split(b"\n", 1)
    assert line.startswith(b"EB1 {") and rest == b""
    assert protocol.parse_header_line(line + b"\n") == {"id": 1, "op": "x", "text": "a\nb", "v": 3}


def test_marker_after_console_garbage_on_the_same_line():
    s = Stream(b"login: \x1b[0m" + protocol.encode_message({"id": 3, "ok": True}))
    assert s.read()[0] == {"id": 3, "ok": True}


def test_noise_is_bounded():
    s = Stream(b"x" * 99 + b"\n" * 1 + (b"y" * 1023 + b"\n") * 70 + protocol.encode_message({"id": 1}))
    with pytest.raises(protocol.ProtocolFailure, match="64 KiB"):
        s.read()


def test_malformed_header_is_a_protocol_failure():
    with pytest.raises(protocol.ProtocolFailure, match="malformed"):
        Stream(b"EB1 {oops\n").read()
    with pytest.raises(protocol.ProtocolFailure, match="payload_bytes"):
        Stream(b'EB1 {"payload_bytes": -1}\n').read()


def test_truncated_payload_ends_the_stream():
    frame = protocol.encode_message({"id": 1}, b"12345678")
    with pytest.raises(protocol.EndOfStream):
        Stream(frame[:-3]).read()


def test_arrays_round_trip_and_never_unpickle():
    arrays = {"x": np.arange(12, dtype=np.float32).reshape(3, 4), "y": np.array([-128, 127], np.int8)}
    back = protocol.decode_arrays(protocol.encode_arrays(arrays))
    assert set(back) == {"x", "y"}
    for k in arrays:
        assert back[k].dtype == arrays[k].dtype and np.array_equal(back[k], arrays[k])
    buf = io.BytesIO()
    np.savez(buf, x=np.array([{"evil": 1}], dtype=object))
    with pytest.raises(protocol.DataFailure):
        protocol.decode_arrays(buf.getvalue())
    with pytest.raises(protocol.DataFailure):
        protocol.decode_arrays(b"not a zip")


def test_failures_carry_the_host_error_type():
    assert protocol.ModelFailure("m", hint="h").to_dict() == {"type": "ModelError", "message": "m", "hint": "h"}
    assert protocol.DataFailure("d").type == "DataError"
    assert protocol.RuntimeMissing("r").type == "RuntimeMissingError"
