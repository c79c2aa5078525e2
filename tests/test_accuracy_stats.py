"""Accuracy, paired comparison, resolution, calibration and fidelity against hand-worked values."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import require_module

from edgebench.bench.accuracy_eval import resolution_section
from edgebench.errors import DataError, UsageError
from edgebench.results.figures.accuracy import Fidelity
from edgebench.stats.accuracy import (
    accuracy_report,
    difference_verdict,
    gate_check,
    mcnemar_exact_p,
    min_detectable_difference,
    paired_comparison,
    per_class_accuracy,
    summarize_correct,
    topk_accuracy,
    wilson_interval,
)
from edgebench.stats.calibration import (
    apply_temperature,
    calibration_split,
    ece_estimate,
    expected_calibration_error,
    fit_temperature,
    output_fidelity,
    reliability_diagram,
)

Z975 = 1.959963984540054  # z_{0.975}
Z80 = 0.8416212335729143  # z_{0.80}


# ---------------------------------------------------------------- Wilson

def test_wilson_interval_hand_worked():
    # k = 8, n = 10, p = 0.8, z = 1.959964, z^2 = 3.841459
    # denominator  d = 1 + z^2/n                      = 1.3841459
    # centre       (p + z^2/(2n)) / d = 0.9920729 / d = 0.7167408
    # half-width   z sqrt(p(1-p)/n + z^2/(4n^2)) / d
    #              = 1.959964 * sqrt(0.016 + 0.0096036) / d = 1.959964 * 0.1600114 / d = 0.2265784
    # interval     (0.7167408 - 0.2265784, 0.7167408 + 0.2265784) = (0.4901624, 0.9433192)
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.49016, abs=1e-5)
    assert high == pytest.approx(0.94332, abs=1e-5)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)


def test_wilson_matches_model_card_and_edges():
    # models/digits/model_card.md: 529/540 -> 0.9639 - 0.9886
    low, high = wilson_interval(529, 540)
    assert (round(low, 4), round(high, 4)) == (0.9639, 0.9886)
    low, high = wilson_interval(0, 10)
    assert low == 0.0 and 0.0 < high < 0.35
    low, high = wilson_interval(10, 10)
    assert high == pytest.approx(1.0) and 0.65 < low < 1.0


@pytest.mark.parametrize("k, n, level", [(3, 0, 0.95), (11, 10, 0.95), (-1, 10, 0.95), (5, 10, 1.5)])
def test_wilson_bad_arguments(k, n, level):
    with pytest.raises(UsageError):
        wilson_interval(k, n, level)


# ---------------------------------------------------------------- top-k and summaries

def test_topk_with_ties_follows_argmax():
    scores = np.array([
        [0.1, 0.7, 0.2],   # label 1: top-1 right
        [0.5, 0.5, 0.0],   # tie 0/1, label 1: argmax says 0 -> top-1 wrong, top-2 right
        [0.5, 0.5, 0.0],   # tie, label 0: top-1 right
        [0.6, 0.3, 0.1],   # label 2: top-2 wrong
    ])
    labels = np.array([1, 1, 0, 2])
    assert topk_accuracy(scores, labels, 1).tolist() == [True, False, True, False]
    assert np.array_equal(topk_accuracy(scores, labels, 1), scores.argmax(axis=1) == labels)
    assert topk_accuracy(scores, labels, 2).tolist() == [True, True, True, False]
    assert topk_accuracy(scores, labels, 3).all()
    with pytest.raises(UsageError):
        topk_accuracy(scores, labels, 4)
    with pytest.raises(DataError):
        topk_accuracy(scores, np.array([1, 1, 0, 3]), 1)


def test_accuracy_report_top5_only_above_five_classes():
    rng = np.random.default_rng(0)
    labels = np.arange(20) % 10
    scores = rng.random((20, 10))
    scores[np.arange(10), labels[:10]] = 2.0  # first ten right
    report = accuracy_report(scores, labels, class_names=[f"c{i}" for i in range(10)])
    assert report.top1.correct >= 10 and report.top1.n == 20
    assert report.top5 is not None and report.top5.correct >= report.top1.correct
    assert len(report.per_class) == 10 and report.per_class[3].class_name == "c3"
    assert all(c.n == 2 for c in report.per_class)
    json.dumps(report.to_dict())
    five = accuracy_report(rng.random((8, 5)), np.arange(8) % 5)
    assert five.top5 is None


def test_summary_and_per_class_with_empty_class():
    correct = np.array([True, True, False, True])
    s = summarize_correct(correct)
    assert (s.n, s.correct, s.accuracy) == (4, 3, 0.75)
    assert (s.ci_low, s.ci_high) == pytest.approx(wilson_interval(3, 4))
    per = per_class_accuracy(correct, np.array([0, 0, 1, 1]), num_classes=3)
    assert [(c.n, c.correct) for c in per] == [(2, 2), (2, 1), (0, 0)]
    assert per[2].accuracy is None and per[2].ci_low is None
    assert per[1].accuracy == 0.5


# ---------------------------------------------------------------- McNemar and paired comparison

def test_mcnemar_exact_hand_worked():
    # b = 10, c = 2, n = 12: p = 2 P(X <= 2 | 12, 0.5) = 2 (1 + 12 + 66) / 4096 = 158 / 4096
    assert mcnemar_exact_p(10, 2) == pytest.approx(0.0385742, abs=1e-7)
    assert mcnemar_exact_p(2, 10) == pytest.approx(158 / 4096)
    assert mcnemar_exact_p(0, 0) == 1.0
    assert mcnemar_exact_p(5, 5) == 1.0
    # b = 5, c = 0: 2 * (1/2)^5 = 0.0625
    assert mcnemar_exact_p(5, 0) == pytest.approx(0.0625)


def _paired(a, b, c, d):
    """Correctness vectors for a paired table: a both right, b baseline only, c candidate only, d none."""
    base = np.array([True] * a + [True] * b + [False] * c + [False] * d)
    cand = np.array([True] * a + [False] * b + [True] * c + [False] * d)
    return base, cand


def test_paired_comparison_counts_and_relative_accuracy():
    base, cand = _paired(80, 10, 2, 8)  # n = 100, baseline 90 right, candidate 82
    pred_base = np.where(base, 1, 0)
    pred_cand = pred_base.copy()
    pred_cand[80:92] = 1 - pred_cand[80:92]  # the 12 flips change the label
    r = paired_comparison(base, cand, pred_base, pred_cand)
    assert (r.flips_right_to_wrong, r.flips_wrong_to_right) == (10, 2)
    assert r.mcnemar_p == pytest.approx(158 / 4096)
    assert r.agreement_rate == pytest.approx(0.88)
    assert r.diff_points == pytest.approx(-8.0)              # 82% - 90%
    assert r.candidate_pct_of_baseline_correct == pytest.approx(100 * 82 / 90)  # 91.11%
    assert (r.baseline_errors, r.candidate_errors) == (10, 18)
    assert r.error_increase_pct == pytest.approx(80.0)       # (18 - 10) / 10
    assert r.discordant_proportion == pytest.approx(0.12)
    assert r.diff_ci_low_points < -8.0 < r.diff_ci_high_points < 0.0
    d = r.to_dict()
    json.dumps(d)
    assert d["flips_right_to_wrong"] == 10


def test_paired_difference_ci_matches_published_newcombe():
    # Fagerland, Lydersen & Laake, Statistical Analysis of Contingency Tables (ch. 8),
    # Cavo et al. 2012 table [[59, 6], [16, 80]]: Newcombe square-and-add CI of
    # p1+ - p+1 = -0.0621 is (-0.1186, -0.0046). Candidate - baseline is the mirror.
    base, cand = _paired(59, 6, 16, 80)
    r = paired_comparison(base, cand)
    assert r.diff_points == pytest.approx(100 * 10 / 161)
    assert r.diff_ci_low_points == pytest.approx(0.46, abs=0.01)
    assert r.diff_ci_high_points == pytest.approx(11.86, abs=0.01)


def test_relative_accuracy_edge_cases():
    r = paired_comparison(*_paired(10, 0, 0, 0))          # both perfect
    assert r.error_increase_pct == 0.0 and r.mcnemar_p == 1.0 and r.agreement_rate is None
    r = paired_comparison(*_paired(8, 2, 0, 0))           # baseline perfect, candidate 2 errors
    assert r.error_increase_pct is None and r.candidate_errors == 2
    r = paired_comparison(*_paired(0, 0, 3, 7))           # baseline never right
    assert r.candidate_pct_of_baseline_correct is None
    with pytest.raises(DataError):
        paired_comparison(np.ones(3, bool), np.ones(4, bool))
    with pytest.raises(UsageError):
        paired_comparison(np.ones(3, bool), np.ones(3, bool), pred_base=np.zeros(3))


# ---------------------------------------------------------------- minimum detectable difference

def test_mdd_two_proportion_hand_worked():
    # h = (z_.975 + z_.80) sqrt(2 / n) = 2.801585 * sqrt(2 / 540) = 2.801585 * 0.0608581 = 0.170499
    # asin(sqrt(0.98)) = asin(0.9899495) = 1.428899; minus h/2 -> 1.343650
    # sin^2(1.343650) = 0.949286  ->  mdd = 0.98 - 0.949286 = 0.030714
    h = (Z975 + Z80) * math.sqrt(2 / 540)
    assert h == pytest.approx(0.170499, abs=1e-6)
    assert min_detectable_difference(540, 0.98) == pytest.approx(0.030714, abs=2e-5)


def test_mdd_paired_mcnemar_hand_worked():
    # psi = 0.1, delta = 0.05: n = (1.959964 sqrt(0.1) + 0.841621 sqrt(0.1 - 0.0025))^2 / 0.0025
    #   = (0.619795 + 0.262798)^2 / 0.0025 = 0.882593^2 / 0.0025 = 311.59 samples
    n_needed = (Z975 * math.sqrt(0.1) + Z80 * math.sqrt(0.0975)) ** 2 / 0.0025
    assert n_needed == pytest.approx(311.59, abs=0.01)
    # so 312 samples resolve just under 0.05, and 311 just over
    assert 0.0495 < min_detectable_difference(312, 0.9, paired_discordance=0.1) < 0.05
    assert 0.05 < min_detectable_difference(311, 0.9, paired_discordance=0.1) < 0.0505


def test_mdd_monotone_and_edge_cases():
    ns = [50, 100, 200, 540, 1000, 5000, 20000]
    unpaired = [min_detectable_difference(n, 0.9) for n in ns]
    paired = [min_detectable_difference(n, 0.9, paired_discordance=0.05) for n in ns]
    assert all(a > b for a, b in zip(unpaired, unpaired[1:]))
    # psi = 0.05: below ~150 samples even a difference of psi (all flips one way) is not resolved
    assert math.isinf(paired[0]) and math.isinf(paired[1])
    assert all(a > b for a, b in zip(paired[2:], paired[3:]))
    assert paired[3] < unpaired[3]  # few disagreements: pairing resolves more
    assert min_detectable_difference(540, 0.98, paired_discordance=0.0) == min_detectable_difference(540, 0.98)
    assert math.isinf(min_detectable_difference(5, 0.9, paired_discordance=0.02))
    assert math.isinf(min_detectable_difference(2, 0.05))
    with pytest.raises(UsageError):
        min_detectable_difference(100, 1.2)
    with pytest.raises(UsageError):
        min_detectable_difference(0, 0.9)


def _compared(a: int, b: int, c: int, d: int):
    return paired_comparison(*_paired(a, b, c, d))


def test_15_vs_5_flips_is_a_resolved_difference():
    # n = 500: 15 right->wrong, 5 wrong->right. McNemar exact p = 2 P(X <= 5 | 20, 0.5) = 0.0414; the paired
    # interval of the difference excludes 0. The MDD at 80% power (2.5 points) is larger than the observed
    # 2 points, which the old rule read as "not resolvable": the difference WAS found, so it is resolved.
    pc = _compared(460, 15, 5, 20)
    assert pc.mcnemar_p == pytest.approx(0.0414, abs=1e-4)
    assert pc.diff_ci_high_points < 0 and pc.diff_points == pytest.approx(-2.0)
    res = resolution_section(pc)
    assert res.mdd_points > abs(pc.diff_points)  # smaller than the MDD, and still found
    assert res.verdict == "difference" and res.resolvable is True and res.significant is True
    assert res.statement.startswith("difference resolved: the candidate is 2.00 points lower")
    assert "p=0.041" in res.statement and res.warning is None
    assert "not resolv" not in res.statement and "do not claim" not in res.statement


def test_57_vs_47_flips_is_no_resolved_difference():
    # n = 1,000: 57 vs 47 flips, p = 0.378; the interval (-3.04 to +1.02 points) contains 0
    pc = _compared(880, 57, 47, 16)
    assert pc.mcnemar_p == pytest.approx(0.3776, abs=1e-4)
    assert pc.diff_ci_low_points < 0 < pc.diff_ci_high_points
    res = resolution_section(pc)
    assert res.verdict == "no-difference-resolved" and res.resolvable is False
    assert res.significant is False and res.ci_excludes_zero is False
    assert res.statement.startswith("no difference resolved (95% CI -3.04 to +1.02 points")
    assert f"{res.mdd_points:.2f} points in 80% of repetitions" in res.statement
    assert res.warning == res.statement


def test_verdict_never_contradicts_test_and_interval():
    rng = np.random.default_rng(5)
    seen = set()
    for _ in range(300):
        n = int(rng.integers(20, 400))
        b, c = (int(v) for v in rng.integers(0, n // 4 + 1, 2))
        a = int(rng.integers(0, n - b - c + 1))
        pc = _compared(a, b, c, n - a - b - c)
        v = difference_verdict(pc)
        sig, excl = pc.mcnemar_p < 0.05, pc.diff_ci_low_points > 0 or pc.diff_ci_high_points < 0
        assert v["verdict"] == ("difference" if sig and excl else "no-difference-resolved" if not (sig or excl)
                                else "borderline")
        assert v["resolved"] == (sig and excl)
        seen.add(v["verdict"])
    assert {"difference", "no-difference-resolved"} <= seen


# ---------------------------------------------------------------- gates on intervals

def test_gate_check_acts_on_the_upper_bound():
    assert gate_check(0.5, -0.2, 0.9, 1.0)["outcome"] == "pass"
    unresolved = gate_check(0.5, -0.2, 2.5, 1.0)      # point within, interval reaches beyond
    assert unresolved["outcome"] == "unresolved" and unresolved["acceptable"] is False
    assert unresolved["value"] == 2.5 and unresolved["interval_straddles"] is True
    assert gate_check(1.5, 1.2, 1.9, 1.0)["outcome"] == "fail"
    point = gate_check(0.5, -0.2, 2.5, 1.0, gate_on="point")
    assert point["outcome"] == "pass" and point["gate_on"] == "point" and point["interval_straddles"] is True
    assert gate_check(0.5, 0.1, 0.9, None)["outcome"] == "not gated"
    with pytest.raises(UsageError):
        gate_check(0.5, 0.1, 0.9, 1.0, gate_on="median")


def test_drop_gate_fails_when_the_interval_reaches_past_max_drop():
    # 57 vs 47 flips on 1,000 samples: a drop of exactly 1.0 point, its interval reaching 3.04 points.
    # The old point-estimate gate passed --max-drop 1; the interval gate does not, and says why.
    def validation_section(*args, **kw):   # every threshold given by the user: gates (a default one warns)
        from edgebench.bench.accuracy_eval import validation_section as v

        return v(*args, gates_set=("max_drop_points", "max_ece", "max_edge_drop_points"), **kw)

    pc = _compared(880, 57, 47, 16)
    paired = pc.to_dict() | {"agreement_rate": 0.9}
    acc = {"top1": {"accuracy": 0.9}}
    cal = {r: {"ece_debiased": 0.01, "ece_ci_low": 0.0, "ece_ci_high": 0.02} for r in ("baseline", "candidate")}
    v = validation_section(acc, acc, paired, cal, Fidelity(cosine_similarity=1.0), [], 1.0, 0.05, 3.0)
    top1 = v.rows[0]
    assert top1.point == pytest.approx(1.0) and top1.value == pytest.approx(3.038, abs=1e-3)
    assert top1.outcome == "unresolved" and v.passed is False and v.failed == ["top-1 accuracy"]
    assert "cannot resolve the gate" in top1.note and v.unresolved == ["top-1 accuracy"]
    from edgebench.bench.accuracy_eval import validation_section as by_default  # no threshold given
    d = by_default(acc, acc, paired, cal, Fidelity(cosine_similarity=1.0), [], 1.0, 0.05, 3.0)
    assert d.passed is True and d.failed == [] and d.default_exceeded == ["top-1 accuracy"]
    assert d.rows[0].set_by == "default" and top1.set_by == "user"
    p = validation_section(acc, acc, paired, cal, Fidelity(cosine_similarity=1.0), [], 1.0, 0.05, 3.0, gate_on="point")
    assert p.passed is True and p.gate_on == "point" and p.thresholds["gate_on"] == "point"
    assert "POINT ESTIMATE" in p.rows[0].note
    # the edge gate acts on the slice with the highest upper bound, not the largest point drop
    def row(name, drop, low, high):
        return {"slice": name, "baseline": {"accuracy": 0.9}, "candidate": {"accuracy": 0.9 - drop / 100},
                "drop_points": drop, "drop_ci_low_points": low, "drop_ci_high_points": high, "mcnemar_p": 0.5}
    rows = [row("big", 2.0, 1.5, 2.5), row("small", 1.0, -2.0, 4.0)]
    v = validation_section(acc, acc, paired, cal, Fidelity(cosine_similarity=1.0), rows, math.inf, math.inf, 3.0)
    gated = v.rows[2]
    assert gated.metric.startswith("worst edge-case slice (small)") and gated.outcome == "unresolved"
    v = validation_section(acc, acc, paired, cal, Fidelity(cosine_similarity=1.0), rows, math.inf, math.inf, 3.0,
                           gate_on="point")
    assert v.rows[2].metric.startswith("worst edge-case slice (big)") and v.rows[2].outcome == "pass"
    # the ECE gate straddling its limit is unresolved, not silently passed or failed
    cal["candidate"] = {"ece_debiased": 0.04, "ece_ci_low": 0.01, "ece_ci_high": 0.09}
    v = validation_section(acc, acc, paired, cal, Fidelity(cosine_similarity=1.0), [], math.inf, 0.05, 3.0)
    assert v.rows[1].outcome == "unresolved" and v.failed == [v.rows[1].metric]


# ---------------------------------------------------------------- ECE

def test_ece_constructed_example():
    probs = np.array([
        [0.90, 0.05, 0.05],  # conf 0.90, right  -> bin 13 (0.8667, 0.9333]
        [0.92, 0.04, 0.04],  # conf 0.92, wrong  -> bin 13
        [0.20, 0.70, 0.10],  # conf 0.70, right  -> bin 10 (0.6667, 0.7333]
        [0.50, 0.30, 0.20],  # conf 0.50, wrong  -> bin 7  (0.4667, 0.5333]
        [0.10, 0.10, 0.80],  # conf 0.80, right  -> bin 11 (0.7333, 0.8000]: right edge is inclusive
        [1.00, 0.00, 0.00],  # conf 1.00, right  -> bin 14 (0.9333, 1.0]
    ])
    labels = np.array([0, 1, 1, 2, 2, 0])
    # bin 13: |0.5 - 0.91| = 0.41, weight 2/6; bin 10: 0.3; bin 7: 0.5; bin 11: 0.2; bin 14: 0
    # ECE = (2 * 0.41 + 0.3 + 0.5 + 0.2 + 0) / 6 = 1.82 / 6 = 0.303333
    r = expected_calibration_error(probs, labels)
    assert r.ece == pytest.approx(1.82 / 6)
    assert r.n_bins == 15 and len(r.bins) == 15
    counts = {i: b["count"] for i, b in enumerate(r.bins) if b["count"]}
    assert counts == {7: 1, 10: 1, 11: 1, 13: 2, 14: 1}
    b13 = r.bins[13]
    assert b13["lo"] == pytest.approx(13 / 15) and b13["hi"] == pytest.approx(14 / 15)
    assert b13["confidence"] == pytest.approx(0.91) and b13["accuracy"] == 0.5
    assert r.bins[0]["confidence"] is None and r.bins[0]["accuracy"] is None
    assert r.accuracy == pytest.approx(4 / 6)
    json.dumps(r.to_dict())


def test_ece_first_bin_closed_and_bad_input():
    probs = np.array([[0.0, 0.0], [0.5, 0.5]])  # conf 0 -> bin 0 of 2; 0.5 -> bin 0 (right-inclusive)
    r = expected_calibration_error(probs, np.array([0, 1]), n_bins=2)
    assert [b["count"] for b in r.bins] == [2, 0]
    with pytest.raises(DataError, match=r"\[0, 1\]") as err:
        expected_calibration_error(np.array([[2.0, -1.0]]), np.array([0]))
    assert "softmax" in err.value.hint
    with pytest.raises(DataError):
        expected_calibration_error(np.array([[0.5, 0.5]]), np.array([2]))


def _two_class(rng, n: int, shift: float = 0.0):
    """Top-class confidences uniform in [0.5, 1), correct with probability conf - shift."""
    conf = rng.uniform(0.5, 1.0, n)
    correct = rng.random(n) < np.clip(conf - shift, 0, 1)
    return np.stack([conf, 1 - conf], axis=1), np.where(correct, 0, 1)


@pytest.mark.parametrize("n,plugin_above,debiased_below", [(100, 0.08, 0.05), (1000, 0.025, 0.015)])
def test_ece_of_a_calibrated_model_is_near_zero_and_covered(n, plugin_above, debiased_below):
    # seeded simulation of a perfectly calibrated model (labels drawn as Bernoulli(confidence)): the plug-in
    # ECE is 0.093 at n=100 and 0.029 at n=1,000 from sampling noise alone (the figures the old code gated on);
    # the bias-corrected estimate removes more than half of that and its interval reaches down to 0
    rng = np.random.default_rng(11)
    runs = [ece_estimate(*_two_class(rng, n), seed=i, n_boot=400) for i in range(30)]
    plugin = np.mean([r.ece_plugin for r in runs])
    debiased = np.mean([r.ece_debiased for r in runs])
    assert plugin > plugin_above
    assert debiased < debiased_below and debiased < 0.5 * plugin
    assert np.mean([r.ci_low == 0.0 for r in runs]) >= 0.85
    assert all(r.ci_low <= r.ece_debiased <= r.ci_high for r in runs)
    assert np.mean([r.ece_null_expected for r in runs]) == pytest.approx(plugin, rel=0.15)


def test_ece_interval_covers_a_miscalibrated_models_ece():
    # over-confident by 0.08: the true binned ECE (from 2 million samples) is about 0.08
    rng = np.random.default_rng(12)
    big = expected_calibration_error(*_two_class(rng, 2_000_000, shift=0.08)).ece
    runs = [ece_estimate(*_two_class(rng, 500, shift=0.08), seed=i, n_boot=400) for i in range(30)]
    assert np.mean([r.ci_low <= big <= r.ci_high for r in runs]) >= 0.85
    assert np.mean([r.ece_debiased for r in runs]) == pytest.approx(big, abs=0.02)


def test_ece_estimate_seeded_and_checked():
    rng = np.random.default_rng(3)
    probs, labels = _two_class(rng, 300)
    first, again = ece_estimate(probs, labels, seed=4), ece_estimate(probs, labels, seed=4)
    assert first == again and json.loads(json.dumps(first.to_dict()))["n_boot"] == 1000
    assert first.ece_plugin == pytest.approx(expected_calibration_error(probs, labels).ece)
    with pytest.raises(DataError):
        ece_estimate(np.array([[2.0, -1.0]]), np.array([0]))
    with pytest.raises(UsageError):
        ece_estimate(probs, labels, ci_level=1.5)


def test_reliability_diagram_writes_png(tmp_path):
    require_module("matplotlib")
    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(4), size=200)
    r = expected_calibration_error(p, rng.integers(0, 4, 200))
    out = reliability_diagram(r, tmp_path / "rel.png", "test model")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ---------------------------------------------------------------- temperature scaling

def _synthetic_logits(n=4000, c=10, true_t=2.0, seed=0):
    from scipy.special import softmax

    rng = np.random.default_rng(seed)
    z = rng.normal(0.0, 3.0, size=(n, c))
    p = softmax(z / true_t, axis=1)
    labels = np.array([rng.choice(c, p=row) for row in p])
    return z, labels


def test_fit_temperature_recovers_known_temperature():
    z, labels = _synthetic_logits()
    t = fit_temperature(z, labels, kind="logits")
    assert t == pytest.approx(2.0, abs=0.3)
    # the same from probabilities: log softmax(z) differs from z by a per-row constant
    from scipy.special import softmax
    t_probs = fit_temperature(softmax(z, axis=1), labels)  # auto-detected as probabilities
    assert t_probs == pytest.approx(t, rel=1e-3)


def test_temperature_improves_ece_on_held_out_split():
    z, labels = _synthetic_logits(seed=3)
    fit, evaluate = calibration_split(len(labels), 0.5, seed=0)
    assert len(np.intersect1d(fit, evaluate)) == 0 and len(fit) + len(evaluate) == len(labels)
    t = fit_temperature(z[fit], labels[fit], kind="logits")
    before = expected_calibration_error(apply_temperature(z[evaluate], 1.0, kind="logits"), labels[evaluate])
    after = expected_calibration_error(apply_temperature(z[evaluate], t, kind="logits"), labels[evaluate])
    assert after.ece < before.ece
    with pytest.raises(UsageError):
        apply_temperature(z, 0.0)
    with pytest.raises(UsageError):
        fit_temperature(z, labels, kind="logprobs")


# ---------------------------------------------------------------- fidelity

def test_output_fidelity_tiny_arrays():
    ref = np.array([[3.0, 4.0], [1.0, 0.0]])
    test = np.array([[3.0, 4.0], [0.0, 1.0]])
    # diff [[0, 0], [-1, 1]]: rmse sqrt(2/4) = 0.707107; max 1; cosines 1 and 0 -> 0.5
    # relative L2 = sqrt(2) / sqrt(9 + 16 + 1) = 1.414214 / 5.099020 = 0.277350
    f = output_fidelity(ref, test)
    assert f.rmse == pytest.approx(0.707107, abs=1e-6)
    assert f.max_abs_error == 1.0
    assert f.cosine_similarity == pytest.approx(0.5)
    assert f.relative_l2_error == pytest.approx(0.277350, abs=1e-6)
    same = output_fidelity(ref, ref)
    assert (same.rmse, same.max_abs_error, same.relative_l2_error) == (0.0, 0.0, 0.0)
    assert same.cosine_similarity == pytest.approx(1.0)
    zero = output_fidelity(np.zeros((2, 3)), np.zeros((2, 3)))
    assert zero.relative_l2_error is None and zero.cosine_similarity == 1.0
    json.dumps(f.to_dict())
    with pytest.raises(DataError):
        output_fidelity(ref, test[:1])
