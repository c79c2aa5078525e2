"""Where board profiles come from (level 3).

Profiles are found, in increasing order of precedence (a later one replaces an
earlier one of the same name):

1. the built-in profiles shipped with edgebench (:func:`builtin_boards_dir`);
2. each directory of the environment variable ``EDGEBENCH_BOARDS_PATH``
   (``os.pathsep``-separated; missing directories are skipped, like ``PATH``);
3. the user directory ``$XDG_CONFIG_HOME/edgebench/boards`` (default
   ``~/.config/edgebench/boards``);
4. directories given explicitly (``extra_dirs``, the CLI's ``--boards-dir``),
   which must exist.

A profile is a file ``<name>.yaml``; each loaded profile records its ``origin``.
"""
from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Iterable

from edgebench.boards.profile import (
    MCU_CLIENT,
    SIM_CLIENT,
    BoardProfile,
    TransportSpec,
    close_matches,
    display_path,
    load_profile,
)
from edgebench.errors import ProfileError

ENV_BOARDS_PATH = "EDGEBENCH_BOARDS_PATH"
FARM_PREFIX = "labgrid:"       # a board held through the farm (edgebench.farm.spec.PREFIX), not a name here


def builtin_boards_dir() -> Path:
    """The shipped profiles: ``edgebench/_data/boards`` in an installed wheel, else the
    repository's top-level ``boards/`` (source checkout or editable install)."""
    package_dir = Path(__file__).resolve().parent.parent
    installed = package_dir / "_data" / "boards"
    if installed.is_dir():
        return installed
    return package_dir.parent / "boards"


def user_boards_dir() -> Path:
    """``$XDG_CONFIG_HOME/edgebench/boards``, by default ``~/.config/edgebench/boards``."""
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(config) / "edgebench" / "boards"


def search_dirs(extra_dirs: Iterable["str | os.PathLike"] = ()) -> list:
    """The directories searched, lowest precedence first (missing implicit ones dropped)."""
    dirs = [builtin_boards_dir()]
    for entry in os.environ.get(ENV_BOARDS_PATH, "").split(os.pathsep):
        if entry.strip():
            dirs.append(Path(entry).expanduser())
    dirs.append(user_boards_dir())
    found = [d for d in dirs if d.is_dir()]
    for extra in extra_dirs:
        d = Path(extra).expanduser()
        if not d.is_dir():
            raise ProfileError(f"boards directory {display_path(d)!r} does not exist or is not a directory")
        found.append(d)
    return found


def _profile_files(directory: Path) -> list:
    return sorted(p for p in directory.glob("*.yaml") if p.is_file())


def list_profiles(extra_dirs: Iterable["str | os.PathLike"] = ()) -> list:
    """Every known profile, validated, sorted by name; later directories override."""
    by_name: dict = {}
    for directory in search_dirs(extra_dirs):
        for path in _profile_files(directory):
            profile = load_profile(path)
            by_name[profile.name] = profile
    return [by_name[name] for name in sorted(by_name)]


def known_names(extra_dirs: Iterable["str | os.PathLike"] = ()) -> list:
    """Names of all profiles (file stems), without parsing them."""
    names = {p.stem for d in search_dirs(extra_dirs) for p in _profile_files(d)}
    return sorted(names)


def get_profile(name: str, extra_dirs: Iterable["str | os.PathLike"] = ()) -> BoardProfile:
    """The profile called ``name`` from the highest-precedence directory holding it.

    Only that one file is parsed, so a broken unrelated profile does not get in the way. A name
    resolves to a profile, nothing more: a labgrid place (``labgrid:PLACE``) is not a profile name
    but a board someone must hold first; the verb that runs on it holds it through the farm
    (:func:`edgebench.farm.lease.hold`) and takes its profile with :func:`place_profile`
    (:func:`edgebench.cli.board.board_profile` does both for ``--board``).
    """
    if name and name.startswith(FARM_PREFIX):
        raise ProfileError(f"board {name!r} is a labgrid place, not a profile name: hold the place first "
                           "(edgebench.farm.lease.hold) and take its profile with place_profile")
    dirs = search_dirs(extra_dirs)
    for directory in reversed(dirs):
        path = directory / f"{name}.yaml"
        if name and "/" not in name and os.sep not in name and path.is_file():
            return load_profile(path)
    names = sorted({p.stem for d in dirs for p in _profile_files(d)})
    close = close_matches(name, names, n=1, cutoff=0.6)
    suggestion = f"did you mean '{close[0]}'? " if close else ""
    known = ", ".join(names) if names else "none"
    raise ProfileError(f"unknown board {name!r} ({suggestion}known: {known}; "
                       "add a profile with --boards-dir)")


def with_transport_url(profile: BoardProfile, url: str) -> BoardProfile:
    """A copy of ``profile`` reached at ``url`` (the CLI's ``--url``): ``ssh://…`` or
    ``user@host`` (ssh), ``/dev/…``, ``COM3`` or ``socket://…`` (serial), or ``local``."""
    transport = TransportSpec.from_url(url, base=profile.transport)
    if profile.client_kind == MCU_CLIENT and transport.type != "serial":
        raise ProfileError(f"transport URL {url!r}: board {profile.name!r} is a microcontroller; "
                           "expected a serial port (/dev/ttyUSB0, COM3, socket://host:port)")
    return replace(profile, transport=transport)


def place_profile(held, extra_dirs: Iterable["str | os.PathLike"] = ()) -> BoardProfile:
    """The profile of a labgrid place this command holds (an :class:`edgebench.farm.lease.Lease`),
    reached through the place's exported resources.

    The place's ``edgebench-profile`` tag (``held.profile``) names the profile; a microcontroller
    is reached over its NetworkSerialPort (RFC 2217 or raw TCP), a Linux board over its
    NetworkService (system OpenSSH, host keys checked) or else a serial console. Holding and
    releasing the place is the farm's (the caller's), not this function's.
    """
    profile = get_profile(held.profile, extra_dirs)
    if profile.client_kind != SIM_CLIENT:
        mcu = profile.client_kind == MCU_CLIENT
        url = held.serial_url() if mcu else held.ssh_url() or held.serial_url()
        if url is None:
            need = "NetworkSerialPort" if mcu else "NetworkService (or NetworkSerialPort)"
            raise ProfileError(f"labgrid place {held.place.name} (board {profile.name}) has no {need} to reach "
                               "the board by", "export one on the board's host and add it to the place "
                               f"(labgrid-client -p {held.place.name} add-match EXPORTER/GROUP/CLASS)")
        profile = with_transport_url(profile, url)
        baud = held.serial_baud()
        if baud and profile.transport.type == "serial":
            profile = replace(profile, transport=replace(profile.transport, baud=baud))
    return replace(profile, title=f"{profile.title} [{held.describe()}]")


__all__ = ["ENV_BOARDS_PATH", "builtin_boards_dir", "user_boards_dir", "search_dirs",
           "list_profiles", "known_names", "get_profile", "with_transport_url", "place_profile"]
