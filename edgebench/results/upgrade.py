"""run.json of an older version, brought to this one (level 0): one function, one step per version.

Each step takes a document of version N and returns one of version N + 1, changing only what
that version changed (:data:`SCHEMA_HISTORY`); keys a version added are absent from older files
and read as None. Tested on stored run folders of every version (tests/data/runs-v1, runs, runs-v3;
tests/test_old_runs.py).
"""
from __future__ import annotations

import copy
from typing import Any, Callable, Dict, Final

SCHEMA_VERSION: Final = 4
SCHEMA_HISTORY = {1: "edgebench 0.1: first version",
                  2: "edgebench 0.2: repeats, run- and dependence-aware intervals, achieved throughput",
                  3: "edgebench 0.2: the model of variation (pooled between-repeat and between-invocation "
                     "components), throughput intervals, gates set by the user",
                  4: "edgebench 0.3: one typed declaration per figure; a stage's 1/median is "
                     "inverse_median_per_s; the profile, layer-error and selftest sections declared"}

Doc = Dict[str, Any]


def _stages(doc: Doc):
    latency = doc.get("latency")
    return [fig for fig in latency.values() if isinstance(fig, dict)] if isinstance(latency, dict) else []


def _v1_to_v2(doc: Doc) -> Doc:
    """Version 1 ran one repeat: its latency figures rest on one run."""
    for fig in _stages(doc):
        fig.setdefault("runs", 1)
    settings = doc.get("settings")
    if isinstance(settings, dict):
        settings.setdefault("repeat", 1)
    return doc


def _v2_to_v3(doc: Doc) -> Doc:
    """Version 3 only added keys (the model of variation): nothing moves."""
    return doc


def _v3_to_v4(doc: Doc) -> Doc:
    """A stage's 1/median was ``throughput_per_s``: it is not a throughput, and is named what it is."""
    for fig in _stages(doc):
        if "throughput_per_s" in fig:
            old = fig.pop("throughput_per_s")
            fig.setdefault("inverse_median_per_s", old)
    return doc


STEPS: Dict[int, Callable[[Doc], Doc]] = {1: _v1_to_v2, 2: _v2_to_v3, 3: _v3_to_v4}


def upgrade(doc: Doc) -> Doc:
    """``doc`` (a run.json of a version in :data:`SCHEMA_HISTORY`) as this version's document (a copy;
    ``schema_version`` set to :data:`SCHEMA_VERSION`). The caller checks the version is known."""
    version = doc.get("schema_version")
    if version == SCHEMA_VERSION:
        return doc
    out = copy.deepcopy(doc)
    while isinstance(version, int) and version < SCHEMA_VERSION:
        out = STEPS[version](out)
        version += 1
    out["schema_version"] = SCHEMA_VERSION
    return out
