"""Compatibility name for the firmware protocol client, which lives in :mod:`edgebench.mcu`.

The MLPerf Tiny dialect is :mod:`edgebench.mcu.dialect`, the framed ``eb-`` extensions
:mod:`edgebench.mcu.protocol`, uploads :mod:`edgebench.mcu.upload`, the bytes on the
wire :mod:`edgebench.mcu.frames` and the serial line :mod:`edgebench.mcu.link`
(``firmware/PROTOCOL.md`` is the contract). Import from there in new code.
"""
from edgebench.mcu.dialect import (DB_CHUNK_BYTES, DEFAULT_BAUD, ENERGY_BAUD, InferReply, Reply,  # noqa: F401
                                   no_answer_hint)
from edgebench.mcu.frames import FRAME_MAGIC, FRAME_OVERHEAD, crc32, encode_frame  # noqa: F401
from edgebench.mcu.protocol import EB_PROTO, DutClient  # noqa: F401
from edgebench.mcu.upload import DEFAULT_WINDOW, UploadStats  # noqa: F401

__all__ = ["DutClient", "Reply", "UploadStats", "InferReply", "crc32", "encode_frame", "no_answer_hint",
           "DEFAULT_BAUD", "ENERGY_BAUD", "DEFAULT_WINDOW", "DB_CHUNK_BYTES", "FRAME_OVERHEAD", "FRAME_MAGIC",
           "EB_PROTO"]
