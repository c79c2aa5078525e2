"""Framing of the edgebench agent protocol (see docs/agent-protocol.md).

Shared by both ends: the agent (standard library + numpy, Python 3.9+) and the
host client (``edgebench.transport.client``). Every message is one header line
``EB1 <compact JSON>\\n`` followed by ``payload_bytes`` raw bytes.

This module does no I/O of its own: :func:`read_message` takes two callables,
so that each side can bring its own stream (a file descriptor on the agent, a
:class:`~edgebench.transport.base.Channel` with deadlines on the host).
"""
from __future__ import annotations

import io
import json
from typing import Callable, Dict, Optional, Tuple

import numpy as np

PROTOCOL_VERSION = 1
MAGIC = b"EB1 "
MAX_NOISE_BYTES = 64 * 1024  # non-protocol output tolerated before a message
MAX_HEADER_BYTES = 1 << 20
MAX_PAYLOAD_BYTES = 1 << 31
#: a run header's ``prep``: how the timed loop got each input (agent.loop.Runner)
PREP_PRECOMPUTED = "precomputed"      # picked from inputs quantized/cast before the timed loop
PREP_PER_INFERENCE = "per-inference"  # quantized in the prep stage (a pool too large to keep prepared)


class AgentFailure(Exception):
    """An error the agent reports as ``ok: false``; ``type`` names the host error class."""

    type = "AgentError"

    def __init__(self, message: str, hint: Optional[str] = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def to_dict(self) -> dict:
        return {"type": self.type, "message": self.message, "hint": self.hint}


class ModelFailure(AgentFailure):
    type = "ModelError"


class DataFailure(AgentFailure):
    type = "DataError"


class UsageFailure(AgentFailure):
    type = "UsageError"


class RuntimeMissing(AgentFailure):
    type = "RuntimeMissingError"


class TransferFailure(AgentFailure):
    type = "TransportError"


class ProtocolFailure(AgentFailure):
    """The byte stream does not follow the framing (too much noise, bad header)."""

    type = "AgentError"


class EndOfStream(Exception):
    """The stream ended cleanly before a message started."""


def encode_message(header: dict, payload: bytes = b"") -> bytes:
    """One frame: ``EB1 {json}\\n`` + payload; sets ``payload_bytes``."""
    head = dict(header)
    if payload:
        head["payload_bytes"] = len(payload)
    else:
        head.pop("payload_bytes", None)
    text = json.dumps(head, separators=(",", ":"), allow_nan=False, default=_json_default)
    return MAGIC + text.encode("utf-8") + b"\n" + bytes(payload)


def _json_default(obj):
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (bytes, bytearray)):
        return obj.decode("utf-8", "replace")
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def parse_header_line(line: bytes) -> Optional[dict]:
    """The header of a line holding ``EB1 {...}``; None for a noise line.

    The marker may follow other bytes on the same line (a console that printed
    something without a newline just before the agent answered).
    """
    idx = line.find(MAGIC + b"{")
    if idx < 0:
        return None
    body = line[idx + len(MAGIC):].strip()
    try:
        header = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProtocolFailure(f"malformed protocol header ({exc}): {body[:120]!r}") from exc
    if not isinstance(header, dict):
        raise ProtocolFailure(f"protocol header is not a JSON object: {body[:120]!r}")
    n = header.get("payload_bytes", 0)
    if not isinstance(n, int) or n < 0 or n > MAX_PAYLOAD_BYTES:
        raise ProtocolFailure(f"bad payload_bytes in header: {n!r}")
    return header


def read_message(
    read_line: Callable[[int], bytes],
    read_exact: Callable[[int], bytes],
    noise: Optional[list] = None,
) -> Tuple[dict, bytes]:
    """Read one frame, skipping at most MAX_NOISE_BYTES of non-protocol lines.

    ``read_line(max_bytes)`` returns a line including ``\\n`` (it may return the
    bytes before EOF without a newline, or ``b''`` at EOF); ``read_exact(n)``
    returns exactly n bytes or raises. Skipped lines are appended to ``noise``
    when given. Raises :class:`EndOfStream` on EOF before a header and
    :class:`ProtocolFailure` on too much noise or a malformed header.
    """
    skipped = 0
    while True:
        line = read_line(MAX_HEADER_BYTES)
        if not line:
            raise EndOfStream()
        header = parse_header_line(line)
        if header is not None:
            break
        skipped += len(line)
        if noise is not None:
            noise.append(line)
        if skipped > MAX_NOISE_BYTES:
            raise ProtocolFailure(
                f"more than {MAX_NOISE_BYTES // 1024} KiB of non-protocol output "
                f"(last line: {line[:120]!r})"
            )
    n = header.get("payload_bytes", 0)
    payload = read_exact(n) if n else b""
    return header, payload


def encode_arrays(arrays: Dict[str, np.ndarray]) -> bytes:
    """Uncompressed .npz bytes of named arrays."""
    buf = io.BytesIO()
    # the ignore's cause: numpy's stub checks **arrays against savez's allow_pickle: bool (no array is named so)
    np.savez(buf, **{k: np.asarray(v) for k, v in arrays.items()})  # type: ignore[arg-type]
    return buf.getvalue()


def decode_arrays(payload: bytes) -> Dict[str, np.ndarray]:
    """Named arrays from .npz bytes (never unpickles objects)."""
    if not payload:
        return {}
    try:
        with np.load(io.BytesIO(payload), allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}
    except (ValueError, OSError, EOFError, KeyError) as exc:
        raise DataFailure(f"payload is not a valid .npz archive: {exc}") from exc
    except Exception as exc:  # zipfile.BadZipFile and friends
        raise DataFailure(f"payload is not a valid .npz archive: {type(exc).__name__}: {exc}") from exc
