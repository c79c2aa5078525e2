"""`edgebench flash --board B`: build and start an emulated board's firmware, or flash a real board.

Emulated boards (posix-sim, qemu-m4, qemu-m7): builds the firmware with make when
needed, starts it, prints the serial pseudo-terminal and stays in the foreground until
Ctrl-C (or SIGTERM/SIGHUP), so other commands can use it with ``--url``; the emulator stops
with it, even when flash is killed. Real boards: runs the profile's
flasher (an argv, no shell) with ``{image}`` filled in.
"""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from edgebench.cli import options as opt
from edgebench.errors import TransportError, UsageError
from edgebench.farm.spec import is_farm


def flash(
    board: str = opt.board(...),
    image: Optional[Path] = opt.image(help="Firmware image to use instead of building one."),
    url: Optional[str] = opt.url(help="Serial port for the flasher's {url} (real boards)."),
    build_only: bool = typer.Option(False, "--build-only", help="Build the firmware, print its path, exit."),
    model: Optional[Path] = typer.Option(None, "--model", metavar="<path>",
                                         help="Link this INT8 .tflite model into the image (read in place from "
                                              "flash, loaded at start-up; only its arena needs RAM)."),
    flasher: Optional[str] = typer.Option(None, "--flasher", metavar="<name>",
                                          help="Real boards: openocd, pyocd, st-flash or mass-storage (the "
                                               "ST-LINK drive); default: the profile's."),
    boards_dir: List[Path] = opt.boards_dir(),
    json_out: bool = opt.json_flag("what was started or flashed"),
) -> None:
    """Build and start an emulated board's firmware (until Ctrl-C), or flash a real board."""
    # lazy: numpy, pydantic, rich (import numpy 460 ms, pydantic 199 ms, rich 52 ms), kept off `edgebench VERB --help`
    from edgebench.boards.profile import MCU_CLIENT
    from edgebench.boards.registry import get_profile
    from edgebench.cli.output import emit_json, get_console, get_err_console
    from edgebench.mcu.firmware import FirmwareSession, build_firmware, flash_board

    out, err = get_console(), get_err_console()
    if is_farm(board):   # before a place is reserved
        raise UsageError(f"flash runs the flasher (or the emulator) on this computer; {board} is a labgrid "
                         "farm's board on another host",
                         "flash it on its exporter's host (or with labgrid-client -p PLACE flashscript), then use "
                         "--board labgrid:... with the other verbs (docs/farm.md)")
    profile = get_profile(board, extra_dirs=tuple(boards_dir))
    if profile.client_kind != MCU_CLIENT:
        raise UsageError(f"board {profile.name} is a Linux board: there is no firmware to flash",
                         "edgebench bench/accuracy start the agent on it themselves")
    fw = profile.firmware
    port = fw.port if fw is not None else None
    if port is None and image is None:
        raise UsageError(f"board {profile.name} has no firmware port in this edgebench",
                         f"flash a prebuilt image: edgebench flash --board {profile.name} --image FILE")
    if model is not None:
        if not model.is_file():
            raise UsageError(f"model file {model} does not exist", "check the path")
        # lazy: numpy (import numpy 460 ms measured), kept off `edgebench VERB --help`
        from edgebench.mcu.fit import FLASH_PLACEMENT, check_fit

        check_fit(model, profile).raise_if_unfit(FLASH_PLACEMENT)   # operators, arena, flash: before building
    if build_only:
        if port is None:
            raise UsageError(f"board {profile.name} has no firmware port in this edgebench: nothing to build",
                             "drop --build-only to flash the --image given")
        built = build_firmware(port, model=model)
        emit_json({"board": profile.name, "port": port, "image": str(built)}) if json_out else out.print(str(built))
        return
    if fw is None or fw.emulator is None:
        if not json_out:
            err.print(f"[dim]{profile.name}: {'flashing' if image else 'building the firmware and flashing it'}…[/]")
        done = flash_board(profile, image=image, url=url, flasher=flasher, model=model)
        if json_out:
            emit_json(done)
        else:
            out.print(f"flashed {done['image']} to {profile.name} with {done['flasher']} in {done['elapsed_s']:.1f} s")
            started = done["started"]
            out.print(f"  the firmware answers on {started['port']}: {started['name']}" if started["ok"] else
                      f"  warning: no answer from the firmware yet: {started['reason']}", markup=False)
        return
    if flasher is not None:
        raise UsageError(f"board {profile.name} is emulated: there is nothing to flash with {flasher}",
                         "drop --flasher")
    if model is not None and image is None and port is not None:   # (no port and no image: refused above)
        image = build_firmware(port, model=model)
    session = FirmwareSession(profile, image=image)
    err.print(f"[dim]{profile.name}: building and starting the {fw.emulator} firmware…[/]")
    # SIGTERM and SIGHUP raise KeyboardInterrupt like Ctrl-C (edgebench.cli.signals, installed by main),
    # so every way of stopping flash ends in the finally below; if flash is killed outright (SIGKILL),
    # the kernel ends the emulator (it is started tied to this process: edgebench.transport.child).
    try:
        session.start()
        if json_out:
            emit_json(session.to_dict())
        else:
            out.print(f"{profile.name}: serial on {session.url}")
            out.print(f"  ({session.describe()}; image {session.image})")
            out.print(f"  use it with: edgebench bench MODEL --board {profile.name} --url {session.url}")
            out.print("  stop with Ctrl-C")
        code = session.wait()
        raise TransportError(f"{session.describe()} exited on its own (status {code})",
                             session.log_tail() or None)
    except KeyboardInterrupt:
        err.print(f"{profile.name}: stopped")
    finally:
        session.stop()
