"""The rows a results store keeps for one run (level 2a): the one function both stores use.

:func:`run_rows` reads a run folder (validated run.json, samples digest) and
:func:`result_rows` turns a :class:`~edgebench.results.model.RunResult` into

* the *run row*: identity (run id, created, kind, status, figure label), the series key
  (model name, board, runtime, kernels, threads, scenario), the model's sha256, a digest
  of the run's conditions (:func:`conditions_digest`), the samples digest and the labels;
* one *figure row* per metric the run has (:data:`edgebench.store.base.METRICS`): value,
  interval, the standard error of log(value) and its degrees of freedom where the interval
  gives them, and the figure's label (measured / emulated / simulated / estimated).

The embedded index and the shared store hold exactly these rows, so a series reads the
same from either.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Optional

from edgebench.errors import StoreError
from edgebench.results.files import check_run_folder
from edgebench.results.model import RunResult
from edgebench.results.store import SAMPLES, read_result
from edgebench.store.base import METRICS, SeriesKey, SeriesPoint

#: The run-row columns, in order (both stores' ``runs`` table / view).
RUN_COLUMNS = ("run_id", "created_utc", "kind", "status", "figure_label", "model", "board", "runtime", "kernels",
               "threads", "scenario", "model_sha256", "conditions_digest", "samples_digest", "labels", "path",
               "edgebench_version")
#: The figure-row columns, in order (both stores' ``figures`` table / view).
FIGURE_COLUMNS = ("run_id", "metric", "value", "ci_low", "ci_high", "se_log", "df", "figure_label")


@dataclass
class RunRows:
    """What a store keeps of one run: its run row, its figure rows, its series key and labels."""
    run: dict
    result: RunResult                       # the run these rows were made of (a store may keep more of it)
    figures: list = field(default_factory=list)
    key: SeriesKey = field(default_factory=lambda: SeriesKey("", ""))
    labels: dict = field(default_factory=dict)


def samples_digest(run_dir) -> str:
    """sha256 of the run's samples.parquet (``""`` when it has none): with the run id, what makes
    an append idempotent."""
    path = Path(run_dir) / SAMPLES
    if not path.is_file():
        return ""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def run_rows(run_dir) -> RunRows:
    """The rows of the run in folder ``run_dir``: ResultError (one line) for a folder that is not
    a valid edgebench run or holds links out of it; StoreError for a run still being written."""
    d = check_run_folder(run_dir)
    result = read_result(d)
    if result.status == "running":
        raise StoreError(f"run {result.run_id} ({d.name}) is still running", "append it when it has finished")
    return result_rows(result, d, samples_digest(d))


def series_key(result: RunResult) -> SeriesKey:
    r = result
    threads = r.runtime.threads
    if isinstance(threads, (list, tuple)):
        threads = ",".join(str(t) for t in threads)
    return SeriesKey(model=str(r.model.name or ""), board=str(r.board.name or ""),
                     runtime=str(r.runtime.name or ""), kernels=str(r.runtime.kernels or ""),
                     threads="" if threads in (None, "") else str(threads),
                     scenario=str(r.scenario.name or ""))


def labels_of(result: RunResult) -> dict:
    """The run's ``--label key=value`` pairs (``extra.labels``), as text."""
    return {str(k): str(v) for k, v in (result.extra.labels or {}).items()}


def conditions_digest(result: RunResult) -> str:
    """16 hex digits naming the conditions a run was measured under, apart from the model's
    content: runtime (version, kernels, delegate, threads), board system (OS, CPU, software,
    governors), scenario, what the timing includes, the settings and the edgebench version.
    What drifts from run to run (load, temperatures, current clocks) is left out, so two runs
    of the same set-up share a digest and a change of set-up shows in a series."""
    r = result
    # the sections as stored (only the keys the run has), so a digest does not change with the edgebench
    # that reads the run
    system = r.board.system
    governors = {name: p.governor for name, p in (system.cpufreq.policies or {}).items()}
    settings = {k: v for k, v in r.settings.to_dict().items() if k not in ("seed",)}
    doc = {"runtime": r.runtime.to_dict(), "board": {"name": r.board.name, "kind": r.board.kind,
                                                     "os": system.os, "cpu": system.cpu,
                                                     "software": system.software, "governors": governors},
           "scenario": {k: v for k, v in r.scenario.to_dict().items() if k != "inputs"},
           "timing": {k: v for k, v in r.timing.to_dict().items() if k in ("clock", "stages", "excludes")},
           "settings": settings, "edgebench": r.edgebench_version}
    text = json.dumps(doc, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def result_rows(result: RunResult, run_dir, samples_sha256: str = "") -> RunRows:
    """The rows of ``result`` (stored in ``run_dir``, whose samples digest is ``samples_sha256``)."""
    r = result
    key = series_key(r)
    labels = labels_of(r)
    run = {"run_id": r.run_id, "created_utc": r.created_utc, "kind": r.kind, "status": r.status,
           "figure_label": r.label, **key.to_dict(),
           "model_sha256": str(r.model.sha256 or ""), "conditions_digest": conditions_digest(r),
           "samples_digest": samples_sha256, "labels": labels, "path": str(run_dir),
           "edgebench_version": r.edgebench_version}
    return RunRows(run=run, figures=figure_rows(r), key=key, labels=labels, result=r)


def _num(v) -> Optional[float]:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    f = float(v)
    return f if math.isfinite(f) else None


@lru_cache(maxsize=256)
def _quantile(level: float, df: Optional[float]) -> float:
    """The two-sided quantile of ``level``: the statistics layer's Student t, normal when df is unknown."""
    from edgebench.stats.variation import DF_EXACT, t_quantile

    return t_quantile(level, DF_EXACT if df is None or df <= 0 else df)


def se_log_of(value, low, high, level: float = 0.95, df: Optional[float] = None) -> Optional[float]:
    """The standard error of log(value) an interval ``low``..``high`` at ``level`` implies
    (Student t with ``df`` when known, else normal); None when the interval is missing or not
    positive."""
    v, lo, hi = _num(value), _num(low), _num(high)
    if v is None or lo is None or hi is None or lo <= 0 or hi <= lo:
        return None
    return (math.log(hi) - math.log(lo)) / (2 * _quantile(float(level), df))


def _figure(metric, value, low, high, label, level=0.95, df=None, se_log=None) -> Optional[dict]:
    v = _num(value)
    if v is None:
        return None
    lo, hi = _num(low), _num(high)
    se = se_log if se_log is not None else se_log_of(v, lo, hi, level, df)
    return {"metric": metric, "value": v, "ci_low": lo, "ci_high": hi, "se_log": se, "df": df,
            "figure_label": label}


def _latency(r: RunResult, stage: str, metric: str) -> Optional[dict]:
    s = r.stage(stage)
    df = float(s.runs - 1) if s.runs is not None and s.runs >= 2 else None
    return _figure(metric, s.median_s, s.ci_low_s, s.ci_high_s, s.label or r.label, _num(s.ci_level) or 0.95, df)


def _throughput(r: RunResult) -> Optional[dict]:
    t = r.throughput
    per = [v for v in (_num(x) for x in t.per_repeat_per_s or []) if v is not None and v > 0]
    value, low, high, se, df = _num(t.per_s), None, None, None, None
    if value and len(per) >= 2:   # the repeats' spread on the log scale: Student t, df K - 1
        logs = [math.log(x) for x in per]
        mean = sum(logs) / len(logs)
        sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (len(logs) - 1))
        df = float(len(per) - 1)
        se = sd / math.sqrt(len(per))
        q = _quantile(0.95, df)
        low, high = value * math.exp(-q * se), value * math.exp(q * se)
    return _figure("throughput", value, low, high, t.label or r.label, 0.95, df, se)


def _energy(r: RunResult) -> Optional[dict]:
    inf = r.power.inference
    return _figure("energy", inf.energy_j, inf.ci_low_j, inf.ci_high_j, inf.label or r.power.label or r.label)


def _accuracy(r: RunResult) -> Optional[dict]:
    top1 = r.extra.accuracy.accuracy.candidate.top1
    return _figure("accuracy", top1.accuracy, top1.ci_low, top1.ci_high, r.label)


def figure_rows(result: RunResult) -> list:
    """One row per :data:`~edgebench.store.base.METRICS` name the run has a figure of (run id first)."""
    found = {"e2e": _latency(result, "e2e", "e2e"), "invoke": _latency(result, "invoke", "invoke"),
             "throughput": _throughput(result), "energy": _energy(result), "accuracy": _accuracy(result)}
    return [{"run_id": result.run_id, **row} for name, row in found.items() if name in METRICS and row]


def point_of(run: dict, figure: dict) -> SeriesPoint:
    """A :class:`SeriesPoint` from a run row and one of its figure rows (as either store returns them)."""
    labels = run.get("labels") or {}
    if isinstance(labels, str):
        labels = json.loads(labels) if labels else {}
    return SeriesPoint(run_id=str(run["run_id"]), created_utc=str(run.get("created_utc") or ""),
                       metric=str(figure["metric"]), value=float(figure["value"]),
                       ci_low=_num(figure.get("ci_low")), ci_high=_num(figure.get("ci_high")),
                       se_log=_num(figure.get("se_log")), df=_num(figure.get("df")),
                       figure_label=str(figure.get("figure_label") or run.get("figure_label") or ""),
                       model_sha256=str(run.get("model_sha256") or ""),
                       conditions_digest=str(run.get("conditions_digest") or ""), labels=dict(labels))


__all__ = ["FIGURE_COLUMNS", "RUN_COLUMNS", "RunRows", "conditions_digest", "figure_rows", "labels_of", "point_of",
           "result_rows", "run_rows", "samples_digest", "se_log_of", "series_key"]
