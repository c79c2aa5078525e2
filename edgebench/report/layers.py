"""The layer runs in a report (level 1, pure): a profile run's bar chart of layer times and its
table, a layer-error run's SQNR along the layers, and the claim sentence of each.

:func:`section_blocks` turns a run into blocks any renderer draws: ``("h", text)``,
``("p", text)``, ``("table", head, rows)`` and ``("img", png_bytes, alt, caption)``
(:mod:`edgebench.report.html` draws them as HTML, and as Markdown without the images).
The figures are :func:`edgebench.report.report_plots.layer_times` and ``layer_sqnr``.
"""
from __future__ import annotations

from typing import Optional

from edgebench.report import format as fmt
from edgebench.report import report_plots as rp


def profile_claim(r) -> Optional[str]:
    p = (r.extra or {}).get("profile") or {}
    w, ratio = p.get("whole") or {}, p.get("sum_ratio") or {}
    if not w or not p.get("layers"):
        return None
    top = max((x for x in p["layers"] if x.get("in_sum") and x.get("median_s")), key=lambda x: x["median_s"],
              default=None)
    lab = r.label.upper() + (" (instruction counts under an emulator, not a real board's speed)"
                             if r.label == "emulated" else "")
    sums = (f"; the layers sum to {ratio['ratio']:.3f} of it (95% CI {ratio['ci_low']:.3f}–{ratio['ci_high']:.3f}, "
            f"{ratio['runs']} repeats)" if ratio.get("ci_low") is not None else "")
    heavy = (f"; heaviest layer {top['index']} {top['op']} {fmt.duration(top['median_s'])} "
             f"({fmt.percent(top.get('share'))} of the whole)" if top else "")
    iso = "; isolated timings omit cache and fusion effects" if p.get("method") == "isolated" else ""
    return (f"{lab}: {(r.model or {}).get('name')} {(r.model or {}).get('precision', '').upper()} takes "
            f"{fmt.duration(w.get('median_s'))} per inference "
            f"(95% CI {fmt.duration_range(w.get('ci_low_s'), w.get('ci_high_s'))}) "
            f"on {(r.board or {}).get('name')} ({(r.runtime or {}).get('name')}, {(r.runtime or {}).get('kernels')} "
            f"kernels), timed layer by layer by the {p.get('method')} method{sums}{heavy}{iso}.")


def layer_error_claim(r) -> Optional[str]:
    s = (r.extra or {}).get("layer_error") or {}
    if not s.get("layers"):
        return None
    base = ((r.extra or {}).get("baseline") or {}).get("name")
    last = s["layers"][-1]
    fj = s.get("first_jump")
    if fj:
        at = "the model input" if fj["index"] is None else f"layer {fj['index']} {fj['op']}"
        tail = fj.get("which") == "worst tenth"
        value = fj["local"]["worst_tenth_sqnr_db" if tail else "local_sqnr_db"]
        where = (f"the error first jumps at {at} (its own error at {value:.1f} dB SQNR"
                 + (" for the worst tenth of the inputs" if tail else "") + " against "
                 f"{fj.get('reference_db', fj['best_sqnr_db']):.1f} dB from 8-bit rounding alone"
                 + (f"; {fj['explained_by'][0]}" if fj.get("explained_by") else "") + ")")
    else:
        where = "no layer's own error jumps"
    co = s.get("channel_outlier")
    if co:
        where += (f"; channel {co['channel']} of {co['name']} (layer {co['index']}) holds {co['share']:.0%} of its "
                  f"range, crushing {co['crushed']} of its other {co['channels'] - 1} channels")
    out = "exact" if last.get("sqnr_db") is None else f"{last['sqnr_db']:.1f} dB"
    return (f"{(r.model or {}).get('name')} against its FP32 baseline {base} over {s['n']} inputs "
            f"({(r.runtime or {}).get('kernels')} kernels): output SQNR {out}; {where}.")


def section_blocks(r, images: bool = True) -> list:
    """The blocks of a run's layer sections (:data:`BLOCKS`, as its kind lists them; none for other kinds)."""
    from edgebench.results.kinds import kind_of

    return [b for name in kind_of(r).sections if name in BLOCKS for b in BLOCKS[name](r, images)]


def _profile_blocks(r, images: bool) -> list:
    p = (r.extra or {}).get("profile") or {}
    if not p.get("layers"):
        return []
    name = f"{(r.model or {}).get('name')} on {(r.board or {}).get('name')}"
    out = [("h", "Layer by layer")]
    if images:
        out.append(("img", rp.layer_times(p, name, r.label), "layer times",
                    f"Time of each layer ({p.get('statistic')}, 95% CI across {p.get('repeats')} repeats); grey: "
                    "outside the sum (inside a delegate, or not timed alone). Method: " + p.get("method_title", "")))
    per = p.get("per_mac") or {}
    head = ["#", "operator", "output", "MACs", p.get("statistic", "median"), "95% CI", "share"]
    if per.get("unit"):
        head.append(f"{per['unit']}/MAC ({per['label']})")
    rows = []
    for x in p["layers"]:
        row = ["–" if x.get("index") is None else x["index"], x["op"],
               " ".join("x".join(map(str, s)) for s in x.get("output_shapes") or []) or "–",
               fmt.count(x.get("macs")), fmt.duration(x.get("median_s")) if x.get("median_s") else "–",
               fmt.duration_range(x.get("ci_low_s"), x.get("ci_high_s")), fmt.percent(x.get("share"))]
        if per.get("unit"):
            row.append("–" if x.get("per_mac") is None else f"{x['per_mac']:.2f}")
        rows.append(row)
    out.append(("table", head, rows))
    w, ratio = p.get("whole") or {}, p.get("sum_ratio") or {}
    out.append(("p", f"Whole model {fmt.duration(w.get('median_s'))} (95% CI "
                     f"{fmt.duration_range(w.get('ci_low_s'), w.get('ci_high_s'))}); sum of the layers "
                     f"{fmt.duration(p.get('sum_s'))}" + (f" = {ratio['ratio']:.3f} of the whole (95% CI "
                                                           f"{ratio['ci_low']:.3f}–{ratio['ci_high']:.3f})"
                                                           if ratio.get("ci_low") is not None else "") + "."))
    out.append(("table", ["operator", "layers", "time", "share"] + (["per MAC"] if per.get("unit") else []),
                [[g["op"], g["count"], fmt.duration(g["time_s"]), fmt.percent(g["share"])]
                 + ([("–" if g.get("per_mac") is None else f"{g['per_mac']:.2f}")] if per.get("unit") else [])
                 for g in p.get("by_op") or []]))
    out.append(("p", f"What the {p.get('method')} method sees: {p.get('sees')}. What it cannot see: "
                     f"{p.get('cannot_see')}."))
    for n in (p.get("notes") or []) + [w_["message"] for w_ in p.get("warnings") or []]:
        out.append(("p", n))
    return out


def _layer_error_blocks(r, images: bool) -> list:
    s = (r.extra or {}).get("layer_error") or {}
    if not s.get("layers"):
        return []
    out = [("h", "Per-layer INT8 error against FP32")]
    if images:
        out.append(("img", rp.layer_sqnr(s, (r.model or {}).get("name", ""), r.label), "SQNR per layer",
                    f"SQNR of each layer's INT8 output against FP32 over {s['n']} inputs (95% bootstrap CI across "
                    "inputs), what its output quantization alone allows, and the noise it adds itself."))

    def db(v):
        return "exact" if v is None else f"{v:.1f}"

    rows = [[x["index"], x["op"], db(x["sqnr_db"]),
             "–" if not x.get("sqnr_ci") else f"{x['sqnr_ci'][0]:.1f}–{x['sqnr_ci'][1]:.1f}",
             "–" if x.get("cosine") is None else f"{x['cosine']:.5f}", db(x.get("output_sqnr_db")),
             "–" if not x.get("local") else ("none added" if x["local"].get("local_sqnr_db") is None
                                              else f"{x['local']['local_sqnr_db']:.1f}"),
             "–" if not x.get("local") else ("none added" if x["local"].get("worst_tenth_sqnr_db") is None
                                              else f"{x['local']['worst_tenth_sqnr_db']:.1f}"),
             fmt.percent(x.get("saturated_share"), 2), "; ".join(x.get("explained_by") or [])]
            for x in ([s["input"]] if s.get("input") else []) + s["layers"]]
    for row in rows:
        row[0] = "input" if row[0] is None else row[0]
    out.append(("table", ["#", "operator", "SQNR dB", "95% CI", "cosine", "output q. dB", "local dB",
                          "worst 10% local dB", "saturated", "explained by"], rows))
    fj = s.get("first_jump")
    at = "the model input" if fj and fj["index"] is None else f"layer {fj['index']} {fj['op']}" if fj else ""
    out.append(("p", (f"First jump: {at} ({fj.get('which', 'typical')} input)"
                      + (": " + "; ".join(fj["explained_by"]) if fj.get("explained_by") else "")
                      + ".") if fj else "No layer's own error jumps beyond "
                                        f"{s['jump_db']:g} dB below what its output would have over its own range."))
    out.append(("p", f"Method: {s['method']}."))
    for n in s.get("notes") or []:
        out.append(("p", n))
    return out


__all__ = ["section_blocks", "profile_claim", "layer_error_claim", "BLOCKS"]


#: The layer sections (report section name -> blocks of a run), listed by the run kinds that have them.
BLOCKS = {"profile": _profile_blocks, "layer-error": _layer_error_blocks}
