"""An energy run's journal (level 4): what a killed `edgebench energy` needs to be finished later.

While :func:`edgebench.bench.energy.measure_energy` runs, after every chunk of the
workload it appends to the run folder (``edgebench.results.store.open_journal``,
fsync'd per chunk):

* ``power.journal.*``: the meter's samples since the previous chunk (``meter.read()``);
* ``windows.journal.*``: each inference of the workload (chunk, mode, ``t_start_ns``,
  ``e2e_s`` on the device clock);
* ``brackets.journal.*``: each chunk's host-clock bracket and device span (the clock
  alignment of a remote board);

and once, ``energy.json``: the idle window before the run, the rate, the options, the
meter's description. A run that ends (complete, or stopped by Ctrl-C, a signal or an
error: its ``power.parquet`` is then written) removes them. A run killed outright
(SIGKILL, power loss) leaves ``run.json`` at ``running`` with these files:
:func:`recover_energy` (``energy --recover RUN_DIR``) analyses what they hold with the
same code as a finished run (:func:`edgebench.bench.energy_analysis.analyse`): idle power from
the window before the run only (the one after never happened), the inferences the
meter covered, warm-up detected again (MSER-5), and marks the run ``incomplete``.
Marker edges (GPIO) are not journaled: a recovered run is aligned by clock.
"""
from __future__ import annotations

import json
from dataclasses import asdict, fields
from pathlib import Path
from typing import Optional

import numpy as np

from edgebench.bench.energy_analysis import EnergyOptions, TimedClient, analyse
from edgebench.errors import ResultError
from edgebench.power.base import MeterInfo, Samples
from edgebench.results import store
from edgebench.stats.warmup import detect_warmup

SIDECAR = "energy.json"
JOURNALS = ("power", "windows", "brackets")


class EnergyJournal:
    """Appends the meter's samples and the workload's inference windows as the run goes."""

    def __init__(self, runs_root, before: set, meter, timed, context: dict):
        self.runs_root, self.before, self.meter, self.timed, self.context = runs_root, before, meter, timed, context
        self.dir: Optional[Path] = None
        self.journals: dict = {}
        self.k = timed.bench_from

    def chunk(self) -> None:
        """After a chunk: open the journal once the run folder exists, then append what is new."""
        if self.dir is None:
            new = sorted(set(store.find_runs(self.runs_root)) - self.before)
            if not new:
                return
            self.dir = new[-1]
            store.write_text_atomic(self.dir / SIDECAR, json.dumps(self.context, indent=2, default=str) + "\n")
            self.journals = {name: store.open_journal(self.dir, name) for name in JOURNALS}
        s = self.meter.read()
        if len(s):
            self.journals["power"].append(s.to_frame())
        t = self.timed
        for k in range(self.k, len(t.chunks)):
            c, (h0, h1, d0, d1) = t.chunks[k], t.brackets[k]
            self.journals["brackets"].append({"chunk": [k], "mode": [c["mode"]], "n": [c["n"]],
                                              "first_ns": [c["first_ns"]], "last_ns": [c["last_ns"]],
                                              "host_send_s": [h0], "host_recv_s": [h1], "dev_first_s": [d0],
                                              "dev_last_end_s": [d1]})
            arrs = t.arrays[k]
            n = len(arrs["t_start_ns"])
            self.journals["windows"].append({"chunk": np.full(n, k), "mode": np.full(n, c["mode"]),
                                             "t_start_ns": np.asarray(arrs["t_start_ns"], np.int64),
                                             "e2e_s": np.asarray(arrs["e2e_ns"], np.float64) / 1e9})
        self.k = len(t.chunks)

    def remove(self, run_dir=None) -> None:
        """The run ended and its power samples are in ``power.parquet``: the journal is no longer needed."""
        for j in self.journals.values():
            j.close()
        d = self.dir or run_dir
        if d is None:
            return
        for name in JOURNALS:
            store.remove_journal(d, name)
        (Path(d) / SIDECAR).unlink(missing_ok=True)


def context(marks: dict, rate_hz: float, opts, info, local: bool, marker_board: bool) -> dict:
    """What ``energy.json`` records for a later recovery."""
    return {"format": "edgebench-energy-journal", "idle_before": list(marks["idle_before"]), "rate_hz": rate_hz,
            "options": asdict(opts), "meter": info.to_dict(), "local": bool(local), "marker_board": bool(marker_board)}


def recover_energy(run_dir):
    """Finish an energy run killed outright from its journal (see the module doc); returns the result."""
    d = Path(run_dir)
    r = store.read_unfinished(d)
    if r.status != "running" or not (d / SIDECAR).exists():
        raise ResultError(f"{d} is not an unfinished energy run (kind {r.kind}, status {r.status}, "
                          f"{'with' if (d / SIDECAR).exists() else 'no'} {SIDECAR})", "nothing to recover")
    try:
        side = json.loads((d / SIDECAR).read_text())
        side["meter"], side["options"], side["idle_before"]   # noqa: B018 - what recovery reads
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise ResultError(f"{d / SIDECAR} is damaged ({type(exc).__name__}: {exc})",
                          "the energy run cannot be recovered without it; run `edgebench energy` again") from None
    power = store.read_journal(d, "power")
    windows = store.read_journal(d, "windows")
    brackets = store.read_journal(d, "brackets")
    if not len(power) or not len(windows):
        raise ResultError(f"{d}: the energy run was killed before its first chunk was journaled",
                          "nothing measured to recover; run `edgebench energy` again")
    meter = side["meter"]
    info = MeterInfo(**{f.name: meter[f.name] for f in fields(MeterInfo) if f.name in meter})
    samples = Samples(power["t_s"], power["dt_s"], power["power_w"], clock=info.clock)
    timed = TimedClient(None, side["local"])
    timed.brackets = [tuple(b) for b in brackets[["host_send_s", "host_recv_s", "dev_first_s",
                                                  "dev_last_end_s"]].itertuples(index=False)]
    timed.chunks = [{"mode": b.mode, "n": int(b.n), "first_ns": int(b.first_ns), "last_ns": int(b.last_ns)}
                    for b in brackets.itertuples(index=False)]
    opts = EnergyOptions(**{k: v for k, v in side["options"].items() if k in EnergyOptions.__dataclass_fields__})
    frame = windows.copy()
    phase = np.where(frame["chunk"] == frame["chunk"].min(), "cold", "measure").astype(object)
    rest = np.flatnonzero(phase == "measure")
    if rest.size:
        warm = detect_warmup(frame["e2e_s"].to_numpy()[rest], min_warmup=10).n_warmup
        phase[rest[:warm]] = "warmup"
    frame.insert(0, "phase", phase)
    store.write_samples(d, frame[["phase", "t_start_ns", "e2e_s"]])
    r.extra.writer = None          # the writer is gone; a finished run names none
    r.status = "incomplete"
    r.status_reason = ("the energy process stopped without finishing (crash or kill); recovered the "
                       f"{len(windows):,} inferences and {len(power):,} power samples it had journaled (idle power "
                       "from the window before the run only; latency not summarised)")
    marker_board = side.get("marker_board", side.get("board_kind") == "mcu")   # journals before 0.3: board_kind
    analyse(r, d, samples, info, timed, {"idle_before": tuple(side["idle_before"])}, opts, side["rate_hz"],
            marker_board)
    for name in JOURNALS + ("samples", "repeats"):  # the latter two: the bench workload's own journal
        store.remove_journal(d, name)
    (d / SIDECAR).unlink(missing_ok=True)
    return r


__all__ = ["EnergyJournal", "context", "recover_energy"]
