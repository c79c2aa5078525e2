"""The transport interface (level 2): how edgebench reaches an agent on a board.

A transport knows only how to start (or attach to) the on-device agent and hand
back a :class:`Channel`, a bidirectional byte stream. It knows nothing of the
agent protocol, which lives in ``edgebench.agent.protocol`` and is spoken by
``edgebench.transport.client.AgentClient`` over any channel.

Implementations: ``local`` (a child process on this computer), ``ssh`` (the
system OpenSSH client), ``serial`` (a pyserial URL to a serial console on which
the agent runs).
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class Channel(Protocol):
    """A byte stream to a running agent."""

    def write(self, data: bytes) -> None:
        """Send all of ``data`` or raise TransportError."""

    def read_exact(self, n: int, timeout_s: float) -> bytes:
        """Return exactly ``n`` bytes; raise TransportError on EOF or timeout."""

    def read_line(self, timeout_s: float, max_bytes: int = 1 << 20) -> bytes:
        """Return one line including its trailing ``\\n``; TransportError on EOF/timeout."""

    def alive(self) -> bool:
        """False once the far end is known to have gone (process exited, port closed)."""

    def diagnostics(self) -> str:
        """Best-effort text explaining a failure (exit status, stderr tail), or ''."""

    def close(self) -> None:
        """Release the link and stop the agent if this transport started it."""


@runtime_checkable
class Transport(Protocol):
    """Starts or attaches to the agent on one board."""

    kind: str  # "local" | "ssh" | "serial"

    def describe(self) -> str:
        """Human description used in messages, e.g. 'ssh pi@raspberrypi.local'."""

    def open(self) -> Channel:
        """Start/attach the agent and return a channel to it (raise TransportError)."""
