"""`bench --mlperf` on a QEMU board: the cycle estimate and the anchors in the run and on screen
(edgebench.bench.mlperf_mode.attach_estimate, edgebench.cli.render.mac_rate.estimate_lines)."""
from __future__ import annotations

import io

import pytest
from rich.console import Console

from edgebench.bench import mlperf_mode
from edgebench.bench.record import new_result
from edgebench.boards.registry import get_profile
from edgebench.cli.render import print_run
from edgebench.errors import UsageError
from edgebench.mcu.cycles import CycleModel, describe
from edgebench.results.kinds import MLPERF

COUNTS = {**{k: 0 for k in CycleModel().counts}, "base": 12_000_000, "instructions": 9_000_000}


def _printed(result) -> str:
    buf = io.StringIO()
    print_run(Console(file=buf, width=300), result)
    return buf.getvalue()


def test_a_qemu_run_gets_the_estimate_beside_the_published_figures(monkeypatch):
    import edgebench.mcu.cycles as cycles

    monkeypatch.setattr(cycles, "estimate_model", lambda path: {**describe(COUNTS, macs=2_657_000), "layers": []})
    result = new_result(MLPERF.name, "emulated")
    est = mlperf_mode.attach_estimate(result, get_profile("qemu-m4"), "kws.tflite", "kws01")
    assert est["available"] and "layers" not in result.extra.cycle_estimate
    assert result.extra.anchors["vs_best"] == pytest.approx(100.0 / 43.19)
    text = _printed(result)
    assert "estimated 100.00 ms on NUCLEO-L4R5ZI at 120 MHz (cycle model" in text
    assert "9,000,000 emulated instructions" in text
    assert "TFLM + CMSIS-NN reference 181.9 ms" in text and "2.32x the best" in text


def test_no_estimate_off_qemu_and_a_reason_when_it_cannot_be_made(monkeypatch):
    import edgebench.mcu.cycles as cycles

    measured = new_result(MLPERF.name, "measured")
    assert mlperf_mode.attach_estimate(measured, get_profile("nucleo-l4r5zi"), "m.tflite", "kws01") is None
    assert "cycle_estimate" not in measured.extra.to_dict()

    def refuse(path):
        raise UsageError("arm-none-eabi-gcc is not installed")

    monkeypatch.setattr(cycles, "estimate_model", refuse)
    result = new_result(MLPERF.name, "emulated")
    mlperf_mode.attach_estimate(result, get_profile("qemu-m4"), "m.tflite", "ic01")
    assert result.extra.cycle_estimate == {"available": False, "label": "estimated",
                                           "reason": "arm-none-eabi-gcc is not installed"}
    assert result.extra.anchors is None
    assert "cycle estimate: not made (arm-none-eabi-gcc is not installed)" in _printed(result)
