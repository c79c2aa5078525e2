"""edgebench: honest benchmarks of ML models on edge hardware."""
from __future__ import annotations

__version__ = "0.2.0"


def load_runs(root="runs"):
    """The stored runs under ``root`` as one pandas DataFrame, one row per run.

    Columns (fixed types, docs/results-schema.md "Tables"): the conditions (model,
    precision, board, runtime, kernels, threads, ...), the latency figures, and the
    accuracy, temperature and energy figures of the kinds that have them (missing
    elsewhere). ``short_id`` is the id ``edgebench runs`` lists. Read through the runs
    folder's index (``.edgebench-index.duckdb``, docs/store.md): only new or changed run
    folders are read again.
    """
    from edgebench.store.embedded import load_runs as _load_runs  # through the runs folder's index

    return _load_runs(root)


def load_samples(root="runs"):
    """Every stored run's per-inference samples as one pandas DataFrame (``run_id`` first)."""
    from edgebench.results.table import load_samples as _load_samples

    return _load_samples(root)


__all__ = ["__version__", "load_runs", "load_samples"]
