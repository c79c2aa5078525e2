"""The STM32 ports (issue 19): built for every board, run without hardware.

* ``stm32f4`` in its netduinoplus2 configuration under ``qemu-system-arm -M netduinoplus2``
  (board ``qemu-f405``) through the normal host path: deploy, bit-exact verify, bench (emulated
  instructions per MAC against qemu-m4's, the same engine), accuracy, MLPerf Tiny mode, selftest,
  and ResNet-8 linked into flash (its blob is larger than the port's RAM buffer);
* the NUCLEO-F411RE image under QEMU: its PLL never locks there (QEMU has no RCC), the bounded
  waits end and the port runs on, reporting the clock it really has;
* the NUCLEO-L4R5ZI image — the very binary a user flashes — on the unicorn CPU emulator with
  SVD-built register models (``unicorn-l4r5zi``): eb-info, eb-infer, bit-exact verify, and the
  issue's 667 KiB model linked into flash.

Skipped without arm-none-eabi-gcc / qemu-system-arm / unicorn; a failure under CI=true.
"""
from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import DIGITS_FP32, DIGITS_INT8, MLPERF_DIR, require_file, require_module, require_tool

ROOT = Path(__file__).resolve().parents[1]
STM32_PORTS = ("netduinoplus2", "nucleo-f446re", "nucleo-f411re", "nucleo-l4r5zi")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def fw_build(tmp_path_factory):
    """EDGEBENCH_FIRMWARE_BUILD for this module: every build lands in one temporary directory."""
    require_tool("arm-none-eabi-gcc")
    old = os.environ.get("EDGEBENCH_FIRMWARE_BUILD")
    os.environ["EDGEBENCH_FIRMWARE_BUILD"] = str(tmp_path_factory.mktemp("stm32-fw"))
    yield Path(os.environ["EDGEBENCH_FIRMWARE_BUILD"])
    if old is None:
        os.environ.pop("EDGEBENCH_FIRMWARE_BUILD", None)
    else:
        os.environ["EDGEBENCH_FIRMWARE_BUILD"] = old


def _cli(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "edgebench", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "COLUMNS": "200"}, cwd=ROOT)


def _sizes(elf: Path) -> dict:
    out = subprocess.run(["arm-none-eabi-size", "-A", str(elf)], capture_output=True, text=True, check=True).stdout
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\.\w+)\s+(\d+)", out, re.M)}


# ----------------------------------------------------------------------------- builds

@pytest.mark.parametrize("port", STM32_PORTS)
def test_every_stm32_port_builds_and_fits(fw_build, port):
    from edgebench.boards.registry import get_profile
    from edgebench.mcu.firmware import build_firmware

    elf = build_firmware(port)
    assert elf.with_suffix(".bin").is_file()
    s = _sizes(elf)
    ram = {"netduinoplus2": 128, "nucleo-f446re": 128, "nucleo-f411re": 128, "nucleo-l4r5zi": 640}[port] * 1024
    assert s[".bss"] + s.get(".data", 0) <= ram
    assert s[".isr_vector"] >= 4 * (16 + 82)           # the STM32's external interrupts have entries
    boards = [p for p in ("qemu-f405", "nucleo-f446re", "nucleo-f411re", "nucleo-l4r5zi", "unicorn-l4r5zi")
              if get_profile(p).firmware.port == port]
    assert boards, f"no board profile uses port {port}"


def test_a_blob_that_overflows_flash_is_one_line(fw_build, tmp_path):
    """EB_MODEL_BLOB too large for the chip: the linker's overflow becomes one clear error."""
    from edgebench.errors import UsageError
    from edgebench.mcu import firmware

    big = tmp_path / "model-00000000"
    big.mkdir()
    (big / "model.ebm").write_bytes(bytes(1100 * 1024))
    # _stage_blob is bypassed: the blob is written where build_firmware would put it
    orig = firmware._stage_blob
    firmware._stage_blob = lambda model, out: (big, big / "model.ebm")
    try:
        with pytest.raises(UsageError) as exc:
            firmware.build_firmware("netduinoplus2", out=tmp_path, model="ignored.tflite")
    finally:
        firmware._stage_blob = orig
    assert "does not fit the board's FLASH: over by" in exc.value.message
    assert "with the model's blob linked in" in exc.value.message


# ----------------------------------------------------------------------------- qemu-f405

def _board(name: str):
    """The board client of an emulated profile, started for the module and stopped after it."""
    from edgebench.boards.connect import open_client
    from edgebench.boards.registry import get_profile

    c = open_client(get_profile(name), timeout_s=30.0)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture(scope="module")
def f405(fw_build):
    require_tool("qemu-system-arm")
    yield from _board("qemu-f405")


@pytest.mark.qemu
def test_qemu_f405_is_the_stm32f4_port_emulated(f405):
    info = f405.info
    assert info["port"] == "netduinoplus2" and info["timing"] == "emulated"
    assert info["counter-hz"] == 25_000_000 and info["temp"] == "no"
    assert info["model-max-bytes"] == 49152 and info["flash-model-bytes"] == 0
    assert f405.hello()["timing"] == "emulated"


@pytest.mark.qemu
def test_qemu_f405_verify_and_bench_match_qemu_m4(f405, tmp_path):
    """KWS: bit-exact, and the same emulated instructions per inference as qemu-m4 (the same engine)."""
    from edgebench.bench.verify import VerifyOptions, run_verify
    from edgebench.boards.registry import get_profile

    kws = require_file(MLPERF_DIR / "kws_ref_model.tflite")
    v = run_verify(kws, get_profile("qemu-f405"), VerifyOptions(count=3), client=f405)
    assert v.bit_exact and v.gate["passed"] is True
    proc = _cli("bench", str(kws), "--board", "qemu-f405", "--max-time", "20", "--repeat", "2",
                "--runs-dir", str(tmp_path / "runs"), "--json")
    assert proc.returncode == 0, proc.stderr
    rate = json.loads(proc.stdout)["extra"]["mac_rate"]
    assert rate["label"] == "emulated" and rate["unit"] == "instructions"
    m4 = _cli("bench", str(kws), "--board", "qemu-m4", "--max-time", "20", "--repeat", "2",
              "--runs-dir", str(tmp_path / "runs"), "--json")
    assert m4.returncode == 0, m4.stderr
    m4_rate = json.loads(m4.stdout)["extra"]["mac_rate"]
    assert abs(rate["per_inference"] / m4_rate["per_inference"] - 1) < 0.01


@pytest.mark.qemu
def test_qemu_f405_accuracy_and_mlperf_mode(f405, tmp_path):
    from edgebench.bench.mlperf_mode import MlperfOptions, run_mlperf
    from edgebench.boards.registry import get_profile

    result, folder = run_mlperf(DIGITS_INT8, get_profile("qemu-f405"), MlperfOptions(windows=2, window_s=1.0),
                                runs_root=tmp_path / "runs", client=f405)
    assert result.status == "complete" and result.label == "emulated"
    assert result.throughput.per_s > 0 and result.throughput.label == "emulated"
    proc = _cli("accuracy", str(DIGITS_INT8), "--baseline", str(DIGITS_FP32),
                "--data", "digits:test", "--board", "qemu-f405", "--runs-dir", str(tmp_path / "runs"), "--json")
    assert proc.returncode == 0, proc.stderr
    acc = json.loads(proc.stdout)["extra"]["accuracy"]
    assert acc["label"] == "emulated"
    cand = acc["accuracy"]["candidate"]["top1"]
    assert cand["n"] == 540 and cand["accuracy"] > 0.9


@pytest.mark.qemu
def test_resnet8_runs_from_flash_on_qemu_f405(fw_build, tmp_path):
    """ResNet-8's 84 KiB blob exceeds the F4 port's 48 KiB RAM buffer: deploy refuses (and says how),
    an image with the blob linked into flash runs it bit-exactly without an upload."""
    from edgebench.bench.verify import VerifyOptions, run_verify
    from edgebench.boards.connect import open_client
    from edgebench.boards.registry import get_profile

    resnet = require_file(MLPERF_DIR / "pretrainedResnet_quant.tflite")
    proc = _cli("deploy", str(resnet), "--board", "qemu-f405")
    assert proc.returncode == 1 and "with its blob in ram" in proc.stderr
    assert "edgebench flash --board qemu-f405 --model" in proc.stderr
    built = _cli("flash", "--board", "qemu-f405", "--model", str(resnet), "--build-only")
    assert built.returncode == 0, built.stderr
    image = Path(built.stdout.strip())
    assert image.parent.name.startswith("model-") and _sizes(image)[".text"] > 84_000
    profile = get_profile("qemu-f405")
    with open_client(profile, image=image) as client:
        assert client.info["flash-model-bytes"] == 84192
        assert client.info["loaded"].startswith("crc32=") and ",bytes=84192," in client.info["loaded"]
        v = run_verify(resnet, profile, VerifyOptions(count=2), client=client)
        assert v.bit_exact
        assert client.link_report()["requests"] > 0
        deployed = next(iter(client._deployed.values()))
        assert deployed.upload.get("skipped") is True         # the blob was already in flash


@pytest.mark.qemu
def test_selftest_on_qemu_f405(fw_build, tmp_path):
    proc = _cli("selftest", "--board", "qemu-f405", "--runs-dir", str(tmp_path / "runs"), "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    status = {c["name"]: c["status"] for c in out["checks"]}
    assert status["protocol"] == "pass" and status["bit-exact digits_int8"] == "pass"
    assert status["clock"] == "skip" and status["instructions per MAC"] == "pass"    # emulated: no verdict
    assert status["clock source"] == "skip" and out["firmware"]["clock"] == "emulated"
    clock = out["clock"]
    assert clock["host_s"] >= 10.0 and clock["interval"][0] <= clock["rate_error"] <= clock["interval"][1]
    run = json.loads((Path(out["run_dir"]) / "run.json").read_text())
    assert run["kind"] == "selftest" and run["label"] == "emulated" and run["status"] == "complete"
    assert (Path(out["run_dir"]) / "samples.parquet").is_file()


@pytest.mark.qemu
def test_nucleo_image_under_qemu_survives_a_pll_that_never_locks(fw_build):
    """QEMU models no RCC: the NUCLEO-F411RE image's bounded waits end, it stays on the 16 MHz HSI and
    says so in eb-info (counter-hz), instead of hanging or claiming 100 MHz."""
    require_tool("qemu-system-arm")
    from edgebench.mcu.firmware import build_firmware
    from edgebench.mcu.qemu import QemuBoard

    elf = build_firmware("nucleo-f411re")
    with QemuBoard("netduinoplus2", elf, icount_shift=0) as board:
        fd = os.open(board.pty_path, os.O_RDWR | os.O_NOCTTY)
        try:
            import tty

            tty.setraw(fd)
            got = _exchange(fd, b"", b"m-ready", 30)
            assert b"m-init-done" in got
            info = _exchange(fd, b"eb-info%", b"m-eb-loaded-", 60)    # this image polls: QEMU reads slowly
        finally:
            os.close(fd)
    assert b"m-eb-port-[nucleo-f411re]" in info and b"m-eb-counter-hz-[16000000]" in info
    # neither the ST-LINK's MCO (HSE bypass) nor the PLL starts: the fallback is reported, never silent
    assert b"m-eb-clock-[hsi]" in info and b"m-eb-clock-ppm-[10000]" in info
    assert b"m-eb-clock-fallback-[hse-bypass,pll]" in info


def _exchange(fd, send: bytes, until: bytes, timeout_s: float) -> bytes:
    for b in send:                         # one byte at a time: the polling image reads them one by one
        os.write(fd, bytes([b]))
        time.sleep(0.01)
    buf, end = b"", time.monotonic() + timeout_s
    while until not in buf and time.monotonic() < end:
        if select.select([fd], [], [], 0.2)[0]:
            buf += os.read(fd, 4096)
    return buf


# ----------------------------------------------------------------------------- unicorn-l4r5zi

@pytest.fixture(scope="module")
def l4r5(fw_build):
    require_module("unicorn")
    require_module("pyocd")
    yield from _board("unicorn-l4r5zi")


def test_l4r5_image_boots_on_unicorn(l4r5):
    info = l4r5.info
    assert info["port"] == "nucleo-l4r5zi" and info["timing"] == "real"        # what the image says...
    assert l4r5.hello()["timing"] == "emulated"                                 # ...and what edgebench records
    assert info["counter-hz"] == 120_000_000     # the clock bring-up saw the ready bits the model sets
    assert info["model-max-bytes"] == 327680 and info["arena-bytes"] == 245760
    # the register model's ADC and sensor (edgebench/mcu/l4r5_model.py): enabled as ST's HAL does
    assert info["temp"] == "yes" and info["clock"] == "msi-lse" and info["clock-fallback"] == "none"
    clock = l4r5.sysinfo()["system"]["board"]["clock"]          # what run.json's board block stores
    assert clock == {"source": "msi-lse", "ppm": 2500, "fallback": None, "virtual": False}


def test_l4r5_image_is_bit_exact_on_unicorn_and_keeps_no_time(l4r5):
    from edgebench.bench.verify import VerifyOptions, run_verify
    from edgebench.boards.registry import get_profile
    from edgebench.errors import UsageError

    for model in (DIGITS_INT8, require_file(MLPERF_DIR / "kws_ref_model.tflite")):
        v = run_verify(model, get_profile("unicorn-l4r5zi"), VerifyOptions(count=3), client=l4r5)
        assert v.bit_exact, model
    out = l4r5.dut.eb_infer(4, 1, timeout_s=60)          # eb-infer runs; its ticks are not reported anywhere
    assert len(out["ticks"]) == 4
    l4r5.set_inputs(np.zeros((1, 49, 10, 1), np.float32))
    with pytest.raises(UsageError, match="keeps no time, so no latency comes from it"):
        l4r5.run("single-stream", count=4, max_time_s=5)


def test_the_667_kib_model_runs_from_flash_on_the_l4r5_image(fw_build, tmp_path):
    """The issue's case on the NUCLEO-L4R5ZI image: a 667 KiB model linked into flash, loaded at
    start-up, bit-exact against the reference kernels; in RAM it would not fit (fit check)."""
    require_module("unicorn")
    from test_inspect import _big_fc

    from edgebench.bench.verify import VerifyOptions, run_verify
    from edgebench.boards.connect import open_client
    from edgebench.boards.registry import get_profile
    from edgebench.mcu.firmware import build_firmware

    model = tmp_path / "big_fc.tflite"
    model.write_bytes(_big_fc())
    image = build_firmware("nucleo-l4r5zi", model=model)
    assert _sizes(image)[".text"] > 667 * 1024
    profile = get_profile("unicorn-l4r5zi")
    with open_client(profile, image=image) as client:
        assert client.info["flash-model-bytes"] > 667 * 1024
        v = run_verify(model, profile, VerifyOptions(count=2), client=client)
        assert v.bit_exact
