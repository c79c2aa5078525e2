"""What the runs folder says about variation on this board and host (level 4): the thin reader
behind :mod:`edgebench.stats.variation`.

Repeats inside one ``edgebench bench`` invocation share the machine state of that minute (the
physical core the hypervisor gives, cache and memory placement, frequency); separate
invocations differ more (docs/statistics.md, "Across invocations"). That spread is mostly a
property of the machine, so it is estimated from **every** complete bench run on the same board
and host in the runs folder, different models included (:func:`read_history`), and pooled by
:func:`edgebench.stats.variation.pooled_component`:

- between repeats: each invocation's runs are one group;
- between invocations: each measurement (same model bytes, label, batch, rate and none of the
  conditions :data:`edgebench.bench.conditions.CONDITIONS` differing) is one group of sessions.

A run is counted once: by run id, by a content hash of its figures, and as a near-copy
(:func:`near_copy`: every figure within 0.02% of a run of the same measurement already counted; a copied run folder
whose run.json was edited to another id, or its figures nudged, is still the same measurement). Runs older than
:data:`MAX_AGE_DAYS` are left out (machines, kernels and firmware change).
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from edgebench.bench.conditions import CONDITIONS, hardware_cpu
from edgebench.errors import EdgebenchError, ResultError
from edgebench.report.check import check
from edgebench.results import store
from edgebench.results.figures.latency import LatencyFigure, Throughput
from edgebench.results.kinds import kind_of
from edgebench.results.model import RunResult
from edgebench.stats.variation import (
    Component,
    RunFigure,
    combine_sessions,
    invocation_estimate,
    pooled_component,
    priors,
)
from edgebench.store.embedded import EmbeddedStore
from edgebench.store.history import regressions_on_record as of_run

#: combine at most this many sessions by default (this invocation included)
DEFAULT_SESSIONS = 10
#: an earlier run older than this is not used (machines, kernels and firmware change)
MAX_AGE_DAYS = 30
#: read at most this many run folders (newest first)
MAX_SCANNED = 400
#: the figure whose sessions are pooled for the throughput
THROUGHPUT = "throughput"


def _created(r) -> _dt.datetime | None:
    try:
        t = _dt.datetime.fromisoformat(r.created_utc)
    except (TypeError, ValueError):
        return None
    return t if t.tzinfo else t.replace(tzinfo=_dt.timezone.utc)


def measurement_key(r: RunResult) -> tuple:
    """What makes runs sessions of one measurement: model bytes, label, batch, rate, conditions."""
    conditions = (json.dumps(get(r), sort_keys=True, default=str) for _, get in CONDITIONS)
    return (r.model.sha256, r.label, r.scenario.batch, r.scenario.rate_hz, *conditions)


def machine_key(r: RunResult) -> tuple:
    """Board and host: where the variation between invocations is one property."""
    return (r.board.name, hardware_cpu(r), (r.host or {}).get("hostname"), r.label)   # host: a free-form dict


def run_figures(fig: LatencyFigure) -> list | None:
    """A stored stage figure's runs as :class:`edgebench.stats.variation.RunFigure` (None when a
    run lacks an interval). Runs stored before schema 3 have no ``se_log``: it is read back from
    the run's interval with the normal quantile (slightly wide: their t had >= 7 df)."""
    out = []
    for p in fig.per_run or []:
        m, lo, hi = p.median_s, p.ci_low_s, p.ci_high_s
        se = p.se_log
        if se is None and m and lo and hi and lo > 0:
            se = (math.log(hi) - math.log(lo)) / (2 * 1.959964)
        if not m or m <= 0 or se is None or not math.isfinite(se):
            return None
        out.append(RunFigure(float(m), float(se), float(p.df or 7)))
    return out or None


def throughput_figures(tp: Throughput) -> list | None:
    per = tp.per_repeat or []
    if not per or any(not p.per_s or p.se_log is None for p in per):
        return None
    return [RunFigure(float(p.per_s or 0.0), float(p.se_log or 0.0), float(p.df or 7)) for p in per]


@dataclass
class Record:
    """One complete bench run on record: its identity and its runs' figures per stage."""

    run_id: str
    created_utc: str
    content_hash: str
    measurement: tuple
    figures: dict = field(default_factory=dict)     # stage (or "throughput") -> [RunFigure]


def record_of(r: RunResult) -> Record:
    figs = {}
    for stage, fig in r.latency.items():
        f = run_figures(fig)
        if f:
            figs[stage] = f
    tp = throughput_figures(r.throughput)
    if tp:
        figs[THROUGHPUT] = tp
    canon = json.dumps({k: [(f.value, f.se_log) for f in v] for k, v in sorted(figs.items())}, sort_keys=True)
    return Record(r.run_id, r.created_utc, hashlib.sha256(canon.encode()).hexdigest(), measurement_key(r), figs)


#: two runs of one measurement whose every figure agrees within this relative difference, and
#: every standard error within 10x that, are one run copied (a re-saved or hand-edited folder),
#: counted once: real invocations differ by more, and their batch-means errors by several percent
NEAR_COPY_REL = 2e-4


def near_copy(a: Record, b: Record, rel: float = NEAR_COPY_REL) -> bool:
    """Whether ``a`` and ``b`` hold the same figures within rounding: the same measurement and
    stages, as many runs, every run's figure within ``rel`` of the other's and its standard error
    within ``10 rel``."""
    if a.measurement != b.measurement or a.figures.keys() != b.figures.keys():
        return False
    for stage, fa in a.figures.items():
        fb = b.figures[stage]
        if len(fa) != len(fb):
            return False
        for x, y in zip(fa, fb):
            if abs(x.y - y.y) > rel or abs(x.se_log - y.se_log) > 10 * rel * max(x.se_log, y.se_log) + 1e-12:
                return False
    return True


def read_history(result, runs_root, exclude: Path | None = None, later_too: bool = False) -> list:
    """Complete bench runs on the same board and host as ``result`` under ``runs_root`` (as recorded
    in each run.json: a renamed folder still counts; newest
    first, made before it and at most :data:`MAX_AGE_DAYS` older; ``later_too``: made after it as
    well), each counted once: ``[Record]``. Unreadable folders are passed over."""
    if runs_root is None or not Path(runs_root).is_dir():
        return []
    now = _created(result) or _dt.datetime.now(_dt.timezone.utc)
    latest = _dt.datetime.max.replace(tzinfo=_dt.timezone.utc) if later_too else now
    oldest = now - _dt.timedelta(days=MAX_AGE_DAYS)
    machine = machine_key(result)     # the board as recorded in run.json, never the folder's name
    seen_ids, seen_hashes = {result.run_id}, set()
    out: list = []
    for d in list(reversed(store.find_runs(runs_root)))[:MAX_SCANNED]:
        if exclude is not None and Path(d).resolve() == Path(exclude).resolve():
            continue
        try:
            r = store.read_result(d)
        except EdgebenchError:
            continue
        created = _created(r)
        if (not kind_of(r).repeats or r.status != "complete" or created is None or created < oldest or created > latest
                or r.run_id in seen_ids or machine_key(r) != machine):
            continue
        rec = record_of(r)
        if rec.content_hash in seen_hashes or not rec.figures or any(near_copy(rec, o) for o in out):
            continue
        seen_ids.add(r.run_id)
        seen_hashes.add(rec.content_hash)
        out.append(rec)
    return out


#: an earlier session whose level lies outside what the other sessions of its measurement predict,
#: at this two-sided level Bonferroni-divided over the group's sessions, is at a shifted level
SHIFT_ALPHA = 0.01
#: a measurement needs this many sessions on record before one of them can be called shifted
MIN_SHIFT_SESSIONS = 3


def shifted_sessions(history: list, stage: str = "e2e", label: str = "measured") -> dict:
    """``{run_id: p}``: the sessions on record at a shifted level (a week under hidden load), left out
    of the pooled components (:func:`variation`) and of the sessions combined into a headline
    (:func:`earlier_sessions`, :func:`sessions_of`). In each measurement with at least
    :data:`MIN_SHIFT_SESSIONS` sessions, the session farthest from the group's median is judged
    against the prediction of the others (:func:`edgebench.stats.variation.combine_sessions`'
    ``differs_p``) with the between-invocation component pooled **without** it (a shifted run must
    not widen the yardstick it is judged by), at :data:`SHIFT_ALPHA` / its group's sessions; when
    it is below, it is left out and the next farthest is judged, never more than a minority of a
    group (its majority is the level). Several shifted sessions in one group can still hide each
    other when they are nearly half of it. Cached per history, stage and label."""
    ids = tuple(rec.run_id for rec in history)
    cached = _SHIFT_CACHE.get((ids, stage, label))
    if cached is not None:
        return dict(cached)
    repeat_prior, session_prior = priors(label)
    recs = [rec for rec in history if stage in rec.figures]
    repeat = pooled_component([[(f.y, f.w) for f in rec.figures[stage]] for rec in recs], repeat_prior)
    groups: dict = {}
    for rec in recs:
        groups.setdefault(rec.measurement, []).append((rec.run_id, invocation_estimate(rec.figures[stage], repeat)))
    out: dict = {}
    for key, members in groups.items():
        n = len(members)
        if n < MIN_SHIFT_SESSIONS:
            continue
        while len(kept := [m for m in members if m[0] not in out]) > n // 2 + 1:
            centre = float(np.median([e.centre for _, e in kept]))
            rid, est = max(kept, key=lambda m: abs(m[1].centre - centre))
            rest = [e for r, e in kept if r != rid]
            pooled = [[(e.centre, e.var) for r, e in g if r not in out] for k, g in groups.items() if k != key]
            session = pooled_component([*pooled, [(e.centre, e.var) for e in rest]], session_prior)
            p = combine_sessions(est, rest, session).differs_p
            if p is None or p >= SHIFT_ALPHA / n:
                break
            out[rid] = p
    if len(_SHIFT_CACHE) > 32:
        _SHIFT_CACHE.clear()
    _SHIFT_CACHE[(ids, stage, label)] = dict(out)
    return out


_SHIFT_CACHE: dict = {}


@dataclass
class Variation:
    """The pooled components of one figure (a stage, or the throughput) on this board and host."""

    repeat: Component
    session: Component


def variation(history: list, stage: str, this_key: tuple | None = None, this_figs: list | None = None,
              label: str = "measured") -> Variation:
    """Between-repeat and between-invocation components of ``stage`` pooled over ``history``
    (and this invocation's runs ``this_figs`` of measurement ``this_key``, when given), with the
    stated priors of figures of ``label`` (:func:`edgebench.stats.variation.priors`); sessions at a
    shifted level (:func:`shifted_sessions`) are left out."""
    repeat_prior, session_prior = priors(label)
    shifted = shifted_sessions(history, stage, label)
    invocations = [(rec.measurement, rec.figures[stage]) for rec in history
                   if stage in rec.figures and rec.run_id not in shifted]
    if this_figs:
        invocations.append((this_key, this_figs))
    repeat = pooled_component([[(f.y, f.w) for f in figs] for _, figs in invocations], repeat_prior)
    groups: dict = {}
    for key, figs in invocations:
        est = invocation_estimate(figs, repeat)
        groups.setdefault(key, []).append((est.centre, est.var))
    return Variation(repeat, pooled_component(list(groups.values()), session_prior))


def _level_ok(result, history: list, skip_shifted: bool):
    """A filter of records: True unless ``skip_shifted`` and the record is at a shifted level among the
    sessions of its measurement (:func:`shifted_sessions` on the headline stage)."""
    shifted = shifted_sessions(history, "e2e", getattr(result, "label", "measured")) if skip_shifted else {}
    return lambda rec: rec.run_id not in shifted


def earlier_sessions(result, history: list, sessions: int = DEFAULT_SESSIONS, skip_shifted: bool = True) -> list:
    """Up to ``sessions - 1`` records of ``history`` that are earlier sessions of the same
    measurement as ``result`` (newest first); sessions at a shifted level are left out
    (:func:`shifted_sessions`; ``skip_shifted=False``: kept)."""
    if sessions <= 1:
        return []
    key = measurement_key(result)
    ok = _level_ok(result, history, skip_shifted)
    return [rec for rec in history if rec.measurement == key and ok(rec)][: sessions - 1]


def sessions_of(result, history: list, sessions: int = DEFAULT_SESSIONS, skip_shifted: bool = True) -> list:
    """Up to ``sessions - 1`` records of ``history`` (newest first) that are other sessions of
    ``result``'s measurement, whenever they ran: what ``compare`` combines on each side; sessions at
    a shifted level are left out (:func:`shifted_sessions`; ``skip_shifted=False``: kept)."""
    if sessions <= 1:
        return []
    key = measurement_key(result)
    ok = _level_ok(result, history, skip_shifted)
    return [rec for rec in history if rec.measurement == key and rec.run_id != result.run_id and ok(rec)][
        : sessions - 1]


def other_sessions(result, run_dir) -> list:
    """The other sessions of ``result``'s measurement in its runs folder, whenever they ran (for
    ``check``'s best-of-N rule): ``[{run_id, created_utc, median_s}]`` (geometric mean of each
    session's run medians)."""
    d = Path(run_dir)
    if not kind_of(result).repeats or not d.parent.is_dir():
        return []
    key = measurement_key(result)
    out = []
    for rec in read_history(result, d.parent, exclude=d, later_too=True):
        figs = rec.figures.get("e2e")
        if rec.measurement == key and figs:
            out.append({"run_id": rec.run_id, "created_utc": rec.created_utc,
                        "median_s": math.exp(sum(f.y for f in figs) / len(figs))})
    return out


def check_on_record(pairs: list):
    """``check``'s verdicts (:class:`edgebench.report.check.CheckReport`) of ``[(run_dir, result)]``,
    each run with the other sessions of its measurement in its runs folder (the best-of-N rule)."""
    return check([r for _, r in pairs], sessions={r.run_id: other_sessions(r, d) for d, r in pairs},
                 records=regressions_on_record(pairs))


def regressions_on_record(pairs: list) -> dict:
    """run id -> the regressions of its series in its runs folder's index up to it
    (:func:`edgebench.store.history.regressions_on_record`); a folder without an index that can be
    opened gives none."""
    out: dict = {}
    by_root: dict = {}
    for d, r in pairs:
        by_root.setdefault(Path(d).parent, []).append(r)
    for root, results in by_root.items():
        try:
            with EmbeddedStore(root, wait_s=1.0) as store:
                store.refresh()
                for r in results:
                    out[r.run_id] = of_run(store, r)
        except ResultError:          # StoreError included: the index busy; the rule is not applicable
            continue
    return out


__all__ = ["shifted_sessions", "SHIFT_ALPHA", "MIN_SHIFT_SESSIONS", "Record", "near_copy", "NEAR_COPY_REL", "sessions_of", "check_on_record", "other_sessions", "Variation", "read_history", "record_of",
           "earlier_sessions", "variation", "measurement_key", "machine_key", "run_figures", "throughput_figures",
           "DEFAULT_SESSIONS", "MAX_AGE_DAYS", "THROUGHPUT"]
