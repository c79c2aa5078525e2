"""Putting a finished run on record (level 2a): its labels, the runs folder's index, a shared store.

Every verb that writes a run calls :func:`label_run` and :func:`put_on_record` once the run
is finished (``RunArgs.record`` in the CLI). The runs folder stays the source of truth: a
failure to index or to reach the shared store is an
:class:`~edgebench.errors.InputWarning`, and a run a shared store did not take is queued
(:func:`edgebench.store.queue.enqueue`) for ``edgebench push``; nothing is lost.
"""
from __future__ import annotations

import subprocess
import warnings
from pathlib import Path

from edgebench.errors import InputWarning, ResultError, StoreError, UsageError
from edgebench.results.store import read_result, write_result
from edgebench.store.open import open_store, redact, shared_url

GIT_TIMEOUT_S = 5.0


def parse_labels(items) -> dict:
    """``["key=value", ...]`` as a dict; UsageError (one line) for an item without ``=`` or key."""
    out = {}
    for item in items or []:
        key, sep, value = str(item).partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--label {item!r}: not key=value", "e.g. --label commit=abc123 --label ci=nightly")
        out[key.strip()] = value.strip()
    return out


def git_commit(cwd=None) -> str | None:
    """The commit checked out in ``cwd`` (``git rev-parse HEAD``), None when it is no repository or
    git is missing."""
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True,
                              timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    text = done.stdout.strip()
    return text if done.returncode == 0 and len(text) in (40, 64) else None


def default_labels(cwd=None) -> dict:
    commit = git_commit(cwd)
    return {"commit": commit} if commit else {}


def label_run(run_dir, items=(), cwd=None) -> dict:
    """Store the labels of ``items`` (``key=value``; ``commit`` defaults to the git commit of ``cwd``)
    in the run's ``extra.labels`` (run.json rewritten atomically); the labels."""
    labels = {**default_labels(cwd), **parse_labels(items)}
    if not labels:
        return {}
    result = read_result(run_dir)
    have = dict(result.extra.labels or {})
    merged = {**labels, **have} if have else labels   # labels the run already has stay
    if merged != have:
        result.extra.labels = merged
        write_result(run_dir, result)
    return merged


def put_on_record(run_dir, store_option=None) -> list:
    """Append the run to its runs folder's index and to the shared store (``store_option`` or
    ``$EDGEBENCH_STORE``); the :class:`~edgebench.store.base.AppendOutcome` list. Problems are
    warnings; a run the shared store did not take is queued."""
    d = Path(run_dir)
    outcomes = []
    try:
        from edgebench.store.embedded import EmbeddedStore

        with EmbeddedStore(d.parent, wait_s=2.0) as local:
            outcomes.append(local.append(d))
    except (ResultError, OSError, ImportError) as exc:
        why = exc.message if isinstance(exc, ResultError) else str(exc)
        warnings.warn(f"the run is kept in {d} but not in its folder's index ({why}); the next history or "
                      "listing indexes it", InputWarning, stacklevel=2)
    url = shared_url(store_option)
    if url is None:
        return outcomes
    try:
        store = open_store(url, root=d.parent)
        try:
            outcomes.append(store.append(d))
        finally:
            store.close()
    except (StoreError, OSError) as exc:
        from edgebench.store.queue import enqueue

        why = exc.message if isinstance(exc, StoreError) else str(exc)
        entry = enqueue(d, url, why)
        warnings.warn(f"the run was not appended to {redact(url)} ({why}); it is kept in {d} and queued "
                      f"({entry.name}): `edgebench push` sends it", InputWarning, stacklevel=2)
    return outcomes


__all__ = ["default_labels", "git_commit", "label_run", "parse_labels", "put_on_record"]
