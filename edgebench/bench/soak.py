"""Thermal soak to a statistical steady state (level 4). Documented in docs/soak.md.

Flow of :func:`run_soak`: open the board, load the model and inputs, discover
its telemetry; write ``run.json`` with status ``running``; optionally cool down
(idle, sampling, until the temperature trend is flat or ``cool_timeout_s``);
one cold inference; then chunks of continuous (single-stream) or fixed-rate
inference with telemetry sampled on the device, until temperature *and* latency
are flat over the trailing window (:func:`edgebench.stats.steady.steady_state`)
or ``max_duration_s`` of device time has passed. The run is made and kept by the
run skeleton (:mod:`edgebench.bench.record`): every chunk's rows are appended to the
run's journals (``samples`` and ``telemetry``, :func:`edgebench.results.store.open_journal`,
fsync'd per chunk), so Ctrl-C, SIGTERM/SIGHUP or an error finish the run as
``incomplete`` with the reason and everything measured; after a kill or a crash
(status still ``running`` on disk), :func:`recover_run` turns the journals into
Parquet and marks it incomplete.

The figures quote the window they come from: the sustained window's median
temperature and CPU clock (``extra.soak.sustained.temp_c`` / ``freq_hz``) are
what the claim states, not the start-of-run clock (``extra.figure_window``).
On a simulated board the board model's energy counter gives the sustained
window's average power and energy per inference (``power.window``, ``simulated``);
on a real board with datasheet power figures, an estimate (``estimated (datasheet)``).
"""
from __future__ import annotations

import time
from collections import deque
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from edgebench import board_protocol as bp
from edgebench import ranges as R
from edgebench.bench.describe import describe_run, figure_label
from edgebench.bench.latency import wait_to_start
from edgebench.bench.options import BenchOptions, RuntimeOptions
from edgebench.bench.record import BoardRun, RunFolder, new_result
from edgebench.bench.steady import phases, summarize_run
from edgebench.bench.window_power import EnergyCounter, energy_basis, window_energy
from edgebench.boards.connect import require_runtime
from edgebench.data.inputs import load_inputs, random_inputs
from edgebench.errors import EdgebenchError, ResultError, UsageError
from edgebench.modelfile import read_model
from edgebench.ranges import check_fields
from edgebench.results import kinds as rk
from edgebench.results import store
from edgebench.results.conditions import SettingsSection
from edgebench.results.figures.energy import PowerSection, WindowEnergy
from edgebench.results.figures.thermal import SoakWindow, ThermalSection
from edgebench.results.model import STAGES, RunResult, RunWarning
from edgebench.stats import preload
from edgebench.stats.energy import si
from edgebench.stats.steady import SteadyVerdict, steady_state, trend
from edgebench.telemetry import analysis
from edgebench.telemetry import capture as cap
from edgebench.telemetry.capture import MAX_RATE_HZ, Capture

SAMPLES_JOURNAL = "samples"
TELEMETRY_JOURNAL = "telemetry"
TELEMETRY_PARQUET = "telemetry.parquet"
AGENT_SOURCES = ("thermal_zone", "cpufreq", "hwmon", "vcgencmd", "apex")
UNTIL = ("steady", "max")
VERDICT_PER_WINDOW = 10   # the verdict is re-evaluated every window/10 of device time (at least every chunk)
Progress = Callable[[dict], None]


@dataclass
class SoakOptions(RuntimeOptions):
    rate_hz: Optional[float] = None       # None: continuous (single-stream, back to back)
    input_count: int = 64
    cool_down: bool = False
    cool_timeout_s: float = 600.0
    window_s: float = 60.0
    burst_s: float = 5.0
    max_duration_s: float = 1800.0
    until: str = "steady"                 # "max": a fixed-duration soak (never stops early)
    telemetry_hz: float = 2.0
    temp_floor_c: float = 0.5
    latency_floor_rel: float = 0.01
    ci_level: float = 0.95
    chunk_s: float = 1.0

    @property
    def scenario(self) -> str:
        return "fixed-rate" if self.rate_hz else "single-stream"

    def validate(self) -> None:
        check_fields(self, RANGES)

        def positive(name, value):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise UsageError(f"{name} must be a positive number, got {value!r}")

        if self.rate_hz is not None:
            positive("--rate", self.rate_hz)
        for name in ("window_s", "max_duration_s", "cool_timeout_s", "temp_floor_c", "latency_floor_rel",
                     "chunk_s"):
            positive(name, getattr(self, name))
        if self.burst_s < 0:
            raise UsageError(f"burst_s must be >= 0, got {self.burst_s!r}")
        if not 0 < self.telemetry_hz <= MAX_RATE_HZ:
            raise UsageError(f"--telemetry-hz must be in (0, {MAX_RATE_HZ:g}], got {self.telemetry_hz!r}",
                             "sampling faster disturbs the workload")
        if self.until not in UNTIL:
            raise UsageError(f"--until must be one of {', '.join(UNTIL)}, got {self.until!r}")
        if self.threads < 1:
            raise UsageError(f"threads must be at least 1, got {self.threads}")
        if self.rate_hz is not None and self.rate_hz * self.max_duration_s < 2:
            raise UsageError(f"--rate {self.rate_hz:g}/s sends fewer than 2 requests within --max-duration "
                             f"{self.max_duration_s:g} s", f"raise --max-duration to at least {2 / self.rate_hz:g} s")
        if self.burst_s + self.window_s > self.max_duration_s:
            raise UsageError(f"--max-duration ({self.max_duration_s:g} s) is shorter than the burst "
                             f"({self.burst_s:g} s) plus one --window ({self.window_s:g} s)",
                             "steady state could never be established; raise --max-duration")


#: the ranges of SoakOptions' numeric fields (edgebench.ranges: the CLI checks the same)
RANGES = {"rate_hz": R.RATE_HZ, "window_s": R.WINDOW_S, "burst_s": R.BURST_S, "max_duration_s": R.MAX_DURATION_S,
          "cool_timeout_s": R.COOL_TIMEOUT_S, "telemetry_hz": R.TELEMETRY_HZ, "temp_floor_c": R.TEMP_FLOOR_C,
          "latency_floor_rel": R.LATENCY_FLOOR, "threads": R.THREADS, "seed": R.SEED, "chunk_s": R.SOAK_CHUNK_S}


# ---------------------------------------------------------------------------- the run
def run_soak(model_path, profile, opts: SoakOptions, runs_root="runs", url: Optional[str] = None,
             progress: Optional[Progress] = None, client=None) -> tuple[RunResult, Path]:
    """Soak ``model_path`` on ``profile``'s board; returns the stored result and its folder."""
    opts.validate()
    model = read_model(model_path)
    return _Soak.on_board(model, profile, opts, runs_root, url, progress, client)


class _Soak(BoardRun):
    def __init__(self, client, model, profile, opts, runs_root, emit):
        super().__init__(client, model, profile, opts, runs_root, emit)
        self.model = model
        self.tel_frames: list = []            # every telemetry frame (small: a few Hz)
        self.temps: list = []                 # (t_ns, primary temperature) per frame, for the verdict
        self.recent: deque = deque()          # (t_start_ns, e2e_ns) chunks within the trailing window
        self.burst: list = []                 # chunks within the burst
        self.n = 0
        self.t0_ns: Optional[int] = None
        self.t_end_ns: Optional[int] = None
        self.verdict: Optional[SteadyVerdict] = None
        self.cool = None

    # -- setup ----------------------------------------------------------------------
    def run(self):
        preload()

        o, client = self.o, self.client

        hello = require_runtime(client, self.profile.name)
        label = figure_label(hello)
        self.realtime = label != "simulated"      # a simulated clock idles through a slow schedule's gaps itself
        if bp.ENERGY_COUNTER in client.capabilities and not isinstance(client, EnergyCounter):
            self.client = client = EnergyCounter(client)
        self.energy_basis = energy_basis(label, self.profile)
        system = client.sysinfo()
        sha = client.ensure_model(self.model)
        self.emit({"event": "load", "model": self.model.name})
        loaded = client.load(sha, kernels=o.kernels, threads=o.threads, delegate=o.delegate)
        tensor = loaded["inputs"][0]
        inputs = (load_inputs(o.inputs, tensor, model=self.model) if o.inputs else
                  random_inputs(tensor, count=o.input_count, seed=o.seed, override=o.input_range))
        client.set_inputs(inputs.x)
        sources = [s for s in getattr(self.profile, "telemetry", ()) if s in AGENT_SOURCES] or None
        self.spec = cap.TelemetrySpec(rate_hz=o.telemetry_hz, sources=tuple(sources) if sources else None)
        self.capture, first = cap.describe(client, self.spec)
        self.has_temp = bool(cap_temp_columns(first))
        thermal_start = client.thermal()

        self.result = r = new_result("soak", label)
        bopts = BenchOptions(scenario=o.scenario, kernels=o.kernels, threads=o.threads, delegate=o.delegate,
                             rate_hz=o.rate_hz, seed=o.seed, cpus=o.cpus)
        describe_run(r, self.model, loaded, hello, system, self.profile, client, bopts, inputs)
        r.settings = SettingsSection(soak={k: v for k, v in asdict(o).items() if k not in ("inputs", "input_range")},
                                     telemetry=self.spec.to_request())
        r.thermal = ThermalSection(available=self.has_temp, start=thermal_start, telemetry=self.capture.to_dict())
        if not self.has_temp:
            r.warnings.append(RunWarning(code="no-thermal-source",
                                         message="this board has no thermal source: soak runs, but cannot judge "
                                                 "thermal steady state; the verdict rests on latency only",
                                         remedy="add a sensor (thermal zone, hwmon, vcgencmd) or accept a "
                                                "latency-only verdict"))
            self.emit({"event": "no-thermal", "message": r.warnings[-1].message})
        self.folder = RunFolder(self.runs_root, self.model.name, self.profile.name)
        self.run_dir = self.folder.start(r)   # status "running" on disk from the start
        self.samples = store.open_journal(self.run_dir, SAMPLES_JOURNAL)
        self.telemetry = store.open_journal(self.run_dir, TELEMETRY_JOURNAL)
        self._tel(first, "setup")
        with self.folder.guard(self._stopped, self._measured):
            if o.cool_down:
                self._cool_down()
            self._soak()
        self._finish("complete", None)
        return self.result, self.run_dir

    def _measured(self) -> bool:
        """Anything beyond the setup reading: inferences, or cool-down telemetry."""
        return self.samples.rows > 0 or len(self.tel_frames) > 1

    def _stopped(self, status: str, reason: str) -> None:
        """The run skeleton's stop path: keep everything, say why (a link that failed is not asked again)."""
        self._finish(status, reason, alive=status == "incomplete" and not reason.startswith("stopped by an error"))

    # -- writing ----------------------------------------------------------------------
    def _tel(self, frame, phase: str) -> None:
        if frame is None or len(frame) == 0:
            return
        frame = frame.copy()
        frame.insert(0, "phase", phase)
        self.tel_frames.append(frame)
        self.telemetry.append(frame)
        self.temps.append((frame["t_ns"].to_numpy(np.int64), analysis.primary_temp(frame)))

    def _rows(self, arrays: dict, phase: str) -> dict:
        n = len(arrays["e2e_ns"])
        cols = {"phase": np.full(n, phase),
                "t_start_ns": np.asarray(arrays["t_start_ns"], np.int64)}
        for stage in STAGES:
            cols[f"{stage}_s"] = np.asarray(arrays[f"{stage}_ns"], np.float64) / 1e9
        cols["input_index"] = np.asarray(arrays.get("input_index", np.full(n, -1)), np.int64)
        cols["scheduled_ns"] = np.asarray(arrays.get("scheduled_ns", np.full(n, -1)), np.int64)
        return cols

    # -- cool-down --------------------------------------------------------------------
    def _cool_down(self) -> None:
        o = self.o
        if not self.has_temp:
            self.cool = {"done": False, "reason": "skipped: no thermal source to watch"}
            self.emit({"event": "cool", "message": self.cool["reason"]})
            return
        t_first = None
        frames = []
        start = time.monotonic()
        while True:
            frame = cap.idle(self.client, self.capture, self.spec, min(cap.IDLE_CHUNK_S, o.cool_timeout_s))
            self._tel(frame, "cool-down")
            frames.append(frame)
            import pandas as pd  # 0.42 s to import (-X importtime): telemetry frames only

            allf = pd.concat(frames, ignore_index=True)
            t = allf["t_ns"].to_numpy(np.int64)
            t_first = t[0] if t_first is None and t.size else t_first
            temp = analysis.primary_temp(allf)
            elapsed = (t[-1] - t_first) / 1e9 if t.size else 0.0
            tr = trend(t / 1e9, temp, o.window_s, floor=o.temp_floor_c, quantity="temperature", unit="°C",
                       ci_level=o.ci_level)
            self.emit({"event": "cool", "elapsed_s": elapsed, "temp_c": _last(temp), "trend": tr.to_dict()})
            if tr.flat:
                self.cool = {"done": True, "duration_s": elapsed, "baseline_temp_c": tr.level,
                             "reason": tr.reason}
                return
            if elapsed >= o.cool_timeout_s or time.monotonic() - start > o.cool_timeout_s * 1.5 + 30:
                self.cool = {"done": False, "duration_s": elapsed, "baseline_temp_c": _last(temp),
                             "reason": f"cool-down timeout after {elapsed:.0f} s: {tr.reason}"}
                self.result.warnings.append(RunWarning(code="cool-down-timeout", message=self.cool["reason"],
                                                       remedy="raise --cool-timeout, or improve cooling"))
                return

    # -- soak loop --------------------------------------------------------------------
    def _soak(self) -> None:
        o, client = self.o, self.client
        header, arrays, frame = cap.run_chunk(client, self.capture, self.spec, "single-stream", 1, 60.0)
        self.samples.append(self._rows(arrays, "cold"))
        self._tel(frame, "cold")
        self.cold = {"first_inference_s": float(arrays["e2e_ns"][0]) / 1e9,
                     "first_invoke_s": float(arrays["invoke_ns"][0]) / 1e9}
        start_index, host_start = 1, time.monotonic()
        burst_ns, window_ns = int(o.burst_s * 1e9), int(o.window_s * 1e9)
        verdict_every, next_verdict = max(o.chunk_s, o.window_s / VERDICT_PER_WINDOW), 0.0
        host_ns = time.monotonic_ns()
        count, max_time, start_ns = 1_000_000, o.chunk_s, None
        if o.rate_hz:  # fixed-rate: whole chunks of the schedule, continued across chunks on the device clock
            count = max(1, int(round(o.rate_hz * o.chunk_s)))
            max_time = count / o.rate_hz + max(1.0, o.chunk_s)
        while True:
            if start_ns is not None and self.t_end_ns is not None and self.realtime and not wait_to_start(
                    start_ns, self.t_end_ns, host_ns, host_start + 1.5 * o.max_duration_s + 60):
                return                        # the next request is due after the longest a soak may take
            header, arrays, frame = cap.run_chunk(client, self.capture, self.spec, o.scenario, count, max_time,
                                                  rate_hz=o.rate_hz, start_index=start_index, start_ns=start_ns)
            host_ns = time.monotonic_ns()
            if o.rate_hz and self.capture.mode == "on-device" and "scheduled_ns" in arrays and len(arrays["e2e_ns"]):
                start_ns = int(arrays["scheduled_ns"][0]) + int(round(len(arrays["e2e_ns"]) * 1e9 / o.rate_hz))
            n = len(arrays["e2e_ns"])
            if n == 0:
                raise EdgebenchError(f"{client.description} ran no inference in a "
                                     f"{o.chunk_s:g} s chunk", "lower --rate or check the board")
            start_index += n
            self.samples.append(self._rows(arrays, "soak"))
            self._tel(frame, "soak")
            t, e2e = np.asarray(arrays["t_start_ns"], np.int64), np.asarray(arrays["e2e_ns"], np.int64)
            if self.t0_ns is None:
                self.t0_ns = int(t[0])
            self.n += n
            self.t_end_ns = int(t[-1] + e2e[-1])
            b = t < self.t0_ns + burst_ns
            if b.any():
                self.burst.append((t[b], e2e[b]))
            self.recent.append((t, e2e))
            while self.recent and self.recent[0][0][-1] < self.t_end_ns - window_ns - int(5e9):
                self.recent.popleft()
            elapsed = (self.t_end_ns - self.t0_ns) / 1e9
            at_max = elapsed >= o.max_duration_s or time.monotonic() - host_start > 1.5 * o.max_duration_s + 60
            if self.verdict is None or at_max or elapsed >= next_verdict:
                self.verdict = self._verdict(self.t0_ns, self.t_end_ns, burst_ns)
                next_verdict = elapsed + verdict_every
                if o.until == "steady" and self.verdict.steady:
                    self.emit(self._progress(frame, e2e, elapsed))
                    return
            self.emit(self._progress(frame, e2e, elapsed))
            if at_max:
                return

    def _verdict(self, t0_ns: int, t_end_ns: int, burst_ns: int) -> SteadyVerdict:
        o = self.o
        t = np.concatenate([c[0] for c in self.recent])
        e2e = np.concatenate([c[1] for c in self.recent])
        keep = t >= t0_ns + burst_ns      # the trailing window never reaches into the burst
        lat_t, lat = (t[keep] - t0_ns) / 1e9, e2e[keep] / 1e9
        temp_t = temp = None
        if self.has_temp and self.temps:
            recent = self.temps[-max(1, int(o.window_s * o.telemetry_hz) + 50):]
            tt = np.concatenate([x[0] for x in recent])
            tv = np.concatenate([x[1] for x in recent])
            sel = tt >= t0_ns + burst_ns
            temp_t, temp = (tt[sel] - t0_ns) / 1e9, tv[sel]
        return steady_state(temp_t, temp, lat_t, lat, o.window_s, temp_floor_c=o.temp_floor_c,
                            latency_floor_rel=o.latency_floor_rel, ci_level=o.ci_level,
                            t_end=(t_end_ns - t0_ns) / 1e9)

    def _progress(self, frame, e2e, elapsed) -> dict:
        temp = freq = None
        if frame is not None and len(frame):
            temp = _last(self.temps[-1][1]) if self.has_temp and self.temps else None
            freq = _last(analysis.cpu_freq(frame)[1])
        v = self.verdict
        assert v is not None   # a verdict is made before the first progress event
        return {"event": "chunk", "elapsed_s": elapsed, "n": self.n, "temp_c": temp, "freq_hz": freq,
                "latency_s": float(np.median(e2e)) / 1e9, "steady": v.steady,
                "temperature": v.temperature.to_dict() if v.temperature else None,
                "latency": v.latency.to_dict() if v.latency else None, "thermal_judged": v.thermal_judged,
                "max_duration_s": self.o.max_duration_s, "window_s": self.o.window_s}

    # -- finishing ----------------------------------------------------------------------
    def _finish(self, status: str, reason: Optional[str], alive: bool = True) -> None:
        r = self.result
        if alive:
            try:
                r.thermal.end = self.client.thermal()
                r.agent["status"] = self.client.status()
            except (Exception, KeyboardInterrupt):  # an interrupted link: keep what we have
                pass
        self.samples.close()
        self.telemetry.close()
        frame = store.read_journal(self.run_dir, SAMPLES_JOURNAL) if self.samples.rows else None
        summarize_run(r, frame, self._telemetry_frame(), self.capture, self.o, self.verdict, self.t0_ns,
                      self.t_end_ns, self.cold if hasattr(self, "cold") else None, self.cool, status, reason)
        sus = r.extra.soak.sustained
        window = None
        if frame is not None and sus and sus.t_from_s is not None and self.t0_ns is not None:
            rows = frame[frame["phase"] != "cold"]
            marks = self.client.marks if bp.ENERGY_COUNTER in self.client.capabilities else []
            window = window_energy(self.energy_basis, marks, rows["t_start_ns"].to_numpy(np.int64),
                                   self.t0_ns + int(sus.t_from_s * 1e9), sus.throughput_per_s, sus.median_s)
        _window_power(r, self.energy_basis, window, sus)
        _store(self.folder, r, frame, self._telemetry_frame(), self.o, self.t0_ns, self.t_end_ns)

    def _telemetry_frame(self):
        import pandas as pd  # 0.42 s to import (-X importtime): telemetry frames only

        return pd.concat(self.tel_frames, ignore_index=True) if self.tel_frames else pd.DataFrame()


def cap_temp_columns(frame) -> list:
    cols = analysis.temp_columns(frame) if frame is not None and len(frame.columns) else []
    return [c for c in cols if np.isfinite(frame[c].to_numpy(np.float64)).any()]


def _last(x) -> Optional[float]:
    x = np.asarray(x, dtype=np.float64)
    x = x[np.isfinite(x)]
    return float(x[-1]) if x.size else None


# ---------------------------------------------------------------------------- storing
def _window_power(r: RunResult, basis: dict, window: Optional[WindowEnergy], sus: SoakWindow) -> None:
    """The run's power section: how energy is known on this board, and the sustained window's figures."""
    if not basis.get("label"):
        r.power.note = basis.get("note") or r.power.note
        return
    if window is not None:
        window.window = "sustained" if r.extra.soak.steady else "final"
        window.t_from_s, window.t_to_s = sus.t_from_s, sus.t_to_s
    r.power = PowerSection(measured=False, **basis)
    if window is not None:
        r.power.window = window
    if window is not None and r.extra.claim:
        avg = f", average {si(window.avg_power_w, 'W')}" if window.avg_power_w is not None else ""
        r.extra.claim += (f" {(window.label or '').capitalize()} energy: {si(window.per_inference_j, 'J')} per "
                          f"inference{avg} over the {window.window} window ({basis['method']}).")


def _store(folder: RunFolder, r: RunResult, frame, tel, o, t0_ns, t_end_ns) -> None:
    """Telemetry and samples to Parquet, then run.json (:meth:`RunFolder.save`), then the journals go
    (a reader never sees a finished run.json without its samples)."""
    assert folder.path is not None   # the folder was started before anything was measured
    if tel is not None and len(tel):
        store.write_parquet(folder.path / TELEMETRY_PARQUET, tel)
    folder.save(r, phases(frame, t0_ns, t_end_ns, o) if frame is not None else None)
    store.remove_journal(folder.path, SAMPLES_JOURNAL)
    store.remove_journal(folder.path, TELEMETRY_JOURNAL)


# ---------------------------------------------------------------------------- recovery
def read_telemetry(run_dir):
    """The telemetry frame of a soak run (from Parquet, or what a killed run left in its journal)."""
    import pandas as pd  # 0.42 s to import (-X importtime): telemetry frames only

    d = Path(run_dir)
    if (d / TELEMETRY_PARQUET).exists():
        return pd.read_parquet(d / TELEMETRY_PARQUET)
    if store.journal_paths(d, TELEMETRY_JOURNAL):
        return store.read_journal(d, TELEMETRY_JOURNAL)
    return pd.DataFrame()


def recover_run(run_dir) -> RunResult:
    """A soak whose process died (status ``running`` on disk): convert what it journalled and mark it
    ``incomplete``, with the figures its samples allow."""
    d = Path(run_dir)
    r = store.read_unfinished(d)
    if r.kind != rk.SOAK.name:
        raise ResultError(f"{d} is a {r.kind} run, not a soak")
    if r.status != "running":
        raise ResultError(f"{d} is not an unfinished soak (status {r.status})", "nothing to recover")
    r.extra.writer = None         # the writer is gone; a finished run names none
    soak = r.settings.other("soak") or {}
    o = SoakOptions(**{k: v for k, v in soak.items() if k in SoakOptions.__dataclass_fields__})
    samples = store.read_journal(d, SAMPLES_JOURNAL) if store.journal_paths(d, SAMPLES_JOURNAL) else None
    tel = read_telemetry(d)
    tdesc = dict(r.thermal.telemetry or {})
    capture = Capture(tdesc.pop("mode", "none"), tdesc)
    verdict = t0 = t_end = None
    rows = samples[samples["phase"] != "cold"] if samples is not None and len(samples) else None
    if rows is not None and len(rows):
        t = rows["t_start_ns"].to_numpy(np.int64)
        t0, t_end = int(t[0]), int(t[-1] + rows["e2e_s"].to_numpy()[-1] * 1e9)
        burst = t0 + int(o.burst_s * 1e9)
        keep = t >= burst
        temp_t = temp = None
        if len(tel) and analysis.temp_columns(tel):
            tt = tel["t_ns"].to_numpy(np.int64)
            temp_t, temp = (tt[tt >= burst] - t0) / 1e9, analysis.primary_temp(tel)[tt >= burst]
        verdict = steady_state(temp_t, temp, (t[keep] - t0) / 1e9, rows["e2e_s"].to_numpy()[keep], o.window_s,
                               o.temp_floor_c, o.latency_floor_rel, o.ci_level, t_end=(t_end - t0) / 1e9)
    reason = "the soak process stopped without finishing (crash or kill); recovered what it had journalled"
    summarize_run(r, samples, tel, capture, o, verdict, t0, t_end, None, None, "incomplete", reason)
    if r.power.label:
        r.power = PowerSection.model_validate({k: v for k, v in r.power.to_dict().items() if k != "window"})
        r.power.note = "the energy counter's readings died with the soak process: no window energy"
    folder = RunFolder(d.parent, r.model.name or "", r.board.name or "")
    folder.path = d
    _store(folder, r, samples, tel, o, t0, t_end)
    return r


__all__ = ["SoakOptions", "run_soak", "recover_run", "read_telemetry"]
