"""Flashing a real board from a laptop and finding its serial port (issue 19, items 4, 5, 7).

The flash back-ends run for real against the installed tools (Debian's openocd and stlink-tools,
pip's pyocd) with no probe attached: each must end in one clear line naming what to plug in, never
hang or print a traceback. The ST-LINK drive and the USB serial ports are faked at their real
interfaces (a mounted directory and its /proc/mounts-style listing; pyserial's ListPortInfo).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require_module, require_tool

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args, timeout=300):
    env = {**os.environ, "COLUMNS": "200",
           "EDGEBENCH_FIRMWARE_BUILD": os.environ.get("EDGEBENCH_FIRMWARE_BUILD", "/tmp/edgebench-test-fw")}
    return subprocess.run([sys.executable, "-m", "edgebench", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=ROOT)


def _fake_image(tmp_path) -> Path:
    elf = tmp_path / "eb-firmware.elf"
    elf.write_bytes(b"\x7fELF" + bytes(60))
    elf.with_suffix(".bin").write_bytes(bytes(64))
    return elf


@pytest.mark.slow
@pytest.mark.parametrize("flasher, tool", [("openocd", "openocd"), ("st-flash", "st-flash"), ("pyocd", None)])
def test_flash_without_a_probe_is_one_line(tmp_path, flasher, tool):
    """The real tool, no probe: exit 1, one line saying to plug the board in (never a hang: the timeout)."""
    if tool:
        require_tool(tool)
    else:
        require_module("pyocd")
    proc = _cli("flash", "--board", "nucleo-l4r5zi", "--image", str(_fake_image(tmp_path)), "--flasher", flasher,
                timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()          # a progress line, then the error
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1 and errors[0] == lines[-1] and "Traceback" not in proc.stderr, proc.stderr
    assert lines[-1].startswith(f"error: {flasher} found no ST-LINK probe or board to flash nucleo-l4r5zi")
    assert "plug the board in" in lines[-1]


@pytest.mark.slow
def test_default_flasher_of_the_profile_builds_and_runs_openocd():
    """docs/mlperf-tiny.md's first command: builds the port's image, runs OpenOCD, says what is missing."""
    require_tool("openocd")
    require_tool("arm-none-eabi-gcc")
    proc = _cli("flash", "--board", "nucleo-l4r5zi")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("error: openocd found no ST-LINK probe")


def test_flash_a_board_without_a_port_says_so():
    proc = _cli("flash", "--board", "pico")
    assert proc.returncode == 1
    assert proc.stderr.strip() == ("error: board pico has no firmware port in this edgebench: flash a prebuilt "
                                   "image: edgebench flash --board pico --image FILE")


def test_unknown_flasher_and_missing_target(tmp_path):
    proc = _cli("flash", "--board", "nucleo-f446re", "--image", str(_fake_image(tmp_path)), "--flasher", "jlink")
    assert proc.returncode == 1 and "unknown flasher 'jlink'" in proc.stderr and "openocd, pyocd" in proc.stderr
    from edgebench.boards.registry import get_profile
    from edgebench.errors import UsageError
    from edgebench.mcu.flashers import FLASHERS, target_of

    with pytest.raises(UsageError, match="does not name its pyocd target"):
        target_of(get_profile("nrf5340-dk"), FLASHERS["pyocd"])


def test_mass_storage_copies_and_waits_for_the_remount(tmp_path):
    """The ST-LINK drive: the .bin lands on it; the drive goes away and comes back; FAIL.TXT fails."""
    from edgebench.boards.registry import get_profile
    from edgebench.errors import TransportError
    from edgebench.mcu.flashers import FLASHERS, flash_with

    drive = tmp_path / "NODE_L4R5ZI"
    drive.mkdir()
    state = {"polls": 0}

    def mounts():      # present, then gone while the ST-LINK programs, then back
        state["polls"] += 1
        return [] if 2 <= state["polls"] <= 4 else [("NODE_L4R5ZI", str(drive)), ("boot", "/boot")]

    elf = _fake_image(tmp_path)
    done = flash_with(FLASHERS["mass-storage"], get_profile("nucleo-l4r5zi"), elf, mounts=mounts, settle_s=10)
    assert done["drive"] == str(drive) and (drive / "eb-firmware.bin").read_bytes() == bytes(64)
    assert state["polls"] >= 5
    (drive / "FAIL.TXT").write_text("The interface firmware FAILED to reset/halt the target MCU\n")
    state["polls"] = 0
    with pytest.raises(TransportError, match="did not program NODE_L4R5ZI: The interface firmware FAILED"):
        flash_with(FLASHERS["mass-storage"], get_profile("nucleo-l4r5zi"), elf, mounts=mounts, settle_s=10)
    with pytest.raises(TransportError, match="no drive NODE_L4R5ZI is mounted"):
        flash_with(FLASHERS["mass-storage"], get_profile("nucleo-l4r5zi"), elf, mounts=lambda: [], settle_s=1)


# ----------------------------------------------------------------------------- finding the board

def _port(device, vid, pid, description="STM32 STLink"):
    from serial.tools.list_ports_common import ListPortInfo

    info = ListPortInfo(device, skip_link_detection=True)
    info.vid, info.pid, info.description, info.serial_number = vid, pid, description, "0671FF3833"
    return info


def test_find_port_by_usb_ids():
    from edgebench.boards.registry import get_profile
    from edgebench.errors import TransportError
    from edgebench.mcu.serial_ports import connected, find_port, resolve_url

    nucleo = get_profile("nucleo-l4r5zi")
    stlink = _port("/dev/ttyACM0", 0x0483, 0x374B)
    ftdi = _port("/dev/ttyUSB0", 0x0403, 0x6001, "FT232R USB UART")
    assert find_port(nucleo, lambda: [ftdi, stlink]) == "/dev/ttyACM0"
    assert resolve_url(nucleo, "/dev/ttyACM7", lambda: []) == "/dev/ttyACM7"     # --url wins
    with pytest.raises(TransportError) as exc:
        find_port(nucleo, lambda: [ftdi])
    assert "no serial port of board nucleo-l4r5zi is plugged in" in exc.value.message
    assert "/dev/ttyUSB0 (0403:6001 FT232R USB UART)" in exc.value.message and "--url" in exc.value.hint
    with pytest.raises(TransportError) as exc:
        find_port(nucleo, lambda: [stlink, _port("/dev/ttyACM1", 0x0483, 0x374E)])
    assert "2 serial ports could be board nucleo-l4r5zi's" in exc.value.message
    assert "/dev/ttyACM0" in exc.value.message and "/dev/ttyACM1" in exc.value.message
    from edgebench.boards.registry import list_profiles

    seen = connected(list_profiles(), lambda: [stlink, ftdi])
    assert seen[0]["device"] == "/dev/ttyACM0" and seen[0]["profiles"] == ["nucleo-f411re", "nucleo-f446re",
                                                                          "nucleo-l4r5zi"]
    assert seen[1]["profiles"] == []


def test_boards_connected_cli_lists_ports(monkeypatch):
    import serial.tools.list_ports as lp
    from typer.testing import CliRunner

    import edgebench.cli.output as output
    from edgebench.cli.app import app

    monkeypatch.setattr(output, "_consoles", {})
    monkeypatch.setattr(lp, "comports", lambda: [_port("/dev/ttyACM0", 0x0483, 0x374B)])
    result = CliRunner().invoke(app, ["boards", "--connected"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "/dev/ttyACM0  0483:374b  STM32 STLink  ->  nucleo-f411re, nucleo-f446re, nucleo-l4r5zi" in result.stdout


def test_profile_usb_and_targets_are_validated(tmp_path):
    from edgebench.boards.profile import AUTO_URL, BoardProfile
    from edgebench.boards.registry import get_profile
    from edgebench.errors import ProfileError
    from edgebench.mcu.serial_ports import AUTO

    assert AUTO_URL == AUTO
    data = get_profile("nucleo-f446re").to_dict()
    assert data["transport"]["usb"][0] == "0483:374b" and data["flasher"]["targets"]["st-flash"] == "0x08000000"
    assert BoardProfile.from_dict(data).transport.usb == tuple(data["transport"]["usb"])
    bad = {**data, "transport": {**data["transport"], "usb": ["483:374b"]}}
    with pytest.raises(ProfileError, match=r"transport.usb\[0\]: expected a USB id vid:pid"):
        BoardProfile.from_dict(bad)
    bad = {**data, "transport": {"type": "serial", "url": "auto"}}
    with pytest.raises(ProfileError, match="transport.usb: missing"):
        BoardProfile.from_dict(bad)


def test_shipped_flasher_targets_name_known_backends():
    """flasher.targets is not checked at load (boards/ must not import edgebench.mcu): check the
    shipped profiles here, so a typo in a back-end's name cannot ship."""
    from edgebench.boards.registry import list_profiles
    from edgebench.mcu.flashers import FLASHERS

    with_targets = [p for p in list_profiles() if p.flasher and p.flasher.targets]
    assert {p.name for p in with_targets} >= {"nucleo-l4r5zi", "nucleo-f446re", "nucleo-f411re"}
    for p in with_targets:
        assert set(dict(p.flasher.targets)) <= set(FLASHERS), p.name
        assert p.flasher.tool in FLASHERS


@pytest.mark.slow
def test_flash_model_too_big_for_the_chip_is_refused_before_building(tmp_path):
    """--model runs the fit check for the flash placement first: a 673 KiB blob on a 512 KiB chip."""
    from test_inspect import _big_fc

    model = tmp_path / "big_fc.tflite"
    model.write_bytes(_big_fc())
    proc = _cli("flash", "--board", "nucleo-f446re", "--model", str(model))
    assert proc.returncode == 1
    line = proc.stderr.strip().splitlines()[-1]
    assert "does not fit nucleo-f446re with its blob in flash" in line
    assert "flash: needs 689,432 bytes, the board has 524,288" in line and "building" not in proc.stderr
