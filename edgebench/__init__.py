"""edgebench: honest benchmarks of ML models on edge hardware."""
from __future__ import annotations

__version__ = "0.2.0"


def load_runs(root="runs"):
    """Load stored runs under ``root`` as pandas DataFrames.

    Returns ``(runs, samples)``: one row per run (its conditions and summary
    figures) and one row per measured inference (with a ``run_id`` column).
    """
    from edgebench.results.store import load_runs as _load_runs

    return _load_runs(root)


__all__ = ["__version__", "load_runs"]
