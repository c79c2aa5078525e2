"""An accuracy run on a terminal: both models, the paired comparison, calibration, edge cases, gates."""
from __future__ import annotations

from typing import Optional

from edgebench.cli.render import print_warnings


def _pct(x, d: int = 2) -> str:
    return "–" if x is None else f"{100 * x:.{d}f}%"


def _p(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _acc(s: Optional[dict]) -> str:
    if not s:
        return "–"
    return f"{_pct(s['accuracy'])} ({_pct(s['ci_low'], 1)}–{_pct(s['ci_high'], 1)})"


def print_accuracy(console, result, run_dir) -> None:
    from rich.markup import escape
    from rich.table import Table

    if "accuracy" not in (result.extra or {}):  # a recovered run in which no sample was evaluated by both
        console.print(f"run {run_dir}: {result.status} ({escape(result.status_reason or '')}); no figures")
        return
    a = result.extra["accuracy"]
    bp = a["baseline"]["model"]["precision"].upper()
    cp = a["candidate"]["model"]["precision"].upper()
    t = Table(title=f"accuracy on {escape(result.scenario['inputs']['source'])} "
                    f"(n={a['paired']['n']:,}, {result.label}; 95% Wilson CIs)", title_justify="left")
    for col in ("model", "where, kernels", "top-1 (95% CI)", "top-5 (95% CI)", "ECE bias-corr. (95% CI)",
                "ECE plug-in"):
        t.add_column(col)
    for role in ("baseline", "candidate"):
        m, acc, rt, cal = a[role], a["accuracy"][role], a[role]["runtime"], a["calibration"][role]
        how = rt.get("delegate") or rt.get("kernels")
        t.add_row(f"{escape(m['model']['name'])} ({role})", f"{m['board']}, {how}, {rt.get('threads')} thr",
                  _acc(acc["top1"]), _acc(acc["top5"]),
                  f"{cal['ece_debiased']:.4f} ({cal['ece_ci_low']:.4f}–{cal['ece_ci_high']:.4f})",
                  f"{cal['ece']:.4f}")
    console.print(t)
    pr, res = a["paired"], a["resolution"]
    console.print(f"paired: agreement {_pct(pr['agreement_rate'], 1)}, flips right→wrong "
                  f"{pr['flips_right_to_wrong']}, wrong→right {pr['flips_wrong_to_right']}")
    console.print("relative: " + "; ".join(escape(s) for s in a["relative"]["statements"]))
    mdd = "no difference of any size" if res["mdd_points"] is None else f"{res['mdd_points']:.2f} points"
    console.print(f"verdict: {escape(res['statement'])}")
    console.print(f"resolution (a property of the test set): a true difference of {mdd} is detected with "
                  f"{res['power']:.0%} power (two-sided α={res['alpha']:g}, n={res['n']:,})")
    cal = a["calibration"]["candidate"]
    console.print(f"calibration: a perfectly calibrated model would show a plug-in ECE of "
                  f"{cal['ece_null_expected']:.4f} here by sampling noise alone; the bias-corrected ECE removes "
                  "most of that bias")
    ts = a["calibration"]["temperature_scaling"]
    console.print(f"calibration: temperature scaling fitted on {ts['n_fit']}, evaluated on {ts['n_eval']} "
                  f"(seed {ts['seed']}): " + "; ".join(
                      f"{r} T={ts[r]['temperature']:.3g}, ECE {ts[r]['ece_eval_before']:.4f} → "
                      f"{ts[r]['ece_eval_after']:.4f}" for r in ("baseline", "candidate")))
    f = a["fidelity"]
    rel = "–" if f["relative_l2_error"] is None else f"{f['relative_l2_error']:.4g}"
    console.print(f"fidelity ({cp} vs {bp} outputs): RMSE {f['rmse']:.4g}, max abs error {f['max_abs_error']:.4g}, "
                  f"cosine {f['cosine_similarity']:.6f}, relative L2 {rel}")
    per = list(zip(a["accuracy"]["baseline"]["per_class"], a["accuracy"]["candidate"]["per_class"]))
    if len(per) <= 20:
        pc = Table(title="per-class top-1", title_justify="left")
        for col in ("class", "n", bp, cp):
            pc.add_column(col, justify="right")
        for b, c in per:
            pc.add_row(escape(str(b["class_name"] if b["class_name"] is not None else b["class_index"])),
                       str(b["n"]), _pct(b["accuracy"], 1), _pct(c["accuracy"], 1))
        console.print(pc)
    edge = a.get("edge_cases")
    if edge:
        et = Table(title=f"edge cases ({edge['source']}"
                         + (f", seed {edge['seed']}" if edge["source"] == "builtin" else "") + ")",
                   title_justify="left")
        for col in ("slice", "n", bp, cp, "drop pt [95% CI]", "McNemar p", "Holm p"):
            et.add_column(col, justify="left" if col == "slice" else "right", no_wrap=True)
        for r in [edge["clean"]] + edge["slices"]:
            mark = " ◀ worst" if r["slice"] == edge["worst"] else ""
            et.add_row(escape(r["slice"]) + mark, f"{r['n']:,}", _pct(r["baseline"]["accuracy"], 1),
                       _pct(r["candidate"]["accuracy"], 1),
                       f"{r['drop_points']:+.2f} [{r['drop_ci_low_points']:+.2f}, {r['drop_ci_high_points']:+.2f}]",
                       _p(r["mcnemar_p"]), "–" if "mcnemar_p_holm" not in r else _p(r["mcnemar_p_holm"]))
        console.print(et)
    v = a["validation"]
    on = "upper 95% bound" if v.get("gate_on") != "point" else "POINT ESTIMATE (not the interval)"
    vt = Table(title=f"compression validation (gates on the {on})", title_justify="left")
    for col in ("metric", bp, cp, "gated value", "threshold", "acceptable?"):
        vt.add_column(col)
    for r in v["rows"]:
        fmt = (lambda x: "–" if x is None else f"{x:.4f}") if r["unit"] in ("ece", "ratio") else _pct
        points = r["unit"] == "fraction"
        thr = "–" if r["threshold"] is None else (
            f"drop ≤ {r['threshold']:g} pt" if points else f"≤ {r['threshold']:g}")
        gated = "–" if r["value"] is None else (f"{r['value']:+.2f} pt" if points else f"{r['value']:.4f}")
        ok = {"pass": "[green]yes[/]", "fail": "[red]NO[/]", "unresolved": "[red]NO (unresolved)[/]",
              "not gated": "not gated"}[r["outcome"]]
        vt.add_row(escape(r["metric"]), fmt(r["baseline"]), fmt(r["candidate"]), gated, thr, ok)
    console.print(vt)
    for r in v["rows"]:
        if r["acceptable"] is not None and r["note"]:
            console.print(f"  {escape(r['metric'])}: {escape(r['note'])}")
    verdict = "[green]passed[/]" if v["passed"] else f"[red]FAILED[/] ({escape(', '.join(v['failed']))})"
    console.print(f"compression check {verdict}")
    if v.get("default_exceeded"):
        console.print(f"[yellow]default thresholds exceeded (warnings, not gates: not set on the command line):[/] "
                      f"{escape(', '.join(v['default_exceeded']))}")
    print_warnings(console, result)
    console.print(f"[bold]claim:[/] {escape(result.extra.get('claim') or '')}")
    console.print(f"run stored in {run_dir} ({result.status}): run.json, {a['predictions']}, "
                  + ", ".join(a["calibration"]["diagrams"].values()))
