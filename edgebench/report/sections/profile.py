"""The layer profile (level 1, pure): a profile run's claim, its bar chart of layer times and its tables,
as blocks (:mod:`edgebench.report.sections.blocks`: HTML and Markdown from one description)."""
from __future__ import annotations

from typing import Optional

from edgebench.report import format as fmt
from edgebench.report import report_plots as rp
from edgebench.report.sections.blocks import Blocks
from edgebench.results.model import RunResult


def claim(r: RunResult) -> Optional[str]:
    """The claim sentence of a profile run, or None when it holds no profile."""
    p = r.extra.profile
    w, ratio = p.whole, p.sum_ratio
    if not w or not p.layers:
        return None
    timed = [x for x in p.layers if x.in_sum and x.median_s]
    top = max(timed, key=lambda x: x.median_s or 0.0, default=None)
    lab = r.label.upper() + (" (instruction counts under an emulator, not a real board's speed)"
                             if r.label == "emulated" else "")
    sums = (f"; the layers sum to {ratio.ratio:.3f} of it (95% CI {ratio.ci_low:.3f}–{ratio.ci_high:.3f}, "
            f"{ratio.runs} repeats)" if ratio.ci_low is not None else "")
    heavy = (f"; heaviest layer {top.index} {top.op} {fmt.duration(top.median_s)} "
             f"({fmt.percent(top.share)} of the whole)" if top else "")
    iso = "; isolated timings omit cache and fusion effects" if p.method == "isolated" else ""
    return (f"{lab}: {r.model.name} {(r.model.precision or '').upper()} takes "
            f"{fmt.duration(w.median_s)} per inference "
            f"(95% CI {fmt.duration_range(w.ci_low_s, w.ci_high_s)}) "
            f"on {r.board.name} ({r.runtime.name}, {r.runtime.kernels} "
            f"kernels), timed layer by layer by the {p.method} method{sums}{heavy}{iso}.")


def blocks(r: RunResult, images: bool = True) -> Blocks:
    """The profile section of ``r`` (``images``: with the bar chart)."""
    p = r.extra.profile
    if not p.layers:
        return []
    out: Blocks = [("h", "Layer by layer")]
    if images:
        out.append(("img", rp.layer_times(p, f"{r.model.name} on {r.board.name}", r.label), "layer times",
                    f"Time of each layer ({p.statistic}, 95% CI across {p.repeats} repeats); grey: "
                    "outside the sum (inside a delegate, or not timed alone). Method: " + (p.method_title or "")))
    per = p.per_mac or {}      # free-form: the per-MAC basis (unit, label, basis) or why there is none
    head = ["#", "operator", "output", "MACs", p.statistic or "median", "95% CI", "share"]
    if per.get("unit"):
        head.append(f"{per['unit']}/MAC ({per['label']})")
    rows = []
    for x in p.layers:
        row = ["–" if x.index is None else x.index, x.op,
               " ".join("x".join(map(str, s)) for s in x.output_shapes or []) or "–",
               fmt.count(x.macs), fmt.duration(x.median_s) if x.median_s else "–",
               fmt.duration_range(x.ci_low_s, x.ci_high_s), fmt.percent(x.share)]
        if per.get("unit"):
            row.append("–" if x.per_mac is None else f"{x.per_mac:.2f}")
        rows.append(row)
    out.append(("table", head, rows))
    w, ratio = p.whole, p.sum_ratio
    out.append(("p", f"Whole model {fmt.duration(w.median_s)} (95% CI "
                     f"{fmt.duration_range(w.ci_low_s, w.ci_high_s)}); sum of the layers "
                     f"{fmt.duration(p.sum_s)}" + (f" = {ratio.ratio:.3f} of the whole (95% CI "
                                                   f"{ratio.ci_low:.3f}–{ratio.ci_high:.3f})"
                                                   if ratio.ci_low is not None else "") + "."))
    out.append(("table", ["operator", "layers", "time", "share"] + (["per MAC"] if per.get("unit") else []),
                [[g["op"], g["count"], fmt.duration(g["time_s"]), fmt.percent(g["share"])]
                 + ([("–" if g.get("per_mac") is None else f"{g['per_mac']:.2f}")] if per.get("unit") else [])
                 for g in p.by_op or []]))
    out.append(("p", f"What the {p.method} method sees: {p.sees}. What it cannot see: {p.cannot_see}."))
    for n in (p.notes or []) + [str(w_.get("message")) for w_ in p.warnings or []]:
        out.append(("p", n))
    return out


__all__ = ["blocks", "claim"]
