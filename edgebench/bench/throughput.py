"""Achieved throughput (level 4): completed inferences over the wall time of a window, with an
interval under the model of variation (:mod:`edgebench.stats.variation`).

Never ``1 / median``: the time between inferences and between chunks (the link's round trips,
the host) is part of what a deployment gets. Within a window, the rate is one over the mean time
from one inference's start to the next (:func:`cycle_times`), whose standard error comes from
batch means (:func:`edgebench.stats.dependence.mean_se_log`); over repeats and invocations the
pooled components add the rest. Used by ``bench`` (every repeat's window), ``soak`` and ``sweep``
(the burst and the sustained window).
"""
from __future__ import annotations

import numpy as np

from edgebench.bench import sessions as sess
from edgebench.stats.dependence import mean_se_log
from edgebench.stats.variation import RunFigure, combine_sessions, invocation


def window_s(part) -> float:
    """Wall time on the device clock from the first kept inference's start to the last one's end."""
    t = part["t_start_ns"].to_numpy()
    return float((t[-1] + part["e2e_s"].to_numpy()[-1] * 1e9 - t[0]) / 1e9)


def cycle_times(t_start_ns, e2e_s) -> np.ndarray:
    """Seconds from each inference's start to the next one's (the last: its own duration): their
    sum is the window's wall time, so completed inferences / wall time = 1 / their mean."""
    t = np.asarray(t_start_ns, dtype=np.float64) / 1e9
    e = np.asarray(e2e_s, dtype=np.float64)
    return np.append(np.diff(t), e[-1]) if t.size else np.zeros(0)


def rate_figures(parts, batch: int) -> list:
    """Per part (a repeat, a window): ``{per_s, se_log, df, n, window_s}`` of the achieved rate."""
    out = []
    for p in parts:
        w = window_s(p)
        per_s = len(p) * batch / w if w > 0 else None
        got = mean_se_log(cycle_times(p["t_start_ns"].to_numpy(), p["e2e_s"].to_numpy()))
        out.append({"per_s": per_s, "se_log": got[1] if got and per_s else None, "df": got[2] if got else None,
                    "n": int(len(p) * batch), "window_s": w})
    return out


def throughput_interval(per: list, level: float, history: list | None, result, sessions: int) -> dict:
    """The achieved throughput's interval under the model of variation: over the repeats (with the
    pooled between-repeat component) and, combined with earlier sessions of the same measurement,
    over invocations (the pooled between-invocation component; the stated priors when nothing is
    on record), never excluding this invocation's own interval and rate (the headline)."""
    if not per or any(p["per_s"] is None or p["se_log"] is None for p in per):
        return {}
    figs = [RunFigure(p["per_s"], p["se_log"], float(p["df"])) for p in per]
    comp = sess.variation(history or [], sess.THROUGHPUT, sess.measurement_key(result), figs, result.label)
    inv, _ = invocation(figs, comp.repeat)
    earlier = [invocation(rec.figures[sess.THROUGHPUT], comp.repeat)[0]
               for rec in sess.earlier_sessions(result, history or [], sessions) if sess.THROUGHPUT in rec.figures]
    res = combine_sessions(inv, earlier, comp.session)
    lo, hi = res.estimate.interval(level)
    ilo, ihi = inv.interval(level)
    # the headline is this invocation's rate: like the latency's, its interval never excludes it nor claims
    # less than the invocation's own (earlier sessions far off move the long-run centre away from it)
    head = [inv.value]
    if all(p.get("n") and p.get("window_s") for p in per):
        head.append(sum(p["n"] for p in per) / sum(p["window_s"] for p in per))
    lo, hi = min(lo, ilo, *head), max(hi, ihi, *head)
    return {"ci_low_per_s": lo, "ci_high_per_s": hi, "ci_level": level, "sessions": res.sessions,
            "invocation": {"per_s": inv.value, "ci_low_per_s": ilo, "ci_high_per_s": ihi, "se_log": inv.se,
                           "df": inv.df},
            "ci_method": f"{res.estimate.method}; {comp.session.describe()}; {comp.repeat.describe()}"}


__all__ = ["window_s", "cycle_times", "rate_figures", "throughput_interval"]
