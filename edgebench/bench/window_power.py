"""Energy of a soak's window without a meter (level 4): used by soak, and through soak by sweep.

Average power over a window and energy per inference (idle time between
inferences included) = energy in the window / inferences started in it.

* A simulated board: its power model's energy counter, read after every ``run``
  request by :class:`EnergyCounter` (``status()["simulated_energy_j"]`` at the
  board's clock ``status()["clock_ns"]``); labelled ``simulated``.
* A real board with datasheet power figures and no meter: ``idle + (active - idle)
  x busy fraction`` with the busy fraction = achieved rate x median latency;
  labelled ``estimated (datasheet)``.
* Otherwise (an emulated board, no datasheet figures): no energy, and a note why.

A measured figure needs a meter: ``edgebench energy --meter ...``.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from edgebench.bench.energy import datasheet_power
from edgebench.boards.profile import ESTIMATED_LABEL
from edgebench.errors import UsageError
from edgebench.results.figures.energy import WindowEnergy

DEFINITION = "average power over the window / inference rate (idle time between inferences included)"


class EnergyCounter:
    """A simulated board's client that notes the board model's energy counter and clock after every
    ``run`` request; everything else passes through."""

    def __init__(self, inner):
        self._inner = inner
        self.marks: list = []      # (clock_ns, energy_j)

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def _mark(self) -> None:
        st = self._inner.status()
        energy, clock = st.get("simulated_energy_j"), st.get("clock_ns")
        if energy is not None and clock is not None:
            self.marks.append((int(clock), float(energy)))

    def request_arrays(self, op, payload=b"", **kw):
        out = self._inner.request_arrays(op, payload, **kw)
        if op == "run":
            self._mark()
        return out

    def request(self, op, payload=b"", **kw):
        out = self._inner.request(op, payload, **kw)
        if op == "run":
            self._mark()
        return out

    def run(self, *a, **kw):
        out = self._inner.run(*a, **kw)
        self._mark()
        return out


def energy_basis(label: str, profile) -> dict:
    """Where a window's energy comes from on this board (see the module doc)."""
    if label == "simulated":
        return {"label": "simulated", "method": "the simulated board's energy counter (its power model), "
                "over the final (sustained) window", "instrument": None, "boundary": "the simulated board"}
    if label == "emulated":
        return {"label": None, "method": None, "note": "an emulated board has no energy: none reported"}
    try:
        ds = datasheet_power(profile)
    except UsageError as exc:
        return {"label": None, "method": None, "note": f"no energy figures: {exc.one_line()}"}
    how = ("idle power + (active - idle) x busy fraction" if ds["idle_w"] is not None
           else "active power x latency (no idle power in the datasheet: inference only, idle excluded)")
    return {"label": ESTIMATED_LABEL, "method": f"no meter: {how}, from datasheet figures", "datasheet": ds,
            "boundary": "board (datasheet figures)", "instrument": None}


def window_energy(basis: dict, marks: list, starts_ns, t_from_ns: Optional[int], per_s: Optional[float],
                  median_s: Optional[float]) -> Optional[WindowEnergy]:
    """Energy figures of the window from ``t_from_ns`` to the end; ``starts_ns``: every inference's start
    (device clock); ``per_s``/``median_s``: the window's rate and median latency. None when there is none."""
    if not basis.get("label") or not per_s:
        return None
    if basis["label"] == "simulated":
        if len(marks) < 2 or t_from_ns is None:
            return None
        c = np.array([m[0] for m in marks], np.int64)
        e = np.array([m[1] for m in marks], np.float64)
        i0 = int(np.searchsorted(c, t_from_ns, side="left"))
        if i0 >= c.size - 1:
            return None
        t = np.asarray(starts_ns, np.int64)
        n = int(np.count_nonzero((t >= c[i0]) & (t < c[-1])))
        if n == 0:
            return None
        joules, span = float(e[-1] - e[i0]), (int(c[-1]) - int(c[i0])) / 1e9
        return WindowEnergy(per_inference_j=joules / n, avg_power_w=joules / span, label="simulated",
                            n=n, span_s=span, rate_hz=n / span, definition=DEFINITION)
    ds = basis["datasheet"]
    if not median_s:
        return None
    if ds["idle_w"] is None:
        return WindowEnergy(per_inference_j=ds["active_w"] * median_s, avg_power_w=None, label=basis["label"],
                            definition="datasheet active power x median latency (inference only, idle excluded)")
    busy = min(1.0, per_s * median_s)
    avg = ds["idle_w"] + (ds["active_w"] - ds["idle_w"]) * busy
    return WindowEnergy(per_inference_j=avg / per_s, avg_power_w=avg, label=basis["label"], busy_fraction=busy,
                        rate_hz=per_s, definition=DEFINITION)


__all__ = ["EnergyCounter", "energy_basis", "window_energy"]
