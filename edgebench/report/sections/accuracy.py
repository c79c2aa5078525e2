"""The accuracy section (level 1, pure): top-1 and calibration of both models, the paired difference,
the reliability diagram, the edge-case slices and the gates."""
from __future__ import annotations

from edgebench.report import format as fmt
from edgebench.report import report_plots as rp
from edgebench.report.sections.base import RunData, e, img, num, signed, table


def html(d: RunData) -> str:
    r = d.result
    a = r.extra.accuracy
    if not a:
        return ""
    p, res, cal = a.paired, a.resolution, a.calibration
    rows = []
    for key, side, c in (("baseline", a.accuracy.baseline, cal.baseline),
                         ("candidate", a.accuracy.candidate, cal.candidate)):
        t1 = side.top1
        ece = c.ece_debiased if c.ece_debiased is not None else c.ece
        ece_ci = (f"{num(c.ece_ci_low)}–{num(c.ece_ci_high)}"
                  if c.ece_ci_low is not None and c.ece_ci_high is not None else "")
        rows.append([key, fmt.percent(t1.accuracy, 2), f"{fmt.percent(t1.ci_low)}–{fmt.percent(t1.ci_high)}",
                     fmt.count(t1.n), num(ece), ece_ci])
    out = ["<h3>Accuracy</h3>", table(["model", "top-1", "95% Wilson CI", "n", "ECE (bias-corrected)",
                                       "ECE 95% CI"], rows)]
    if p:
        out.append(f"<p>candidate − baseline: {signed(p.diff_points)} points (95% CI "
                   f"{signed(p.diff_ci_low_points)} to {signed(p.diff_ci_high_points)}), McNemar "
                   f"{e(fmt.p_value(p.mcnemar_p))}, agreement {e(fmt.percent(p.agreement_rate))}; "
                   f"smallest resolvable difference with this test set: {e(num(res.mdd_points))} points</p>")
    rel = a.relative.statements or []
    if rel:
        out.append("<ul>" + "".join(f"<li>{e(s)}</li>" for s in rel) + "</ul>")
    name = r.model.name
    if cal.baseline or cal.candidate:
        out.append(img(rp.reliability(cal, f"{name}: reliability diagram", r.label), "reliability diagram",
                       "Accuracy against confidence per confidence bin; on the diagonal a model is calibrated."))
    edge = a.edge_cases
    if edge.slices:
        out.append(img(rp.edge_slices(edge, f"{name}: edge cases", r.label), "edge-case slices",
                       f"Worst slice: {edge.worst}. Holm-adjusted over "
                       f"{(edge.multiple_comparisons or {}).get('m')} slices."))
    val = a.validation.rows or []
    if val:
        out.append(table(["gate", "threshold", "rule", "acceptable", "note"],
                         [[v.metric, v.threshold, v.rule, "yes" if v.acceptable else "NO", v.note] for v in val],
                         num_from=9))
    return "".join(out)


__all__ = ["html"]
