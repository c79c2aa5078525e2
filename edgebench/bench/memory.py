"""Peak memory of a run (level 4): ``extra.memory`` in run.json, shown by bench, accuracy and the summary.

* a Linux board: the agent process's peak resident memory (``VmHWM`` of ``/proc/self/status``, the agent's
  ``status`` operation: docs/agent-protocol.md), the largest over the run's repeats, and its resident
  memory at the end; ``ru_maxrss`` only where VmHWM is missing (it survives ``exec``, so it can be the
  parent's peak: said in ``basis``);
* a microcontroller: the planned arena, the DSP kernels' scratch, the model blob, and the fit check's
  sizes against the board's (:func:`edgebench.mcu.fit.check_fit`: firmware build and datasheet);
* a simulated board: nothing (it has no process to measure).
"""
from __future__ import annotations

from typing import Optional

from edgebench.boards.profile import MCU_CLIENT, SIM_CLIENT
from edgebench.errors import EdgebenchError

HWM = "the agent process's peak resident memory (VmHWM)"
MAXRSS = "the agent's ru_maxrss (may include the process it was started from)"


def process_memory(status: Optional[dict], before: Optional[dict] = None) -> Optional[dict]:
    """``extra.memory`` of a Linux board from its agent's ``status`` (``before``: the figures of earlier
    repeats, whose peak is kept); None when the agent reports no memory."""
    status = status or {}
    peak, basis = status.get("hwm_bytes"), HWM
    if peak is None:
        peak, basis = status.get("maxrss_bytes"), MAXRSS
    if peak is None and status.get("rss_bytes") is None:
        return before
    out = {"peak_rss_bytes": peak, "rss_bytes": status.get("rss_bytes"), "basis": basis}
    if before and before.get("peak_rss_bytes") is not None and (peak is None or before["peak_rss_bytes"] > peak):
        out["peak_rss_bytes"], out["basis"] = before["peak_rss_bytes"], before.get("basis")
    return out


def mcu_memory(model, profile) -> Optional[dict]:
    """``extra.memory`` of a microcontroller: arena, scratch, blob and the fit sizes (None if unknown)."""
    from edgebench.mcu.fit import check_fit, dsp_scratch_bytes

    try:
        fit = check_fit(model, profile)
    except EdgebenchError:
        return None
    if fit.arena_bytes is None:
        return None
    return {"arena_bytes": fit.arena_bytes, "scratch_bytes": dsp_scratch_bytes(profile),
            "model_bytes": fit.blob_bytes, "basis": "the engine's memory plan (edgebench.mcu.fit)",
            "fit": [{k: c.to_dict()[k] for k in ("what", "need_bytes", "have_bytes", "fits", "basis", "placement")}
                    for c in fit.checks]}


def run_memory(profile, model, status: Optional[dict], before: Optional[dict] = None) -> Optional[dict]:
    """``extra.memory`` for a run on ``profile`` (module doc); ``model`` a path or bytes of the model."""
    if profile.client_kind == SIM_CLIENT:
        return None
    if profile.client_kind == MCU_CLIENT:
        return before or mcu_memory(model, profile)
    return process_memory(status, before)


__all__ = ["process_memory", "mcu_memory", "run_memory"]
