"""Microcontroller support on the host side (level 2).

:func:`convert` turns a full-INT8 .tflite model into the compact, versioned
model blob the firmware's INT8 engine executes (format: firmware/BLOB.md),
with its arena plan and footprint (``peak_arena_bytes``, ``flash_bytes``).
"""
from edgebench.mcu.blob import FORMAT_VERSION, Blob, convert, parse
from edgebench.mcu.ops import OP_NAMES, SUPPORTED_OPS

__all__ = ["Blob", "convert", "parse", "FORMAT_VERSION", "OP_NAMES", "SUPPORTED_OPS"]
