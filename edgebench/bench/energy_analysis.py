"""From an energy run's samples to its figures (level 4): the options, the client wrapper that
times every request, and :func:`analyse`.

:class:`TimedClient` brackets every ``run`` of the workload on the host clock and keeps a
fixed-rate schedule across chunks; :func:`analyse` maps the inferences onto the meter's samples,
integrates (:mod:`edgebench.stats.energy`) and fills the run's ``power`` section. Used by a
finished run (:mod:`edgebench.bench.energy`) and by a recovered one
(:mod:`edgebench.bench.energy_journal`) alike.

Where the inference windows come from
-------------------------------------
* Linux boards: the device's per-inference ``t_start_ns`` and ``e2e_ns``
  (``time.perf_counter_ns`` on the board) mapped onto the meter's time base.
  For a local board both are CLOCK_MONOTONIC of the same computer (offset 0).
  For a remote board the offset is bounded by the requests: the device ran
  after the host sent a request and before its reply arrived; the intersection
  of those bounds over all requests gives the offset and its uncertainty.
  Instruments on their own sample clock add their anchor uncertainty.
* Microcontrollers (or ``alignment="marker"``): the GPIO marker edges the
  meter itself saw (LPM01A ``eventsrc d7``, a PPK2 logic bit), paired in order
  (start, end) as in MLPerf Tiny's energy mode: no clock alignment at all.

What is excluded from the per-event figures: warm-up inferences, the last
inference of each request chunk (its wind-down overlaps the harness's reply),
and inferences the meter did not cover; all are counted in ``excluded``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

from edgebench import ranges as R
from edgebench.bench.options import BenchOptions, RuntimeOptions
from edgebench.errors import UsageError
from edgebench.ranges import check_fields
from edgebench.report.claim import claim
from edgebench.results import store
from edgebench.results.figures.energy import Alignment, AveragePower, DutyCycle, EnergyFigure, PowerSection
from edgebench.results.model import RunResult, RunWarning
from edgebench.stats.energy import (
    bracket_offset,
    duty_point,
    event_energies,
    event_regions,
    events_mean_ci,
    idle_power,
    rounding_floor_j,
    si,
    si_range,
    window_energy,
    with_shared_term,
)

SPIN_LEAD_S = 0.0007  # the agent starts a chunk ~0.2 ms after the request arrives; plus local link latency
COVERAGE_MIN = 0.99


#: the ranges of EnergyOptions' numeric fields (edgebench.ranges: the CLI checks the same)
RANGES = {"rate_hz": R.RATE_HZ, "duty": R.DUTY, "idle_s": R.IDLE_S, "margin_s": R.MARGIN_S, "threads": R.THREADS,
          "seed": R.SEED, "min_samples": R.MIN_SAMPLES, "min_time_s": R.MIN_TIME_S, "max_time_s": R.MAX_TIME_S,
          "target_rel_ci": R.TARGET}


@dataclass
class EnergyOptions(RuntimeOptions):
    rate_hz: Optional[float] = None
    duty: Optional[float] = None
    idle_s: float = 3.0
    margin_s: Optional[float] = None      # largest margin around an inference (default: half the period)
    alignment: str = "auto"               # auto | clock | marker
    min_samples: int = 30
    min_time_s: float = 10.0
    max_time_s: float = 60.0
    target_rel_ci: float = 0.05

    def validate(self) -> None:
        check_fields(self, RANGES)
        if (self.rate_hz is None) == (self.duty is None):
            raise UsageError("give either --rate or --duty", "e.g. --rate 1/s, or --duty 0.05")
        if self.alignment not in ("auto", "clock", "marker"):
            raise UsageError(f"alignment {self.alignment!r}: use auto, clock or marker")

    def bench_options(self, rate_hz: float) -> BenchOptions:
        return BenchOptions(scenario="fixed-rate", **self.runtime(), rate_hz=rate_hz,
                            target_rel_ci=self.target_rel_ci, min_samples=self.min_samples,
                            min_time_s=self.min_time_s, max_time_s=self.max_time_s,
                            # one timed window: the meter's trace is aligned to it as a whole
                            repeat=1, max_repeats=1, run_kind="energy",
                            chunk_time_s=max(0.25, min(20.0 / rate_hz, 10.0)))


class TimedClient:
    """An agent client that brackets every ``run`` on the host clock and keeps a fixed-rate
    schedule across chunks (the next chunk's first request is sent to land one period
    after the previous chunk's last one)."""

    def __init__(self, inner, local: bool, clock: Callable[[], float] = time.perf_counter):
        self._inner, self._local, self._clock = inner, local, clock
        self.brackets: list = []   # (host_send_s, host_recv_s, dev_first_start_s, dev_last_end_s)
        self.chunks: list = []     # dicts: mode, n, first/last start ns
        self.arrays: list = []     # per chunk: the device's t_start_ns and e2e_ns (for the journal)
        self.bench_from = 0        # chunks before this one were the duty-cycle probe
        self._period: Optional[float] = None
        self._next_due: Optional[float] = None
        self._on_device = False    # the schedule continues on the device clock (start_ns), not by host sleeps

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def pace(self, rate_hz: Optional[float], on_device: bool = False) -> None:
        """The workload starts: pace it at ``rate_hz`` (None: do not pace); ``on_device``: by telling the
        device when each chunk's first request is due (``start_ns``), for a device on its own clock
        (a simulated board, where no host time passes between requests)."""
        self._period = 1.0 / rate_hz if rate_hz else None
        self._next_due = None
        self._on_device = on_device
        self.bench_from = len(self.chunks)

    def offset(self) -> float:
        if self._local or not self.brackets:
            return 0.0
        return bracket_offset(self.brackets)["offset_s"]

    def run(self, mode, count, max_time_s, rate_hz=None, start_index=0, **more):
        """The inner client's ``run``; extra keywords (e.g. a device-side ``start_ns`` schedule) pass
        through, and a caller that schedules on the device itself is not paced here."""
        if (mode == "fixed-rate" and self._period and self._next_due is not None
                and more.get("start_ns") is None):
            if self._on_device:
                more["start_ns"] = int(round(self._next_due * 1e9))
            else:
                wait = self._next_due - SPIN_LEAD_S - self._clock()
                if wait > 0:
                    time.sleep(wait)
        h0 = self._clock()
        header, arrs = self._inner.run(mode, count=count, max_time_s=max_time_s, rate_hz=rate_hz,
                                       start_index=start_index, **more)
        h1 = self._clock()
        t = np.asarray(arrs.get("t_start_ns", []), dtype=np.int64)
        if t.size:
            end = t.astype(np.float64) + np.asarray(arrs["e2e_ns"], dtype=np.float64)
            self.brackets.append((h0, h1, t[0] / 1e9, float(end.max()) / 1e9))
            self.chunks.append({"mode": mode, "n": int(t.size), "first_ns": int(t[0]), "last_ns": int(t[-1])})
            self.arrays.append({"t_start_ns": t, "e2e_ns": np.asarray(arrs["e2e_ns"])})
            if mode == "fixed-rate" and self._period and self._on_device:
                due = np.asarray(arrs.get("scheduled_ns", t), dtype=np.int64)
                self._next_due = float(due[-1]) / 1e9 + self._period
            elif mode == "fixed-rate" and self._period:
                self._next_due = t[-1] / 1e9 + self.offset() + self._period
        return header, arrs



# ---------------------------------------------------------------------------
# analysis


def _windows_from_device(frame, timed: TimedClient, local: bool):
    est = bracket_offset(timed.brackets)
    align = dict(est)
    if local:
        lo, hi = est["offset_s"] - est["uncertainty_s"], est["offset_s"] + est["uncertainty_s"]
        if lo - 1e-3 <= 0.0 <= hi + 1e-3:
            align = {"offset_s": 0.0, "uncertainty_s": 0.0, "consistent": True, "n_brackets": est["n_brackets"],
                     "method": "same clock: the agent runs on this computer (CLOCK_MONOTONIC); "
                               "request brackets agree", "bracket_check": est}
        else:
            align["warning"] = "local agent clock disagrees with the host clock: bracket estimate used"
    starts = frame["t_start_ns"].to_numpy(np.float64) / 1e9 + align["offset_s"]
    ends = starts + frame["e2e_s"].to_numpy(np.float64)
    return starts, ends, align


def _windows_from_marker(samples, frame, marks):
    """Marker windows, and the rows of ``frame`` they match (None when the counts differ)."""
    ev = samples.events_t_s
    lo, hi = marks["idle_before"][1], marks.get("idle_after", (np.inf,))[0]
    ev = np.sort(ev[(ev >= lo - 0.5) & (ev <= hi + 0.5)]) if ev.size else ev
    notes = []
    if ev.size % 2:
        notes.append(f"odd number of marker edges ({ev.size}): the last one is ignored")
        ev = ev[:-1]
    starts, ends = ev[0::2], ev[1::2]
    align: Dict[str, Any] = {"method": "GPIO marker edges seen by the meter, paired in order (start, end)",
             "offset_s": None, "uncertainty_s": float(np.median(samples.dt_s)) if len(samples) else None,
             "n_windows": int(starts.size), "n_device_inferences": int(len(frame))}
    matched = None
    if starts.size == len(frame):
        matched = frame
    elif starts.size == int((frame["phase"] != "cold").sum()):
        matched = frame[frame["phase"] != "cold"].reset_index(drop=True)
    else:
        notes.append(f"marker windows ({starts.size}) differ from the inferences the device reported "
                     f"({len(frame)}): phases cannot be matched, every window is used")
    align["notes"] = notes
    return starts, ends, align, matched


def analyse(result: RunResult, run_dir, samples, info, timed: TimedClient, marks: dict, opts: EnergyOptions,
            rate_hz: float, marker_board: bool) -> None:
    """Fill ``result.power`` from the meter's samples and the run's inferences; write the files.
    ``marker_board``: the board's firmware may drive a GPIO marker (a microcontroller), so
    ``alignment="auto"`` uses the marker edges the meter saw."""
    import pandas as pd  # 0.42 s to import (-X importtime): the analysis only

    frame = store.read_samples(run_dir)
    rows = frame[frame["phase"] != "cold"].reset_index(drop=True)
    use_marker = opts.alignment == "marker" or (
        opts.alignment == "auto" and marker_board and samples.events_t_s.size >= 2)
    if use_marker:
        starts, ends, align, matched = _windows_from_marker(samples, frame, marks)
        phase = matched["phase"].to_numpy() if matched is not None else np.array(["measure"] * starts.size)
    elif samples.clock == "device":
        starts = rows["t_start_ns"].to_numpy(np.float64) / 1e9
        ends = starts + rows["e2e_s"].to_numpy(np.float64)
        align = {"offset_s": 0.0, "uncertainty_s": 0.0,
                 "method": "same clock: the meter reads the simulated board's own clock"}
        matched, phase = rows, rows["phase"].to_numpy()
    else:
        starts, ends, align = _windows_from_device(rows, timed, timed._local)
        matched, phase = rows, rows["phase"].to_numpy()
    if samples.clock == "meter" and not use_marker:
        unc = samples.meta.get("anchor_uncertainty_s")
        align["meter_anchor_uncertainty_s"] = unc
        align["uncertainty_s"] = (align.get("uncertainty_s") or 0.0) + (unc or 0.0)
        align["method"] += "; meter clock anchored to the host at the start of its acquisition"
    last_in_chunk = _chunk_ends(timed, matched, starts.size)
    warnings = list(result.warnings)

    idle = idle_power(samples.t_s, samples.dt_s, samples.power_w,
                      [m for m in (marks.get("idle_before"), marks.get("idle_after")) if m])
    idle["label"] = info.label
    if idle["drift"]:
        warnings.append(RunWarning(code="idle-drift",
                                   message=f"idle power differed before ({idle['windows'][0]['power_w']:.4g} W) and "
                                           f"after ({idle['windows'][1]['power_w']:.4g} W) the run",
                                   remedy="lengthen --idle-s, or let the board settle (edgebench soak) first"))
    margin = opts.margin_s if opts.margin_s is not None else 0.5 / rate_hz
    ev = event_energies(samples.t_s, samples.dt_s, samples.power_w, starts, ends, idle["power_w"], margin)
    covered = ev.coverage >= COVERAGE_MIN
    used = (phase == "measure") & ~last_in_chunk & covered
    excluded = {"warmup": int(np.count_nonzero(phase == "warmup")),
                "chunk_end": int(np.count_nonzero((phase == "measure") & last_in_chunk)),
                "not_covered_by_meter": int(np.count_nonzero((phase == "measure") & ~last_in_chunk & ~covered))}
    power = PowerSection(
        measured=True, label=info.label, instrument=info.instrument, boundary=info.boundary,
        boundary_meaning=info.to_dict()["boundary_meaning"], sample_rate_hz=info.sample_rate_hz,
        tested_against=info.tested_against, meter=info.to_dict(),
        samples={"file": "power.parquet", "n": len(samples), "clock": samples.clock, "complete": samples.complete,
                 "problem": samples.problem, "meta": samples.meta},
        alignment=Alignment.model_validate(align), idle=EnergyFigure.model_validate(idle), excluded=excluded,
        model="average power = idle power + energy per event x rate",
        definitions={
            "inference.energy_j": "energy in the inference window, idle share included",
            "inference.above_idle_j": "inference energy minus idle power x its duration",
            "event.energy_j": "energy above idle in the inference window plus margins around it "
                              f"(at most {margin:.4g} s each side, half the gap to a neighbour)",
            "wake_up.energy_j": "event energy minus inference energy above idle"})
    n_used = int(np.count_nonzero(used))
    if n_used:
        event_j, event_s = _event_figures(power, samples, ev, used, idle, info.label)
        power.event.margin_s = margin
        power.average = _average(samples, starts, ends, used, ev, idle, margin, rate_hz, info.label)
        try:
            point = duty_point(idle["power_w"], event_j, rate_hz=rate_hz, event_s=event_s)
            power.duty_cycle = DutyCycle(**point.to_dict(), label=info.label)
        except UsageError as exc:
            power.duty_cycle = DutyCycle(error=exc.one_line())
        dt_med = float(np.median(samples.dt_s)) if len(samples) else None
        if dt_med and event_s < 2 * dt_med and samples.clock != "device":
            warnings.append(RunWarning(
                code="meter-too-slow-for-inference",
                message=f"one inference ({event_s * 1e3:.3g} ms) is shorter than two "
                        f"meter samples ({dt_med * 1e3:.3g} ms each): per-inference window energies are smeared; "
                        "the per-event energy (window plus margins) is the figure to use",
                remedy="raise the meter's sample rate (--meter-opt rate_hz=...) or use a faster instrument"))
    else:
        warnings.append(RunWarning(code="no-energy-events", message="no inference was fully covered by the meter",
                                   remedy="check the meter and the clock alignment"))
    if excluded["not_covered_by_meter"]:
        warnings.append(RunWarning(code="meter-gaps",
                                   message=f"{excluded['not_covered_by_meter']} inferences fell (partly) outside the "
                                           "meter's samples and were left out", remedy="see power.samples.problem"))
    warnings += [RunWarning(code="marker-mismatch", message=n, remedy="check the firmware's marker pin")
                 for n in align.get("notes") or []]
    if result.label in ("emulated", "simulated") and info.label != "simulated":
        warnings.append(RunWarning(code=f"{result.label}-board-energy",
                                   message=f"the board is {result.label}: the meter measured the computer running "
                                           "it, not a board", remedy="measure energy on real hardware"))
    check_duty(power, opts, warnings)
    result.kind = "energy"
    result.power = power
    result.warnings = warnings
    result.scenario.duty = opts.duty
    result.scenario.idle_s = opts.idle_s
    if not samples.complete:
        result.status = "incomplete"
        result.status_reason = f"{samples.problem}; energy figures use only what the meter covered"
    attach_claim(result)
    write_frame(run_dir, "power.parquet", samples.to_frame())
    events = pd.DataFrame({"phase": phase, "t_start_s": starts, "duration_s": ev.duration_s,
                           "window_j": ev.window_j, "inference_above_idle_j": ev.inference_above_idle_j,
                           "event_j": ev.event_j, "wake_j": ev.wake_j, "region_s": ev.region_s,
                           "coverage": ev.coverage, "chunk_end": last_in_chunk, "used": used})
    write_frame(run_dir, "energy_events.parquet", events)
    store.write_result(run_dir, result)


def _event_figures(power: PowerSection, samples, ev, used, idle: dict, label: str) -> Tuple[float, float]:
    """Energy per inference, per event above idle and of the wake-up, with their intervals, into ``power``;
    returns the mean event energy (J) and the median inference duration (s)."""
    # the idle power subtracted from every event is one estimate: its error is shared by all of them
    idle_half = (None if idle.get("ci_low_w") is None or idle.get("ci_high_w") is None
                 else (idle["ci_high_w"] - idle["ci_low_w"]) / 2.0)
    figs = {}
    for key, values, idle_s in (("inference", ev.window_j, None),
                                ("inference_above", ev.inference_above_idle_j, ev.duration_s),
                                ("event", ev.event_j, ev.region_s),
                                ("wake_up", ev.wake_j, ev.region_s - ev.duration_s)):
        ci = events_mean_ci(values[used])
        if idle_s is not None and idle_half is not None:
            ci = with_shared_term(ci, idle_half * float(np.mean(idle_s[used])), "the idle power's interval")
        d = ci.to_dict("j")
        d.pop("j", None)
        figs[key] = EnergyFigure(**d, energy_j=ci.mean, label=label)
        if key == "event":
            event_mean = float(ci.mean)
    floor = rounding_floor_j(samples.t_s, samples.dt_s, samples.power_w, idle["power_w"])
    for key in ("event", "wake_up", "inference_above"):
        fig = figs[key]
        bounds = [abs(v) for v in (fig.energy_j, fig.ci_low_j, fig.ci_high_j) if v is not None]
        fig.resolution_j = floor
        fig.resolved = not bounds or max(bounds) > floor
    above, inference = figs["inference_above"], figs["inference"]
    inference.above_idle_j, inference.above_idle_resolved = above.energy_j, above.resolved
    inference.above_idle_ci_low_j, inference.above_idle_ci_high_j = above.ci_low_j, above.ci_high_j
    duration = inference.duration_s = float(np.median(ev.duration_s[used]))
    power.inference, power.event, power.wake_up = inference, figs["event"], figs["wake_up"]
    return event_mean, duration


def energy_claim(power: PowerSection) -> str:
    """One sentence with the energy figures and their conditions, for the run's claim."""
    inf, ev, idle = power.inference, power.event, power.idle
    if not inf or inf.energy_j is None:
        return "Energy: no figure (see warnings)."

    def ci(low: Optional[float], high: Optional[float], n: Optional[int], unit: str) -> str:
        if low is None or high is None:
            return ""
        count = f", n={n}" if n else ""
        return f" (95% CI {si_range(low, high, unit)}{count})"
    parts = [f"{si(inf.energy_j, 'J')} per inference{ci(inf.ci_low_j, inf.ci_high_j, inf.n, 'J')}"]
    if ev and ev.energy_j is not None:
        parts.append(f"{si(ev.energy_j, 'J')} per event above idle"
                     + (" incl. wake-up" if power.measured else "") + ci(ev.ci_low_j, ev.ci_high_j, ev.n, "J"))
    if idle and idle.power_w is not None:
        parts.append(f"idle {si(idle.power_w, 'W')}{ci(idle.ci_low_w, idle.ci_high_w, idle.n, 'W')}")
    if power.measured:
        how = (f"{power.label or 'measured'} with {power.instrument} at the '{power.boundary}' boundary "
               f"(meter code tested against: {power.tested_against})")
    else:
        how = "estimated (datasheet): measured latency x datasheet power"
    return f"Energy: {', '.join(parts)}, {how}; not soaked to thermal steady state."


def attach_claim(result: RunResult) -> None:
    """The run's claim: its latency sentence (if any) and its energy sentence."""
    try:
        base = claim(result) if result.latency else ""
    except Exception:  # the claim is a summary; never lose a run over it
        base = result.extra.claim or ""
    result.extra.claim = f"{base} {energy_claim(result.power)}".strip()


def check_duty(power: PowerSection, opts: EnergyOptions, warnings: list) -> None:
    """A duty cycle becomes a rate from back-to-back latency; say so when the run's latency differs."""
    realized = power.duty_cycle.duty
    if opts.duty is None or realized is None:
        return
    power.duty_cycle.requested_duty = opts.duty
    if abs(realized - opts.duty) > 0.2 * opts.duty:
        warnings.append(RunWarning(
            code="duty-not-met",
            message=f"requested duty cycle {opts.duty:.3g}, realized {realized:.3g}: inferences took longer at "
                    "this rate than back to back (caches, clocks ramping down between requests)",
            remedy="give --rate directly, or read the figures at the realized duty cycle"))


def _chunk_ends(timed: TimedClient, rows, n: int) -> np.ndarray:
    """True for the last inference of each fixed-rate chunk (all False when rows are unmatched)."""
    if rows is None or len(rows) != n:
        return np.zeros(n, dtype=bool)
    last = {c["last_ns"] for c in timed.chunks if c["mode"] == "fixed-rate"}
    return rows["t_start_ns"].isin(last).to_numpy()


def _average(samples, starts, ends, used, ev, idle, margin, rate_hz, label) -> AveragePower:
    """Average power over the fixed-rate span, measured directly, against the model's prediction."""
    ra, rb = event_regions(starts, ends, margin)
    idx = np.flatnonzero(used)
    t0, t1 = float(ra[idx[0]]), float(rb[idx[-1]])
    e, cov = window_energy(samples.t_s, samples.dt_s, samples.power_w, [t0], [t1])
    in_span = (starts >= t0) & (ends <= t1)
    achieved = float(np.count_nonzero(in_span) / (t1 - t0)) if t1 > t0 else None
    mean_event = float(np.mean(ev.event_j[used]))
    model = idle["power_w"] + mean_event * (achieved or rate_hz)
    measured = float(e[0] / cov[0]) if cov[0] > 0 else None
    return AveragePower(measured_w=measured, model_w=model, rate_hz=achieved, requested_rate_hz=rate_hz,
                        span_s=t1 - t0, label=label,
                        note="measured: all energy over the fixed-rate span, harness replies between chunks "
                             "included; model: idle + mean event energy x achieved rate")


def write_frame(run_dir, name: str, frame) -> None:
    """Write a Parquet file of the run atomically."""
    store.write_parquet(Path(run_dir) / name, frame)


__all__ = ["EnergyOptions", "TimedClient", "analyse", "energy_claim", "attach_claim", "check_duty", "write_frame",
           "SPIN_LEAD_S", "COVERAGE_MIN"]
