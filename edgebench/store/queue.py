"""Runs waiting for a shared store (level 2a): a run that could not be appended stays in its
folder and gets a queue entry; ``edgebench push`` sends what is queued.

An entry is one small JSON file ``<runs folder>/.edgebench-queue/<run id>.json`` naming the
run folder, the store (its URL without password: the password comes from the environment
at push time) and why it was queued. Entries are written atomically
(:func:`edgebench.results.files.atomic_write`), so a queue is never half-written; queuing the
same run twice keeps one entry.

:func:`push` drains it (``edgebench push``): each run is appended (idempotent: a run the store
holds already just leaves the queue), a refused run stays queued with its reason, and a store
still unreachable leaves everything queued.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from edgebench.errors import ResultError, StoreUnreachable
from edgebench.results.files import atomic_write, fsync_dir
from edgebench.results.store import read_result
from edgebench.store.base import ADDED, ALREADY, StoreRecord
from edgebench.store.open import redact

QUEUE_DIR = ".edgebench-queue"


def queue_dir(root) -> Path:
    """The queue folder of a runs folder (created on use)."""
    return Path(root) / QUEUE_DIR


def enqueue(run_dir, url: str, reason: str) -> Path:
    """Queue the run in ``run_dir`` for the store at ``url`` because of ``reason``; the entry's path."""
    d = Path(run_dir).resolve()
    run_id = read_result(d).run_id
    q = queue_dir(d.parent)
    q.mkdir(exist_ok=True)
    entry = {"run_id": run_id, "run_dir": str(d), "url": redact(url), "reason": str(reason),
             "queued_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    text = json.dumps(entry, indent=2) + "\n"
    return atomic_write(q / f"{run_id}.json", lambda f: f.write(text.encode("utf-8")))


def pending(root) -> list:
    """The queue entries under runs folder ``root`` (oldest first); unreadable entries are left out."""
    q = queue_dir(root)
    out = []
    for p in sorted(q.glob("*.json")) if q.is_dir() else []:
        try:
            out.append(json.loads(p.read_text("utf-8")))
        except (OSError, ValueError):
            continue
    return sorted(out, key=lambda e: str(e.get("queued_utc", "")))


def entry_path(root, run_id: str) -> Path:
    """The queue entry of run ``run_id`` under runs folder ``root``."""
    return queue_dir(root) / f"{run_id}.json"


def dequeue(root, run_id: str) -> bool:
    """Remove the queue entry of ``run_id`` (the run reached its store); True when there was one."""
    p = entry_path(root, run_id)
    try:
        p.unlink()
    except FileNotFoundError:
        return False
    fsync_dir(p.parent)
    return True


@dataclass
class Pushed(StoreRecord):
    """What became of one run in a push: ``status`` is added / already / queued / refused."""
    run_id: str
    run_dir: str
    status: str
    message: str = ""


@dataclass
class PushReport:
    """The outcome of ``edgebench push``: each run, and what is still queued."""
    store: str
    runs: list = field(default_factory=list)
    still_queued: int = 0
    other_stores: int = 0

    def count(self, status: str) -> int:
        return sum(1 for r in self.runs if r.status == status)

    def to_dict(self) -> dict:
        return {"store": self.store, "runs": [r.to_dict() for r in self.runs], "still_queued": self.still_queued,
                "queued_for_other_stores": self.other_stores,
                "counts": {s: self.count(s) for s in (ADDED, ALREADY, QUEUED, REFUSED)}}


QUEUED, REFUSED = "queued", "refused"


def push(url: str, run_dirs=(), root="runs", opener=None) -> PushReport:
    """Send the named run folders and the queue of runs folder ``root`` to the store at ``url``.

    A run that arrives (or was there: idempotent) leaves the queue; a run the store refuses
    (tampered, foreign, another run under its id) stays in its folder and in the queue, with
    its one-line reason; when the store cannot be reached every named run is queued and nothing
    is lost. ``opener(url)`` opens the store (default :func:`edgebench.store.open.open_store`)."""
    from edgebench.store.open import open_store

    safe = redact(url)
    report = PushReport(store=safe)
    entries = pending(root)
    mine = [e for e in entries if e.get("url") == safe]
    report.other_stores = len(entries) - len(mine)
    todo, seen = [], set()
    for d in [Path(x) for x in run_dirs] + [Path(str(e.get("run_dir", ""))) for e in mine]:
        key = str(d.resolve())
        if key not in seen:
            seen.add(key)
            todo.append(d)
    if not todo:
        return report
    try:
        store = (opener or open_store)(url)
    except StoreUnreachable as exc:
        for d in todo:
            report.runs.append(_queue(d, url, exc.one_line()))
        return _count_queue(report, root, safe)
    try:
        for d in todo:
            report.runs.append(_push_one(store, d, url))
    finally:
        store.close()
    return _count_queue(report, root, safe)


def _count_queue(report: PushReport, root, safe: str) -> PushReport:
    """What is left queued for this store and for others, after the push."""
    left = pending(root)
    report.still_queued = sum(1 for e in left if e.get("url") == safe)
    report.other_stores = len(left) - report.still_queued
    return report


def _queue(d: Path, url: str, reason: str) -> Pushed:
    try:
        run_id = read_result(d).run_id
        enqueue(d, url, reason)
    except ResultError as exc:
        return Pushed(d.name, str(d), REFUSED, exc.one_line())
    return Pushed(run_id, str(d), QUEUED, reason)


def _push_one(store, d: Path, url: str) -> Pushed:
    try:
        outcome = store.append(d)
    except StoreUnreachable as exc:    # the store went away mid-push: this run and the rest stay queued
        return _queue(d, url, exc.one_line())
    except ResultError as exc:         # refused (StoreError is one): kept in its folder, named
        return Pushed(_run_id(d), str(d), REFUSED, exc.one_line())
    dequeue(d.resolve().parent, outcome.run_id)
    return Pushed(outcome.run_id, str(d), outcome.status)


def _run_id(d: Path) -> str:
    try:
        return read_result(d).run_id
    except ResultError:
        return d.name


__all__ = ["QUEUED", "QUEUE_DIR", "REFUSED", "PushReport", "Pushed", "dequeue", "enqueue", "entry_path", "pending",
           "push", "queue_dir"]
