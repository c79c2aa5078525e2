"""Open a board client (level 3): decide once what kind of board a profile names, and how it is reached.

:func:`client_kind` is that decision: a simulated board (``transport: {type: sim}``) gets a
:class:`~edgebench.sim.SimClient`, a microcontroller (``kind: mcu``) a
:class:`~edgebench.mcu.board.McuClient` over its firmware, anything else the Python agent's
:class:`~edgebench.transport.client.AgentClient` over the profile's transport. All three are
:class:`~edgebench.board_protocol.BoardClient` s; what each can do is in its ``capabilities``.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import replace

from edgebench.boards.profile import SIM_TRANSPORT
from edgebench.errors import ProfileError, RuntimeMissingError, UsageError
from edgebench.transport.url import transport_from_url, transport_kind

SIM, MCU, AGENT = "sim", "mcu", "agent"


def client_kind(profile) -> str:
    """Which client reaches ``profile``'s board: :data:`SIM`, :data:`MCU` or :data:`AGENT`."""
    if profile.transport.type == SIM_TRANSPORT:
        return SIM
    return MCU if profile.kind == "mcu" else AGENT


def farm_profile(board: str, extra_dirs=()):
    """The profile of the labgrid place ``board`` names (``labgrid:PLACE`` or ``labgrid:TAG=VALUE,...``),
    reached through the place's exported resources.

    The place is reserved and acquired for the rest of this command (released by the CLI's exit
    path, see :mod:`edgebench.farm.lease`); its ``edgebench-profile`` tag names the profile; a
    microcontroller is reached over its NetworkSerialPort (RFC 2217 or raw TCP), a Linux board over
    its NetworkService (system OpenSSH, host keys checked) or else a serial console.
    """
    import warnings

    from edgebench.boards.registry import get_profile, with_transport_url
    from edgebench.errors import InputWarning
    from edgebench.farm.lease import lease
    from edgebench.farm.spec import parse_spec

    held = lease(parse_spec(board), progress=lambda line: warnings.warn(line, InputWarning, stacklevel=2))
    try:
        profile = get_profile(held.profile, extra_dirs)
        if client_kind(profile) == SIM:
            url = None
        elif profile.kind == "mcu":
            url = held.serial_url()
        else:
            url = held.ssh_url() or held.serial_url()
        if client_kind(profile) != SIM:
            if url is None:
                need = "NetworkSerialPort" if profile.kind == "mcu" else "NetworkService (or NetworkSerialPort)"
                raise ProfileError(f"labgrid place {held.place.name} (board {profile.name}) has no {need} to reach "
                                   "the board by", "export one on the board's host and add it to the place "
                                   f"(labgrid-client -p {held.place.name} add-match EXPORTER/GROUP/CLASS)")
            profile = with_transport_url(profile, url)
            baud = held.serial_baud()
            if baud and profile.transport.type == "serial":
                profile = replace(profile, transport=replace(profile.transport, baud=baud))
        return replace(profile, title=f"{profile.title} [{held.describe()}]")
    except BaseException:
        held.release()
        raise


def reached_locally(profile, url: str | None = None) -> bool:
    """The board is this computer (a local agent): ``url`` (``--url``) when given, else the profile's transport."""
    return (transport_kind(url) if url else profile.transport.type) == "local"


def transport_for(profile, url: str | None = None, cpus: str | None = None):
    """The transport a profile declares; ``url`` (any kind: ssh, serial, local) overrides it.
    ``cpus`` pins a local agent to those CPUs."""
    from edgebench.boards.registry import with_transport_url

    spec = (with_transport_url(profile, url) if url else profile).transport
    options = spec.options()
    if cpus:
        if spec.type != "local":
            raise UsageError(f"--cpus pins a local agent; board {profile.name} is reached by {spec.type}",
                             "pin CPUs on the board itself (taskset), or drop --cpus")
        options["cpus"] = cpus
    return transport_from_url(spec.address, **options)


def open_client(profile, url: str | None = None, timeout_s: float = 120.0, cpus: str | None = None,
               image=None):
    """The board client of ``profile``'s board (see :func:`client_kind`): an agent started or
    attached to, a microcontroller's firmware (its emulator started if it has one, with the
    firmware ``image`` given instead of building one), or a simulated board."""
    kind = client_kind(profile)
    if image is not None:
        check_image(profile, url, image)
    if cpus and not reached_locally(profile, url):
        raise UsageError(f"--cpus pins a local agent; board {profile.name} is not one", "drop --cpus")
    if kind == SIM:  # no hardware, no agent
        from edgebench.sim import SimClient

        if url:
            raise UsageError(f"board {profile.name!r} is simulated: --url does not apply",
                             "drop --url, or pick a real board")
        return SimClient(profile.simulated, description=f"simulated board {profile.name}")
    if kind == MCU:
        from edgebench.boards.mcu import open_mcu

        return open_mcu(profile, url, image=image)
    from edgebench.transport.client import AgentClient

    transport = transport_for(profile, url, cpus)
    channel = transport.open()
    try:
        return AgentClient(channel, transport.describe(), timeout_s=timeout_s)
    except BaseException:
        channel.close()
        raise


def check_image(profile, url, image) -> None:
    """UsageError unless ``image`` can start ``profile``'s board: an emulated microcontroller
    started here (not one attached with ``url``), and an existing file."""
    from pathlib import Path

    fw = profile.firmware
    if client_kind(profile) != MCU:
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


@contextmanager
def board_client(profile, url: str | None = None, client=None, emit=None, cpus: str | None = None, image=None):
    """Yield ``client`` if given (the caller keeps it), else one opened on ``profile``'s board
    (an emulated one started with firmware ``image`` if given) and closed afterwards."""
    if client is not None:
        yield client
        return
    if emit is not None:
        emit({"event": "connect", "board": profile.name})
    opened = open_client(profile, url, cpus=cpus, image=image)
    try:
        yield opened
    finally:
        opened.close()


def require_runtime(client, board_name: str) -> dict:
    """The board's hello; RuntimeMissingError when it has no usable TFLite runtime."""
    hello = client.hello()
    if not hello.get("runtime"):
        raise RuntimeMissingError(
            f"no TFLite runtime on board {board_name}: {hello.get('runtime_error') or 'none importable'}",
            "install one on the board: pip install ai-edge-litert (or tflite-runtime)")
    return hello
