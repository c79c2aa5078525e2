"""Thermal/energy sweeps (level 4): a grid of soaks, one run folder. Documented in docs/sweep.md.

A sweep is a grid over the load (duty cycle *or* inference rate) × model variant ×
kernels × delegate × threads. Every point is a soak to a statistical steady state
(:func:`edgebench.bench.soak.run_soak`, fixed-rate or continuous load, at most
``max_duration_per_point_s`` of device time), on one connection to the board. The
points run from the lightest load to the heaviest, so a point starts no hotter than
its own steady state (unless ``cool_down``, which idles each point to a baseline first).

Load: a duty cycle ``D < 1`` becomes the fixed rate ``D / t`` with ``t`` the median
back-to-back latency of a short probe of the same configuration; ``D = 1`` is
continuous (single-stream) load. A rate is used as given; a rate the board cannot
sustain is said, with the achieved rate, and the sweep goes on. Each point's
trailing window holds at least :data:`MIN_WINDOW_INFERENCES` inferences (a 1%
latency trend cannot be resolved from fewer), within the per-point maximum.

Energy per inference at a point = average board power over the point's final
(sustained) window / inferences in it, idle time between inferences included: each
point's soak records it (:mod:`edgebench.bench.window_power`). On a simulated board
it comes from the board model's energy counter (``simulated``); on a real board, with
no meter, from the profile's datasheet figures (``estimated (datasheet)``); otherwise
it is absent, and says why. Each point also records the median temperature and CPU
clock of its window (``sustained_temp_c``, ``sustained_freq_hz``), and the claim quotes them.

Folder: ``run.json`` (kind ``sweep``, the points in ``extra.points``, rewritten after
every point), ``points.parquet`` (the summary table), ``points/pNN-*/`` (each point's
soak run: ``run.json``, ``samples.parquet``, ``telemetry.parquet``) and PNG plots.
The run skeleton (:mod:`edgebench.bench.record`) keeps it on every stop: Ctrl-C,
SIGTERM/SIGHUP or an error keeps the finished points (the interrupted one too, marked
incomplete) and marks the sweep ``incomplete`` with the reason; a sweep killed outright
(status still ``running``) is finished by :func:`recover_sweep` (``sweep --recover``):
its points' soaks are recovered from their journals.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, List, Optional, cast

from edgebench import ranges as R
from edgebench.bench.describe import figure_label
from edgebench.bench.energy import probe_e2e
from edgebench.bench.energy_analysis import EnergyOptions
from edgebench.bench.options import KERNELS
from edgebench.bench.record import BoardRun, RunFolder, board_section, new_result, stop_reason
from edgebench.bench.soak import SoakOptions, recover_run, run_soak
from edgebench.bench.steady import RunStatus
from edgebench.bench.sweep_figures import (
    curve_series,
    flat_point,
    plot_note,
    point_series,
    summarize_point,
    sweep_sentence,
    sweep_warnings,
)
from edgebench.bench.window_power import energy_basis
from edgebench.errors import EdgebenchError, ResultError, UsageError
from edgebench.modelfile import ModelFile, read_model
from edgebench.ranges import check_fields
from edgebench.report import plots
from edgebench.report.format import duration
from edgebench.results import kinds as rk
from edgebench.results import store
from edgebench.results.conditions import ModelSection, RuntimeSection, ScenarioSection, SettingsSection
from edgebench.results.figures.energy import PowerSection
from edgebench.results.figures.latency import Stopping
from edgebench.results.figures.points import Point, PointModel
from edgebench.results.model import Extra, RunResult, RunWarning
from edgebench.results.store import slug
from edgebench.stats import preload

DEFAULT_DUTY = (0.01, 0.1, 0.5, 1.0)
MIN_WINDOW_INFERENCES = 500
POINTS_DIR = "points"
TABLE = "points.parquet"
TIMESERIES_PNG = "timeseries.png"
CURVES_PNG = "throughput_energy.png"
Progress = Callable[[dict], None]


#: the ranges of SweepOptions' numeric fields (edgebench.ranges: the CLI checks the same)
RANGES = {"duty": R.DUTY, "rate_hz": R.RATE_HZ, "threads": R.THREADS,
          "max_duration_per_point_s": R.MAX_DURATION_PER_POINT_S, "window_s": R.WINDOW_S, "burst_s": R.BURST_S, "cool_timeout_s": R.COOL_TIMEOUT_S,
          "telemetry_hz": R.TELEMETRY_HZ, "seed": R.SEED}


@dataclass
class SweepOptions:
    duty: Optional[tuple] = None           # fractions in (0, 1]; default DEFAULT_DUTY when rate_hz is None
    rate_hz: Optional[tuple] = None        # inferences per second
    threads: tuple = (1,)
    variants: tuple = ()                   # further model files (e.g. the FP32 model of an INT8 one)
    kernels: tuple = ("xnnpack",)
    delegates: tuple = (None,)
    max_duration_per_point_s: float = 900.0
    window_s: float = 60.0
    burst_s: float = 5.0
    cool_down: bool = False
    cool_timeout_s: float = 600.0
    telemetry_hz: float = 2.0
    inputs: Optional[str] = None
    seed: int = 0
    cpus: Optional[str] = None             # pin a local agent to these CPUs ("0", "2,3")

    @property
    def axis(self) -> str:
        return "rate" if self.rate_hz is not None else "duty"

    @property
    def loads(self) -> tuple:
        return tuple(self.rate_hz) if self.rate_hz is not None else tuple(self.duty or DEFAULT_DUTY)

    def validate(self, profile=None) -> None:
        check_fields(self, RANGES)
        if self.duty is not None and self.rate_hz is not None:
            raise UsageError("give --duty or --rate, not both", "a sweep has one load axis")
        for d in self.duty or ():
            if isinstance(d, bool) or not isinstance(d, (int, float)) or not (math.isfinite(d) and 0 < d <= 1):
                raise UsageError(f"duty cycle {d!r} is outside (0, 1]",
                                 "give fractions of time spent inferring, e.g. --duty 0.01,0.1,0.5,1.0")
        for r in self.rate_hz or ():
            if isinstance(r, bool) or not isinstance(r, (int, float)) or not (math.isfinite(r) and r > 0):
                raise UsageError(f"rate {r!r} is not a positive number of inferences per second",
                                 "e.g. --rate 1,10,100")
        if not self.loads:
            raise UsageError(f"no {self.axis} values given", "e.g. --duty 0.1,1.0")
        for t in self.threads:
            if isinstance(t, bool) or not isinstance(t, int) or t < 1:
                raise UsageError(f"threads must be whole numbers of at least 1, got {t!r}", "e.g. --threads 1,4")
        for k in self.kernels:
            if k not in KERNELS:
                raise UsageError(f"unknown kernel set {k!r}", f"use one of {', '.join(KERNELS)}")
            if profile is not None and getattr(profile, "kernels", None) and k not in profile.kernels:
                raise UsageError(f"board {profile.name} does not offer kernels {k!r}",
                                 f"its profile lists {', '.join(profile.kernels)}")
        for d in self.delegates:
            if d is not None and profile is not None and d not in tuple(getattr(profile, "delegates", ()) or ()):
                have = ", ".join(profile.delegates) or "none"
                raise UsageError(f"board {profile.name} has no delegate {d!r} (its profile lists: {have})",
                                 "drop it from --delegate, or pick a board that has it")
        m, b, w = self.max_duration_per_point_s, self.burst_s, self.window_s
        for name, v in (("--max-duration-per-point", m), ("--window", w)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                raise UsageError(f"{name} must be a positive number of seconds, got {v!r}")
        if not b >= 0:
            raise UsageError(f"--burst must be >= 0, got {b!r}")
        if b + w > m:
            raise UsageError(f"--max-duration-per-point ({m:g} s) is shorter than the burst ({b:g} s) plus one "
                             f"--window ({w:g} s)", "steady state could never be established; raise it")

    def to_dict(self) -> dict:
        d = asdict(self)
        d.update(axis=self.axis, loads=list(self.loads), threads=list(self.threads), variants=list(self.variants),
                 kernels=list(self.kernels), delegates=list(self.delegates))
        d.pop("duty"), d.pop("rate_hz")
        return d


@dataclass(frozen=True)
class GridPoint:
    index: int
    load: float                 # duty cycle or rate, per SweepOptions.axis
    model: ModelFile
    kernels: str
    delegate: Optional[str]
    threads: int

    def config(self) -> tuple:
        return (self.model.sha256, self.kernels, self.delegate, self.threads)


def grid(opts: SweepOptions, models: list) -> list:
    """Points, lightest load first: load × model × kernels × delegate × threads."""
    out: List[GridPoint] = []
    for load in sorted(set(opts.loads)):
        for m in models:
            for k in opts.kernels:
                for d in opts.delegates:
                    for t in opts.threads:
                        out.append(GridPoint(len(out) + 1, float(load), m, k, d, t))
    return out


def describe_point(gp: GridPoint, axis: str, vary: set) -> str:
    """'duty 0.1, digits_int8 (int8), 4 threads': the load, and only the dimensions that vary."""
    parts = [f"duty {gp.load:g}" if axis == "duty" else f"{gp.load:g}/s"]
    if "model" in vary:
        parts.append(f"{gp.model.name} ({gp.model.precision})")
    if "kernels" in vary:
        parts.append(gp.kernels)
    if "delegate" in vary:
        parts.append(gp.delegate or "no delegate")
    if "threads" in vary:
        parts.append(f"{gp.threads} thread{'s' if gp.threads > 1 else ''}")
    return ", ".join(parts)


# ---------------------------------------------------------------------------- the run
def run_sweep(model_path, profile, opts: SweepOptions, runs_root="runs", url: Optional[str] = None,
              progress: Optional[Progress] = None, client=None) -> tuple[RunResult, Path]:
    """Sweep ``model_path`` (and ``opts.variants``) on ``profile``'s board; the stored sweep and its folder."""
    opts.validate(profile)
    models: List[ModelFile] = []
    for path in (model_path, *opts.variants):
        m = read_model(path)
        same = next((x for x in models if x.sha256 == m.sha256), None)
        if same is not None:
            raise UsageError(f"variant {path} is the same model as {same.path}", "give each model once")
        models.append(m)
    return _Sweep.on_board(models, profile, opts, runs_root, url, progress, client)


class _Sweep(BoardRun):
    def __init__(self, client, models, profile, opts, runs_root, emit):
        super().__init__(client, models, profile, opts, runs_root, emit)
        self.models = models
        self.points = grid(opts, models)
        self.vary = {name for name, n in (("model", len(models)), ("kernels", len(opts.kernels)),
                                          ("delegate", len(opts.delegates)), ("threads", len(opts.threads))) if n > 1}
        self.probes: dict = {}

    def run(self):
        preload()

        hello = self.client.hello()
        self.label = figure_label(hello)
        self.energy_basis = energy_basis(self.label, self.profile)
        o, first = self.o, self.models[0]
        self.entries = [self._planned(gp) for gp in self.points]
        r = self.result = new_result("sweep", self.label)
        r.model = ModelSection.model_validate({**first.to_dict(), "variants": [m.to_dict() for m in self.models[1:]]})
        r.board = board_section(self.profile, self.client.description)
        one = lambda xs: xs[0] if len(xs) == 1 else ",".join(str(x) for x in xs)  # noqa: E731
        r.runtime = RuntimeSection(kernels=one(o.kernels), delegate=one([d or "none" for d in o.delegates]),
                                   threads=one(o.threads), note="per point: see extra.points and each point's run.json")
        r.scenario = ScenarioSection(name="sweep", axis=o.axis, values=sorted(set(o.loads)),
                                     load="duty cycle: fixed rate duty / probe latency, 1.0 = continuous"
                                     if o.axis == "duty" else "fixed-rate requests per second")
        r.settings = SettingsSection(sweep=o.to_dict(), min_window_inferences=MIN_WINDOW_INFERENCES,
                                     order="lightest load first; then model, kernels, delegate, threads")
        r.power = PowerSection(measured=False, **self.energy_basis)
        r.extra = Extra(axis=o.axis, points=self.entries, table=TABLE, plots=[])
        self.folder = RunFolder(self.runs_root, f"{first.name}-sweep", self.profile.name)
        self.run_dir = self.folder.start(r)
        self.points_dir = self.run_dir / POINTS_DIR
        self.points_dir.mkdir()
        self.emit({"event": "sweep-start", "run_dir": str(self.run_dir), "points": len(self.points),
                   "label": self.label, "axis": o.axis})
        with self.folder.guard(self._stopped, self._measured):
            for gp in self.points:
                self._point(gp)
        self._finish()
        return self.result, self.run_dir

    def _measured(self) -> bool:
        return any(e.status != "not-run" for e in self.entries)

    def _stopped(self, status: str, reason: str) -> None:
        try:
            self._finish(stopped=reason, status=status)
        except Exception:  # noqa: BLE001 - run.json already says incomplete; the stop is what to report
            pass

    def _save(self) -> None:
        """run.json with the points as they are now."""
        self.result.extra.points = self.entries
        store.write_result(self.run_dir, self.result)

    # -- one point ---------------------------------------------------------------------
    def _planned(self, gp: GridPoint) -> Point:
        return Point(index=gp.index, id=f"p{gp.index:02d}", name=describe_point(gp, self.o.axis, self.vary),
                     axis=self.o.axis, duty=gp.load if self.o.axis == "duty" else None,
                     requested_rate_hz=gp.load if self.o.axis == "rate" else None,
                     model=PointModel(name=gp.model.name, path=str(gp.model.path), sha256=gp.model.sha256,
                                      precision=gp.model.precision),
                     kernels=gp.kernels, delegate=gp.delegate, threads=gp.threads,
                     status="not-run", status_reason=None, run_dir=None)

    def _point(self, gp: GridPoint) -> None:
        entry, n = self.entries[gp.index - 1], len(self.points)
        self.emit({"event": "point-start", "index": gp.index, "of": n, "name": entry.name})
        before = set(self.points_dir.iterdir())

        def forward(ev: dict) -> None:
            self.emit({**ev, "point": gp.index, "of": n, "name": entry.name})

        try:
            rate, window, notes = self._load(gp, entry)
            so = SoakOptions(rate_hz=rate, kernels=gp.kernels, threads=gp.threads, delegate=gp.delegate,
                             inputs=self.o.inputs, seed=self.o.seed, cool_down=self.o.cool_down,
                             cool_timeout_s=self.o.cool_timeout_s, window_s=window, burst_s=self.o.burst_s,
                             max_duration_s=self.o.max_duration_per_point_s, telemetry_hz=self.o.telemetry_hz,
                             cpus=self.o.cpus)
            entry.notes = notes
            result, pdir = run_soak(gp.model.path, self.profile, so, runs_root=self.points_dir,
                                    progress=forward, client=self.client)
        except KeyboardInterrupt as exc:
            self._salvage(gp, entry, before, stop_reason(exc)[1])
            raise
        except EdgebenchError as exc:
            self.first_error = getattr(self, "first_error", None) or exc
            self._salvage(gp, entry, before, f"failed: {exc.one_line()}", failed=True)
            self.emit({"event": "point-failed", "index": gp.index, "of": n, "name": entry.name,
                       "error": exc.one_line()})
            self._save()
            return
        self._rename(pdir, entry)
        summarize_point(entry, result)
        self.emit({"event": "point-done", "index": gp.index, "of": n, "name": entry.name, "point": entry.to_dict()})
        self._save()

    def _salvage(self, gp, entry: Point, before, reason: str, failed: bool = False) -> None:
        """After an error or Ctrl-C inside a point: keep what its soak stored, marked incomplete."""
        new = sorted(set(self.points_dir.iterdir()) - before)
        entry.status_reason = reason
        entry.status = "failed" if failed else "incomplete"
        if failed:
            entry.error = reason[len("failed: "):]
        if new and (new[-1] / store.RUN_JSON).exists():
            try:
                result = store.read_result(new[-1])
            except EdgebenchError:
                return
            self._rename(new[-1], entry)
            summarize_point(entry, result)
            entry.status, entry.status_reason = "incomplete", reason

    def _rename(self, pdir: Path, entry: Point) -> Path:
        name = (entry.name or "").replace(", ", "-").replace(" ", "")
        target = self.points_dir / f"{entry.id}-{slug(name)}"
        if not target.exists():
            pdir = Path(pdir).rename(target)
        entry.run_dir = str(Path(pdir).relative_to(self.run_dir))
        return Path(pdir)

    def _probe(self, gp: GridPoint) -> float:
        if gp.config() not in self.probes:
            eo = EnergyOptions(rate_hz=1.0, kernels=gp.kernels, threads=gp.threads, delegate=gp.delegate,
                               inputs=self.o.inputs, seed=self.o.seed)
            self.probes[gp.config()] = probe_e2e(self.client, gp.model.path, eo)
        return self.probes[gp.config()]

    def _load(self, gp: GridPoint, entry: Point) -> tuple:
        """(fixed rate or None for continuous, trailing window, notes) of a point."""
        notes = []
        if self.o.axis == "duty":
            e2e = self._probe(gp)
            rate = None if gp.load >= 1.0 else gp.load / e2e
            expected = rate or 1.0 / e2e
            entry.probe_e2e_s = e2e
            entry.requested_rate_hz = rate
            entry.load_from = ("duty 1: continuous (single-stream) load" if rate is None else
                               f"duty {gp.load:g} / median back-to-back latency {duration(e2e)} "
                               f"(probe of 40 inferences) = {rate:.4g}/s")
        else:
            rate = expected = gp.load
        window = float(max(self.o.window_s, math.ceil(MIN_WINDOW_INFERENCES / expected)))
        cap = self.o.max_duration_per_point_s - self.o.burst_s
        if window > self.o.window_s:
            notes.append(f"window widened to {window:.0f} s to hold {MIN_WINDOW_INFERENCES} inferences")
        if window > cap:
            window = cap
            notes.append(f"window capped at {cap:g} s by --max-duration-per-point: fewer than "
                         f"{MIN_WINDOW_INFERENCES} inferences in it, the latency verdict may stay undetermined")
        entry.window_s = window
        return rate, window, notes

    # -- finishing ------------------------------------------------------------------------
    def _finish(self, stopped: Optional[str] = None, status: str = "incomplete") -> None:
        """Status, table, plots and claim of the sweep; ``stopped``: why it stopped early (a signal, Ctrl-C,
        an error outside a point, a kill found by recovery)."""
        r, entries = self.result, self.entries
        done = [e for e in entries if e.status in ("complete", "incomplete") and e.run_id]
        failed = [e for e in entries if e.error]
        r.warnings = sweep_warnings(done, failed, self.label, self.vary, self.energy_basis)
        finished = sum(e.status == "complete" for e in entries)
        if stopped:
            r.status = cast(RunStatus, status)      # "failed" when an unexpected error stopped it
            r.status_reason = f"{stopped}: {finished} of {len(entries)} points finished, kept"
        elif failed:
            r.status = "incomplete" if done else "failed"
            r.status_reason = f"{len(failed)} of {len(entries)} points failed: {failed[0].status_reason}"
        else:
            r.status, r.status_reason = "complete", None
        r.stopping = Stopping(points=len(entries), finished=finished, steady=sum(bool(e.steady) for e in entries),
                              failed=len(failed), not_run=sum(e.status == "not-run" for e in entries))
        self._save()      # the status first: tables and plots come after
        self._table()
        r.extra.plots = self._plots(done)
        r.extra.claim = sweep_sentence(r)
        self._save()
        if not done and failed and not stopped:
            exc = self.first_error
            exc.message = f"every point of the sweep failed; first: {exc.message} (sweep kept in {self.run_dir})"
            raise exc

    def _table(self) -> None:
        import pandas as pd  # 0.42 s to import (-X importtime): the table only

        rows = [flat_point(e) for e in self.entries]
        store.write_parquet(self.run_dir / TABLE, pd.DataFrame(rows))

    def _plots(self, done: List[Point]) -> List[str]:
        written = []
        try:
            panels = [p for p in (point_series(self.run_dir, e) for e in done) if p is not None]
            note = plot_note(self.label, self.energy_basis.get("label"))
            warn = next((w.message for w in self.result.warnings if w.code == "mixed-labels"), None)
            title = f"{self.result.model.name} on {self.result.board.name}"
            if panels:
                written += plots.point_timeseries(panels, self.run_dir / TIMESERIES_PNG, title=title, note=note,
                                                  warning=warn)
            series = curve_series(done, self.o.axis)
            if series:
                x_label = "duty cycle (fraction of time inferring)" if self.o.axis == "duty" else \
                    "requested rate (inferences/s)"
                written.append(plots.load_curves(series, self.run_dir / CURVES_PNG, x_label=x_label,
                                                 title=title, note=note, warning=warn,
                                                 requested_line=self.o.axis == "rate",
                                                 energy_label=self.energy_basis.get("label")))
        except Exception as exc:  # a plot must never lose the measurements
            self.result.warnings.append(RunWarning(code="plots-failed", message=f"plots not written: "
                                                   f"{type(exc).__name__}: {exc}",
                                                   remedy="the data are in the run folder"))
        return [Path(p).name for p in written]


# ---------------------------------------------------------------------------- recovery
def recover_sweep(run_dir) -> RunResult:
    """Finish a sweep left ``running`` by a kill or a crash: the points it finished are kept as they are,
    the point it was in is recovered from its soak's journal (:func:`edgebench.bench.soak.recover_run`),
    and the sweep gets its table, plots and claim, marked ``incomplete``."""
    d = Path(run_dir)
    r = store.read_unfinished(d)
    if r.kind != rk.SWEEP.name or r.status != "running":
        raise ResultError(f"{d} is not an unfinished sweep (kind {r.kind}, status {r.status})", "nothing to recover")
    r.extra.writer = None         # the writer is gone; a finished run names none
    settings = r.settings.other("sweep") or {}
    axis, loads = settings.get("axis", "duty"), tuple(settings.get("loads") or ())
    sw = _Sweep.__new__(_Sweep)
    sw.o = SweepOptions(duty=loads if axis == "duty" else None, rate_hz=loads if axis == "rate" else None)
    sw.result, sw.entries, sw.run_dir, sw.points_dir = r, list(r.extra.points or []), d, d / POINTS_DIR
    sw.label = r.label
    sw.energy_basis = {k: v for k, v in r.power.to_dict().items() if k != "measured"}
    sw.vary = {name for name, key in (("model", "variants"), ("kernels", "kernels"), ("delegate", "delegates"),
                                      ("threads", "threads")) if len(settings.get(key) or ()) > (0 if key == "variants" else 1)}
    named = {e.run_dir for e in sw.entries if e.run_dir}
    left = [p for p in sorted(sw.points_dir.iterdir()) if p.is_dir() and str(p.relative_to(d)) not in named
            and (p / store.RUN_JSON).exists()] if sw.points_dir.is_dir() else []
    pending = [e for e in sw.entries if e.status == "not-run"]
    reason = "the sweep process stopped without finishing (crash or kill)"
    for pdir, entry in zip(left, pending):   # points run in order: the unnamed folder is the first not-run point
        try:
            point = store.read_result(pdir)
            point = recover_run(pdir) if point.status == "running" else point
        except EdgebenchError:
            continue
        sw._rename(pdir, entry)
        summarize_point(entry, point)
        entry.status, entry.status_reason = "incomplete", f"{reason}; recovered from its journal"
    sw._finish(stopped=reason)
    return r


__all__ = ["SweepOptions", "GridPoint", "grid", "run_sweep", "recover_sweep", "describe_point", "flat_point",
           "plot_note", "DEFAULT_DUTY", "MIN_WINDOW_INFERENCES", "TABLE", "TIMESERIES_PNG", "CURVES_PNG"]
