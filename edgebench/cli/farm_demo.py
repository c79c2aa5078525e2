"""``edgebench farm demo``: a labgrid farm on this computer, to try ``--board labgrid:...`` and ``--farm``.

Starts a labgrid coordinator, one exporter per place and the posix-simulated board (the firmware
core built for this computer, on a pseudo-terminal) on 127.0.0.1 only (:mod:`edgebench.farm.local`),
prints the lines to try in another terminal, and runs until Ctrl-C (or SIGTERM), which stops every
process it started; each also dies with edgebench if edgebench is killed outright.
"""
from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Optional

from edgebench.errors import TransportError, UsageError
from edgebench.farm.local import LocalFarm, missing_tools
from edgebench.transport.child import spawn_tied, stop_tied

TAGS = {"edgebench-profile": "posix-sim", "board": "posix"}
INSTALL = "pip install 'edgebench[farm]' (labgrid) and apt-get install ser2net"


def run_demo(places: int, image: Optional[Path], console, err) -> None:
    """The demo farm (module doc): start, print what to try, wait for Ctrl-C, stop everything."""
    missing = missing_tools()
    if missing:
        raise UsageError(f"a labgrid farm needs {', '.join(missing)}, not found on this computer", INSTALL)
    firmware = _firmware(image, err)
    root = Path(tempfile.mkdtemp(prefix="edgebench-farm-demo-"))
    farm = LocalFarm(root, spawn_tied, stop_tied)
    try:
        farm.start()
        names = [f"posix-{i}" for i in range(1, places + 1)]
        for name in names:
            err.print(f"starting place {name} (posix firmware, exporter)…", markup=False)
            farm.add_posix_place(name, firmware, TAGS)
        _print_tries(console, farm.address, names)
        while farm.coordinator_alive():
            time.sleep(0.5)
        raise TransportError(f"the demo's labgrid coordinator exited (log: {root / 'coordinator.log'})")
    except KeyboardInterrupt:      # Ctrl-C, SIGTERM, SIGHUP: the way a demo ends
        err.print("stopping the farm…", markup=False)
    finally:
        farm.stop()
        shutil.rmtree(root, ignore_errors=True)
    console.print(f"farm stopped: coordinator, {places} exporter(s) and {places} posix board(s) ended",
                  markup=False)


def _firmware(image: Optional[Path], err) -> Path:
    # lazy: numpy, serial (import numpy 460 ms, serial 20 ms measured), kept off `edgebench VERB --help`
    from edgebench.mcu.firmware import build_firmware

    if image is not None:
        if not Path(image).is_file():
            raise UsageError(f"--image {image} does not exist", "build one: edgebench flash --board posix-sim "
                                                                "--build-only")
        return Path(image)
    err.print("building the posix firmware (the firmware core for this computer)…", markup=False)
    return build_firmware("posix")


def _print_tries(console, address: str, names: list) -> None:
    model = "models/digits/digits_int8.tflite"
    console.print(f"labgrid farm on {address} (127.0.0.1 only): {len(names)} place(s) {', '.join(names)}, "
                  f"tags board=posix, edgebench-profile=posix-sim", markup=False, soft_wrap=True)
    console.print("try, in another terminal:", markup=False)
    for line in (f"export LG_COORDINATOR={address}", "edgebench farm",
                 f"edgebench verify {model} --board labgrid:board=posix",
                 f"edgebench bench {model} --board labgrid:{names[0]}",
                 f"edgebench bench {model} --farm board=posix"):
        console.print(f"  {line}", markup=False, soft_wrap=True)
    console.print("Ctrl-C here stops the coordinator, the exporters and the boards.", markup=False)


__all__ = ["run_demo"]
