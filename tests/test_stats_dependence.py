"""Dependence- and run-aware intervals against seeded simulated series with a known median.

The simulations are small (they run in about a second) but large enough that the old
independent-sample interval fails them under lag-1 autocorrelation 0.9 (it covers ~0.4).
"""
import math

import numpy as np
import pytest
from scipy.signal import lfilter
from scipy.stats import binom
from scipy.stats import t as student_t

from edgebench.report.format import p_value
from edgebench.stats.compare import holm, ratio_of_medians
from edgebench.stats.dependence import coarse_clock, lag1_autocorr, quantile_interval, runs_interval
from edgebench.stats.latency import median_ci

MEDIAN = 1e-3


def ar1_lognormal(rng, phi, n, reps, median=MEDIAN, sigma=0.2):
    e = rng.standard_normal((reps, n)) * math.sqrt(1 - phi ** 2)
    e[:, 0] = rng.standard_normal(reps)
    return median * np.exp(sigma * lfilter([1.0], [1.0, -phi], e, axis=1))


def coverage(intervals):
    return np.mean([lo is not None and lo <= MEDIAN <= hi for lo, hi in intervals])


@pytest.fixture(scope="module")
def dependent():
    return ar1_lognormal(np.random.default_rng(20261124), 0.9, 2000, 200)


def test_dependence_aware_median_interval_covers_under_strong_autocorrelation(dependent):
    new = coverage([(q.low, q.high) for q in map(quantile_interval, dependent)])
    old = coverage([median_ci(row) for row in dependent])
    assert old < 0.6          # the independent-sample interval: what edgebench printed before
    assert new >= 0.9         # 0.94 over 1,000 repetitions in benchmarks/ci_coverage.py


def test_effective_sample_size_and_lag1_are_measured(dependent):
    q = quantile_interval(dependent[0])
    assert q.lag1 > 0.5
    # AR(1) phi=0.9: the median indicator carries ~1/14 of the information of independent samples
    assert 40 < q.n_eff < 600
    iid = quantile_interval(np.random.default_rng(1).lognormal(0, 0.2, 2000))
    assert iid.n_eff > 1000 and abs(iid.lag1) < 0.1


def test_independent_samples_keep_textbook_width():
    x = np.random.default_rng(2).lognormal(0, 0.2, 5000)
    q = quantile_interval(x)
    lo, hi = median_ci(x)
    assert q.low <= lo and q.high >= hi                # never narrower than the textbook interval
    assert (q.high - q.low) < 1.6 * (hi - lo)           # nor much wider when nothing is dependent


@pytest.mark.slow
def test_ratio_false_positive_rate_under_dependence():
    rng = np.random.default_rng(3)
    a = ar1_lognormal(rng, 0.9, 2000, 150)
    b = ar1_lognormal(rng, 0.9, 2000, 150)
    verdicts = [ratio_of_medians(x, y, same_invocation=True).verdict for x, y in zip(a, b)]
    assert np.mean([v != "no difference resolved" for v in verdicts]) <= 0.1


def test_runs_interval_by_hand():
    # three runs with within-run se 1% (df 20) and a pooled between-repeat component CV 2% (df 30)
    from edgebench.stats.dependence import QuantileInterval
    from edgebench.stats.variation import Component, satterthwaite

    per = [QuantileInterval(0.5, m, m * 0.98, m * 1.02, 0.95, 1000, 500.0, 0.3, 30, 33, se_log=0.01, df=20)
           for m in (1.0, 2.0 ** 0.05, 4.0 ** 0.05)]
    rep = Component(var=0.02 ** 2, df=30.0, level="between repeats", source="pooled")
    iv = runs_interval(per, rep)
    var = (0.02 ** 2 + 0.01 ** 2) / 3
    df = satterthwaite([(0.02 ** 2 / 3, 30.0), (0.01 ** 2 / 3, 20.0)])
    half = student_t.ppf(0.975, df) * math.sqrt(var)
    centre = math.exp(np.mean(np.log([q.estimate for q in per])))
    assert iv.estimate == pytest.approx(centre)
    assert iv.low == pytest.approx(centre * math.exp(-half)) and iv.high == pytest.approx(centre * math.exp(half))
    assert iv.runs == 3 and iv.se_log == pytest.approx(math.sqrt(var)) and iv.df == pytest.approx(df)
    # one run: its own error plus the between-repeat component (it cannot measure that itself)
    one = runs_interval(per[:1], rep)
    assert one.se_log == pytest.approx(math.sqrt(0.02 ** 2 + 0.01 ** 2)) and one.repeat_variation["cv"] == 0.02
    # a run without an interval gives none
    none = QuantileInterval(0.5, 1.0, None, None, 0.95, 10, 3.0, 0.9, 1, 10)
    assert runs_interval([none]).low is None


def test_between_run_variation_is_in_the_headline_interval():
    rng = np.random.default_rng(4)
    runs = [rng.lognormal(math.log(MEDIAN) + shift, 0.05, 3000) for shift in (-0.04, 0.0, 0.04)]
    from edgebench.stats.latency import summarize_runs

    k = summarize_runs(runs)
    assert k.runs == 3 and len(k.per_run) == 3
    # one run's own interval is a fraction of a percent; the runs' medians spread ±4%
    assert quantile_interval(runs[0]).rel_halfwidth < 0.01 < 0.02 < k.rel_ci_halfwidth
    assert k.ci_low_s < MEDIAN < k.ci_high_s
    # the between-repeat component is pooled from these runs (4% apart) and the prior (0.5%)
    assert k.repeat_variation["source"] == "pooled" and k.repeat_variation["cv"] > 0.02


def test_a_tail_that_moves_between_runs_gets_its_own_spread_not_the_medians():
    from edgebench.stats.latency import summarize_runs
    from edgebench.stats.variation import Component

    rng = np.random.default_rng(12)
    # the same median; tail scales 0.196 / 0.200 / 0.204 put the runs' p99 3% apart: not enough for the
    # chi-squared fallback against the medians' component, which alone gave p99 ±0.9%
    runs = [MEDIAN * np.exp(sigma * rng.standard_normal(20000)) for sigma in (0.196, 0.200, 0.204)]
    folder = Component(var=0.005 ** 2, df=50, level="between repeats", source="pooled")   # from medians
    k = summarize_runs(runs, repeat=folder)
    logs = [math.log(quantile_interval(r, 0.99).estimate) for r in runs]
    half = student_t.ppf(0.975, 2) * np.std(logs, ddof=1) / math.sqrt(3)      # Student t on the runs' own p99
    lo, hi = k.p99_ci_s
    assert lo <= math.exp(np.mean(logs) - half) * 1.0001 and hi >= math.exp(np.mean(logs) + half) * 0.9999
    assert (hi - lo) / 2 / k.p99_s > 0.03
    assert k.rel_ci_halfwidth < 0.02                           # the headline keeps the median's component
    assert lo <= k.p99_s <= hi and k.p90_ci_s[0] <= k.p90_s <= k.p90_ci_s[1]   # each holds its printed figure
    one = summarize_runs(runs[:1], repeat=folder)              # one run: the component is all there is
    assert (one.p99_ci_s[1] - one.p99_ci_s[0]) / 2 / one.p99_s < 0.03


def test_level_shifts_widen_the_interval_and_are_warned():
    from edgebench.stats.dependence import level_shifts

    rng = np.random.default_rng(9)
    n, cover, warned = 5000, 0, 0
    e = rng.standard_normal(n) * 0.02
    steady = MEDIAN * np.exp(e)
    assert level_shifts(steady) is None
    for _ in range(40):
        lvl = np.repeat(rng.integers(0, 2, n // 500), 500)          # regimes of 500 samples, 5% apart
        x = MEDIAN * np.exp(0.05 * lvl + 0.02 * rng.standard_normal(n))
        truth = MEDIAN * math.exp(0.025)                              # the median of the two levels, equal shares
        q = quantile_interval(x)
        cover += q.low is not None and q.low <= truth <= q.high or abs(lvl.mean() - 0.5) > 0.25
        warned += level_shifts(x) is not None
    assert warned >= 30 and cover >= 30


def test_coarse_clock_interval_is_not_zero_width():
    # true median 2.6 ms on a 1 ms tick: readings are 2 or 3 ms
    rng = np.random.default_rng(5)
    true = rng.lognormal(math.log(2.6e-3), 0.05, 400)
    ticks = np.floor(true / 1e-3) * 1e-3
    old = median_ci(ticks)
    assert old[0] == old[1]                                    # [3, 3] ms: what was printed before
    q = quantile_interval(ticks, resolution_s=1e-3)
    assert q.high - q.low >= 2e-3 - 1e-12 and q.low <= 2.6e-3 <= q.high
    assert coarse_clock(float(np.median(ticks)), 1e-3)
    assert not coarse_clock(2.6e-3, 1e-9)


def test_lag1_autocorr_by_hand():
    assert lag1_autocorr([1.0, 1.0, 1.0]) == 0.0
    # 1,-1,1,-1: deviations alternate: sum of lagged products -3, sum of squares 4
    assert lag1_autocorr([1.0, -1.0, 1.0, -1.0]) == pytest.approx(-0.75)


def test_p_values_never_print_as_zero():
    assert p_value(0.0) == "p<1e-16"
    assert p_value(1e-300) == "p<1e-16"
    assert p_value(2.1e-5) == "p=2.1e-05"
    assert p_value(0.041) == "p=0.041"
    assert p_value(0.31) == "p=0.31"
    assert p_value(None) == "p=n/a"
    # what scipy returns for a huge, certain difference
    assert p_value(float(binom.cdf(0, 2000, 0.5))) == "p<1e-16"


def test_holm_by_hand():
    # sorted 0.01, 0.02, 0.04 times 3, 2, 1 -> 0.03, 0.04, 0.04 (monotone)
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
