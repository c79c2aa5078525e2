"""The layer runs in a report (level 1, pure): a profile run's bar chart of layer times and its
table, a layer-error run's SQNR along the layers, and the claim sentence of each.

:func:`section_blocks` turns a run into blocks any renderer draws: ``("h", text)``,
``("p", text)``, ``("table", head, rows)`` and ``("img", png_bytes, alt, caption)``
(:mod:`edgebench.report.html` draws them as HTML, and as Markdown without the images).
Figures are PNG bytes drawn on a bare Agg ``Figure``; each title says the run's label.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from edgebench.report import format as fmt

KINDS = {"profile": "layer profile", "layer-error": "per-layer INT8 error"}


def _figure(width_in: float, height_in: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def _png(fig) -> bytes:
    import io

    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


def _label(i, r) -> str:
    idx = "" if r.get("index") is None else f"{r['index']} "
    return f"{idx}{r['op']}"


def layer_times_png(p: dict, title: str, label: str) -> bytes:
    """Horizontal bars: each timed layer's time with its 95% interval, in execution order, the share
    of the whole written beside; the whole model's time as a line for scale."""
    rows = [r for r in p["layers"] if r.get("median_s") is not None]
    unit, scale = fmt.duration(max((r["median_s"] for r in rows), default=1e-6)).split(" ")[1], None
    scale = {"s": 1.0, "ms": 1e-3, "µs": 1e-6}[unit]
    fig = _figure(9.0, 1.2 + 0.32 * max(1, len(rows)))
    ax = fig.subplots()
    y = np.arange(len(rows))[::-1]
    med = np.array([r["median_s"] for r in rows]) / scale
    lo = np.array([(r.get("ci_low_s") or r["median_s"]) for r in rows]) / scale
    hi = np.array([(r.get("ci_high_s") or r["median_s"]) for r in rows]) / scale
    colours = ["tab:blue" if r.get("in_sum") else "tab:gray" for r in rows]
    ax.barh(y, med, color=colours, xerr=[med - lo, hi - med], capsize=2, ecolor="black")
    ax.set_yticks(y, [_label(i, r) for i, r in enumerate(rows)], fontsize=8)
    for yy, m, r in zip(y, hi, rows):
        if r.get("share") is not None:
            ax.text(m, yy, f"  {100 * r['share']:.1f}%", va="center", fontsize=7)
    ax.set_xlabel(f"{p.get('statistic', 'median')} time per inference ({unit}), 95% CI")
    ax.set_title(f"{title} — {label}, {p['method']}", fontsize=10)
    if p.get("method") == "isolated":
        ax.text(0.99, 0.01, "isolated timings omit cache and fusion effects", transform=ax.transAxes,
                ha="right", va="bottom", fontsize=7, color="tab:red")
    return _png(fig)


def sqnr_png(s: dict, title: str, label: str) -> bytes:
    """SQNR of every layer with its interval (INT8 against FP32), the output quantization's own
    SQNR, the local SQNR, and the first jump marked."""
    rows = [s["input"]] + s["layers"] if s.get("input") else s["layers"]
    x = np.arange(len(rows))
    fig = _figure(9.0, 3.6)
    ax = fig.subplots()

    def series(key):
        return np.array([np.nan if r.get(key) is None else r[key] for r in rows], dtype=float)

    sq = series("sqnr_db")
    lo = np.array([np.nan if not r.get("sqnr_ci") else r["sqnr_ci"][0] for r in rows], dtype=float)
    hi = np.array([np.nan if not r.get("sqnr_ci") else r["sqnr_ci"][1] for r in rows], dtype=float)
    ax.fill_between(x, lo, hi, color="tab:blue", alpha=0.2, linewidth=0)
    ax.plot(x, sq, "o-", color="tab:blue", label="SQNR, INT8 vs FP32 (95% CI)")
    ax.plot(x, series("output_sqnr_db"), "s--", color="tab:green", label="output quantization alone")
    ax.plot(x, series("best_sqnr_db"), "_", color="black", markersize=12, label="over its own observed range")
    local = np.array([np.nan if not r.get("local") or r["local"].get("local_sqnr_db") is None
                      else r["local"]["local_sqnr_db"] for r in rows], dtype=float)
    ax.plot(x, local, "^:", color="tab:orange", label="local (noise the layer adds)")
    fj = s.get("first_jump")
    jump = next((k for k, r in enumerate(rows) if fj and r["index"] == fj["index"] and r["op"] == fj["op"]), None)
    if jump is not None:
        ax.axvline(jump, color="tab:red", linestyle="-", alpha=0.5)
        ax.text(jump, ax.get_ylim()[1], " first jump", color="tab:red", va="top", fontsize=8)
    ax.set_xticks(x, ["input" if r["index"] is None else _label(i, r) for i, r in enumerate(rows)], rotation=45,
                  ha="right", fontsize=7)
    ax.set_ylabel("dB")
    ax.set_title(f"{title} — {label}", fontsize=10)
    ax.legend(fontsize=7, loc="lower left")
    return _png(fig)


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
        where = (f"the error first jumps at {at} (its own error at {fj['local']['local_sqnr_db']:.1f} dB SQNR against "
                 f"{fj['best_sqnr_db']:.1f} dB over its own range" + (f"; {fj['explained_by'][0]}"
                                                                      if fj.get("explained_by") else "") + ")")
    else:
        where = "no layer's own error jumps"
    out = "exact" if last.get("sqnr_db") is None else f"{last['sqnr_db']:.1f} dB"
    return (f"{(r.model or {}).get('name')} against its FP32 baseline {base} over {s['n']} inputs "
            f"({(r.runtime or {}).get('kernels')} kernels): output SQNR {out}; {where}.")


def section_blocks(r, images: bool = True) -> list:
    """The blocks of a profile or layer-error run (empty for other kinds)."""
    if r.kind == "profile":
        return _profile_blocks(r, images)
    if r.kind == "layer-error":
        return _layer_error_blocks(r, images)
    return []


def _profile_blocks(r, images: bool) -> list:
    p = (r.extra or {}).get("profile") or {}
    if not p.get("layers"):
        return []
    name = f"{(r.model or {}).get('name')} on {(r.board or {}).get('name')}"
    out = [("h", "Layer by layer")]
    if images:
        out.append(("img", layer_times_png(p, name, r.label), "layer times",
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
        out.append(("img", sqnr_png(s, (r.model or {}).get("name", ""), r.label), "SQNR per layer",
                    f"SQNR of each layer's INT8 output against FP32 over {s['n']} inputs (95% bootstrap CI across "
                    "inputs), what its output quantization alone allows, and the noise it adds itself."))

    def db(v):
        return "exact" if v is None else f"{v:.1f}"

    rows = [[x["index"], x["op"], db(x["sqnr_db"]),
             "–" if not x.get("sqnr_ci") else f"{x['sqnr_ci'][0]:.1f}–{x['sqnr_ci'][1]:.1f}",
             "–" if x.get("cosine") is None else f"{x['cosine']:.5f}", db(x.get("output_sqnr_db")),
             "–" if not x.get("local") else ("none added" if x["local"].get("local_sqnr_db") is None
                                              else f"{x['local']['local_sqnr_db']:.1f}"),
             fmt.percent(x.get("saturated_share"), 2), "; ".join(x.get("explained_by") or [])]
            for x in ([s["input"]] if s.get("input") else []) + s["layers"]]
    for row in rows:
        row[0] = "input" if row[0] is None else row[0]
    out.append(("table", ["#", "operator", "SQNR dB", "95% CI", "cosine", "output q. dB", "local dB", "saturated",
                          "explained by"], rows))
    fj = s.get("first_jump")
    at = "the model input" if fj and fj["index"] is None else f"layer {fj['index']} {fj['op']}" if fj else ""
    out.append(("p", (f"First jump: {at}" + (": " + "; ".join(fj["explained_by"]) if fj.get("explained_by") else "")
                      + ".") if fj else "No layer's own error jumps beyond "
                                        f"{s['jump_db']:g} dB below what its output would have over its own range."))
    out.append(("p", f"Method: {s['method']}."))
    for n in s.get("notes") or []:
        out.append(("p", n))
    return out


__all__ = ["section_blocks", "layer_times_png", "sqnr_png", "profile_claim", "layer_error_claim", "KINDS"]
