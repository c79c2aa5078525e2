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
  earlier ones of the same measurement (:mod:`edgebench.bench.sessions`,
  :func:`edgebench.stats.dependence.sessions_interval`); ``rerun_low_s``/``rerun_high_s`` is where
  one more invocation's median should fall. The stop rule and the precision target apply to
  the invocation's own interval (more samples now cannot shrink the spread between sessions);
- warnings with remedies: instability, a coarse clock, one run only, one session only, few
  effective samples, an unsettled warm-up, a target not reached.
"""
from __future__ import annotations

import numpy as np

from edgebench.report import format as fmt
from edgebench.report.claim import claim
from edgebench.results.model import STAGES
from edgebench.stats.dependence import COARSE_TICKS, coarse_clock
from edgebench.stats.latency import summarize_runs
from edgebench.stats.stability import instability_warnings

#: fewer effective samples than this in a run: its interval rests on a guess of the dependence
MIN_N_EFF = 30


def summarise(result, frame, opts, repeat_info: list, reported_resolution_s: float,
              final: bool, status: str = "running", reason: str | None = None, earlier: list | None = None):
    """Fill ``result``'s figures from the samples ``frame`` (all repeats); return the frame with
    each sample's phase (cold, warmup, measure) set, ready to be stored beside the result.

    ``repeat_info``: per repeat ``{repeat, load_s, first_inference_s, first_invoke_s,
    decision: {reason, target_reached} | None}``. Phases (warm-up / measure) are decided
    here, per repeat, from the samples themselves. ``earlier``: the earlier sessions to combine
    in the final summary (:func:`edgebench.bench.sessions.earlier_sessions`); None: not looked up.
    """
    from edgebench.bench.latency import bench_warmup

    kept_parts, warm_parts = [], []
    for k in sorted(frame["repeat"].unique()):
        sel = (frame["repeat"] == k) & (frame["phase"] != "cold")
        idx = frame.index[sel]
        warm = bench_warmup(frame.loc[idx, "e2e_s"].to_numpy(), opts)
        frame.loc[idx[: warm.n_warmup], "phase"] = "warmup"
        frame.loc[idx[warm.n_warmup:], "phase"] = "measure"
        warm_parts.append((int(k), warm))
        kept_parts.append(frame.loc[idx[warm.n_warmup:]])
    kept_parts = [p for p in kept_parts if len(p) >= 2]
    result.warmup = _warmup_record(warm_parts, result.label)
    result.warnings = []
    latency = {}
    res = reported_resolution_s
    if kept_parts:
        from edgebench.stats.dependence import observed_tick

        res = observed_tick(np.concatenate([p["e2e_s"].to_numpy() for p in kept_parts]), res)
        result.timing["clock_resolution_s"] = res or None
        result.timing["clock_resolution_reported_s"] = reported_resolution_s or None
        # between repeats only the headline stage (the stop rule's); every stage at the end
        for stage in STAGES if final else ("e2e",):
            runs = [p[f"{stage}_s"].to_numpy() for p in kept_parts]
            latency[stage] = {**summarize_runs(runs, resolution_s=res).to_dict(), "label": result.label}
        pooled = np.concatenate([p["e2e_s"].to_numpy() for p in kept_parts])
        result.warnings += [w.to_dict() for w in instability_warnings(pooled)]
        if final and earlier is not None:
            _combine_sessions(latency, earlier, res)
    result.latency = latency
    result.warnings += _warnings(result, warm_parts, latency, final)
    result.cold_start = _cold_record(repeat_info, result.label)
    batch = int(result.scenario.get("batch") or 1)
    result.throughput = _throughput(kept_parts, batch, latency, result.label)
    if opts.scenario == "fixed-rate" and kept_parts:
        _fixed_rate(result, kept_parts, opts)
    repeats = len(repeat_info)
    e2e = latency.get("e2e") or {}
    rel = (e2e.get("invocation") or e2e).get("rel_ci_halfwidth")
    reached = rel is not None and rel <= opts.target_rel_ci
    result.stopping = {
        "target_reached": bool(reached),
        "target_rel_ci": opts.target_rel_ci,
        "rel_ci_halfwidth": rel,
        "reason": _stop_reason(rel, opts, repeats),
        "repeats": repeats,
        "per_repeat": [{"repeat": i["repeat"], **(i.get("decision") or {"reason": None, "target_reached": False})}
                       for i in repeat_info],
        "n": int(sum(len(p) for p in kept_parts)),
        "elapsed_s": float(sum(p["e2e_s"].sum() for p in kept_parts)),
    }
    if final and not reached and latency:
        result.warnings.append({"code": "target-not-reached", "message": result.stopping["reason"],
                                "remedy": "raise --max-time or --max-repeats, or accept a wider --target"})
    result.status, result.status_reason = status, reason
    result.extra = {**result.extra, "claim": claim(result) if latency else None}
    return frame


def _combine_sessions(latency: dict, earlier: list, resolution_s: float) -> None:
    """Headline intervals over this invocation and ``earlier`` sessions; the invocation's own
    figures kept under ``invocation``."""
    from edgebench.stats.dependence import sessions_interval

    for stage, fig in latency.items():
        own = {k: fig[k] for k in ("median_s", "ci_low_s", "ci_high_s", "rel_ci_halfwidth", "ci_method", "runs")}
        fig["invocation"] = own
        prior = [s for s in earlier if stage in s["latency"]]
        if own["ci_low_s"] is None or not own["median_s"]:
            prior = []                       # no interval of its own: nothing to combine it with
        fig["sessions"] = 1 + len(prior)
        fig["session_runs"] = [s["run_id"] for s in prior]
        fig["between_session_cv"] = fig["rerun_low_s"] = fig["rerun_high_s"] = None
        if not prior:
            continue
        iv = sessions_interval(own["median_s"], (own["ci_low_s"], own["ci_high_s"]),
                               [s["latency"][stage]["median_s"] for s in prior],
                               [(s["latency"][stage]["ci_low_s"], s["latency"][stage]["ci_high_s"]) for s in prior],
                               fig["ci_level"], resolution_s,
                               runs=[own["runs"]] + [s["latency"][stage].get("runs") for s in prior])
        fig.update(ci_low_s=iv.low, ci_high_s=iv.high, ci_method=f"{iv.method}; within this invocation: "
                   f"{own['ci_method']}", between_session_cv=iv.between_run_cv,
                   rerun_low_s=iv.rerun_low, rerun_high_s=iv.rerun_high,
                   rel_ci_halfwidth=(iv.high - iv.low) / 2.0 / own["median_s"],
                   session_medians_s=[own["median_s"]] + [s["latency"][stage]["median_s"] for s in prior])


def _warmup_record(parts, label) -> dict:
    if not parts:
        return {"n_warmup": 0, "label": label, "per_repeat": []}
    first = parts[0][1].to_dict()
    return {**first, "n_warmup": int(sum(w.n_warmup for _, w in parts)),
            "duration_s": float(sum(w.duration_s for _, w in parts)),
            "per_repeat": [{"repeat": k, **w.to_dict()} for k, w in parts], "label": label}


def _cold_record(infos, label) -> dict:
    if not infos:
        return {}
    first = infos[0]
    return {"load_s": first["load_s"], "first_inference_s": first["first_inference_s"],
            "first_invoke_s": first["first_invoke_s"], "label": label,
            "per_repeat": [{k: i[k] for k in ("repeat", "load_s", "first_inference_s", "first_invoke_s")}
                           for i in infos],
            "note": "model load = interpreter construction + allocate_tensors; first inference timed alone; "
                    "one cold start per repeat (a fresh process each)"}


def _warnings(result, warm_parts, latency, final) -> list:
    out = []
    e2e = latency.get("e2e") or {}
    for k, warm in warm_parts:
        if warm.at_limit:
            out.append({"code": "warmup-unsettled",
                        "message": f"repeat {k + 1}: the detected warm-up ({warm.n_warmup:,} inferences) reaches "
                                   "the search limit (half the samples): latency may not have settled",
                        "remedy": "raise --min-time, or run `edgebench soak` first"})
    res = (result.timing or {}).get("clock_resolution_s") or 0.0
    if e2e and coarse_clock(e2e["median_s"], res):
        out.append({"code": "coarse-clock",
                    "message": f"the median ({fmt.duration(e2e['median_s'])}) is within {COARSE_TICKS} ticks of "
                               f"the device clock ({fmt.duration(res)} a tick): the interval is widened to the "
                               "clock's resolution and the figure is no finer than it",
                    "remedy": "time many inferences per reading, or use a finer counter (a cycle counter)"})
    if final and e2e and e2e.get("runs", 1) < 2:
        out.append({"code": "single-run",
                    "message": "one run only: the interval cannot include run-to-run variation, which on "
                               "real machines is often larger than the within-run uncertainty",
                    "remedy": "use --repeat 3 or more"})
    if final and e2e.get("sessions") == 1:
        out.append({"code": "single-session",
                    "message": "first session of this measurement: the interval covers this invocation only; "
                               "separate invocations often differ by more than repeats inside one (docs/"
                               "statistics.md, sessions), which one invocation cannot measure",
                    "remedy": "run the same command again: earlier complete runs of the same model and "
                              "conditions in the runs folder are combined into the interval automatically"})
    for run in e2e.get("per_run") or []:
        if run.get("n_eff") is not None and run["n_eff"] < MIN_N_EFF:
            out.append({"code": "few-effective-samples",
                        "message": f"a run carried the information of only {run['n_eff']:.0f} independent samples "
                                   f"({run['n']:,} measured, strongly autocorrelated): its interval is approximate",
                        "remedy": "raise --min-time or --min-samples"})
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


def _window_s(part) -> float:
    """Wall time on the device clock from the first kept inference's start to the last one's end."""
    t = part["t_start_ns"].to_numpy()
    return float((t[-1] + part["e2e_s"].to_numpy()[-1] * 1e9 - t[0]) / 1e9)


def _throughput(parts, batch, latency, label) -> dict:
    if not parts:
        return {}
    windows = [_window_s(p) for p in parts]
    done = sum(len(p) for p in parts) * batch
    total = sum(windows)
    med = (latency.get("e2e") or {}).get("median_s")
    out = {"per_s": done / total if total > 0 else None,
           "definition": "inferences completed / wall time of the measuring windows on the device clock "
                         "(all repeats; time between inferences and between chunks included)",
           "per_repeat_per_s": [len(p) * batch / w if w > 0 else None for p, w in zip(parts, windows)],
           "inverse_median_per_s": batch / med if med else None,
           "label": label}
    return out


def _fixed_rate(result, parts, opts) -> None:
    achieved, late = [], []
    for p in parts:
        t = p["t_start_ns"].to_numpy()
        if len(t) > 1 and t[-1] > t[0]:
            achieved.append((len(t) - 1) / ((t[-1] - t[0]) / 1e9))
        if "scheduled_ns" in p:
            sched = p["scheduled_ns"].to_numpy()
            late.append(((t - sched) / 1e9)[sched >= 0])
    rate = float(np.mean(achieved)) if achieved else None
    extra = {"requested_rate_hz": opts.rate_hz, "achieved_rate_hz": rate}
    late_all = np.concatenate(late) if late else np.zeros(0)
    if late_all.size:
        extra.update({"lateness_median_s": float(np.median(late_all)),
                      "lateness_p99_s": float(np.percentile(late_all, 99))})
    result.extra = {**result.extra, **extra}
    if rate is not None and rate < 0.95 * opts.rate_hz:
        result.warnings.append({
            "code": "rate-not-sustained",
            "message": f"the board did not sustain {opts.rate_hz:g}/s: achieved {rate:.1f}/s",
            "remedy": "lower --rate, use more threads or a faster delegate"})


__all__ = ["summarise", "frame_of", "MIN_N_EFF"]
