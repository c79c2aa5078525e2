"""An accuracy run on a terminal: both models, the paired comparison, calibration, edge cases, gates."""
from __future__ import annotations

from typing import Optional

from edgebench.cli.render import print_warnings


def _pct(x, d: int = 2) -> str:
    return "–" if x is None else f"{100 * x:.{d}f}%"


def _p(p: Optional[float]) -> str:
    if p is None:
        return "–"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _f(x: Optional[float], spec: str = ".4f") -> str:
    return "–" if x is None else format(x, spec)


def _n(x: Optional[int]) -> str:
    return "–" if x is None else f"{x:,}"


def _g(d, *keys):
    """``d[k1][k2]...``, None where a key (or a mapping on the way) is missing."""
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def _acc(s: Optional[dict]) -> str:
    if not s:
        return "–"
    return f"{_pct(s.get('accuracy'))} ({_pct(s.get('ci_low'), 1)}–{_pct(s.get('ci_high'), 1)})"


_PROVENANCE = {"matches": "the FP32 model the candidate's sidecar names (sha256 matches)",
               "same-source": "made from the same source model as the candidate (their sidecars' sha256)",
               "differs": "NOT the model the candidate's sidecar names (see the warning)",
               "unchecked": "not checked: the candidate has no sidecar naming its baseline or source"}


def provenance_line(a: dict) -> Optional[str]:
    """Whether the baseline is the one the candidate came from (``extra.accuracy.baseline.provenance``)."""
    prov = _g(a, "baseline", "provenance") or {}
    if not prov.get("status"):
        return None
    return f"baseline {_g(a, 'baseline', 'model', 'name')}: {_PROVENANCE.get(prov['status'], prov['status'])}"


def classes_line(result, k: int = 12) -> Optional[str]:
    """An image folder's mapping folder -> class index, and what decided it."""
    order = _g(result.scenario, "inputs", "class_order") or {}
    mapping = order.get("map") or {}
    if not mapping:
        return None
    pairs = [f"{name} → {i}" for name, i in mapping.items()]
    more = f", … ({len(pairs)} classes)" if len(pairs) > k else ""
    return f"classes (by {order.get('by')}): {', '.join(pairs[:k])}{more}"


def print_accuracy(console, result, run_dir) -> None:
    from rich.markup import escape
    from rich.table import Table

    a = (result.extra or {}).get("accuracy")
    if not a:  # a recovered run in which no sample was evaluated by both
        console.print(f"run {run_dir}: {result.status} ({escape(result.status_reason or '')}); no figures")
        return
    # every part is shown where the run has it (a run of an older edgebench may lack some)
    bp = str(_g(a, "baseline", "model", "precision") or "baseline").upper()
    cp = str(_g(a, "candidate", "model", "precision") or "candidate").upper()
    source = _g(result.scenario, "inputs", "source")
    n = _g(a, "paired", "n")
    t = Table(title=f"accuracy on {escape(str(source))} (n={_n(n)}, {result.label}; 95% Wilson CIs)",
              title_justify="left")
    for col in ("model", "where, kernels", "top-1 (95% CI)", "top-5 (95% CI)", "ECE bias-corr. (95% CI)",
                "ECE plug-in"):
        t.add_column(col)
    for role in ("baseline", "candidate"):
        m, acc, cal = a.get(role) or {}, _g(a, "accuracy", role) or {}, _g(a, "calibration", role) or {}
        rt = m.get("runtime") or {}
        how = rt.get("delegate") or rt.get("kernels")
        t.add_row(f"{escape(str(_g(m, 'model', 'name')))} ({role})", f"{m.get('board')}, {how}, {rt.get('threads')} thr",
                  _acc(acc.get("top1")), _acc(acc.get("top5")),
                  f"{_f(cal.get('ece_debiased'))} ({_f(cal.get('ece_ci_low'))}–{_f(cal.get('ece_ci_high'))})",
                  _f(cal.get("ece")))
    console.print(t)
    from edgebench.cli.render import memory_line

    for line in (provenance_line(a), classes_line(result), memory_line(result)):
        if line:
            console.print(line, markup=False, soft_wrap=True)
    pr, res = a.get("paired") or {}, a.get("resolution") or {}
    console.print(f"paired: agreement {_pct(pr.get('agreement_rate'), 1)}, flips right→wrong "
                  f"{pr.get('flips_right_to_wrong')}, wrong→right {pr.get('flips_wrong_to_right')}")
    console.print("relative: " + "; ".join(escape(s) for s in _g(a, "relative", "statements") or []))
    mdd = "no difference of any size" if res.get("mdd_points") is None else f"{res['mdd_points']:.2f} points"
    console.print(f"verdict: {escape(str(res.get('statement')))}")
    if res.get("power") is not None and res.get("alpha") is not None:
        console.print(f"resolution (a property of the test set): a true difference of {mdd} is detected with "
                      f"{res['power']:.0%} power (two-sided α={res['alpha']:g}, n={_n(res.get('n'))})")
    cal = _g(a, "calibration", "candidate") or {}
    if cal.get("ece_null_expected") is not None:
        console.print(f"calibration: a perfectly calibrated model would show a plug-in ECE of "
                      f"{cal['ece_null_expected']:.4f} here by sampling noise alone; the bias-corrected ECE removes "
                      "most of that bias")
    ts = _g(a, "calibration", "temperature_scaling") or {}
    if ts:
        console.print(f"calibration: temperature scaling fitted on {ts.get('n_fit')}, evaluated on {ts.get('n_eval')} "
                      f"(seed {ts.get('seed')}): " + "; ".join(
                          f"{r} T={_f((ts.get(r) or {}).get('temperature'), '.3g')}, ECE "
                          f"{_f((ts.get(r) or {}).get('ece_eval_before'))} → {_f((ts.get(r) or {}).get('ece_eval_after'))}"
                          for r in ("baseline", "candidate")))
    f = a.get("fidelity") or {}
    if f:
        console.print(f"fidelity ({cp} vs {bp} outputs): RMSE {_f(f.get('rmse'), '.4g')}, max abs error "
                      f"{_f(f.get('max_abs_error'), '.4g')}, cosine {_f(f.get('cosine_similarity'), '.6f')}, "
                      f"relative L2 {_f(f.get('relative_l2_error'), '.4g')}")
    per = list(zip(_g(a, "accuracy", "baseline", "per_class") or [], _g(a, "accuracy", "candidate", "per_class") or []))
    if per and len(per) <= 20:
        pc = Table(title="per-class top-1", title_justify="left")
        for col in ("class", "n", bp, cp):
            pc.add_column(col, justify="right")
        for b, c in per:
            name = b.get("class_name") if b.get("class_name") is not None else b.get("class_index")
            pc.add_row(escape(str(name)), _n(b.get("n")), _pct(b.get("accuracy"), 1), _pct(c.get("accuracy"), 1))
        console.print(pc)
    edge = a.get("edge_cases")
    if edge:
        et = Table(title=f"edge cases ({edge.get('source')}"
                         + (f", seed {edge.get('seed')}" if edge.get("source") == "builtin" else "") + ")",
                   title_justify="left")
        for col in ("slice", "n", bp, cp, "drop pt [95% CI]", "McNemar p", "Holm p"):
            et.add_column(col, justify="left" if col == "slice" else "right", no_wrap=True)
        for r in [edge.get("clean") or {}] + list(edge.get("slices") or []):
            mark = " ◀ worst" if r.get("slice") == edge.get("worst") else ""
            et.add_row(escape(str(r.get("slice"))) + mark, _n(r.get("n")), _pct(_g(r, "baseline", "accuracy"), 1),
                       _pct(_g(r, "candidate", "accuracy"), 1),
                       f"{_f(r.get('drop_points'), '+.2f')} [{_f(r.get('drop_ci_low_points'), '+.2f')}, "
                       f"{_f(r.get('drop_ci_high_points'), '+.2f')}]",
                       _p(r.get("mcnemar_p")), _p(r.get("mcnemar_p_holm")))
        console.print(et)
    v = a.get("validation") or {}
    on = "upper 95% bound" if v.get("gate_on") != "point" else "POINT ESTIMATE (not the interval)"
    vt = Table(title=f"compression validation (gates on the {on})", title_justify="left")
    for col in ("metric", bp, cp, "gated value", "threshold", "acceptable?"):
        vt.add_column(col)
    rows = v.get("rows") or []
    for r in rows:
        fmt = (lambda x: _f(x)) if r.get("unit") in ("ece", "ratio") else _pct
        points = r.get("unit") == "fraction"
        thr = "–" if r.get("threshold") is None else (
            f"drop ≤ {r['threshold']:g} pt" if points else f"≤ {r['threshold']:g}")
        gated = "–" if r.get("value") is None else (f"{r['value']:+.2f} pt" if points else f"{r['value']:.4f}")
        ok = {"pass": "[green]yes[/]", "fail": "[red]NO[/]", "unresolved": "[red]NO (unresolved)[/]",
              "not gated": "not gated"}.get(str(r.get("outcome")), escape(str(r.get("outcome"))))
        vt.add_row(escape(str(r.get("metric"))), fmt(r.get("baseline")), fmt(r.get("candidate")), gated, thr, ok)
    console.print(vt)
    for r in rows:
        if r.get("acceptable") is not None and r.get("note"):
            console.print(f"  {escape(str(r.get('metric')))}: {escape(str(r['note']))}")
    if "passed" in v:
        failed = ", ".join(str(x) for x in v.get("failed") or [])
        verdict = "[green]passed[/]" if v["passed"] else f"[red]FAILED[/] ({escape(failed)})"
        console.print(f"compression check {verdict}")
    if v.get("default_exceeded"):
        console.print(f"[yellow]default thresholds exceeded (warnings, not gates: not set on the command line):[/] "
                      f"{escape(', '.join(str(x) for x in v['default_exceeded']))}")
    print_warnings(console, result, run_dir=run_dir)
    console.print(f"[bold]claim:[/] {escape(result.extra.get('claim') or '')}")
    files = [str(x) for x in [a.get("predictions"), *(_g(a, "calibration", "diagrams") or {}).values()] if x]
    console.print(f"run stored in {run_dir} ({result.status}): " + ", ".join(["run.json", *files]))
