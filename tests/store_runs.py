"""Run folders for the store tests: copies of a real bench run (tests/data/runs/bench-host-fp32)
with the id, time, headline figure, model hash and labels each test needs."""
from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "runs"
BASE = json.loads((DATA / "bench-host-fp32.json").read_text())
SAMPLES = DATA / "bench-host-fp32.samples.parquet"


def make_run(root, i: int, median_s: float = 1e-3, rel_ci: float = 0.01, model_sha256: str | None = None,
             labels: dict | None = None, samples: bool = True, model: str = "digits_fp32", board: str = "host") -> Path:
    """Write run number ``i`` (id ``0000000000ii``, one minute apart) under ``root``; its folder."""
    from edgebench.results.model import RunResult
    from edgebench.results.store import write_result

    doc = copy.deepcopy(BASE)
    doc["run_id"] = f"{i:012x}"
    doc["created_utc"] = f"2026-11-{1 + i // 1440:02d}T{(i // 60) % 24:02d}:{i % 60:02d}:00+00:00"
    e2e = doc["latency"]["e2e"]
    e2e.update(median_s=median_s, ci_low_s=median_s * (1 - rel_ci), ci_high_s=median_s * (1 + rel_ci))
    doc["model"]["name"], doc["board"]["name"] = model, board
    if model_sha256 is not None:
        doc["model"]["sha256"] = model_sha256
    doc["extra"] = {**doc.get("extra", {}), "labels": dict(labels or {})}
    d = Path(root) / f"run-{i:05d}"
    d.mkdir(parents=True)
    write_result(d, RunResult.from_dict(doc))
    if samples:
        shutil.copyfile(SAMPLES, d / "samples.parquet")
    return d
