"""The run skeleton every measuring verb uses (level 4): one RunResult factory, one run folder
from start to end, and the same handling of every way a run can stop.

A verb creates its result with :func:`new_result`, opens a :class:`RunFolder` once it has
something to describe (the folder and a ``running`` run.json appear then), saves samples
and result as it goes (:meth:`RunFolder.save`: Parquet and JSON written atomically by
``edgebench.results.store``), and wraps its measuring in :meth:`RunFolder.guard`, which on
Ctrl-C, SIGTERM/SIGHUP (raised as KeyboardInterrupt by the CLI) or an error calls the
verb's own ``stop(status, reason)`` so what was measured is kept and the run is marked
``incomplete`` with the reason — or removes the folder when nothing was measured, so that
nothing half-written looks like a run.
"""
from __future__ import annotations

import datetime as _dt
import sys
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Literal, Optional, cast

from edgebench import __version__
from edgebench.errors import DiskFullError, EdgebenchError, ResultError, TransportError
from edgebench.results import kinds, store
from edgebench.results.conditions import BoardSection
from edgebench.results.model import RunResult, RunWarning

#: a run's label and status (RunResult.label, RunResult.status)
Label = Literal["measured", "emulated", "simulated", "estimated"]
Status = Literal["running", "complete", "incomplete", "failed"]


def status_of(text: str) -> Status:
    """``text`` as a run status (ValueError when it is not one)."""
    if text not in ("running", "complete", "incomplete", "failed"):
        raise ValueError(f"not a run status: {text!r}")
    return cast(Status, text)


def new_result(kind: str, label: Label = "measured", **sections) -> RunResult:
    """A fresh RunResult: new id, creation time, edgebench version, ``kind`` and ``label``."""
    return RunResult(run_id=uuid.uuid4().hex[:12],
                     created_utc=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                     edgebench_version=__version__, kind=kind, label=label, **sections)


def stop_reason(exc: BaseException) -> tuple[Status, str]:
    """``(status, reason)`` for a run stopped by ``exc``."""
    if isinstance(exc, KeyboardInterrupt):
        name = getattr(exc, "signal_name", None)
        return "incomplete", (f"stopped by {name}" if name else "interrupted by the user (Ctrl-C)")
    if isinstance(exc, EdgebenchError):
        return "incomplete", f"stopped by an error: {_farm_reason(exc) or exc.one_line()}"
    return "failed", f"stopped by an unexpected error: {type(exc).__name__}: {exc}"


def _farm_reason(exc) -> str | None:
    """A link error on a labgrid farm's board: the error and the place, without the local serial
    port's hint (list the ports, replug the adapter), which does not apply to a farm's link."""
    lease = sys.modules.get("edgebench.farm.lease")     # loaded only when a farm board is used
    held = lease.active() if lease is not None else None
    if held is None or not isinstance(exc, TransportError):
        return None
    return f"{exc.message.rstrip('.')} [on {held.describe()}]"


def _link_section(result: RunResult) -> None:
    """A microcontroller's serial link report (its client's ``status()["link"]``) as
    ``extra.link``, with a warning when the run needed retries or had no checksum."""
    # agent: the agent's own free-form report (a plain dict)
    link = ((result.agent or {}).get("status") or {}).get("link") or result.extra.link
    if not isinstance(link, dict):
        return
    from edgebench.mcu.link import link_warnings  # 0.11 s to import (-X importtime): a microcontroller's runs only

    result.extra.link = link
    kept = [w for w in result.warnings if w.code not in ("unchecked-link", "link-retries")]
    # the latest report replaces an earlier one
    result.warnings = kept + [RunWarning.model_validate(w) for w in link_warnings(link)]


def farm_section(result: RunResult) -> None:
    """The labgrid place this command holds (if any) as ``board.farm``: coordinator, place, exporter
    and its host, reservation, holder (:meth:`edgebench.farm.lease.Lease.conditions`)."""
    lease = sys.modules.get("edgebench.farm.lease")   # 0.65 s to import (-X importtime): loaded by a farm board only
    held = lease.active() if lease is not None else None
    if held is not None and result.board.farm is None:
        result.board.farm = held.conditions()


@contextmanager
def board_client(profile, url: str | None = None, client=None, emit=None, cpus: str | None = None, image=None):
    """The run's board: ``client`` if given (the caller keeps it), else one opened with
    :func:`edgebench.boards.connect.open_client` (``emit`` told of the connection) and closed
    afterwards."""
    if client is not None:
        yield client
        return
    from edgebench.boards.connect import open_client  # 0.49 s to import (-X importtime): every client kind

    if emit is not None:
        emit({"event": "connect", "board": profile.name})
    with open_client(profile, url, cpus=cpus, image=image) as opened:
        yield opened


class BoardRun:
    """A run driven over one board client by an object of a subclass (``_Soak``, ``_Sweep``): the
    client, the profile, the options ``o``, the runs folder and the progress callback ``emit``;
    ``subject`` is what the run measures (a soak's model, a sweep's models), which each subclass
    keeps under its own name."""

    def __init__(self, client, subject, profile, opts, runs_root, emit):
        self.client, self.profile, self.o = client, profile, opts
        self.runs_root, self.emit = runs_root, emit

    @classmethod
    def on_board(cls, subject, profile, opts, runs_root, url, progress, client):
        """``cls(client, subject, ...).run()`` on ``profile``'s board (``client`` if given, else one opened
        for the run, pinned to ``opts.cpus``); ``progress`` (may be None) is told of each step."""
        emit = progress or (lambda event: None)
        with board_client(profile, url, client, emit, cpus=opts.cpus) as opened:
            return cls(opened, subject, profile, opts, runs_root, emit).run()

    def run(self):  # pragma: no cover - each subclass runs its own kind
        raise NotImplementedError


def record_end_state(result: RunResult, client) -> None:
    """The board's thermal reading and status at the end of a run, into ``result`` (a board that
    cannot say keeps what the run started with)."""
    try:
        end = client.thermal()
        result.thermal.end = end
        result.thermal.available = bool(result.thermal.available or end.get("available"))
        result.agent["status"] = client.status()     # agent: a free-form dict
    except EdgebenchError:
        pass


def board_section(profile, transport: str, system: dict | None = None) -> BoardSection:
    """run.json ``board``: the profile's name, title and kind, how the board was reached (the
    client's ``description``), where the profile came from, and the board's system description
    (``client.sysinfo()``) when given."""
    section = {"name": profile.name, "title": profile.title, "kind": profile.kind,
               "transport": transport, "profile_origin": str(profile.origin or "")}
    if system is not None:
        section.update(system=system.get("system", system), collector_errors=system.get("collector_errors", {}))
    return BoardSection.model_validate(section)


class RunFolder:
    """One run folder under ``runs_root``, named after the model and board."""

    def __init__(self, runs_root, model_name: str, board_name: str):
        self.runs_root, self.model_name, self.board_name = runs_root, model_name, board_name
        self.path: Optional[Path] = None

    def start(self, result: RunResult) -> Path:
        """Create the folder and write ``result`` (status ``running``)."""
        self.path = store.new_run_dir(self.runs_root, self.model_name, self.board_name)
        store.write_result(self.path, result)
        return self.path

    def save(self, result: RunResult, frame=None) -> None:
        """Samples first (if any), then run.json: a reader never sees a result without its samples."""
        if self.path is None:
            return
        _link_section(result)
        farm_section(result)
        if frame is not None:
            store.write_samples(self.path, frame)
        store.write_result(self.path, result)

    def discard(self) -> None:
        if self.path is not None:
            store.discard_run_dir(self.path)
            self.path = None

    @contextmanager
    def guard(self, stop: Callable[[str, str], None], measured: Callable[[], bool]):
        """Run the body; on any exception keep what ``measured()`` says exists via ``stop``
        (status, reason), or discard the folder when nothing was measured; then re-raise."""
        try:
            yield self
        except BaseException as exc:
            if self.path is not None:
                if measured():
                    status, reason = stop_reason(exc)
                    try:
                        stop(status, reason)
                    except DiskFullError as full:   # nothing can be written: never leave it "running"
                        self.discard()
                        raise DiskFullError(f"{full.message}; the run could not be stored and was removed",
                                            full.hint) from None
                else:
                    self.discard()
            raise


def recover_stored(run_dir, kind, kept: str) -> RunResult:
    """Finish a run folder of ``kind`` (:mod:`edgebench.results.kinds`) left ``running`` by a crash or a
    kill, for a verb that stores its figures as it goes (``kept`` says what): run.json (or the journal's
    copy of it when damaged) as last stored, the samples its journal holds written out, the run marked
    incomplete. ResultError when the folder holds no unfinished run of that kind."""
    d = Path(run_dir)
    r = store.read_unfinished(d)
    if r.kind != kind.name or r.status != "running":
        raise ResultError(f"{d} is not an unfinished {kind.name} run (kind {r.kind}, status {r.status})",
                          "nothing to recover")
    frame = store.read_journal(d)
    if len(frame):
        store.write_samples(d, frame)
    r.status = "incomplete"
    r.status_reason = f"the {kind.verb} process stopped without finishing (crash or kill); {kept}"
    store.write_result(d, r)
    store.remove_journal(d)
    return r


def recover_profile(run_dir) -> RunResult:
    return recover_stored(run_dir, kinds.PROFILE, "the layer figures of the repeats it had finished are kept, "
                                                  "with their samples")


def recover_layer_error(run_dir) -> RunResult:
    return recover_stored(run_dir, kinds.LAYER_ERROR, "its comparison, stored first, is kept; the per-input "
                                                      "samples were not written")


def recover_selftest(run_dir) -> RunResult:
    return recover_stored(run_dir, kinds.SELFTEST, "its checks, stored first, are kept; the clock readings were "
                                                   "not written")


__all__ = ["BoardRun", "RunFolder", "new_result", "recover_stored", "recover_profile", "recover_layer_error", "recover_selftest", "stop_reason", "farm_section", "board_client", "board_section",
           "record_end_state"]
