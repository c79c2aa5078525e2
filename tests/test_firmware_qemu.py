"""The firmware on the MPS2 Cortex-M4F (AN386) and Cortex-M7 (AN500) ports under QEMU.

Builds both ports with gcc-arm-none-eabi (once per session, into a temporary
directory), runs them under ``qemu-system-arm -icount shift=0`` with UART0 on a
pseudo-terminal, and talks to them through pyserial: the MLPerf Tiny replies,
``eb-info``, bit-exactness of the three bundled INT8 models against LiteRT's
reference kernels (``BUILTIN_REF``, run in a child process) on seeded inputs, and
the repeatability of the emulated tick counts.

Skipped without arm-none-eabi-gcc / qemu-system-arm; a failure under CI=true.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import require_file, require_module, require_tool
from mlperf_models import FIRMWARE_MODELS

from edgebench.mcu.qemu import QemuBoard, QemuError, QemuMissingError

ROOT = Path(__file__).resolve().parents[1]
FIRMWARE = ROOT / "firmware"
SMOKE = FIRMWARE / "ports" / "mps2-common" / "smoke"
# Seeded random inputs per model, plus the two extreme constant inputs. Measured
# under QEMU -icount shift=0 on the M4 build: one ResNet-8 inference (12.5 M MACs,
# ~38 M emulated instructions) takes ~0.3 s of host time, KWS ~0.03 s.
N_RANDOM = {"digits": 6, "kws": 6, "resnet8": 4, "vww": 3, "ad": 6}
PORTS = ("mps2-an386", "mps2-an500")
ICOUNT_SHIFT = 0
INSNS_PER_TICK = 40  # 25 MHz counter tick = 40 ns = 40 instructions of 1 ns at shift 0

pytestmark = pytest.mark.slow


# --------------------------------------------------------------------------- builds

def _make(args: list, log: Path) -> None:
    proc = subprocess.run(["make", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)
    log.write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-25:])
        pytest.fail(f"make {' '.join(args)} failed (exit {proc.returncode}):\n{tail}", pytrace=False)


@pytest.fixture(scope="session")
def toolchain():
    require_tool("arm-none-eabi-gcc")
    require_tool("qemu-system-arm")
    require_tool("make")


@pytest.fixture(scope="session")
def builds(toolchain, tmp_path_factory) -> dict:
    """{port: {"firmware": elf, "smoke": elf}} built out of tree with the project's Makefiles."""
    out = tmp_path_factory.mktemp("fw-qemu")
    jobs = f"-j{min(4, os.cpu_count() or 1)}"
    result = {}
    for port in PORTS:
        fw_dir, smoke_dir = out / port, out / f"{port}-smoke"
        _make(["-C", str(FIRMWARE), jobs, f"PORT={port}", f"BUILD={fw_dir}"], out / f"{port}.log")
        _make(["-C", str(SMOKE), f"PORT={port}", f"BUILD={smoke_dir}"], out / f"{port}-smoke.log")
        result[port] = {"firmware": fw_dir / "eb-firmware.elf", "smoke": smoke_dir / "smoke.elf"}
        for elf in result[port].values():
            assert elf.is_file(), f"the build did not produce {elf}"
    return result


def _client(board: QemuBoard, timeout_s: float = 20.0):
    from edgebench.mcu.protocol import DutClient

    client = DutClient(board.pty_path, timeout_s=timeout_s, name=board.machine)
    client.sync()
    return client


@pytest.fixture(scope="module")
def boards(builds):
    """One running firmware per port (icount shift=0) and a DutClient on its pty."""
    running = {}
    try:
        for port in PORTS:
            board = QemuBoard(port, builds[port]["firmware"], icount_shift=ICOUNT_SHIFT)
            board.start()
            running[port] = (board, _client(board))
        yield running
    finally:
        for board, client in running.values():
            client.close()
            board.stop()


# ------------------------------------------------------------- the launcher itself

def test_launcher_missing_qemu_is_a_clear_error(tmp_path):
    elf = tmp_path / "fw.elf"
    elf.write_bytes(b"\x7fELF")
    board = QemuBoard("mps2-an386", elf, qemu="qemu-system-arm-not-installed")
    with pytest.raises(QemuMissingError) as info:
        board.start()
    assert "apt-get install qemu-system-arm" in info.value.one_line()


def test_launcher_missing_elf_is_a_clear_error(toolchain, tmp_path):
    board = QemuBoard("mps2-an386", tmp_path / "nothing.elf")
    with pytest.raises(QemuError) as info:
        board.start()
    assert "nothing.elf does not exist" in info.value.one_line()
    assert "make -C firmware" in info.value.one_line()


def test_launcher_argv_is_a_list_with_icount():
    board = QemuBoard("mps2-an500", "fw.elf", icount_shift=3, extra_args=["-d", "guest_errors"])
    argv = board.argv("/usr/bin/qemu-system-arm")
    assert argv[:3] == ["/usr/bin/qemu-system-arm", "-M", "mps2-an500"]
    assert argv[argv.index("-icount") + 1] == "shift=3"
    assert argv[argv.index("-serial") + 1] == "pty"
    assert argv[-2:] == ["-d", "guest_errors"]
    assert board.instructions_per_tick == 5.0 and board.timing_label == "emulated"
    with pytest.raises(QemuError):
        QemuBoard("mps2-an386", "fw.elf", extra_args="-d guest_errors")


def test_launcher_reports_qemu_dying_at_start(toolchain, tmp_path):
    elf = tmp_path / "fw.elf"
    elf.write_bytes(b"\x7fELF")
    board = QemuBoard("mps2-an999", elf)
    with pytest.raises(QemuError) as info:
        board.start()
    message = info.value.one_line()
    assert "exited with status" in message and "mps2-an999" in message  # QEMU's own words
    assert not board.running


# ------------------------------------------------------------ the port, without the core

@pytest.mark.parametrize("port", PORTS)
def test_smoke_program_uart_counter_fpu(builds, port):
    """The port layer alone: UART echo, eb_port_* answers, FPU enabled, and the
    counter's rate against a loop of exactly 2*N instructions."""
    import serial

    with QemuBoard(port, builds[port]["smoke"], icount_shift=ICOUNT_SHIFT) as board:
        with serial.Serial(board.pty_path, 115200, timeout=10) as tty:
            def ask(cmd: bytes) -> bytes:
                tty.write(cmd + b"%")
                return tty.read_until(b"m-ready\r\n")

            assert ask(b"name") == f"m-smoke-name-[{port}]\r\nm-ready\r\n".encode()
            assert ask(b"info") == b"m-smoke-info-[hz=25000000,bits=32,real=0,temp=no]\r\nm-ready\r\n"
            assert ask(b"fpu") == b"m-smoke-fpu-[475]\r\nm-ready\r\n"
            assert ask(b"hello world") == b"m-smoke-echo-[hello world]\r\nm-ready\r\n"
            got = {}
            for n in (200_000, 1_000_000):
                m = re.match(rb"m-smoke-cal-\[(\d+),(\d+)\]", ask(b"cal %d" % n))
                got[n] = int(m.group(2))
            # 2*N instructions of 1 ns each (shift 0) = 2*N/40 ticks of the 25 MHz counter.
            for n, ticks in got.items():
                assert abs(ticks - 2 * n / INSNS_PER_TICK) <= 1, (n, ticks)
            tty.write(b"exit%")
            assert board.wait(10) == 0  # semihosting SYS_EXIT ends QEMU


@pytest.mark.parametrize("port", PORTS)
def test_fault_is_reported_on_the_uart(builds, port):
    """A HardFault prints one e-[eb-fault ...] line instead of going silent."""
    import serial

    with QemuBoard(port, builds[port]["smoke"], icount_shift=ICOUNT_SHIFT) as board:
        with serial.Serial(board.pty_path, 115200, timeout=10) as tty:
            tty.write(b"fault%")
            line = tty.read_until(b"]\r\n").decode()
    # exception 3 = HardFault (escalated UsageFault: CFSR.UNDEFINSTR, HFSR.FORCED)
    assert re.search(r"e-\[eb-fault exc=00000003 pc=[0-9a-f]{8} .*cfsr=00010000 hfsr=40000000", line), line


# ------------------------------------------------------------------ the firmware

@pytest.mark.parametrize("port", PORTS)
def test_mlperf_tiny_replies(boards, port):
    """Byte for byte: name% -> m-name-dut-[<name>] then m-ready (CRLF lines)."""
    board, client = boards[port]
    client.link.drain()
    tty = client.link.port  # the pyserial port itself: check the raw bytes
    tty.timeout = 10
    tty.write(b"name%")
    raw = tty.read_until(b"m-ready\r\n")
    assert raw == f"m-name-dut-[{port}]\r\nm-ready\r\n".encode()
    prof = client.profile()
    assert prof["profile"].startswith("edgebench firmware")
    reply = client.command("no-such-command", ok_errors=True)
    assert reply.errors, "an unknown command must be answered e-[...] and m-ready"


@pytest.mark.parametrize("port", PORTS)
def test_eb_info(boards, port):
    _, client = boards[port]
    info = client.info()
    assert info["port"] == port
    assert info["timing"] == "emulated"
    assert info["counter-hz"] == 25_000_000
    assert info["counter-bits"] == 32
    assert (info["clock"], info["clock-ppm"], info["clock-fallback"]) == ("emulated", 0, "none")
    assert info["temp"] == "no"
    assert info["arena-bytes"] >= 64 * 1024
    assert client.temp_mc() is None


_REFERENCE_CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    job = json.load(open(sys.argv[1]))
    data = np.load(job["inputs"])
    out = {}
    for key, path in job["models"].items():
        it = Interpreter(model_path=path, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
        it.allocate_tensors()
        i, o = it.get_input_details()[0], it.get_output_details()[0]
        ys = []
        for x in data[key]:
            it.set_tensor(i["index"], x.reshape(i["shape"]).astype(np.int8))
            it.invoke()
            ys.append(it.get_tensor(o["index"]).reshape(-1).copy())
        out[key] = np.stack(ys)
    np.savez(job["outputs"], **out)
""")


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """Seeded inputs and LiteRT BUILTIN_REF outputs of every model (one child process)."""
    require_module("ai_edge_litert")
    from edgebench.mcu import convert

    for p in FIRMWARE_MODELS.values():
        require_file(p)
    work = tmp_path_factory.mktemp("reference")
    rng = np.random.default_rng(20240611)
    blobs, inputs = {}, {}
    for key, path in FIRMWARE_MODELS.items():
        blob = convert(path)
        size = blob.input["bytes"]
        xs = [rng.integers(-128, 128, size=size, dtype=np.int8) for _ in range(N_RANDOM[key])]
        xs += [np.full(size, -128, np.int8), np.full(size, 127, np.int8)]
        blobs[key], inputs[key] = blob, np.stack(xs)
    np.savez(work / "in.npz", **inputs)
    job = {"models": {k: str(p) for k, p in FIRMWARE_MODELS.items()},
           "inputs": str(work / "in.npz"), "outputs": str(work / "out.npz")}
    (work / "job.json").write_text(json.dumps(job))
    proc = subprocess.run([sys.executable, "-c", _REFERENCE_CHILD, str(work / "job.json")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    outputs = dict(np.load(work / "out.npz"))
    return {key: (blobs[key], inputs[key], outputs[key]) for key in FIRMWARE_MODELS}


@pytest.mark.parametrize("model", list(FIRMWARE_MODELS))
def test_bit_exact_on_cortex_m4(boards, reference, model):
    """Every output byte equal to LiteRT's reference kernels, on the M4 build."""
    _, client = boards["mps2-an386"]
    blob, xs, refs = reference[model]
    stats = client.upload("model", blob.data)
    assert stats.bytes == len(blob.data)
    loaded = client.load_model(model)
    assert loaded["in"] == blob.input["bytes"] and loaded["out"] == blob.output["bytes"]
    assert loaded["arena"] == blob.peak_arena_bytes
    mismatches = []
    for k, (x, ref) in enumerate(zip(xs, refs)):
        client.upload("input", x.tobytes())
        client.eb_infer(1, 0, timeout_s=60)
        got = np.frombuffer(client.output(), np.int8)
        if not np.array_equal(got, ref.astype(np.int8)):
            diff = np.abs(got.astype(int) - ref.astype(int))
            mismatches.append(f"input {k}: {int((diff > 0).sum())} bytes differ, max {int(diff.max())} LSB")
    assert not mismatches, f"{model} on mps2-an386 is not bit-exact: {mismatches}"


def test_mlperf_infer_on_cortex_m4(boards, reference):
    """The dialect's own path: db load + hex chunks, infer N W, m-results."""
    _, client = boards["mps2-an386"]
    blob, xs, refs = reference["digits"]
    client.upload("model", blob.data)
    client.load_model("digits")
    client.db_load(xs[0].tobytes())
    reply = client.infer(3, 1)
    assert len(reply.lap_us) == 2 and reply.elapsed_us > 0
    scale, zp = blob.output["scale"], blob.output["zero_point"]
    expected = [round(scale * (int(q) - zp), 3) for q in refs[0]]
    assert reply.results == pytest.approx(expected, abs=1e-3)


def test_ticks_repeat_under_icount(builds, reference):
    """Two QEMU runs of the same model and input: per-inference ticks equal to +-1."""
    blob, xs, _ = reference["kws"]
    runs = []
    for _ in range(2):
        with QemuBoard("mps2-an386", builds["mps2-an386"]["firmware"], icount_shift=ICOUNT_SHIFT) as board:
            client = _client(board)
            try:
                client.upload("model", blob.data)
                client.load_model()
                client.upload("input", xs[0].tobytes())
                runs.append(client.eb_infer(3, 1, layers=True))
            finally:
                client.close()
    ticks = [t for run in runs for t in run["ticks"]]
    assert max(ticks) - min(ticks) <= 1, ticks
    for a, b in zip(runs[0]["layers"], runs[1]["layers"]):
        assert a["op"] == b["op"] and abs(a["ticks"] - b["ticks"]) <= 1, (a, b)
    # And the figure is plausible: KWS is 2.66 M MACs, at least 1 instruction each.
    assert ticks[0] * INSNS_PER_TICK > blob.macs
