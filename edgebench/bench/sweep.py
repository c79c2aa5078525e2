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
from typing import Callable, Optional

import numpy as np

from edgebench import ranges as R
from edgebench.bench.record import RunFolder, board_client, board_section, new_result
from edgebench.errors import EdgebenchError, ResultError, UsageError
from edgebench.modelfile import read_model
from edgebench.ranges import check_fields
from edgebench.report import plots
from edgebench.report.format import duration
from edgebench.results import kinds as rk
from edgebench.results import store
from edgebench.results.model import RunResult, refuse_mixed_labels
from edgebench.results.store import slug
from edgebench.stats import preload
from edgebench.stats.energy import si
from edgebench.telemetry import analysis

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
        from edgebench.bench.latency import KERNELS

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
    model: object               # edgebench ModelFile
    kernels: str
    delegate: Optional[str]
    threads: int

    def config(self) -> tuple:
        return (self.model.sha256, self.kernels, self.delegate, self.threads)


def grid(opts: SweepOptions, models: list) -> list:
    """Points, lightest load first: load × model × kernels × delegate × threads."""
    out = []
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
    models = []
    for path in (model_path, *opts.variants):
        m = read_model(path)
        same = next((x for x in models if x.sha256 == m.sha256), None)
        if same is not None:
            raise UsageError(f"variant {path} is the same model as {same.path}", "give each model once")
        models.append(m)
    emit = progress or (lambda event: None)
    with board_client(profile, url, client, emit, cpus=opts.cpus) as client:
        return _Sweep(client, models, profile, opts, runs_root, emit).run()


class _Sweep:
    def __init__(self, client, models, profile, opts, runs_root, emit):
        self.client, self.models, self.profile, self.o = client, models, profile, opts
        self.runs_root, self.emit = runs_root, emit
        self.points = grid(opts, models)
        self.vary = {name for name, n in (("model", len(models)), ("kernels", len(opts.kernels)),
                                          ("delegate", len(opts.delegates)), ("threads", len(opts.threads))) if n > 1}
        self.probes: dict = {}

    def run(self):
        from edgebench.bench.latency import figure_label
        from edgebench.bench.window_power import energy_basis

        preload()

        hello = self.client.hello()
        self.label = figure_label(hello)
        self.energy_basis = energy_basis(self.label, self.profile)
        o, first = self.o, self.models[0]
        self.entries = [self._planned(gp) for gp in self.points]
        r = self.result = new_result("sweep", self.label)
        r.model = {**first.to_dict(), "variants": [m.to_dict() for m in self.models[1:]]}
        r.board = board_section(self.profile, self.client.description)
        one = lambda xs: xs[0] if len(xs) == 1 else ",".join(str(x) for x in xs)  # noqa: E731
        r.runtime = {"kernels": one(o.kernels), "delegate": one([d or "none" for d in o.delegates]),
                     "threads": one(o.threads), "note": "per point: see extra.points and each point's run.json"}
        r.scenario = {"name": "sweep", "axis": o.axis, "values": sorted(set(o.loads)),
                      "load": "duty cycle: fixed rate duty / probe latency, 1.0 = continuous" if o.axis == "duty"
                      else "fixed-rate requests per second"}
        r.settings = {"sweep": o.to_dict(), "min_window_inferences": MIN_WINDOW_INFERENCES,
                      "order": "lightest load first; then model, kernels, delegate, threads"}
        r.power = {"measured": False, **self.energy_basis}
        r.extra = {"axis": o.axis, "points": self.entries, "table": TABLE, "plots": []}
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
        return any(e["status"] != "not-run" for e in self.entries)

    def _stopped(self, status: str, reason: str) -> None:
        try:
            self._finish(stopped=reason, status=status)
        except Exception:  # noqa: BLE001 - run.json already says incomplete; the stop is what to report
            pass

    # -- one point ---------------------------------------------------------------------
    def _planned(self, gp: GridPoint) -> dict:
        return {"index": gp.index, "id": f"p{gp.index:02d}", "name": describe_point(gp, self.o.axis, self.vary),
                "axis": self.o.axis, "duty": gp.load if self.o.axis == "duty" else None,
                "requested_rate_hz": gp.load if self.o.axis == "rate" else None,
                "model": {"name": gp.model.name, "path": gp.model.path, "sha256": gp.model.sha256,
                          "precision": gp.model.precision},
                "kernels": gp.kernels, "delegate": gp.delegate, "threads": gp.threads,
                "status": "not-run", "status_reason": None, "run_dir": None}

    def _point(self, gp: GridPoint) -> None:
        from edgebench.bench.soak import SoakOptions, run_soak

        entry, n = self.entries[gp.index - 1], len(self.points)
        self.emit({"event": "point-start", "index": gp.index, "of": n, "name": entry["name"]})
        before = set(self.points_dir.iterdir())

        def forward(ev: dict) -> None:
            self.emit({**ev, "point": gp.index, "of": n, "name": entry["name"]})

        try:
            rate, window, notes = self._load(gp, entry)
            so = SoakOptions(rate_hz=rate, kernels=gp.kernels, threads=gp.threads, delegate=gp.delegate,
                             inputs=self.o.inputs, seed=self.o.seed, cool_down=self.o.cool_down,
                             cool_timeout_s=self.o.cool_timeout_s, window_s=window, burst_s=self.o.burst_s,
                             max_duration_s=self.o.max_duration_per_point_s, telemetry_hz=self.o.telemetry_hz,
                             cpus=self.o.cpus)
            entry["notes"] = notes
            result, pdir = run_soak(gp.model.path, self.profile, so, runs_root=self.points_dir,
                                    progress=forward, client=self.client)
        except KeyboardInterrupt as exc:
            from edgebench.bench.record import stop_reason

            self._salvage(gp, entry, before, stop_reason(exc)[1])
            raise
        except EdgebenchError as exc:
            self.first_error = getattr(self, "first_error", None) or exc
            self._salvage(gp, entry, before, f"failed: {exc.one_line()}", failed=True)
            self.emit({"event": "point-failed", "index": gp.index, "of": n, "name": entry["name"],
                       "error": exc.one_line()})
            store.write_result(self.run_dir, self.result)
            return
        self._rename(pdir, entry)
        entry.update(self._summary(result))
        self.emit({"event": "point-done", "index": gp.index, "of": n, "name": entry["name"], "point": entry})
        store.write_result(self.run_dir, self.result)

    def _salvage(self, gp, entry, before, reason: str, failed: bool = False) -> None:
        """After an error or Ctrl-C inside a point: keep what its soak stored, marked incomplete."""
        new = sorted(set(self.points_dir.iterdir()) - before)
        entry["status_reason"] = reason
        entry["status"] = "failed" if failed else "incomplete"
        if failed:
            entry["error"] = reason[len("failed: "):]
        if new and (new[-1] / store.RUN_JSON).exists():
            try:
                result = store.read_result(new[-1])
            except EdgebenchError:
                return
            self._rename(new[-1], entry)
            entry.update(self._summary(result))
            entry["status"], entry["status_reason"] = "incomplete", reason

    def _rename(self, pdir: Path, entry: dict) -> Path:
        target = self.points_dir / f"{entry['id']}-{slug(entry['name'].replace(', ', '-').replace(' ', ''))}"
        if not target.exists():
            pdir = Path(pdir).rename(target)
        entry["run_dir"] = str(Path(pdir).relative_to(self.run_dir))
        return Path(pdir)

    def _probe(self, gp: GridPoint) -> float:
        from edgebench.bench.energy import probe_e2e
        from edgebench.bench.energy_analysis import EnergyOptions

        if gp.config() not in self.probes:
            eo = EnergyOptions(rate_hz=1.0, kernels=gp.kernels, threads=gp.threads, delegate=gp.delegate,
                               inputs=self.o.inputs, seed=self.o.seed)
            self.probes[gp.config()] = probe_e2e(self.client, gp.model.path, eo)
        return self.probes[gp.config()]

    def _load(self, gp: GridPoint, entry: dict) -> tuple:
        """(fixed rate or None for continuous, trailing window, notes) of a point."""
        notes = []
        if self.o.axis == "duty":
            e2e = self._probe(gp)
            rate = None if gp.load >= 1.0 else gp.load / e2e
            expected = rate or 1.0 / e2e
            entry["probe_e2e_s"] = e2e
            entry["requested_rate_hz"] = rate
            entry["load_from"] = ("duty 1: continuous (single-stream) load" if rate is None else
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
        entry["window_s"] = window
        return rate, window, notes

    # -- figures of a point ------------------------------------------------------------------
    def _summary(self, r: RunResult) -> dict:
        soak = r.extra.get("soak") or {}
        th = soak.get("thermal") or {}
        e2e = r.latency.get("e2e") or {}
        window = soak.get("sustained") or {}
        per_s, median = (r.throughput or {}).get("per_s"), e2e.get("median_s")
        requested, achieved = r.extra.get("requested_rate_hz"), r.extra.get("achieved_rate_hz")
        codes = [w.get("code") for w in r.warnings]
        fixed = r.scenario.get("name") == "fixed-rate"
        first = th.get("time_to_first_throttle_s")
        out = {
            "status": r.status, "status_reason": r.status_reason, "run_id": r.run_id, "label": r.label,
            "steady": bool(soak.get("steady")), "duration_s": soak.get("duration_s"),
            "verdict": (r.stopping or {}).get("reason") or (soak.get("verdict") or {}).get("reason"),
            "thermal_judged": bool((soak.get("verdict") or {}).get("thermal_judged")),
            "throughput_per_s": per_s, "throughput_definition": (r.throughput or {}).get("definition"),
            "latency": {k: e2e.get(k) for k in ("median_s", "ci_low_s", "ci_high_s", "p99_s", "n")} if e2e else None,
            "steady_temp_c": th.get("steady_temp_c"), "max_temp_c": th.get("max_temp_c"),
            "throttled": None if th.get("telemetry") in (None, "none") else first is not None,
            "time_to_first_throttle_s": first, "sustained_freq_hz": window.get("freq_hz"),
            "sustained_temp_c": window.get("temp_c"),
            "achieved_rate_hz": achieved if fixed else None,
            "rate_sustained": (not (fixed and "rate-not-sustained" in codes)) if fixed else None,
            "realized_duty": (min(1.0, per_s * median) if fixed and per_s and median else soak.get("busy_fraction")),
            "warnings": codes,
        }
        if fixed and requested:
            out["requested_rate_hz"] = requested
        if fixed and not out["rate_sustained"]:
            out["rate_message"] = (f"the board did not sustain {requested:.4g}/s: achieved "
                                   f"{(achieved or 0):.4g}/s in the final window")
        out["energy"] = (r.power or {}).get("window")
        return out

    # -- finishing ------------------------------------------------------------------------
    def _finish(self, stopped: Optional[str] = None, status: str = "incomplete") -> None:
        """Status, table, plots and claim of the sweep; ``stopped``: why it stopped early (a signal, Ctrl-C,
        an error outside a point, a kill found by recovery)."""
        r, entries = self.result, self.entries
        done = [e for e in entries if e["status"] in ("complete", "incomplete") and e.get("run_id")]
        failed = [e for e in entries if e.get("error")]
        r.warnings = self._warnings(done, failed)
        if stopped:
            r.status = status      # "failed" when an unexpected error stopped it
            r.status_reason = (f"{stopped}: {sum(e['status'] == 'complete' for e in entries)} "
                               f"of {len(entries)} points finished, kept")
        elif failed:
            r.status = "incomplete" if done else "failed"
            r.status_reason = f"{len(failed)} of {len(entries)} points failed: " + failed[0]["status_reason"]
        else:
            r.status, r.status_reason = "complete", None
        r.stopping = {"points": len(entries), "finished": sum(e["status"] == "complete" for e in entries),
                      "steady": sum(bool(e.get("steady")) for e in entries), "failed": len(failed),
                      "not_run": sum(e["status"] == "not-run" for e in entries)}
        store.write_result(self.run_dir, r)      # the status first: tables and plots come after
        self._table()
        r.extra["plots"] = self._plots(done)
        r.extra["claim"] = sweep_sentence(r)
        store.write_result(self.run_dir, r)
        if not done and failed and not stopped:
            exc = self.first_error
            exc.message = f"every point of the sweep failed; first: {exc.message} (sweep kept in {self.run_dir})"
            raise exc

    def _warnings(self, done, failed) -> list:
        out = []
        try:
            refuse_mixed_labels(*[{"label": e["label"]} for e in done])
        except ResultError:
            out.append({"code": "mixed-labels", "message": "MIXED LABELS: the points are "
                        + ", ".join(sorted({e['label'] for e in done})) + "; they must not be compared",
                        "remedy": "sweep one kind of board at a time"})
        unsteady = [e["id"] for e in done if not e.get("steady")]
        if unsteady:
            out.append({"code": "steady-state-not-reached", "message": f"no steady state at {', '.join(unsteady)}: "
                        "their sustained figures are from the last window", "remedy": "raise --max-duration-per-point"})
        for e in done:
            if e.get("rate_message"):
                out.append({"code": "rate-not-sustained", "message": f"{e['id']} ({e['name']}): {e['rate_message']}",
                            "remedy": "the sweep went on; lower the rate, add threads or a delegate"})
        for e in failed:
            out.append({"code": "point-failed", "message": f"{e['id']} ({e['name']}): {e['status_reason']}",
                        "remedy": "see the error; the other points are unaffected"})
        if self.label == "simulated" and self.vary:
            out.append({"code": "simulated-ignores-config",
                        "message": "the simulated board's latency and power do not depend on the model, kernels, "
                                   "delegate or threads: points differing only in " + ", ".join(sorted(self.vary))
                                   + " differ only by the board's thermal history and noise",
                        "remedy": "sweep a real board to compare configurations"})
        basis = self.energy_basis
        if not basis.get("label"):
            out.append({"code": "no-energy", "message": basis.get("note", "no energy figures"),
                        "remedy": "measure energy with `edgebench energy --meter ...`"})
        elif basis["label"] != "simulated":
            out.append({"code": "energy-estimated", "message": f"energy per inference is {basis['label']}, not "
                        f"measured, while latency and temperature are {self.label}",
                        "remedy": "measure it with `edgebench energy --meter ...` at the rates of interest"})
        return out

    def _table(self) -> None:
        import pandas as pd

        rows = [flat_point(e) for e in self.entries]
        store.write_parquet(self.run_dir / TABLE, pd.DataFrame(rows))

    def _plots(self, done) -> list:
        written = []
        try:
            panels = [p for p in (point_series(self.run_dir, e) for e in done) if p is not None]
            note = plot_note(self.label, self.energy_basis.get("label"))
            warn = next((w["message"] for w in self.result.warnings if w["code"] == "mixed-labels"), None)
            title = f"{self.result.model.get('name')} on {self.result.board.get('name')}"
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
            self.result.warnings.append({"code": "plots-failed", "message": f"plots not written: "
                                         f"{type(exc).__name__}: {exc}", "remedy": "the data are in the run folder"})
        return [Path(p).name for p in written]


# ---------------------------------------------------------------------------- recovery
def recover_sweep(run_dir) -> RunResult:
    """Finish a sweep left ``running`` by a kill or a crash: the points it finished are kept as they are,
    the point it was in is recovered from its soak's journal (:func:`edgebench.bench.soak.recover_run`),
    and the sweep gets its table, plots and claim, marked ``incomplete``."""
    from edgebench.bench.soak import recover_run

    d = Path(run_dir)
    r = store.read_unfinished(d)
    if r.kind != rk.SWEEP.name or r.status != "running":
        raise ResultError(f"{d} is not an unfinished sweep (kind {r.kind}, status {r.status})", "nothing to recover")
    r.extra.pop("writer", None)
    settings = (r.settings or {}).get("sweep") or {}
    axis, loads = settings.get("axis", "duty"), tuple(settings.get("loads") or ())
    sw = _Sweep.__new__(_Sweep)
    sw.o = SweepOptions(duty=loads if axis == "duty" else None, rate_hz=loads if axis == "rate" else None)
    sw.result, sw.entries, sw.run_dir, sw.points_dir = r, r.extra.get("points") or [], d, d / POINTS_DIR
    sw.label = r.label
    sw.energy_basis = {k: v for k, v in (r.power or {}).items() if k != "measured"}
    sw.vary = {name for name, key in (("model", "variants"), ("kernels", "kernels"), ("delegate", "delegates"),
                                      ("threads", "threads")) if len(settings.get(key) or ()) > (0 if key == "variants" else 1)}
    named = {e.get("run_dir") for e in sw.entries if e.get("run_dir")}
    left = [p for p in sorted(sw.points_dir.iterdir()) if p.is_dir() and str(p.relative_to(d)) not in named
            and (p / store.RUN_JSON).exists()] if sw.points_dir.is_dir() else []
    pending = [e for e in sw.entries if e["status"] == "not-run"]
    reason = "the sweep process stopped without finishing (crash or kill)"
    for pdir, entry in zip(left, pending):   # points run in order: the unnamed folder is the first not-run point
        try:
            point = store.read_result(pdir)
            point = recover_run(pdir) if point.status == "running" else point
        except EdgebenchError:
            continue
        sw._rename(pdir, entry)
        entry.update(sw._summary(point))
        entry["status"], entry["status_reason"] = "incomplete", f"{reason}; recovered from its journal"
    sw._finish(stopped=reason)
    return r


# ---------------------------------------------------------------------------- helpers
def flat_point(e: dict) -> dict:
    """One row of ``points.parquet``."""
    lat, en = e.get("latency") or {}, e.get("energy") or {}
    return {"index": e["index"], "id": e["id"], "name": e["name"], "status": e["status"], "label": e.get("label"),
            "duty": e.get("duty"), "requested_rate_hz": e.get("requested_rate_hz"),
            "achieved_rate_hz": e.get("achieved_rate_hz"), "model": e["model"]["name"],
            "precision": e["model"]["precision"], "kernels": e["kernels"], "delegate": e["delegate"] or "none",
            "threads": e["threads"], "steady": e.get("steady"), "duration_s": e.get("duration_s"),
            "window_s": e.get("window_s"), "throughput_per_s": e.get("throughput_per_s"),
            "median_s": lat.get("median_s"), "ci_low_s": lat.get("ci_low_s"), "ci_high_s": lat.get("ci_high_s"),
            "p99_s": lat.get("p99_s"), "n": lat.get("n"), "steady_temp_c": e.get("steady_temp_c"),
            "max_temp_c": e.get("max_temp_c"), "throttled": e.get("throttled"),
            "time_to_first_throttle_s": e.get("time_to_first_throttle_s"),
            "sustained_freq_hz": e.get("sustained_freq_hz"), "realized_duty": e.get("realized_duty"),
            "energy_per_inference_j": en.get("per_inference_j"), "avg_power_w": en.get("avg_power_w"),
            "energy_label": en.get("label"), "run_dir": e.get("run_dir"), "status_reason": e.get("status_reason")}


def plot_note(label: str, energy_label: Optional[str]) -> str:
    if energy_label in (None, label):
        return f"all figures {label}" + ("" if energy_label else "; no energy figures")
    return f"throughput, latency, temperature: {label}; energy: {energy_label} (labels differ by panel)"


def point_series(run_dir: Path, e: dict) -> Optional[dict]:
    """Temperature, clock and latency against time (s from load start) of one point, from its folder."""
    from edgebench.bench.soak import read_telemetry

    pdir = Path(run_dir) / e["run_dir"]
    samples = store.read_samples(pdir)
    rows = samples[samples["phase"] != "cold"] if len(samples) else samples
    if not len(rows):
        return None
    t0 = int(rows["t_start_ns"].min())
    tel = read_telemetry(pdir)
    tel = tel[tel["t_ns"] >= t0] if len(tel) and "t_ns" in tel else tel.iloc[0:0]
    sus = rows[rows["phase"] == "sustained"]
    t_tel = (tel["t_ns"].to_numpy(np.int64) - t0) / 1e9 if len(tel) else np.zeros(0)
    _, freq = analysis.cpu_freq(tel) if len(tel) else (None, np.zeros(0))
    end = (int(rows["t_start_ns"].max()) - t0) / 1e9 + float(rows["e2e_s"].iloc[-1])
    verdict = "steady" if e.get("steady") else "NOT steady"
    if e["status"] != "complete":
        verdict += f", {e['status']}"
    return {"title": f"{e['id']} {e['name']} ({verdict})",
            "t_temp_s": t_tel, "temp_c": analysis.primary_temp(tel) if len(tel) else np.zeros(0),
            "t_freq_s": t_tel, "freq_hz": np.asarray(freq, np.float64),
            "t_lat_s": (rows["t_start_ns"].to_numpy(np.int64) - t0) / 1e9, "latency_s": rows["e2e_s"].to_numpy(),
            "window": ((int(sus["t_start_ns"].min()) - t0) / 1e9, end) if len(sus) else None}


def curve_series(done: list, axis: str) -> list:
    """One series per configuration (model, kernels, delegate, threads): load -> throughput, energy."""
    groups: dict = {}
    for e in done:
        if e.get("throughput_per_s") is None:
            continue
        key = (e["model"]["name"], e["model"]["precision"], e["kernels"], e["delegate"], e["threads"])
        groups.setdefault(key, []).append(e)
    out = []
    for (name, prec, k, d, t), es in groups.items():
        es = sorted(es, key=lambda e: e["duty"] if axis == "duty" else e["requested_rate_hz"])
        out.append({"name": f"{name} ({prec}), {k}, {d or 'no delegate'}, {t} thr",
                    "x": [e["duty"] if axis == "duty" else e["requested_rate_hz"] for e in es],
                    "throughput_per_s": [e["throughput_per_s"] for e in es],
                    "energy_j": [(e.get("energy") or {}).get("per_inference_j") for e in es],
                    "steady": [bool(e.get("steady")) for e in es]})
    return out


def sweep_sentence(r: RunResult) -> Optional[str]:
    """One line: how many points, steady, the range of sustained throughput and steady temperature."""
    pts = [e for e in r.extra.get("points", []) if e.get("throughput_per_s") is not None]
    if not pts:
        return None
    tp = [e["throughput_per_s"] for e in pts]
    temps = [e["steady_temp_c"] for e in pts if e.get("steady_temp_c") is not None]
    hot = [e["id"] for e in pts if e.get("throttled")]
    text = (f"Sweep of {r.model.get('name')} on {r.board.get('name')} ({r.label}): {len(pts)} of "
            f"{len(r.extra['points'])} points measured, {sum(bool(e.get('steady')) for e in pts)} at steady state; "
            f"sustained {min(tp):,.3g}–{max(tp):,.3g}/s")
    if temps:
        text += f", steady {min(temps):.0f}–{max(temps):.0f} °C"
    text += f"; throttled at {', '.join(hot)}." if hot else "; no throttling seen."
    text += " Each point in its own window: " + "; ".join(_point_conditions(e) for e in pts) + "."
    if r.status != "complete":
        text += f" INCOMPLETE sweep: {r.status_reason}."
    return text


def _point_conditions(e: dict) -> str:
    """'p02 (duty 0.1) 41.2/s at 62 °C, 1.80 GHz': a point's figure with the conditions of its window."""
    cond = [f"{e['sustained_temp_c']:.0f} °C" if e.get("sustained_temp_c") is not None else None,
            f"{e['sustained_freq_hz'] / 1e9:.2f} GHz" if e.get("sustained_freq_hz") else None]
    cond = [c for c in cond if c]
    en = e.get("energy") or {}
    energy = f", {si(en['per_inference_j'], 'J')}/inference {en.get('label')}" if en.get("per_inference_j") else ""
    window = "sustained" if e.get("steady") else "final"
    return (f"{e['id']} ({e['name']}) {e['throughput_per_s']:,.3g}/s"
            + (f" at {', '.join(cond)}" if cond else "") + f" ({window} window){energy}")


__all__ = ["SweepOptions", "GridPoint", "grid", "run_sweep", "recover_sweep", "describe_point", "flat_point", "DEFAULT_DUTY",
           "MIN_WINDOW_INFERENCES", "TABLE", "TIMESERIES_PNG", "CURVES_PNG"]
