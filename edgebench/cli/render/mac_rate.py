"""The per-MAC line of a latency run on a microcontroller (``extra.mac_rate``, see
:mod:`edgebench.bench.mac_rate`): shown under the latency table by ``bench`` and ``runs``; and
the cycle estimate beside the published anchors of an MLPerf Tiny run on an emulated board
(``extra.cycle_estimate``, ``extra.anchors``: :mod:`edgebench.bench.mlperf_mode`)."""
from __future__ import annotations

from typing import Optional

from edgebench.mcu.anchors import lines
from edgebench.mcu.cycles import sentence
from edgebench.results.model import RunResult


def mac_rate_line(result: RunResult) -> Optional[str]:
    """``instructions per MAC: 2.020, emulated (...)``; None when the run has no such figure."""
    figure = result.extra.mac_rate
    if not figure:
        return None
    if not figure.available:
        return f"per MAC: not reported ({figure.reason})"
    per_mac, per_inference, macs = figure.per_mac, figure.per_inference, figure.macs
    if per_mac is None or per_inference is None or macs is None:
        return f"per MAC: an incomplete figure ({figure.unit}, {figure.label})"
    ci = figure.per_mac_ci
    interval = (f" [95% CI {ci[0]:.3f}–{ci[1]:.3f}]" if ci and len(ci) == 2 and ci[0] is not None and ci[1] is not None
                else "")
    at = "at the median" if figure.stage == "e2e" else "(mean: 1 / median throughput)"
    return (f"{figure.unit} per MAC: {per_mac:.3f}{interval}, {figure.label} "
            f"({per_inference / 1e6:,.3f} M {figure.unit} per inference {at} / "
            f"{macs / 1e6:,.3f} M MACs; {figure.basis})")


def estimate_lines(result: RunResult) -> list:
    """``estimated N ms on NUCLEO-L4R5ZI at 120 MHz (cycle model)`` and the published figures beside it."""
    extra = result.extra
    est = extra.cycle_estimate      # free-form mappings: the cycle model's estimate and the published anchors
    if not est:
        return []
    if not est.get("available"):
        return [f"cycle estimate: not made ({est.get('reason')})"]
    out = [f"{sentence(est)}; {est['cycles_per_mac']:.2f} cycles/MAC" if est.get("cycles_per_mac")
           else sentence(est)]
    anchors = extra.anchors
    if anchors:
        out += lines(anchors)
    else:
        out.append("no published MLPerf Tiny figure for this model id (anchors: kws01, ic01, vww01, ad01)")
    return out
