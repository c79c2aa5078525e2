"""The per-layer table of a profile run, as stored in ``extra.profile`` (level 4).

:func:`profile_section` turns a :class:`~edgebench.bench.profile.ProfileRun`'s repeats into
the section every reader of the run (the terminal, ``--json``, ``report``, ``compare``) uses:
one row per operator of the model (and per delegate node a method found), each with its
shapes, MACs, time and interval (:mod:`edgebench.bench.profile_summary`), its share of the
whole model, and instructions or cycles per MAC where the board has a counter of that kind;
the sum of the layers against the whole model; the roll-up by operator type; and, for an
Edge TPU model, which operators the compiler mapped to the TPU and the delegate's share.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from edgebench.bench.mac_rate import clock_basis
from edgebench.bench.profile_methods import FIXED_KEY, ISOLATED_WARNING, op_key
from edgebench.bench.profile_summary import per_mac, rollup, row_summary, sum_ratio
from edgebench.results.figures.profile import LayerTime, ProfileFigure

EDGETPU_OP = "edgetpu-custom-op"
#: the sum of the layers and the whole differ by more than this: a warning (isolated: expected)
SUM_TOLERANCE = 0.02


def _resolution(run) -> float:
    if run.method.name == "benchmark-model":
        return 1e-6                               # the tool reports whole microseconds
    if run.method.name == "device-counter":
        hz = next((r.info.get("counter_hz") for r in run.repeats if r.info.get("counter_hz")), None)
        return 1.0 / float(hz) if hz else 0.0
    return 1e-9


def _static_rows(run) -> list:
    rows = []
    shape = lambda i: list(run.report.tensors[i].shape) if i >= 0 else None  # noqa: E731
    for layer in run.report.layers:
        note = layer.note if layer.macs is None else ""
        rows.append({"key": op_key(layer.index), "index": layer.index, "op": layer.op,
                     "name": run.report.tensors[layer.outputs[0]].name if layer.outputs else "",
                     "input_shapes": [shape(i) for i in layer.inputs if i >= 0 and not run.report.tensors[i].constant],
                     "output_shapes": [list(s) for s in layer.output_shapes], "macs": layer.macs,
                     "in_sum": True, "where": "Edge TPU" if layer.op == EDGETPU_OP else "cpu", "note": note})
    return rows


def profile_section(run: Any) -> ProfileFigure:
    """``extra.profile`` of ``run`` (a :class:`~edgebench.bench.profile.ProfileRun`) from its repeats so far.
    The rows are assembled as plain dicts (the static table, then each method's notes and times) and
    validated into :class:`ProfileRow` at the end."""
    m = run.method
    res = _resolution(run)
    rows = _static_rows(run)
    known = {r["key"] for r in rows}
    for rep in run.repeats:
        for extra in rep.extra_rows:
            if extra["key"] not in known:
                known.add(extra["key"])
                rows.append({"input_shapes": [], "output_shapes": [], "macs": None, **extra})
    notes: list = []
    for rep in run.repeats[:1]:
        for index, why in (rep.info.get("fused") or {}).items():
            _mark(rows, op_key(index), why)
    for cut in run.cuts or []:
        if not cut.ok:
            _mark(rows, op_key(cut.index), cut.reason)
        elif cut.notes:
            _row(rows, op_key(cut.index))["note"] = "; ".join(cut.notes)
    label = run.result.label
    whole = row_summary([rep.whole for rep in run.repeats], res, label) if run.repeats else None
    basis = clock_basis(run.profile) if run.kind == "mcu" else {"available": False, "reason":
                                                                  "a Linux board's time is not a count of cycles"}
    use = basis if basis.get("available") else None
    figs: Dict[str, LayerTime] = {}             # each timed row's figure, with its repeats
    for r in rows:
        values = [rep.rows.get(r["key"]) for rep in run.repeats]
        fig = (row_summary([v for v in values if v is not None], res, label) if any(v is not None for v in values)
               else None)
        if fig is None:
            r.update(median_s=None, ci_low_s=None, ci_high_s=None, share=None, per_mac=None, per_mac_ci=None)
            if r["in_sum"] and r.get("note", "") == "" and run.repeats:
                r["note"] = "not timed by this method"
            r["in_sum"] = False
            continue
        r.update(median_s=fig.median_s, ci_low_s=fig.ci_low_s, ci_high_s=fig.ci_high_s, runs=fig.runs, n=fig.n,
                 statistic=fig.statistic)
        figs[r["key"]] = fig
        r["share"] = fig.median_s / whole.median_s if whole and whole.median_s and fig.median_s is not None else None
        r["per_mac"] = per_mac(fig.median_s, r.get("macs"), use)
        r["per_mac_ci"] = ([per_mac(fig.ci_low_s, r["macs"], use), per_mac(fig.ci_high_s, r["macs"], use)]
                           if r["per_mac"] is not None and fig.ci_low_s is not None else None)
    summed = [r for r in rows if r["in_sum"] and r["key"] in figs]
    ratio = sum_ratio([figs[r["key"]] for r in summed], whole, res, label) if whole else None
    total = sum(r["median_s"] for r in summed) if summed else None
    net = _net_ratio([figs[r["key"]] for r in summed], figs.get(FIXED_KEY), whole)
    warnings = []
    if m.name == "isolated":
        warnings.append({"code": "isolated-timings", "message": ISOLATED_WARNING,
                         "remedy": "on a Linux board with LiteRT's benchmark_model, --benchmark-model PATH times "
                                   "the operators inside the model"})
    if ratio and ratio.ci_low is not None and ratio.ci_high is not None and m.name != "isolated" and not (
            ratio.ci_low <= 1 + SUM_TOLERANCE and ratio.ci_high >= 1 - SUM_TOLERANCE):
        warnings.append({"code": "sum-differs", "message": f"the layers sum to {ratio.ratio:.3f} of the whole "
                         f"model (95% CI {ratio.ci_low:.3f}–{ratio.ci_high:.3f}), beyond ±{SUM_TOLERANCE:.0%}",
                         "remedy": "time between layers (the engine's or interpreter's own work) is not in any "
                                   "layer; see docs/profile.md"})
    if run.pool_note:
        notes.append(run.pool_note)
    if run.repeats and len(run.repeats) < 2:
        notes.append("one repeat: run-to-run variation not measured (use --repeat 3 or more)")
    whole_out = None if whole is None else LayerTime.model_validate(
        {k: v for k, v in whole.to_dict().items() if k != "per_repeat"})
    whole_s = whole_out.median_s if whole_out else None
    section = ProfileFigure(
        method=m.name, method_title=m.title, statistic=m.statistic, sees=m.sees, cannot_see=m.cannot_see,
        repeats=len(run.repeats), clock_resolution_s=res or None, layers=rows, by_op=rollup(rows, whole_s, use),
        sum_s=total, sum_ratio_net=net,
        per_mac=({k: basis[k] for k in ("unit", "label", "basis")} if use else
                 {"available": False, "reason": basis.get("reason")}),
        edgetpu=_edgetpu(run, rows, whole_s), warnings=warnings, notes=notes,
        methods_info=[rep.info for rep in run.repeats][:1])
    if whole_out is not None:       # nothing timed yet: the keys stay absent (read as empty figures)
        section.whole = whole_out
    if ratio is not None:
        section.sum_ratio = ratio
    return section


def _net_ratio(summed: List[LayerTime], fixed: Optional[LayerTime], whole: Optional[LayerTime]) -> Optional[dict]:
    """Isolated operators: (sum of the rows - (rows - 1) x the fixed cost) / whole, per repeat and of the
    medians: each operator ran as a model of its own and paid the per-invocation cost the whole model pays once."""
    if fixed is None or not whole or not whole.median_s or not summed or fixed.median_s is None:
        return None
    n = len(summed)
    reps = lambda fig: fig.per_repeat or []  # noqa: E731
    k = min([len(reps(whole)), len(reps(fixed))] + [len(reps(r)) for r in summed])
    per = []
    for j in range(k):
        w = reps(whole)[j].estimate_s
        if w:
            total = sum(reps(r)[j].estimate_s or 0.0 for r in summed)
            per.append((total - (n - 1) * (reps(fixed)[j].estimate_s or 0.0)) / w)
    point = (sum(r.median_s or 0.0 for r in summed) - (n - 1) * fixed.median_s) / whole.median_s
    return {"ratio": point, "fixed_s": fixed.median_s, "operators": n, "per_repeat": per,
            "low": min(per + [point]) if per else None, "high": max(per + [point]) if per else None,
            "method": "computed: (sum of the operators' medians - (operators - 1) x the fixed cost's median) / the "
                      "whole model's median; low/high: the same per repeat (and the point)"}


def _row(rows: list, key: str) -> dict:
    return next(r for r in rows if r["key"] == key)


def _mark(rows: list, key: str, why: str) -> None:
    r = _row(rows, key)
    r["note"] = why
    r["in_sum"] = False


def _edgetpu(run: Any, rows: list, whole_s: Optional[float]) -> Optional[dict]:
    """The Edge TPU partition: the delegate node(s) against the operators left on the CPU."""
    tpu = [r for r in rows if r["op"] == EDGETPU_OP]
    if not tpu:
        return None
    sidecar = run.result.model.sidecar or {}               # the quantize/compile sidecar: a free-form document
    compiled = sidecar.get("edgetpu_compile") or {}
    cpu = [r for r in rows if r["op"] != EDGETPU_OP and r["in_sum"]]
    t_tpu = sum(r["median_s"] or 0.0 for r in tpu)
    t_cpu = sum(r["median_s"] or 0.0 for r in cpu)
    w = whole_s
    return {"delegate_nodes": len(tpu), "cpu_operators": [r["op"] for r in cpu],
            "mapped": [o for o in compiled.get("operators", []) if o.get("mapped")],
            "not_mapped": [o for o in compiled.get("operators", []) if not o.get("mapped")],
            "compiler": {k: compiled.get(k) for k in ("compiler_version", "operations_on_edgetpu", "operations_on_cpu",
                                                      "on_chip_memory_used_bytes", "off_chip_memory_used_bytes")}
            if compiled else None,
            "delegate_s": t_tpu, "cpu_s": t_cpu,
            "delegate_share": t_tpu / w if w else None, "cpu_share": t_cpu / w if w else None,
            "note": None if compiled else "no edgetpu_compile sidecar beside the model: which operators the "
                                          "compiler mapped is not known here (edgebench compile records it)"}


__all__ = ["profile_section", "EDGETPU_OP", "SUM_TOLERANCE"]
