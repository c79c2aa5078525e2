"""Signals that stop edgebench the way Ctrl-C does (level 5).

:func:`install` (called once by :func:`edgebench.cli.app.main`) makes SIGTERM and
SIGHUP raise :class:`edgebench.errors.Interrupted` in the main thread. It is a
KeyboardInterrupt, so every verb's Ctrl-C path runs (samples kept, the run marked
``incomplete``) and the recorded reason can name the signal (``stopped by SIGTERM``).
SIGINT keeps Python's own handler (a plain KeyboardInterrupt).

:func:`received` tells the entry point which signal stopped the command, so it can
exit with 128+N (130 for Ctrl-C) even when typer has already turned the
KeyboardInterrupt into an exit code.
"""
from __future__ import annotations

import signal

from edgebench.errors import Interrupted

STOP_SIGNALS = ("SIGTERM", "SIGHUP")

_received: list = []       # (name, number) of every stop signal seen, in order


def _handler(signum, frame) -> None:
    name = signal.Signals(signum).name
    _received.append((name, signum))
    raise Interrupted(name, signum)


def install() -> list[str]:
    """Make the stop signals raise Interrupted; returns the names installed.

    Only the main thread may set handlers; elsewhere (an embedding program) nothing
    is changed. A signal the parent set to be ignored (``nohup``) stays ignored.
    """
    installed: list[str] = []
    for name in STOP_SIGNALS:
        sig = getattr(signal, name, None)
        if sig is None:
            continue
        try:
            if signal.getsignal(sig) is signal.SIG_IGN:
                continue
            signal.signal(sig, _handler)
        except ValueError:  # not the main thread
            return installed
        installed.append(name)
    return installed


def received() -> tuple[str, int] | None:
    """The first stop signal received since :func:`install` (name, number), or None."""
    return _received[0] if _received else None


def exit_code(signal_number: int) -> int:
    """The shell's convention for a process ended by a signal: 128 + N."""
    return 128 + int(signal_number)


__all__ = ["install", "received", "exit_code", "STOP_SIGNALS"]
