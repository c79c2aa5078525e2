"""The simulated board's power model behind the power-meter interface (level 2).

:class:`SimMeter` implements :class:`edgebench.power.base.PowerMeter` for a
:class:`~edgebench.sim.client.SimClient`, so ``edgebench energy --board sim-pi5``
runs the same measurement and analysis as with a real instrument. While it
records, the board keeps a trace of every interval of constant power its
physics integrates (idle, busy during each inference, telemetry samples), and
``read``/``stop`` return those intervals as :class:`~edgebench.power.base.Samples`:
exact interval averages, no sampling error and no gaps.

Its times are on the simulated board's own clock (``clock == "device"``): the
inference windows the board reports need no alignment. The quiet windows
before and after a run let simulated time pass with the board idle
(:meth:`SimMeter.idle`) instead of sleeping. Every figure is labelled
``simulated``: it is the power model's (``SimParams``), not a measurement.
"""
from __future__ import annotations

import numpy as np

from edgebench.power.base import MeterInfo, Samples, empty_samples

CLOCK = "device"


class SimMeter:
    """Power of a simulated board, read from its physics (see the module doc)."""

    def __init__(self, client, boundary: str = "board"):
        self.client = client
        self.board = client.board
        self.boundary = boundary
        self._cursor = 0
        self._rows: list = []

    def describe(self) -> MeterInfo:
        p = self.board.p
        return MeterInfo(instrument=f"simulated power model of {p.title} (edgebench.sim: idle "
                                    f"{p.idle_power_w:g} W + dynamic up to {p.dynamic_power_w:g} W)",
                         sample_rate_hz=None, boundary=self.boundary,
                         tested_against="the simulated board itself (no hardware)", clock=CLOCK,
                         quantity="power model (exact interval averages)", label="simulated",
                         reads="the simulated board's power model",
                         details={"model": "P = idle + busy x dynamic x f V(f)^2 / (f_max V_max^2)"})

    def start(self) -> None:
        self.board.trace = []
        self._cursor = 0

    def idle(self, seconds: float) -> tuple:
        """Let ``seconds`` of simulated time pass with the board idle; the window on the meter's clock."""
        t0 = self.board.now_ns
        self.board.advance(int(round(seconds * 1e9)), 0.0)
        return t0 / 1e9, self.board.now_ns / 1e9

    def health(self):
        return None

    def _samples(self, rows: list) -> Samples:
        if not rows:
            return empty_samples(CLOCK)
        a = np.asarray(rows, dtype=np.float64)
        return Samples(a[:, 0] / 1e9, a[:, 1] / 1e9, a[:, 2], clock=CLOCK,
                       meta={"source": "simulated power model", "intervals": int(len(rows))})

    def read(self) -> Samples:
        rows = list(self.board.trace or [])
        new, self._cursor = rows[self._cursor:], len(rows)
        return self._samples(new)

    def stop(self) -> Samples:
        rows = list(self.board.trace or [])
        self.board.trace = None
        return self._samples(rows)

    def close(self) -> None:
        self.board.trace = None


__all__ = ["SimMeter"]
