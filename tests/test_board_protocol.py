"""The board-client protocol: the three clients implement it, declare what they can do, and
do exactly that; callers refuse what a client does not declare; a model is hashed once.

The agent runs as a real local child process, the microcontroller is the REAL posix
firmware over a pseudo-terminal (the faithful stand-in for a serial board), the simulated
board is edgebench.sim.
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import DIGITS_INT8

sys.path.insert(0, str(Path(__file__).resolve().parent))

from edgebench import board_protocol as bp
from edgebench.bench.accuracy import AccuracyOptions, run_accuracy
from edgebench.bench.latency import BenchOptions, run_bench
from edgebench.bench.verify import VerifyOptions, run_verify
from edgebench.boards.connect import open_client, reached_locally
from edgebench.boards.profile import AGENT_CLIENT, MCU_CLIENT, SIM_CLIENT
from edgebench.boards.registry import get_profile
from edgebench.errors import EdgebenchError, UsageError
from edgebench.modelfile import read_model

BOARDS = {"agent": "host", "sim": "sim-pi5", "mcu": "posix-sim"}


@pytest.fixture(params=["agent", "sim", pytest.param("mcu", marks=pytest.mark.slow)])
def board(request):
    """``(name, client)`` for each kind of board client, opened through boards.connect."""
    profile = get_profile(BOARDS[request.param])
    image = request.getfixturevalue("posix_firmware_bin") if request.param == "mcu" else None
    client = open_client(profile, image=image)
    try:
        yield request.param, client
    finally:
        client.close()


def _x(loaded: dict, n: int = 3) -> np.ndarray:
    shape = [n] + list(loaded["inputs"][0]["shape"][1:])
    return np.random.default_rng(0).uniform(0, 1, shape).astype(np.float32)


def test_client_kind_is_decided_from_the_profile():
    kinds = [get_profile(BOARDS[k]).client_kind for k in ("agent", "sim", "mcu")]
    assert kinds == [AGENT_CLIENT, SIM_CLIENT, MCU_CLIENT]
    assert get_profile("qemu-m4").client_kind == MCU_CLIENT
    pi5 = get_profile("raspberry-pi-5")
    assert pi5.client_kind == AGENT_CLIENT and not reached_locally(pi5) and reached_locally(pi5, "local")
    assert reached_locally(get_profile("host")) and not reached_locally(get_profile("host"), "pi@10.0.0.2")


def test_each_client_implements_the_protocol(board):
    kind, client = board
    assert isinstance(client, bp.BoardClient)
    assert isinstance(client.capabilities, frozenset) and client.capabilities <= bp.ALL
    assert isinstance(client.description, str) and client.description
    assert client.hello()["runtime"]["name"]
    assert "system" in client.sysinfo()
    assert "available" in client.thermal()
    model = read_model(DIGITS_INT8)
    sha = client.ensure_model(model)
    assert sha == model.sha256 == hashlib.sha256(DIGITS_INT8.read_bytes()).hexdigest()
    assert client.ensure_model(model) == sha                  # the second time: already there
    loaded = client.load(sha)
    assert loaded["inputs"][0]["shape"][1:] == [t for t in model.inputs[0].shape[1:]]
    assert client.set_inputs(_x(loaded)) == 3
    assert client.status()["model_loaded"] is True
    header, arrays = client.run("single-stream", count=5, max_time_s=5.0)
    assert header["n"] == 5 and arrays["e2e_ns"].shape == (5,) and (arrays["e2e_ns"] > 0).all()


def test_declared_capabilities_are_what_the_client_does(board):
    """Each capability, declared or not, is tried: a declared one works, an undeclared one is refused."""
    kind, client = board
    caps = client.capabilities
    model = read_model(DIGITS_INT8)
    loaded = client.load(client.ensure_model(model))
    x = _x(loaded)
    client.set_inputs(x)

    def works(capability, attempt) -> None:
        if capability in caps:
            attempt()
        else:
            # refused with the client's error, or absent (no such method or status field): never a bug's TypeError
            with pytest.raises((EdgebenchError, AttributeError, KeyError)):
                attempt()

    def outputs():
        out = client.infer_all(x)
        assert out["y"].shape[0] == 3 and np.isfinite(out["y_float"]).all()

    def fixed_rate():
        header, a = client.run("fixed-rate", count=3, max_time_s=2.0, rate_hz=50.0)
        assert header["n"] >= 1

    def continuation():
        header, a = client.run("fixed-rate", count=2, max_time_s=2.0, rate_hz=50.0)
        due = int(a["scheduled_ns"][-1]) + 20_000_000
        header, b = client.run("fixed-rate", count=2, max_time_s=2.0, rate_hz=50.0, start_ns=due)
        assert int(b["scheduled_ns"][0]) == due

    def telemetry():
        header, arrays = client.request_arrays("telemetry", interval_s=0.5)
        assert isinstance(header["channels"], list) and "tm_t_ns" in arrays   # a container may have none

    def link_report():
        assert client.link_report()["requests"] > 0

    def layer_timing():
        got = client.run_layers(1, 0)
        assert len(got["ns"]) == 1 and got["layers"] and all(x["ns"] >= 0 for x in got["layers"])

    def tensors():
        client.load(client.ensure_model(model), preserve_all_tensors=True)
        got = client.tensors(x[:2], [0])
        assert got["t0"].shape[0] == 2

    def benchmark_model():    # the agent answers the op: here with the one clear error of a missing binary
        from edgebench.errors import RuntimeMissingError

        with pytest.raises(RuntimeMissingError, match="does not exist on this computer"):
            client.benchmark_model(client.ensure_model(model), binary="/nonexistent/benchmark_model")

    def mlperf():
        assert client.dut.infer(1, 0).results

    def energy_counter():
        assert client.status()["simulated_energy_j"] > 0

    def deploy():             # converts, uploads, CRC-checks and loads the model's blob
        report = client.deploy(model, force=True)
        assert report.blob_bytes > 0 and client.status()["model_loaded"] is True

    works(bp.OUTPUTS, outputs)
    works(bp.FIXED_RATE, fixed_rate)
    works(bp.SCHEDULE_CONTINUATION, continuation)
    works(bp.TELEMETRY, telemetry)
    works(bp.LINK_REPORT, link_report)
    works(bp.LAYER_TIMING, layer_timing)
    works(bp.MLPERF_MODE, mlperf)
    works(bp.ENERGY_COUNTER, energy_counter)
    works(bp.BENCHMARK_MODEL, benchmark_model)
    works(bp.DEPLOY, deploy)
    works(bp.TENSORS, tensors)      # last: it reloads the model
    expected = {"agent": {bp.OUTPUTS, bp.FIXED_RATE, bp.SCHEDULE_CONTINUATION, bp.TELEMETRY, bp.TENSORS,
                          bp.BENCHMARK_MODEL},
                "sim": {bp.FIXED_RATE, bp.SCHEDULE_CONTINUATION, bp.TELEMETRY, bp.ENERGY_COUNTER},
                "mcu": {bp.OUTPUTS, bp.LINK_REPORT, bp.LAYER_TIMING, bp.MLPERF_MODE, bp.DEPLOY}}[kind]
    assert caps == expected


def test_a_model_is_read_and_hashed_once_per_upload(board, monkeypatch):
    kind, client = board
    size = DIGITS_INT8.stat().st_size
    calls = []
    real = hashlib.sha256

    def counting(data=b"", *a, **k):
        if len(data) == size:
            calls.append(kind)
        return real(data, *a, **k)

    monkeypatch.setattr(hashlib, "sha256", counting)
    model = read_model(DIGITS_INT8)
    client.load(client.ensure_model(model))   # MCU: converted to a blob, uploaded, CRC-checked, loaded
    assert calls == [kind]                    # read_model's hash, none after it (in this process)


# -- callers ask the capabilities ---------------------------------------------------------
def test_verify_on_a_board_without_outputs_is_refused_in_one_line(tmp_path):
    profile = get_profile("sim-pi5")
    with open_client(profile) as sim:
        with pytest.raises(UsageError) as info:
            run_verify(DIGITS_INT8, profile, VerifyOptions(count=4), client=sim)
    text = info.value.one_line()
    assert "computing outputs" in text and "sim-pi5" in text and "\n" not in text


def test_accuracy_on_a_board_without_outputs_is_refused(tmp_path):
    profile = get_profile("sim-pi5")
    x = np.random.default_rng(0).uniform(0, 1, (20, 8, 8, 1)).astype(np.float32)
    np.savez(tmp_path / "d.npz", x=x, y=np.arange(20) % 10)
    fp32 = DIGITS_INT8.with_name("digits_fp32.tflite")
    with open_client(profile) as sim:
        with pytest.raises(UsageError, match="computing outputs"):
            run_accuracy(DIGITS_INT8, fp32, str(tmp_path / "d.npz"), profile, AccuracyOptions(), runs_root=tmp_path,
                         client=sim, baseline_client=sim)


@pytest.mark.slow
def test_fixed_rate_on_a_board_without_a_scheduler_is_refused(posix_firmware_bin, tmp_path):
    profile = get_profile("posix-sim")
    with open_client(profile, image=posix_firmware_bin) as mcu:
        with pytest.raises(UsageError) as info:
            run_bench(DIGITS_INT8, profile, BenchOptions(scenario="fixed-rate", rate_hz=10.0), runs_root=tmp_path,
                      client=mcu)
    assert "device-side request scheduler" in info.value.one_line() and "posix-sim" in info.value.one_line()


def test_require_names_an_unknown_capability():
    with pytest.raises(ValueError, match="unknown capability"):
        bp.require(object(), "teleportation", "anything")


class _AgentWithoutTelemetry:
    """A Channel to an agent of the same protocol whose hello lists no features (as before
    telemetry): answers hello and shutdown only."""

    def __init__(self):
        import io

        self.answers = io.BytesIO()

    def write(self, frame: bytes) -> None:
        import io

        from edgebench.agent import protocol

        src = io.BytesIO(frame)
        header, _ = protocol.read_message(src.readline, src.read)
        reply = {"id": header["id"], "ok": True}
        if header["op"] == "hello":
            reply.update(protocol=protocol.PROTOCOL_VERSION, runtime={"name": "fake", "version": "0"})
        pos = self.answers.tell()
        self.answers.seek(0, 2)
        self.answers.write(protocol.encode_message(reply))
        self.answers.seek(pos)

    def read_line(self, timeout_s, max_bytes):
        return self.answers.readline(max_bytes)

    def read_exact(self, n, timeout_s):
        return self.answers.read(n)

    def alive(self) -> bool:
        return True

    def diagnostics(self) -> str:
        return ""

    def close(self) -> None:
        pass


def test_an_agent_without_the_telemetry_feature_does_not_declare_it():
    from edgebench.telemetry import capture
    from edgebench.transport.client import AgentClient

    client = AgentClient(_AgentWithoutTelemetry(), "an older agent")
    assert client.capabilities == {bp.OUTPUTS, bp.FIXED_RATE}
    cap, frame = capture.describe(client, capture.TelemetrySpec())
    assert cap.mode in ("between-chunks", "none")     # thermal() snapshots, never the telemetry op
    client.close()
