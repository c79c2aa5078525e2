"""Run folders on disk (level 0: load and dump only).

A run is a folder ``<root>/<YYYYmmdd-HHMMSS>-<model>-<board>/`` holding

* ``run.json``: the :class:`~edgebench.results.model.RunResult` (written
  atomically: a temporary file renamed over the old one);
* ``samples.parquet``: one row per timed inference (device clock), columns
  ``phase`` (``cold``/``warmup``/``measure``), ``t_start_ns``, and the stage
  durations in seconds ``e2e_s``, ``prep_s``, ``set_s``, ``invoke_s``, ``get_s``.

While a run is in progress its status is ``running``; a run stopped by Ctrl-C
or an error keeps what it measured and says ``incomplete`` with the reason. A
run that measured nothing is removed, so no folder looks complete that is not.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

from edgebench.errors import ResultError
from edgebench.results.model import RunResult

RUN_JSON = "run.json"
SAMPLES = "samples.parquet"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:60] or "x"


def new_run_dir(root, model_name: str, board_name: str, now: float | None = None) -> Path:
    """Create and return a fresh run folder under ``root`` (never reuses one)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now if now is not None else time.time()))
    base = Path(root) / f"{stamp}-{_slug(model_name)}-{_slug(board_name)}"
    path, k = base, 1
    while True:
        try:
            path.mkdir(parents=True, exist_ok=False)
            return path
        except FileExistsError:
            k += 1
            path = base.with_name(f"{base.name}-{k}")


def write_result(run_dir, result: RunResult) -> Path:
    """Write run.json atomically."""
    path = Path(run_dir) / RUN_JSON
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result.to_dict(), indent=2, default=_json_default) + "\n")
    os.replace(tmp, path)
    return path


def _json_default(obj):
    import numpy as np  # only for numpy scalars that slipped into a dict

    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def write_samples(run_dir, frame) -> Path:
    """Write the per-inference samples (a pandas DataFrame) as Parquet, atomically."""
    path = Path(run_dir) / SAMPLES
    tmp = path.with_name(SAMPLES + ".tmp")
    frame.to_parquet(tmp, index=False)
    os.replace(tmp, path)
    return path


def discard_run_dir(run_dir) -> None:
    shutil.rmtree(run_dir, ignore_errors=True)


def read_result(run_dir) -> RunResult:
    p = Path(run_dir)
    path = p / RUN_JSON if p.is_dir() else p
    if not path.exists():
        raise ResultError(f"{p} is not a run folder (no {RUN_JSON})", "list runs with `edgebench runs`")
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ResultError(f"{path}: unreadable JSON ({exc})", "the file is damaged") from None
    return RunResult.from_dict(data, str(path))


def read_samples(run_dir):
    import pandas as pd

    path = Path(run_dir) / SAMPLES
    if not path.exists():
        return pd.DataFrame()
    return pd.read_parquet(path)


def find_runs(root="runs") -> list[Path]:
    """Run folders under ``root`` (newest last); ``root`` may itself be a run folder."""
    r = Path(root)
    if (r / RUN_JSON).exists():
        return [r]
    if not r.is_dir():
        return []
    return sorted(p.parent for p in r.glob(f"*/{RUN_JSON}"))


def resolve_run(ref, root="runs") -> Path:
    """A run folder from a path, a run id, or a unique prefix of its folder name."""
    p = Path(ref)
    if (p / RUN_JSON).exists():
        return p
    runs = find_runs(root)
    if ref == "latest" and runs:
        return runs[-1]
    hits = [r for r in runs if r.name.startswith(str(ref)) or r.name == str(ref)]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise ResultError(f"no run {ref!r} under {root}", "list runs with `edgebench runs`")
    raise ResultError(f"{ref!r} matches {len(hits)} runs under {root}", "give more of the name")


def flat_row(result: RunResult, run_dir) -> dict:
    """One flat row describing a run: its conditions and headline figures."""
    e2e = result.latency.get("e2e") or {}
    inv = result.latency.get("invoke") or {}
    return {
        "run_id": result.run_id,
        "path": str(run_dir),
        "created_utc": result.created_utc,
        "kind": result.kind,
        "status": result.status,
        "label": result.label,
        "model": result.model.get("name"),
        "model_sha256": result.model.get("sha256"),
        "precision": result.model.get("precision"),
        "board": result.board.get("name"),
        "runtime": result.runtime.get("name"),
        "kernels": result.runtime.get("kernels"),
        "threads": result.runtime.get("threads"),
        "delegate": result.runtime.get("delegate"),
        "scenario": result.scenario.get("name"),
        "n": e2e.get("n"),
        "e2e_median_s": e2e.get("median_s"),
        "e2e_ci_low_s": e2e.get("ci_low_s"),
        "e2e_ci_high_s": e2e.get("ci_high_s"),
        "e2e_p99_s": e2e.get("p99_s"),
        "invoke_median_s": inv.get("median_s"),
        "throughput_per_s": result.throughput.get("per_s"),
        "target_reached": result.stopping.get("target_reached"),
        "warnings": len(result.warnings),
    }


def load_runs(root="runs"):
    """All runs under ``root`` as ``(runs, samples)`` pandas DataFrames."""
    import pandas as pd

    rows, frames = [], []
    for d in find_runs(root):
        result = read_result(d)
        rows.append(flat_row(result, d))
        s = read_samples(d)
        if len(s):
            s = s.copy()
            s.insert(0, "run_id", result.run_id)
            frames.append(s)
    runs = pd.DataFrame(rows)
    samples = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return runs, samples
