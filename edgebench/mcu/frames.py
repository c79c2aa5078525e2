"""Bytes of the firmware wire protocol (level 2): CRC-32, upload frames, framed requests and replies.

``firmware/PROTOCOL.md`` is the contract. Protocol 2 frames every ``eb-`` request and
reply line:

* request: ``<command> #<seq>:<crc32>%`` — ``seq`` 1..65535 (decimal), the CRC-32
  (8 hex digits) of ``<command> #<seq>``; the device does not run a request that
  fails it and answers ``e-[eb-request-damaged: ...]``.
* reply line: ``<text> #<seq>.<k>:<crc32>`` — the request's ``seq``, the line's index
  ``k`` within the reply (0, 1, ...), the CRC-32 of ``<text> #<seq>.<k>``. The last
  line is ``m-ready #<seq>.<k>``, so a reply is complete when lines 0..k all arrived intact.
* upload frames: ``EB 5A seq:u16le len:u16le payload crc:u32le``; the CRC-32 of
  seq, len and payload is seeded with the upload session id (the ``eb-upload``
  request's ``seq``; 0 for an unframed one), so a frame of another session never fits.
"""
from __future__ import annotations

import re
import struct
import zlib
from dataclasses import dataclass

FRAME_MAGIC = b"\xeb\x5a"
FRAME_OVERHEAD = 10            # magic 2 + seq 2 + len 2 + crc 4
ABORT_SEQ = 0xFFFF

_REPLY_RE = re.compile(r"^(.*) #(\d{1,5})\.(\d{1,10}):([0-9a-f]{8})$", re.S)


def crc32(data: bytes, seed: int = 0) -> int:
    """IEEE 802.3 CRC-32 (zlib's), as the firmware computes it; ``seed`` continues a CRC."""
    return zlib.crc32(data, seed) & 0xFFFFFFFF


def encode_frame(seq: int, payload: bytes, sid: int = 0) -> bytes:
    """One upload frame of session ``sid``: magic, seq u16 le, len u16 le, payload, CRC-32 (u32 le)."""
    head = struct.pack("<HH", seq & 0xFFFF, len(payload))
    return FRAME_MAGIC + head + payload + struct.pack("<I", crc32(head + payload, sid & 0xFFFF))


def abort_frame(sid: int = 0) -> bytes:
    """The frame that ends an upload (seq 0xFFFF, no payload); session 0 ends any upload."""
    return encode_frame(ABORT_SEQ, b"", sid)


def encode_request(text: str, seq: int) -> bytes:
    """``<text> #<seq>:<crc32>%``."""
    if not 1 <= seq <= 0xFFFF:
        raise ValueError(f"request sequence {seq} not in 1..65535")
    body = f"{text} #{seq}".encode("ascii")
    return body + f":{crc32(body):08x}%".encode("ascii")


@dataclass(frozen=True)
class ReplyLine:
    """One received line: ``framed`` with ``seq``/``index`` when it carries an intact frame
    suffix, ``damaged`` when it carries one that fails its CRC (or parses badly)."""

    text: str
    framed: bool = False
    damaged: bool = False
    seq: int = 0
    index: int = 0


def parse_reply_line(line: str) -> ReplyLine:
    """Split a received line into its text and frame suffix, checking the CRC."""
    m = _REPLY_RE.match(line)
    if m is None:
        return ReplyLine(line, damaged=" #" in line and ":" in line.rsplit(" #", 1)[-1])
    body = line[:m.start(4) - 1]
    if crc32(body.encode("latin-1")) != int(m.group(4), 16):
        return ReplyLine(line, damaged=True)
    return ReplyLine(m.group(1), framed=True, seq=int(m.group(2)), index=int(m.group(3)))


__all__ = ["FRAME_MAGIC", "FRAME_OVERHEAD", "ABORT_SEQ", "crc32", "encode_frame", "abort_frame",
           "encode_request", "ReplyLine", "parse_reply_line"]
