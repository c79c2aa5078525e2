"""The latency section (level 1, pure): each stage's median and interval, cold start, warm-up and
throughput, the end-to-end distribution and where end to end goes."""
from __future__ import annotations

from typing import Any, Dict, Optional

from edgebench.report import format as fmt
from edgebench.report import report_plots as rp
from edgebench.report.sections.base import RunData, e, img, model_on_board, table
from edgebench.results.figures.latency import LatencyFigure
from edgebench.results.kinds import kind_of

STAGES = ("e2e", "prep", "set", "invoke", "get")


def latency_table(lat: Dict[str, LatencyFigure]) -> str:
    rows = []
    for st in STAGES:
        s = lat.get(st)
        if not s:
            continue
        rows.append([st, fmt.duration(s.median_s), fmt.duration_range(s.ci_low_s, s.ci_high_s),
                     fmt.duration(s.p90_s), fmt.duration(s.p99_s), fmt.count(s.n), s.runs or 1])
    return table(["stage", "median", "95% CI", "p90", "p99", "n", "runs"], rows)


def measured_e2e(samples: Any) -> Optional[Any]:
    """The end-to-end samples of the measuring (or sustained) phase, or None."""
    if samples is None or "e2e_s" not in samples:
        return None
    for phase in ("measure", "sustained"):
        sel = samples[samples["phase"] == phase]
        if len(sel):
            return sel["e2e_s"].to_numpy()
    return None


def html(d: RunData) -> str:
    r = d.result
    e2e = r.stage("e2e")
    if not e2e.median_s:
        return ""
    out = ["<h3>Latency</h3>", latency_table(r.latency)]
    cs, wu = r.cold_start, r.warmup
    bits = []
    if cs:
        bits.append(f"cold start: model load {fmt.duration(cs.load_s)}, first inference "
                    f"{fmt.duration(cs.first_inference_s)}")
    if wu.n_warmup is not None:
        bits.append(f"warm-up: {fmt.count(wu.n_warmup)} inferences discarded ({wu.method})")
    tp = r.throughput
    if tp.per_s:
        bits.append(f"throughput achieved {fmt.rate(tp.per_s)}/s ({tp.definition})")
    if e2e.ci_method:
        bits.append(f"interval: {e2e.ci_method}")
    out.append("<p class=small>" + "<br>".join(e(b) for b in bits) + "</p>")
    x = measured_e2e(d.samples)
    what = "sustained window" if kind_of(r).sustained else "all repeats after warm-up"
    name = model_on_board(r)
    if x is not None and len(x):
        out.append(img(rp.latency_distribution(x, e2e, f"{name}: end-to-end latency ({what})", r.label),
                       "latency histogram and CDF",
                       "Histogram and cumulative distribution of end-to-end latency; shaded: the headline 95% "
                       "interval of the median; right: each repeat's median with its own interval (red) against "
                       "the headline interval."))
    if any(r.latency.get(s) for s in STAGES[1:]):
        out.append(img(rp.stage_breakdown(r.latency, f"{name}: where end to end goes", r.label), "stage breakdown",
                       "Median of each stage: prep (input preparation), set (copy into the interpreter), invoke "
                       "(the kernels), get (output read). The model itself is invoke; the rest is harness."))
    return "".join(out)


__all__ = ["STAGES", "html", "latency_table", "measured_e2e"]
