"""Tests of edgebench.stats against hand-computed values."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from pydantic import ValidationError
from scipy import stats as sps

from edgebench.errors import DataError, UsageError
from edgebench.stats import (
    LatencyFigure,
    StopRule,
    detect_warmup,
    instability_warnings,
    median_ci,
    ratio_of_medians,
    summarize,
)
from edgebench.stats.warmup import _mser

X11 = np.arange(1.0, 12.0)  # 1, 2, ..., 11


# --------------------------------------------------------------------------- median CI


def test_median_ci_n11_by_hand():
    # B ~ Binomial(11, 1/2): P(B<=0) = 1/2048 = 0.00049, P(B<=1) = 12/2048 = 0.0059,
    # P(B<=2) = 67/2048 = 0.0327 > 0.025. Largest j with P(B <= j-1) <= 0.025 is j = 2,
    # so the 95% CI is [x_(2), x_(10)] = [2, 10], coverage 1 - 2*12/2048 = 98.8%.
    # ([3, 9] would only cover 1 - 2*0.0327 = 93.5% < 95%.)
    assert median_ci(X11) == (2.0, 10.0)


def test_median_ci_n20_by_hand():
    # Binomial(20, 1/2): P(B<=5) = 21700/2^20 = 0.0207 <= 0.025, P(B<=6) = 60460/2^20 = 0.0577.
    # j = 6: CI = [x_(6), x_(15)] = [6, 15].
    assert median_ci(np.arange(1.0, 21.0)) == (6.0, 15.0)


def test_median_ci_matches_scipy_quantile_test():
    rng = np.random.default_rng(3)
    for n in (6, 7, 30, 101, 1000, 5000):
        x = rng.lognormal(0.0, 0.3, n)
        for level in (0.9, 0.95, 0.99):
            ref = sps.quantile_test(x, q=np.median(x), p=0.5).confidence_interval(level)
            if np.isnan(ref.low):  # n = 6 at 99%: 1/64 > 0.005
                with pytest.raises(DataError, match="too few"):
                    median_ci(x, level)
            else:
                assert median_ci(x, level) == (float(ref.low), float(ref.high)), (n, level)


def test_median_ci_exact_tail_probability():
    # n = 6, level 31/32: (1 - level) / 2 = 1/64 = P(B<=0) exactly, so j = 1 is allowed:
    # [x_(1), x_(6)], coverage exactly 1 - 2/64 = 96.875%.
    x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    # (scipy's quantile_test returns (nan, 6.0) at this exact boundary, a rounding edge.)
    assert median_ci(x, ci_level=31 / 32) == (1.0, 6.0)


def test_median_ci_unattainable_for_n5():
    # n = 5: P(B = 0) = 1/32 = 0.031 > 0.025, no order statistic gives 95%.
    with pytest.raises(DataError) as info:
        median_ci([1.0, 2.0, 3.0, 4.0, 5.0])
    assert info.value.hint == "measure at least 6 samples"
    s = summarize([1.0, 2.0, 3.0, 4.0, 5.0])
    assert s.ci_low_s is None and s.ci_high_s is None and s.rel_ci_halfwidth is None
    # ... but 90% is attainable: P(B<=0) = 1/32 <= 0.05 -> [x_(1), x_(5)] = [1, 5], coverage 93.75%.
    assert median_ci([1.0, 2.0, 3.0, 4.0, 5.0], ci_level=0.9) == (1.0, 5.0)


# --------------------------------------------------------------------------- summarize


def test_summarize_n11_by_hand():
    s = summarize(X11)
    assert s.n == 11
    assert s.median_s == 6.0 and s.p50_s == 6.0
    # a monotone series is one long trend: too few effective samples for any interval
    assert (s.ci_low_s, s.ci_high_s, s.ci_level) == (None, None, 0.95)
    assert s.lag1_autocorr > 0.5
    assert s.mean_s == pytest.approx(6.0)
    # sum (x - 6)^2 = 2 * (1 + 4 + 9 + 16 + 25) = 110; / (n - 1) = 11
    assert s.std_s == pytest.approx(math.sqrt(11.0))
    # |x - 6| = 5,4,3,2,1,0,1,2,3,4,5 -> sorted 0,1,1,2,2,3,3,4,4,5,5 -> median 3
    assert s.mad_s == 3.0
    assert s.mad_scaled_s == pytest.approx(3.0 * 1.482602218505602)
    assert (s.min_s, s.max_s) == (1.0, 11.0)
    # p90 linear: position 0.9 * (11 - 1) = 9 -> x[9] = 10
    assert s.p90_s == pytest.approx(10.0)
    assert s.p99_s is None and s.p999_s is None  # n < 100, n < 1000
    assert s.inverse_median_per_s == pytest.approx(1.0 / 6.0)
    assert not hasattr(s, "throughput_per_s")
    assert s.rel_ci_halfwidth is None


def test_mad_of_known_vector():
    # median 3; |x - 3| = 2,1,0,1,97 -> sorted 0,1,1,2,97 -> MAD 1 (the 100 does not move it)
    s = summarize([1.0, 2.0, 3.0, 4.0, 100.0])
    assert s.mad_s == 1.0
    assert s.mad_scaled_s == pytest.approx(1.0 / sps.norm.ppf(0.75))  # 1.4826
    assert s.mean_s == pytest.approx(22.0)


def test_percentiles_of_known_vectors():
    s = summarize(np.arange(1.0, 101.0))  # 1..100
    # linear: position p/100 * 99; p50 -> 49.5 -> 50.5; p90 -> 89.1 -> 90.1; p99 -> 98.01 -> 99.01
    assert s.p50_s == pytest.approx(50.5)
    assert s.p90_s == pytest.approx(90.1)
    assert s.p99_s == pytest.approx(99.01)
    assert s.p999_s is None
    s = summarize(np.arange(1.0, 1001.0))  # 1..1000
    # p99 -> 0.99 * 999 = 989.01 -> 990.01; p99.9 -> 0.999 * 999 = 998.001 -> 999.001
    assert s.p99_s == pytest.approx(990.01)
    assert s.p999_s == pytest.approx(999.001)
    # p90 needs 10 samples
    assert summarize(np.arange(1.0, 10.0)).p90_s is None
    # 1..10: position 0.9 * 9 = 8.1 -> 9 + 0.1 = 9.1
    assert summarize(np.arange(1.0, 11.0)).p90_s == pytest.approx(9.1)


def test_summary_to_dict_round_trip():
    s = summarize(np.arange(1.0, 101.0) * 1e-3)
    d = s.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert type(d["n"]) is int and type(d["median_s"]) is float and d["p999_s"] is None
    assert LatencyFigure.model_validate(d) == s
    d["median_s"] = "fast"
    with pytest.raises(ValidationError):
        LatencyFigure.model_validate(d)


@pytest.mark.parametrize(
    "bad",
    [[], [1.0], [1.0, float("nan")], [1.0, float("inf")], [1.0, -0.5], [[1.0, 2.0], [3.0, 4.0]], ["a", "b"]],
)
def test_summarize_bad_input(bad):
    with pytest.raises(DataError):
        summarize(bad)


def test_summarize_zero_median_and_bad_level():
    # a stage below the timer's resolution: summarized, but no throughput or relative CI
    s = summarize([0.0] * 10 + [1e-6])
    assert s.median_s == 0.0 and s.inverse_median_per_s is None and s.rel_ci_halfwidth is None
    assert (s.ci_low_s, s.ci_high_s) == (None, None)  # below the clock: no interval to give
    assert json.loads(json.dumps(s.to_dict())) == s.to_dict()
    assert instability_warnings([0.0] * 20 + [1e-6] * 10) == []  # ticks, not outliers
    with pytest.raises(UsageError):
        summarize(X11, ci_level=1.5)


# --------------------------------------------------------------------------- stop rule


def test_stop_rule_uses_the_dependence_aware_interval():
    from edgebench.stats.dependence import quantile_interval

    x = np.random.default_rng(5).lognormal(0.0, 0.2, 400)
    rel = quantile_interval(x).rel_halfwidth
    d = StopRule(target_rel_ci=rel * 1.01, min_samples=10, min_time_s=0.0).check(x, elapsed_s=0.5)
    assert d.done and d.target_reached
    assert d.rel_ci_halfwidth == pytest.approx(rel)
    d = StopRule(target_rel_ci=rel * 0.99, min_samples=10, min_time_s=0.0).check(x, elapsed_s=0.5)
    assert not d.done and not d.target_reached
    assert "> target" in d.reason
    # the same values in a slow wave (autocorrelated) are far less informative: no stop
    wave = np.sort(x)[np.argsort(np.sin(np.linspace(0, 6 * np.pi, x.size)), kind="stable")]
    assert not StopRule(target_rel_ci=rel * 1.01, min_samples=10, min_time_s=0.0).check(wave, 0.5).done


def test_stop_rule_time_limits():
    rule = StopRule()  # 1%, 100 samples, 1 s .. 30 s
    tight = np.linspace(0.999, 1.001, 1234)
    d = rule.check(tight, elapsed_s=2.0)
    assert d.done and d.target_reached
    assert d.reason.startswith("CI half-width 0.0") and d.reason.endswith("<= target 1.0% after 1,234 samples")
    d = rule.check(tight, elapsed_s=0.5)  # before the minimum time
    assert not d.done and "minimum time 1 s" in d.reason
    d = rule.check(tight[:50], elapsed_s=2.0)  # before the minimum samples
    assert not d.done and "50 of minimum 100 samples" in d.reason

    wide = np.random.default_rng(0).permutation(np.linspace(0.5, 1.5, 200))  # half-width about 7%
    d = rule.check(wide, elapsed_s=10.0)
    assert not d.done and d.rel_ci_halfwidth > 0.01
    d = rule.check(wide, elapsed_s=30.0)
    assert d.done and not d.target_reached
    assert d.reason.startswith("maximum time 30 s reached with CI half-width ")
    assert d.reason.endswith("> target 1.0% after 200 samples")
    d = rule.check([1.0, 1.0], elapsed_s=31.0)
    assert d.done and not d.target_reached and "too few" in d.reason
    d = rule.check([], elapsed_s=0.0)
    assert not d.done and d.n_samples == 0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"target_rel_ci": 0.0},
        {"target_rel_ci": 1.0},
        {"target_rel_ci": -0.1},
        {"min_samples": 0},
        {"min_samples": 2.5},
        {"min_time_s": -1.0},
        {"max_time_s": 0.0},
        {"min_time_s": 10.0, "max_time_s": 5.0},
        {"ci_level": 95},
    ],
)
def test_stop_rule_validates(kwargs):
    with pytest.raises(UsageError):
        StopRule(**kwargs)


def test_stop_rule_bad_elapsed():
    with pytest.raises(UsageError):
        StopRule().check(X11, elapsed_s=-1.0)


# --------------------------------------------------------------------------- warm-up


def test_mser_statistic_by_hand():
    # Y = [4, 0, 2]: d=0: mean 2, SSE 4+4+0 = 8, / 3^2 -> 0.889; d=1: [0, 2] mean 1, SSE 2, / 2^2 -> 0.5;
    # d=2: [2], SSE 0 -> 0.
    np.testing.assert_allclose(_mser(np.array([4.0, 0.0, 2.0])), [8.0 / 9.0, 0.5, 0.0], atol=1e-12)


def test_warmup_finds_step():
    rng = np.random.default_rng(0)
    x = np.r_[2.0 + rng.normal(0, 0.01, 50), 1.0 + rng.normal(0, 0.01, 500)]
    w = detect_warmup(x)
    assert 50 <= w.n_warmup <= 55
    assert w.method == "MSER-5" and not w.at_limit
    assert w.duration_s == pytest.approx(x[: w.n_warmup].sum())
    assert w.duration_s == pytest.approx(100.0, rel=0.01)  # 50 samples of ~2 s


def test_warmup_stationary_gives_minimum():
    found = [detect_warmup(1.0 + np.random.default_rng(s).normal(0, 0.01, 500)).n_warmup for s in range(20)]
    assert min(found) == 5  # never below min_warmup
    assert np.median(found) == 5  # typically exactly min_warmup
    assert max(found) <= 50  # never more than 10% of the series on these seeds
    w = detect_warmup(np.ones(500), min_warmup=7)
    assert (w.n_warmup, w.method) == (7, "MSER-5, raised to min_warmup")


def test_warmup_trend_hits_limit_and_short_series():
    w = detect_warmup(np.linspace(2.0, 1.0, 500))  # still warming at the end
    assert w.at_limit and w.n_warmup == 250
    # batch=1, max_fraction=0.99 on a ramp: MSER picks d = 49 of 50, capped to leave 2 samples
    assert detect_warmup(np.linspace(2.0, 1.0, 50), batch=1, max_fraction=0.99).n_warmup == 48
    w = detect_warmup(np.ones(30))  # 6 batches: too few for MSER
    assert w.n_warmup == 5 and w.method.startswith("min_warmup") and w.duration_s == 5.0
    with pytest.raises(DataError):
        detect_warmup(np.ones(6))  # 5 warm-up + 1 left
    with pytest.raises(UsageError):
        detect_warmup(np.ones(100), max_fraction=1.0)
    with pytest.raises(UsageError):
        detect_warmup(np.ones(100), batch=0)


# --------------------------------------------------------------------------- ratio of medians


def test_ratio_exact_small():
    b = np.random.default_rng(7).permutation(np.arange(1.0, 42.0))  # median 21
    r = ratio_of_medians(2.0 * b, b)
    assert r.ratio == 2.0
    assert (r.n_a, r.n_b) == (41, 41)
    assert r.ci_low < 2.0 < r.ci_high
    # the verdict and the p-value come from one statistic: they never disagree
    assert (r.p_value < 0.05) == (r.verdict != "no difference resolved")


def test_ratio_two_to_one():
    rng = np.random.default_rng(1)
    a = rng.lognormal(np.log(2e-3), 0.1, 2000)  # true median 2 ms
    b = rng.lognormal(np.log(1e-3), 0.1, 2000)  # true median 1 ms
    r = ratio_of_medians(a, b, same_invocation=True)  # one run each, interleaved: the prior's repeat term only
    assert r.ratio == pytest.approx(2.0, rel=0.02)
    assert r.ci_low <= 2.0 <= r.ci_high
    assert r.ci_high - r.ci_low < 0.2    # one run a side cannot see run-to-run variation: the 1% prior carries it
    assert r.p_value < 1e-6
    d = r.to_dict()
    assert json.loads(json.dumps(d)) == d
    # from different invocations the between-invocation prior (CV 3%) widens it, the point stays inside
    apart = ratio_of_medians(a, b)
    assert apart.ratio == r.ratio and apart.ci_low < r.ci_low and apart.ci_high > r.ci_high
    assert apart.session_variation["source"] == "prior" and apart.case.startswith("different")
    assert ratio_of_medians(a, b, same_invocation=True) == r  # deterministic
    assert d["verdict"] == "a slower"


def test_ratio_on_a_coarse_clock_is_never_exact():
    # device-timed runs on a 1 µs counter: every sample of A reads 44 µs or 45 µs, of B 43 µs or 44 µs;
    # their medians are 44 and 43 ticks, and no interval or p-value may pretend to know more
    rng = np.random.default_rng(4)
    a = [rng.choice([44e-6, 44e-6, 45e-6], 400) for _ in range(3)]
    b = [rng.choice([43e-6, 43e-6, 44e-6], 400) for _ in range(3)]
    r = ratio_of_medians(a, b, same_invocation=True)
    assert r.ratio == pytest.approx(44 / 43)
    assert r.ci_low < r.ratio < r.ci_high and r.p_value > 0
    assert r.ci_low <= 43 / 44 * 1.0 + 0.03            # a tick on each median: about ±2.3% here
    one_tick = ratio_of_medians(a, b, same_invocation=True, resolution_s=1e-6)
    assert (one_tick.ci_low, one_tick.ci_high) == (r.ci_low, r.ci_high)   # the tick the samples show


def test_ratio_same_distribution_covers_one():
    a = np.random.default_rng(2).lognormal(np.log(1e-3), 0.1, 3000)
    b = np.random.default_rng(3).lognormal(np.log(1e-3), 0.1, 3000)
    r = ratio_of_medians(a, b)
    assert r.ci_low <= 1.0 <= r.ci_high
    assert r.p_value > 0.01


def test_ratio_unequal_sizes():
    rng = np.random.default_rng(10)
    a = rng.lognormal(np.log(3e-3), 0.05, 500)
    b = rng.lognormal(np.log(1e-3), 0.05, 1500)
    r = ratio_of_medians(a, b, same_invocation=True)
    assert (r.n_a, r.n_b) == (500, 1500)
    assert r.ci_low <= 3.0 <= r.ci_high and r.p_value < 1e-6


def test_ratio_bad_input():
    with pytest.raises(DataError):
        ratio_of_medians([1.0], [1.0, 2.0])
    with pytest.raises(DataError):
        ratio_of_medians([1.0, 2.0], [0.0, 0.0, 1.0])
    with pytest.raises(DataError):
        ratio_of_medians([1.0, float("nan")], [1.0, 2.0])
    with pytest.raises(UsageError):
        ratio_of_medians([1.0, 2.0], [1.0, 2.0], ci_level=1.5)


# --------------------------------------------------------------------------- stability


def codes(warnings):
    return [w.code for w in warnings]


def test_stability_clean():
    x = np.random.default_rng(5).lognormal(np.log(1e-3), 0.02, 1000)
    assert instability_warnings(x) == []


def test_stability_drift_by_hand():
    # quarters of 25: first all 1.00 s, last all 1.10 s -> slower by exactly 10.0%
    x = np.r_[np.full(25, 1.0), np.full(50, 1.05), np.full(25, 1.1)]
    w = instability_warnings(x)
    assert codes(w) == ["drift"]
    assert "slower by 10.0%" in w[0].message
    assert "edgebench soak" in w[0].remedy
    w = instability_warnings(x[::-1])
    assert codes(w) == ["drift"] and "faster by 9.1%" in w[0].message  # 1.0 vs 1.1: -9.09%


def test_stability_drift_noisy_ramp():
    rng = np.random.default_rng(6)
    x = np.linspace(1.0, 1.2, 400) + rng.normal(0, 0.005, 400)
    assert "drift" in codes(instability_warnings(x))


def test_stability_small_change_is_not_drift():
    rng = np.random.default_rng(7)
    x = np.linspace(1.0, 1.03, 400) + rng.normal(0, 0.005, 400)  # 3% < 5%
    assert "drift" not in codes(instability_warnings(x))


def test_stability_shift_without_significance_is_not_drift():
    # first and last quarter differ by 7% in median, but 10 vs 10 samples spread over 0.6..1.47 s
    # overlap so much that Mann-Whitney p is far above 0.01
    first = np.array([0.6, 0.7, 0.8, 0.9, 1.0, 1.0, 1.1, 1.2, 1.3, 1.4])
    x = np.r_[first, np.ones(20), first + 0.07]
    assert "drift" not in codes(instability_warnings(x))


def test_stability_coarse_timer_ticks_are_not_outliers():
    # 60% at 100 µs, 40% at 101 µs (one timer tick): MAD = 0, but with the scale floored at
    # 1% of the median the threshold is 100 + 10 * 1 = 110 µs, so nothing is an outlier.
    x = np.random.default_rng(12).permutation(np.r_[np.full(600, 100e-6), np.full(400, 101e-6)])
    assert instability_warnings(x) == []


def test_stability_heavy_tail_by_hand():
    # 980 samples at 1 s, 20 at 10 s spread evenly: median 1, MAD 0 -> scale floored at 1% of median,
    # threshold 1 + 10 * 0.01 = 1.1 s; 20 / 1000 = 2.0% > 1% outliers; p99 = 10 -> 10.0x the median.
    x = np.ones(1000)
    x[25::50] = 10.0
    w = {x.code: x for x in instability_warnings(x)}
    assert set(w) == {"spread", "outliers"}
    assert "2.0% of samples (20 of 1,000)" in w["outliers"].message
    assert "p99 is 10.0x the median" in w["spread"].message
    assert "taskset" in w["spread"].remedy and "cpufreq" in w["spread"].remedy


def test_stability_spread_robust_cv():
    # uniform on [0.5, 1.5]: MAD 0.25, scaled 0.371 -> robust CV 37.1% > 10%
    x = np.random.default_rng(8).permutation(np.linspace(0.5, 1.5, 1001))
    w = instability_warnings(x)
    assert codes(w) == ["spread"]
    assert "robust CV (scaled MAD / median) is 37.1% > 10.0%" in w[0].message


def test_stability_too_few_and_summary_mismatch():
    w = instability_warnings(np.ones(10))
    assert len(w) == 1 and w[0].code == "too-few" and w[0].remedy == "raise --min-samples"
    assert w[0].to_dict() == {"code": "too-few", "message": w[0].message, "remedy": "raise --min-samples"}
    x = np.random.default_rng(9).lognormal(0.0, 0.02, 100)
    assert instability_warnings(x, summary=summarize(x)) == instability_warnings(x)
    with pytest.raises(UsageError):
        instability_warnings(x, summary=summarize(x[:50]))
    with pytest.raises(UsageError, match="lacks the median"):     # a summary read back without its median
        instability_warnings(x, summary=summarize(x).model_copy(update={"median_s": None}))
    with pytest.raises(DataError):
        instability_warnings([1.0, -1.0] * 20)


def test_drift_is_judged_within_runs_not_across_repeats():
    """Two stationary repeats at levels 10% apart: the step between repeats is run-to-run variation,
    not drift (the Mann-Whitney test on the pooled repeats called it drift, with p=0)."""
    rng = np.random.default_rng(11)
    r1 = np.exp(rng.normal(0.0, 0.01, 2000))
    r2 = np.exp(rng.normal(0.1, 0.01, 2000))
    pooled = np.r_[r1, r2]
    assert "drift" not in codes(instability_warnings(pooled, runs=[r1, r2]))
    # a drift inside each run is still found, and its p-value is printed as a bound, never p=0
    d1, d2 = (np.exp(np.linspace(0, 0.1, 2000) + rng.normal(0, 0.005, 2000)) for _ in range(2))
    w = [x for x in instability_warnings(np.r_[d1, d2], runs=[d1, d2]) if x.code == "drift"]
    assert w and "p<0.01" in w[0].message and "p=0" not in w[0].message
