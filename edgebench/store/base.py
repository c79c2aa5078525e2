"""The results-store protocol (level 2a): what every store offers, and the records it speaks in.

Two stores implement it: the embedded index over a runs folder
(:mod:`edgebench.store.embedded`, DuckDB) and a lab's shared store (``edgebench.store.postgres``,
PostgreSQL with samples in a folder or bucket). Callers (``history``, ``check``, the verbs
that write runs) talk to :class:`ResultsStore` only; :func:`edgebench.store.open.open_store`
chooses the implementation from a URL. The rows a store keeps for a run come from one
function, :func:`edgebench.store.rows.run_rows`, shared by both.

A series is every run of one :class:`SeriesKey` (model name, board, runtime, kernels,
threads, scenario); a :class:`SeriesPoint` is one run's figure of one metric with its
interval. The model's content (sha256) and the run's conditions (digest) are carried by
each point, so a series shows where either changed. Change points found over a series are
:class:`ChangePoint` records a store keeps beside it.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import ClassVar, Optional, Protocol, Type, TypeVar, runtime_checkable

#: The metrics a series can be read for: name -> (unit, which way is better, what it is).
METRICS = {
    "e2e": ("s", "lower", "end-to-end latency per inference (median)"),
    "invoke": ("s", "lower", "interpreter invoke time per inference (median)"),
    "throughput": ("1/s", "higher", "inferences completed per second (achieved)"),
    "energy": ("J", "lower", "energy per inference"),
    "accuracy": ("fraction", "higher", "top-1 accuracy"),
}

#: What :meth:`ResultsStore.append` answers: the run was new, or the store holds it already.
ADDED, ALREADY = "added", "already"

_R = TypeVar("_R", bound="StoreRecord")


class StoreRecord:
    """Base of the store's dataclass records: to a dict and back, field by field."""

    __dataclass_fields__: ClassVar[dict]     # each record is a @dataclass (and so mypy knows it)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls: Type[_R], d: dict) -> _R:
        """The record from ``d``; keys that are not fields (written by a later version) are ignored."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


@dataclass(frozen=True)
class AppendOutcome(StoreRecord):
    """The result of appending one run: ``status`` is :data:`ADDED` or :data:`ALREADY`
    (the same run id with the same samples digest was there: nothing changed)."""
    run_id: str
    status: str
    samples_digest: str = ""


@dataclass(frozen=True, order=True)
class SeriesKey(StoreRecord):
    """What makes runs comparable over time: one model name on one board with one runtime,
    kernels, thread count and scenario. Missing parts are ``""`` (never None), so keys compare."""
    model: str
    board: str
    runtime: str = ""
    kernels: str = ""
    threads: str = ""
    scenario: str = ""

    @classmethod
    def from_dict(cls, d: dict) -> "SeriesKey":
        """The key from ``d``, every part a string (missing or None: ``""``)."""
        return cls(**{f.name: str(d.get(f.name) or "") for f in dataclasses.fields(cls)})

    def describe(self) -> str:
        parts = [self.model, f"on {self.board}"]
        parts += [p for p in (self.runtime, self.kernels and f"{self.kernels} kernels",
                              self.threads and f"{self.threads} thread(s)", self.scenario) if p]
        return " ".join(parts[:2]) + (f" ({', '.join(parts[2:])})" if len(parts) > 2 else "")


@dataclass(frozen=True)
class SeriesPoint(StoreRecord):
    """One run's figure of one metric in a series, with its interval.

    ``value`` is the headline figure (a median latency, an achieved rate, an energy, an
    accuracy); ``ci_low``/``ci_high`` its interval (None when the run has none);
    ``se_log``/``df`` the standard error of log(value) and its degrees of freedom where the
    interval allows them to be derived (what change-point detection weighs each point by);
    ``figure_label`` is ``measured`` / ``emulated`` / ``simulated`` / ``estimated``.
    ``labels`` are the run's ``--label key=value`` pairs (``commit`` among them by default).
    """
    run_id: str
    created_utc: str
    metric: str
    value: float
    ci_low: Optional[float] = None
    ci_high: Optional[float] = None
    se_log: Optional[float] = None
    df: Optional[float] = None
    figure_label: str = "measured"
    model_sha256: str = ""
    conditions_digest: str = ""
    labels: dict = field(default_factory=dict)

    @property
    def commit(self) -> str:
        return str(self.labels.get("commit") or "")

    def to_dict(self) -> dict:
        d = super().to_dict()
        d["commit"] = self.commit
        return d


@dataclass(frozen=True)
class ChangePoint(StoreRecord):
    """A level shift found in a series: the points from ``index`` on sit at ``ratio`` times
    the level before (``ci_low``..``ci_high`` its interval), with the permutation ``p_value``.

    ``run_before``/``run_after`` and ``commit_before``/``commit_after`` name the last point
    before the shift and the first after it: the change happened in that range.
    """
    index: int
    run_before: str
    run_after: str
    ratio: float
    ci_low: float
    ci_high: float
    p_value: float
    commit_before: str = ""
    commit_after: str = ""
    created_utc: str = ""
    method: str = ""


@runtime_checkable
class ResultsStore(Protocol):
    """What every results store offers (docs/store.md).

    ``append`` is idempotent on (run id, samples digest): appending a run the store holds
    answers :data:`ALREADY`; a run whose id is known with *other* samples is refused
    (:class:`~edgebench.errors.StoreError`, one line); a run that is not an edgebench run
    or does not validate is refused with :class:`~edgebench.errors.ResultError`. A store
    that cannot be reached raises :class:`~edgebench.errors.StoreUnreachable`.
    """

    url: str

    def append(self, run_dir) -> AppendOutcome:
        """Add the run in folder ``run_dir`` (run.json + samples.parquet) to the store."""
        ...

    def series(self) -> list:
        """Every :class:`SeriesKey` the store has runs of (sorted)."""
        ...

    def read_series(self, key: SeriesKey, metric: str) -> list:
        """The :class:`SeriesPoint` list of ``key`` for ``metric`` (a :data:`METRICS` name),
        oldest first (by ``created_utc``, then run id); runs without that figure are left out."""
        ...

    def record_changes(self, key: SeriesKey, metric: str, changes: list) -> None:
        """Replace the change points kept for (``key``, ``metric``) with ``changes``."""
        ...

    def changes(self, key: SeriesKey, metric: str) -> list:
        """The :class:`ChangePoint` list last recorded for (``key``, ``metric``)."""
        ...

    def close(self) -> None:
        """Release the connection (idempotent)."""
        ...


__all__ = ["ADDED", "ALREADY", "METRICS", "AppendOutcome", "ChangePoint", "ResultsStore", "SeriesKey", "SeriesPoint"]
