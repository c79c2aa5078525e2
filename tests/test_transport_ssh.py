"""The ssh transport against a real OpenSSH server on 127.0.0.1 (tests/sshd_fixture.py).

Host key checking stays on in every test: the client config lists the server's
real host key in its known_hosts and says ``StrictHostKeyChecking yes``.
"""
from __future__ import annotations

import hashlib
import os
import shlex
import socket
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from conftest import MLPERF_DIR, agent_session, require_file

from edgebench.errors import EdgebenchError, RuntimeMissingError, TransportError, UsageError
from edgebench.transport.bundle import agent_zipapp, agent_zipapp_bytes
from edgebench.transport.ssh import SshChannel, SshTransport, classify_ssh_failure, parse_ssh_url

MLPERF = MLPERF_DIR
KWS = MLPERF / "kws_ref_model.tflite"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the with-block ends


@pytest.fixture
def board_dir(tmp_path):
    """Where the 'board' keeps the agent: an absolute tmp path, not root's real home."""
    return str(tmp_path / "board")


def _transport(server, board_dir, **kw) -> SshTransport:
    kw.setdefault("ssh_options", server.ssh_options())
    kw.setdefault("python", sys.executable)  # the board's python: this venv (numpy, litert)
    kw.setdefault("connect_timeout_s", 5)
    return SshTransport(kw.pop("url", server.url), remote_dir=board_dir, **kw)


def _open_error(transport, limit_s: float = 30.0) -> EdgebenchError:
    start = time.monotonic()
    with pytest.raises(EdgebenchError) as info:
        transport.open()
    assert time.monotonic() - start < limit_s, "ssh must fail fast, never wait on a prompt"
    line = info.value.one_line()
    assert "\n" not in line
    return info.value


# -- the zipapp ---------------------------------------------------------------------
def test_zipapp_is_deterministic_and_self_contained(tmp_path):
    path1, sha1 = agent_zipapp(tmp_path / "a")
    path2, sha2 = agent_zipapp(tmp_path / "b")
    assert sha1 == sha2 == hashlib.sha256(path1.read_bytes()).hexdigest()
    assert path1.read_bytes() == path2.read_bytes() == agent_zipapp_bytes()
    assert path1.name == f"agent-{sha1[:12]}.pyz"
    names = zipfile.ZipFile(path1).namelist()
    assert names == sorted(names)
    assert "__main__.py" in names and "edgebench/agent/server.py" in names
    assert not any("__pycache__" in n or not n.endswith(".py") for n in names)
    stub = zipfile.ZipFile(path1).read("edgebench/__init__.py").decode()
    assert "load_runs" not in stub  # the stub, not the host package's __init__
    assert {i.date_time for i in zipfile.ZipFile(path1).infolist()} == {(1980, 1, 1, 0, 0, 0)}


def test_zipapp_runs_with_python(tmp_path):
    path, _ = agent_zipapp(tmp_path)
    proc = subprocess.run([sys.executable, str(path), "--version"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "edgebench agent" in proc.stdout


# -- URL parsing, argv and error mapping (no server needed) ---------------------------
def test_parse_ssh_url():
    assert parse_ssh_url("ssh://pi@raspberrypi.local:2222") == ("pi", "raspberrypi.local", 2222)
    assert parse_ssh_url("ssh://board") == (None, "board", None)
    assert parse_ssh_url("pi@10.0.0.5") == ("pi", "10.0.0.5", None)
    assert parse_ssh_url("ssh://pi@[fe80::1]:22") == ("pi", "fe80::1", 22)
    for bad in ("ssh://-oProxyCommand=evil", "ssh://pi@host;rm", "http://host",
                "ssh://pi:pw@host", "ssh://host:99999", "ssh://host/path", "ssh://"):
        with pytest.raises(UsageError):
            parse_ssh_url(bad)


def test_ssh_argv_is_safe():
    t = SshTransport("ssh://pi@pi5:2222", ssh_options=["-F", "/x/cfg"], connect_timeout_s=2.5,
                     remote_dir="~/my dir")
    argv = t.ssh_argv(["python3", "/a b/agent.pyz", "--cache-dir", "x;rm -rf /"])
    assert argv[0] == "ssh" and "-T" in argv
    joined = " ".join(argv)
    assert "BatchMode=yes" in joined and "ConnectTimeout=3" in joined
    assert "StrictHostKeyChecking" not in joined and "/dev/null" not in joined
    assert argv[-3:-1] == ["--", "pi5"]
    assert shlex.split(argv[-1]) == ["python3", "/a b/agent.pyz", "--cache-dir", "x;rm -rf /"]
    assert argv.index("BatchMode=yes") < argv.index("-F")  # ours first: first value wins
    assert argv.index("Port=2222") < argv.index("-F")  # the URL's port beats a config's
    assert t.remote_dir == "my dir"  # ~/ dropped: remote commands start in the home dir
    scp = t.scp_argv("/tmp/a.pyz", "my dir/a.pyz")
    assert scp[0] == "scp" and scp[-2:] == ["/tmp/a.pyz", "pi5:my dir/a.pyz"]
    assert "Port=2222" in scp and "User=pi" in scp
    assert t.describe() == "ssh pi@pi5:2222"


@pytest.mark.parametrize("stderr, words", [
    ("@@@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @@@\nHost key verification failed.",
     ["host key mismatch", "ssh-keygen -R", "never disable"]),
    ("No ED25519 host key is known for [h]:22 and you have requested strict checking.\n"
     "Host key verification failed.", ["unknown host key", "never disable"]),
    ("ssh: connect to host h port 22: Connection refused", ["unreachable", "refused"]),
    ("ssh: connect to host h port 22: Connection timed out", ["unreachable", "timed out"]),
    ("ssh: connect to host h port 22: No route to host", ["unreachable", "no route"]),
    ("ssh: Could not resolve hostname h: Name or service not known", ["unreachable", "resolve"]),
    ("pi@h: Permission denied (publickey).", ["authentication", "ssh-copy-id"]),
    ("Timeout, server h not responding.", ["lost the connection"]),
])
def test_classify_ssh_failure(stderr, words):
    err = classify_ssh_failure(stderr, "ssh pi@h", "h", "pi@h")
    assert isinstance(err, TransportError)
    line = err.one_line()
    for word in words:
        assert word.lower() in line.lower()
    assert classify_ssh_failure("something else entirely", "ssh h") is None


# -- against the real sshd --------------------------------------------------------------
def test_ssh_end_to_end_single_stream(sshd_server, board_dir):
    from edgebench.transport.client import AgentClient

    require_file(KWS)
    transport = _transport(sshd_server, board_dir)
    assert transport.describe() == f"ssh {sshd_server.user}@127.0.0.1:{sshd_server.port}"
    channel = transport.open()
    assert transport.last_open_copied is True
    client = AgentClient(channel, transport.describe(), timeout_s=60)
    try:
        agent_session(client, KWS, 4, seed=0)
        assert Path(board_dir, "agent").is_dir()  # the model cache sits under remote_dir
        header, timings = client.run("single-stream", count=20, max_time_s=30)
        assert header["n"] == 20 and len(timings["e2e_ns"]) == 20
        assert (timings["e2e_ns"] >= timings["invoke_ns"]).all()
        client.shutdown()
    finally:
        client.close()
    assert not channel.alive()


def test_agent_is_copied_once(sshd_server, board_dir):
    first = _transport(sshd_server, board_dir)
    first.open().close()
    assert first.last_open_copied is True and first.copies == 1
    agents = sorted(Path(board_dir).glob("agent-*.pyz*"))
    assert [p.name for p in agents] == [Path(first.agent_path).name]  # no temp leftovers
    mtime = agents[0].stat().st_mtime_ns
    second = _transport(sshd_server, board_dir)
    second.open().close()
    assert second.last_open_copied is False and second.copies == 0
    assert agents[0].stat().st_mtime_ns == mtime
    assert sorted(Path(board_dir).glob("agent-*.pyz*")) == agents


def test_host_key_mismatch(sshd_server, board_dir, tmp_path):
    from sshd_fixture import keygen

    other = keygen(tmp_path / "impostor_host_key")
    known = sshd_server.known_hosts_with(other, "known_hosts_wrong")
    opts = sshd_server.ssh_options(name="ssh_config_wrong_key", known_hosts=known)
    err = _open_error(_transport(sshd_server, board_dir, ssh_options=opts))
    assert isinstance(err, TransportError)
    assert "host key mismatch" in err.one_line()
    assert "never disable" in err.one_line()
    assert not Path(board_dir).exists()  # nothing ran on the impostor


def test_unknown_host_key(sshd_server, board_dir, tmp_path):
    empty = tmp_path / "known_hosts_empty"
    empty.write_text("")
    opts = sshd_server.ssh_options(name="ssh_config_unknown", known_hosts=empty)
    err = _open_error(_transport(sshd_server, board_dir, ssh_options=opts))
    assert isinstance(err, TransportError) and "unknown host key" in err.one_line()
    assert empty.read_text() == ""  # BatchMode: the key was not accepted behind our back


def test_unreachable(sshd_server, board_dir):
    port = _closed_port()
    err = _open_error(_transport(sshd_server, board_dir, url=f"ssh://127.0.0.1:{port}"))
    assert isinstance(err, TransportError)
    assert "unreachable" in err.one_line() and "refused" in err.one_line()


def test_no_usable_key(sshd_server, board_dir, tmp_path):
    from sshd_fixture import keygen

    keygen(tmp_path / "unknown_client_key")
    opts = sshd_server.ssh_options(name="ssh_config_bad_key",
                                   identity=tmp_path / "unknown_client_key")
    err = _open_error(_transport(sshd_server, board_dir, ssh_options=opts))
    assert isinstance(err, TransportError)
    assert "authentication" in err.one_line() and "ssh-copy-id" in err.one_line()


def test_python_missing_on_board(sshd_server, board_dir):
    t = _transport(sshd_server, board_dir, python="/nonexistent/python3")
    err = _open_error(t)
    assert isinstance(err, RuntimeMissingError)
    assert "Python 3.9+" in err.one_line()


def test_channel_diagnostics_explain_ssh_failure(sshd_server, board_dir):
    """If ssh dies after open() (link gone), the channel's diagnostics say why."""
    t = _transport(sshd_server, board_dir, url=f"ssh://127.0.0.1:{_closed_port()}")
    channel = SshChannel(t.ssh_argv(["true"]), t.describe(), t._key_host(), t._login())
    try:
        with pytest.raises(TransportError):
            channel.read_line(timeout_s=20)
        assert "unreachable" in channel.diagnostics()
    finally:
        channel.close()
    assert os.path.basename(channel.argv[0]) == "ssh"


def test_transport_from_url():
    from edgebench.transport.serial import SerialTransport
    from edgebench.transport.url import transport_from_url, transport_kind

    assert transport_kind("local") == "local"
    assert transport_kind("ssh://pi@pi5") == transport_kind("pi@pi5") == "ssh"
    for url in ("/dev/ttyUSB0", "serial:///dev/ttyACM0", "rfc2217://10.0.0.2:2217",
                "loop://", "COM3"):
        assert transport_kind(url) == "serial", url
    with pytest.raises(UsageError):
        transport_kind("ftp://x")
    ssh = transport_from_url("pi@pi5", python="/usr/bin/python3.11")
    assert isinstance(ssh, SshTransport) and ssh.python == "/usr/bin/python3.11"
    ser = transport_from_url("serial:///dev/ttyUSB0", baud=9600)
    assert isinstance(ser, SerialTransport) and ser.describe() == "serial /dev/ttyUSB0 at 9600 baud"


def test_numpy_missing_on_board(sshd_server, board_dir, tmp_path):
    bare = tmp_path / "python-without-site"  # this interpreter without site-packages
    bare.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -S "$@"\n')
    bare.chmod(0o755)
    err = _open_error(_transport(sshd_server, board_dir, python=str(bare)))
    assert isinstance(err, RuntimeMissingError)
    assert "numpy is missing" in err.one_line()
