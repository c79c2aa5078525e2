"""Compare two profile runs layer by layer: which layer got slower (level 4).

Each row the two runs share (the same operator at the same index, or the whole model) is
compared with :func:`edgebench.stats.compare.ratio_of_medians` on its samples, one run per
repeat (Student t on the repeats' log medians, never narrower than the within-repeat
intervals or the clocks' tick), as ``edgebench compare`` compares stages. The ratio is
B / A (> 1: B is slower); Holm's adjustment runs over every row tested; a row is called
slower or faster only when its interval excludes 1 and its adjusted p-value is below 0.05.
"""
from __future__ import annotations

import math

from edgebench.errors import ResultError, UsageError
from edgebench.report import format as fmt
from edgebench.results.figures.profile import ProfileFigure
from edgebench.results.kinds import PROFILE, require
from edgebench.results.model import RunResult, refuse_mixed_labels
from edgebench.stats.compare import holm, ratio_of_medians

ALPHA = 0.05
WHOLE = "whole"


def _section(run: RunResult) -> ProfileFigure:
    require(run, PROFILE, "a layer-by-layer comparison", run.run_id)
    if not run.extra.profile:
        raise UsageError(f"run {run.run_id} has no layer profile (extra.profile)",
                         "compare two complete runs of edgebench profile layer by layer")
    return run.extra.profile


def _runs(samples, row: str) -> list:
    sel = samples[(samples["row"] == row) & (samples["statistic"] == "sample")]
    return [g["latency_s"].to_numpy() for _, g in sel.groupby("repeat", sort=True) if len(g) >= 2]


def _tick(a: RunResult, b: RunResult) -> float:
    return max(r.extra.profile.clock_resolution_s or 0.0 for r in (a, b))


def compare_layers(a: RunResult, a_samples, b: RunResult, b_samples) -> dict:
    """Rows of runs ``a`` (baseline) and ``b`` (candidate) compared: ``rows`` (the whole model first),
    ``slower`` and ``faster`` (keys of the rows called so, largest change first), ``unmatched``."""
    refuse_mixed_labels(a, b)
    sa, sb = _section(a), _section(b)
    for run, sec in ((a, sa), (b, sb)):
        if sec.statistic != "median":
            raise ResultError(f"run {run.run_id} was profiled with {sec.method}, which keeps means, not "
                              "samples: a layer's interval cannot be compared",
                              "profile both builds with the device-counter or isolated method to compare them "
                              "layer by layer")
    rows_a = {str(r.key): r for r in sa.layers or []}
    rows_b = {str(r.key): r for r in sb.layers or []}
    shared = [k for k in rows_a if k in rows_b and rows_a[k].op == rows_b[k].op
              and rows_a[k].median_s is not None and rows_b[k].median_s is not None]
    unmatched = sorted(set(rows_a) ^ set(rows_b)) + [k for k in rows_a
                                                     if k in rows_b and rows_a[k].op != rows_b[k].op]
    tick = _tick(a, b)
    tested = []
    for key in [WHOLE] + shared:
        ra, rb = _runs(a_samples, key), _runs(b_samples, key)
        if not ra or not rb:
            continue
        # ratio_of_medians(x, y) is median(x) / median(y): B over A, > 1 when B is slower
        tested.append((key, ratio_of_medians(rb, ra, resolution_s=tick or None)))
    if not tested:
        raise ResultError("the two profile runs share no row with samples to compare", "re-run the profiles")
    adjusted = holm([r.p_value for _, r in tested])
    out = []
    for (key, r), p_adj in zip(tested, adjusted):
        verdict = ("slower" if p_adj < ALPHA and r.ci_low > 1.0 else "faster" if p_adj < ALPHA and r.ci_high < 1.0
                   else "no difference resolved")
        src = rows_a.get(key)
        out.append({"key": key, "index": src.index if src else None,
                    "op": "whole model" if key == WHOLE or src is None else src.op,
                    "name": (src.name or "") if src else "",
                    "a_s": sa.whole.median_s if key == WHOLE else rows_a[key].median_s,
                    "b_s": sb.whole.median_s if key == WHOLE else rows_b[key].median_s,
                    **{k: v for k, v in r.to_dict().items() if k != "verdict"}, "p_holm": p_adj, "verdict": verdict,
                    "definition": "median of B / median of A (> 1: B slower)"})
    ranked = sorted((x for x in out if x["key"] != WHOLE), key=lambda x: -abs(math.log(x["ratio"])))
    return {"format": "edgebench-profile-compare", "baseline": a.run_id, "candidate": b.run_id, "label": a.label,
            "method": [sa.method, sb.method], "rows": out,
            "slower": [x["key"] for x in ranked if x["verdict"] == "slower"],
            "faster": [x["key"] for x in ranked if x["verdict"] == "faster"],
            "unmatched": unmatched, "alpha": ALPHA,
            "rule": "a row is called slower (faster) when its 95% interval lies above (below) 1 and its Holm-adjusted "
                    "p-value, over every row tested, is below 0.05"}


def sentence(comp: dict) -> str:
    """One line: which layers got slower or faster, by how much."""
    rows = {r["key"]: r for r in comp["rows"]}

    def one(key):
        r = rows[key]
        where = "the whole model" if key == WHOLE else f"layer {r['index']} {r['op']}"
        return (f"{where} {r['ratio']:.2f}x (95% CI {r['ci_low']:.2f}–{r['ci_high']:.2f}, Holm "
                f"{fmt.p_value(r['p_holm'])})")

    parts = []
    if comp["slower"]:
        parts.append("slower: " + "; ".join(one(k) for k in comp["slower"]))
    if comp["faster"]:
        parts.append("faster: " + "; ".join(one(k) for k in comp["faster"]))
    whole = rows.get(WHOLE)
    head = f"B against A: {one(WHOLE)}, {whole['verdict']}" if whole else "B against A"
    return head + (". " + ". ".join(parts) if parts else ". No layer changed beyond its interval's doubt") + "."


__all__ = ["compare_layers", "sentence", "ALPHA"]
