"""An accuracy run on a terminal: both models, the paired comparison, calibration, edge cases, gates."""
from __future__ import annotations

from typing import Optional

from rich.markup import escape
from rich.table import Table

from edgebench.cli.render import memory_line, print_warnings
from edgebench.results.figures.accuracy import (
    AccuracyFigure,
    AccuracySide,
    CalibrationFigure,
    ClassifierFigures,
    Proportion,
)
from edgebench.results.model import RunResult


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


def _acc(s: Proportion) -> str:
    if not s:
        return "–"
    return f"{_pct(s.accuracy)} ({_pct(s.ci_low, 1)}–{_pct(s.ci_high, 1)})"


_PROVENANCE = {"matches": "the FP32 model the candidate's sidecar names (sha256 matches)",
               "same-source": "made from the same source model as the candidate (their sidecars' sha256)",
               "differs": "NOT the model the candidate's sidecar names (see the warning)",
               "unchecked": "not checked: the candidate has no sidecar naming its baseline or source"}


def provenance_line(a: AccuracyFigure) -> Optional[str]:
    """Whether the baseline is the one the candidate came from (``extra.accuracy.baseline.provenance``)."""
    status = a.baseline.provenance.status
    if not status:
        return None
    return f"baseline {a.baseline.model.name}: {_PROVENANCE.get(status, status)}"


def classes_line(result: RunResult, k: int = 12) -> Optional[str]:
    """An image folder's mapping folder -> class index, and what decided it."""
    order = result.scenario.inputs.class_order
    mapping = order.map or {}
    if not mapping:
        return None
    pairs = [f"{name} → {i}" for name, i in mapping.items()]
    more = f", … ({len(pairs)} classes)" if len(pairs) > k else ""
    return f"classes (by {order.by}): {', '.join(pairs[:k])}{more}"


def print_accuracy(console, result: RunResult, run_dir) -> None:
    a = result.extra.accuracy
    if not a:  # a recovered run in which no sample was evaluated by both
        console.print(f"run {run_dir}: {result.status} ({escape(result.status_reason or '')}); no figures")
        return
    # every part is shown where the run has it (a run of an older edgebench may lack some)
    bp = str(a.baseline.model.precision or "baseline").upper()
    cp = str(a.candidate.model.precision or "candidate").upper()
    source = result.scenario.inputs.source
    n = a.paired.n
    t = Table(title=f"accuracy on {escape(str(source))} (n={_n(n)}, {result.label}; 95% Wilson CIs)",
              title_justify="left")
    for col in ("model", "where, kernels", "top-1 (95% CI)", "top-5 (95% CI)", "ECE bias-corr. (95% CI)",
                "ECE plug-in"):
        t.add_column(col)
    for role in ("baseline", "candidate"):
        m: AccuracySide = getattr(a, role)
        acc: ClassifierFigures = getattr(a.accuracy, role)
        cal: CalibrationFigure = getattr(a.calibration, role)
        rt = m.runtime
        how = rt.delegate or rt.kernels
        t.add_row(f"{escape(str(m.model.name))} ({role})", f"{m.board}, {how}, {rt.threads} thr",
                  _acc(acc.top1), _acc(acc.top5),
                  f"{_f(cal.ece_debiased)} ({_f(cal.ece_ci_low)}–{_f(cal.ece_ci_high)})", _f(cal.ece))
    console.print(t)
    for line in (provenance_line(a), classes_line(result), memory_line(result)):
        if line:
            console.print(line, markup=False, soft_wrap=True)
    pr, res = a.paired, a.resolution
    console.print(f"paired: agreement {_pct(pr.agreement_rate, 1)}, flips right→wrong "
                  f"{pr.flips_right_to_wrong}, wrong→right {pr.flips_wrong_to_right}")
    console.print("relative: " + "; ".join(escape(s) for s in a.relative.statements or []))
    mdd = "no difference of any size" if res.mdd_points is None else f"{res.mdd_points:.2f} points"
    console.print(f"verdict: {escape(str(res.statement))}")
    if res.power is not None and res.alpha is not None:
        console.print(f"resolution (a property of the test set): a true difference of {mdd} is detected with "
                      f"{res.power:.0%} power (two-sided α={res.alpha:g}, n={_n(res.n)})")
    null = a.calibration.candidate.ece_null_expected
    if null is not None:
        console.print(f"calibration: a perfectly calibrated model would show a plug-in ECE of "
                      f"{null:.4f} here by sampling noise alone; the bias-corrected ECE removes "
                      "most of that bias")
    ts = a.calibration.temperature_scaling
    if ts:
        console.print(f"calibration: temperature scaling fitted on {ts.n_fit}, evaluated on {ts.n_eval} "
                      f"(seed {ts.seed}): " + "; ".join(
                          f"{role} T={_f(sc.temperature, '.3g')}, ECE "
                          f"{_f(sc.ece_eval_before)} → {_f(sc.ece_eval_after)}"
                          for role, sc in (("baseline", ts.baseline), ("candidate", ts.candidate))))
    f = a.fidelity
    if f:
        console.print(f"fidelity ({cp} vs {bp} outputs): RMSE {_f(f.rmse, '.4g')}, max abs error "
                      f"{_f(f.max_abs_error, '.4g')}, cosine {_f(f.cosine_similarity, '.6f')}, "
                      f"relative L2 {_f(f.relative_l2_error, '.4g')}")
    per = list(zip(a.accuracy.baseline.per_class or [], a.accuracy.candidate.per_class or []))
    if per and len(per) <= 20:
        pc = Table(title="per-class top-1", title_justify="left")
        for col in ("class", "n", bp, cp):
            pc.add_column(col, justify="right")
        for b, c in per:
            name = b.class_name if b.class_name is not None else b.class_index
            pc.add_row(escape(str(name)), _n(b.n), _pct(b.accuracy, 1), _pct(c.accuracy, 1))
        console.print(pc)
    edge = a.edge_cases
    if edge:
        et = Table(title=f"edge cases ({edge.source}"
                         + (f", seed {edge.seed}" if edge.source == "builtin" else "") + ")",
                   title_justify="left")
        for col in ("slice", "n", bp, cp, "drop pt [95% CI]", "McNemar p", "Holm p"):
            et.add_column(col, justify="left" if col == "slice" else "right", no_wrap=True)
        for r in [edge.clean, *(edge.slices or [])]:
            mark = " ◀ worst" if r.slice == edge.worst else ""
            et.add_row(escape(str(r.slice)) + mark, _n(r.n), _pct(r.baseline.accuracy, 1),
                       _pct(r.candidate.accuracy, 1),
                       f"{_f(r.drop_points, '+.2f')} [{_f(r.drop_ci_low_points, '+.2f')}, "
                       f"{_f(r.drop_ci_high_points, '+.2f')}]",
                       _p(r.mcnemar_p), _p(r.mcnemar_p_holm))
        console.print(et)
    v = a.validation
    on = "upper 95% bound" if v.gate_on != "point" else "POINT ESTIMATE (not the interval)"
    vt = Table(title=f"compression validation (gates on the {on})", title_justify="left")
    for col in ("metric", bp, cp, "gated value", "threshold", "acceptable?"):
        vt.add_column(col)
    rows = v.rows or []
    for g in rows:
        show = _f if g.unit in ("ece", "ratio") else _pct
        points = g.unit == "fraction"
        thr = "–" if g.threshold is None else (f"drop ≤ {g.threshold:g} pt" if points else f"≤ {g.threshold:g}")
        gated = "–" if g.value is None else (f"{g.value:+.2f} pt" if points else f"{g.value:.4f}")
        ok = {"pass": "[green]yes[/]", "fail": "[red]NO[/]", "unresolved": "[red]NO (unresolved)[/]",
              "not gated": "not gated"}.get(str(g.outcome), escape(str(g.outcome)))
        vt.add_row(escape(str(g.metric)), show(g.baseline), show(g.candidate), gated, thr, ok)
    console.print(vt)
    for g in rows:
        if g.acceptable is not None and g.note:
            console.print(f"  {escape(str(g.metric))}: {escape(str(g.note))}")
    if "passed" in v.model_fields_set:
        failed = ", ".join(str(x) for x in v.failed or [])
        verdict = "[green]passed[/]" if v.passed else f"[red]FAILED[/] ({escape(failed)})"
        console.print(f"compression check {verdict}")
    default = v.default_exceeded
    if default:
        console.print(f"[yellow]default thresholds exceeded (warnings, not gates: not set on the command line):[/] "
                      f"{escape(', '.join(str(x) for x in default))}")
    print_warnings(console, result, run_dir=run_dir)
    console.print(f"[bold]claim:[/] {escape(result.extra.claim or '')}")
    files = [str(x) for x in [a.predictions, *(a.calibration.diagrams or {}).values()] if x]
    console.print(f"run stored in {run_dir} ({result.status}): " + ", ".join(["run.json", *files]))
