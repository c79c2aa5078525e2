"""Pick a transport from a user-given address (``--board``-style URLs).

===================================  ==========================================
``local`` / ``local://``              agent as a child process on this computer
``ssh://[user@]host[:port]``          :class:`~edgebench.transport.ssh.SshTransport`
``user@host``                         the same (an ssh login)
``serial:///dev/ttyUSB0``, a device   :class:`~edgebench.transport.serial.SerialTransport`
path (``/dev/...``, ``COM3``), or a
pyserial URL (``rfc2217://``,
``socket://``, ``loop://``)
===================================  ==========================================

Keyword options go to the transport's constructor (e.g. ``baud=9600`` for
serial, ``python=...`` or ``ssh_options=[...]`` for ssh).
"""
from __future__ import annotations

import re

from edgebench.errors import UsageError
from edgebench.transport.local import LocalTransport
from edgebench.transport.serial import SerialTransport
from edgebench.transport.ssh import SshTransport

_SERIAL_SCHEMES = ("serial://", "rfc2217://", "socket://", "loop://", "spy://", "alt://",
                   "hwgrep://", "cp2110://")


def transport_kind(url: str) -> str:
    """'local', 'ssh' or 'serial' for ``url`` (UsageError if none fits)."""
    text = url.strip()
    if text in ("local", "local://"):
        return "local"
    if text.startswith("ssh://"):
        return "ssh"
    if text.startswith(_SERIAL_SCHEMES) or text.startswith("/dev/") \
            or re.fullmatch(r"(?i)com\d+", text):
        return "serial"
    if "://" not in text and re.fullmatch(r"[^@\s/]+@[^@\s/]+", text):
        return "ssh"
    raise UsageError(
        f"cannot tell how to reach {url!r}",
        hint="use local, ssh://[user@]host[:port], user@host, /dev/ttyUSB0 or serial://PORT",
    )


def transport_from_url(url: str, **options):
    """A transport instance for ``url`` (see the module docstring)."""
    kind = transport_kind(url)
    if kind == "local":
        return LocalTransport(**options)
    if kind == "ssh":
        return SshTransport(url.strip(), **options)

    return SerialTransport(url.strip(), **options)
