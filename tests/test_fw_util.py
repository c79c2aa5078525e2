"""tests/fw_util.py reads make's output: it must not depend on how the tests were started."""
from __future__ import annotations

import fw_util


def test_the_image_path_is_read_even_under_a_parent_make(posix_firmware_bin, monkeypatch):
    """Under `make test` the firmware build is a sub-make: MAKEFLAGS=w and MAKELEVEL=1 would make it print
    "make[1]: Entering directory ..." before the image path."""
    monkeypatch.setenv("MAKEFLAGS", "w")
    monkeypatch.setenv("MAKELEVEL", "1")
    monkeypatch.setattr(fw_util, "_built", {})
    image = fw_util.build_firmware("posix", posix_firmware_bin.parent)
    assert image == posix_firmware_bin and image.is_file()
