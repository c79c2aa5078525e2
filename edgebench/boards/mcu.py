"""Microcontroller boards (level 3): open the board client a profile describes.

The host side of microcontrollers lives in :mod:`edgebench.mcu` (level 2): the firmware
session, building and flashing (:mod:`edgebench.mcu.firmware`), the protocol client
(:mod:`edgebench.mcu.protocol`) and the board client (:mod:`edgebench.mcu.board`).
This module composes them for a board profile (:func:`open_mcu`) and keeps the names
other code imports from here.
"""
from __future__ import annotations

from edgebench.errors import TransportError
from edgebench.mcu.board import FIRMWARE_NAME, MLPERF_NAME, DeployReport, McuClient, mlperf_only  # noqa: F401
from edgebench.mcu.firmware import (INSTALL_HINTS, FirmwareSession, build_firmware, firmware_dir,  # noqa: F401
                                    firmware_image, flash_board, require_tool)
from edgebench.mcu.protocol import DutClient
from edgebench.mcu.serial_ports import resolve_url


def open_mcu(profile, url: str | None = None, timeout_s: float = 10.0, image=None) -> McuClient:
    """The adapter for ``profile``'s board; starts its emulator when the profile says ``url: emulator``."""
    from edgebench.boards.profile import EMULATOR_URL
    from edgebench.boards.registry import with_transport_url

    if url:
        profile = with_transport_url(profile, url)
    session = None
    address = profile.transport.url
    if address == EMULATOR_URL:
        session = FirmwareSession(profile, image=image)
        address = session.start()
    else:
        address = resolve_url(profile)          # transport.url auto: the port with the board's USB ids
    try:
        dut = DutClient(address, baud=profile.transport.baud or 115200, timeout_s=timeout_s)
    except BaseException:
        if session:
            session.stop()
        raise
    client = McuClient(dut, profile, session)
    try:
        client.hello()
    except BaseException as exc:
        client.close()
        if session and isinstance(exc, TransportError) and not session.alive():
            raise TransportError(f"{session.describe()} exited: {session.log_tail() or 'no output'}") from None
        raise
    return client


__all__ = ["McuClient", "FirmwareSession", "flash_board", "DeployReport", "open_mcu", "build_firmware", "firmware_dir",
           "firmware_image", "require_tool", "mlperf_only", "INSTALL_HINTS", "FIRMWARE_NAME", "MLPERF_NAME"]
