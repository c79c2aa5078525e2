"""Stored runs as tables (level 0: load and dump only): one row per run, one row per sample.

:func:`flat_row` turns a run into one flat row of plain values (the ``runs --json``
listing); :func:`runs_frame` makes a pandas DataFrame of such rows with one fixed
type per column (:data:`COLUMNS`), whatever kinds the runs are, so that a CSV or
Parquet export and ``edgebench.load_runs()`` read the same way every time. Figures a
kind does not have are missing (NaN / <NA>), never 0. :func:`samples_frame` gathers
the per-inference samples of the runs with a ``run_id`` column.

The columns are documented in docs/results-schema.md ("Tables").
"""
from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import List, Optional

from edgebench.errors import InputWarning, ResultError, UsageError
from edgebench.results.figures.thermal import Snapshot
from edgebench.results.files import write_output
from edgebench.results.kinds import kind_of
from edgebench.results.model import RunResult, failed_gates
from edgebench.results.store import find_runs, read_result, read_samples, resolve_run, run_status, skipped

# column -> pandas dtype; the order is the order of the table
COLUMNS = {
    "run_id": "string", "short_id": "string", "path": "string", "created_utc": "datetime64[ns, UTC]",
    "kind": "string", "status": "string", "gate_failed": "boolean", "label": "string",
    "model": "string", "model_sha256": "string", "precision": "string", "board": "string",
    "runtime": "string", "runtime_version": "string", "kernels": "string",
    "threads": "Int64", "threads_list": "string", "delegate": "string", "scenario": "string",
    "agent_cpus": "string",
    # latency (bench, mlperf-tiny, soak's sustained window, energy)
    "n": "Int64", "runs": "Int64", "e2e_median_s": "float64", "e2e_ci_low_s": "float64",
    "e2e_ci_high_s": "float64", "e2e_p99_s": "float64", "invoke_median_s": "float64",
    "throughput_per_s": "float64", "target_reached": "boolean", "warnings": "Int64",
    # temperature (runs with a thermal sensor; soak and sweep)
    "temp_start_c": "float64", "temp_end_c": "float64", "temp_max_c": "float64", "temp_steady_c": "float64",
    "throttled": "boolean",
    # soak
    "burst_throughput_per_s": "float64", "sustained_throughput_per_s": "float64",
    "sustained_over_burst": "float64",
    # accuracy (candidate against its baseline on the same samples)
    "accuracy_n": "Int64", "top1": "float64", "top1_ci_low": "float64", "top1_ci_high": "float64",
    "baseline_top1": "float64", "top1_diff_points": "float64", "top1_diff_ci_low_points": "float64",
    "top1_diff_ci_high_points": "float64", "mcnemar_p": "float64",
    # energy
    "energy_label": "string", "energy_per_inference_j": "float64", "energy_ci_low_j": "float64",
    "energy_ci_high_j": "float64", "idle_power_w": "float64", "avg_power_w": "float64",
}


def _hottest(snapshot: Snapshot) -> float | None:
    temps = [v for v in (snapshot.temps_c or {}).values() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return float(max(temps)) if temps else None


def _throttled_now(snapshot: Snapshot) -> bool | None:
    thr = snapshot.throttled
    if thr is None:
        return None
    return any(bool(v) for k, v in thr.items() if k.endswith("_now"))


def _threads(value) -> tuple:
    """``(threads as int or None, every thread count as text)``: a sweep over several is None, "1,4"."""
    if value is None or value == "":
        return None, None
    if isinstance(value, bool):
        return None, str(value)
    if isinstance(value, int):
        return value, str(value)
    if isinstance(value, (list, tuple)):
        text = ",".join(str(v) for v in value)
    else:
        text = str(value).replace(" ", "")
    parts = [p for p in text.split(",") if p]
    single = int(parts[0]) if len(parts) == 1 and parts[0].isdigit() else None
    return single, text


def _temperatures(r: RunResult) -> dict:
    t = r.thermal
    row = {"temp_start_c": _hottest(t.start), "temp_end_c": _hottest(t.end), "throttled": _throttled_now(t.end),
           "temp_max_c": None, "temp_steady_c": None}   # only soak and sweep watch the whole run
    if r.extra.soak:
        th = r.extra.soak.thermal
        row.update(temp_max_c=th.max_temp_c, temp_steady_c=th.steady_temp_c,
                   temp_start_c=th.start_temp_c if th.start_temp_c is not None else row["temp_start_c"])
        if th.time_to_first_throttle_s is not None:
            row["throttled"] = True
    points = (r.extra.points or []) if kind_of(r).points else []
    if points:  # the hottest point: what the sweep reached
        def most(values: List[Optional[float]]) -> float | None:
            v = [float(x) for x in values if x is not None]
            return max(v) if v else None
        row.update(temp_max_c=most([p.max_temp_c for p in points]),
                   temp_steady_c=most([p.steady_temp_c for p in points]),
                   throttled=any(bool(p.throttled) for p in points))
    return row


def _accuracy(r: RunResult) -> dict:
    a = r.extra.accuracy
    cand, base, p = a.accuracy.candidate.top1, a.accuracy.baseline.top1, a.paired
    return {"accuracy_n": cand.n, "top1": cand.accuracy, "top1_ci_low": cand.ci_low,
            "top1_ci_high": cand.ci_high, "baseline_top1": base.accuracy,
            "top1_diff_points": p.diff_points, "top1_diff_ci_low_points": p.diff_ci_low_points,
            "top1_diff_ci_high_points": p.diff_ci_high_points, "mcnemar_p": p.mcnemar_p}


def _energy(r: RunResult) -> dict:
    p = r.power
    inf = p.inference
    return {"energy_label": inf.label or (p.label if inf else None),
            "energy_per_inference_j": inf.energy_j, "energy_ci_low_j": inf.ci_low_j,
            "energy_ci_high_j": inf.ci_high_j, "idle_power_w": p.idle.power_w,
            # average.power_w: no writer sets it today (energy writes measured_w/model_w); read as stored
            "avg_power_w": p.duty_cycle.avg_power_w or p.average.other("power_w")}


def flat_row(result: RunResult, run_dir) -> dict:
    """One flat row of plain (JSON-able) values describing a run: its conditions and headline
    figures; the keys are :data:`COLUMNS` but ``short_id`` (which depends on the other runs)."""
    r = result
    e2e, inv, soak = r.stage("e2e"), r.stage("invoke"), r.extra.soak
    threads, threads_list = _threads(r.runtime.threads)
    cpus = r.settings.agent_cpus
    row = {
        "run_id": r.run_id, "path": str(run_dir), "created_utc": r.created_utc, "kind": r.kind,
        "status": run_status(r), "gate_failed": bool(failed_gates(r)), "label": r.label,
        "model": r.model.name, "model_sha256": r.model.sha256,
        "precision": r.model.precision, "board": r.board.name,
        "runtime": r.runtime.name, "runtime_version": r.runtime.version,
        "kernels": r.runtime.kernels, "threads": threads, "threads_list": threads_list,
        "delegate": r.runtime.delegate, "scenario": r.scenario.name,
        "agent_cpus": None if cpus in (None, "") else str(cpus),
        "n": e2e.n, "runs": e2e.runs, "e2e_median_s": e2e.median_s,
        "e2e_ci_low_s": e2e.ci_low_s, "e2e_ci_high_s": e2e.ci_high_s, "e2e_p99_s": e2e.p99_s,
        "invoke_median_s": inv.median_s, "throughput_per_s": r.throughput.per_s,
        "target_reached": r.stopping.target_reached, "warnings": len(r.warnings),
        "burst_throughput_per_s": soak.burst.throughput_per_s,
        "sustained_throughput_per_s": soak.sustained.throughput_per_s,
        "sustained_over_burst": soak.sustained_over_burst,
        **_temperatures(r), **_accuracy(r), **_energy(r),
    }
    return {k: row.get(k) for k in COLUMNS if k != "short_id"}


def short_ids(run_ids, minimum: int = 6) -> dict:
    """Each run id's shortest prefix (at least ``minimum`` characters) that no other id starts with."""
    ids = [str(i) for i in run_ids]
    out = {}
    for i in ids:
        n = min(minimum, len(i))
        while n < len(i) and any(o != i and o.startswith(i[:n]) for o in ids):
            n += 1
        out[i] = i[:n]
    return out


def runs_frame(rows: list):
    """A DataFrame of :func:`flat_row` rows with the types of :data:`COLUMNS` (an empty list gives
    an empty frame with every column), ``short_id`` filled in."""
    import pandas as pd

    frame = pd.DataFrame(rows, columns=[c for c in COLUMNS if c != "short_id"])
    ids = short_ids(frame["run_id"].astype(str)) if len(frame) else {}
    frame.insert(1, "short_id", [ids.get(str(i)) for i in frame["run_id"]])
    for col, dtype in COLUMNS.items():
        if dtype.startswith("datetime"):
            frame[col] = pd.to_datetime(frame[col], utc=True, errors="coerce")
        elif dtype == "boolean":
            frame[col] = frame[col].astype("object").where(frame[col].notna(), None).astype("boolean")
        else:
            frame[col] = frame[col].astype("object").where(frame[col].notna(), None).astype(dtype)  # type: ignore[call-overload]
    return frame


def _readable(root) -> list:
    """``[(folder, RunResult)]`` under ``root`` (a runs folder, a run folder, or a run's id, folder name
    or ``latest`` under ``./runs``); a run whose run.json does not read or validate is skipped with an
    :class:`~edgebench.errors.InputWarning` naming the file and the key (one bad run hides no other).
    ResultError when ``root`` names nothing."""
    out = []
    for d in _run_dirs(root):
        try:
            out.append((d, read_result(d)))
        except ResultError as exc:
            warnings.warn(skipped(exc), InputWarning, stacklevel=3)
    return out


def _run_dirs(root) -> list:
    r = Path(root)
    if r.is_dir():
        return find_runs(r)
    if not r.exists() and Path("runs").is_dir() and str(root) != "runs":
        try:
            return [resolve_run(str(root), "runs")]
        except ResultError:
            pass
    raise ResultError(f"no runs folder and no run {str(root)!r}" + ("" if r.is_absolute() else f" under {Path.cwd()}"),
                      "give the folder the runs are in (edgebench's default: runs), a run folder, or a run's id")


def rows_of(root="runs") -> list:
    """:func:`flat_row` of every readable run under ``root`` (oldest first); a run whose headline figures
    are not finite numbers (a NaN or infinite median: a damaged or hand-edited run.json; edgebench
    writes none) is skipped with one :class:`~edgebench.errors.InputWarning`, so it hides no other."""
    out = []
    for d, r in _readable(root):
        row = flat_row(r, d)
        bad = sorted(k for k, v in row.items() if isinstance(v, float) and not math.isfinite(v))
        if bad:
            warnings.warn(f"skipped {d}/run.json: {', '.join(bad)} not a finite number (a damaged run)",
                          InputWarning, stacklevel=2)
            continue
        out.append(row)
    return out


def load_runs(root="runs"):
    """All runs under ``root`` as one pandas DataFrame, one row per run (see :data:`COLUMNS`)."""
    return runs_frame(rows_of(root))


def load_samples(root="runs", runs=None):
    """The per-inference samples of the runs under ``root`` (or of the run folders ``runs``) as one
    DataFrame with a ``run_id`` column first; empty when no run has samples."""
    import pandas as pd

    frames = []
    pairs = _readable(root) if runs is None else [(Path(x), read_result(x)) for x in runs]
    for d, result in pairs:
        s = read_samples(d)
        if len(s):
            s = s.copy()
            s.insert(0, "run_id", pd.array([result.run_id] * len(s), dtype="string"))
            frames.append(s)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame({"run_id": pd.array([], "string")})


def export(frame, path) -> Path:
    """Write the runs table to ``path``: ``.csv`` or ``.parquet`` (atomically: nothing half-written)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".parquet"):
        raise UsageError(f"cannot tell the format of {path} from its name", "end the file name in .csv or .parquet")
    if path.is_dir():
        raise UsageError(f"{path} is a folder", "give a file name")
    if not path.parent.is_dir():
        raise UsageError(f"folder {path.parent} does not exist", "create it first, or write elsewhere")
    if suffix == ".parquet":       # a FIFO or device refused, an OSError one line (write_output)
        return write_output(path, lambda f: frame.to_parquet(f, index=False), "table")
    text = frame.to_csv(index=False, date_format="%Y-%m-%dT%H:%M:%S%z")
    return write_output(path, lambda f: f.write(text.encode("utf-8")), "table")


__all__ = ["COLUMNS", "export", "flat_row", "load_runs", "load_samples", "rows_of", "runs_frame", "short_ids"]
