"""One session with a labgrid coordinator, through labgrid's own client (``labgrid.remote.client``).

labgrid is imported here only, when a session opens, so edgebench works without the
``edgebench[farm]`` extra (:func:`load_labgrid` says how to install it). A session runs
labgrid's asyncio client on a private event loop; each call runs it to completion.

The coordinator's answers become plain data: :class:`PlaceInfo` per place (tags, who acquired
it, its reservation, its matched resources as :class:`ResourceInfo`).
"""
from __future__ import annotations

import asyncio
import logging
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable, Coroutine, Iterator, Mapping, Optional, Protocol, TypeVar

from edgebench.errors import TransportError, UsageError
from edgebench.farm.spec import PROFILE_TAG, coordinator_address

INSTALL_HINT = "pip install 'edgebench[farm]' (labgrid 26.x, Python 3.10 or newer)"
CONNECT_TIMEOUT_S = 10.0
CALL_TIMEOUT_S = 30.0
T = TypeVar("T")


# labgrid ships no type hints (no py.typed: mypy sees its modules as Any). What edgebench uses of
# its client's objects is declared here, so a misspelt attribute or a missed None is caught.
class LabgridResource(Protocol):
    """labgrid.remote.common.ResourceEntry: one exported resource, as the coordinator reports it."""

    @property
    def cls(self) -> str: ...
    @property
    def params(self) -> Mapping[str, Any]: ...
    @property
    def avail(self) -> bool: ...
    @property
    def acquired(self) -> Optional[str]: ...


class LabgridPlace(Protocol):
    """labgrid.remote.common.Place."""

    name: str
    tags: Mapping[str, str]
    acquired: Optional[str]
    reservation: Optional[str]
    comment: str

    def getmatch(self, resource_path: tuple[str, str, str, str]) -> object | None: ...


class LabgridSession(Protocol):
    """labgrid.remote.client.ClientSession: the coordinator's state, kept current by its message pump."""

    stub: Any     # the generated gRPC CoordinatorStub: edgebench calls its methods by name (rpc())
    stopping: asyncio.Event
    places: dict[str, LabgridPlace]
    resources: dict[str, dict[str, dict[str, LabgridResource]]]     # exporter -> group -> name -> entry

    def gethostname(self) -> str: ...
    def getuser(self) -> str: ...
    async def start(self) -> None: ...
    async def stop(self) -> None: ...
    async def close(self) -> None: ...
    async def sync_with_coordinator(self) -> bool: ...


def load_labgrid() -> tuple[ModuleType, ModuleType, ModuleType]:
    """labgrid's client modules; UsageError naming the extra when labgrid is missing."""
    # edgebench forks children (agents, emulators) while a session may be open; gRPC's fork
    # handlers then crash the child (SIGSEGV): keep them off unless the user asked otherwise
    os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
    try:
        from labgrid.remote import client, common
        from labgrid.remote.generated import labgrid_coordinator_pb2 as pb2
    except ImportError as exc:
        raise UsageError(f"labgrid farms need the labgrid package ({exc.name or exc} is not importable)",
                         INSTALL_HINT) from None
    return client, common, pb2


@dataclass
class ResourceInfo:
    """One exported resource matched by a place: (exporter, group, class, name) and its parameters."""

    exporter: str
    group: str
    cls: str
    name: str
    params: dict[str, Any]
    avail: bool = True
    acquired: str | None = None

    def to_dict(self) -> dict:
        return {"exporter": self.exporter, "group": self.group, "cls": self.cls, "name": self.name,
                "params": self.params, "avail": self.avail, "acquired": self.acquired}


@dataclass
class PlaceInfo:
    name: str
    tags: dict[str, str]
    acquired: str | None = None
    reservation: str | None = None
    comment: str = ""
    resources: list[ResourceInfo] = field(default_factory=list)

    @property
    def profile(self) -> str | None:
        return self.tags.get(PROFILE_TAG) or self.tags.get(PROFILE_TAG.replace("-", "_"))

    def matches(self, tags: Mapping[str, str]) -> bool:
        have = dict(self.tags, name=self.name)
        return all(have.get(k) == v for k, v in tags.items())

    def to_dict(self) -> dict:
        return {"name": self.name, "tags": dict(self.tags), "profile": self.profile, "acquired": self.acquired,
                "reservation": self.reservation, "comment": self.comment,
                "resources": [r.to_dict() for r in self.resources]}


@contextmanager
def _quiet_root_logger() -> Iterator[None]:
    """labgrid's client logs errors on the root logger; without handlers Python prints them."""
    root = logging.getLogger()
    handler = None
    if not root.handlers:
        handler = logging.NullHandler()
        root.addHandler(handler)
    try:
        yield
    finally:
        if handler is not None:
            root.removeHandler(handler)


class Coordinator:
    """A client session with the coordinator at ``address`` (HOST:PORT, default $LG_COORDINATOR)."""

    def __init__(self, address: str | None = None):
        self.address = coordinator_address(address)
        self._client, self._common, self._pb2 = load_labgrid()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._session: LabgridSession | None = None

    # -- session -----------------------------------------------------------------------
    def open(self) -> "Coordinator":
        loop = self._loop = asyncio.new_event_loop()   # private: the thread's current loop is left alone
        try:
            async def make() -> LabgridSession:   # grpc.aio binds the channel to the loop running when it is made
                session: LabgridSession = self._client.ClientSession(self.address, loop)   # Any: see LabgridSession
                return session

            session = self._session = loop.run_until_complete(make())
            self.run(session.start(), CONNECT_TIMEOUT_S, "connecting")
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        session, loop = self._session, self._loop
        self._session = None
        if loop is None:
            return
        with _quiet_root_logger():
            if session is not None:
                for step in (session.stop, session.close):
                    try:
                        loop.run_until_complete(asyncio.wait_for(step(), 5.0))
                    except BaseException:  # noqa: BLE001 - closing a broken session must not raise
                        pass
            try:
                loop.close()
            except Exception:  # noqa: BLE001
                pass
        self._loop = None

    def __enter__(self) -> "Coordinator":
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def alive(self) -> bool:
        return self._session is not None and not self._session.stopping.is_set()

    def live(self) -> LabgridSession:
        """The open session (TransportError when there is none: never opened, or closed)."""
        if self._session is None:
            raise TransportError(f"no session with the labgrid coordinator {self.address}")
        return self._session

    def run(self, coro: Coroutine[Any, Any, T], timeout_s: float = CALL_TIMEOUT_S,
            doing: str = "talking to it") -> T:
        """Run one labgrid coroutine; its failures become one TransportError."""
        if self._loop is None:
            raise TransportError(f"no session with the labgrid coordinator {self.address}")
        client = self._client
        with _quiet_root_logger():
            try:
                return self._loop.run_until_complete(asyncio.wait_for(coro, timeout_s))
            except asyncio.TimeoutError:
                raise self.unreachable(f"no answer within {timeout_s:g} s while {doing}") from None
            except client.ServerError as exc:
                if self._session is not None and self._session.stopping.is_set():
                    raise self.unreachable(str(exc).removeprefix("Error: ")) from None
                raise TransportError(f"labgrid coordinator {self.address}: {str(exc).removeprefix('Error: ')}") from None
            except client.UserError as exc:
                raise UsageError(f"labgrid: {str(exc).removeprefix('Error: ')}") from None
            except Exception as exc:
                if type(exc).__module__.startswith("grpc"):
                    details = exc.details() if hasattr(exc, "details") else str(exc)
                    raise self.unreachable(details) from None
                raise

    def unreachable(self, detail: str) -> TransportError:
        return TransportError(f"labgrid coordinator {self.address} is unreachable ({detail})",
                              hint="is labgrid-coordinator running there? set LG_COORDINATOR=HOST:PORT")

    def rpc(self, name: str, request: Any, doing: str) -> Any:
        """One unary call on the coordinator's stub (its grpc errors become TransportError); the
        reply is a protobuf message (Any: labgrid's generated modules carry no types)."""
        import grpc

        stub = self.live().stub

        async def call() -> Any:
            try:
                return await getattr(stub, name)(request)
            except grpc.aio.AioRpcError as exc:
                code = exc.code()
                if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                    raise self.unreachable(exc.details() or code.name) from None
                raise TransportError(f"labgrid coordinator {self.address}: {doing}: {exc.details()}") from None
        return self.run(call(), doing=doing)

    def sync(self) -> None:
        """Wait until the coordinator processed everything sent so far (place/resource updates arrive)."""
        ok = self.run(self.live().sync_with_coordinator(), doing="synchronising")
        if not ok:
            raise self.unreachable("the session ended")

    # -- what the coordinator knows ------------------------------------------------------
    @property
    def user(self) -> str:
        session = self.live()
        return f"{session.gethostname()}/{session.getuser()}"

    def places(self) -> list[PlaceInfo]:
        """Every place with its tags, holder, reservation and the resources it matches."""
        return [self._place_info(p) for _, p in sorted(self.live().places.items())]

    def place(self, name: str) -> PlaceInfo | None:
        raw = self.live().places.get(name)
        return self._place_info(raw) if raw is not None else None

    def _place_info(self, place: LabgridPlace) -> PlaceInfo:
        resources = []
        for exporter, groups in sorted(self.live().resources.items()):
            for group, entries in sorted(groups.items()):
                for name, entry in sorted(entries.items()):
                    path = (exporter, group, entry.cls, name)
                    if place.getmatch(path) is None:
                        continue
                    resources.append(ResourceInfo(exporter, group, entry.cls, name, dict(entry.params),
                                                  bool(entry.avail), entry.acquired))
        return PlaceInfo(place.name, dict(place.tags), place.acquired or None, place.reservation or None,
                         place.comment or "", resources)

    # -- reservations and acquisition ------------------------------------------------------
    def reserve(self, tags: Mapping[str, str]) -> str:
        pb2 = self._pb2
        request = pb2.CreateReservationRequest(filters={"main": pb2.Reservation.Filter(filter=dict(tags))}, prio=0)
        response = self.rpc("CreateReservation", request, "creating a reservation")
        token: str = response.reservation.token
        return token

    def poll_reservation(self, token: str) -> tuple[str, str | None]:
        """(state name, allocated place or None) of reservation ``token``."""
        pb2 = self._pb2
        response = self.rpc("PollReservation", pb2.PollReservationRequest(token=token), "polling the reservation")
        res = self._common.Reservation.from_pb2(response.reservation)
        places = [p for group in res.allocations.values() for p in group]
        return res.state.name, (places[0] if places else None)

    def cancel_reservation(self, token: str) -> None:
        self.rpc("CancelReservation", self._pb2.CancelReservationRequest(token=token), "cancelling the reservation")

    def acquire(self, place: str) -> None:
        self.rpc("AcquirePlace", self._pb2.AcquirePlaceRequest(placename=place), f"acquiring place {place}")
        self.sync()

    def release(self, place: str) -> None:
        self.rpc("ReleasePlace", self._pb2.ReleasePlaceRequest(placename=place), f"releasing place {place}")
        self.sync()

    def wait_for(self, predicate: Callable[[], T], timeout_s: float, poll_s: float = 0.1) -> T:
        """Sync with the coordinator until ``predicate()`` is truthy; its value, or None after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while True:
            self.sync()
            value = predicate()
            if value or time.monotonic() >= deadline:
                return value
            self.run(asyncio.sleep(poll_s))


@dataclass
class FarmListing:
    """What ``edgebench farm`` shows: the coordinator and its places."""

    coordinator: str
    user: str
    places: list[PlaceInfo]

    def to_dict(self) -> dict:
        return {"coordinator": self.coordinator, "user": self.user, "places": [p.to_dict() for p in self.places]}


def list_places(address: str | None = None, tags: Mapping[str, str] | None = None) -> FarmListing:
    """The coordinator's places (those with all of ``tags``, if given) and the resources they match."""
    with Coordinator(address) as coordinator:
        coordinator.sync()
        places = [p for p in coordinator.places() if not tags or p.matches(tags)]
        return FarmListing(coordinator.address, coordinator.user, places)
