"""Published MLPerf Tiny anchors for a Cortex-M4 (NUCLEO-L4R5ZI at 120 MHz), one source of truth.

The latencies are those issue 31 quotes from mlcommons/tiny_results v0.5-v1.3 (closed division,
NUCLEO-L4R5ZI): the TFLM + CMSIS-NN reference submission and the best published figure on
the same board. Cycles per MAC = latency x 120 MHz / MACs. ``docs/mlperf-tiny.md`` section 5
carries the same table; a test checks that the two agree.

Library code: no printing.
"""
from __future__ import annotations

from dataclasses import dataclass

CLOCK_HZ = 120_000_000
BOARD = "NUCLEO-L4R5ZI"
SOURCE = "mlcommons/tiny_results v0.5-v1.3, closed division, NUCLEO-L4R5ZI (as quoted in issue 31)"


@dataclass(frozen=True)
class Anchor:
    model_id: str
    title: str
    macs: int
    reference_ms: float          # TFLM + CMSIS-NN reference submission
    best_ms: float               # the best published figure on this board
    best_engine: str | None

    def cycles_per_mac(self, ms: float) -> float:
        return ms * 1e-3 * CLOCK_HZ / self.macs

    def to_dict(self) -> dict:
        return {"model_id": self.model_id, "title": self.title, "macs": self.macs, "board": BOARD,
                "clock_hz": CLOCK_HZ, "reference_ms": self.reference_ms,
                "reference_cycles_per_mac": self.cycles_per_mac(self.reference_ms),
                "reference_engine": "TFLM + CMSIS-NN", "best_ms": self.best_ms,
                "best_cycles_per_mac": self.cycles_per_mac(self.best_ms), "best_engine": self.best_engine,
                "label": "published", "source": SOURCE}


ANCHORS = {a.model_id: a for a in (
    Anchor("kws01", "KWS DS-CNN", 2_657_000, 181.9, 43.19, "X-CUBE-AI 9.0"),
    Anchor("ic01", "IC ResNet-8", 12_502_000, 704.2, 165.1, None),
    Anchor("vww01", "VWW MobileNetV1 0.25", 7_490_000, 600.6, 88.9, None),
    Anchor("ad01", "AD FC autoencoder", 264_000, 10.05, 4.05, "Plumerai"),
)}


def anchor_for(model_id: str | None) -> Anchor | None:
    return ANCHORS.get(model_id or "")


def compare(model_id: str | None, estimate: dict) -> dict | None:
    """The estimate (:func:`edgebench.mcu.cycles.describe`) beside the published figures for ``model_id``:
    how many times slower or faster than the reference and the best. None for an unknown id."""
    a = anchor_for(model_id)
    if a is None:
        return None
    ms = estimate["ms"]
    return {**a.to_dict(), "estimate_ms": ms, "estimate_label": estimate.get("label", "estimated"),
            "vs_reference": ms / a.reference_ms, "vs_best": ms / a.best_ms}


def lines(cmp: dict) -> list:
    """Human lines of :func:`compare` (the estimate is never a measurement)."""
    best = f" ({cmp['best_engine']})" if cmp["best_engine"] else ""
    return [f"published on {cmp['board']} ({cmp['model_id']}): TFLM + CMSIS-NN reference {cmp['reference_ms']:g} ms "
            f"({cmp['reference_cycles_per_mac']:.2f} c/MAC), best {cmp['best_ms']:g} ms "
            f"({cmp['best_cycles_per_mac']:.2f} c/MAC){best}",
            f"edgebench estimate {cmp['estimate_ms']:.2f} ms = {cmp['vs_reference']:.2f}x the reference, "
            f"{cmp['vs_best']:.2f}x the best (estimated against published, not a measurement)"]


__all__ = ["ANCHORS", "Anchor", "anchor_for", "compare", "lines", "BOARD", "CLOCK_HZ", "SOURCE"]
