"""The host side of microcontroller boards, against the REAL posix firmware over a pty.

deploy, bench (per-inference samples from the device counter), verify (bit-exact on
digits and keyword spotting), accuracy through `edgebench accuracy`, MLPerf Tiny mode
with only the dialect, the host-side lines of bad input, flash, and `--json` parity.
"""
from __future__ import annotations

import dataclasses
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import DIGITS_FP32, DIGITS_INT8, MLPERF_DIR
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fw_util import run_main

from edgebench.boards.registry import get_profile
from edgebench.cli.app import app
from edgebench.errors import ModelError, ProfileError
from edgebench.modelfile import read_model
from edgebench.results import store

ROOT = Path(__file__).resolve().parents[1]
KWS = MLPERF_DIR / "kws_ref_model.tflite"
FAST = ["--min-samples", "50", "--min-time", "0.3", "--max-time", "2"]


@pytest.fixture(autouse=True)
def _firmware_build_dir(posix_firmware_bin, tmp_path_factory, monkeypatch):
    """Commands that build the posix firmware themselves reuse the session's build."""
    base = tmp_path_factory.getbasetemp() / "eb-fw-builds"
    link = base / "posix"
    if not link.exists():
        base.mkdir(exist_ok=True)
        link.symlink_to(Path(posix_firmware_bin).parent, target_is_directory=True)
    monkeypatch.setenv("EDGEBENCH_FIRMWARE_BUILD", str(base))


def one_error_line(err: str) -> str:
    """The error is one line (progress lines before it are fine), without a traceback."""
    lines = [ln for ln in err.splitlines() if ln.startswith("error")]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    assert err.rstrip().endswith(lines[0]), err
    return lines[0]


# ----------------------------------------------------------------------------- deploy

def test_deploy_json_and_text(fw, capsys):
    code, out, _ = run_main(capsys, "deploy", DIGITS_INT8, "--board", "posix-sim", "--url", fw, "--json")
    assert code == 0
    rep = json.loads(out)
    from edgebench.mcu.blob import convert

    blob = convert(DIGITS_INT8.read_bytes())
    assert rep["blob_bytes"] == len(blob.data) == rep["upload"]["bytes"]
    assert rep["upload"]["crc32"] == f"{blob.crc32:08x}" or rep["upload"]["crc32"] == f"{_crc(blob.data):08x}"
    assert rep["peak_arena_bytes"] == blob.peak_arena_bytes == rep["loaded"]["arena"]
    assert rep["loaded"]["in"] == 64 and rep["loaded"]["out"] == 10
    assert rep["upload"]["bytes_per_s"] > 0 and rep["device"]["port"] == "posix"
    code, out, _ = run_main(capsys, "deploy", DIGITS_INT8, "--board", "posix-sim", "--url", fw)
    assert code == 0
    assert f"CRC-32 {rep['upload']['crc32']} verified by the device" in " ".join(out.split())
    assert "peak arena 2,320 bytes" in out or f"peak arena {blob.peak_arena_bytes:,} bytes" in out


def _crc(data: bytes) -> int:
    import zlib

    return zlib.crc32(data) & 0xFFFFFFFF


def test_deploy_json_parity_with_the_library(fw, capsys):
    from edgebench.boards.connect import open_client

    code, out, _ = run_main(capsys, "deploy", KWS, "--board", "posix-sim", "--url", fw, "--json")
    assert code == 0
    printed = json.loads(out)
    with open_client(get_profile("posix-sim"), url=fw) as c:
        lib = c.deploy(read_model(KWS)).to_dict()
    volatile = {"elapsed_s", "bytes_per_s", "retransmits", "naks", "timeouts", "frames", "wire_bytes"}
    for rep in (printed, lib):
        for k in volatile:
            rep["upload"].pop(k, None)
    assert printed == lib


def test_ensure_model_skips_a_blob_the_device_holds(client):
    first = client.deploy(read_model(DIGITS_INT8))
    client._on_device = None                       # a new session would not know
    again = client.deploy(read_model(DIGITS_INT8), force=False)
    assert again.upload.get("skipped") and again.upload["crc32"] == first.upload["crc32"]


# ----------------------------------------------------------------------------- bench

def test_bench_starts_the_firmware_itself_and_times_on_the_device(tmp_path):
    res = CliRunner().invoke(app, ["bench", str(DIGITS_INT8), "--board", "posix-sim", "--runs-dir", str(tmp_path),
                                   "--json", *FAST])
    assert res.exit_code == 0, res.output
    printed = json.loads(res.stdout)
    (run_dir,) = store.find_runs(tmp_path)
    assert printed == store.read_result(run_dir).to_dict()
    r = store.read_result(run_dir)
    assert r.label == "measured" and r.runtime.name == "edgebench-firmware"
    assert r.board.kind == "mcu" and r.board.system.firmware["port"] == "posix"
    image = r.board.system.firmware_image   # the exact build that ran
    import hashlib

    assert image["image_sha256"] == hashlib.sha256(Path(image["image"]).read_bytes()).hexdigest()
    assert r.latency["e2e"].n >= 50
    s = store.read_samples(run_dir)
    assert (s["prep_s"] == 0).all() and (s["set_s"] == 0).all() and (s["get_s"] == 0).all()
    assert np.array_equal(s["invoke_s"].to_numpy(), s["e2e_s"].to_numpy())
    us = s["e2e_s"].to_numpy() * 1e6                   # the posix counter ticks in microseconds
    assert np.allclose(us, np.round(us), atol=1e-3) and (us >= 1).all()
    assert s["input_index"].nunique() > 1              # each input uploaded before its inferences
    link = r.extra.link                             # a clean link: checked, nothing retried
    assert link["checked"] is True and link["requests"] > 0 and link["discarded_lines"] == 0
    assert link["retries"] == 0 and not any(w.code.startswith(("link-", "unchecked")) for w in r.warnings)


def test_run_groups_inferences_per_uploaded_input(client):
    sha = client.ensure_model(read_model(KWS))
    loaded = client.load(sha)
    assert loaded["timing"]["excludes"].startswith("input quantization (done on the host")
    x = np.random.default_rng(0).uniform(-1, 1, (3, 49, 10, 1)).astype(np.float32)
    assert client.set_inputs(x) == 3
    header, a = client.run("single-stream", count=40, max_time_s=5.0, start_index=2)
    assert header["n"] == 40 == len(a["e2e_ns"])
    assert a["input_index"][0] == 2 and set(a["input_index"]) <= {0, 1, 2}
    assert (np.diff(a["t_start_ns"]) > 0).all()
    with pytest.raises(Exception, match="fixed-rate"):
        client.run("fixed-rate", count=5, max_time_s=1.0, rate_hz=10)


# ----------------------------------------------------------------------------- verify

@pytest.mark.parametrize("model", [DIGITS_INT8, KWS], ids=["digits_int8", "kws"])
def test_verify_bit_exact(fw, capsys, model, tmp_path):
    code, out, _ = run_main(capsys, "verify", model, "--board", "posix-sim", "--url", fw, "--count", "24",
                            "--json", "--runs-dir", tmp_path)
    assert code == 0
    r = json.loads(out)
    assert r["bit_exact"] is True and r["gate"] == {**r["gate"], "applies": True, "passed": True}
    (o,) = r["outputs"]
    assert o["differing_bytes"] == 0 and o["max_diff_lsb"] == 0 and o["samples"] == 24
    assert r["reference"]["op_resolver"] == "BUILTIN_REF" and r["device"]["runtime"]["name"] == "edgebench-firmware"
    assert r["device"]["link"]["checked"] is True and r["device"]["link"]["retries"] == 0
    # stored through the run skeleton: run.json (kind verify, complete) and one sample row per input
    run = store.read_result(r["run_dir"])
    assert run.kind == "verify" and run.status == "complete" and run.run_id == r["run_id"]
    assert run.extra.verify.gate.passed is True and run.model.sha256 == r["model"]["sha256"]
    rows = store.read_samples(r["run_dir"])
    assert len(rows) == 24 and rows["differing_bytes"].sum() == 0 and list(rows["input_index"]) == list(range(24))
    code, shown, _ = run_main(capsys, "runs", r["run_id"], "--runs-dir", tmp_path)
    assert code == 0 and "bit-exact" in shown and "24 inputs" in shown


def test_verify_json_parity_with_the_library(fw, capsys, tmp_path):
    from edgebench.bench.verify import VerifyOptions, run_verify

    code, out, _ = run_main(capsys, "verify", DIGITS_INT8, "--board", "posix-sim", "--url", fw, "--count", "8",
                            "--seed", "3", "--json", "--runs-dir", tmp_path)
    assert code == 0
    printed = json.loads(out)
    lib = run_verify(DIGITS_INT8, get_profile("posix-sim"), VerifyOptions(count=8, seed=3), url=fw,
                     runs_root=tmp_path).to_dict()
    assert printed["run_id"] != lib["run_id"] and len(store.find_runs(tmp_path)) == 2
    for d in (printed, lib):
        for key in ("created_utc", "run_id", "run_dir"):
            d.pop(key)
        d["device"].pop("link")          # the second session finds the model on the device: fewer requests
    assert printed == lib


def test_verify_exit_2_when_a_bit_exact_board_differs(fw, capsys, monkeypatch, tmp_path):
    from edgebench.mcu.board import McuClient

    real = McuClient.infer_all

    def off_by_one(self, x):
        out = real(self, x)
        out["y"] = out["y"].copy()
        out["y"].reshape(len(x), -1)[0, 3] += 1
        return out

    monkeypatch.setattr(McuClient, "infer_all", off_by_one)
    code, out, err = run_main(capsys, "verify", DIGITS_INT8, "--board", "posix-sim", "--url", fw, "--count", "4",
                              "--runs-dir", tmp_path)
    assert code == 2
    line = one_error_line(err)
    assert "promises bit-exact outputs but 1 output bytes differ" in line and "up to 1 LSB" in line
    assert "NOT bit-exact" in out
    (run_dir,) = store.find_runs(tmp_path)       # the failed verdict is kept, with the input that differed
    run = store.read_result(run_dir)
    assert run.status == "complete" and [w.code for w in run.warnings] == ["not-bit-exact"]
    rows = store.read_samples(run_dir)
    assert list(rows.loc[rows["differing_bytes"] > 0, "input_index"]) == [0]


def test_verify_on_a_linux_board_reports_without_a_gate(capsys, tmp_path):
    code, out, _ = run_main(capsys, "verify", DIGITS_INT8, "--board", "host", "--count", "8", "--json",
                            "--runs-dir", tmp_path)
    assert code == 0
    r = json.loads(out)
    assert r["gate"]["applies"] is False and "xnnpack" in r["gate"]["reason"]
    assert r["device"]["kernels"] == "xnnpack" and r["outputs"][0]["max_diff_lsb"] is not None


# ----------------------------------------------------------------------------- accuracy

def test_accuracy_through_the_same_command(fw, tmp_path, capsys):
    code, out, err = run_main(capsys, "accuracy", DIGITS_INT8, "--baseline", DIGITS_FP32, "--data", "digits",
                              "--board", "posix-sim", "--url", fw, "--runs-dir", tmp_path, "--json")
    assert code in (0, 2), err                      # 2: a compression threshold, not an error
    r = json.loads(out)
    assert r["kind"] == "accuracy" and r["runtime"]["name"] == "edgebench-firmware"
    assert r["extra"]["link"]["checked"] is True and r["extra"]["link"]["requests"] > 0
    # the firmware is bit-exact with the reference kernels: same top-1 as the host running them
    code, out_ref, err = run_main(capsys, "accuracy", DIGITS_INT8, "--baseline", DIGITS_FP32, "--data", "digits",
                                  "--kernels", "reference", "--runs-dir", tmp_path / "ref", "--json")
    assert code in (0, 2), err
    ref = json.loads(out_ref)
    top1 = lambda d: d["extra"]["accuracy"]["accuracy"]["candidate"]["top1"]["accuracy"]  # noqa: E731
    assert top1(r) == top1(ref)


# ----------------------------------------------------------------------------- MLPerf Tiny mode

DIALECT = ("name", "profile", "db", "infer", "results", "timestamp", "help")


def _record_commands(dut) -> list:
    sent: list = []
    send = dut.send

    def recording(text: str) -> None:
        sent.append(text.split()[0])
        send(text)

    dut.send = recording
    return sent


def test_mlperf_performance_with_only_the_dialect(client, tmp_path):
    from edgebench.bench.mlperf_mode import MlperfOptions, run_mlperf

    sha = client.ensure_model(read_model(KWS))
    client.load(sha)
    sent = _record_commands(client.dut)
    opts = MlperfOptions(window_s=0.3, deploy=False, input_count=5)
    result, run_dir = run_mlperf(KWS, get_profile("posix-sim"), opts, runs_root=tmp_path, client=client)
    assert set(sent) <= set(DIALECT) and "infer" in sent and "db" in sent
    m = result.extra.mlperf
    assert len(m["windows"]) == 5 and m["all_windows_long_enough"]
    assert all(w["elapsed_s"] >= 0.3 and w["n"] >= 1 for w in m["windows"])
    assert [w["input_index"] for w in m["windows"]] == [0, 1, 2, 3, 4]
    rates = sorted(w["per_s"] for w in m["windows"])
    assert result.throughput.per_s == pytest.approx(rates[2]) and rates[2] > 0
    assert result.kind == "mlperf-tiny" and result.label == "measured"
    assert any(w.code == "short-windows" for w in result.warnings)
    assert result.extra.link["checked"] is False           # plain dialect lines: no checksum
    assert any(w.code == "unchecked-link" for w in result.warnings)
    assert "Unchecked link" in result.extra.claim
    assert store.read_result(run_dir).to_dict() == result.to_dict()


def test_mlperf_run_goes_through_the_run_skeleton(client, tmp_path):
    """The folder appears `running` before the first window; a stop in the second window keeps the
    first, marked incomplete (the run skeleton's guard), with the link and the claim saying so."""
    from edgebench.bench.mlperf_mode import MlperfOptions, run_mlperf

    seen = {}

    def progress(ev):
        if ev["event"] == "window" and ev["window"] == 1:
            (folder,) = store.find_runs(tmp_path)
            seen["status"] = store.read_result(folder).status
        if ev["event"] == "window" and ev["window"] == 2:
            raise KeyboardInterrupt

    opts = MlperfOptions(window_s=0.2, deploy=True, input_count=5)
    with pytest.raises(KeyboardInterrupt):
        run_mlperf(DIGITS_INT8, get_profile("posix-sim"), opts, runs_root=tmp_path, client=client, progress=progress)
    (folder,) = store.find_runs(tmp_path)
    r = store.read_result(folder)
    assert seen["status"] == "running"
    assert r.kind == "mlperf-tiny" and r.status == "incomplete" and "Ctrl-C" in r.status_reason
    assert len(r.extra.mlperf["windows"]) == 1 and r.throughput.per_s > 0
    assert r.extra.claim.startswith("INCOMPLETE") and r.extra.link["checked"] is False


def test_mlperf_accuracy_scores_match_the_reference(client):
    from edgebench.agent.quant import make_quantizer
    from edgebench.boards.connect import open_client
    from edgebench.mcu.mlperf import encode

    sha = client.ensure_model(read_model(KWS))
    loaded = client.load(sha)
    x = np.random.default_rng(1).uniform(-3, 3, (6, 49, 10, 1)).astype(np.float32)
    q = make_quantizer(loaded["inputs"][0], [1, 49, 10, 1])
    data = [encode(q(x[i:i + 1]).copy(), "int8") for i in range(len(x))]
    sent = _record_commands(client.dut)
    scores = client.mlperf_scores(data)
    assert set(sent) <= set(DIALECT)
    with open_client(get_profile("host")) as ref:
        rsha = ref.ensure_model(read_model(KWS))
        ref.load(rsha, kernels="reference")
        _, y = ref.infer(x)
    assert scores.shape == (6, 12)
    assert np.abs(scores - y.reshape(6, -1)).max() <= 0.0005 + 1e-6     # m-results prints 3 decimals


def test_adapter_in_mlperf_dialect_sends_no_extension_commands(client):
    from edgebench.mcu.board import McuClient

    client.deploy(read_model(DIGITS_INT8))
    profile = dataclasses.replace(get_profile("posix-sim"), runtimes=("mlperf_tiny",))
    plain = McuClient(client.dut, profile)
    sent = _record_commands(client.dut)
    hello = plain.hello()
    assert hello["runtime"]["name"] == "mlperf-tiny-reference" and hello["dialect"] == "mlperf"
    sha = plain.ensure_model(read_model(DIGITS_INT8))
    plain.load(sha)
    x = np.random.default_rng(2).uniform(0, 1, (3, 8, 8, 1)).astype(np.float32)
    y_raw, y = plain.infer(x)
    assert y.shape == (3, 10) and y_raw.dtype == np.int8
    assert set(sent) <= set(DIALECT)
    with pytest.raises(Exception, match="without the edgebench extensions"):
        plain.set_inputs(x)


def test_an_emulator_that_keeps_no_time_times_nothing(client):
    """Under unicorn (``keeps_time`` False) no command that reads the device counter gives a figure:
    eb-infer through run and run_layers, and MLPerf Tiny's infer through mlperf_performance."""
    from edgebench.errors import UsageError
    from edgebench.mcu.board import McuClient

    class Untimed:
        keeps_time = False

        def describe(self):
            return "an untimed emulator"

    client.deploy(read_model(DIGITS_INT8))
    untimed = McuClient(client.dut, get_profile("posix-sim"), Untimed())   # not closed: the dut is client's
    sha = untimed.ensure_model(read_model(DIGITS_INT8))
    untimed.load(sha)
    untimed.set_inputs(np.zeros((1, 8, 8, 1), np.float32))
    assert untimed.hello()["timing"] == "emulated"
    for call in (lambda: untimed.run("single-stream", count=2, max_time_s=1),
                 lambda: untimed.run_layers(1),
                 lambda: untimed.mlperf_performance([bytes(64)], windows=1, window_s=0.1)):
        with pytest.raises(UsageError, match="keeps no time"):
            call()


# ----------------------------------------------------------------------------- bad input

def test_wrong_port_is_one_line(capsys):
    code, _, err = run_main(capsys, "deploy", DIGITS_INT8, "--board", "posix-sim", "--url", "/dev/ttyEB_NOPE")
    assert code == 1
    assert "serial port /dev/ttyEB_NOPE does not exist" in one_error_line(err)


@pytest.fixture
def silent_port():
    """A pseudo-terminal nothing answers on (a board that is off, or at another baud rate)."""
    master, slave = os.openpty()
    import tty

    tty.setraw(slave)
    yield master, os.ttyname(slave)
    os.close(slave)
    os.close(master)


def test_no_answer_hints_at_energy_mode(capsys, silent_port):
    _, path = silent_port
    code, _, err = run_main(capsys, "verify", DIGITS_INT8, "--board", "posix-sim", "--url", path, "--count", "1")
    assert code == 1
    line = one_error_line(err)
    assert "no answer from serial" in line
    assert "no answer at 115200 baud — is the firmware built for energy mode at 9600?" in line


def test_garbage_answer_hints_at_the_baud_rate(capsys, silent_port):
    master, path = silent_port
    stop = threading.Event()

    def noise():
        rng = random.Random(0)
        while not stop.is_set():
            os.write(master, bytes(rng.randrange(128, 256) for _ in range(16)))
            time.sleep(0.01)

    t = threading.Thread(target=noise, daemon=True)
    t.start()
    try:
        code, _, err = run_main(capsys, "deploy", DIGITS_INT8, "--board", "posix-sim", "--url", path)
    finally:
        stop.set()
        t.join()
    assert code == 1
    line = one_error_line(err)
    assert "garbled answer" in line and "baud rate other than 115200" in line


@pytest.fixture(scope="module")
def small_arena_firmware(tmp_path_factory):
    """The posix firmware with an 8 KiB arena: too small for the keyword-spotting model."""
    out = tmp_path_factory.mktemp("fw-small-arena")
    proc = subprocess.run(["make", f"-j{os.cpu_count() or 2}", "-C", str(ROOT / "firmware"), "PORT=posix",
                           f"BUILD={out}", "CFLAGS=-UEB_ARENA_BYTES -DEB_ARENA_BYTES=8192u"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out / "eb-firmware"


def test_model_needing_more_arena_than_the_board_has(small_arena_firmware, capsys):
    from edgebench.boards.connect import open_client
    from edgebench.mcu.firmware import FirmwareSession

    profile = get_profile("posix-sim")
    with FirmwareSession(profile, image=small_arena_firmware) as s:
        code, _, err = run_main(capsys, "deploy", KWS, "--board", "posix-sim", "--url", s.url)
        assert code == 1
        line = one_error_line(err)
        assert re.search(r"model kws_ref_model needs [\d,]+ bytes of arena RAM, board posix-sim has 8,192", line)
        # the device checks too (a host that skips the check gets the firmware's e-[eb-model-arena])
        from edgebench.mcu.blob import convert

        with open_client(profile, url=s.url) as c:
            c.dut.upload("model", convert(KWS.read_bytes()).data)
            with pytest.raises(ModelError, match="needs more arena RAM than the firmware has"):
                c.dut.load_model()


def test_a_blob_of_another_format_says_to_flash_this_edgebench_firmware(client):
    """A board whose firmware reads another blob format (an older edgebench's, before FULLY_CONNECTED's
    biased weights) refuses the blob; the error says to build and flash this edgebench's firmware."""
    import struct
    import zlib

    from edgebench.mcu.blob import convert

    blob = bytearray(convert(KWS.read_bytes()).data)
    struct.pack_into("<H", blob, 4, 1)                                   # format version 1
    struct.pack_into("<I", blob, 12, zlib.crc32(bytes(blob[16:])))
    client.dut.upload("model", bytes(blob))
    with pytest.raises(ModelError, match="reads another blob format than this edgebench writes") as exc:
        client.dut.load_model()
    assert "edgebench flash" in exc.value.hint


def test_float_model_is_refused_with_one_line(fw, capsys):
    code, _, err = run_main(capsys, "deploy", DIGITS_FP32, "--board", "posix-sim", "--url", fw)
    assert code == 1
    assert "INT8" in one_error_line(err)


def test_deploy_to_a_linux_board_is_a_usage_error(capsys):
    code, _, err = run_main(capsys, "deploy", DIGITS_INT8, "--board", "host")
    assert code == 1 and "is a Linux board" in one_error_line(err)


# ----------------------------------------------------------------------------- flash

def test_flash_keeps_an_emulated_board_running_until_ctrl_c(posix_firmware_bin, tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "edgebench", "flash", "--board", "posix-sim", "--image",
                             str(posix_firmware_bin)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        m = re.match(r"posix-sim: serial on (/dev/\S+)", line)
        assert m, line
        url = m.group(1)
        for _ in range(2):                     # two commands, one after the other, on the same firmware
            done = subprocess.run([sys.executable, "-m", "edgebench", "deploy", str(DIGITS_INT8), "--board", "posix-sim",
                                   "--url", url, "--json"], capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stderr
            assert json.loads(done.stdout)["loaded"]["layers"] == 6
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0 and "stopped" in err


def test_flash_a_real_board_without_its_tool_is_one_line(tmp_path, capsys, monkeypatch):
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))       # a laptop without openocd, even where CI installed it
    image = tmp_path / "fw.elf"
    image.write_bytes(b"\x7fELF")
    code, _, err = run_main(capsys, "flash", "--board", "nucleo-l4r5zi", "--image", image)
    assert code == 1
    line = one_error_line(err)
    assert "openocd (flasher openocd) is not installed: install it: sudo apt install openocd" in line
    assert "--flasher (openocd, pyocd, st-flash, mass-storage)" in line     # and what else would do


def test_flash_runs_the_flasher_argv_without_a_shell(tmp_path, capsys):
    """A profile whose flasher is this Python: the argv gets {image}, {url}, {name} filled in."""
    image = tmp_path / "fw bin with spaces.elf"
    image.write_bytes(b"fw")
    record = tmp_path / "argv.json"
    boards = tmp_path / "boards"
    boards.mkdir()
    (boards / "lab-board.yaml").write_text(
        "schema: 1\nname: lab-board\ntitle: lab board\nkind: mcu\n"
        "transport: {type: serial, url: /dev/ttyLAB0, baud: 115200}\n"
        "runtimes: [edgebench_firmware]\nkernels: [reference]\ndefault_threads: 1\n"
        f"flasher: {{tool: python, argv: [{json.dumps(sys.executable)}, -c, "
        f"'import json,sys; json.dump(sys.argv[1:], open({json.dumps(str(record))}, \"w\"))', "
        "'{image}', '{url}', '{name}']}\n")
    code, out, err = run_main(capsys, "flash", "--board", "lab-board", "--image", image, "--boards-dir", boards,
                              "--json")
    assert code == 0, err
    assert json.loads(record.read_text()) == [str(image), "/dev/ttyLAB0", "lab-board"]
    assert json.loads(out)["returncode"] == 0


# ----------------------------------------------------------------------------- profiles

def test_shipped_mcu_profiles():
    for name in ("posix-sim", "qemu-m4", "qemu-m7", "nucleo-l4r5zi", "nrf5340-dk", "esp32-s3", "pico"):
        p = get_profile(name)
        assert p.kind == "mcu" and p.transport.type == "serial" and p.transport.baud == 115200
        assert p.firmware is not None and p.firmware.bit_exact
        assert (p.firmware.emulator is None) == (p.flasher is not None)
    assert get_profile("qemu-m4").firmware.machine == "mps2-an386"


@pytest.mark.parametrize("firmware,message", [
    ({"port": "posix", "emulator": "bochs"}, "firmware.emulator: expected one of posix, qemu"),
    ({"emulator": "posix"}, "firmware.port: missing"),
    ({"port": "mps2-an386", "emulator": "qemu", "machine": "mps2-an386"}, "firmware.icount_shift: missing"),
    ({"port": "posix", "emulator": "posix", "icount_shift": 2}, "only allowed with emulator: qemu"),
    ({"port": "posix", "emulator": "posix", "machine": "mps2-an386"}, "only allowed with emulator: qemu or unicorn"),
    ({"port": "stm32f4", "emulator": "unicorn"}, "firmware.machine: missing required key for emulator unicorn "
                                                 "(the chip)"),
    ({"port": "posix", "bit_exact": "yes"}, "firmware.bit_exact: expected true or false"),
])
def test_firmware_section_validation(firmware, message):
    from edgebench.boards.profile import BoardProfile

    d = get_profile("posix-sim").to_dict()
    d.pop("origin")
    d["firmware"] = firmware
    d["transport"] = {"type": "serial", "url": "/dev/ttyACM0"}
    with pytest.raises(ProfileError, match=re.escape(message)):
        BoardProfile.from_dict(d)


def test_every_emulator_the_schema_accepts_has_its_traits_and_a_starter():
    from pydantic import TypeAdapter

    from edgebench.boards.profile import EMULATORS, FirmwareSpec
    from edgebench.mcu.firmware import FirmwareSession

    field = TypeAdapter(FirmwareSpec).json_schema()["properties"]["emulator"]
    assert {e for alt in field["anyOf"] for e in alt.get("enum", ())} == set(EMULATORS)
    for kind in EMULATORS.values():
        assert hasattr(FirmwareSession, f"_start_{kind.name}")
        assert kind.emulated == kind.timing.startswith("emulated") and (kind.keeps_time or kind.emulated)


def test_emulator_url_needs_an_emulator():
    from edgebench.boards.profile import BoardProfile

    d = get_profile("posix-sim").to_dict()
    d.pop("origin")
    d["firmware"] = {"port": "posix", "bit_exact": True}
    with pytest.raises(ProfileError, match="'emulator' needs firmware.emulator"):
        BoardProfile.from_dict(d)
    d = get_profile("host").to_dict()
    d.pop("origin")
    d["firmware"] = {"bit_exact": True}
    with pytest.raises(ProfileError, match="firmware: only allowed for kind mcu"):
        BoardProfile.from_dict(d)


# ----------------------------------------------------------------------------- QEMU Cortex-M4

def test_qemu_m4_verify_and_bench_are_emulated(tmp_path, capsys):
    """`--board qemu-m4` builds the M4 firmware, starts QEMU itself, and labels timings emulated."""
    from conftest import require_tool

    require_tool("arm-none-eabi-gcc")
    require_tool("qemu-system-arm")
    code, out, err = run_main(capsys, "verify", KWS, "--board", "qemu-m4", "--count", "4", "--json", "--runs-dir", tmp_path)
    assert code == 0, err
    r = json.loads(out)
    assert r["bit_exact"] and r["gate"]["passed"] and r["device"]["timing"] == "emulated"
    code, out, err = run_main(capsys, "bench", DIGITS_INT8, "--board", "qemu-m4", "--runs-dir", tmp_path, "--json",
                              "--min-samples", "30", "--min-time", "0.2", "--max-time", "2")
    assert code == 0, err
    b = json.loads(out)
    assert b["label"] == "emulated" and b["latency"]["e2e"]["label"] == "emulated"
    assert b["board"]["system"]["firmware"]["port"] == "mps2-an386"
    (bench_dir,) = [d for d in store.find_runs(tmp_path) if store.read_result(d).kind == "bench"]
    s = store.read_samples(bench_dir)
    s = s[s["phase"] == "measure"]
    assert len(s) >= 30
    spread = s.groupby("input_index")["e2e_s"].agg(lambda v: v.max() - v.min())
    assert (spread <= 2.5 / 25e6).all()     # -icount: the same input repeats to a tick of the 25 MHz counter


def _scripted_dut(script: list):
    """A DutClient whose device is a script of reply lines (``{seq}`` filled with each request's)."""
    from edgebench.mcu.frames import crc32
    from edgebench.mcu.protocol import DutClient

    dut = DutClient("loop://", timeout_s=60.0)
    pending: list = []

    def write(data: bytes) -> None:
        if data.endswith(b"%") and script:
            seq = int(data.rsplit(b"#", 1)[1].split(b":")[0])
            for k, text in enumerate(script.pop(0)):
                if text is None:                       # this line is lost on the way
                    continue
                body = f"{text} #{seq}.{k}"
                pending.append(f"{body}:{crc32(body.encode()):08x}")

    def read_line(deadline: float):
        if pending:
            return pending.pop(0)
        time.sleep(max(0.0, min(deadline - time.monotonic(), 5.0)))
        return None

    dut.link.write, dut.link.read_line = write, read_line
    return dut


def test_a_lost_m_ready_does_not_stall_eb_infer():
    """The reply's last content line is in: a lost m-ready costs a fraction of a second, not the
    60 s silence timeout."""
    dut = _scripted_dut([["m-eb-t-[123]", "m-eb-infer-done", None]])
    t0 = time.monotonic()
    assert dut.eb_infer(1, 0, timeout_s=60.0)["ticks"] == [123]
    assert time.monotonic() - t0 < 2.0
    assert dut.stats.retries == 0


def test_a_reply_with_a_lost_line_is_asked_for_again():
    """eb-info with one line lost (the index jumps): sent again, and the complete reply is used."""
    info = ["m-eb-engine-[2]", "m-eb-proto-[2]", "m-eb-port-[posix]", "m-eb-timing-[real]",
            "m-eb-counter-hz-[1000000]", "m-eb-arena-bytes-[1]", "m-eb-model-max-bytes-[1]",
            "m-eb-input-max-bytes-[1]", "m-eb-loaded-[none]", "m-ready"]
    lost = list(info)
    lost[3] = None
    dut = _scripted_dut([lost, info])
    assert dut.info()["timing"] == "real"
    assert dut.stats.retries == 1 and dut.stats.reasons == {"reply line 3 lost": 1}
