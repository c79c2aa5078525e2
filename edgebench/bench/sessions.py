"""Earlier sessions of the same measurement (level 4): the between-invocation part of a bench
run's headline interval.

Repeats inside one ``edgebench bench`` invocation share the machine state of that minute (the
physical core the hypervisor gives, cache and memory placement, frequency); on the development
VM their medians agreed within ~1% while separate invocations spread 7% (see
docs/statistics.md, "Sessions"). A later invocation can only be predicted from the spread
*between invocations*, and one invocation cannot measure that. So a finished bench run looks in
its runs folder for earlier **complete** bench runs of the same measurement -- same model bytes
(sha256), same label, same batch and rate, and none of the conditions
:data:`edgebench.bench.compare.CONDITIONS` differing (runtime and version, kernels, threads,
delegate, board, CPU model, pinning, governor, thermal state, scenario, inputs) -- at most
:data:`MAX_AGE_DAYS` old, newest first, up to ``sessions - 1`` of them, and combines their
medians with its own (:func:`edgebench.stats.dependence.sessions_interval`).

Each run stores its own invocation-only figures under ``latency.<stage>.invocation``, so a
later run combines invocation figures, never already-combined ones.
"""
from __future__ import annotations

import datetime as _dt
from pathlib import Path

from edgebench.bench.compare import condition_differences
from edgebench.errors import EdgebenchError
from edgebench.results import store

#: combine at most this many sessions by default (this invocation included)
DEFAULT_SESSIONS = 10
#: an earlier run older than this is not combined (machines, kernels and firmware change)
MAX_AGE_DAYS = 30
#: read at most this many candidate run folders (newest first)
MAX_SCANNED = 200


def _created(r) -> _dt.datetime | None:
    try:
        t = _dt.datetime.fromisoformat(r.created_utc)
    except (TypeError, ValueError):
        return None
    return t if t.tzinfo else t.replace(tzinfo=_dt.timezone.utc)


def same_measurement(a, b) -> bool:
    """True when run ``b`` measured what ``a`` measures, under the same recorded conditions."""
    if b.kind != "bench" or b.label != a.label:
        return False
    if (a.model or {}).get("sha256") != (b.model or {}).get("sha256"):
        return False
    for key in ("batch", "rate_hz"):
        if (a.scenario or {}).get(key) != (b.scenario or {}).get(key):
            return False
    return not condition_differences(a, b)


def invocation_figure(fig: dict) -> dict:
    """A stored stage figure's invocation-only part (runs older than sessions stored only that)."""
    return fig.get("invocation") or fig


def earlier_sessions(result, runs_root, sessions: int = DEFAULT_SESSIONS, exclude: Path | None = None) -> list:
    """Up to ``sessions - 1`` earlier complete bench runs of the same measurement as ``result``
    under ``runs_root``, newest first: ``[{run_id, created_utc, latency: {stage: {median_s,
    ci_low_s, ci_high_s, runs}}}]``. Unreadable folders are passed over."""
    if sessions <= 1 or runs_root is None:
        return []
    now = _created(result) or _dt.datetime.now(_dt.timezone.utc)
    oldest = now - _dt.timedelta(days=MAX_AGE_DAYS)
    wanted = f"-{store.slug(result.model.get('name') or '')}-{store.slug((result.board or {}).get('name') or '')}"
    out = []
    for d in list(reversed(store.find_runs(runs_root)))[:MAX_SCANNED]:
        if exclude is not None and Path(d).resolve() == Path(exclude).resolve():
            continue
        if wanted not in d.name:
            continue
        try:
            r = store.read_result(d)
        except EdgebenchError:
            continue
        created = _created(r)
        if r.run_id == result.run_id or r.status != "complete" or created is None or created < oldest:
            continue
        if created > now or not same_measurement(result, r):
            continue
        lat = {}
        for stage, fig in (r.latency or {}).items():
            inv = invocation_figure(fig or {})
            if inv.get("median_s") and inv.get("ci_low_s") is not None:
                lat[stage] = {k: inv.get(k) for k in ("median_s", "ci_low_s", "ci_high_s", "runs")}
        if "e2e" in lat:
            out.append({"run_id": r.run_id, "created_utc": r.created_utc, "latency": lat})
        if len(out) >= sessions - 1:
            break
    return out


__all__ = ["earlier_sessions", "same_measurement", "invocation_figure", "DEFAULT_SESSIONS", "MAX_AGE_DAYS"]
