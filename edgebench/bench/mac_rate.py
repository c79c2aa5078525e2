"""Instructions (or cycles) per multiply-accumulate of a microcontroller latency run (level 4).

Beside a latency on an MCU board, ``bench`` reports how much work the engine spends per
MAC, a figure that compares engines and kernels across models. The MACs are the static
count from the model's shapes (:func:`edgebench.runtime.inspect.inspect_model`); the time is
the run's end-to-end median, which on edgebench firmware is the device's own counter around
the engine (the input is in device RAM before the timed window).

* Emulated board (``firmware.emulator: qemu`` with ``icount_shift`` S): under
  ``qemu-system-arm -icount shift=S`` every emulated instruction advances virtual time by
  2**S ns, so a median of t seconds is t * 1e9 / 2**S emulated instructions
  (benchmarks/engine_instructions.py checks that relation with a loop of known length).
  Labelled **emulated**: QEMU models no pipeline, wait states or multi-cycle instructions,
  so these are instructions, not a real core's cycles.
* Real board whose firmware times with the core's cycle counter (``firmware.counter: cycles``,
  the STM32 ports' DWT ``CYCCNT``) and a run that recorded the device's ``counter-hz``: t *
  counter-hz is the count of core cycles the device read, labelled **measured**.
* Other real board with a known clock (``datasheet.cpu_max_freq_hz``): t * f cycles, labelled
  **estimated** (it assumes the core ran at the datasheet's maximum clock).
* Anything else (the posix build's host time, a board without a clock, a model whose MACs
  are not all counted, a run without a median): no figure, and :func:`mac_rate` says why.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

from edgebench.boards.profile import MCU_CLIENT
from edgebench.errors import EdgebenchError
from edgebench.results.figures.device import MacRate
from edgebench.results.figures.latency import LatencyFigure
from edgebench.results.model import RunResult
from edgebench.runtime.inspect import inspect_model

#: latency stage the figure divides (device-timed on edgebench firmware)
STAGE = "e2e"


def applies(profile) -> bool:
    """The figure is a microcontroller's: one core running only the model, its instructions or cycles
    countable from the device's clock or its datasheet."""
    return profile.client_kind == MCU_CLIENT


def _clock(profile, counter_hz: Optional[int] = None) -> tuple:
    """(unit, per-second factor, label, basis) for a board, or (None, None, None, reason);
    ``counter_hz``: the device's counter frequency the run recorded (``eb-info``)."""
    fw = getattr(profile, "firmware", None)
    if not applies(profile):
        return None, None, None, f"board {getattr(profile, 'name', '?')} is not a microcontroller"
    if fw is not None and getattr(fw, "icount_shift", None) is not None:     # qemu -icount: virtual time
        shift = int(fw.icount_shift)
        return ("instructions", 1e9 / 2 ** shift, "emulated",
                f"qemu-system-arm -icount shift={shift}: one emulated instruction per {2 ** shift} ns of "
                "virtual time (instructions, not a real core's cycles)")
    if fw is not None and getattr(fw, "emulator", None):
        return None, None, None, f"the {fw.emulator} build runs on this computer: its time is not a core's cycles"
    if fw is not None and getattr(fw, "counter", None) == "cycles" and counter_hz:
        return ("cycles", float(counter_hz), "measured",
                f"the device's cycle counter at {int(counter_hz) / 1e6:g} MHz (its core clock): median x "
                "counter-hz is the core cycles it counted")
    hz = getattr(getattr(profile, "datasheet", None), "cpu_max_freq_hz", None)
    if hz:
        return ("cycles", float(hz), "estimated",
                f"median x {float(hz) / 1e6:g} MHz, the datasheet's maximum clock (assumed during the run)")
    return None, None, None, f"board {profile.name} has no datasheet clock (datasheet.cpu_max_freq_hz)"


def clock_basis(profile, counter_hz: Optional[int] = None) -> dict:
    """What one second of the board's timing is in work: ``{"available": True, "unit", "per_s",
    "label", "basis"}`` (instructions or cycles per second, as :func:`mac_rate` uses it), or
    ``{"available": False, "reason"}``."""
    unit, per_s, label, basis = _clock(profile, counter_hz)
    if unit is None:
        return {"available": False, "reason": basis}
    return {"available": True, "unit": unit, "per_s": per_s, "label": label, "basis": basis}


def mac_rate(latency: Mapping[str, Any], profile, model_path, report=None, counter_hz: Optional[int] = None) -> dict:
    """``{"available": bool, ...}`` (the keys of :class:`~edgebench.results.figures.device.MacRate`):
    instructions or cycles per MAC for one latency result; ``selftest`` keeps it in its own check.

    ``latency`` is the result's ``latency`` mapping (``e2e``: a :class:`LatencyFigure`, or its dict,
    with ``median_s`` and its interval); ``report`` an :class:`~edgebench.runtime.inspect.ModelReport`
    (read from ``model_path`` when omitted)."""
    unit, per_s, label, basis = _clock(profile, counter_hz)
    if unit is None:
        return {"available": False, "reason": basis}
    stage = (latency or {}).get(STAGE)
    fig = stage if isinstance(stage, LatencyFigure) else LatencyFigure.model_validate(stage or {})
    median = fig.median_s
    if not median:
        return {"available": False, "reason": "the run has no end-to-end median"}
    report = report or inspect_model(model_path)
    if not report.macs or report.macs_not_counted:
        missing = ", ".join(sorted({layer.op for layer in report.macs_not_counted}))
        return {"available": False,
                "reason": f"the model's MACs are not all counted ({missing})" if missing else "the model has no MACs"}
    macs = int(report.macs)

    def per_mac(seconds):
        return None if seconds is None else seconds * per_s / macs

    lo, hi = fig.ci_low_s, fig.ci_high_s
    return {
        "available": True,
        "unit": unit,                                   # "instructions" or "cycles"
        "label": label,                                 # "emulated", "measured" or "estimated"
        "basis": basis,
        "stage": STAGE,
        "median_s": median,
        "per_inference": median * per_s,
        "per_mac": per_mac(median),
        "per_mac_ci": [per_mac(lo), per_mac(hi)] if lo is not None and hi is not None else None,
        "macs": macs,
        "macs_basis": "computed (static count from the model's shapes, edgebench inspect)",
    }


def device_counter_hz(result: RunResult) -> Optional[int]:
    """The device counter's frequency a run recorded (``board.system.firmware`` of edgebench firmware:
    the firmware's own report, a plain dict)."""
    hz = (result.board.system.firmware or {}).get("counter-hz")
    return int(hz) if isinstance(hz, int) and hz > 0 else None


def attach(result: RunResult, profile, model_path, report=None) -> Optional[MacRate]:
    """Compute the figure for a latency result on an MCU board and keep it in
    ``result.extra.mac_rate``; None (and nothing kept) for other boards."""
    if not applies(profile) or not result.latency:
        return None
    try:
        figure = MacRate.model_validate(mac_rate(result.latency, profile, model_path, report,
                                                 counter_hz=device_counter_hz(result)))
    except EdgebenchError as e:      # the model could not be inspected: say so, keep the run
        figure = MacRate(available=False, reason=f"MACs not counted: {e}")
    result.extra.mac_rate = figure
    return figure


def attach_mlperf(result: RunResult, profile, model_path, report=None) -> Optional[MacRate]:
    """The same for an MLPerf Tiny performance run (``extra.mlperf.latency_s``: 1 / the median
    throughput of its windows, a mean per inference, timed by the device; ``extra.mlperf`` is the
    dialect's own free-form figures)."""
    latency_s = (result.extra.mlperf or {}).get("latency_s")
    if not applies(profile) or latency_s is None:
        return None
    try:
        figure = MacRate.model_validate(mac_rate({STAGE: LatencyFigure(median_s=latency_s)}, profile, model_path,
                                                 report, counter_hz=device_counter_hz(result)))
    except EdgebenchError as e:
        figure = MacRate(available=False, reason=f"MACs not counted: {e}")
    if figure.available:
        figure.stage = "mlperf: 1 / median throughput (a mean per inference)"
    result.extra.mac_rate = figure
    return figure


__all__ = ["mac_rate", "clock_basis", "attach", "attach_mlperf", "device_counter_hz", "STAGE"]
