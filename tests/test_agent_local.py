"""The agent as a local child process, driven through AgentClient."""
from __future__ import annotations

import hashlib
import os
import stat
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import MLPERF_DIR, missing, require_file

from edgebench import errors
from edgebench.modelfile import read_model
from edgebench.transport.base import Channel, Transport
from edgebench.transport.client import AgentClient
from edgebench.transport.local import LocalTransport
from edgebench.transport.process import ProcessChannel

KWS = MLPERF_DIR / "kws_ref_model.tflite"


@pytest.fixture(autouse=True)
def _kws_present():
    require_file(KWS)


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    transport = LocalTransport(cache_dir=str(tmp_path_factory.mktemp("agent-cache")))
    client = AgentClient(transport.open(), transport.describe(), timeout_s=30)
    yield client
    client.close()


@pytest.fixture(scope="module")
def kws_sha(agent):
    return agent.ensure_model(read_model(KWS))


def pool(n=16, seed=0):
    return np.random.default_rng(seed).normal(0, 20, size=(n, 49, 10, 1)).astype(np.float32)


def test_transport_and_channel_satisfy_the_interfaces(tmp_path):
    transport = LocalTransport(cache_dir=str(tmp_path))
    assert isinstance(transport, Transport) and transport.kind == "local"
    assert transport.describe() == f"local agent (python {sys.version_info[0]}.{sys.version_info[1]} at {sys.executable})"
    channel = transport.open()
    try:
        assert isinstance(channel, Channel) and channel.alive()
    finally:
        channel.close()
    assert not channel.alive()


def test_hello(agent):
    info = agent.hello()
    assert info["protocol"] == 1
    assert info["runtime"]["name"] == "ai-edge-litert"
    assert info["pid"] != os.getpid()


def test_ensure_model_uploads_once(agent, kws_sha):
    assert agent.has_model(kws_sha)
    assert agent.ensure_model(read_model(KWS)) == kws_sha


@pytest.mark.parametrize("kernels,resolver", [("xnnpack", "AUTO"), ("builtin", "BUILTIN_WITHOUT_DEFAULT_DELEGATES"),
                                              ("reference", "BUILTIN_REF")])
def test_load_and_single_stream(agent, kws_sha, kernels, resolver):
    info = agent.load(kws_sha, kernels=kernels, threads=1)
    assert info["kernels"] == kernels and info["op_resolver"] == resolver and info["threads"] == 1
    assert info["inputs"][0]["shape"] == [1, 49, 10, 1] and info["inputs"][0]["dtype"] == "int8"
    assert info["outputs"][0]["quant"]["scale"] > 0
    assert agent.set_inputs(pool(16)) == 16
    header, a = agent.run("single-stream", 40, max_time_s=20, start_index=10)
    n = header["n"]
    assert n == 40 and header["clock"] == "perf_counter_ns" and header["batch"] == 1
    for key in ("t_start_ns", "prep_ns", "set_ns", "invoke_ns", "get_ns", "e2e_ns", "input_index"):
        assert a[key].dtype == np.int64 and a[key].shape == (n,), key
    assert np.all(np.diff(a["t_start_ns"]) > 0)
    for key in ("prep_ns", "set_ns", "get_ns"):
        assert np.all(a[key] >= 0)
    assert np.all(a["invoke_ns"] > 0)
    parts = a["prep_ns"] + a["set_ns"] + a["invoke_ns"] + a["get_ns"]
    assert np.all(a["e2e_ns"] >= parts) and np.all(a["e2e_ns"] <= parts * 1.05 + 10_000)
    assert np.all(np.diff(a["t_start_ns"]) >= a["e2e_ns"][:-1])  # back to back, never overlapping
    assert a["input_index"].tolist() == [(10 + k) % 16 for k in range(n)]


def test_fixed_rate_200_hz(agent, kws_sha):
    agent.load(kws_sha, kernels="xnnpack")
    agent.set_inputs(pool(8))
    header, a = agent.run("fixed-rate", 100, max_time_s=10, rate_hz=200)
    assert header["n"] == 100
    rate = (header["n"] - 1) / ((a["t_start_ns"][-1] - a["t_start_ns"][0]) * 1e-9)
    assert rate == pytest.approx(200, rel=0.02)
    assert np.diff(a["scheduled_ns"]).tolist() == [5_000_000] * 99
    lateness = a["t_start_ns"] - a["scheduled_ns"]
    assert np.all(lateness >= 0) and np.median(lateness) < 1_000_000


def test_offline_prepares_inputs_before_timing(agent, kws_sha):
    info = agent.load(kws_sha, kernels="builtin", batch=4)
    assert info["batch"] == 4 and info["batch_resizable"]
    agent.set_inputs(pool(6))
    header, a = agent.run("offline", 9, max_time_s=20)
    assert header["n"] == 9 and header["batch"] == 4
    assert np.all(a["prep_ns"] == 0)
    assert a["input_index"].tolist() == [(4 * k) % 6 for k in range(9)]


def test_max_time_bounds_a_run(agent, kws_sha):
    agent.load(kws_sha, kernels="reference")
    agent.set_inputs(pool(4))
    t0 = time.monotonic()
    header, _ = agent.run("single-stream", 1_000_000, max_time_s=0.3)
    assert 1 <= header["n"] < 1_000_000 and time.monotonic() - t0 < 5


def reference_outputs(x: np.ndarray) -> np.ndarray:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    it = Interpreter(model_path=str(KWS), experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    it.allocate_tensors()
    inp, out = it.get_input_details()[0], it.get_output_details()[0]
    scale, zp = inp["quantization"]
    ys = []
    for sample in x:
        q = np.clip(np.round(sample[None] / np.float32(scale)) + zp, -128, 127).astype(np.int8)
        it.set_tensor(inp["index"], q)
        it.invoke()
        ys.append(it.get_tensor(out["index"])[0])
    return np.stack(ys)


def test_infer_with_reference_kernels_is_bit_exact(agent, kws_sha):
    info = agent.load(kws_sha, kernels="reference")
    x = pool(10, seed=3)
    y, y_float = agent.infer(x)
    assert y.dtype == np.int8 and y.shape == (10, 12)
    np.testing.assert_array_equal(y, reference_outputs(x))
    q = info["outputs"][0]["quant"]
    np.testing.assert_allclose(y_float, (y.astype(np.float32) - q["zero_point"]) * q["scale"])


def test_sha_mismatch_is_rejected(agent):
    with pytest.raises(errors.TransportError, match="sha256"):
        agent.put_model("0" * 64, b"not the model")


def test_garbage_model_is_one_clear_model_error(agent):
    data = b"this is not a flatbuffer" * 40      # read_model would refuse it: put it there raw
    sha = hashlib.sha256(data).hexdigest()
    agent.put_model(sha, data)
    with pytest.raises(errors.ModelError) as info:
        agent.load(sha, name="garbage.tflite")
    text = info.value.one_line()
    assert "garbage.tflite" in text and "TFLite model" in text and "\n" not in text
    assert agent.hello()["protocol"] == 1  # the agent survives


def test_wrong_input_shape_is_a_data_error(agent, kws_sha):
    agent.load(kws_sha)
    with pytest.raises(errors.DataError, match=r"expected \[N, 49, 10, 1\]"):
        agent.set_inputs(np.zeros((3, 49, 10), np.float32))
    with pytest.raises(errors.DataError):
        agent.infer(np.zeros((2, 10, 49, 1), np.float32))


def test_unknown_kernels_and_modes_are_usage_errors(agent, kws_sha):
    with pytest.raises(errors.UsageError, match="kernel set 'fast'"):
        agent.load(kws_sha, kernels="fast")
    agent.load(kws_sha)
    agent.set_inputs(pool(2))
    with pytest.raises(errors.UsageError, match="run mode"):
        agent.run("burst", 10, 1)
    with pytest.raises(errors.UsageError, match="rate_hz"):
        agent.run("fixed-rate", 10, 1)


def test_status_reports_memory(agent):
    status = agent.status()
    assert 10 * 2**20 < status["rss_bytes"] < 2 * 2**30
    assert status["maxrss_bytes"] >= status["rss_bytes"] * 0.5


# -- crashes and silence: the client must never hang ------------------------------------
FAKE_AGENT = """\
import os, sys
from edgebench.agent import protocol
fd_in, fd_out = 0, 1
inp = os.fdopen(fd_in, "rb", buffering=0)
def read_line(m):
    return inp.readline(m)
def read_exact(n):
    return inp.read(n)
while True:
    header, payload = protocol.read_message(read_line, read_exact)
    if header["op"] == {crash_op!r}:
        sys.stderr.write("simulated crash in native code: {crash_op}\\n"); sys.stderr.flush()
        {crash}
    answer = {{"id": header["id"], "ok": True, "protocol": 1, "present": True}}
    os.write(fd_out, protocol.encode_message(answer))
"""


def fake_python(tmp_path: Path, crash_op: str, crash: str) -> str:
    script = tmp_path / "fake_agent.py"
    script.write_text(FAKE_AGENT.format(crash_op=crash_op, crash=crash))
    launcher = tmp_path / "python"
    launcher.write_text(f"#!/bin/sh\nexec {sys.executable} {script}\n")
    launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR)
    return str(launcher)


def test_agent_abort_is_reported_not_hung(tmp_path):
    transport = LocalTransport(python=fake_python(tmp_path, "load", "os.abort()"))
    client = AgentClient(transport.open(), "local agent", timeout_s=30)
    try:
        assert client.hello()["protocol"] == 1
        sha = hashlib.sha256(b"model bytes").hexdigest()
        client.put_model(sha, b"model bytes")
        t0 = time.monotonic()
        with pytest.raises(errors.AgentError) as info:
            client.load(sha, name="digits_int8.tflite")
        assert time.monotonic() - t0 < 5
        text = info.value.one_line()
        assert "died while loading model digits_int8.tflite" in text
        assert "signal 6 (SIGABRT)" in text and "simulated crash in native code" in text
        with pytest.raises(errors.AgentError, match="cannot be used"):
            client.status()
    finally:
        client.close()


def test_silent_agent_times_out(tmp_path):
    transport = LocalTransport(python=fake_python(tmp_path, "status", "import time; time.sleep(60)"))
    client = AgentClient(transport.open(), "local agent", timeout_s=0.5)
    t0 = time.monotonic()
    try:
        with pytest.raises(errors.AgentError, match="stopped answering while reporting its status.*timed out"):
            client.status()
    finally:
        client.close()
    assert time.monotonic() - t0 < 10
    assert not client.channel.alive()


def test_process_channel_basics():
    ch = ProcessChannel([sys.executable, "-c", textwrap.dedent("""
        import sys
        sys.stderr.write("hello on stderr\\n"); sys.stderr.flush()
        line = sys.stdin.buffer.readline()
        sys.stdout.buffer.write(b"noise\\n" + line + b"tail"); sys.stdout.flush()
        sys.exit(3)
    """)], "test child")
    try:
        ch.write(b"ping\n")
        assert ch.read_line(5) == b"noise\n"
        assert ch.read_line(5) == b"ping\n"
        assert ch.read_exact(4, 5) == b"tail"
        with pytest.raises(errors.TransportError, match="end of stream"):
            ch.read_exact(1, 5)
        assert ch.diagnostics() == "test child exited with status 3; stderr: hello on stderr"
        assert not ch.alive()
    finally:
        ch.close()


def test_process_channel_timeouts_and_missing_program():
    ch = ProcessChannel([sys.executable, "-c", "import time; time.sleep(30)"], "sleeper")
    try:
        t0 = time.monotonic()
        with pytest.raises(errors.TransportError, match="timed out after 0.2 s"):
            ch.read_line(0.2)
        assert time.monotonic() - t0 < 2
    finally:
        ch.close(grace_s=0.5)
    assert ch.returncode is not None
    with pytest.raises(errors.TransportError, match="cannot start"):
        ProcessChannel(["/nonexistent/python"], "nothing")


def test_native_writes_to_stdout_cannot_corrupt_the_stream(tmp_path):
    script = tmp_path / "noisy_agent.py"
    script.write_text(textwrap.dedent("""
        import os, sys
        from edgebench.agent import server
        original = server.Agent.op_hello
        def noisy_hello(self, payload):
            os.write(1, b"INFO: native code printing to fd 1\\n")  # what a C runtime does
            print("and Python printing to sys.stdout", flush=True)
            return original(self, payload)
        server.Agent.op_hello = noisy_hello
        sys.exit(server.main(sys.argv[1:]))
    """))
    launcher = tmp_path / "python"
    launcher.write_text(f'#!/bin/sh\nshift 2\nexec {sys.executable} {script} "$@"\n')  # drop "-m edgebench.agent"
    launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR)
    transport = LocalTransport(python=str(launcher), cache_dir=str(tmp_path / "cache"))
    with AgentClient(transport.open(), "noisy agent", timeout_s=30) as client:
        assert client.hello()["protocol"] == 1
        assert client.status()["rss_bytes"] > 0
        assert client.noise == []
        time.sleep(0.2)
        tail = client.channel.stderr_tail()
        assert "native code printing to fd 1" in tail and "Python printing" in tail


def test_missing_edgetpu_runtime_has_a_hint(agent, kws_sha):
    import ctypes.util

    if ctypes.util.find_library("edgetpu"):
        pytest.skip("libedgetpu is installed here")
    with pytest.raises(errors.RuntimeMissingError, match="Edge TPU") as info:
        agent.load(kws_sha, delegate="edgetpu")
    assert "libedgetpu1-std" in info.value.hint


def test_agent_under_another_python(tmp_path):
    # `make test` sets EDGEBENCH_TEST_AGENT_PYTHON to a Python 3.9 venv with numpy<2 and
    # tflite-runtime 2.14 (scripts/agent-py39.sh): the agent as an older board runs it.
    if not os.environ.get("EDGEBENCH_TEST_AGENT_PYTHON"):
        missing("EDGEBENCH_TEST_AGENT_PYTHON is not set (make test sets it to a Python 3.9 agent environment)")
    transport = LocalTransport(python=os.environ["EDGEBENCH_TEST_AGENT_PYTHON"], cache_dir=str(tmp_path))
    with AgentClient(transport.open(), transport.describe(), timeout_s=60) as client:
        hello = client.hello()
        assert hello["runtime"] is not None, hello["runtime_error"]
        sha = client.ensure_model(read_model(KWS))
        client.load(sha, kernels="reference")
        x = pool(4, seed=5)
        y, _ = client.infer(x)
        np.testing.assert_array_equal(y, reference_outputs(x))
        client.set_inputs(x)
        for mode in ("single-stream", "offline"):
            assert client.run(mode, 5, max_time_s=30)[0]["n"] == 5


def _gone(pid: int) -> bool:
    """True once ``pid`` no longer runs (gone, or a zombie nobody has reaped yet)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signal is Linux only")
def test_local_agent_dies_when_edgebench_is_killed(tmp_path):
    import signal
    import subprocess

    # an agent busy in a long operation: it does not read its stdin, so only the kernel's
    # parent-death signal can end it when edgebench is killed
    busy = fake_python(tmp_path, "status", "import time; time.sleep(300)")
    script = textwrap.dedent("""
        import sys, threading
        from edgebench.transport.client import AgentClient
        from edgebench.transport.local import LocalTransport
        t = LocalTransport(python=sys.argv[1])
        client = AgentClient(t.open(), "local agent", timeout_s=600)
        client.hello()                       # the agent is up and answering
        threading.Thread(target=client.status, daemon=True).start()   # ... and then busy
        print(client.channel.pid, flush=True)
        sys.stdin.read()                     # wait to be killed
    """)
    parent = subprocess.Popen([sys.executable, "-c", script, busy], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        agent_pid = int(parent.stdout.readline())
        assert not _gone(agent_pid)
        assert os.getpgid(agent_pid) == agent_pid      # its own process group: Ctrl-C reaches edgebench first
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=30)
        deadline = time.monotonic() + 30               # a bound on the kernel's work, not a timing assertion
        while not _gone(agent_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _gone(agent_pid), "the local agent outlived the edgebench process that started it"
    finally:
        if parent.poll() is None:
            parent.kill()


def test_closing_a_process_channel_ends_what_the_child_started(tmp_path):
    ch = ProcessChannel([sys.executable, "-c", textwrap.dedent("""
        import subprocess, sys, time
        g = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
        print(g.pid, flush=True)
        time.sleep(300)
    """)], "parent of a grandchild")
    grandchild = int(ch.read_line(30))
    assert not _gone(grandchild)
    ch.close(grace_s=1.0)
    deadline = time.monotonic() + 30
    while not _gone(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(grandchild)
