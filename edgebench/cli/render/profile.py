"""Terminal rendering of the layer verbs (level 5): a profile run (``extra.profile``), a
layer-error run (``extra.layer_error``) and a layer-by-layer comparison of two profile runs."""
from __future__ import annotations

from typing import Optional

from rich.markup import escape
from rich.table import Table

from edgebench.bench.profile_compare import sentence
from edgebench.cli.render import print_warnings
from edgebench.report import format as fmt
from edgebench.results.figures.layer_error import LayerErrorFigure
from edgebench.results.figures.profile import ProfileFigure
from edgebench.results.model import RunResult


def _fmt_shape(shapes) -> str:
    return " ".join("x".join(str(d) for d in (s[1:] if len(s) > 1 else s)) for s in shapes or [] if s) or "–"


def _table(title: str, cols: tuple, left: tuple = ()):
    t = Table(title=escape(title), title_justify="left", box=None, pad_edge=False, padding=(0, 1, 0, 0),
              header_style="bold underline")
    for c in cols:
        t.add_column(c, justify="left" if c in left else "right", no_wrap=c not in ("note",))
    return t


def profile_table(result: RunResult) -> Table:
    """The per-layer table of a profile run: index, operator, shapes, MACs, time and interval, share,
    work per MAC where the board's clock says what a second is."""
    p = result.extra.profile
    per = p.per_mac or {}          # a free-form mapping: the per-MAC basis, or why there is none
    unit = f"{per['unit'][:5]}/MAC" if per.get("unit") else None
    stat = "mean" if p.statistic == "mean" else "median"
    cols = ("#", "operator", "input", "output", "MACs", stat, "95% CI", "share") + ((unit,) if unit else ()) + ("note",)
    t = _table(f"{result.model.name} on {result.board.name}, layer by layer: {p.method} "
               f"({p.method_title}), {result.label}, {p.repeats} repeat(s)", cols,
               left=("operator", "input", "output", "note"))
    for r in p.layers or []:
        ci = fmt.duration_range(r.ci_low_s, r.ci_high_s) if r.ci_low_s is not None else "–"
        row = ["–" if r.index is None else str(r.index), str(r.op), _fmt_shape(r.input_shapes),
               _fmt_shape(r.output_shapes), "–" if r.macs is None else f"{r.macs:,}",
               fmt.duration(r.median_s) if r.median_s is not None else "–", ci,
               fmt.percent(r.share) if r.in_sum else ("(inside)" if r.share else "–")]
        if unit:
            row.append("–" if r.per_mac is None else f"{r.per_mac:.2f}")
        # getattr: a row's `where` is declared in ProfileRow on another branch (either reads it)
        row.append(r.note or ("" if r.in_sum else r.where or ""))
        t.add_row(*row)
    return t


def sum_line(p: ProfileFigure) -> str:
    """The sum of the layers against the whole model of the same run."""
    w, ratio = p.whole, p.sum_ratio
    whole = (f"whole model {fmt.duration(w.median_s)} "
             f"[95% CI {fmt.duration_range(w.ci_low_s, w.ci_high_s)}]" if w else "whole model not timed")
    if not ratio:
        return f"{whole}; sum of layers {fmt.duration(p.sum_s)}"
    # getattr: the repeats the ratio rests on (`runs`) is declared in SumRatio on another branch
    ci = (f" [95% CI {ratio.ci_low:.3f}–{ratio.ci_high:.3f}, {getattr(ratio, 'runs', None)} repeat(s)]"
          if ratio.ci_low is not None and ratio.ci_high is not None else "")
    net = p.sum_ratio_net or {}    # a free-form mapping: the sum less the per-invocation cost
    net_txt = (f"; less the per-invocation fixed cost ({fmt.duration(net['fixed_s'])}, paid once by the whole "
               f"model) {net['ratio']:.3f}" + (f" [repeats {net['low']:.3f}–{net['high']:.3f}]"
                                              if net.get("low") is not None else "") if net else "")
    return (f"{whole}; sum of layers {fmt.duration(p.sum_s)} = {ratio.ratio or 0:.3f} of the whole{ci}{net_txt}"
            + (" — isolated timings omit cache and fusion effects" if p.method == "isolated" else ""))


def print_profile(console, result: RunResult, run_dir=None) -> None:
    p = result.extra.profile
    console.print(profile_table(result))
    console.print(sum_line(p), markup=False, soft_wrap=True)
    per = p.per_mac or {}
    if per.get("unit"):
        console.print(f"{per['unit']} per MAC: {per['label']} ({per['basis']})", markup=False, soft_wrap=True)
    groups = "; ".join(f"{g['op']} ×{g['count']} {fmt.duration(g['time_s'])} ({fmt.percent(g['share'])})"
                       + (f", {g['per_mac']:.2f}/MAC" if g.get("per_mac") is not None else "") for g in p.by_op or [])
    console.print(f"by operator: {groups}", markup=False, soft_wrap=True)
    tpu = p.edgetpu      # a free-form mapping: what ran on the TPU and what on the CPU
    if tpu:
        console.print(f"Edge TPU: {tpu['delegate_nodes']} delegate node(s) {fmt.duration(tpu['delegate_s'])} "
                      f"({fmt.percent(tpu['delegate_share'])} of the whole), operators on the CPU "
                      f"{fmt.duration(tpu['cpu_s'])} ({fmt.percent(tpu['cpu_share'])}): "
                      f"{', '.join(tpu['cpu_operators']) or 'none'}", markup=False, soft_wrap=True)
        if tpu.get("mapped") or tpu.get("not_mapped"):
            console.print("  compiler: mapped " + ", ".join(f"{o['operator']} ×{o['count']}" for o in tpu["mapped"])
                          + ("; not mapped " + ", ".join(f"{o['operator']} ×{o['count']} ({o['status']})"
                                                         for o in tpu["not_mapped"]) if tpu["not_mapped"] else ""),
                          markup=False, soft_wrap=True)
        elif tpu.get("note"):
            console.print(f"  {tpu['note']}", markup=False, soft_wrap=True)
    console.print(f"method: {p.sees}; cannot see: {p.cannot_see}", markup=False, soft_wrap=True, style="dim")
    for w in p.warnings or []:
        console.print(f"[yellow]warning ({w['code']}):[/] {escape(w['message'])} — {escape(w.get('remedy') or '')}")
    for n in p.notes or []:
        console.print(f"note: {n}", markup=False, soft_wrap=True)
    print_warnings(console, result, run_dir=run_dir)
    if run_dir is not None:
        console.print(f"run stored in {run_dir} ({result.status})")


def jump_text(s: LayerErrorFigure) -> list:
    """Where the error first jumps and what explains it, one line each (the renderer's and the report's)."""
    fj = s.first_jump
    co = s.channel_outlier          # a free-form mapping: the channel that holds most of a per-tensor range
    lead = [f"outlier channel: {co['message']}"] if co else []
    if not fj:
        return lead + [f"no jump: no layer adds noise more than {s.jump_db or 0:g} dB below what 8-bit rounding "
                       "alone explains for it"]
    loc = fj.local
    where = "the model input" if fj.index is None else f"layer {fj.index} {fj.op}"
    tail = fj.which == "worst tenth"
    # getattr: the worst tenth's SQNR and interval are declared in LocalError on another branch
    value, ci = ((loc.worst_tenth_sqnr_db, loc.worst_tenth_ci) if tail
                 else (loc.local_sqnr_db, loc.local_ci))
    ref = fj.reference_db if fj.reference_db is not None else fj.best_sqnr_db
    out = [f"first jump: {where} ({str(fj.name)[:60]}): its own error at {_db(value)} dB SQNR"
           + (" for the worst tenth of the inputs" if tail else " for the typical input")
           + (f" (95% CI {_db(ci[0])}–{_db(ci[1])})" if ci else "")
           + f", more than {s.jump_db or 0:g} dB below the "
             f"{_db(ref)} dB that 8-bit rounding alone explains ("
           + (fj.reference or "its output rounded over its own observed range") + ")"]
    out += [f"  explained by: {why}" for why in fj.explained_by or
            (["the outlier channel above, upstream"] if co else
             ["no quantization parameter of this layer stands out: look at its inputs and its operator's arithmetic"])]
    return lead + out


def _db(v: Optional[float]) -> str:
    return "n/a" if v is None else f"{v:.1f}"


def print_layer_error(console, result: RunResult, run_dir=None) -> None:
    s = result.extra.layer_error
    base = (result.extra.baseline or {}).get("name")     # a free-form mapping: the FP32 model, as `model`
    t = _table(f"{result.model.name} against {base}, layer by layer ({s.n} inputs, "
               f"{result.runtime.kernels} kernels; dB, 95% CI across inputs)",
               ("#", "operator", "SQNR", "95% CI", "cosine", "output q.", "best", "local", "worst 10%", "saturated",
                "levels", "weights", "note"), left=("operator", "note"))

    def db(v):
        return "exact" if v is None else f"{v:.1f}"

    jump = s.first_jump
    for r in [s.input, *(s.layers or [])]:
        loc = r.local
        ci = f"{r.sqnr_ci[0]:.1f}–{r.sqnr_ci[1]:.1f}" if r.sqnr_ci and None not in r.sqnr_ci[:2] else "–"
        mark = "◀ first jump" if jump and r.index == jump.index and r.op == jump.op else ""
        w = (r.weights or {}).get("sqnr_db")       # a free-form mapping: the weights' own rounding
        # getattr: cosine, saturated_share and the worst tenth are declared on another branch (either reads them)
        cosine, saturated = r.cosine, r.saturated_share
        worst = loc.worst_tenth_sqnr_db
        t.add_row("in" if r.index is None else str(r.index), str(r.op), db(r.sqnr_db), ci,
                  "–" if cosine is None else f"{cosine:.5f}", db(r.output_sqnr_db),
                  "–" if r.best_sqnr_db is None else f"{r.best_sqnr_db:.1f}",
                  "–" if not loc else ("none" if loc.local_sqnr_db is None else f"{loc.local_sqnr_db:.1f}"),
                  "–" if not loc else ("none" if worst is None else f"{worst:.1f}"),
                  "–" if saturated is None else f"{100 * saturated:.2f}%",
                  "–" if r.levels_used is None else f"{min(256.0, r.levels_used):.0f}",
                  "–" if w is None else f"{w:.1f}",
                  ("by position; " if r.matched_by == "position" else "") + mark)
    console.print(t)
    for line in jump_text(s):
        console.print(line, markup=False, soft_wrap=True,
                      style="bold" if line.startswith(("first", "outlier")) else None)
    ld = s.largest_drop
    if ld and (not jump or ld.index != jump.index):
        console.print(f"largest drop: layer {ld.index} {ld.op}, {_db(ld.local.drop_db)} dB below its "
                      "input", markup=False)
    console.print("columns: output q. = the FP32 tensor rounded with the layer's own scale and zero point; best = "
                  "rounded over its observed range; local = the noise the layer adds itself (typical input); worst "
                  "10% = the same for the worst tenth of the inputs", markup=False, soft_wrap=True, style="dim")
    console.print(f"method: {s.method}", markup=False, soft_wrap=True, style="dim")
    for n in s.notes or []:
        console.print(f"note: {n}", markup=False, soft_wrap=True)
    print_warnings(console, result, run_dir=run_dir)
    if run_dir is not None:
        console.print(f"run stored in {run_dir} ({result.status})")


def print_layer_comparison(console, comp: dict, a: RunResult, b: RunResult) -> None:
    t = _table(f"{b.model.name} ({b.run_id}) against {a.model.name} ({a.run_id}), layer by layer, "
               f"{comp['label']}; B/A = median(B) / median(A), > 1: B slower",
               ("#", "operator", "A", "B", "B/A", "95% CI", "Holm p", "verdict", "runs"), left=("operator", "verdict"))
    for r in comp["rows"]:
        t.add_row("–" if r["index"] is None else str(r["index"]), r["op"], fmt.duration(r["a_s"]),
                  fmt.duration(r["b_s"]), f"{r['ratio']:.3f}", f"{r['ci_low']:.3f}–{r['ci_high']:.3f}",
                  fmt.p_value(r["p_holm"]).removeprefix("p=").replace("p<", "<"), r["verdict"],
                  f"{r['runs_b']}/{r['runs_a']}")
    console.print(t)
    console.print(sentence(comp), markup=False, soft_wrap=True)
    if comp["unmatched"]:
        console.print(f"not compared (in one run only, or a different operator): {', '.join(comp['unmatched'])}",
                      markup=False, soft_wrap=True)


__all__ = ["print_profile", "print_layer_error", "print_layer_comparison", "profile_table", "sum_line", "jump_text"]
