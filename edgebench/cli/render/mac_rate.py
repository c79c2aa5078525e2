"""The per-MAC line of a latency run on a microcontroller (``extra.mac_rate``, see
:mod:`edgebench.bench.mac_rate`): shown under the latency table by ``bench`` and ``runs``; and
the cycle estimate beside the published anchors of an MLPerf Tiny run on an emulated board
(``extra.cycle_estimate``, ``extra.anchors``: :mod:`edgebench.bench.mlperf_mode`)."""
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


def estimate_lines(result) -> list:
    """``estimated N ms on NUCLEO-L4R5ZI at 120 MHz (cycle model)`` and the published figures beside it."""
    extra = getattr(result, "extra", None) or {}
    est = extra.get("cycle_estimate")
    if not est:
        return []
    if not est.get("available"):
        return [f"cycle estimate: not made ({est.get('reason')})"]
    from edgebench.mcu.anchors import lines
    from edgebench.mcu.cycles import sentence

    out = [f"{sentence(est)}; {est['cycles_per_mac']:.2f} cycles/MAC" if est.get("cycles_per_mac")
           else sentence(est)]
    anchors = extra.get("anchors")
    if anchors:
        out += lines(anchors)
    else:
        out.append("no published MLPerf Tiny figure for this model id (anchors: kws01, ic01, vww01, ad01)")
    return out
