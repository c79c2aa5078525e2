"""The history of one series (level 2a): its points in order, what changed between them, and
its change points (``edgebench history``, the ``regression-on-record`` check).

:func:`find_series` picks the :class:`~edgebench.store.base.SeriesKey` a user names (model
and board, narrowed by runtime, kernels, threads, scenario); :func:`history` reads its
points from any :class:`~edgebench.store.base.ResultsStore`, marks where the model's content
(sha256) or the run's conditions (digest) changed from the point before, and finds level
shifts with :func:`edgebench.stats.changepoint.detect`, each point weighed by its own
interval. ``by="commit"`` folds the runs of one ``commit`` label into one point (in the order
the commits were first measured).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

from edgebench.errors import UsageError
from edgebench.store.base import METRICS, ChangePoint, SeriesKey, SeriesPoint

BY = ("time", "commit")
NARROW = ("runtime", "kernels", "threads", "scenario")


@dataclass
class History:
    """A series with its marks and change points; ``to_dict()`` is ``history --json``."""
    key: SeriesKey
    metric: str
    by: str
    points: list                      # SeriesPoint, in order
    marks: list                       # per point: list of "model" / "conditions" (changed since the point before)
    changes: list = field(default_factory=list)     # ChangePoint
    sigma_log: float = 0.0
    method: str = ""
    left_out: int = 0                 # runs without a commit label (by commit)

    @property
    def unit(self) -> str:
        return METRICS[self.metric][0]

    @property
    def better(self) -> str:
        return METRICS[self.metric][1]

    def regression(self, change: ChangePoint) -> bool:
        """The change made the figure worse, beyond its interval."""
        return change.ci_low > 1 if self.better == "lower" else change.ci_high < 1

    def to_dict(self) -> dict:
        return {"format": "edgebench-history", "series": self.key.to_dict(), "metric": self.metric,
                "unit": self.unit, "better": self.better, "by": self.by,
                "points": [{**p.to_dict(), "changed": m} for p, m in zip(self.points, self.marks)],
                "changes": [{**c.to_dict(), "regression": self.regression(c)} for c in self.changes],
                "between_invocations_sigma_log": self.sigma_log, "method": self.method,
                "left_out_without_commit": self.left_out}

    def csv_rows(self) -> list:
        """One row per point: run id, created, commit, value, interval, label, marks, change here."""
        at = {c.index: c for c in self.changes}
        rows = []
        for i, (p, m) in enumerate(zip(self.points, self.marks)):
            c = at.get(i)
            rows.append({"index": i, "run_id": p.run_id, "created_utc": p.created_utc, "commit": p.commit,
                         "value": p.value, "ci_low": p.ci_low, "ci_high": p.ci_high, "se_log": p.se_log,
                         "figure_label": p.figure_label, "model_sha256": p.model_sha256,
                         "conditions_digest": p.conditions_digest, "changed": ";".join(m),
                         "change_ratio": c.ratio if c else None})
        return rows


def find_series(store, model: str, board: str, metric: str = "e2e", **narrow) -> SeriesKey:
    """The one series of ``model`` on ``board`` (narrowed by :data:`NARROW` values given) that has
    ``metric`` figures; UsageError naming what to add when none or several match."""
    keys = [k for k in store.series() if k.model == model and k.board == board
            and all(v in (None, "") or getattr(k, n) == str(v) for n, v in narrow.items())]
    if not keys:
        boards = sorted({k.board for k in store.series() if k.model == model})
        hint = (f"runs of {model} are on board(s) {', '.join(boards)}" if boards
                else "see the models on record with `edgebench runs`")
        raise UsageError(f"no runs of {model} on {board} on record" + (" with those options" if narrow else ""), hint)
    with_metric = [k for k in keys if store.read_series(k, metric)]
    if len(with_metric) == 1:
        return with_metric[0]
    if not with_metric:
        raise UsageError(f"no {metric} figures of {model} on {board} on record",
                         f"another --metric ({', '.join(METRICS)})")
    differ = [n for n in NARROW if len({getattr(k, n) for k in with_metric}) > 1]
    raise UsageError(f"{len(with_metric)} series of {model} on {board}: they differ in {', '.join(differ)}",
                     "narrow with " + ", ".join(f"--{n} ({'/'.join(sorted({getattr(k, n) or '-' for k in with_metric}))})"
                                                for n in differ))


def _by_commit(points: list) -> tuple:
    groups: dict = {}
    left = 0
    for p in points:
        if not p.commit:
            left += 1
            continue
        groups.setdefault(p.commit, []).append(p)
    out = []
    for runs in groups.values():
        logs = [math.log(p.value) for p in runs]
        ses = [p.se_log for p in runs if p.se_log is not None]
        mean = sum(logs) / len(logs)
        se = math.sqrt(sum(s * s for s in ses) / len(ses)) / math.sqrt(len(runs)) if ses else None
        last = runs[-1]
        out.append(SeriesPoint(run_id=last.run_id, created_utc=last.created_utc, metric=last.metric,
                               value=math.exp(mean), ci_low=math.exp(mean - 1.96 * se) if se else None,
                               ci_high=math.exp(mean + 1.96 * se) if se else None, se_log=se,
                               df=None, figure_label=last.figure_label, model_sha256=last.model_sha256,
                               conditions_digest=last.conditions_digest,
                               labels={**last.labels, "runs": str(len(runs))}))
    return out, left


def history(store, key: SeriesKey, metric: str = "e2e", by: str = "time", changes: bool = True,
            seed: int = 0) -> History:
    """The :class:`History` of ``key`` in ``store`` (module doc)."""
    if metric not in METRICS:
        raise UsageError(f"unknown metric {metric!r}", f"one of {', '.join(METRICS)}")
    if by not in BY:
        raise UsageError(f"--by {by!r}: not a way to order a history", f"one of {', '.join(BY)}")
    points = [p for p in store.read_series(key, metric) if p.value > 0]
    left = 0
    if by == "commit":
        points, left = _by_commit(points)
    marks = [[] if i == 0 else [what for what, a, b in (("model", p.model_sha256, q.model_sha256),
                                                          ("conditions", p.conditions_digest, q.conditions_digest))
                                 if a != b] for i, (p, q) in enumerate(zip(points, [None, *points[:-1]]))]
    h = History(key, metric, by, points, marks, left_out=left)
    if changes and len(points) >= 6:
        from edgebench.stats.changepoint import detect

        found = detect([p.value for p in points], [p.se_log for p in points], seed=seed)
        h.sigma_log, h.method = found.sigma_log, found.method
        h.changes = [ChangePoint(index=s.index, run_before=points[s.index - 1].run_id,
                                 run_after=points[s.index].run_id, ratio=s.ratio, ci_low=s.ci_low,
                                 ci_high=s.ci_high, p_value=s.p_value, commit_before=points[s.index - 1].commit,
                                 commit_after=points[s.index].commit, created_utc=points[s.index].created_utc,
                                 method=found.method) for s in found.shifts]
    return h


def regressions_on_record(store, result, metric: str = "e2e") -> Optional[dict]:
    """For a stored run (a RunResult): the latest change point of its series up to it, when it made
    ``metric`` worse (the run is on a regressed level), as ``{"series", "metric", "points", "regressions": [ChangePoint dict]}``;
    None when its series is not on record or too short to tell."""
    from edgebench.store.rows import series_key

    key = series_key(result)
    try:
        h = history(store, key, metric)
    except UsageError:
        return None
    ids = [p.run_id for p in h.points]
    if result.run_id not in ids or len(ids) < 6:
        return None
    upto = ids.index(result.run_id)
    before = [c for c in h.changes if c.index <= upto]      # the level this run is on: set by the latest one
    bad = [before[-1].to_dict()] if before and h.regression(before[-1]) else []
    return {"series": key.describe(), "metric": metric, "points": len(ids), "regressions": bad}


__all__ = ["BY", "NARROW", "History", "find_series", "history", "regressions_on_record"]
