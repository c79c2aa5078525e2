"""A real, throwaway labgrid farm on 127.0.0.1: coordinator, exporters, ser2net, places.

``Farm(root).start()`` runs ``labgrid-coordinator --listen 127.0.0.1:PORT`` in ``root`` (its
places.yaml lives there). ``farm.add_posix_place(name, firmware_bin, tags)`` starts the posix
firmware (``--keep-open``: it serves across host reconnects) on a pseudo-terminal, an exporter
that exports that pty as a ``RawSerialPort`` (and, if given, an ssh server as a
``NetworkService``), and a place matching them with ``tags``.

Everything listens on loopback only: the coordinator gets an explicit 127.0.0.1 address, and
the exporter's ser2net (which it starts itself, on all interfaces, with no option to change it)
is reached through a wrapper first on the exporter's PATH that rewrites the accepter to
``tcp,127.0.0.1,PORT``. :meth:`Farm.assert_loopback_only` checks every listening TCP socket of
the farm's processes (coordinator, exporters, ser2net) in /proc.

Exporters exit when their coordinator goes away; a supervisor thread restarts them while the
farm runs (so :meth:`kill_coordinator` then :meth:`start_coordinator` gives a working farm).
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

import yaml
from conftest import stop_process

SER2NET_WRAPPER = """#!/bin/sh
# test wrapper: labgrid's exporter starts ser2net on all interfaces; bind it to 127.0.0.1
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


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, timeout_s: float = 15.0, proc: subprocess.Popen | None = None, what: str = "") -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{what} exited ({proc.returncode}) before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on 127.0.0.1:{port} within {timeout_s} s")


def _bin(name: str) -> str:
    path = Path(sys.executable).parent / name
    return str(path) if path.exists() else (shutil.which(name) or name)


def real_ser2net() -> str | None:
    return shutil.which("ser2net", path=os.pathsep.join(
        [os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin", "/sbin"]))


class Place:
    """One place of the farm: its firmware (or nothing), its exporter, its tags."""

    def __init__(self, name: str, exporter: str, config: Path, firmware=None, tags=None, groups=None):
        self.name, self.exporter, self.config = name, exporter, config
        self.groups = dict(groups or {})
        self.firmware = firmware
        self.tags = dict(tags or {})
        self.proc: subprocess.Popen | None = None


class Farm:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.port = 0
        self.coordinator: subprocess.Popen | None = None
        self.places: dict[str, Place] = {}
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._supervisor: threading.Thread | None = None
        self.bin_dir = self.root / "bin"
        self.restarts = 0

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    # -- lifecycle --------------------------------------------------------------------
    def start(self) -> "Farm":
        real = real_ser2net()
        if real is None:
            raise RuntimeError("ser2net is not installed")
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
        log = open(self.root / "coordinator.log", "ab")
        self.coordinator = subprocess.Popen([_bin("labgrid-coordinator"), "--listen", self.address],
                                            cwd=self.root, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL)
        log.close()
        wait_port(self.port, proc=self.coordinator, what="labgrid-coordinator")

    def kill_coordinator(self) -> None:
        """SIGKILL the coordinator (its exporters then exit; the supervisor restarts them later)."""
        if self.coordinator is not None and self.coordinator.poll() is None:
            self.coordinator.kill()
            self.coordinator.wait(timeout=10)

    def coordinator_alive(self) -> bool:
        return self.coordinator is not None and self.coordinator.poll() is None

    def stop(self) -> None:
        self._stop.set()
        if self._supervisor is not None:
            self._supervisor.join(timeout=5)
        with self._lock:
            for place in self.places.values():
                self._stop_exporter(place)
                if place.firmware is not None:
                    stop_process(place.firmware)
        if self.coordinator is not None and self.coordinator.poll() is None:
            stop_process(self.coordinator)

    # -- places -----------------------------------------------------------------------
    def add_posix_place(self, name: str, firmware_bin: Path, tags: dict, ssh=None) -> Place:
        """A place with the posix firmware's pty as a RawSerialPort (and ``ssh``, an
        ``SshServer``, as a NetworkService), tagged ``tags``."""
        fw = subprocess.Popen([str(firmware_bin), "--keep-open"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        line = fw.stdout.readline().decode()
        prefix = "eb-posix: serial on "
        if not line.startswith(prefix):
            fw.kill()
            raise RuntimeError(f"the posix firmware printed {line!r}")
        pty = line[len(prefix):].strip()
        group = {"RawSerialPort": {"port": pty, "speed": 115200}}
        if ssh is not None:
            group["NetworkService"] = {"address": "127.0.0.1", "username": ssh.user, "port": ssh.port}
        return self.add_place(name, {"serial": group}, tags, firmware=fw)

    def add_place(self, name: str, groups: dict, tags: dict, firmware=None) -> Place:
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
        """After a coordinator restart: define the places again (the coordinator saves them only
        every few seconds, so a killed one may have lost them)."""
        for place in self.places.values():
            self._define(place, check=False)

    def client(self, *args: str, check: bool = True, user: str | None = None) -> subprocess.CompletedProcess:
        """``labgrid-client -x ADDRESS ARGS...`` (an argv list); ``user``: as that user (LG_USERNAME)."""
        env = dict(os.environ, LG_USERNAME=user) if user else None
        proc = subprocess.run([_bin("labgrid-client"), "-x", self.address, *args], capture_output=True,
                              text=True, timeout=30, env=env)
        if check and proc.returncode != 0:
            raise RuntimeError(f"labgrid-client {' '.join(args)} failed: {proc.stderr.strip() or proc.stdout}")
        return proc

    def _wait_resources(self, place: Place, count: int, timeout_s: float = 20.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            out = self.client("resources", check=False).stdout
            if sum(line.startswith(place.exporter + "/") for line in out.splitlines()) >= count:
                return
            time.sleep(0.2)
        raise RuntimeError(f"exporter {place.exporter} did not register {count} resources "
                           f"(log: {(self.root / (place.exporter + '.log')).read_text()[-2000:]})")

    # -- exporters ----------------------------------------------------------------------
    def _start_exporter(self, place: Place) -> None:
        env = dict(os.environ, PATH=f"{self.bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
        log = open(self.root / f"{place.exporter}.log", "ab")
        place.proc = subprocess.Popen(
            [_bin("labgrid-exporter"), "--coordinator", self.address, "--name", place.exporter,
             "--hostname", "127.0.0.1", str(place.config)],
            cwd=self.root, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True)
        log.close()

    def _stop_exporter(self, place: Place) -> None:
        proc = place.proc
        if proc is None:
            return
        if proc.poll() is None:
            os.killpg(proc.pid, 15)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(proc.pid, 9)   # ser2net children left behind
        except ProcessLookupError:
            pass
        proc.wait(timeout=5)

    def _supervise(self) -> None:
        while not self._stop.wait(0.3):
            if not self.coordinator_alive():
                continue
            with self._lock:
                for place in self.places.values():
                    if place.proc is not None and place.proc.poll() is not None:
                        self._stop_exporter(place)
                        self._start_exporter(place)
                        self.restarts += 1

    def wait_exporters(self, timeout_s: float = 20.0) -> None:
        """Every place's resources registered again (after a coordinator restart)."""
        for place in list(self.places.values()):
            self._wait_resources(place, 1, timeout_s)

    # -- the loopback rule --------------------------------------------------------------
    def pids(self) -> list[int]:
        roots = [p for p in [self.coordinator, *[pl.proc for pl in self.places.values()]] if p is not None]
        pids = {p.pid for p in roots if p.poll() is None}
        return sorted(pids | set(_children_of(pids)))     # and the exporters' children (ser2net)

    def children(self, place: str) -> list[int]:
        """Pids of the processes the exporter of ``place`` started (its ser2net while acquired)."""
        proc = self.places[place].proc
        if proc is None or proc.poll() is not None:
            return []
        return _children_of({proc.pid})

    def listeners(self) -> list[tuple[int, str, int]]:
        """(pid, local address, port) of every listening TCP socket (and bound UDP socket) of the
        farm's processes (ser2net's mDNS, if it ran, would show here)."""
        inodes: dict[str, int] = {}
        for pid in self.pids():
            try:
                for fd in Path(f"/proc/{pid}/fd").iterdir():
                    try:
                        target = os.readlink(fd)
                    except OSError:
                        continue
                    if target.startswith("socket:["):
                        inodes[target[8:-1]] = pid
            except OSError:
                continue
        found = []
        for table in ("/proc/net/tcp", "/proc/net/tcp6", "/proc/net/udp", "/proc/net/udp6"):
            try:
                lines = Path(table).read_text().splitlines()[1:]
            except OSError:
                continue
            listening = "07" if "udp" in table else "0A"      # UDP: unconnected (bound); TCP: LISTEN
            for line in lines:
                cols = line.split()
                if cols[3] != listening or cols[9] not in inodes:
                    continue
                addr_hex, port_hex = cols[1].split(":")
                found.append((inodes[cols[9]], _addr(addr_hex), int(port_hex, 16)))
        return found

    def assert_loopback_only(self) -> list[tuple[int, str, int]]:
        found = self.listeners()
        bad = [f for f in found if f[1] not in ("127.0.0.1", "::1")]
        assert not bad, f"farm processes listen on non-loopback addresses: {bad}"
        return found


def _addr(hex_addr: str) -> str:
    raw = bytes.fromhex(hex_addr)
    if len(raw) == 4:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
    if words[:12] == b"\0" * 10 + b"\xff\xff":
        return socket.inet_ntop(socket.AF_INET, words[12:])
    return socket.inet_ntop(socket.AF_INET6, words)



def _children_of(parents: set) -> list[int]:
    """Pids whose parent is in ``parents`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if ppid in parents:
                found.append(int(entry.name))
    return found
