"""Open a board client (level 3): the one way a verb reaches a board.

:func:`open_client` gives the client of the kind the profile names
(:attr:`~edgebench.boards.profile.BoardProfile.client_kind`, decided there once): a simulated
board (``transport: {type: sim}``) gets a :class:`~edgebench.sim.SimClient`, a microcontroller
(``kind: mcu``) a :class:`~edgebench.mcu.board.McuClient` over its firmware (its emulator started
when the profile says ``url: emulator``), anything else the Python agent's
:class:`~edgebench.transport.client.AgentClient` over the profile's transport. All three are
:class:`~edgebench.board_protocol.BoardClient` s and context managers; what each can do is in its
``capabilities``. The benchmarks reach it through the run skeleton
(:func:`edgebench.bench.record.board_client`).
"""
from __future__ import annotations

from pathlib import Path

from edgebench.boards.profile import EMULATOR_URL, MCU_CLIENT, SIM_CLIENT
from edgebench.boards.registry import with_transport_url
from edgebench.errors import RuntimeMissingError, UsageError
from edgebench.mcu.board import open_mcu
from edgebench.sim import SimClient
from edgebench.transport.client import AgentClient
from edgebench.transport.url import transport_from_url, transport_kind


def reached_locally(profile, url: str | None = None) -> bool:
    """The board is this computer (a local agent): ``url`` (``--url``) when given, else the profile's transport."""
    return (transport_kind(url) if url else profile.transport.type) == "local"


def transport_for(profile, url: str | None = None, cpus: str | None = None):
    """The transport a profile declares; ``url`` (any kind: ssh, serial, local) overrides it.
    ``cpus`` pins a local agent to those CPUs."""
    spec = (with_transport_url(profile, url) if url else profile).transport
    options = spec.options()
    if cpus:
        if spec.type != "local":
            raise UsageError(f"--cpus pins a local agent; board {profile.name} is reached by {spec.type}",
                             "pin CPUs on the board itself (taskset), or drop --cpus")
        options["cpus"] = cpus
    return transport_from_url(spec.address, **options)


def open_client(profile, url: str | None = None, *, cpus: str | None = None, image=None,
                timeout_s: float | None = None):
    """The board client of ``profile``'s board: an agent started or attached to (pinned to
    ``cpus`` when local), a microcontroller's firmware (its emulator started if it has one, with
    the firmware ``image`` given instead of building one), or a simulated board. ``url`` is the
    board's address instead of the profile's; ``timeout_s`` the client's wait for a reply (default:
    120 s for an agent, 10 s for a firmware). The caller closes it (``with open_client(...)``)."""
    kind = profile.client_kind
    if image is not None:
        check_image(profile, url, image)
    if cpus and not reached_locally(profile, url):
        raise UsageError(f"--cpus pins a local agent; board {profile.name} is not one", "drop --cpus")
    if kind == SIM_CLIENT:  # no hardware, no agent

        if url:
            raise UsageError(f"board {profile.name!r} is simulated: --url does not apply",
                             "drop --url, or pick a real board")
        return SimClient(profile.simulated, description=f"simulated board {profile.name}")
    if kind == MCU_CLIENT:
        if url:
            profile = with_transport_url(profile, url)
        return open_mcu(profile, start_emulator=profile.transport.url == EMULATOR_URL, image=image,
                        **({"timeout_s": timeout_s} if timeout_s is not None else {}))

    transport = transport_for(profile, url, cpus)
    channel = transport.open()
    try:
        return AgentClient(channel, transport.describe(), timeout_s=120.0 if timeout_s is None else timeout_s)
    except BaseException:
        channel.close()
        raise


def check_image(profile, url, image) -> None:
    """UsageError unless ``image`` can start ``profile``'s board: an emulated microcontroller
    started here (not one attached with ``url``), and an existing file."""
    fw = profile.firmware
    if profile.client_kind != MCU_CLIENT:
        raise UsageError(f"--image is a microcontroller firmware image; board {profile.name} is a "
                         f"{profile.kind} board", "drop --image")
    if fw is None or fw.emulator is None:
        raise UsageError(f"board {profile.name} is a real board: --image cannot start it",
                         f"flash the image first: edgebench flash --board {profile.name} --image {image}")
    if url:
        raise UsageError("--image starts the emulator with that firmware; --url attaches to one already running",
                         "give one of the two")
    if not Path(image).is_file():
        raise UsageError(f"firmware image {image} does not exist (or is not a file)",
                         f"build one: edgebench flash --board {profile.name} --build-only")


def require_runtime(client, board_name: str) -> dict:
    """The board's hello; RuntimeMissingError when it has no usable TFLite runtime."""
    hello = client.hello()
    if not hello.get("runtime"):
        raise RuntimeMissingError(
            f"no TFLite runtime on board {board_name}: {hello.get('runtime_error') or 'none importable'}",
            "install one on the board: pip install ai-edge-litert (or tflite-runtime)")
    return hello


__all__ = ["open_client", "check_image", "reached_locally", "transport_for", "require_runtime"]
