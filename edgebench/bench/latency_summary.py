"""Summaries of a bench run's repeats (level 4): samples frame, figures, warnings, claim, storage.

:func:`summarise` runs after every repeat (so a killed run keeps every finished repeat)
and once more at the end. Figures:

- ``latency.<stage>``: pooled median and percentiles of the samples after each repeat's
  warm-up, the interval from :func:`edgebench.stats.latency.summarize_runs` (Student t
  on the log medians of K runs, each run's own interval dependence-aware), per-run
  medians, lag-1 autocorrelation, effective sample size, clock resolution;
- ``throughput.per_s``: what was achieved — completed inferences over the wall time of
  the measuring windows on the device clock (gaps between chunks included); the inverse
  of the median is kept apart as ``inverse_median_per_s`` and never called throughput;
- fixed-rate: achieved rate and lateness;
- sessions (final summary only): the invocation's own figures move to
  ``latency.<stage>.invocation`` and the headline interval combines this invocation with
  earlier ones of the same measurement, with the between-invocation component pooled over the
  runs folder (:mod:`edgebench.bench.sessions`, :func:`edgebench.stats.variation.combine_sessions`);
  ``rerun_low_s``/``rerun_high_s`` is where one more invocation's median should fall. The stop rule
  and the precision target apply to the invocation's own interval (more samples now cannot shrink
  the spread between sessions);
- warnings with remedies: instability, a coarse clock, one run only, one session only, few
  effective samples, an unsettled warm-up, a target not reached.
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional

import numpy as np

from edgebench.bench import sessions as sess
from edgebench.bench.record import Status
from edgebench.bench.throughput import rate_figures, throughput_interval
from edgebench.report import format as fmt
from edgebench.report.claim import claim
from edgebench.results.conditions import ColdStart, Warmup
from edgebench.results.figures.latency import CombinedFigure, LatencyFigure, RepeatFigure, Stopping, Throughput
from edgebench.results.model import STAGES, RunResult, RunWarning
from edgebench.stats.dependence import COARSE_TICKS, coarse_clock, level_shifts, observed_tick
from edgebench.stats.latency import summarize_runs
from edgebench.stats.stability import instability_warnings
from edgebench.stats.variation import DIFFERS_LEVEL, LogEstimate, combine_sessions, invocation, t_quantile
from edgebench.stats.warmup import warmup_for

#: fewer effective samples than this in a run: its interval rests on a guess of the dependence
MIN_N_EFF = 30


def summarise(result: RunResult, frame, opts, repeat_info: list, reported_resolution_s: float,
              final: bool, status: Status = "running", reason: str | None = None, history: list | None = None):
    """Fill ``result``'s figures from the samples ``frame`` (all repeats); return the frame with
    each sample's phase (cold, warmup, measure) set, ready to be stored beside the result.

    ``repeat_info``: per repeat ``{repeat, load_s, first_inference_s, first_invoke_s,
    decision: {reason, target_reached} | None}``. Phases (warm-up / measure) are decided
    here, per repeat, from the samples themselves. ``history``: the runs on record on this board
    and host (:func:`edgebench.bench.sessions.read_history`), from which the variation between
    repeats and between invocations is pooled; the final summary combines the earlier sessions of
    the same measurement among them. None: the stated priors only, no sessions combined.
    """
    kept_parts, warm_parts = [], []
    for k in sorted(frame["repeat"].unique()):
        sel = (frame["repeat"] == k) & (frame["phase"] != "cold")
        idx = frame.index[sel]
        warm = warmup_for(frame.loc[idx, "e2e_s"].to_numpy(), opts.min_warmup, result.label)
        frame.loc[idx[: warm.n_warmup], "phase"] = "warmup"
        frame.loc[idx[warm.n_warmup:], "phase"] = "measure"
        warm_parts.append((int(k), warm))
        kept_parts.append(frame.loc[idx[warm.n_warmup:]])
    kept_parts = [p for p in kept_parts if len(p) >= 2]
    result.warmup = _warmup_record(warm_parts, result.label)
    result.warnings = []
    latency: Dict[str, LatencyFigure] = {}
    res = reported_resolution_s
    if kept_parts:
        res = observed_tick(np.concatenate([p["e2e_s"].to_numpy() for p in kept_parts]), res)
        result.timing.clock_resolution_s = res or None
        result.timing.clock_resolution_reported_s = reported_resolution_s or None
        # between repeats only the headline stage (the stop rule's); every stage at the end
        key = sess.measurement_key(result)
        for stage in STAGES if final else ("e2e",):
            runs = [p[f"{stage}_s"].to_numpy() for p in kept_parts]
            comps: list = []

            def pooled(figs, stage=stage, comps=comps):   # the runs folder's components, with these runs
                comps.append(sess.variation(history or [], stage, key, figs, result.label))
                return comps[-1].repeat

            fig = summarize_runs(runs, resolution_s=res, repeat=pooled)
            fig.label = result.label
            latency[stage] = fig
            comp = comps[0] if comps else sess.variation(history or [], stage, label=result.label)
            if final and stage == "e2e":
                fig.regimes = [level_shifts(r) for r in runs]
            if final:
                _combine_sessions(latency[stage], sess.earlier_sessions(result, history or [], opts.sessions),
                                  comp, stage)
        if final:
            result.warnings += _shifted_warning(result, history or [], latency.get("e2e") or LatencyFigure())
        result.warnings += [RunWarning.model_validate(w.to_dict()) for w in instability_warnings(
            np.concatenate([p["e2e_s"].to_numpy() for p in kept_parts]),
            runs=[p["e2e_s"].to_numpy() for p in kept_parts])]
    result.latency = latency
    result.warnings += _warnings(result, warm_parts, latency, final)
    result.cold_start = _cold_record(repeat_info, result.label)
    batch = int(result.scenario.batch or 1)
    result.throughput = _throughput(kept_parts, batch, latency, result, history,
                                    opts.sessions if final else 1)
    if opts.scenario == "fixed-rate" and kept_parts:
        _fixed_rate(result, kept_parts, opts)
    repeats = len(repeat_info)
    e2e = latency.get("e2e") or LatencyFigure()
    rel = (e2e.invocation or e2e).rel_ci_halfwidth
    reached = rel is not None and rel <= opts.target_rel_ci
    result.stopping = Stopping(
        target_reached=bool(reached),
        target_rel_ci=opts.target_rel_ci,
        rel_ci_halfwidth=rel,
        reason=_stop_reason(rel, opts, repeats),
        repeats=repeats,
        per_repeat=[{"repeat": i["repeat"], **(i.get("decision") or {"reason": None, "target_reached": False})}
                    for i in repeat_info],
        n=int(sum(len(p) for p in kept_parts)),
        elapsed_s=float(sum(p["e2e_s"].sum() for p in kept_parts)),
    )
    if final and not reached and latency:
        result.warnings.append(RunWarning(code="target-not-reached", message=result.stopping.reason,
                                          remedy="raise --max-time or --max-repeats, or accept a wider --target-ci"))
    result.status, result.status_reason = status, reason
    result.extra.claim = claim(result) if latency else None
    return frame


def _combine_sessions(fig: LatencyFigure, earlier: list, comp, stage: str) -> None:
    """The headline interval of ``fig`` for the long-run figure over this invocation and the
    ``earlier`` sessions (records of :mod:`edgebench.bench.sessions`), with the between-invocation
    component ``comp.session``; the invocation's own figures kept under ``invocation``."""
    own = RepeatFigure(median_s=fig.median_s, ci_low_s=fig.ci_low_s, ci_high_s=fig.ci_high_s,
                       rel_ci_halfwidth=fig.rel_ci_halfwidth, ci_method=fig.ci_method, runs=fig.runs,
                       se_log=fig.se_log, df=fig.df)
    fig.invocation = own
    earlier = [rec for rec in earlier if stage in rec.figures]
    fig.sessions = 1 + len(earlier)
    fig.session_runs = [rec.run_id for rec in earlier]
    fig.session_variation = comp.session.to_dict()
    fig.between_session_cv = fig.rerun_low_s = fig.rerun_high_s = fig.session_differs_p = None
    if own.se_log is None or not own.median_s:
        fig.sessions, fig.session_runs = 1, []
        return                               # no interval of its own: nothing to combine
    per_run = fig.per_run or []
    centre = sum(math.log(r.median_s or 0.0) for r in per_run) / len(per_run)
    this = LogEstimate(centre, own.se_log ** 2, own.df or 1.0)
    prior = [invocation(rec.figures[stage], comp.repeat)[0] for rec in earlier]
    res = combine_sessions(this, prior, comp.session)
    level = fig.ci_level or 0.95
    low, high = res.estimate.interval(level)
    r_low, r_high = res.prediction.interval(level)
    tick = fig.clock_resolution_s or 0.0
    med = own.median_s
    own_low = own.ci_low_s if own.ci_low_s is not None else low
    own_high = own.ci_high_s if own.ci_high_s is not None else high
    low, high = min(low, own_low, med - tick), max(high, own_high, med + tick)
    # one coherent set: when the interval had to widen (to hold this invocation's own interval, or the
    # clock's tick), it is made symmetric on the log scale about the combined centre and the se_log
    # stored is the one that reproduces it with the stored df (exp(centre +- t(df) se_log)), so a
    # reader recomputing the interval from se_log and df gets the stored one, never a narrower one
    q = t_quantile(level, res.estimate.df)
    half = max(q * res.estimate.se, res.estimate.centre - math.log(max(low, 1e-300)),
               math.log(high) - res.estimate.centre)
    low, high = math.exp(res.estimate.centre - half), math.exp(res.estimate.centre + half)
    se_log = half / q if q > 0 else res.estimate.se
    widened = (f"; widened to hold this invocation's own interval (se_log {res.estimate.se:.3g} -> {se_log:.3g})"
               if se_log > res.estimate.se * (1 + 1e-9) else "")
    fig.ci_low_s, fig.ci_high_s = max(0.0, low), high
    fig.rerun_low_s, fig.rerun_high_s = max(0.0, min(r_low, med - tick)), max(r_high, med + tick)
    fig.between_session_cv, fig.session_differs_p = res.between_session_cv, res.differs_p
    fig.rel_ci_halfwidth = (high - low) / 2.0 / med
    medians: List[Optional[float]] = [math.exp(centre), *(math.exp(e.centre) for e in prior)]
    fig.session_medians_s = medians
    fig.ci_method = (f"{res.estimate.method}, df {res.estimate.df:.0f}; {comp.session.describe()}; "
                     f"within this invocation: {own.ci_method}{widened}")
    # the combined se and df with the interval they reproduce (this invocation's own under "invocation")
    fig.se_log, fig.df = se_log, res.estimate.df
    fig.combined = CombinedFigure(median_s=math.exp(res.estimate.centre), ci_low_s=fig.ci_low_s,
                                  ci_high_s=fig.ci_high_s, se_log=se_log, df=res.estimate.df,
                                  sessions=fig.sessions, ci_method=fig.ci_method)


def _shifted_warning(result: RunResult, history: list, e2e: LatencyFigure) -> List[RunWarning]:
    """The earlier sessions of this measurement at a shifted level
    (:func:`edgebench.bench.sessions.shifted_sessions`), named: they are left out of the headline and of
    the pooled variation (``ci_method`` says so too)."""
    key = sess.measurement_key(result)
    shifted = sess.shifted_sessions(history, "e2e", result.label)
    named = [(rec.run_id, shifted[rec.run_id]) for rec in history if rec.measurement == key and rec.run_id in shifted]
    if not named:
        return []
    ids = ", ".join(f"{rid} ({fmt.p_value(p)})" for rid, p in named)
    if e2e.ci_method:
        e2e.ci_method += f"; left out at a shifted level: {', '.join(rid for rid, _ in named)}"
    return [RunWarning(
        code="session-differs",
        message=f"{len(named)} earlier session{'s' if len(named) != 1 else ''} of this measurement "
                        f"lie{'s' if len(named) == 1 else ''} at a shifted level against the others on record: "
                f"{ids}; left out of this headline and of the pooled variation between invocations",
        remedy="check what ran on the machine then (hidden load, thermal state, software); delete those "
               "runs if the machine was not itself")]


def _warmup_record(parts, label) -> Warmup:
    if not parts:
        return Warmup(n_warmup=0, label=label, per_repeat=[])
    first = parts[0][1].to_dict()
    return Warmup.model_validate({**first, "n_warmup": int(sum(w.n_warmup for _, w in parts)),
                                  "duration_s": float(sum(w.duration_s for _, w in parts)),
                                  "per_repeat": [{"repeat": k, **w.to_dict()} for k, w in parts], "label": label})


def _cold_record(infos, label) -> ColdStart:
    if not infos:
        return ColdStart()
    first = infos[0]
    return ColdStart(load_s=first["load_s"], first_inference_s=first["first_inference_s"],
                     first_invoke_s=first["first_invoke_s"], label=label,
                     per_repeat=[{k: i[k] for k in ("repeat", "load_s", "first_inference_s", "first_invoke_s")}
                                 for i in infos],
                     note="model load = interpreter construction + allocate_tensors; first inference timed alone; "
                          "one cold start per repeat (a fresh process each)")


def _warnings(result: RunResult, warm_parts, latency: Dict[str, LatencyFigure], final: bool) -> List[RunWarning]:
    out = []
    e2e = latency.get("e2e") or LatencyFigure()
    for k, warm in warm_parts:
        if warm.at_limit:
            out.append(RunWarning(
                code="warmup-unsettled",
                message=f"repeat {k + 1}: the detected warm-up ({warm.n_warmup:,} inferences) reaches "
                        "the search limit (half the samples): latency may not have settled",
                remedy="raise --min-time, or run `edgebench soak` first"))
    res = result.timing.clock_resolution_s or 0.0
    if e2e.median_s is not None and coarse_clock(e2e.median_s, res):
        out.append(RunWarning(
            code="coarse-clock",
            message=f"the median ({fmt.duration(e2e.median_s)}) is within {COARSE_TICKS} ticks of "
                    f"the device clock ({fmt.duration(res)} a tick): the interval is widened to the "
                    "clock's resolution and the figure is no finer than it",
            remedy="time many inferences per reading, or use a finer counter (a cycle counter)"))
    if final and e2e and (e2e.runs if e2e.runs is not None else 1) < 2:
        rv = e2e.repeat_variation or {}
        out.append(RunWarning(
            code="single-run",
            message="one run only: the variation between runs is not measured in this invocation; "
                    "the interval carries it from the "
                    f"{'runs folder' if rv.get('source') == 'pooled' else 'stated prior'} "
                    f"({rv.get('description', 'between-repeat prior')})",
            remedy="use --repeat 3 or more"))
    if e2e.repeats_disagree_p is not None:
        out.append(RunWarning(
            code="repeats-disagree",
            message=f"this invocation's runs disagree more than the variation between repeats on record "
                    f"allows ({fmt.p_value(e2e.repeats_disagree_p)}; run medians "
                    f"{', '.join(fmt.duration(r.median_s) for r in e2e.per_run or [])}): the "
                    "interval rests on their own spread (Student t, few degrees of freedom)",
            remedy="look for background load or throttling; more repeats (--repeat) narrow it"))
    sv = e2e.session_variation or {}
    if final and e2e.sessions == 1:
        source = ("pooled from other measurements on this board and host" if sv.get("source") == "pooled"
                  else "the stated prior (nothing on record on this board and host)")
        out.append(RunWarning(
            code="single-session",
            message="first session of this measurement: the variation between invocations in its "
                    f"interval is {source}, not measured for this model (docs/statistics.md, sessions)",
            remedy="run the same command again: earlier complete runs of the same model and "
                   "conditions in the runs folder are combined into the interval automatically"))
    differs = e2e.session_differs_p
    if final and differs is not None and differs < 1.0 - DIFFERS_LEVEL:
        meds = [m for m in e2e.session_medians_s or [] if m is not None]
        out.append(RunWarning(
            code="session-differs",
            message=f"this session differs from the earlier ones: median {fmt.duration(e2e.median_s)} "
                    f"lies outside the {100 * DIFFERS_LEVEL:.0f}% prediction interval of the "
                    f"{len(meds) - 1} earlier session(s) ({fmt.p_value(differs)}; their medians "
                    f"{fmt.duration(min(meds[1:]))}–{fmt.duration(max(meds[1:]))}); it is combined "
                    "with them, and the interval widens",
            remedy="check what changed (load, thermal state, software); if the machine changed, "
                   "start a new runs folder (--runs-dir)"))
    for k, part in enumerate(e2e.regimes or []):
        if part:
            out.append(RunWarning(
                code="regimes",
                message=f"run {k + 1} shows level shifts: medians of its {part['segments']} segments "
                        f"range {fmt.duration(min(part['segment_medians_s']))}–"
                        f"{fmt.duration(max(part['segment_medians_s']))} "
                        f"({100 * part['spread_rel']:.1f}%, {fmt.p_value(part['p_value'])} against "
                        "short-range dependence): the figure depends on which regimes the run saw",
                remedy="more repeats (--repeat) or longer runs (--min-time); pin the CPU and governor"))
            break
    for run in e2e.per_run or []:
        if run.n_eff is not None and run.n_eff < MIN_N_EFF:
            out.append(RunWarning(
                code="few-effective-samples",
                message=f"a run carried the information of only {run.n_eff:.0f} independent samples "
                        f"({run.n or 0:,} measured, strongly autocorrelated): its interval is approximate",
                remedy="raise --min-time or --min-samples"))
            break
    return out


def _stop_reason(rel, opts, repeats) -> str:
    if rel is None:
        return f"{repeats} repeat(s): too few samples for an interval of the median"
    text = (f"{repeats} repeat(s), this invocation's 95% CI half-width {fmt.percent(rel, 2)} of the median "
            f"(target {fmt.percent(opts.target_rel_ci, 1)})")
    if rel > opts.target_rel_ci and repeats >= opts.max_repeats:
        text += f"; --max-repeats {opts.max_repeats} reached"
    elif rel > opts.target_rel_ci:
        text += f"; time budget --max-time {opts.max_time_s:g} s spent"
    return text


def frame_of(chunks):
    """One samples frame from the chunks the client returned (each with ``phase`` and ``repeat``)."""
    import pandas as pd

    cols = {"phase": np.concatenate([np.asarray(c["phase"], dtype=object) for c in chunks]),
            "repeat": np.concatenate([np.asarray(c["repeat"]) for c in chunks]).astype(np.int64)}
    cols["t_start_ns"] = np.concatenate([c["t_start_ns"] for c in chunks]).astype(np.int64)
    for stage in STAGES:
        cols[f"{stage}_s"] = np.concatenate([c[f"{stage}_ns"] for c in chunks]).astype(np.float64) / 1e9
    if all("input_index" in c for c in chunks):
        cols["input_index"] = np.concatenate([c["input_index"] for c in chunks]).astype(np.int64)
    measured = [c for c in chunks if len(c["phase"]) and c["phase"][0] != "cold"]
    if measured and all("scheduled_ns" in c for c in measured):
        sched = [c.get("scheduled_ns", np.full(len(c["e2e_ns"]), -1)) for c in chunks]
        cols["scheduled_ns"] = np.concatenate(sched).astype(np.int64)
    return pd.DataFrame(cols)


def _throughput(parts, batch: int, latency: Dict[str, LatencyFigure], result: RunResult,
                history: Optional[list] = None, sessions: int = 1) -> Throughput:
    if not parts:
        return Throughput()
    label = result.label
    per = rate_figures(parts, batch)
    windows = [p["window_s"] for p in per]
    done = sum(len(p) for p in parts) * batch
    total = sum(windows)
    busy = sum(float(p["e2e_s"].sum()) for p in parts)
    e2e = latency.get("e2e") or LatencyFigure()
    med = e2e.median_s
    out: Dict[str, Any] = {"per_s": done / total if total > 0 else None,
           "definition": "inferences completed / wall time of the measuring windows on the device clock "
                         "(all repeats; time between inferences and between chunks included)",
           "per_repeat_per_s": [p["per_s"] for p in per],
           "per_repeat": per,
           "device_busy_per_s": done / busy if busy > 0 else None,
           "device_busy_definition": "inferences completed / the device time spent inferring (back to back, "
                                     "without the time between chunks: the link's round trips)",
           "inverse_median_per_s": batch / med if med else None,
           "label": label}
    out.update(throughput_interval(per, e2e.ci_level if e2e.ci_level is not None else 0.95, history, result,
                                   sessions))
    if label == "emulated":
        # an emulated board's rate is device (emulated) time; the wall time between chunks is the host's
        # serial link and the emulator, not the board: kept apart as host-limited
        out["host_limited_per_s"] = out["per_s"]
        out["host_limited_definition"] = out["definition"] + "; host-limited: the emulator and the host link"
        out["per_s"] = out["device_busy_per_s"]
        out["definition"] = ("emulated: inferences per second of emulated device time, back to back "
                             "(the host-limited rate with link time is host_limited_per_s)")
        for k in ("ci_low_per_s", "ci_high_per_s", "invocation", "sessions", "ci_method"):
            out.pop(k, None)   # the interval is of the host-limited rate
        out["host_limited_interval"] = throughput_interval(per, 0.95, history, result, sessions) or None
    return Throughput.model_validate(out)


def _fixed_rate(result: RunResult, parts, opts) -> None:
    achieved, late = [], []
    for p in parts:
        t = p["t_start_ns"].to_numpy()
        if len(t) > 1 and t[-1] > t[0]:
            achieved.append((len(t) - 1) / ((t[-1] - t[0]) / 1e9))
        if "scheduled_ns" in p:
            sched = p["scheduled_ns"].to_numpy()
            late.append(((t - sched) / 1e9)[sched >= 0])
    rate = float(np.mean(achieved)) if achieved else None
    result.extra.requested_rate_hz, result.extra.achieved_rate_hz = opts.rate_hz, rate
    late_all = np.concatenate(late) if late else np.zeros(0)
    if late_all.size:   # not declared in Extra (results/model.py): kept as the verb's own keys
        result.extra.lateness_median_s = float(np.median(late_all))
        result.extra.lateness_p99_s = float(np.percentile(late_all, 99))
    if rate is not None and rate < 0.95 * opts.rate_hz:
        result.warnings.append(RunWarning(
            code="rate-not-sustained",
            message=f"the board did not sustain {opts.rate_hz:g}/s: achieved {rate:.1f}/s",
            remedy="lower --rate, use more threads or a faster delegate"))


__all__ = ["summarise", "frame_of", "MIN_N_EFF"]
