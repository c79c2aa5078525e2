"""Energy per inference, idle power and wake-up energy (level 4).

Flow of :func:`measure_energy`: start the meter; (for a duty cycle, time a few
inferences to turn it into a rate); record a quiet window with the board idle;
run the fixed-rate workload with :func:`edgebench.bench.latency.run_bench`
(the same loop as ``edgebench bench --scenario fixed-rate``, through a client
wrapper that brackets every request on the host clock and keeps the schedule
across the loop's chunks); record a second quiet window; stop the meter; then
integrate (:mod:`edgebench.stats.energy`) and store everything in the run's
``power`` section (the run's kind is ``energy``), with the power samples in
``power.parquet`` and one row per inference in ``energy_events.parquet``.

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

With no meter, :func:`estimate_energy` runs the same workload for its latency
and combines it with the board profile's datasheet power figures; every energy
figure is then labelled ``estimated (datasheet)``. On a simulated board,
:func:`simulated_energy` measures through the meter interface with the board's
power model (:class:`edgebench.sim.meter.SimMeter`, on the board's own clock);
every figure is labelled ``simulated``. A run killed outright is finished from
its journal (:mod:`edgebench.bench.energy_journal`, ``energy --recover``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from edgebench import ranges as R
from edgebench.boards.connect import open_agent, reached_locally
from edgebench.boards.profile import ESTIMATED_LABEL
from edgebench.data.inputs import load_inputs, random_inputs
from edgebench.errors import DataError, EdgebenchError, UsageError
from edgebench.modelfile import read_model
from edgebench.power.base import OWN_POWER, MeterError, check_boundary
from edgebench.ranges import check_fields
from edgebench.report.claim import claim
from edgebench.results import store
from edgebench.sim.meter import SimMeter
from edgebench.stats import preload
from edgebench.stats.energy import (bracket_offset, event_energies, event_regions, idle_power, mean_ci, si, si_range,
                                    window_energy)

SPIN_LEAD_S = 0.0007  # the agent starts a chunk ~0.2 ms after the request arrives; plus local link latency
COVERAGE_MIN = 0.99


#: the ranges of EnergyOptions' numeric fields (edgebench.ranges: the CLI checks the same)
RANGES = {"rate_hz": R.RATE_HZ, "duty": R.DUTY, "idle_s": R.IDLE_S, "margin_s": R.MARGIN_S, "threads": R.THREADS,
          "seed": R.SEED, "min_samples": R.MIN_SAMPLES, "min_time_s": R.MIN_TIME_S, "max_time_s": R.MAX_TIME_S,
          "target_rel_ci": R.TARGET}


@dataclass
class EnergyOptions:
    rate_hz: Optional[float] = None
    duty: Optional[float] = None
    idle_s: float = 3.0
    margin_s: Optional[float] = None      # largest margin around an inference (default: half the period)
    alignment: str = "auto"               # auto | clock | marker
    kernels: str = "xnnpack"
    threads: int = 1
    delegate: Optional[str] = None
    inputs: Optional[str] = None
    input_range: Optional[tuple] = None
    seed: int = 0
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

    def bench_options(self, rate_hz: float):
        from edgebench.bench.latency import BenchOptions

        return BenchOptions(scenario="fixed-rate", kernels=self.kernels, threads=self.threads,
                            delegate=self.delegate, rate_hz=rate_hz, inputs=self.inputs,
                            input_range=self.input_range, seed=self.seed, target_rel_ci=self.target_rel_ci,
                            min_samples=self.min_samples, min_time_s=self.min_time_s,
                            max_time_s=self.max_time_s,
                            # one timed window: the meter's trace is aligned to it as a whole
                            repeat=1, max_repeats=1,
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
# entry points


def measure_energy(model_path, profile, opts: EnergyOptions, meter, runs_root="runs", url: Optional[str] = None,
                   progress: Optional[Callable[[dict], None]] = None, client=None):
    """Measure energy with ``meter`` (a PowerMeter); return ``(RunResult, run_dir)``."""
    from edgebench.bench.energy_journal import EnergyJournal
    from edgebench.bench.energy_journal import context as journal_context
    from edgebench.bench.latency import run_bench

    opts.validate()
    emit = progress or (lambda ev: None)
    info = meter.describe()
    preload()
    local = reached_locally(profile, url)
    device_clock = info.clock == "device"   # a simulated board's power model: its own clock, nothing to align
    if info.reads == OWN_POWER and not local:
        raise UsageError(f"meter {info.instrument} measures the computer running edgebench, but board "
                         f"{profile.name} is reached remotely",
                         "run edgebench on the board itself (--board host there), or measure the board's "
                         "supply with an external meter (ina226, hwmon sensor, lpm01a, ppk2, joulescope)")
    own = client is None
    marks: dict = {}
    stopped = []

    def stop_meter():
        if not stopped:
            stopped.append(meter.stop())
        return stopped[0]

    emit({"event": "meter", "instrument": info.instrument})
    try:
        meter.start()  # first: an absent meter fails before the board is touched
        try:
            if own:
                client = open_agent(profile, url)
            timed = TimedClient(client, local or device_clock)
            rate = opts.rate_hz or opts.duty / probe_e2e(timed, model_path, opts)
            if opts.rate_hz is None and rate * opts.max_time_s < 2:
                raise UsageError(f"--duty {opts.duty:g} means one inference every {1 / rate:,.4g} s here: fewer "
                                 f"than 2 within --max-time {opts.max_time_s:g} s",
                                 f"raise --duty or --max-time (to at least {2 / rate:,.4g} s)")
            marks["idle_before"] = _quiet(opts.idle_s, "before", emit, meter)
            timed.pace(rate, on_device=device_clock)  # simulated time passes only inside requests
            before = set(store.find_runs(runs_root))
            journal = EnergyJournal(runs_root, before, meter, timed,
                                    journal_context(marks, rate, opts, info, local or device_clock, profile))

            def watch(ev: dict) -> None:
                emit(ev)
                problem = meter.health() if hasattr(meter, "health") else None
                if problem:
                    raise MeterError(problem)
                if ev.get("event") == "chunk":
                    journal.chunk()

            try:
                result, run_dir = run_bench(model_path, profile, opts.bench_options(rate), runs_root=runs_root,
                                            url=url, progress=watch, client=timed)
            except (EdgebenchError, KeyboardInterrupt) as exc:
                samples = stop_meter()
                new = sorted(set(store.find_runs(runs_root)) - before)
                if new:
                    _save_partial(new[-1], samples, info, exc)
                    journal.remove(new[-1])
                    if isinstance(exc, EdgebenchError):
                        exc.message += f" (partial data kept in {new[-1]})"
                raise
            marks["idle_after"] = _quiet(opts.idle_s, "after", emit, meter)
        except BaseException:
            try:
                stop_meter()
            except Exception:  # already failing: the original error is the one to report
                pass
            raise
        finally:
            if own and client is not None:
                client.close()
        samples = stop_meter()
        info = meter.describe()  # again: details (paths, calibration, rails) are known once it ran
    finally:
        meter.close()
    try:
        analyse(result, run_dir, samples, info, timed, marks, opts, rate, profile)
        journal.remove(run_dir)
    except DataError as exc:  # e.g. no samples in the idle windows: keep what there is, say what is missing
        _save_partial(run_dir, samples, info, exc)
        journal.remove(run_dir)
        raise MeterError(f"{exc.message} (partial data kept in {run_dir})",
                         "check that the meter streams during the whole run") from None
    return result, run_dir


def _quiet(seconds: float, which: str, emit, meter) -> tuple:
    emit({"event": "idle", "which": which, "seconds": seconds})
    if hasattr(meter, "idle"):  # a meter on a simulated clock lets idle time pass itself
        return meter.idle(seconds)
    t0 = time.perf_counter()
    time.sleep(seconds)
    t1 = time.perf_counter()
    problem = meter.health() if hasattr(meter, "health") else None
    if problem:
        raise MeterError(problem)
    return (t0, t1)


def probe_e2e(client, model_path, opts: EnergyOptions, count: int = 40) -> float:
    """Median end-to-end latency of a few inferences (turns a duty cycle into a rate)."""
    model = read_model(model_path)
    client.hello()
    sha = client.ensure_model(model)
    loaded = client.load(sha, kernels=opts.kernels, threads=opts.threads, delegate=opts.delegate, batch=1)
    tensor = loaded["inputs"][0]
    inputs = (load_inputs(opts.inputs, tensor) if opts.inputs
              else random_inputs(tensor, count=16, seed=opts.seed, override=opts.input_range))
    client.set_inputs(inputs.x)
    _, arrs = client.run("single-stream", count=count, max_time_s=5.0)
    e2e = np.asarray(arrs["e2e_ns"], dtype=np.float64)[min(5, len(arrs["e2e_ns"]) - 1):] / 1e9
    return float(np.median(e2e))


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
    align = {"method": "GPIO marker edges seen by the meter, paired in order (start, end)",
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


def analyse(result, run_dir, samples, info, timed: TimedClient, marks: dict, opts: EnergyOptions,
            rate_hz: float, profile) -> None:
    """Fill ``result.power`` from the meter's samples and the run's inferences; write the files."""
    import pandas as pd

    frame = store.read_samples(run_dir)
    rows = frame[frame["phase"] != "cold"].reset_index(drop=True)
    use_marker = opts.alignment == "marker" or (
        opts.alignment == "auto" and getattr(profile, "kind", "linux") == "mcu" and samples.events_t_s.size >= 2)
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
        warnings.append({"code": "idle-drift",
                         "message": f"idle power differed before ({idle['windows'][0]['power_w']:.4g} W) and after "
                                    f"({idle['windows'][1]['power_w']:.4g} W) the run",
                         "remedy": "lengthen --idle-s, or let the board settle (edgebench soak) first"})
    margin = opts.margin_s if opts.margin_s is not None else 0.5 / rate_hz
    ev = event_energies(samples.t_s, samples.dt_s, samples.power_w, starts, ends, idle["power_w"], margin)
    covered = ev.coverage >= COVERAGE_MIN
    used = (phase == "measure") & ~last_in_chunk & covered
    excluded = {"warmup": int(np.count_nonzero(phase == "warmup")),
                "chunk_end": int(np.count_nonzero((phase == "measure") & last_in_chunk)),
                "not_covered_by_meter": int(np.count_nonzero((phase == "measure") & ~last_in_chunk & ~covered))}
    power = {"measured": True, "label": info.label, "instrument": info.instrument, "boundary": info.boundary,
             "boundary_meaning": info.to_dict()["boundary_meaning"], "sample_rate_hz": info.sample_rate_hz,
             "tested_against": info.tested_against, "meter": info.to_dict(),
             "samples": {"file": "power.parquet", "n": len(samples), "clock": samples.clock,
                         "complete": samples.complete, "problem": samples.problem, "meta": samples.meta},
             "alignment": align, "idle": idle, "excluded": excluded,
             "model": "average power = idle power + energy per event x rate",
             "definitions": {
                 "inference.energy_j": "energy in the inference window, idle share included",
                 "inference.above_idle_j": "inference energy minus idle power x its duration",
                 "event.energy_j": "energy above idle in the inference window plus margins around it "
                                   f"(at most {margin:.4g} s each side, half the gap to a neighbour)",
                 "wake_up.energy_j": "event energy minus inference energy above idle"}}
    n_used = int(np.count_nonzero(used))
    if n_used:
        for key, values in (("inference", ev.window_j), ("inference_above", ev.inference_above_idle_j),
                            ("event", ev.event_j), ("wake_up", ev.wake_j)):
            ci = mean_ci(values[used])
            power.setdefault(key, {}).update({**ci.to_dict("j"), "energy_j": ci.mean, "label": info.label})
            power[key].pop("j", None)
        inf = power.pop("inference_above")
        power["inference"].update({"above_idle_j": inf["energy_j"], "above_idle_ci_low_j": inf["ci_low_j"],
                                   "above_idle_ci_high_j": inf["ci_high_j"],
                                   "duration_s": float(np.median(ev.duration_s[used]))})
        power["event"]["margin_s"] = margin
        power["average"] = _average(samples, starts, ends, used, ev, idle, margin, rate_hz, info.label)
        try:
            from edgebench.stats.energy import duty_point

            point = duty_point(idle["power_w"], power["event"]["energy_j"], rate_hz=rate_hz,
                               event_s=power["inference"]["duration_s"])
            power["duty_cycle"] = {**point.to_dict(), "label": info.label}
        except UsageError as exc:
            power["duty_cycle"] = {"error": exc.one_line()}
        dt_med = float(np.median(samples.dt_s)) if len(samples) else None
        if dt_med and power["inference"]["duration_s"] < 2 * dt_med and samples.clock != "device":
            warnings.append({
                "code": "meter-too-slow-for-inference",
                "message": f"one inference ({power['inference']['duration_s'] * 1e3:.3g} ms) is shorter than two "
                           f"meter samples ({dt_med * 1e3:.3g} ms each): per-inference window energies are smeared; "
                           "the per-event energy (window plus margins) is the figure to use",
                "remedy": "raise the meter's sample rate (--meter-opt rate_hz=...) or use a faster instrument"})
    else:
        warnings.append({"code": "no-energy-events", "message": "no inference was fully covered by the meter",
                         "remedy": "check the meter and the clock alignment"})
    if excluded["not_covered_by_meter"]:
        warnings.append({"code": "meter-gaps",
                         "message": f"{excluded['not_covered_by_meter']} inferences fell (partly) outside the "
                                    "meter's samples and were left out", "remedy": "see power.samples.problem"})
    if align.get("notes"):
        warnings += [{"code": "marker-mismatch", "message": n, "remedy": "check the firmware's marker pin"}
                     for n in align["notes"]]
    if result.label in ("emulated", "simulated") and info.label != "simulated":
        warnings.append({"code": f"{result.label}-board-energy",
                         "message": f"the board is {result.label}: the meter measured the computer running it, "
                                    "not a board", "remedy": "measure energy on real hardware"})
    _check_duty(power, opts, warnings)
    result.kind = "energy"
    result.power = power
    result.warnings = warnings
    result.scenario = {**result.scenario, "duty": opts.duty, "idle_s": opts.idle_s}
    if not samples.complete:
        result.status = "incomplete"
        result.status_reason = f"{samples.problem}; energy figures use only what the meter covered"
    _claim(result)
    _write_frame(run_dir, "power.parquet", samples.to_frame())
    events = pd.DataFrame({"phase": phase, "t_start_s": starts, "duration_s": ev.duration_s,
                           "window_j": ev.window_j, "inference_above_idle_j": ev.inference_above_idle_j,
                           "event_j": ev.event_j, "wake_j": ev.wake_j, "region_s": ev.region_s,
                           "coverage": ev.coverage, "chunk_end": last_in_chunk, "used": used})
    _write_frame(run_dir, "energy_events.parquet", events)
    store.write_result(run_dir, result)


def energy_claim(power: dict) -> str:
    """One sentence with the energy figures and their conditions, for the run's claim."""
    inf, ev, idle = power.get("inference") or {}, power.get("event") or {}, power.get("idle") or {}
    if not inf:
        return "Energy: no figure (see warnings)."

    def ci(d: dict, u: str) -> str:
        if d.get("ci_low_" + u) is None:
            return ""
        n = f", n={d['n']}" if d.get("n") else ""
        return f" (95% CI {si_range(d['ci_low_' + u], d['ci_high_' + u], u.upper())}{n})"
    parts = [f"{si(inf['energy_j'], 'J')} per inference{ci(inf, 'j')}"]
    if ev:
        parts.append(f"{si(ev['energy_j'], 'J')} per event above idle"
                     + (" incl. wake-up" if power.get("measured") else "") + ci(ev, "j"))
    if idle:
        parts.append(f"idle {si(idle['power_w'], 'W')}{ci(idle, 'w')}")
    if power.get("measured"):
        how = (f"{power.get('label', 'measured')} with {power['instrument']} at the '{power['boundary']}' boundary "
               f"(meter code tested against: {power['tested_against']})")
    else:
        how = "estimated (datasheet): measured latency x datasheet power"
    return f"Energy: {', '.join(parts)}, {how}; not soaked to thermal steady state."


def _claim(result) -> None:
    try:
        base = claim(result) if result.latency else ""
    except Exception:  # the claim is a summary; never lose a run over it
        base = (result.extra or {}).get("claim") or ""
    result.extra = {**result.extra, "claim": f"{base} {energy_claim(result.power)}".strip()}


def _check_duty(power: dict, opts: EnergyOptions, warnings: list) -> None:
    """A duty cycle becomes a rate from back-to-back latency; say so when the run's latency differs."""
    realized = (power.get("duty_cycle") or {}).get("duty")
    if opts.duty is None or realized is None:
        return
    power["duty_cycle"]["requested_duty"] = opts.duty
    if abs(realized - opts.duty) > 0.2 * opts.duty:
        warnings.append({
            "code": "duty-not-met",
            "message": f"requested duty cycle {opts.duty:.3g}, realized {realized:.3g}: inferences took longer at "
                       "this rate than back to back (caches, clocks ramping down between requests)",
            "remedy": "give --rate directly, or read the figures at the realized duty cycle"})


def _chunk_ends(timed: TimedClient, rows, n: int) -> np.ndarray:
    """True for the last inference of each fixed-rate chunk (all False when rows are unmatched)."""
    if rows is None or len(rows) != n:
        return np.zeros(n, dtype=bool)
    last = {c["last_ns"] for c in timed.chunks if c["mode"] == "fixed-rate"}
    return rows["t_start_ns"].isin(last).to_numpy()


def _average(samples, starts, ends, used, ev, idle, margin, rate_hz, label) -> dict:
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
    return {"measured_w": measured, "model_w": model, "rate_hz": achieved, "requested_rate_hz": rate_hz,
            "span_s": t1 - t0, "label": label,
            "note": "measured: all energy over the fixed-rate span, harness replies between chunks included; "
                    "model: idle + mean event energy x achieved rate"}


def _write_frame(run_dir, name: str, frame) -> None:
    store.write_parquet(Path(run_dir) / name, frame)


def _save_partial(run_dir, samples, info, exc) -> None:
    """After a failed run: keep the power samples and say what happened in run.json."""
    try:
        result = store.read_result(run_dir)
    except EdgebenchError:
        return
    if len(samples):
        _write_frame(run_dir, "power.parquet", samples.to_frame())
    from edgebench.bench.record import stop_reason

    status, reason = stop_reason(exc)
    result.kind = "energy"
    result.status = status
    result.status_reason = f"energy run {reason}"
    result.power = {"measured": True, "label": info.label, "instrument": info.instrument,
                    "boundary": info.boundary, "sample_rate_hz": info.sample_rate_hz,
                    "tested_against": info.tested_against, "meter": info.to_dict(),
                    "samples": {"file": "power.parquet", "n": len(samples), "clock": samples.clock,
                                "complete": False, "problem": samples.problem or reason},
                    "note": "partial: no energy figures were computed; the samples are kept"}
    store.write_result(run_dir, result)


def simulated_energy(model_path, profile, opts: EnergyOptions, runs_root="runs", url: Optional[str] = None,
                     boundary: Optional[str] = None, progress: Optional[Callable[[dict], None]] = None):
    """A simulated board: the same measurement as :func:`measure_energy`, its power model read through the
    meter interface (:class:`edgebench.sim.meter.SimMeter`); every figure labelled ``simulated``."""
    opts.validate()
    client = open_agent(profile, url)
    try:
        meter = SimMeter(client, check_boundary(boundary) if boundary else "board")
        return measure_energy(model_path, profile, opts, meter, runs_root=runs_root, url=url, progress=progress,
                              client=client)
    finally:
        client.close()


# ---------------------------------------------------------------------------
# no meter: datasheet estimates


def datasheet_power(profile) -> dict:
    """Active and idle power from the board profile's datasheet, or UsageError naming the fix."""
    ds = getattr(profile, "datasheet", None)
    active = source = None
    if ds is not None:
        if ds.typical_load_power_w:
            active, source = ds.typical_load_power_w, "typical_load_power_w"
        elif ds.typical_current_a and ds.supply_voltage_v:
            active = ds.typical_current_a * ds.supply_voltage_v
            source = "typical_current_a x supply_voltage_v"
        elif ds.max_power_w:
            active, source = ds.max_power_w, "max_power_w (an upper bound)"
    if active is None:
        raise UsageError(f"board {profile.name} has no datasheet power figures to estimate energy from",
                         "attach a meter (--meter rapl, hwmon, ina226, vcgencmd, lpm01a, ppk2, joulescope) "
                         "or add datasheet figures to the board profile")
    return {"active_w": float(active), "active_from": source,
            "idle_w": float(ds.idle_power_w) if ds.idle_power_w else None, "source": ds.source}


def estimate_energy(model_path, profile, opts: EnergyOptions, runs_root="runs", url: Optional[str] = None,
                    progress: Optional[Callable[[dict], None]] = None, client=None):
    """No meter: measured latency x datasheet power; every energy figure labelled estimated."""
    from edgebench.bench.latency import run_bench

    opts.validate()
    figs = datasheet_power(profile)
    preload()
    own = client is None
    client = client or open_agent(profile, url)
    try:
        rate = opts.rate_hz or opts.duty / probe_e2e(client, model_path, opts)
        result, run_dir = run_bench(model_path, profile, opts.bench_options(rate), runs_root=runs_root,
                                    url=url, progress=progress, client=client)
    finally:
        if own:
            client.close()
    lab = ESTIMATED_LABEL
    e2e = (result.latency.get("e2e") or {}).get("median_s")
    power = {"measured": False, "label": lab, "instrument": None, "boundary": "board (datasheet figures)",
             "sample_rate_hz": None, "tested_against": None, "datasheet": figs,
             "model": "average power = idle power + energy per event x rate",
             "note": f"no meter: latency measured, power from the datasheet ({figs['source']}); "
                     "wake-up energy cannot be estimated from datasheet figures"}
    if e2e:
        power["inference"] = {"energy_j": figs["active_w"] * e2e, "duration_s": e2e, "label": lab,
                              "how": f"{figs['active_from']} x measured median end-to-end latency"}
    if figs["idle_w"] is not None:
        power["idle"] = {"power_w": figs["idle_w"], "ci_low_w": None, "ci_high_w": None, "label": lab}
        if e2e:
            above = (figs["active_w"] - figs["idle_w"]) * e2e
            power["inference"]["above_idle_j"] = above
            power["event"] = {"energy_j": above, "ci_low_j": None, "ci_high_j": None, "label": lab,
                              "how": "inference energy above idle; wake-up not included"}
            try:
                from edgebench.stats.energy import duty_point

                point = duty_point(figs["idle_w"], above, rate_hz=rate, event_s=e2e)
                power["duty_cycle"] = {**point.to_dict(), "label": lab}
            except UsageError as exc:
                power["duty_cycle"] = {"error": exc.one_line()}
            achieved = result.extra.get("achieved_rate_hz") or rate
            power["average"] = {"measured_w": None, "model_w": figs["idle_w"] + above * achieved,
                                "rate_hz": achieved, "requested_rate_hz": rate, "label": lab}
    else:
        power["note"] += "; no idle power in the datasheet, so no duty-cycle or battery figure"
    _check_duty(power, opts, result.warnings)
    result.kind = "energy"
    result.power = power
    result.scenario = {**result.scenario, "duty": opts.duty}
    _claim(result)
    store.write_result(run_dir, result)
    return result, run_dir


__all__ = ["EnergyOptions", "TimedClient", "measure_energy", "estimate_energy", "simulated_energy", "analyse",
           "datasheet_power", "probe_e2e"]
