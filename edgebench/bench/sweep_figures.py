"""A sweep's figures (level 4): each point's from its soak run, the sweep's warnings, the table row,
the plots' series and the claim. The run itself (grid, points, stops, recovery) is :mod:`edgebench.bench.sweep`.
"""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Set

import numpy as np

from edgebench.bench.soak import read_telemetry
from edgebench.results import store
from edgebench.results.figures.energy import WindowEnergy
from edgebench.results.figures.points import Point, PointLatency
from edgebench.results.model import RunResult, RunWarning
from edgebench.stats.energy import si
from edgebench.telemetry import analysis


def summarize_point(entry: Point, r: RunResult) -> None:
    """Fill a sweep's ``entry`` with the figures of its point's soak run ``r``."""
    soak = r.extra.soak
    th, window, e2e = soak.thermal, soak.sustained, r.stage("e2e")
    per_s, median = r.throughput.per_s, e2e.median_s
    requested, achieved = r.extra.requested_rate_hz, r.extra.achieved_rate_hz
    codes = [w.code or "" for w in r.warnings]
    fixed = r.scenario.name == "fixed-rate"
    first = th.time_to_first_throttle_s
    entry.status, entry.status_reason, entry.run_id, entry.label = r.status, r.status_reason, r.run_id, r.label
    entry.steady, entry.duration_s = bool(soak.steady), soak.duration_s
    entry.verdict = r.stopping.reason or soak.verdict.reason
    entry.thermal_judged = bool(soak.verdict.thermal_judged)
    entry.throughput_per_s, entry.throughput_definition = per_s, r.throughput.definition
    if e2e:
        entry.latency = PointLatency(median_s=e2e.median_s, ci_low_s=e2e.ci_low_s, ci_high_s=e2e.ci_high_s,
                                     p99_s=e2e.p99_s, n=e2e.n)
    entry.steady_temp_c, entry.max_temp_c = th.steady_temp_c, th.max_temp_c
    entry.throttled = None if th.telemetry in (None, "none") else first is not None
    entry.time_to_first_throttle_s = first
    entry.sustained_freq_hz, entry.sustained_temp_c = window.freq_hz, window.temp_c
    entry.achieved_rate_hz = achieved if fixed else None
    entry.rate_sustained = (not (fixed and "rate-not-sustained" in codes)) if fixed else None
    entry.realized_duty = min(1.0, per_s * median) if fixed and per_s and median else soak.busy_fraction
    entry.warnings = codes
    if fixed and requested:
        entry.requested_rate_hz = requested
    if fixed and not entry.rate_sustained:
        entry.rate_message = (f"the board did not sustain {requested or 0:.4g}/s: achieved "
                              f"{(achieved or 0):.4g}/s in the final window")
    if r.power.window:
        entry.energy = WindowEnergy.model_validate(r.power.window.to_dict())


def sweep_warnings(done: List[Point], failed: List[Point], label: str, vary: Set[str],
                   basis: dict) -> List[RunWarning]:
    """The sweep's warnings: mixed labels, points not steady, rates not sustained, failures, what energy is."""
    out = []
    labels = sorted({str(e.label) for e in done})
    if len(labels) > 1:       # a simulated figure must never be compared with a measured one
        out.append(RunWarning(code="mixed-labels", message="MIXED LABELS: the points are " + ", ".join(labels)
                              + "; they must not be compared", remedy="sweep one kind of board at a time"))
    unsteady = [e.id or "" for e in done if not e.steady]
    if unsteady:
        out.append(RunWarning(code="steady-state-not-reached", message=f"no steady state at {', '.join(unsteady)}: "
                              "their sustained figures are from the last window",
                              remedy="raise --max-duration-per-point"))
    for e in done:
        if e.rate_message:
            out.append(RunWarning(code="rate-not-sustained", message=f"{e.id} ({e.name}): {e.rate_message}",
                                  remedy="the sweep went on; lower the rate, add threads or a delegate"))
    for e in failed:
        out.append(RunWarning(code="point-failed", message=f"{e.id} ({e.name}): {e.status_reason}",
                              remedy="see the error; the other points are unaffected"))
    if label == "simulated" and vary:
        out.append(RunWarning(code="simulated-ignores-config",
                              message="the simulated board's latency and power do not depend on the model, kernels, "
                                      "delegate or threads: points differing only in " + ", ".join(sorted(vary))
                                      + " differ only by the board's thermal history and noise",
                              remedy="sweep a real board to compare configurations"))
    if not basis.get("label"):
        out.append(RunWarning(code="no-energy", message=basis.get("note", "no energy figures"),
                              remedy="measure energy with `edgebench energy --meter ...`"))
    elif basis["label"] != "simulated":
        out.append(RunWarning(code="energy-estimated", message=f"energy per inference is {basis['label']}, not "
                              f"measured, while latency and temperature are {label}",
                              remedy="measure it with `edgebench energy --meter ...` at the rates of interest"))
    return out


def flat_point(e: Point) -> dict:
    """One row of ``points.parquet``."""
    lat, en = e.latency, e.energy
    return {"index": e.index, "id": e.id, "name": e.name, "status": e.status, "label": e.label,
            "duty": e.duty, "requested_rate_hz": e.requested_rate_hz,
            "achieved_rate_hz": e.achieved_rate_hz, "model": e.model.name,
            "precision": e.model.precision, "kernels": e.kernels, "delegate": e.delegate or "none",
            "threads": e.threads, "steady": e.steady, "duration_s": e.duration_s,
            "window_s": e.window_s, "throughput_per_s": e.throughput_per_s,
            "median_s": lat.median_s, "ci_low_s": lat.ci_low_s, "ci_high_s": lat.ci_high_s,
            "p99_s": lat.p99_s, "n": lat.n, "steady_temp_c": e.steady_temp_c,
            "max_temp_c": e.max_temp_c, "throttled": e.throttled,
            "time_to_first_throttle_s": e.time_to_first_throttle_s,
            "sustained_freq_hz": e.sustained_freq_hz, "realized_duty": e.realized_duty,
            "energy_per_inference_j": en.per_inference_j, "avg_power_w": en.avg_power_w,
            "energy_label": en.label, "run_dir": e.run_dir, "status_reason": e.status_reason}


def plot_note(label: str, energy_label: Optional[str]) -> str:
    if energy_label in (None, label):
        return f"all figures {label}" + ("" if energy_label else "; no energy figures")
    return f"throughput, latency, temperature: {label}; energy: {energy_label} (labels differ by panel)"


def point_series(run_dir: Path, e: Point) -> Optional[dict]:
    """Temperature, clock and latency against time (s from load start) of one point, from its folder."""
    pdir = Path(run_dir) / (e.run_dir or "")
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
    verdict = "steady" if e.steady else "NOT steady"
    if e.status != "complete":
        verdict += f", {e.status}"
    return {"title": f"{e.id} {e.name} ({verdict})",
            "t_temp_s": t_tel, "temp_c": analysis.primary_temp(tel) if len(tel) else np.zeros(0),
            "t_freq_s": t_tel, "freq_hz": np.asarray(freq, np.float64),
            "t_lat_s": (rows["t_start_ns"].to_numpy(np.int64) - t0) / 1e9, "latency_s": rows["e2e_s"].to_numpy(),
            "window": ((int(sus["t_start_ns"].min()) - t0) / 1e9, end) if len(sus) else None}


def curve_series(done: List[Point], axis: str) -> list:
    """One series per configuration (model, kernels, delegate, threads): load -> throughput, energy."""
    groups: dict = {}
    for e in done:
        if e.throughput_per_s is None:
            continue
        key = (e.model.name, e.model.precision, e.kernels, e.delegate, e.threads)
        groups.setdefault(key, []).append(e)

    def x(e: Point) -> float:
        value = e.duty if axis == "duty" else e.requested_rate_hz
        return float("nan") if value is None else value
    out = []
    for (name, prec, k, d, t), es in groups.items():
        es = sorted(es, key=x)
        out.append({"name": f"{name} ({prec}), {k}, {d or 'no delegate'}, {t} thr",
                    "x": [x(e) for e in es],
                    "throughput_per_s": [e.throughput_per_s for e in es],
                    "energy_j": [e.energy.per_inference_j for e in es],
                    "steady": [bool(e.steady) for e in es]})
    return out


def sweep_sentence(r: RunResult) -> Optional[str]:
    """One line: how many points, steady, the range of sustained throughput and steady temperature."""
    every = r.extra.points or []
    pts = [e for e in every if e.throughput_per_s is not None]
    if not pts:
        return None
    tp = [e.throughput_per_s for e in pts if e.throughput_per_s is not None]
    temps = [e.steady_temp_c for e in pts if e.steady_temp_c is not None]
    hot = [e.id or "" for e in pts if e.throttled]
    text = (f"Sweep of {r.model.name} on {r.board.name} ({r.label}): {len(pts)} of "
            f"{len(every)} points measured, {sum(bool(e.steady) for e in pts)} at steady state; "
            f"sustained {min(tp):,.3g}–{max(tp):,.3g}/s")
    if temps:
        text += f", steady {min(temps):.0f}–{max(temps):.0f} °C"
    text += f"; throttled at {', '.join(hot)}." if hot else "; no throttling seen."
    text += " Each point in its own window: " + "; ".join(_point_conditions(e) for e in pts) + "."
    if r.status != "complete":
        text += f" INCOMPLETE sweep: {r.status_reason}."
    return text


def _point_conditions(e: Point) -> str:
    """'p02 (duty 0.1) 41.2/s at 62 °C, 1.80 GHz': a point's figure with the conditions of its window."""
    cond = [f"{e.sustained_temp_c:.0f} °C" if e.sustained_temp_c is not None else None,
            f"{e.sustained_freq_hz / 1e9:.2f} GHz" if e.sustained_freq_hz else None]
    conditions = [c for c in cond if c]
    en = e.energy
    energy = f", {si(en.per_inference_j, 'J')}/inference {en.label}" if en.per_inference_j else ""
    window = "sustained" if e.steady else "final"
    return (f"{e.id} ({e.name}) {e.throughput_per_s or 0:,.3g}/s"
            + (f" at {', '.join(conditions)}" if conditions else "") + f" ({window} window){energy}")


__all__ = ["summarize_point", "sweep_warnings", "flat_point", "plot_note", "point_series", "curve_series",
           "sweep_sentence"]
