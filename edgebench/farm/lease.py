"""A place held for one edgebench command: reserved, acquired, its resources as URLs, released.

:func:`lease` reserves a place through the coordinator (labgrid's reservations: a filter of tags,
``name`` for one place), waits up to a limit while it is busy, acquires it, and waits for its
exporter to serve the resources (ser2net starts on acquisition). The :class:`Lease` says how to
reach the board: a serial URL for its NetworkSerialPort (``rfc2217://HOST:PORT?ign_set_control``,
or ``socket://`` for raw TCP), an ``ssh://`` URL for its NetworkService; and the conditions a run
records (coordinator, place, exporter and host, reservation, holder).

Holding a place is the farm's, never a side effect of looking a board up: the verb that runs on
the board calls :func:`hold` with its ``--board labgrid:...`` (:func:`edgebench.cli.board.board_profile`),
then takes the profile the place's tag names (:func:`edgebench.boards.registry.place_profile`).
Leases are process-wide (:data:`ACTIVE`): the command that opened one releases it in every exit
path through :func:`release_all` (called by the CLI's entry point, and at interpreter exit), so
its last error line can still name the place. A library caller can hold one for a block instead:
``with hold("labgrid:PLACE") as held:`` releases it when the block ends.
"""
from __future__ import annotations

import atexit
import datetime as _dt
import time
from dataclasses import dataclass, field
from typing import Callable, Collection, Optional

from edgebench.errors import EdgebenchError, ProfileError, TransportError, UsageError
from edgebench.farm import holders
from edgebench.farm.coordinator import Coordinator, PlaceInfo, ResourceInfo
from edgebench.farm.fanout import BUSY_EXIT
from edgebench.farm.spec import PROFILE_TAG, FarmSpec, parse_spec, wait_limit_s

SERIAL_CLASSES = ("NetworkSerialPort",)
SSH_CLASSES = ("NetworkService",)
POWER_CLASSES = ("NetworkPowerPort", "PDUDaemonPort", "NetworkYKUSHPowerPort", "NetworkUSBPowerPort",
                 "NetworkSiSPMPowerPort", "TasmotaPowerPort")
RESOURCE_WAIT_S = 15.0
POWER_TAG = "edgebench-power-cycle"        # "no": keep the board powered as it is
OFF_TAG = "edgebench-power-off-s"          # seconds off in a power cycle (default 2)
BOOT_TAG = "edgebench-boot-s"              # seconds to wait after power-on (default 1; ssh boards: until sshd answers)

ACTIVE: list[Lease] = []          # the leases this process holds
Progress = Callable[[str], None]  # told a line when the wait for a busy place starts


class PlaceBusy(TransportError):
    """The place (or every matching place) stayed taken by someone else for the whole wait.
    Exit code 75 (EX_TEMPFAIL: try again later), so a fan-out or a CI job can tell it apart."""

    exit_code = BUSY_EXIT


class PlaceAbandoned(TransportError):
    """Every matching place is held by this user on this host for an edgebench command that is
    gone (killed outright): waiting would not free it. Exit code 1, at once."""


@dataclass
class Lease:
    coordinator: Coordinator
    place: PlaceInfo
    reservation: str | None
    spec: FarmSpec
    acquired_utc: str
    waited_s: float
    power: dict = field(default_factory=dict)   # the power cycle done on acquisition, if any
    released: bool = False
    release_error: str | None = None
    notes: list[str] = field(default_factory=list)

    # -- how to reach the board -----------------------------------------------------------
    @property
    def profile(self) -> str | None:
        return self.place.profile

    def resource(self, classes: Collection[str]) -> ResourceInfo | None:
        return next((r for r in self.place.resources if r.cls in classes), None)

    def serial_url(self) -> str | None:
        r = self.resource(SERIAL_CLASSES)
        if r is None:
            return None
        host, port = r.params.get("host"), r.params.get("port")
        if r.params.get("protocol", "rfc2217") == "raw":
            return f"socket://{host}:{port}"
        # ign_set_control: ser2net in front of a pseudo-terminal cannot set modem lines
        return f"rfc2217://{host}:{port}?ign_set_control"

    def serial_baud(self) -> int | None:
        r = self.resource(SERIAL_CLASSES)
        return int(r.params["speed"]) if r is not None and r.params.get("speed") else None

    def ssh_url(self) -> str | None:
        r = self.resource(SSH_CLASSES)
        if r is None:
            return None
        user, address, port = r.params.get("username"), r.params.get("address"), r.params.get("port", 22)
        host = f"[{address}]" if ":" in str(address) else address
        return f"ssh://{user + '@' if user else ''}{host}:{port}"

    def exporters(self) -> list[str]:
        return sorted({r.exporter for r in self.place.resources})

    def hosts(self) -> list[str]:
        return sorted({str(r.params.get("host") or r.params.get("address")) for r in self.place.resources
                       if r.params.get("host") or r.params.get("address")})

    def describe(self) -> str:
        return (f"labgrid place {self.place.name} (exporter {', '.join(self.exporters()) or 'none'} on "
                f"{', '.join(self.hosts()) or 'unknown host'}, coordinator {self.coordinator.address})")

    def conditions(self) -> dict:
        """What a run records about where its board came from (run.json ``board.farm``)."""
        return {"engine": "labgrid", "coordinator": self.coordinator.address, "place": self.place.name,
                "tags": dict(self.place.tags), "profile": self.profile, "spec": self.spec.spec(),
                "exporters": self.exporters(), "exporter_hosts": self.hosts(), "reservation": self.reservation,
                "acquired_by": self.coordinator.user, "acquired_utc": self.acquired_utc,
                "waited_s": round(self.waited_s, 3),
                "resources": [{"cls": r.cls, "exporter": r.exporter, "group": r.group, "name": r.name}
                              for r in self.place.resources],
                "power_port": bool(self.resource(POWER_CLASSES)), "power_cycle": self.power or None}

    # -- cold start -------------------------------------------------------------------------
    def power_cycle(self) -> dict:
        """Power-cycle the board for a cold start when the place has a power port (unless its
        ``edgebench-power-cycle`` tag says ``no``), through ``labgrid-client power cycle`` (an argv
        list; the same host and user as this session, so the acquisition covers it); then wait for
        the board: ``edgebench-boot-s`` seconds, and for an ssh board until its sshd answers."""
        port = self.resource(POWER_CLASSES)
        if port is None or self.place.tags.get(POWER_TAG, "yes").lower() in ("no", "false", "0"):
            return {}
        off_s = _tag_seconds(self.place, OFF_TAG, 2.0)
        boot_s = _tag_seconds(self.place, BOOT_TAG, 1.0)
        started = time.monotonic()
        _labgrid_client(self.coordinator.address, "-p", self.place.name, "power", "cycle", "--delay", f"{off_s:g}")
        time.sleep(boot_s)
        ssh = self.resource(SSH_CLASSES)
        if ssh is not None:
            _wait_tcp(str(ssh.params.get("address")), int(ssh.params.get("port") or 22), max(60.0, boot_s * 4),
                      self.place.name)
        self.power = {"resource": port.cls, "exporter": port.exporter, "off_s": off_s, "boot_wait_s": boot_s,
                      "elapsed_s": round(time.monotonic() - started, 3),
                      "utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
        return self.power

    # -- release ------------------------------------------------------------------------------
    def __enter__(self) -> "Lease":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def release(self) -> str | None:
        """Release the place and cancel the reservation; an error line if that failed (else None)."""
        if self.released:
            return self.release_error
        self.released = True
        if self in ACTIVE:
            ACTIVE.remove(self)
        holders.forget(self.coordinator.address, self.place.name)
        try:
            if self.coordinator.alive():
                self.coordinator.release(self.place.name)
                if self.reservation:
                    try:
                        self.coordinator.cancel_reservation(self.reservation)
                    except TransportError:
                        pass     # an acquired reservation may already be gone with the place
            else:
                raise self.coordinator.unreachable("the session ended")
        except TransportError as exc:
            self.release_error = (f"place {self.place.name} not released: {exc.message} (a restarted coordinator "
                                  f"frees it; else: labgrid-client -p {self.place.name} release)")
        finally:
            self.coordinator.close()
        return self.release_error


def hold(board: str, wait_s: float | None = None, address: str | None = None,
         progress: Optional[Progress] = None) -> Lease:
    """Reserve and acquire the place ``board`` names (``labgrid:PLACE`` or ``labgrid:TAG=VALUE,...``)
    for the rest of this command (or for a ``with`` block); :func:`lease` of its parsed spec."""
    return lease(parse_spec(board), wait_s=wait_s, address=address, progress=progress)


def lease(spec: FarmSpec, wait_s: float | None = None, address: str | None = None,
          progress: Optional[Progress] = None) -> Lease:
    """Reserve and acquire a place matching ``spec``; wait up to ``wait_s`` while it is busy."""
    wait_s = wait_limit_s(wait_s)
    coordinator = Coordinator(address).open()
    token = None
    try:
        coordinator.sync()
        candidates = [p for p in coordinator.places() if p.matches(spec.tags)]
        if not candidates:
            names = [p.name for p in coordinator.places()]
            raise ProfileError(f"no labgrid place matches {spec.describe()} on coordinator {coordinator.address} "
                               f"(places: {', '.join(names) or 'none'})", "list them: edgebench farm")
        without = [p.name for p in candidates if not p.profile]
        if len(without) == len(candidates):
            raise ProfileError(f"labgrid place {without[0]} has no {PROFILE_TAG} tag naming its board profile",
                               f"labgrid-client -p {without[0]} set-tags {PROFILE_TAG}=BOARD (see edgebench boards)")
        abandoned = abandoned_places(coordinator, candidates)
        if abandoned and all(p.acquired or p.reservation for p in candidates):
            raise abandoned_error(abandoned)     # waiting would not free them: say so at once
        started = time.monotonic()
        token = coordinator.reserve(dict(spec.tags))
        said = False
        while True:
            state, allocated = coordinator.poll_reservation(token)
            if state in ("allocated", "acquired") and allocated:
                name = allocated
                break
            if state in ("expired", "invalid"):
                raise TransportError(f"labgrid reservation {token} for {spec.describe()} became {state}")
            waited = time.monotonic() - started
            if waited >= wait_s:
                raise busy_error(coordinator, spec, candidates, wait_s)
            if progress is not None and not said:
                progress(f"waiting up to {wait_s:g} s for {spec.describe()} (busy)")
                said = True
            coordinator.run(_sleep(min(0.5, max(0.05, wait_s - waited))))
        coordinator.acquire(name)
        holders.record(coordinator.address, name, reservation=token, acquired_by=coordinator.user)
        waited_s = time.monotonic() - started
        place = coordinator.place(name)
        if place is None:    # deleted on the coordinator (labgrid-client delete) as it was acquired
            holders.forget(coordinator.address, name)
            raise TransportError(f"labgrid place {name} vanished from coordinator {coordinator.address} as it was "
                                 "acquired", "list the places: edgebench farm")
        held = Lease(coordinator, place, token, spec,
                     _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), waited_s)
        ACTIVE.append(held)
    except BaseException:
        if token is not None and coordinator.alive():
            try:
                coordinator.cancel_reservation(token)
            except Exception:  # noqa: BLE001 - the first error is the one to report
                pass
        coordinator.close()
        raise
    try:
        if not held.profile:      # a tag filter can match a place that names no profile
            raise ProfileError(f"labgrid place {name} has no {PROFILE_TAG} tag naming its board profile",
                               f"labgrid-client -p {name} set-tags {PROFILE_TAG}=BOARD (see edgebench boards)")
        _wait_served(held)
        held.power_cycle()
    except BaseException:
        held.release()
        raise
    return held


def busy_error(coordinator: Coordinator, spec: FarmSpec, candidates: list[PlaceInfo], wait_s: float) -> PlaceBusy:
    coordinator.sync()
    held, mine = [], []
    for p in candidates:
        now = coordinator.place(p.name) or p
        who = now.acquired or (f"a reservation ({now.reservation})" if now.reservation else None)
        if who:
            held.append(who if spec.place else f"{p.name} by {who}")
        if now.acquired == coordinator.user:
            mine.append(p.name)
    taken = ("by " + held[0] if spec.place and held else f"({'; '.join(held) or 'all of them'})")
    hint = "try later, wait longer (EDGEBENCH_FARM_WAIT=SECONDS), or pick another place (edgebench farm)"
    if mine:     # held by this user on this host, by no edgebench command recorded here
        hint = (f"{'it is' if spec.place else ', '.join(mine) + ' are'} held by you on this host: if nothing of "
                f"yours uses {'it' if len(mine) == 1 else 'them'} any more, release with labgrid-client -p "
                f"{mine[0]} release; else " + hint)
    return PlaceBusy(f"{spec.describe()} is taken {taken}; waited {wait_s:g} s", hint)


def abandoned_places(coordinator: Coordinator,
                     candidates: list[PlaceInfo]) -> list[tuple[PlaceInfo, dict, str]]:
    """``(place, holder record, why)`` of the candidates acquired by this user on this host for an
    edgebench command recorded as gone (:func:`edgebench.farm.holders.gone_holder`)."""
    out = []
    for p in candidates:
        if p.acquired and p.acquired == coordinator.user:
            gone = holders.gone_holder(coordinator.address, p.name)
            if gone:
                out.append((p, *gone))
    return out


def abandoned_error(abandoned: list[tuple[PlaceInfo, dict, str]]) -> PlaceAbandoned:
    p, held, why = abandoned[0]
    names = " ".join(a[0].name for a in abandoned)
    return PlaceAbandoned(f"place {p.name} is held by {p.acquired} (you, on this host) for {holders.describe(held)}, "
                          f"which ended without releasing it ({why.removeprefix('its process ')})",
                          f"take it over: edgebench farm --take-over {names} (or: labgrid-client -p {p.name} release)")


def take_over(places: list[str], address: str | None = None) -> list[str]:
    """Release each place of ``places`` that this user on this host holds for an edgebench command
    that is gone (and cancel that command's reservation); the lines saying what was done.
    UsageError for a place held by someone else, by a command still running, or by nothing
    edgebench recorded here (labgrid-client's own release is the way then)."""
    done = []
    with Coordinator(address) as coordinator:
        coordinator.sync()
        for name in places:
            p = coordinator.place(name)
            if p is None:
                raise UsageError(f"no labgrid place {name} on coordinator {coordinator.address}",
                                 "list them: edgebench farm")
            if not p.acquired:
                done.append(f"place {name} is not held by anyone: nothing to take over")
                continue
            if p.acquired != coordinator.user:
                raise UsageError(f"place {name} is held by {p.acquired}, not by you ({coordinator.user})",
                                 f"ask them, or force it: labgrid-client -p {name} release --kick")
            held = holders.read(coordinator.address, name)
            if held is None:
                raise UsageError(f"place {name} is held by you ({p.acquired}), but by no edgebench command recorded "
                                 "on this computer (another terminal's labgrid-client acquire?)",
                                 f"if nothing uses it: labgrid-client -p {name} release")
            if holders.gone(held) is None:
                raise UsageError(f"place {name} is held by {holders.describe(held)}, which is still running",
                                 f"stop that command (kill {held.get('pid')}) or let it finish")
            coordinator.release(name)
            if held.get("reservation"):
                try:
                    coordinator.cancel_reservation(held["reservation"])
                except TransportError:
                    pass          # gone with the place, or expired
            holders.forget(coordinator.address, name, only_mine=False)
            done.append(f"released place {name}: it was held for {holders.describe(held)}, which is gone")
    return done


def _wait_served(held: Lease) -> None:
    """The exporter serves the place's resources (a NetworkSerialPort gets its port on acquisition)."""
    def ready() -> bool:
        held.place = held.coordinator.place(held.place.name) or held.place
        serial = held.resource(SERIAL_CLASSES)
        if not held.place.resources:
            return False
        return all(r.avail for r in held.place.resources) and (serial is None or bool(serial.params.get("port")))

    if not held.coordinator.wait_for(ready, RESOURCE_WAIT_S):
        missing = [f"{r.exporter}/{r.group}/{r.cls}" for r in held.place.resources if not r.avail]
        raise TransportError(f"labgrid place {held.place.name}: its exporter does not serve "
                             f"{', '.join(missing) or 'any resource'} (exporter gone, or the board unplugged?)",
                             "check the exporter on the board's host: labgrid-client resources")


def _tag_seconds(place: PlaceInfo, tag: str, default: float) -> float:
    text = place.tags.get(tag)
    if text is None:
        return default
    try:
        return max(0.0, float(text))
    except ValueError:
        raise ProfileError(f"labgrid place {place.name}: tag {tag}={text!r} is not a number of seconds",
                           f"labgrid-client -p {place.name} set-tags {tag}=5") from None


def _labgrid_client(address: str, *args: str, timeout_s: float = 120.0) -> str:
    """``labgrid-client -x ADDRESS ARGS...`` (labgrid's own CLI, as an argv list); its output."""
    import os
    import shutil
    import subprocess
    import sys

    exe = shutil.which("labgrid-client") or os.path.join(os.path.dirname(sys.executable), "labgrid-client")
    try:
        proc = subprocess.run([exe, "-x", address, *args], capture_output=True, text=True, timeout=timeout_s,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise TransportError(f"labgrid-client {' '.join(args)} failed: {exc}") from None
    if proc.returncode != 0:
        last = (proc.stderr.strip() or proc.stdout.strip() or f"exit {proc.returncode}").splitlines()[-1]
        raise TransportError(f"labgrid-client {' '.join(args)} failed: {last}",
                             "check the place's power switch: labgrid-client -p PLACE power get")
    return proc.stdout


def _wait_tcp(host: str, port: int, timeout_s: float, place: str) -> None:
    import socket

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with socket.create_connection((host, port), timeout=2.0):
                return
        except OSError as exc:
            if time.monotonic() >= deadline:
                raise TransportError(f"labgrid place {place}: the board did not answer on {host}:{port} within "
                                     f"{timeout_s:g} s of power-on ({exc})",
                                     f"raise its boot time: labgrid-client -p {place} set-tags {BOOT_TAG}=SECONDS") \
                    from None
            time.sleep(0.5)


async def _sleep(seconds: float) -> None:
    import asyncio

    await asyncio.sleep(seconds)


def active() -> Lease | None:
    """The lease this process holds (the latest), if any."""
    return ACTIVE[-1] if ACTIVE else None


def release_all() -> list[str]:
    """Release every lease this process holds; the lines saying what could not be released."""
    lines = []
    for held in list(ACTIVE):
        line = held.release()
        if line:
            lines.append(line)
    return lines


atexit.register(release_all)


def released_line(error: EdgebenchError | None = None) -> list[str]:
    """Release what this process holds; the lines to print. With ``error`` (the EdgebenchError that
    ended the command): one line naming the place it happened on and what became of the place."""
    held = list(ACTIVE)
    notes = release_all()
    if error is None:
        return notes
    line = error.one_line()
    if not held:
        return [line]
    last = held[-1]
    if isinstance(error, TransportError) and last.release_error and not isinstance(error, PlaceBusy):
        # the link broke because the farm went away: say that, not the serial port's own hint
        what = error.message.rstrip(".")
        return [f"the link to the board on {last.describe()} broke ({what}); place {last.place.name} not "
                f"released: the coordinator is unreachable (a restarted coordinator frees it; else: "
                f"labgrid-client -p {last.place.name} release)"]
    if isinstance(error, TransportError) and not isinstance(error, PlaceBusy) and last.place.name not in line:
        # a local port's hint (list the serial ports, unplugged adapter) does not apply to a farm's link
        return [f"{error.message.rstrip('.')} [on {last.describe()}]: is exporter "
                f"{', '.join(last.exporters()) or '?'} still serving the place? (labgrid-client -p {last.place.name} "
                f"show); place {last.place.name} released"]
    if last.place.name not in line:
        line = f"{line} [on {last.describe()}]"
    return ["; ".join([line, *notes])]
