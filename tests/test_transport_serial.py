"""The serial transport over a real pseudo-terminal pair (socat), like a null-modem cable.

The agent serves on one end (``python -m edgebench.agent --tty A``); edgebench
opens the other end with pyserial, exactly as it would open /dev/ttyUSB0.
"""
from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import serial
from conftest import MLPERF_DIR, agent_session, require_file, require_tool, stop_process

from edgebench.errors import EdgebenchError, TransportError, UsageError
from edgebench.transport.serial import SerialChannel, SerialTransport

MLPERF = MLPERF_DIR
KWS = MLPERF / "kws_ref_model.tflite"


@pytest.fixture
def pty_pair():
    """Two connected pseudo-terminals (paths), made by socat; raw, no echo."""
    if sys.platform == "win32":
        pytest.skip("pseudo-terminals need a POSIX system")
    socat = require_tool("socat")
    proc = subprocess.Popen([socat, "-d", "-d", "pty,raw,echo=0", "pty,raw,echo=0"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    paths: list[str] = []
    deadline = time.monotonic() + 10
    while len(paths) < 2 and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        match = re.search(r"PTY is (\S+)", line)
        if match:
            paths.append(match.group(1))
    try:
        if len(paths) < 2:
            pytest.fail(f"socat did not report two PTYs (got {paths})")
        yield paths[0], paths[1]
    finally:
        stop_process(proc)
        proc.stderr.close()


@pytest.fixture
def agent_on_tty(pty_pair, tmp_path):
    """The real agent serving on one end of the pair; yields the other end's path."""
    board_end, host_end = pty_pair
    log = open(tmp_path / "agent.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "edgebench.agent", "--tty", board_end, "--baud", "115200",
         "--cache-dir", str(tmp_path / "agent-cache")],
        stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=tmp_path,
    )
    log.close()
    try:
        _wait_for_agent(host_end, proc, tmp_path / "agent.log")
        yield host_end
    finally:
        if proc.poll() is None:
            stop_process(proc)


def _wait_for_agent(path: str, proc: subprocess.Popen, log: Path, timeout_s: float = 30) -> None:
    """Probe until the agent answers: it flushes its input when it sets up the tty,
    so a request sent before that would be lost (on a board the agent runs long before)."""
    deadline = time.monotonic() + timeout_s
    with serial.Serial(path, 115200, timeout=0.25, write_timeout=5) as port:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"the agent exited: {log.read_text(errors='replace')[-2000:]}")
            port.write(b'EB1 {"id": 0, "op": "hello"}\n')
            if b"EB1 " in port.read_until(b"\n"):
                time.sleep(0.3)  # answers to earlier probes may still be on their way
                port.reset_input_buffer()
                return
    pytest.fail("the agent did not answer on its tty within 30 s")


def test_serial_end_to_end(agent_on_tty):
    from edgebench.transport.client import AgentClient

    require_file(KWS)
    transport = SerialTransport(agent_on_tty, baud=115200)
    assert transport.kind == "serial"
    assert transport.describe() == f"serial {agent_on_tty} at 115200 baud"
    channel = transport.open()
    assert isinstance(channel, SerialChannel)
    client = AgentClient(channel, transport.describe(), timeout_s=60)
    try:
        model, sha, x = agent_session(client, KWS, 3, seed=1)
        assert x.shape == (3, 49, 10, 1)
        assert client.ensure_model(model) == sha  # second time: has_model, no upload
        header, timings = client.run("single-stream", count=10, max_time_s=30)
        assert header["n"] == 10 and len(timings["invoke_ns"]) == 10
        assert (timings["invoke_ns"] > 0).all()
        y, y_float = client.infer(x)
        assert y.shape[0] == 3 and y_float.dtype == np.float32
    finally:
        client.close()
    assert channel.bytes_out > model.bytes and channel.bytes_in > 0
    assert "115200 baud" in channel.diagnostics()


def test_serial_channel_over_pty_roundtrip(pty_pair):
    """Large binary payloads cross the line intact (no tty processing on either end)."""
    board_end, host_end = pty_pair
    payload = bytes(range(256)) * 1024 + b"\r\n\x03\x04\x11\x13"
    with serial.Serial(board_end, 115200, timeout=0.1, write_timeout=10) as board:
        channel = SerialTransport(host_end).open()
        try:
            got = bytearray()

            def drain():  # the board reads while we write: a pty buffers only a few KiB
                deadline = time.monotonic() + 10
                while len(got) < 7 + len(payload) and time.monotonic() < deadline:
                    got.extend(board.read(65536))

            reader = threading.Thread(target=drain)
            reader.start()
            channel.write(b"EB1 {}\n" + payload)
            reader.join()
            assert bytes(got) == b"EB1 {}\n" + payload
            writer = threading.Thread(
                target=board.write, args=(b"boot noise\r\nEB1 {\"id\": 1}\n" + payload,))
            writer.start()
            try:
                assert channel.read_line(5) == b"boot noise\r\n"
                assert channel.read_line(5) == b"EB1 {\"id\": 1}\n"
                assert channel.read_exact(len(payload), 5) == payload
            finally:
                writer.join(10)
        finally:
            channel.close()
    assert not channel.alive()


def test_nonexistent_port():
    with pytest.raises(TransportError) as info:
        SerialTransport("/dev/ttyEDGEBENCH-NOPE").open()
    line = info.value.one_line()
    assert "does not exist" in line and "serial.tools.list_ports" in line


def test_busy_port(pty_pair):
    _, host_end = pty_pair
    with serial.serial_for_url(host_end, baudrate=115200, exclusive=True):
        with pytest.raises(TransportError) as info:
            SerialTransport(host_end).open()
    line = info.value.one_line()
    assert "busy" in line and "minicom" in line


def test_invalid_url():
    with pytest.raises(UsageError):
        SerialTransport("nosuchscheme://x").open()
    with pytest.raises(UsageError):
        SerialTransport("loop://", baud=0)


def test_nothing_answering_names_the_baud_rate(pty_pair):
    from edgebench.transport.client import AgentClient

    _, host_end = pty_pair  # nobody serves on the other end
    transport = SerialTransport(host_end, baud=57600)
    channel = transport.open()
    client = AgentClient(channel, transport.describe(), timeout_s=1.5)
    start = time.monotonic()
    try:
        with pytest.raises(EdgebenchError) as info:
            client.hello()
    finally:
        client.close()
    assert time.monotonic() - start < 10
    line = info.value.one_line()
    assert "57600 baud" in line
    assert "nothing came back" in channel.diagnostics()


def test_login_shell_instead_of_agent_is_explained(pty_pair):
    from edgebench.transport.client import AgentClient

    board_end, host_end = pty_pair
    with serial.Serial(board_end, 115200, timeout=0.1, write_timeout=10) as board:
        transport = SerialTransport(host_end)
        client = AgentClient(transport.open(), transport.describe(), timeout_s=1.0)
        try:
            board.write(b"\r\nDebian GNU/Linux 12 raspberrypi ttyGS0\r\n\r\nraspberrypi login: ")
            with pytest.raises(EdgebenchError) as info:
                client.hello()
        finally:
            client.close()
    line = info.value.one_line()
    assert "login" in line and "115200" in line and "agent frame" in line


def test_loop_url_channel():
    channel = SerialTransport("loop://", baud=9600).open()
    try:
        channel.write(b"EB1 {}\nxyz")
        assert channel.read_line(1) == b"EB1 {}\n"
        assert channel.read_exact(3, 1) == b"xyz"
        start = time.monotonic()
        with pytest.raises(TransportError):
            channel.read_exact(1, 0.2)
        assert time.monotonic() - start < 2
    finally:
        channel.close()


def test_stalled_line_write_times_out(pty_pair):
    _, host_end = pty_pair  # nobody reads the other end: the ptys' buffers fill up
    channel = SerialTransport(host_end, timeout_s=0.5).open()
    start = time.monotonic()
    try:
        with pytest.raises(TransportError) as info:
            channel.write(b"\0" * (4 << 20))
    finally:
        channel.close()
    assert time.monotonic() - start < 10
    assert "timed out writing" in info.value.one_line()
