"""Open the agent on a board (level 3): a profile's transport plus the protocol client."""
from __future__ import annotations

from edgebench.errors import ProfileError


def transport_for(profile, url: str | None = None):
    """The transport a profile declares, with ``url`` overriding the profile's address."""
    spec = profile.transport
    kind = spec.type
    if kind == "local":
        from edgebench.transport.local import LocalTransport

        return LocalTransport()
    if kind == "ssh":
        from edgebench.transport.ssh import SshTransport

        return SshTransport(url or spec.url, python=spec.python or "python3")
    if kind == "serial":
        from edgebench.transport.serial import SerialTransport

        return SerialTransport(url or spec.url, baud=spec.baud or 115200)
    raise ProfileError(f"board {profile.name}: transport type {kind!r} has no implementation",
                       "use local, ssh or serial")


def open_agent(profile, url: str | None = None, timeout_s: float = 120.0):
    """Start or attach to the agent on ``profile``'s board; returns an AgentClient."""
    from edgebench.transport.client import AgentClient

    transport = transport_for(profile, url)
    channel = transport.open()
    try:
        return AgentClient(channel, transport.describe(), timeout_s=timeout_s)
    except BaseException:
        channel.close()
        raise
