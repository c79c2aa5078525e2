"""Typed errors (level 0). Library code raises these; only the CLI prints them.

Every error carries a one-line message that says what is wrong and, where there
is one, what to do about it (``hint``). The CLI prints ``error: <message>`` and,
when present, `` (<hint>)`` on one line, and exits with ``exit_code``.
"""
from __future__ import annotations

import stat


class EdgebenchError(Exception):
    """Base of all edgebench errors: one clear line, an exit code."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def one_line(self) -> str:
        text = self.message.rstrip(".")
        if self.hint:
            text += f": {self.hint}"
        return " ".join(text.split())


class UsageError(EdgebenchError):
    """A bad argument or option value given by the user."""


class ModelError(EdgebenchError):
    """A model file that is missing, corrupt or unusable."""


class DataError(EdgebenchError):
    """Input or test data with the wrong shape, dtype or labels."""


class ProfileError(EdgebenchError):
    """A board profile that does not validate, or an unknown board."""


class TransportError(EdgebenchError):
    """The board cannot be reached or the link broke."""


class AgentError(EdgebenchError):
    """The on-device agent failed, crashed, or answered with an error."""


class RuntimeMissingError(AgentError):
    """No usable TFLite runtime (or delegate) on the board."""


class ResultError(EdgebenchError):
    """A stored result that cannot be read or is of an unknown schema."""


class DiskFullError(ResultError):
    """No space left (or the quota reached) on the device a run or an output is written to."""


class GateFailed(EdgebenchError):
    """A result failed a user-given gate (threshold). Exit code 2."""

    exit_code = 2


class GateUndecided(EdgebenchError):
    """A gate whose threshold lies below the smallest difference the data can detect (its MDE):
    it cannot decide, so it neither passes nor fails. Exit code 3."""

    exit_code = 3


class Interrupted(KeyboardInterrupt):
    """A stop asked for by a signal (SIGTERM, SIGHUP, ...) other than Ctrl-C.

    A subclass of KeyboardInterrupt, so every ``except KeyboardInterrupt`` path
    (keep the samples, mark the run incomplete) runs unchanged; ``signal_name``
    says which signal it was, for the recorded reason (see :func:`interrupt_reason`).
    """

    def __init__(self, signal_name: str, signal_number: int | None = None):
        super().__init__(signal_name)
        self.signal_name = signal_name
        self.signal_number = signal_number


def interrupt_reason(exc: BaseException) -> str:
    """The reason a run records when ``exc`` (a KeyboardInterrupt) stopped it."""
    name = getattr(exc, "signal_name", None)
    return f"stopped by {name}" if name else "interrupted by the user (Ctrl-C)"


def file_kind(mode: int) -> str:
    """What a path that is not a regular file is, in words, for the error line that refuses it
    (``mode``: an ``os.stat`` result's ``st_mode``): "a named pipe", "a socket", ..."""
    for test, text in ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return text
    return "not a regular file"


class InputWarning(UserWarning):
    """Inputs were accepted but changed on the way in (e.g. values clamped into the
    input tensor's range). Raised with :func:`warnings.warn`; the CLI prints it as
    one ``warning:`` line."""


class StoreError(ResultError):
    """A results store (edgebench.store) refused or could not do what was asked: a run that
    conflicts with what the store holds, a schema of another version, a wrong URL."""


class StoreUnreachable(StoreError):
    """A shared results store could not be reached (network, server down, wrong password).
    The run stays in its folder and is queued (edgebench.store.queue); ``edgebench push`` sends it."""
