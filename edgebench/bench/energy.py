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

How the samples become figures (alignment, exclusions, the ``power`` section) is
:mod:`edgebench.bench.energy_analysis`.

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
from typing import Callable, Optional, cast

import numpy as np

from edgebench.bench.energy_analysis import EnergyOptions, TimedClient, analyse, attach_claim, check_duty, write_frame
from edgebench.bench.energy_journal import EnergyJournal
from edgebench.bench.energy_journal import context as journal_context
from edgebench.bench.latency import run_bench
from edgebench.bench.record import stop_reason
from edgebench.bench.steady import RunStatus
from edgebench.boards.connect import open_client, reached_locally
from edgebench.boards.profile import ESTIMATED_LABEL, MCU_CLIENT
from edgebench.data.inputs import load_inputs, random_inputs
from edgebench.errors import DataError, EdgebenchError, UsageError
from edgebench.modelfile import read_model
from edgebench.power.base import OWN_POWER, MeterError, check_boundary
from edgebench.results import store
from edgebench.results.figures.energy import AveragePower, DutyCycle, EnergyFigure, PowerSection
from edgebench.sim.meter import SimMeter
from edgebench.stats import preload
from edgebench.stats.energy import duty_point

# ---------------------------------------------------------------------------
# entry points


def measure_energy(model_path, profile, opts: EnergyOptions, meter, runs_root="runs", url: Optional[str] = None,
                   progress: Optional[Callable[[dict], None]] = None, client=None):
    """Measure energy with ``meter`` (a PowerMeter); return ``(RunResult, run_dir)``."""
    opts.validate()
    emit = progress or (lambda ev: None)
    info = meter.describe()
    preload()
    local = reached_locally(profile, url)
    device_clock = info.clock == "device"   # a simulated board's power model: its own clock, nothing to align
    marker_board = profile.client_kind == MCU_CLIENT   # its firmware may drive a GPIO marker the meter sees
    if info.reads == OWN_POWER and not local:
        raise UsageError(f"meter {info.instrument} measures the computer running edgebench, but board "
                         f"{profile.name} is reached remotely",
                         "run edgebench on the board itself (--board host there), or measure the board's "
                         "supply with an external meter (ina226, hwmon sensor, lpm01a, ppk2, joulescope)")
    own = client is None
    marks: dict = {}
    stopped: list = []

    def stop_meter():
        if not stopped:
            stopped.append(meter.stop())
        return stopped[0]

    try:
        meter.start()  # first: an absent meter fails before the board is touched (and before any line)
        emit({"event": "meter", "instrument": info.instrument})
        try:
            if own:
                client = open_client(profile, url, cpus=opts.cpus)
            timed = TimedClient(client, local or device_clock)
            rate = opts.rate_hz or (opts.duty or 0.0) / probe_e2e(timed, model_path, opts)  # validate: one is set
            if opts.rate_hz is None and rate * opts.max_time_s < 2:
                raise UsageError(f"--duty {opts.duty:g} means one inference every {1 / rate:,.4g} s here: fewer "
                                 f"than 2 within --max-time {opts.max_time_s:g} s",
                                 f"raise --duty or --max-time (to at least {2 / rate:,.4g} s)")
            marks["idle_before"] = _quiet(opts.idle_s, "before", emit, meter)
            timed.pace(rate, on_device=device_clock)  # simulated time passes only inside requests
            before = set(store.find_runs(runs_root))
            journal = EnergyJournal(runs_root, before, meter, timed,
                                    journal_context(marks, rate, opts, info, local or device_clock, marker_board))

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
        analyse(result, run_dir, samples, info, timed, marks, opts, rate, marker_board)
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
    inputs = (load_inputs(opts.inputs, tensor, model=model) if opts.inputs
              else random_inputs(tensor, count=16, seed=opts.seed, override=opts.input_range))
    client.set_inputs(inputs.x)
    _, arrs = client.run("single-stream", count=count, max_time_s=5.0)
    e2e = np.asarray(arrs["e2e_ns"], dtype=np.float64)[min(5, len(arrs["e2e_ns"]) - 1):] / 1e9
    return float(np.median(e2e))


def _save_partial(run_dir, samples, info, exc) -> None:
    """After a failed run: keep the power samples and say what happened in run.json."""
    try:
        result = store.read_result(run_dir)
    except EdgebenchError:
        return
    if len(samples):
        write_frame(run_dir, "power.parquet", samples.to_frame())
    status, reason = stop_reason(exc)
    result.kind = "energy"
    result.status = cast(RunStatus, status)
    result.status_reason = f"energy run {reason}"
    result.power = PowerSection(measured=True, label=info.label, instrument=info.instrument, boundary=info.boundary,
                                sample_rate_hz=info.sample_rate_hz, tested_against=info.tested_against,
                                meter=info.to_dict(),
                                samples={"file": "power.parquet", "n": len(samples), "clock": samples.clock,
                                         "complete": False, "problem": samples.problem or reason},
                                note="partial: no energy figures were computed; the samples are kept")
    store.write_result(run_dir, result)


def simulated_energy(model_path, profile, opts: EnergyOptions, runs_root="runs", url: Optional[str] = None,
                     boundary: Optional[str] = None, progress: Optional[Callable[[dict], None]] = None):
    """A simulated board: the same measurement as :func:`measure_energy`, its power model read through the
    meter interface (:class:`edgebench.sim.meter.SimMeter`); every figure labelled ``simulated``."""
    opts.validate()
    client = open_client(profile, url, cpus=opts.cpus)
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
    if active is None or ds is None:
        raise UsageError(f"board {profile.name} has no datasheet power figures to estimate energy from",
                         "attach a meter (--meter rapl, hwmon, ina226, vcgencmd, lpm01a, ppk2, joulescope) "
                         "or add datasheet figures to the board profile")
    return {"active_w": float(active), "active_from": source,
            "idle_w": float(ds.idle_power_w) if ds.idle_power_w else None, "source": ds.source}


def estimate_energy(model_path, profile, opts: EnergyOptions, runs_root="runs", url: Optional[str] = None,
                    progress: Optional[Callable[[dict], None]] = None, client=None):
    """No meter: measured latency x datasheet power; every energy figure labelled estimated."""
    opts.validate()
    figs = datasheet_power(profile)
    preload()
    own = client is None
    client = client or open_client(profile, url, cpus=opts.cpus)
    try:
        rate = opts.rate_hz or (opts.duty or 0.0) / probe_e2e(client, model_path, opts)  # validate: one is set
        result, run_dir = run_bench(model_path, profile, opts.bench_options(rate), runs_root=runs_root,
                                    url=url, progress=progress, client=client)
    finally:
        if own:
            client.close()
    lab = ESTIMATED_LABEL
    e2e = result.stage("e2e").median_s
    power = PowerSection(measured=False, label=lab, instrument=None, boundary="board (datasheet figures)",
                         sample_rate_hz=None, tested_against=None, datasheet=figs,
                         model="average power = idle power + energy per event x rate",
                         note=f"no meter: latency measured, power from the datasheet ({figs['source']}); "
                              "wake-up energy cannot be estimated from datasheet figures")
    if e2e:
        power.inference = EnergyFigure(energy_j=figs["active_w"] * e2e, duration_s=e2e, label=lab,
                                       how=f"{figs['active_from']} x measured median end-to-end latency")
    if figs["idle_w"] is not None:
        power.idle = EnergyFigure(power_w=figs["idle_w"], ci_low_w=None, ci_high_w=None, label=lab)
        if e2e:
            above = (figs["active_w"] - figs["idle_w"]) * e2e
            power.inference.above_idle_j = above
            power.event = EnergyFigure(energy_j=above, ci_low_j=None, ci_high_j=None, label=lab,
                                       how="inference energy above idle; wake-up not included")
            try:
                point = duty_point(figs["idle_w"], above, rate_hz=rate, event_s=e2e)
                power.duty_cycle = DutyCycle(**point.to_dict(), label=lab)
            except UsageError as exc:
                power.duty_cycle = DutyCycle(error=exc.one_line())
            achieved = result.extra.achieved_rate_hz or rate
            power.average = AveragePower(measured_w=None, model_w=figs["idle_w"] + above * achieved,
                                         rate_hz=achieved, requested_rate_hz=rate, label=lab)
    else:
        power.note = f"{power.note}; no idle power in the datasheet, so no duty-cycle or battery figure"
    check_duty(power, opts, result.warnings)
    result.kind = "energy"
    result.power = power
    result.scenario.duty = opts.duty
    attach_claim(result)
    store.write_result(run_dir, result)
    return result, run_dir


__all__ = ["measure_energy", "estimate_energy", "simulated_energy", "datasheet_power", "probe_e2e"]
