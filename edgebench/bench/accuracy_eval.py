"""Figures of an accuracy run from the outputs of two models (level 4, pure: no I/O).

Given the outputs of a baseline (e.g. FP32) and a candidate (e.g. INT8) on the
same labelled samples, this module composes :mod:`edgebench.stats.accuracy` and
:mod:`edgebench.stats.calibration` into the JSON-able sections stored under
``RunResult.extra["accuracy"]``; :mod:`edgebench.bench.accuracy` drives the
models and stores the run.

Outputs are read as probabilities when every value lies in [0, 1] and every row
sums to 1 within :data:`~edgebench.stats.calibration.PROB_SUM_TOLERANCE` (a
softmax head, dequantized for INT8); otherwise they are logits and softmax is
applied before confidences are taken. Which one was found is recorded.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from edgebench.report.format import p_value
from edgebench.results.figures.accuracy import Fidelity, Relative, Resolution, Scaling, Validation
from edgebench.stats.accuracy import (
    accuracy_report,
    difference_verdict,
    gate_check,
    min_detectable_difference,
    paired_comparison,
    summarize_correct,
)
from edgebench.stats.calibration import (
    PROB_SUM_TOLERANCE,
    TEMPERATURE_BOUNDS,
    apply_temperature,
    calibration_split,
    ece_estimate,
    expected_calibration_error,
    fit_temperature,
    output_fidelity,
)
from edgebench.stats.compare import holm

ALPHA = 0.05
POWER = 0.8
N_BINS = 15
TEMPERATURE_BOUND_REL = 1e-3  # a fitted T this close to a bound is reported as "at bound"


def plain(value):
    """numpy -> Python, tuples -> lists, non-finite floats -> None, recursively (strict JSON)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return [plain(v) for v in value.tolist()]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        v = float(value)
        return v if math.isfinite(v) else None
    return value


# ---------------------------------------------------------------- one model's outputs

@dataclass(frozen=True)
class ModelOutputs:
    """One model on one slice: raw float outputs (N, C), probabilities, predictions."""

    scores: np.ndarray      # dequantized outputs as returned, float64 (N, C)
    probs: np.ndarray       # probabilities (softmax applied when the outputs were logits)
    kind: str               # "probabilities" or "logits"
    pred: np.ndarray        # argmax, ties to the lower index
    conf: np.ndarray        # top-class probability


def outputs_kind(scores: np.ndarray) -> str:
    s = np.asarray(scores, dtype=np.float64)
    if s.size and s.min() >= 0.0 and s.max() <= 1.0 and np.all(np.abs(s.sum(axis=1) - 1.0) <= PROB_SUM_TOLERANCE):
        return "probabilities"
    return "logits"


def model_outputs(scores, kind: Optional[str] = None) -> ModelOutputs:
    """Wrap raw outputs (N, C); ``kind`` fixed by the caller (decided on the clean set) or guessed."""
    from scipy.special import softmax  # scipy takes ~0.5 s to import (measured): only when outputs are read

    s = np.asarray(scores, dtype=np.float64).reshape(len(scores), -1)
    kind = kind or outputs_kind(s)
    if kind == "probabilities":
        probs = np.clip(s, 0.0, 1.0)
    else:
        probs = softmax(s, axis=1)
    pred = s.argmax(axis=1)
    return ModelOutputs(scores=s, probs=probs, kind=kind, pred=pred, conf=probs[np.arange(len(s)), pred])


# ---------------------------------------------------------------- clean test set

def accuracy_section(out: ModelOutputs, labels, class_names: Optional[Sequence[str]], label: str) -> dict:
    return {**accuracy_report(out.scores, labels, class_names).to_dict(), "label": label}


def paired_section(base: ModelOutputs, cand: ModelOutputs, labels) -> tuple[dict, object]:
    y = np.asarray(labels)
    pc = paired_comparison(base.pred == y, cand.pred == y, base.pred, cand.pred)
    return pc.to_dict(), pc


def relative_section(pc) -> Relative:
    """Relative accuracy three ways, each with the sentence that states it unambiguously."""
    pct = pc.candidate_pct_of_baseline_correct
    inc = pc.error_increase_pct
    statements = [
        (f"the candidate gets {pct:.1f}% of the samples right that the baseline gets right "
         f"({pc.candidate_correct} vs {pc.baseline_correct} correct)") if pct is not None
        else "the baseline got no sample right: a percentage of its correct answers is undefined",
        f"{pc.diff_points:+.2f} accuracy points (candidate minus baseline; negative is a drop)",
        (f"{inc:+.1f}% errors ({pc.candidate_errors} vs {pc.baseline_errors})") if inc is not None
        else f"the baseline made no errors, the candidate {pc.candidate_errors}: relative increase undefined",
    ]
    return Relative(candidate_pct_of_baseline_correct=pct, diff_points=pc.diff_points, error_increase_pct=inc,
                    baseline_errors=pc.baseline_errors, candidate_errors=pc.candidate_errors, statements=statements)


def resolution_section(pc, alpha: float = ALPHA, power: float = POWER) -> Resolution:
    """Significance (McNemar with the paired interval) and resolution (MDD) side by side, one verdict.

    ``resolvable`` is True when a difference is resolved (significant and the interval
    excludes 0); ``warning`` is the statement when it is not.
    """
    psi = pc.discordant_proportion
    mdd = min_detectable_difference(pc.n, pc.baseline_accuracy, alpha=alpha, power=power,
                                    paired_discordance=psi if psi > 0 else None)
    v = difference_verdict(pc, alpha)
    ci = (f"{round(100 * pc.ci_level)}% CI {pc.diff_ci_low_points:+.2f} to {pc.diff_ci_high_points:+.2f} points, "
          f"McNemar exact {p_value(pc.mcnemar_p)}")
    found = "no true difference" if not math.isfinite(mdd) else f"a true difference of {100 * mdd:.2f} points"
    if v["verdict"] == "difference":
        side = "lower" if pc.diff_points < 0 else "higher"
        statement = (f"difference resolved: the candidate is {abs(pc.diff_points):.2f} points {side} ({ci}; "
                     f"{pc.flips_right_to_wrong} right-to-wrong vs {pc.flips_wrong_to_right} wrong-to-right flips)")
    elif v["verdict"] == "no-difference-resolved":
        statement = (f"no difference resolved ({ci}): the true difference may be anywhere in that interval; "
                     f"with n={pc.n:,} this test set finds {found} in {power:.0%} of repetitions, "
                     "smaller ones can go undetected")
    else:
        statement = (f"borderline: McNemar's test and the interval disagree at alpha={alpha:g} ({ci}); "
                     "no difference is claimed")
    method = ("McNemar, normal approximation (Connor 1987) with the observed discordance "
              f"{psi:.4f}" if psi > 0 else
              "two independent proportions (Cohen's h), conservative: no discordant samples observed")
    return Resolution(mdd_points=100.0 * mdd if math.isfinite(mdd) else None, resolvable_at_all=math.isfinite(mdd),
                      alpha=alpha, power=power, n=pc.n, method=method,
                      mdd_meaning=f"the true difference this test set detects with {power:.0%} power (two-sided "
                                  f"alpha={alpha:g}); a property of the test set, not of the observed difference",
                      observed_diff_points=pc.diff_points, verdict=v["verdict"], resolved=v["resolved"],
                      significant=v["significant"], ci_excludes_zero=v["ci_excludes_zero"], resolvable=v["resolved"],
                      statement=statement, warning=None if v["resolved"] else statement)


def _ece(out: ModelOutputs, labels, idx=None):
    probs = out.probs if idx is None else out.probs[idx]
    y = np.asarray(labels) if idx is None else np.asarray(labels)[idx]
    return expected_calibration_error(probs, y, n_bins=N_BINS)


def _ece_interval(out: ModelOutputs, labels, seed: int) -> dict:
    e = ece_estimate(out.probs, np.asarray(labels), n_bins=N_BINS, seed=seed)
    return {"ece_debiased": e.ece_debiased, "ece_ci_low": e.ci_low, "ece_ci_high": e.ci_high,
            "ece_ci_level": e.ci_level, "ece_null_expected": e.ece_null_expected, "ece_n_boot": e.n_boot,
            "ece_method": e.method}


def temperature_section(out: ModelOutputs, labels, fit_idx, eval_idx) -> Scaling:
    kind = "probs" if out.kind == "probabilities" else "logits"
    y = np.asarray(labels)
    t = fit_temperature(out.scores[fit_idx], y[fit_idx], kind=kind)
    scaled = apply_temperature(out.scores[eval_idx], t, kind=kind)
    at_bound = any(abs(t - b) <= TEMPERATURE_BOUND_REL * b for b in TEMPERATURE_BOUNDS)
    return Scaling(temperature=t, at_bound=at_bound, ece_eval_before=_ece(out, y, eval_idx).ece,
                   ece_eval_after=expected_calibration_error(scaled, y[eval_idx], n_bins=N_BINS).ece)


def calibration_section(base: ModelOutputs, cand: ModelOutputs, labels, fit_fraction: float,
                        seed: int) -> tuple[dict, dict]:
    """ECE of both models on the whole set, and temperature scaling fitted on a held-out split.

    Returns the section and the two ECEResult objects (for the reliability diagrams).
    """
    ece_b, ece_c = _ece(base, labels), _ece(cand, labels)
    fit_idx, eval_idx = calibration_split(len(labels), fit_fraction=fit_fraction, seed=seed)
    section = {
        "n_bins": N_BINS,
        "confidence": "top-class probability of the dequantized outputs (softmax applied to logits)",
        "ece_meaning": "ece: plug-in binned ECE (biased upward at small n); ece_debiased with ece_ci_low/high: "
                       "bias-corrected estimate and bootstrap interval (edgebench.stats.calibration.ece_estimate); "
                       "ece_null_expected: the plug-in ECE a perfectly calibrated model would show here by noise",
        "baseline": {**ece_b.to_dict(), **_ece_interval(base, labels, seed)},
        "candidate": {**ece_c.to_dict(), **_ece_interval(cand, labels, seed)},
        "temperature_scaling": {
            "fit_fraction": fit_fraction, "seed": seed, "n_fit": int(fit_idx.size), "n_eval": int(eval_idx.size),
            "method": "T minimizing the NLL of softmax(z / T) on the fit part; ECE before and after on the "
                      "other part (z: logits, or log-probabilities for softmax outputs)",
            "baseline": temperature_section(base, labels, fit_idx, eval_idx),
            "candidate": temperature_section(cand, labels, fit_idx, eval_idx),
        },
    }
    return section, {"baseline": ece_b, "candidate": ece_c}


def fidelity_section(base: ModelOutputs, cand: ModelOutputs) -> Fidelity:
    fig = output_fidelity(base.scores, cand.scores)
    fig.compared = "dequantized candidate outputs vs baseline outputs (output 0), clean test set"
    return fig


# ---------------------------------------------------------------- slices

def slice_row(name: str, family: Optional[str], severity: Optional[int], base: ModelOutputs,
              cand: ModelOutputs, labels) -> dict:
    """Per-slice figures: both accuracies (Wilson), the drop in points with its CI, McNemar p."""
    y = np.asarray(labels)
    cb, cc = base.pred == y, cand.pred == y
    pc = paired_comparison(cb, cc, base.pred, cand.pred)
    return {
        "slice": name, "family": family, "severity": severity, "n": pc.n,
        "baseline": summarize_correct(cb).to_dict(), "candidate": summarize_correct(cc).to_dict(),
        "drop_points": 0.0 - pc.diff_points,
        "drop_ci_low_points": 0.0 - pc.diff_ci_high_points, "drop_ci_high_points": 0.0 - pc.diff_ci_low_points,
        "mcnemar_p": pc.mcnemar_p, "agreement_rate": pc.agreement_rate,
        "flips_right_to_wrong": pc.flips_right_to_wrong, "flips_wrong_to_right": pc.flips_wrong_to_right,
    }


def adjust_slice_p_values(rows: list) -> None:
    """Add ``mcnemar_p_holm`` to every slice row: Holm's adjustment over all slices.

    With 30 slices, one McNemar p below 0.05 is expected by chance alone; the
    adjusted value says whether the worst slice stands out after that.
    """
    if not rows:
        return
    adjusted = holm([r["mcnemar_p"] for r in rows])
    for r, p in zip(rows, adjusted):
        r["mcnemar_p_holm"] = float(p)


def worst_slice(rows: list) -> Optional[dict]:
    """The slice with the largest drop (first on ties), or None without slices."""
    return max(rows, key=lambda r: r["drop_points"]) if rows else None


# ---------------------------------------------------------------- compression validation

def _threshold(value) -> Optional[float]:
    return None if value is None or not math.isfinite(float(value)) else float(value)


def _ci(low, high, unit: str) -> str:
    return f"[{low:+.2f}, {high:+.2f}] points" if unit == "points" else f"[{low:.4f}, {high:.4f}]"


def validation_section(acc_base: dict, acc_cand: dict, paired: dict, calibration: dict,
                       fidelity: Fidelity, edge_rows: list, max_drop_points, max_ece,
                       max_edge_drop_points, gate_on: str = "interval", gates_set: tuple = ()) -> Validation:
    """The compression-validation table: metric | baseline | candidate | threshold | acceptable?

    Each gated row is decided by :func:`edgebench.stats.accuracy.gate_check` on the
    figure's 95% interval (its upper bound must be within the threshold), or on the
    point estimate when ``gate_on="point"``; the edge-case row gates the slice whose
    drop has the highest upper bound (the largest point drop when gating on points),
    each slice's interval unadjusted for the number of slices; ``outcome`` says pass,
    fail or unresolved (the interval straddles the threshold: not passed). A threshold
    of None or infinity is "not set" and that row is not gated. ``passed`` is True when
    every gated row the user set is acceptable.

    Gates mean one thing (docs/check.md, "Gates"): a threshold the user set (``gates_set``: the
    option names ``max_drop_points``, ``max_ece``, ``max_edge_drop_points`` given on the command
    line) is a gate: its failure is in ``failed`` and the command exits 2. A default threshold the
    user never set is a warning: its failure (or an unresolved interval) is in
    ``default_exceeded``, each row says ``set_by`` (``user`` / ``default``).
    """
    rows = []
    bound = "point estimate" if gate_on == "point" else "upper 95% bound"

    def add(metric, base, cand, point, low, high, threshold, what, unit, option):
        thr = _threshold(threshold)
        g = gate_check(point, low, high, thr, gate_on)
        note = None
        if point is not None:
            note = f"{what} {point:+.2f} points" if unit == "points" else f"{what} {point:.4f}"
            if low is not None:
                note += f" (95% CI {_ci(low, high, unit)})"
            if g["outcome"] == "unresolved" or (gate_on == "point" and g["interval_straddles"]):
                note += f"; the interval straddles the limit {thr:g}: this test set cannot resolve the gate"
            if gate_on == "point" and g["acceptable"] is not None:
                note += "; gated on the POINT ESTIMATE (--gate-on point), not the interval"
        rows.append({"metric": metric, "baseline": base, "candidate": cand, "point": point, "ci_low": low,
                     "ci_high": high, **g, "unit": "fraction" if unit == "points" else "ece", "threshold": thr,
                     "rule": f"{what} ({bound}) <= threshold" + (" (accuracy points)" if unit == "points" else ""),
                     "note": note, "option": option, "set_by": "user" if option in gates_set else "default"})

    add("top-1 accuracy", acc_base["top1"]["accuracy"], acc_cand["top1"]["accuracy"], 0.0 - paired["diff_points"],
        0.0 - paired["diff_ci_high_points"], 0.0 - paired["diff_ci_low_points"], max_drop_points, "drop", "points",
        "max_drop_points")
    cb, cc = calibration["baseline"], calibration["candidate"]
    add(f"ECE ({N_BINS} bins, bias-corrected)", cb["ece_debiased"], cc["ece_debiased"], cc["ece_debiased"],
        cc["ece_ci_low"], cc["ece_ci_high"], max_ece, "candidate ECE", "ece", "max_ece")
    # the slice the gate acts on: the highest upper bound of the drop (or the largest point drop with
    # --gate-on point), so that every slice's interval is within the threshold when the gate passes
    worst = worst_slice(edge_rows) if gate_on == "point" else (
        max(edge_rows, key=lambda r: r["drop_ci_high_points"]) if edge_rows else None)
    if worst is None:
        rows.append({"metric": "worst edge-case slice, top-1", "baseline": None, "candidate": None, "point": None,
                     "ci_low": None, "ci_high": None, **gate_check(None, None, None, None, gate_on),
                     "unit": "fraction", "threshold": _threshold(max_edge_drop_points),
                     "rule": f"drop ({bound}) <= threshold (accuracy points)", "outcome": "not gated",
                     "note": "no edge cases run (--edge-cases or --edge-set)"})
    else:
        add(f"worst edge-case slice ({worst['slice']}), top-1", worst["baseline"]["accuracy"],
            worst["candidate"]["accuracy"], worst["drop_points"], worst["drop_ci_low_points"],
            worst["drop_ci_high_points"], max_edge_drop_points, "drop", "points", "max_edge_drop_points")
        holm = (f", Holm-adjusted over {len(edge_rows)} slices {p_value(worst['mcnemar_p_holm'])}"
                if "mcnemar_p_holm" in worst and len(edge_rows) > 1 else "")
        rows[-1]["note"] += f"; McNemar {p_value(worst['mcnemar_p'])}{holm}"
    if acc_base.get("top5") and acc_cand.get("top5"):
        rows.append(_ungated("top-5 accuracy", acc_base["top5"]["accuracy"], acc_cand["top5"]["accuracy"],
                             "fraction"))
    rows.append(_ungated("agreement (same top-1)", None, paired["agreement_rate"], "fraction",
                         note=f"McNemar exact {p_value(paired['mcnemar_p'])}"))
    rows.append(_ungated("output cosine similarity", None, fidelity.cosine_similarity, "ratio"))
    failed = [r["metric"] for r in rows if r["acceptable"] is False and r.get("set_by") == "user"]
    exceeded = [r["metric"] for r in rows if r["acceptable"] is False and r.get("set_by") == "default"]
    # the rows are assembled as dicts (gate_check's outcome merged into each), validated into GateRow here
    return Validation.model_validate(plain({
        "rows": rows, "passed": not failed, "failed": failed, "default_exceeded": exceeded, "gate_on": gate_on,
        "unresolved": [r["metric"] for r in rows if r["outcome"] == "unresolved"],
        "thresholds": {"max_drop_points": _threshold(max_drop_points), "max_ece": _threshold(max_ece),
                       "max_edge_drop_points": _threshold(max_edge_drop_points), "gate_on": gate_on}}))


def _ungated(metric: str, base, cand, unit: str, note: Optional[str] = None) -> dict:
    return {"metric": metric, "baseline": base, "candidate": cand, "point": None, "ci_low": None, "ci_high": None,
            "gate_on": None, "value": None, "acceptable": None, "outcome": "not gated", "interval_straddles": None,
            "unit": unit, "threshold": None, "rule": "not gated", "note": note}
