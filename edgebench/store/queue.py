"""Runs waiting for a shared store (level 2a): a run that could not be appended stays in its
folder and gets a queue entry; ``edgebench push`` sends what is queued.

An entry is one small JSON file ``<runs folder>/.edgebench-queue/<run id>.json`` naming the
run folder, the store (its URL without password: the password comes from the environment
at push time) and why it was queued. Entries are written atomically
(:func:`edgebench.results.files.atomic_write`), so a queue is never half-written; queuing the
same run twice keeps one entry.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from edgebench.results.files import atomic_write
from edgebench.results.store import read_result
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


__all__ = ["QUEUE_DIR", "enqueue", "pending", "queue_dir"]
