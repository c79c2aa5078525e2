"""Flashing a microcontroller board from a laptop: the back-ends, one table (level 2).

Each back-end is one :class:`Flasher` row of :data:`FLASHERS`: the program it runs (an argv,
never a shell string), the image it takes (ELF or raw binary), what the board profile must
name for it (``flasher.targets``: OpenOCD's target script, pyOCD's target type, st-flash's
flash base address, the ST-LINK drive's volume label), and how to read its failure: a missing
probe or board is one line saying what to plug in, never a hang or a traceback.

* ``openocd`` (Debian ``openocd``): ``openocd -f interface/stlink.cfg -f <target> -c
  "program <elf> verify reset exit"``;
* ``pyocd`` (``pip install 'edgebench[flash]'``): ``pyocd flash --no-wait --target <type> <elf>``
  (``pyocd pack install <type>`` fetches a target it does not have built in);
* ``st-flash`` (Debian ``stlink-tools``): ``st-flash --reset write <bin> <address>``;
* ``mass-storage``: the ST-LINK's USB drive (``NODE_*``): the .bin is copied onto it, then the
  drive goes away and comes back when the ST-LINK has programmed the chip; ``FAIL.TXT`` on it
  after that says why it did not.

The profile's ``flasher.tool`` is the default; ``edgebench flash --flasher NAME`` picks another.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from edgebench.errors import TransportError, UsageError


@dataclass(frozen=True)
class Flasher:
    name: str
    program: str | None            # on PATH; None: no program (mass storage)
    install: str
    image: str                     # "elf" or "bin"
    target_help: str               # what flasher.targets.<name> holds
    argv: Callable | None          # (program path, target, image) -> argv
    no_probe: tuple = ()           # patterns of its output meaning: no probe / board attached


def _openocd(exe, target, image):
    return [exe, "-f", "interface/stlink.cfg", "-f", target, "-c", f"program {image} verify reset exit"]


def _pyocd(exe, target, image):
    return [exe, "flash", "--no-wait", "--target", target, str(image)]


def _stflash(exe, target, image):
    return [exe, "--reset", "write", str(image), target]


FLASHERS = {f.name: f for f in (
    Flasher("openocd", "openocd", "sudo apt install openocd", "elf", "an OpenOCD target script (target/stm32l4x.cfg)",
            _openocd, (r"Error: open failed", r"No J-Link device found", r"unable to find a matching CMSIS-DAP",
                       r"Error: init mode failed")),
    Flasher("pyocd", "pyocd", "pip install 'edgebench[flash]'", "elf", "a pyOCD target type (stm32l4r5zitx)",
            _pyocd, (r"No connected debug probes", r"No target device available")),
    Flasher("st-flash", "st-flash", "sudo apt install stlink-tools", "bin", "the flash base address (0x08000000)",
            _stflash, (r"Couldn't find any ST-Link devices", r"Failed to connect to target")),
    Flasher("mass-storage", None, "", "bin", "the ST-LINK drive's volume label (NODE_L4R5ZI)", None),
)}
PLUG_IN = "plug the board in by its ST-LINK USB port (and close other debuggers using it)"


def image_for(flasher: Flasher, elf: Path) -> Path:
    """The image this back-end takes: the ELF, or the raw binary make builds beside it."""
    if flasher.image == "elf" or elf.suffix != ".elf":
        return elf
    binary = elf.with_suffix(".bin")
    if not binary.is_file():
        raise UsageError(f"{flasher.name} writes a raw binary: {binary} is missing beside {elf}",
                         "build the firmware with make (it writes both), or give --image FILE.bin")
    return binary


def target_of(profile, flasher: Flasher) -> str:
    targets = dict(getattr(profile.flasher, "targets", ()) or ()) if profile.flasher else {}
    if flasher.name not in targets:
        raise UsageError(f"board {profile.name}'s profile does not name its {flasher.name} target",
                         f"add flasher.targets.{flasher.name}: {flasher.target_help} to the profile")
    return targets[flasher.name]


def flash_with(flasher: Flasher, profile, elf: Path, timeout_s: float = 120.0,
               mounts: Callable | None = None, settle_s: float = 30.0) -> dict:
    """Write ``elf`` (or its .bin) to ``profile``'s board with ``flasher``; a dict of what ran.
    ``mounts`` lists mounted drives as (label, path) (tests give a fake file system)."""
    image = image_for(flasher, Path(elf))
    target = target_of(profile, flasher)
    t0 = time.monotonic()
    if flasher.argv is None:
        where = copy_to_drive(target, image, mounts or mounted_drives, settle_s)
        return {"flasher": flasher.name, "image": str(image), "drive": where, "argv": None,
                "elapsed_s": time.monotonic() - t0}
    exe = find_program(flasher.program) if flasher.program is not None else None
    if exe is None:
        raise UsageError(f"{flasher.program} (flasher {flasher.name}) is not installed",
                         f"install it: {flasher.install}, or pick another with --flasher "
                         f"({', '.join(FLASHERS)})")
    argv = flasher.argv(exe, target, image)
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL,
                              errors="replace")
    except subprocess.TimeoutExpired:
        raise TransportError(f"{flasher.name} did not finish flashing {profile.name} within {timeout_s:g} s",
                             PLUG_IN) from None
    out = (proc.stdout + "\n" + proc.stderr).strip()
    missing = next((m for m in (re.search(p, out) for p in flasher.no_probe) if m), None)
    if missing is not None:
        raise TransportError(f"{flasher.name} found no ST-LINK probe or board to flash {profile.name} "
                             f"({missing.group(0)})", PLUG_IN)
    if proc.returncode != 0:
        tail = " | ".join(line.strip() for line in out.splitlines()[-3:] if line.strip())
        hint = "is the board connected, powered, and not in use?"
        if flasher.name == "pyocd" and "not recognized" in out:
            hint = f"install its target pack: pyocd pack install {target}"
        raise TransportError(f"{flasher.name} failed to flash {profile.name} (exit {proc.returncode}): {tail}", hint)
    return {"flasher": flasher.name, "image": str(image), "argv": argv, "returncode": proc.returncode,
            "elapsed_s": time.monotonic() - t0, "output_tail": out.splitlines()[-5:]}


def find_program(program: str) -> str | None:
    """``program`` on PATH, or beside this Python (a pip-installed tool such as pyocd in a virtualenv
    that is not activated)."""
    found = shutil.which(program)
    if found is None:
        beside = Path(sys.executable).parent / program
        found = str(beside) if os.access(beside, os.X_OK) else None
    return found


# ----------------------------------------------------------------------------- ST-LINK drive

def mounted_drives() -> list:
    """(volume label, mount point) of the mounted file systems, from /proc/mounts (the label is
    the mount point's last component, as udisks and the desktop automounters name it)."""
    try:
        text = Path("/proc/mounts").read_text()
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2:
            point = parts[1].replace("\\040", " ")
            out.append((os.path.basename(point), point))
    return out


def copy_to_drive(label: str, image: Path, mounts: Callable, settle_s: float = 30.0) -> str:
    """Copy ``image`` onto the drive ``label``; wait for it to go and come back (the ST-LINK
    re-mounts it after programming); raise with FAIL.TXT's text if the ST-LINK left one."""
    drives = [point for name, point in mounts() if name == label]
    if not drives:
        raise TransportError(f"no drive {label} is mounted (the ST-LINK's USB drive of this board)",
                             PLUG_IN + "; your desktop mounts it, or: udisksctl mount -b /dev/sdX")
    if len(drives) > 1:
        raise UsageError(f"{len(drives)} drives are called {label}: {', '.join(drives)}",
                         "unplug all boards of this kind but one, or use --flasher openocd")
    point = drives[0]
    dest = Path(point) / image.name
    with open(image, "rb") as src, open(dest, "wb") as out:
        shutil.copyfileobj(src, out)
        out.flush()
        os.fsync(out.fileno())
    deadline, gone = time.monotonic() + settle_s, False
    while time.monotonic() < deadline:
        present = any(name == label for name, _ in mounts())
        gone = gone or not present
        if gone and present:
            break
        time.sleep(0.2)
    else:
        raise TransportError(f"drive {label} did not re-mount within {settle_s:g} s after the copy",
                             "the ST-LINK programs the chip and re-mounts its drive; check the board and "
                             "its FAIL.TXT")
    fail = Path(point) / "FAIL.TXT"
    if fail.is_file():
        raise TransportError(f"the ST-LINK did not program {label}: {fail.read_text(errors='replace').strip()}",
                             "use --flasher openocd for details")
    return point


__all__ = ["Flasher", "FLASHERS", "flash_with", "image_for", "target_of", "mounted_drives", "copy_to_drive",
           "PLUG_IN", "find_program"]
