"""A labgrid farm on this computer, loopback only (level 2a): coordinator, exporters, ser2net, places.

``LocalFarm(root, spawn, stop).start()`` runs ``labgrid-coordinator --listen 127.0.0.1:PORT`` in ``root``
(its places.yaml lives there). ``add_posix_place(name, firmware_bin, tags)`` starts the posix firmware
(``--keep-open``: it serves across host reconnects) on a pseudo-terminal, an exporter that exports that
pty as a ``RawSerialPort``, and a place matching it, tagged ``tags``. ``edgebench farm demo`` runs one
to try a farm on a laptop (docs/farm.md, "Try it on one computer"); the tests' farm
(``tests/labgrid_fixture.py``) is this class with checks of its own.

Everything listens on 127.0.0.1: the coordinator gets that address, and the exporter's ser2net (which
the exporter starts on all interfaces, with no option to change it) is reached through a wrapper first
on the exporter's PATH that rewrites the accepter to ``tcp,127.0.0.1,PORT``.

Processes are started by ``spawn(argv, **popen_kwargs)`` and ended by ``stop(proc)`` (the caller's:
:func:`edgebench.transport.child.spawn_tied` / ``stop_tied``, so each runs in a group of its own and dies
with edgebench). Exporters exit when their coordinator goes away; a supervisor thread restarts them
while the farm runs.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Optional

from edgebench.errors import TransportError, UsageError

SER2NET_WRAPPER = """#!/bin/sh
# edgebench farm: labgrid's exporter starts ser2net on all interfaces; bind it to 127.0.0.1
real={real}
if [ "$1" = "-v" ]; then exec "$real" -v; fi
n=$#
i=0
for a in "$@"; do
  i=$((i+1))
  case "$a" in
    *"accepter: telnet("*"),tcp,"*) a=$(printf '%s' "$a" | sed 's/),tcp,/),tcp,127.0.0.1,/') ;;
  esac
  set -- "$@" "$a"
done
shift $n
exec "$real" "$@"
"""
POSIX_BANNER = "eb-posix: serial on "
TOOLS = ("labgrid-coordinator", "labgrid-exporter", "labgrid-client")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, timeout_s: float = 15.0, proc: Optional[subprocess.Popen] = None, what: str = "") -> None:
    """Until something listens on 127.0.0.1:``port``; TransportError if ``proc`` exits or time runs out."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise TransportError(f"{what} exited ({proc.returncode}) before listening on 127.0.0.1:{port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise TransportError(f"{what} did not listen on 127.0.0.1:{port} within {timeout_s:g} s")


def tool(name: str) -> str:
    """A labgrid command: beside this Python (its venv) first, then on PATH."""
    path = Path(sys.executable).parent / name
    return str(path) if path.exists() else (shutil.which(name) or name)


def real_ser2net() -> Optional[str]:
    return shutil.which("ser2net", path=os.pathsep.join(
        [os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin", "/sbin"]))


def missing_tools() -> list:
    """What a local farm needs and this computer lacks (labgrid's commands, ser2net)."""
    out = [name for name in TOOLS if not Path(tool(name)).is_file() and shutil.which(tool(name)) is None]
    return out + ([] if real_ser2net() else ["ser2net"])


class Place:
    """One place of the farm: its firmware process (or none), its exporter, its tags."""

    def __init__(self, name: str, exporter: str, config: Path, firmware=None, tags=None, groups=None):
        self.name, self.exporter, self.config = name, exporter, config
        self.groups = dict(groups or {})
        self.firmware = firmware
        self.tags = dict(tags or {})
        self.proc: Optional[subprocess.Popen] = None


class LocalFarm:
    """A coordinator and its places on 127.0.0.1 (module doc)."""

    def __init__(self, root, spawn: Callable, stop: Callable):
        self.root = Path(root)
        self.spawn, self.stop_process = spawn, stop
        self.port = 0
        self.coordinator: Optional[subprocess.Popen] = None
        self.places: dict = {}
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._supervisor: Optional[threading.Thread] = None
        self.bin_dir = self.root / "bin"
        self.restarts = 0

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    # -- lifecycle --------------------------------------------------------------------
    def start(self) -> "LocalFarm":
        real = real_ser2net()
        if real is None:
            raise UsageError("ser2net is not installed (labgrid's exporter serves serial ports with it)",
                             "apt-get install ser2net (scripts/setup-system.sh)")
        self.bin_dir.mkdir(parents=True, exist_ok=True)
        wrapper = self.bin_dir / "ser2net"
        wrapper.write_text(SER2NET_WRAPPER.format(real=real))
        wrapper.chmod(0o755)
        self.port = free_port()
        self.start_coordinator()
        self._supervisor = threading.Thread(target=self._supervise, name="farm-supervisor", daemon=True)
        self._supervisor.start()
        return self

    def start_coordinator(self) -> None:
        with open(self.root / "coordinator.log", "ab") as log:
            self.coordinator = self.spawn([tool("labgrid-coordinator"), "--listen", self.address], cwd=self.root,
                                          stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        wait_port(self.port, proc=self.coordinator, what="labgrid-coordinator")

    def coordinator_alive(self) -> bool:
        return self.coordinator is not None and self.coordinator.poll() is None

    def stop(self) -> None:
        """Stop everything it started: the supervisor, exporters (and their ser2net), firmware, coordinator."""
        self._stop.set()
        if self._supervisor is not None:
            self._supervisor.join(timeout=5)
        with self._lock:
            for place in self.places.values():
                if place.proc is not None:
                    self.stop_process(place.proc)
                if place.firmware is not None:
                    self.stop_process(place.firmware)
        if self.coordinator is not None:
            self.stop_process(self.coordinator)

    def processes(self) -> list:
        """Every process it started and that may still run."""
        procs = [self.coordinator] + [p for pl in self.places.values() for p in (pl.proc, pl.firmware)]
        return [p for p in procs if p is not None]

    # -- places -----------------------------------------------------------------------
    def add_posix_place(self, name: str, firmware_bin: Path, tags: dict, ssh=None) -> Place:
        """A place with the posix firmware's pty as a RawSerialPort (and ``ssh``, an object with ``user``
        and ``port`` of an ssh server on 127.0.0.1, as a NetworkService), tagged ``tags``."""
        fw = self.spawn([str(firmware_bin), "--keep-open"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL)
        line = fw.stdout.readline().decode(errors="replace")
        if not line.startswith(POSIX_BANNER):
            self.stop_process(fw)
            raise TransportError(f"the posix firmware {firmware_bin} printed {line.strip()!r}, not its pty",
                                 "rebuild it: edgebench flash --board posix-sim --build-only")
        pty = line[len(POSIX_BANNER):].strip()
        group = {"RawSerialPort": {"port": pty, "speed": 115200}}
        if ssh is not None:
            group["NetworkService"] = {"address": "127.0.0.1", "username": ssh.user, "port": ssh.port}
        return self.add_place(name, {"serial": group}, tags, firmware=fw)

    def add_place(self, name: str, groups: dict, tags: dict, firmware=None) -> Place:
        import yaml

        exporter = f"exp-{name}"
        config = self.root / f"{exporter}.yaml"
        config.write_text(yaml.safe_dump(groups))
        place = Place(name, exporter, config, firmware, tags, groups)
        with self._lock:
            self.places[name] = place
            self._start_exporter(place)
        self._wait_resources(place, sum(len(g) for g in groups.values()))
        self._define(place)
        return place

    def _define(self, place: Place, check: bool = True) -> None:
        self.client("-p", place.name, "create", check=check)
        for group, resources in place.groups.items():
            for cls in resources:
                shown = "NetworkSerialPort" if cls == "RawSerialPort" else cls
                self.client("-p", place.name, "add-match", f"{place.exporter}/{group}/{shown}", check=check)
        if place.tags:
            self.client("-p", place.name, "set-tags", *[f"{k}={v}" for k, v in place.tags.items()], check=check)

    def restore_places(self) -> None:
        """After a coordinator restart: define the places again (the coordinator saves them only every few
        seconds, so a killed one may have lost them)."""
        for place in self.places.values():
            self._define(place, check=False)

    def client(self, *args: str, check: bool = True, user: Optional[str] = None) -> subprocess.CompletedProcess:
        """``labgrid-client -x ADDRESS ARGS...`` (an argv list); ``user``: as that user (LG_USERNAME)."""
        env = dict(os.environ, LG_USERNAME=user) if user else None
        proc = subprocess.run([tool("labgrid-client"), "-x", self.address, *args], capture_output=True,
                              text=True, timeout=30, env=env)
        if check and proc.returncode != 0:
            raise TransportError(f"labgrid-client {' '.join(args)} failed: {proc.stderr.strip() or proc.stdout}")
        return proc

    def _wait_resources(self, place: Place, count: int, timeout_s: float = 20.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            out = self.client("resources", check=False).stdout
            if sum(line.startswith(place.exporter + "/") for line in out.splitlines()) >= count:
                return
            time.sleep(0.2)
        log = (self.root / f"{place.exporter}.log").read_text(errors="replace")[-2000:]
        raise TransportError(f"exporter {place.exporter} did not register {count} resources (log: {log})")

    # -- exporters ----------------------------------------------------------------------
    def _start_exporter(self, place: Place) -> None:
        env = dict(os.environ, PATH=f"{self.bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
        with open(self.root / f"{place.exporter}.log", "ab") as log:
            place.proc = self.spawn(
                [tool("labgrid-exporter"), "--coordinator", self.address, "--name", place.exporter,
                 "--hostname", "127.0.0.1", str(place.config)],
                cwd=self.root, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def _supervise(self) -> None:
        while not self._stop.wait(0.3):
            if not self.coordinator_alive():
                continue
            with self._lock:
                for place in self.places.values():
                    if place.proc is not None and place.proc.poll() is not None:
                        self.stop_process(place.proc)     # its ser2net, if left behind
                        self._start_exporter(place)
                        self.restarts += 1

    def wait_exporters(self, timeout_s: float = 20.0) -> None:
        """Every place's resources registered again (after a coordinator restart)."""
        for place in list(self.places.values()):
            self._wait_resources(place, 1, timeout_s)


__all__ = ["LocalFarm", "Place", "SER2NET_WRAPPER", "free_port", "missing_tools", "real_ser2net", "tool",
           "wait_port"]
