"""Buffered reads with deadlines, shared by the channels (process, serial).

A channel subclasses :class:`BufferedReads`, keeps received bytes in ``self._rbuf``
and implements ``_fill(deadline, timeout_s, what, want)``: append at least one byte
to the buffer before ``deadline`` or raise TransportError (``want`` is how many bytes
the caller still needs, a hint for the read size), and ``close()``, which ``with``
calls on leaving the block.
"""
from __future__ import annotations

import time
from typing import TypeVar

from edgebench.errors import TransportError

_C = TypeVar("_C", bound="BufferedReads")


class BufferedReads:
    description: str
    _rbuf: bytearray

    def _fill(self, deadline: float, timeout_s: float, what: str, want: int) -> None:  # pragma: no cover
        raise NotImplementedError

    def close(self) -> None:  # pragma: no cover
        raise NotImplementedError

    def __enter__(self: _C) -> _C:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def read_exact(self, n: int, timeout_s: float) -> bytes:
        deadline = time.monotonic() + timeout_s
        while len(self._rbuf) < n:
            self._fill(deadline, timeout_s, f"{n} bytes", n - len(self._rbuf))
        out = bytes(self._rbuf[:n])
        del self._rbuf[:n]
        return out

    def read_line(self, timeout_s: float, max_bytes: int = 1 << 20) -> bytes:
        deadline = time.monotonic() + timeout_s
        start = 0
        while True:
            idx = self._rbuf.find(b"\n", start)
            if idx >= 0:
                if idx + 1 > max_bytes:
                    break
                out = bytes(self._rbuf[: idx + 1])
                del self._rbuf[: idx + 1]
                return out
            if len(self._rbuf) > max_bytes:
                break
            start = len(self._rbuf)
            self._fill(deadline, timeout_s, "a line", 1)
        raise TransportError(f"{self.description} sent a line longer than {max_bytes} bytes")
