"""A model too big for the board is refused before anything is built or uploaded (issue 32, item 4).

The model is SqueezeNet-sized: SqueezeNet 1.1 has 1.24 M parameters, so its INT8 weights alone
take about 1.2 MiB, more than the 1 MiB flash of the STM32F405 that qemu-f405 emulates and far
more than its 48 KiB upload buffer. It is one FULLY_CONNECTED layer with 2,400 x 512 int8
weights (the engine's blob counts bytes, not architecture). ``flash --model``, ``deploy``,
``verify`` and ``bench`` each say, in one line, what the model needs and what the board has,
and exit non-zero.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _squeezenet_sized() -> bytes:
    from test_inspect import _big_fc

    return _big_fc(depth=2400, units=512)


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    path = tmp_path_factory.mktemp("fit") / "squeezenet_sized.tflite"
    path.write_bytes(_squeezenet_sized())
    return path


def test_need_and_have_in_one_line(big):
    from edgebench.boards.registry import get_profile
    from edgebench.errors import ModelError
    from edgebench.mcu.fit import check_fit

    fit = check_fit(big, get_profile("qemu-f405"))
    assert fit.blob_bytes > 1 << 20 and not fit.ok
    with pytest.raises(ModelError) as exc:
        fit.raise_if_unfit()
    msg = exc.value.message
    blob_kib = f"{fit.blob_bytes / 1024:.1f} KiB flash (blob)"
    assert f"model needs {fit.arena_bytes / 1024:.1f} KiB RAM (arena) + {blob_kib}" in msg
    assert "board qemu-f405 has" in msg and "1024.0 KiB flash" in msg and "128.0 KiB RAM" in msg
    assert "48.0 KiB upload buffer" in msg and "nothing was built or uploaded" in msg
    assert "\n" not in msg


def test_emulated_boards_carry_memory_figures():
    from edgebench.boards.registry import get_profile

    for name, ram, flash in (("qemu-m4", 4 << 20, 4 << 20), ("qemu-m7", 4 << 20, 4 << 20),
                             ("qemu-f405", 128 << 10, 1 << 20), ("unicorn-l4r5zi", 640 << 10, 2 << 20)):
        ds = get_profile(name).datasheet
        assert (ds.ram_bytes, ds.flash_bytes) == (ram, flash), name


@pytest.mark.parametrize("argv", [
    ["flash", "--board", "qemu-f405", "--model", "{m}"],
    ["deploy", "{m}", "--board", "qemu-f405"],
    ["verify", "{m}", "--board", "qemu-f405"],
    ["bench", "{m}", "--board", "qemu-f405"],
], ids=["flash", "deploy", "verify", "bench"])
def test_commands_refuse_before_building(big, argv, tmp_path):
    args = [a.replace("{m}", str(big)) for a in argv]
    proc = subprocess.run([sys.executable, "-m", "edgebench", *args], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path, env={**os.environ, "COLUMNS": "300"})
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode != 0, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in proc.stderr, proc.stderr
    assert "does not fit qemu-f405" in lines[0] and "board qemu-f405 has" in lines[0]
    assert "KiB flash (blob)" in lines[0] and "nothing was built or uploaded" in lines[0]
    assert list(tmp_path.iterdir()) == []          # no image, no results, no log


def _wide_input(depth: int = 9000) -> bytes:
    """A 9,000-byte int8 input into 4 units: 36 kB of weights, a small arena; the input alone is
    larger than qemu-f405's 8 KiB input buffer (EB_INPUT_MAX_BYTES of its build)."""
    from test_inspect import _big_fc

    return _big_fc(depth=depth, units=4)


def test_input_larger_than_the_input_buffer_is_refused_with_need_and_have():
    """The Caffe2 zoo case: a model that fits the upload buffer, arena, flash and RAM but whose
    input the firmware's input buffer cannot hold (it would pass the old check and fail at eb-model)."""
    from edgebench.boards.registry import get_profile
    from edgebench.errors import ModelError
    from edgebench.mcu.fit import INPUT_BUFFER, check_fit

    f405 = get_profile("qemu-f405")
    fit = check_fit(_wide_input(), f405)
    assert fit.input_bytes == 9000 and not fit.ok
    assert [c.what for c in fit.checks if not c.fits] == [INPUT_BUFFER]     # everything else fits
    assert fit.to_dict()["input_bytes"] == 9000 and fit.to_dict()["placements"] == {"ram": False, "flash": False}
    with pytest.raises(ModelError) as exc:
        fit.raise_if_unfit()
    msg = exc.value.message
    assert "+ 8.8 KiB input; board qemu-f405 has" in msg and "8.0 KiB input buffer" in msg
    assert "input buffer: needs 9,000 bytes, the board has 8,192 [firmware build]" in msg
    assert "EB_INPUT_MAX_BYTES" in exc.value.hint and "\n" not in msg
    assert check_fit(_wide_input(), get_profile("qemu-m4")).ok                  # 64 KiB input buffer
    assert check_fit(_wide_input(8192), f405).ok                                # exactly the buffer


@pytest.mark.parametrize("argv", [
    ["flash", "--board", "qemu-f405", "--model", "{m}"],
    ["deploy", "{m}", "--board", "qemu-f405"],
], ids=["flash", "deploy"])
def test_commands_refuse_a_too_wide_input_before_building(argv, tmp_path):
    model = tmp_path / "wide_input.tflite"
    model.write_bytes(_wide_input())
    work = tmp_path / "cwd"
    work.mkdir()
    args = [a.replace("{m}", str(model)) for a in argv]
    proc = subprocess.run([sys.executable, "-m", "edgebench", *args], capture_output=True, text=True, timeout=300,
                          cwd=work, env={**os.environ, "COLUMNS": "300"})
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode != 0 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "does not fit qemu-f405" in lines[0] and "input buffer: needs 9,000 bytes" in lines[0]
    assert "nothing was built or uploaded" in lines[0]
    assert list(work.iterdir()) == []
