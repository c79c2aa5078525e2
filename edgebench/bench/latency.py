"""Latency benchmarks (level 4): drive the agent, decide when to stop, store the run.

Flow of :func:`run_bench`: read the model on the host (identity, precision), then K
independent *repeats* (``--repeat``, default 3), each of which opens the agent on the
board afresh (a new process), loads the model (cold start: load time, then the first
inference timed alone), sends the inputs and runs chunks of inferences until that
repeat's stop rule is met on the samples after its detected warm-up. The headline
interval combines within-run and between-run variation
(:func:`edgebench.stats.latency.summarize_runs`); more repeats are added while it is
wider than the target and the time budget allows. Samples (with a ``repeat`` column) go
to Parquet and the run to ``run.json`` after every repeat; Ctrl-C, SIGTERM/SIGHUP or an
error keeps what was measured and marks the run incomplete with the reason.
"""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from edgebench import board_protocol as bp
from edgebench.agent.protocol import PREP_PER_INFERENCE
from edgebench.bench.describe import (
    clock_resolution,
    describe_run,
    e2e_includes,
    figure_label,
    load_average,
)
from edgebench.bench.latency_recover import REPEAT_COLUMNS, recover_bench
from edgebench.bench.latency_summary import frame_of, summarise
from edgebench.bench.mac_rate import attach
from edgebench.bench.memory import run_memory
from edgebench.bench.options import BenchOptions
from edgebench.bench.record import (
    RunFolder,
    Status,
    board_client,
    new_result,
    record_end_state,
    status_of,
    stop_reason,
)
from edgebench.bench.sessions import read_history
from edgebench.boards.connect import require_runtime
from edgebench.data.inputs import load_inputs, random_inputs
from edgebench.errors import UsageError
from edgebench.modelfile import read_model
from edgebench.results import store
from edgebench.results.figures.device import MemoryFigure
from edgebench.results.figures.latency import LatencyFigure
from edgebench.results.figures.thermal import ThermalSection
from edgebench.results.journal import Journal
from edgebench.results.model import STAGES, RunResult
from edgebench.stats import preload
from edgebench.stats.latency import StopRule
from edgebench.stats.warmup import warmup_for

Progress = Callable[[dict], None]


#: kept back from the time budget for the final summary and storing
FINISH_RESERVE_S = 1.0
#: a repeat whose stop rule has not decided ends this long after its share of the budget
GRACE_S = 5.0
#: an emulated board's repeat measures until it kept this many samples past warm-up (within the grace)
EMULATED_MIN_KEPT = 3


def _stop_rule(o: BenchOptions, resolution_s: float = 0.0, used_s: float = 0.0, overhead_s: float = 0.0,
               remaining: int = 1):
    """The stop rule of one repeat: half the target within the run (the spread between runs
    takes the rest), at most an equal share of what is left of the time budget once ``used_s``
    (spent so far, this repeat's start-up included) and the start-up ``overhead_s`` of each of
    the ``remaining - 1`` repeats still to come are taken off: the budget is a promise about
    the time to answer, start-ups and model loads included."""
    left = o.max_time_s - used_s - FINISH_RESERVE_S - overhead_s * (remaining - 1)
    per_repeat = max(o.min_time_s, left / max(1, remaining))
    return StopRule(target_rel_ci=o.target_rel_ci / 2.0 if o.repeat > 1 else o.target_rel_ci,
                    min_samples=o.min_samples,
                    min_time_s=o.min_time_s, max_time_s=per_repeat, resolution_s=resolution_s)


def run_bench(model_path, profile, opts: BenchOptions, runs_root="runs", url: str | None = None,
              progress: Progress | None = None, client=None, started: float | None = None) -> tuple[RunResult, Path]:
    """Benchmark ``model_path`` on the board of ``profile`` in ``opts.repeat`` (or more) independent
    runs; return the result and its folder.

    Each repeat opens a fresh agent (a new process, a new model load) unless ``client`` is
    given (the caller keeps it; then each repeat reloads the model on it). Repeats are added,
    up to ``opts.max_repeats``, while the headline interval is wider than the target and the
    time budget ``opts.max_time_s`` allows, counted from ``started`` (``time.monotonic()`` when
    the user's command began; default: now).
    """
    session = BenchSession(model_path, profile, opts, runs_root, url, progress, client, started)
    return session.run()


def run_benches(model_paths: list, profile, opts: BenchOptions, runs_root="runs", url: str | None = None,
                progress_for: Callable[[str], Progress] | None = None, client=None,
                started: float | None = None) -> list:
    """Benchmark several models in one invocation, their repeats interleaved (A B A B ...): the
    machine state of this invocation falls on all of them, so ``compare`` judges them without the
    between-invocation term (docs/statistics.md). Each run is stored with ``settings.interleaved_with``
    naming the others. Returns ``[(result, run_dir)]`` in the order given. One model: :func:`run_bench`."""
    if len(model_paths) == 1:
        return [run_bench(model_paths[0], profile, opts, runs_root, url,
                          progress_for(Path(model_paths[0]).name) if progress_for else None, client, started)]
    names = [Path(m).name for m in model_paths]
    if len(set(names)) != len(names):
        raise UsageError(f"a model is named twice: {', '.join(names)}", "give each model once")
    opts = dataclasses.replace(opts, max_repeats=opts.repeat)   # interleaved runs: the same repeats on each side
    sessions = [BenchSession(m, profile, dataclasses.replace(opts), runs_root, url,
                             progress_for(Path(m).name) if progress_for else None, client, started)
                for m in model_paths]
    run_interleaved(sessions)
    return [(s.result, s.run_dir) for s in sessions]


def run_interleaved(sessions: list) -> None:
    """Run the repeats of several :class:`BenchSession` objects in turn (A B A B ...), so that a
    comparison of their results sees the same drift of the machine on both sides."""
    try:
        for _ in range(max(s.opts.repeat for s in sessions)):
            for s in sessions:
                if s.repeats_done < s.opts.repeat:
                    if s.repeats_done == 0:      # each session's budget counts its own repeats only
                        s.t0 = time.monotonic()
                    s.repeat_once()
    except BaseException as exc:
        for s in sessions:
            s.abort(exc)
        raise
    for s in sessions:
        s.result.settings.interleaved_with = [o.result.run_id for o in sessions if o is not s]
        s.finish("complete", None)


class BenchSession:
    """One bench run of K repeats: opens the board per repeat, collects samples, stores the run."""

    def __init__(self, model_path, profile, opts: BenchOptions, runs_root="runs", url=None,
                 progress: Progress | None = None, client=None, started: float | None = None):
        self.t0 = time.monotonic() if started is None else started
        opts.validate()
        self.opts, self.profile, self.url, self.runs_root = opts, profile, url, runs_root
        self.model = read_model(model_path)
        self.emit = progress or (lambda event: None)
        self.client = client
        self.result: RunResult | None = None
        self.folder = RunFolder(runs_root, self.model.name, profile.name)
        self.chunks: list = []           # every chunk of every repeat, with "phase" and "repeat"
        self.journal: Optional[Journal] = None         # the same chunks on disk as they come (survives SIGKILL)
        self.repeat_journal: Optional[Journal] = None  # each repeat's cold start, for a recovery after a kill
        self.repeats_done = 0
        self.repeat_info: list = []      # per repeat: stop decision, window, cold start
        self.resolution_s = 0.0
        self.spent_s = 0.0               # wall time of this session's finished repeats (and its set-up)
        self.summary_s = 0.0             # the last summary between repeats (the headline stage only)
        self.repeat_t0 = self.t0
        self.history: list | None = None  # edgebench.bench.sessions.read_history, at the first summary

    @property
    def run_dir(self) -> Path | None:
        return self.folder.path

    @property
    def started(self) -> RunResult:
        """The result, once the first repeat described the run (:meth:`_start`)."""
        assert self.result is not None, "the run has not started"
        return self.result

    # -- the whole run ------------------------------------------------------------------
    def run(self) -> tuple[RunResult, Path]:
        with self.folder.guard(self._stopped, self._measured):
            while self.repeats_done < self.opts.repeat or self._wants_more():
                self.repeat_once()
        self.finish("complete", None)
        assert self.run_dir is not None
        return self.started, self.run_dir

    def _measured(self) -> bool:
        return any(len(c["phase"]) and c["phase"][0] != "cold" for c in self.chunks)

    def _stopped(self, status: str, reason: str) -> None:
        self.finish(status_of(status), reason)

    def _wants_more(self) -> bool:
        o = self.opts
        if self.repeats_done >= o.max_repeats or self.result is None:
            return False
        rel = self.result.stage("e2e").rel_ci_halfwidth
        if rel is not None and rel <= o.target_rel_ci:
            return False
        per_repeat = self.spent_s / max(1, self.repeats_done)
        # a margin for the slowest repeat: the budget is a promise about time to answer
        # the final summary does every stage: about len(STAGES) times the last one between repeats
        finish = FINISH_RESERVE_S + len(STAGES) * self.summary_s
        return self.spent_s + 1.3 * per_repeat + finish <= o.max_time_s

    def _too_few(self, measured, decision) -> bool:
        """An emulated board (deterministic figures, seconds of wall time per inference for a big
        model) measures on past its share of the budget until it has EMULATED_MIN_KEPT samples past
        warm-up, within GRACE_S: a repeat that kept one sample adds nothing to the figures."""
        return (self.started.label == "emulated" and not decision.target_reached
                and measured.size < EMULATED_MIN_KEPT)

    def _nothing_measured(self) -> str:
        """Why a run that ran to its end has no figure, and what to raise: no repeat kept two
        inferences past its warm-up within its share of ``--max-time``."""
        walls = [i.get("wall_per_inference_s") or i.get("first_inference_s") for i in self.repeat_info]
        walls = [w for w in walls if w]
        per = max(walls) if walls else None
        need = (f"; one inference takes about {per:.3g} s of wall time here, so --max-time {self.opts.max_time_s:g} s "
                f"over {self.repeats_done} repeat(s) left too little per repeat: raise --max-time to at least "
                f"{suggested_max_time(per, self.spent_s / max(1, self.repeats_done), self.repeats_done):.0f} s"
                if per else ": raise --max-time")
        return (f"measured nothing: no repeat of {self.repeats_done} kept 2 inferences past its warm-up, so the "
                f"run has no latency figure{need} (or lower --repeat)")

    def abort(self, exc: BaseException) -> None:
        """Keep what was measured when the run is stopped by ``exc`` (or leave no folder)."""
        if self.run_dir is None:
            return
        if not self._measured():
            self.folder.discard()
            return
        self.finish(*stop_reason(exc))

    # -- one repeat ------------------------------------------------------------------------
    def repeat_once(self) -> None:
        k = self.repeats_done
        now = time.monotonic()
        if k == 0:
            self.spent_s = now - self.t0     # reading the model, before the first repeat
        self.repeat_t0 = now
        with board_client(self.profile, self.url, self.client, self.emit if k == 0 else None,
                          cpus=self.opts.cpus) as client:
            self.emit({"event": "repeat", "repeat": k + 1, "of": self.opts.repeat})
            self._measure(client, k)
        self.repeats_done += 1
        t = time.monotonic()
        self._summarise(final=False)
        self.summary_s = time.monotonic() - t
        self.emit(self._repeat_done(k))
        self.spent_s += time.monotonic() - self.repeat_t0   # the summary and its storing included

    def _repeat_done(self, k: int) -> dict:
        """The progress event of a finished repeat: its own median, the interval over the repeats so far."""
        e2e = self.result.stage("e2e") if self.result is not None else LatencyFigure()
        runs = e2e.per_run or []
        return {"event": "repeat-done", "repeat": k + 1, "of": self.opts.repeat, "max": self.opts.max_repeats,
                "median_s": runs[-1].median_s if runs else None, "n": runs[-1].n if runs else None,
                "overall_median_s": e2e.median_s,
                "rel_ci": (e2e.invocation or e2e).rel_ci_halfwidth,
                "target": self.opts.target_rel_ci, "elapsed_s": time.monotonic() - self.t0}

    def _measure(self, client, k: int) -> None:
        o = self.opts
        hello = require_runtime(client, self.profile.name)
        if o.scenario == "fixed-rate":
            bp.require(client, bp.FIXED_RATE, f"the fixed-rate scenario on board {self.profile.name}")
        sha = client.ensure_model(self.model)
        self.emit({"event": "load", "model": self.model.name})
        loaded = client.load(sha, kernels=o.kernels, threads=o.threads, delegate=o.delegate, batch=o.batch)
        tensor = loaded["inputs"][0]
        if o.inputs:
            inputs = load_inputs(o.inputs, tensor, model=self.model)
        else:
            inputs = random_inputs(tensor, count=o.input_count, seed=o.seed, override=o.input_range)
        client.set_inputs(inputs.x)
        if self.result is None:
            self._start(client, hello, loaded, inputs)
        self.loaded_last = loaded
        waited = time.monotonic()
        preload()                       # seconds when cold: spent time, outside the measuring window and
        t0 = time.monotonic()           # not a start-up the later repeats (same process) will pay again
        overhead = waited - self.repeat_t0      # this repeat's process start and model load
        rule = _stop_rule(o, self.resolution_s, used_s=self.spent_s + t0 - self.repeat_t0, overhead_s=overhead,
                          remaining=max(1, o.repeat - k))
        header, cold = client.run("single-stream", count=1, max_time_s=60.0)
        cold["phase"] = np.array(["cold"])
        cold["repeat"] = np.array([k])
        self._keep(cold)
        info = {"repeat": k, "load_s": loaded.get("load_s"),
                "first_inference_s": float(cold["e2e_ns"][0]) / 1e9,
                "first_invoke_s": float(cold["invoke_ns"][0]) / 1e9, "decision": None}
        self.repeat_info.append(info)
        assert self.repeat_journal is not None
        self.repeat_journal.append({key: [info[key]] for key in REPEAT_COLUMNS})
        start_index = 1
        schedule = _Schedule(o, client, realtime=hello.get("timing") != "simulated")
        mine: list = []
        while True:
            kwargs = schedule.next_kwargs(deadline=t0 + rule.max_time_s)
            if kwargs is None:                # the next request is due after the time budget
                break
            asked = time.monotonic()
            header, arrs = client.run(o.scenario, count=100000, max_time_s=o.chunk_time_s,
                                      rate_hz=o.rate_hz, start_index=start_index, **kwargs)
            n = int(header.get("n", len(arrs["e2e_ns"])))
            timing = self.started.timing
            if header.get("prep") == PREP_PER_INFERENCE and timing.prep != PREP_PER_INFERENCE:
                timing.prep = PREP_PER_INFERENCE
                timing.e2e_includes = e2e_includes(loaded, PREP_PER_INFERENCE)
            if n:       # wall time per inference, for the advice of a run that measured nothing
                info["wall_per_inference_s"] = (time.monotonic() - asked) / n
            schedule.advance(arrs, n)
            start_index += n
            arrs["phase"] = np.array(["measure"] * n)
            arrs["repeat"] = np.full(n, k)
            self._keep(arrs)
            mine.append(arrs)
            e2e = _concat(mine, "e2e_ns") / 1e9
            warm = warmup_for(e2e, o.min_warmup, self.started.label)
            measured = e2e[warm.n_warmup:]
            decision = rule.check(measured, time.monotonic() - t0) if measured.size else None
            if decision is not None:
                info["decision"] = {"reason": decision.reason, "target_reached": bool(decision.target_reached)}
            self.emit({"event": "chunk", "n": int(measured.size), "n_warmup": warm.n_warmup,
                       "elapsed_s": time.monotonic() - self.t0, "repeat": k + 1, "of": o.repeat,
                       "median_s": float(np.median(measured)) if measured.size else None,
                       "rel_ci": decision.rel_ci_halfwidth if decision else None,
                       "target": o.target_rel_ci / 2.0})
            if decision is not None and decision.done and not self._too_few(measured, decision):
                break
            if time.monotonic() - t0 > rule.max_time_s + GRACE_S:
                break
        self._thermal_end(client)

    def _start(self, client, hello, loaded, inputs) -> None:
        """The run's description from the first repeat; the folder and a run.json marked running."""
        system = client.sysinfo()
        self.resolution_s = clock_resolution(hello)
        result = new_result(self.opts.run_kind, figure_label(hello))
        describe_run(result, self.model, loaded, hello, system, self.profile, client, self.opts, inputs)
        result.timing.clock_resolution_s = self.resolution_s or None
        result.settings.repeat = self.opts.repeat
        result.settings.max_repeats = self.opts.max_repeats
        result.settings.sessions = self.opts.sessions
        result.settings.fresh_process_per_repeat = self.client is None
        thermal = client.thermal()
        result.thermal = ThermalSection(available=bool(thermal.get("available")), start=thermal)
        result.extra.load_at_start = load_average()
        self.result = result
        self.folder.start(result)

        self.journal = store.open_journal(self.run_dir)
        self.repeat_journal = store.open_journal(self.run_dir, "repeats")

    def _keep(self, chunk: dict) -> None:
        """A chunk of samples in memory and, fsync'd before the next request, in the journal."""
        self.chunks.append(chunk)
        assert self.journal is not None
        self.journal.append(frame_of([chunk]))

    def _thermal_end(self, client) -> None:
        result = self.started
        record_end_state(result, client)
        # agent: the agent's own free-form report; run_memory reads and returns the section's dict
        memory = run_memory(self.profile, self.model.path, result.agent.get("status"), result.extra.memory.to_dict() or None)
        if memory:
            result.extra.memory = MemoryFigure.model_validate(memory)

    # -- results --------------------------------------------------------------------------
    def _summarise(self, final: bool, status: Status = "running", reason: str | None = None) -> None:
        """Summaries over the repeats so far; samples and run.json written after every repeat,
        so a killed run keeps every finished repeat (``edgebench bench --recover``)."""
        if self.result is None or self.run_dir is None:
            return
        if self.history is None:   # the runs on record on this board and host, read once
            self.history = read_history(self.result, self.runs_root, exclude=self.run_dir)
        frame = summarise(self.result, frame_of(self.chunks), self.opts, self.repeat_info,
                          self.resolution_s, final=final, status=status, reason=reason, history=self.history)
        if final:
            attach(self.result, self.profile, self.model.path)   # MCU boards: instructions/cycles per MAC
        self.folder.save(self.result, frame)

    def finish(self, status: Status, reason: str | None) -> None:
        self._summarise(True, status, reason)
        if status == "complete" and self.result is not None and not self.result.latency:
            self._summarise(True, "incomplete", self._nothing_measured())
        for j in (self.journal, self.repeat_journal):  # every sample is in samples.parquet now
            if j is not None and self.run_dir is not None:
                j.remove()


def suggested_max_time(inference_s: float, repeat_s: float, repeats: int, keep: int = 10) -> float:
    """A ``--max-time`` that leaves each of ``repeats`` repeats (each ``repeat_s`` of start-up and
    so on, as this run spent) room for ``keep`` inferences of ``inference_s`` past a warm-up of 2."""
    return repeats * (repeat_s + (keep + 2) * inference_s) + FINISH_RESERVE_S


class _Schedule:
    """Keeps a fixed-rate schedule continuous across chunks.

    The first chunk's first request fixes the origin on the device clock; each later
    chunk is told (``start_ns``) when its first request is due, so the time spent
    between chunks shows up as lateness of the requests it delayed, never as a
    silent gap in the schedule, and rates below one request per chunk work.
    """

    def __init__(self, opts: BenchOptions, client, realtime: bool = True):
        # a client whose run() cannot continue a schedule restarts it per chunk
        continues = bp.SCHEDULE_CONTINUATION in client.capabilities
        self.period_ns = (1e9 / opts.rate_hz if opts.scenario == "fixed-rate" and continues and opts.rate_hz
                          else None)
        self.origin_ns: Optional[int] = None
        self.requests = 0
        self.realtime = realtime                # False: a simulated clock, which idles through any gap itself
        # the device's clock at the end of the last chunk, and the host's
        self.device_ns: Optional[int] = None
        self.host_ns: Optional[int] = None

    def next_kwargs(self, deadline: float | None = None) -> dict | None:
        """The next chunk's ``start_ns``, once it is within the device's reach (a request due more
        than ``MAX_START_AHEAD_S`` ahead is waited for here, :func:`wait_to_start`); None when it
        is due after ``deadline`` (host monotonic seconds): the time budget ends first."""
        if self.period_ns is None or self.origin_ns is None:
            return {}
        start = int(self.origin_ns + round(self.requests * self.period_ns))
        if (self.realtime and self.device_ns is not None and self.host_ns is not None
                and not wait_to_start(start, self.device_ns, self.host_ns, deadline)):
            return None
        return {"start_ns": start}

    def advance(self, arrs: dict, n: int) -> None:
        if self.period_ns is None or n == 0:
            return
        if self.origin_ns is None and "scheduled_ns" in arrs:
            self.origin_ns = int(arrs["scheduled_ns"][0])
        self.requests += n
        self.device_ns, self.host_ns = int(arrs["t_start_ns"][-1] + arrs["e2e_ns"][-1]), time.monotonic_ns()


def wait_to_start(start_ns: int, device_ns: int, host_ns: int, deadline: float | None = None) -> bool:
    """Sleep until the device time ``start_ns`` is at most half of ``MAX_START_AHEAD_S`` ahead of the
    device's clock (which read ``device_ns``, or later, at host ``time.monotonic_ns()`` ``host_ns``):
    a fixed-rate schedule slower than one request per 10 s continues across chunks. False, without
    sleeping, when that moment is past ``deadline`` (host monotonic seconds)."""
    wait_s = (start_ns - device_ns - (time.monotonic_ns() - host_ns)) / 1e9 - bp.MAX_START_AHEAD_S / 2
    if wait_s <= 0:
        return True
    if deadline is not None and time.monotonic() + wait_s > deadline:
        return False
    time.sleep(wait_s)
    return True


def _concat(chunks: list, key: str) -> np.ndarray:
    parts = [c[key] for c in chunks if key in c and len(c[key])]
    return np.concatenate(parts).astype(np.float64) if parts else np.zeros(0)


__all__ = ["BenchOptions", "BenchSession", "recover_bench", "run_bench", "run_benches", "run_interleaved",
           "wait_to_start", "suggested_max_time"]
