"""The per-MAC line of a latency run on a microcontroller (``extra.mac_rate``, see
:mod:`edgebench.bench.mac_rate`): shown under the latency table by ``bench`` and ``runs``."""
from __future__ import annotations

from typing import Optional


def mac_rate_line(result) -> Optional[str]:
    """``instructions per MAC: 2.020, emulated (...)``; None when the run has no such figure."""
    figure = (getattr(result, "extra", None) or {}).get("mac_rate")
    if not figure:
        return None
    if not figure.get("available"):
        return f"per MAC: not reported ({figure.get('reason')})"
    if any(figure.get(k) is None for k in ("per_mac", "per_inference", "macs")):
        return f"per MAC: an incomplete figure ({figure.get('unit')}, {figure.get('label')})"
    ci = figure.get("per_mac_ci")
    interval = f" [95% CI {ci[0]:.3f}–{ci[1]:.3f}]" if ci and len(ci) == 2 and None not in ci else ""
    at = "at the median" if figure.get("stage") == "e2e" else "(mean: 1 / median throughput)"
    return (f"{figure.get('unit')} per MAC: {figure['per_mac']:.3f}{interval}, {figure.get('label')} "
            f"({figure['per_inference'] / 1e6:,.3f} M {figure.get('unit')} per inference {at} / "
            f"{figure['macs'] / 1e6:,.3f} M MACs; {figure.get('basis')})")
