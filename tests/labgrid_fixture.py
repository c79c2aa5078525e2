"""A real, throwaway labgrid farm on 127.0.0.1 for the tests: the product's local farm
(:class:`edgebench.farm.local.LocalFarm`: coordinator, exporters, ser2net bound to loopback, places)
with what the tests check on top: killing the coordinator, and that every socket of the farm's
processes listens on loopback only (:meth:`Farm.assert_loopback_only`, from /proc).

``Farm(root).start()`` runs the coordinator in ``root``; ``farm.add_posix_place(name, firmware_bin,
tags)`` adds a place exporting the posix firmware's pty. Processes are started with
``edgebench.transport.child.spawn_tied`` (each in a group of its own, dying with the test process).
"""
from __future__ import annotations

import os
import socket
from pathlib import Path

from edgebench.farm.local import LocalFarm, free_port, real_ser2net, tool, wait_port  # noqa: F401
from edgebench.transport.child import spawn_tied, stop_tied


class Farm(LocalFarm):
    def __init__(self, root: Path):
        super().__init__(root, spawn_tied, stop_tied)

    def kill_coordinator(self) -> None:
        """SIGKILL the coordinator (its exporters then exit; the supervisor restarts them later)."""
        if self.coordinator is not None and self.coordinator.poll() is None:
            self.coordinator.kill()
            self.coordinator.wait(timeout=10)

    # -- the loopback rule --------------------------------------------------------------
    def pids(self) -> list[int]:
        roots = [p for p in [self.coordinator, *[pl.proc for pl in self.places.values()]] if p is not None]
        pids = {p.pid for p in roots if p.poll() is None}
        return sorted(pids | set(children_of(pids)))     # and the exporters' children (ser2net)

    def children(self, place: str) -> list[int]:
        """Pids of the processes the exporter of ``place`` started (its ser2net while acquired)."""
        proc = self.places[place].proc
        if proc is None or proc.poll() is not None:
            return []
        return children_of({proc.pid})

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



def children_of(parents: set) -> list[int]:
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
