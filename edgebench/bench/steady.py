"""Figures of a soak run (level 4): burst vs sustained, thermal story, the claim.

Given the per-inference samples and the telemetry frame of a soak (device clock),
:func:`soak_figures` computes what :mod:`edgebench.bench.soak` stores:

* ``burst``: the first ``burst_s`` seconds after the load started (the figure a
  short benchmark would quote); ``sustained``: the trailing window in which steady
  state was established (or the last window when it was not);
* ``sustained_over_burst``: ratio of sustained to burst throughput, both achieved (completed
  inferences over the wall time of the window, never 1/median), with its interval
  (``sustained_over_burst_ci``: both windows are of one run, so only their within-window
  uncertainties), and the ratio of the medians;
* thermal: maximum and steady (median over the window) temperature, time to the
  first throttle, throttle events by cause, time at each frequency, the cost of
  telemetry sampling as a fraction of the run.

:func:`summarize_run` puts them into a ``RunResult`` (with warnings and the claim);
:func:`phases` labels the stored samples cold | burst | soak | sustained.
"""
from __future__ import annotations

from typing import Any, Dict, Literal, Optional, cast

import numpy as np

from edgebench.bench.throughput import cycle_times, throughput_interval
from edgebench.report.claim import claim
from edgebench.report.format import duration
from edgebench.results.conditions import ColdStart, Warmup
from edgebench.results.figures.latency import LatencyFigure, Stopping, Throughput
from edgebench.results.figures.thermal import SoakFigure, SoakThermal, SoakVerdict, SoakWindow
from edgebench.results.model import STAGES, RunResult, RunWarning
from edgebench.stats.dependence import mean_se_log
from edgebench.stats.latency import summarize
from edgebench.stats.variation import LogEstimate, log_ratio
from edgebench.telemetry import analysis

RunStatus = Literal["running", "complete", "incomplete", "failed"]   # RunResult.status

#: what a soak window's throughput is
WINDOW_THROUGHPUT = ("achieved: inferences completed / wall time of the window on the device clock (time between "
                     "inferences and between chunks included)")


def _window_stats(t_s: np.ndarray, e2e_s: np.ndarray, scenario: str, label: str) -> Optional[SoakWindow]:
    if e2e_s.size < 2:
        return None
    s = summarize(e2e_s)
    span = float(t_s[-1] + e2e_s[-1] - t_s[0]) if t_s.size else 0.0
    per_s = e2e_s.size / span if span > 0 else None
    got = mean_se_log(cycle_times(np.asarray(t_s) * 1e9, e2e_s)) if per_s else None
    return SoakWindow(t_from_s=float(t_s[0]), t_to_s=float(t_s[-1] + e2e_s[-1]), span_s=span, n=int(e2e_s.size),
                      median_s=s.median_s, ci_low_s=s.ci_low_s, ci_high_s=s.ci_high_s, p99_s=s.p99_s,
                      throughput_per_s=per_s, throughput_definition=WINDOW_THROUGHPUT,
                      throughput_se_log=got[1] if got else None, throughput_df=got[2] if got else None,
                      scenario=scenario, label=label)


def _log_rate(w: Optional[SoakWindow]) -> Optional[LogEstimate]:
    """A window's throughput on the log scale with its within-window error, or None without one."""
    if not w or w.throughput_per_s is None or w.throughput_se_log is None or w.throughput_df is None:
        return None
    return LogEstimate(float(np.log(w.throughput_per_s)), w.throughput_se_log ** 2, w.throughput_df)


def window_ratio(num: Optional[SoakWindow], den: Optional[SoakWindow], level: float = 0.95) -> Optional[list]:
    """Interval of ``num / den`` throughput of two windows of one run (their within-window errors)."""
    a, b = _log_rate(num), _log_rate(den)
    if a is None or b is None:
        return None
    return list(log_ratio(a, b, None).interval(level))   # one run: no between-invocation term


def soak_figures(samples, telemetry, capture, *, t0_ns: int, t_end_ns: int, burst_s: float, window_s: float,
                 verdict, scenario: str, label: str) -> SoakFigure:
    """``samples``: DataFrame with ``t_start_ns``, ``e2e_s`` (and the other stages), soak rows only;
    ``telemetry``: the telemetry frame (may be empty). Times relative to ``t0_ns`` (load start)."""
    t = (samples["t_start_ns"].to_numpy(np.int64) - t0_ns) / 1e9 if len(samples) else np.zeros(0)
    e2e = samples["e2e_s"].to_numpy(np.float64) if len(samples) else np.zeros(0)
    end_s = (t_end_ns - t0_ns) / 1e9
    b = t < burst_s
    w = t >= end_s - window_s
    burst = _window_stats(t[b], e2e[b], scenario, label)
    sustained = _window_stats(t[w], e2e[w], scenario, label)
    ratio = lat_ratio = ratio_ci = None
    if burst and sustained:
        if burst.throughput_per_s and sustained.throughput_per_s:
            ratio = sustained.throughput_per_s / burst.throughput_per_s
            ratio_ci = window_ratio(sustained, burst)
        if burst.median_s and sustained.median_s is not None:
            lat_ratio = sustained.median_s / burst.median_s
    busy = float(e2e.sum()) / (end_s - float(t[0])) if e2e.size and end_s > t[0] else None
    thermal = SoakThermal(telemetry=capture.mode, judged=bool(verdict.thermal_judged))
    tel = telemetry if telemetry is not None and len(telemetry) else None
    if tel is not None:
        soak_tel = tel[tel["t_ns"] >= t0_ns] if "t_ns" in tel else tel
        tt = (soak_tel["t_ns"].to_numpy(np.int64) - t0_ns) / 1e9
        temp = analysis.primary_temp(soak_tel)
        finite = np.isfinite(temp)
        in_window = finite & (tt >= end_s - window_s)
        thermal.temp_columns = analysis.temp_columns(soak_tel)
        thermal.start_temp_c = float(temp[finite][0]) if finite.any() else None
        thermal.max_temp_c = float(np.max(temp[finite])) if finite.any() else None
        thermal.max_temp_at_s = float(tt[finite][np.argmax(temp[finite])]) if finite.any() else None
        thermal.steady_temp_c = float(np.median(temp[in_window])) if in_window.any() else None
        what, freq = analysis.cpu_freq(soak_tel)
        for win, lo, hi in ((burst, 0.0, burst_s), (sustained, end_s - window_s, end_s)):
            if win is not None:  # the conditions of the window each figure comes from
                _window_conditions(win, tt, temp, freq if what else None, lo, hi)
        thermal.frequency_source = what
        thermal.time_at_frequency = analysis.time_at_frequency(soak_tel["t_ns"].to_numpy(np.int64), freq,
                                                               t_end_ns) if what else []
        ev = analysis.throttle_events(soak_tel, capture.description.get("static"), t0_ns, t_end_ns)
        thermal.time_to_first_throttle_s = ev["first_throttle_s"]
        thermal.throttle_events = ev["causes"]
        thermal.trips_reached = ev["trips"]
        thermal.throttle_occurred_unseen = ev["occurred_unseen"]
        cost = float(soak_tel["cost_ns"].sum()) / 1e9 if "cost_ns" in soak_tel else 0.0
        thermal.telemetry_samples = int(len(soak_tel))
        thermal.telemetry_cost_s = cost
        thermal.telemetry_cost_fraction = cost / end_s if end_s > 0 else None
    fig = SoakFigure(sustained_over_burst=ratio, sustained_over_burst_ci=ratio_ci, busy_fraction=busy,
                     latency_sustained_over_burst=lat_ratio, duration_s=end_s, steady=bool(verdict.steady),
                     steady_at_s=end_s if verdict.steady else None,
                     verdict=SoakVerdict.model_validate({k: v for k, v in verdict.to_dict().items() if v is not None}),
                     thermal=thermal)
    if burst is not None:
        fig.burst = burst
    if sustained is not None:
        fig.sustained = sustained
    return fig


def _window_conditions(fig: SoakWindow, t_s, temp_c, freq_hz, lo_s: float, hi_s: float) -> None:
    """Median temperature and CPU clock of the telemetry samples in [lo_s, hi_s] (None where none), into ``fig``."""
    inside = (t_s >= lo_s) & (t_s <= hi_s)

    def median(x) -> Optional[float]:
        if x is None:
            return None
        x = np.asarray(x, np.float64)[inside]
        x = x[np.isfinite(x)]
        return float(np.median(x)) if x.size else None

    fig.temp_c, fig.freq_hz = median(temp_c), median(freq_hz)
    fig.telemetry_samples = int(np.count_nonzero(inside))


def figure_window(fig: SoakFigure, steady: bool) -> Optional[Dict[str, Any]]:
    """What the claim quotes as the conditions of the headline figure: the sustained (or final) window."""
    sus = fig.sustained
    if not sus or sus.t_from_s is None or sus.t_to_s is None:
        return None
    name = "sustained window" if steady else "final window"
    return {"name": f"{name} ({sus.t_from_s:.0f}-{sus.t_to_s:.0f} s)", "t_from_s": sus.t_from_s,
            "t_to_s": sus.t_to_s, "temp_c": sus.temp_c, "freq_hz": sus.freq_hz}


def stage_summaries(window_frame, label: str) -> Dict[str, LatencyFigure]:
    out = {}
    if len(window_frame) >= 2:
        for stage in STAGES:
            col = f"{stage}_s"
            if col in window_frame:
                fig = summarize(window_frame[col].to_numpy(np.float64))
                fig.label = label
                out[stage] = fig
    return out


def _ms(seconds: Optional[float]) -> str:
    return duration(seconds) if seconds is not None else "?"


def soak_sentence(fig: SoakFigure, status: str) -> str:
    """The soak part of the claim: how long to steady state, at what temperature, burst vs sustained."""
    th, v = fig.thermal, fig.verdict
    parts = []
    total = fig.duration_s or 0.0
    minutes = total / 60.0
    when = f"{minutes:.1f} min" if minutes >= 1 else f"{total:.0f} s"
    window = v.latency.window_s or 0
    if fig.steady:
        temp, freq = th.steady_temp_c, fig.sustained.freq_hz
        at = f" at {temp:.0f} °C" if temp is not None else ""
        at += (" and" if at else " at") + f" {freq / 1e9:.2f} GHz" if freq else ""
        what = ("temperature and latency flat" if v.thermal_judged else
                "latency flat; thermal steady state not judged, no thermal source")
        parts.append(f"Sustained after {when}{at} (steady state over the last {window:.0f} s: {what}).")
    else:
        parts.append(f"Steady state NOT established after {when}"
                     + (" (stopped early)" if status != "complete" else "")
                     + f": the sustained figures are from the last {window:.0f} s.")
        if not v.thermal_judged:
            parts.append("Thermal steady state cannot be judged: no thermal source.")
    b, s = fig.burst, fig.sustained
    if b and s and b.scenario == "fixed-rate":
        parts.append(f"Median latency {_ms(s.median_s)} sustained vs {_ms(b.median_s)} over the first "
                     f"{b.span_s or 0:.1f} s ({fig.latency_sustained_over_burst or float('nan'):.2f}x).")
    elif fig.sustained_over_burst is not None:
        ci = fig.sustained_over_burst_ci
        ci_text = f" (95% CI {ci[0]:.2f}–{ci[1]:.2f})" if ci and None not in ci else ""
        parts.append(f"Burst {b.throughput_per_s or 0:,.0f}/s achieved over the first {b.span_s or 0:.1f} s; "
                     f"sustained {s.throughput_per_s or 0:,.0f}/s, {fig.sustained_over_burst:.2f}x burst{ci_text}.")
    if th.max_temp_c is not None:
        parts.append(f"Max {th.max_temp_c:.1f} °C.")
    first = th.time_to_first_throttle_s
    if first is not None:
        causes = [c for c, e in (th.throttle_events or {}).items() if e.events]
        parts.append(f"First throttled at {first:.0f} s ({', '.join(causes)}).")
    elif th.telemetry not in (None, "none"):
        parts.append("No throttling seen.")
    return " ".join(parts)


def phases(frame, t0_ns, t_end_ns, o):
    """Label rows: cold | burst (first burst_s) | soak | sustained (the final window)."""
    if t0_ns is None or len(frame) == 0:
        return frame
    t = frame["t_start_ns"].to_numpy(np.int64)
    phase = frame["phase"].to_numpy(object).copy()
    soak = phase != "cold"
    phase[soak & (t < t0_ns + int(o.burst_s * 1e9))] = "burst"
    phase[soak & (t >= t_end_ns - int(o.window_s * 1e9))] = "sustained"
    frame = frame.copy()
    frame["phase"] = phase
    return frame


def summarize_run(r: RunResult, samples, telemetry, capture, o, verdict, t0_ns, t_end_ns, cold,
                  cool, status: str, reason: Optional[str]) -> None:
    """Fill ``r`` with the soak's figures from its samples and telemetry (used on every exit path)."""
    soak_rows = samples[samples["phase"] != "cold"] if samples is not None and len(samples) else None
    if cold:
        r.cold_start = ColdStart(**cold, label=r.label, note="first inference after load, timed alone")
    r.warmup = Warmup(method="none: a soak reports its first seconds as the burst figure", burst_s=o.burst_s,
                      label=r.label)
    if soak_rows is not None and len(soak_rows) and verdict is not None and t0_ns is not None:
        fig = soak_figures(soak_rows, telemetry, capture, t0_ns=t0_ns, t_end_ns=t_end_ns, burst_s=o.burst_s,
                           window_s=o.window_s, verdict=verdict, scenario=o.scenario, label=r.label)
        window = soak_rows[soak_rows["t_start_ns"] >= t_end_ns - int(o.window_s * 1e9)]
        r.latency = stage_summaries(window, r.label)
        sus = fig.sustained
        r.throughput = Throughput()
        if sus.throughput_per_s:
            per_repeat = [{"per_s": sus.throughput_per_s, "se_log": sus.throughput_se_log, "df": sus.throughput_df,
                           "n": sus.n, "window_s": sus.span_s}]
            r.throughput = Throughput(per_s=sus.throughput_per_s, label=r.label, per_repeat=per_repeat,
                                      definition=f"{sus.throughput_definition}, over the final {o.window_s:g} s window",
                                      inverse_median_per_s=1.0 / sus.median_s if sus.median_s else None)
            for key, value in throughput_interval(per_repeat, o.ci_level, None, r, 1).items():
                setattr(r.throughput, key, value)
        r.stopping = Stopping(steady=fig.steady, reason=verdict.reason, n=int(len(soak_rows)),
                              elapsed_s=fig.duration_s, until=o.until, max_duration_s=o.max_duration_s)
        fig.cool_down = cool
        r.extra.soak = fig
        # extra.figure_window: declared in Extra by the report branch; until then an extra key (setattr keeps both)
        r.extra.figure_window = figure_window(fig, bool(fig.steady))
        th = fig.thermal
        for key in ("max_temp_c", "steady_temp_c", "start_temp_c", "time_to_first_throttle_s"):
            if key in th.model_fields_set:
                setattr(r.thermal, key, getattr(th, key))
        _soak_warnings(r, fig, o, verdict)
        if o.scenario == "fixed-rate":
            r.extra.requested_rate_hz, r.extra.achieved_rate_hz = o.rate_hz, sus.throughput_per_s
        if o.scenario == "fixed-rate" and sus.throughput_per_s and sus.throughput_per_s < 0.95 * o.rate_hz:
            r.warnings.append(RunWarning(code="rate-not-sustained",
                                         message=f"the board did not sustain {o.rate_hz:g}/s: achieved "
                                                 f"{sus.throughput_per_s:.1f}/s in the final window",
                                         remedy="lower --rate, use more threads or a faster delegate"))
        r.status, r.status_reason = cast(RunStatus, status), reason
        text = claim(r) if r.latency else None
        r.extra.claim = f"{text} {soak_sentence(fig, status)}" if text else None
    else:
        r.stopping = Stopping(steady=False, reason="stopped before any soak measurement", n=0)
        r.extra.soak = SoakFigure(cool_down=cool)
        r.extra.claim = None
    r.status, r.status_reason = cast(RunStatus, status), reason


def _soak_warnings(r: RunResult, fig: SoakFigure, o, verdict) -> None:
    if not fig.steady and o.until == "steady":
        r.warnings.append(RunWarning(code="steady-state-not-reached",
                                     message=f"no steady state within {fig.duration_s or 0:.0f} s: {verdict.reason}",
                                     remedy="raise --max-duration, or widen --window / the floors if the series "
                                            "oscillates (a throttling limit cycle longer than the window)"))
    busy = fig.busy_fraction
    if o.scenario == "single-stream" and busy is not None and busy < 0.97:
        r.warnings.append(RunWarning(code="load-gaps",
                                     message=f"the board was busy only {100 * busy:.1f}% of the soak: the rest went "
                                             "to host round trips between chunks and telemetry, during which it "
                                             "cooled",
                                     remedy="a faster link or host; a model this fast heats the board less than a "
                                            "real workload would"))
    cost = fig.thermal.telemetry_cost_fraction
    if cost is not None and cost > 0.01:
        r.warnings.append(RunWarning(code="telemetry-cost",
                                     message=f"telemetry sampling took {100 * cost:.1f}% of the run on the device",
                                     remedy="lower --telemetry-hz or drop slow sources (vcgencmd) from the profile"))
    if fig.thermal.telemetry == "between-chunks":
        r.warnings.append(RunWarning(code="telemetry-between-chunks",
                                     message="this board cannot sample telemetry during inference: temperatures "
                                             "were read once after each chunk, stamped with its last inference",
                                     remedy="on a Linux board, update the agent (protocol feature 'telemetry'); "
                                            "microcontroller firmware answers eb-temp between runs only"))
