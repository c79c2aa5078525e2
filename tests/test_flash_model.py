"""A model linked into the firmware image (issue 19 item 3), on the posix build of the core.

``make -C firmware EB_MODEL_BLOB=`` (what ``edgebench flash --model`` runs) links the blob into
the image; the core loads it at start-up and reads it in place. Checked here on the posix port
(fast, no emulator): the device holds the model before any upload, the host does not send it
again, its outputs are bit-exact, and an upload into the RAM buffer still replaces it.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import DIGITS_INT8, require_tool

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.qemu


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    require_tool("make")
    require_tool("gcc")
    from edgebench.mcu.firmware import build_firmware

    return build_firmware("posix", out=tmp_path_factory.mktemp("fw-flash-model"), model=DIGITS_INT8)


def test_the_linked_model_is_loaded_at_start_up(image):
    from edgebench.boards.connect import open_client
    from edgebench.boards.registry import get_profile
    from edgebench.mcu import convert
    from edgebench.mcu.frames import crc32
    from edgebench.modelfile import read_model

    blob = convert(DIGITS_INT8)
    assert image.parent.name == f"model-{blob.crc32:08x}"
    with open_client(get_profile("posix-sim"), image=image) as client:
        info = client.info
        assert info["flash-model-bytes"] == len(blob.data)
        assert info["loaded"].startswith(f"crc32={crc32(blob.data):08x},bytes={len(blob.data)},")
        # infer works without a model upload (an input is all it needs), as on an MLPerf Tiny
        # reference firmware
        client.dut.upload("input", bytes(64))
        out = client.dut.eb_infer(2, 0, timeout_s=10)
        assert len(out["ticks"]) == 2
        report = client.deploy(read_model(DIGITS_INT8), force=False)
        assert report.upload["skipped"] is True


def test_linked_model_outputs_are_bit_exact_and_an_upload_replaces_it(image):
    from edgebench.bench.verify import VerifyOptions, run_verify
    from edgebench.boards.connect import open_client
    from edgebench.boards.registry import get_profile
    from edgebench.modelfile import read_model

    profile = get_profile("posix-sim")
    with open_client(profile, image=image) as client:
        v = run_verify(DIGITS_INT8, profile, VerifyOptions(count=4), client=client)
        assert v.bit_exact
        report = client.deploy(read_model(DIGITS_INT8), force=True)        # into the RAM buffer
        assert report.upload.get("skipped") is not True and report.upload["bytes"] > 0
        assert client.dut.info()["flash-model-bytes"] > 0              # still in the image
        y = client.infer_all(np.zeros((1, 8, 8, 1), np.float32))["y"]
        assert y.shape[0] == 1
