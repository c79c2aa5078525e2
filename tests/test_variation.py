"""The model of variation (edgebench.stats.variation): pooled components with a stated prior,
invocation and session estimates, comparisons with and without the between-invocation term."""
import math

import numpy as np
import pytest
from scipy.stats import t as student_t

from edgebench.report import format as fmt
from edgebench.stats.variation import (
    REPEAT_PRIOR,
    SESSION_PRIOR,
    Component,
    LogEstimate,
    Prior,
    RunFigure,
    combine_sessions,
    invocation,
    invocation_estimate,
    log_ratio,
    pooled_component,
    prior_weight,
    repeats_disagree,
    satterthwaite,
)

PRIOR = Prior(cv=0.03, df=4.0, level="between invocations")


def test_nothing_on_record_is_the_stated_prior():
    c = pooled_component([], PRIOR)
    assert (c.var, c.df, c.source) == (pytest.approx(0.03 ** 2), 4.0, "prior")
    assert "prior CV 3.0% (4 pseudo df), nothing on record" in c.describe()
    # a group of one session says nothing about the spread between sessions
    assert pooled_component([[(0.0, 1e-4)]], PRIOR).source == "prior"


def test_pooled_component_by_hand():
    # two groups: logs (0, 0.02, 0.04) with within-variance 1e-5 each; (0.1, 0.13) with 2e-5
    g1 = [(0.0, 1e-5), (0.02, 1e-5), (0.04, 1e-5)]
    g2 = [(0.1, 2e-5), (0.13, 2e-5)]
    c = pooled_component([g1, g2], PRIOR)
    s1 = np.var([0.0, 0.02, 0.04], ddof=1) - 1e-5
    s2 = np.var([0.1, 0.13], ddof=1) - 2e-5
    data = (2 * s1 + 1 * s2) / 3
    assert c.data_var == pytest.approx(data)
    nu0 = 4 / (1 + 3)               # the prior's weight fades beside 3 df of data
    assert c.prior_df == pytest.approx(nu0)
    var = (nu0 * 0.03 ** 2 + 3 * data) / (nu0 + 3)
    # its df: the data's 3 and the prior's nu0, less for the noise of s^2 around the units' own errors
    w = (2 * 1e-5 + 1 * 2e-5) / 3
    assert c.var == pytest.approx(var)
    assert c.df == pytest.approx((nu0 + 3) ** 2 / (nu0 + 3 * ((var + w) / var) ** 2)) and c.df < nu0 + 3
    assert (c.groups, c.units, c.source) == (2, 5, "pooled")


def test_pooled_component_never_below_zero():
    # sessions that agree better than their own errors allow: the data say 0, the prior keeps the floor
    c = pooled_component([[(0.0, 1e-3), (0.0001, 1e-3)]], PRIOR)
    nu0 = 4 / (1 + 1)
    assert c.data_var == 0.0 and c.var == pytest.approx(nu0 * 0.03 ** 2 / (nu0 + 1))


def test_the_prior_fades_once_data_exist():
    """A quiet board (CV 0.2%) with ten invocations on record: its own spread decides, not the 3% prior."""
    rng = np.random.default_rng(5)
    group = [(0.002 * z, 1e-8) for z in rng.standard_normal(10)]
    c = pooled_component([group], PRIOR)
    assert c.prior_df == pytest.approx(4 / (1 + 9))
    assert c.cv < 0.011                     # was 1.66% with the prior worth 4 df throughout
    assert prior_weight(PRIOR, 0) == 4.0 and prior_weight(PRIOR, 40) < 0.2


def test_a_planted_noisy_model_does_not_change_another_models_component():
    rng = np.random.default_rng(11)

    def group(cv, n=6, w=1e-6):
        return [(cv * z, w) for z in rng.standard_normal(n)]

    quiet = [group(0.008) for _ in range(4)]          # four models at 0.8%
    alone = pooled_component(quiet, PRIOR)
    noisy = [(0.2 * z, 0.01) for z in rng.standard_normal(6)]   # one model 25x noisier, and a large within-run error
    with_noisy = pooled_component([*quiet, noisy], PRIOR)
    assert with_noisy.outliers == 1 and "1 outlier group left out" in with_noisy.describe()
    assert with_noisy.var == pytest.approx(alone.var) and with_noisy.groups == alone.groups == 4
    assert 0.004 < alone.cv < 0.016


def test_satterthwaite_by_hand():
    assert satterthwaite([(1.0, 4.0), (1.0, 4.0)]) == pytest.approx(8.0)
    assert satterthwaite([(1.0, 10.0), (0.0, 1.0)]) == pytest.approx(10.0)
    assert satterthwaite([(1.0, 1e6)]) == 1e6          # known exactly
    assert satterthwaite([(1.0, 1.0)]) == 2.0          # never t(1): the stated fallback is t(2)
    assert satterthwaite([(1e-6, 0.05), (1e-6, 50.0)]) == 2.0   # a component clipped near zero


def test_invocation_estimate_by_hand():
    runs = [RunFigure(1.0, 0.01, 20), RunFigure(math.e ** 0.02, 0.01, 20), RunFigure(math.e ** 0.04, 0.01, 20)]
    rep = Component(var=0.01 ** 2, df=10.0, level="between repeats", source="pooled")
    est = invocation_estimate(runs, rep)
    assert est.centre == pytest.approx(0.02)
    assert est.var == pytest.approx((1e-4 + 1e-4) / 3)
    assert est.df == pytest.approx(satterthwaite([(1e-4 / 3, 10.0), (1e-4 / 3, 20.0)]))
    lo, hi = est.interval(0.95)
    half = student_t.ppf(0.975, est.df) * math.sqrt(est.var)
    assert (lo, hi) == (pytest.approx(math.exp(0.02 - half)), pytest.approx(math.exp(0.02 + half)))


def test_repeats_that_agree_get_no_needlessly_wide_interval():
    """K=3 repeats that agree, with the between-repeat component pooled from history: the interval is
    close to the oracle's 1.96 se, not t(2) = 4.30 times the larger of two standard errors."""
    runs = [RunFigure(1.0, 0.002, 30), RunFigure(1.0005, 0.002, 30), RunFigure(0.9995, 0.002, 30)]
    history = [[(v, 0.002 ** 2) for v in np.random.default_rng(k).normal(0, 0.002, 3)] for k in range(20)]
    rep = pooled_component(history, REPEAT_PRIOR)
    lo, hi = invocation_estimate(runs, rep).interval()
    oracle = 1.96 * math.sqrt((0.002 ** 2 + rep.var) / 3)
    old = 4.302652729911275 * 0.002 / math.sqrt(3) * 2   # t(2) on the larger standard error, both sides
    assert (math.log(hi) - math.log(lo)) / 2 <= 1.15 * oracle
    truth = 1.96 * 0.002 / math.sqrt(3)                  # no run effect at all: what is needed
    assert (math.log(hi) - math.log(lo)) / 2 < 1.7 * truth and math.log(hi) - math.log(lo) < 0.75 * old


def test_repeats_that_disagree_use_their_own_spread():
    rep = Component(var=1e-6, df=50.0, level="between repeats", source="pooled")
    runs = [RunFigure(1.0, 0.001, 30), RunFigure(1.2, 0.001, 30), RunFigure(0.8, 0.001, 30)]
    p = repeats_disagree(runs, rep)
    assert p is not None and p < 0.01
    est, got = invocation(runs, rep)
    assert got == p and est.df == 2.0 + REPEAT_PRIOR.df and "disagree" in est.method
    # two disagreeing repeats: no Student t with one degree of freedom (the fallback: t(1 + 2))
    two, _ = invocation([RunFigure(1.0, 0.001, 30), RunFigure(1.3, 0.001, 30)], rep)
    assert two.df == 3.0 and two.interval()[1] / two.interval()[0] < math.exp(2 * 3.2 * two.se)
    agree = [RunFigure(1.0, 0.001, 30), RunFigure(1.001, 0.001, 30)]
    assert repeats_disagree(agree, rep) is None


def test_two_sessions_do_not_explode():
    """S = 2 with the prior's pseudo degrees of freedom: no Student t with df 1 (12.7)."""
    this = LogEstimate(0.0, 0.005 ** 2, 20.0)
    other = LogEstimate(0.01, 0.005 ** 2, 20.0)
    session = pooled_component([[(0.0, 0.005 ** 2), (0.01, 0.005 ** 2)]], SESSION_PRIOR)
    res = combine_sessions(this, [other], session)
    assert res.estimate.df >= 1.9 and res.sessions == 2     # the fading prior (1 pseudo df beside 1) + 1 df of data: t(2), not t(1)
    lo, hi = res.estimate.interval()
    assert math.log(hi) - math.log(lo) < 0.15           # was exp(±12.7 s): a 0.95-498 µs interval at 17 µs
    plo, phi = res.prediction.interval()
    assert plo < lo and phi > hi


def test_combine_sessions_by_hand():
    session = Component(var=0.02 ** 2, df=12.0, level="between invocations", source="pooled")
    ests = [LogEstimate(c, 1e-5, 30.0) for c in (0.0, 0.02, -0.01)]
    res = combine_sessions(ests[0], ests[1:], session)
    assert res.estimate.centre == pytest.approx(np.mean([0.0, 0.02, -0.01]))
    assert res.estimate.var == pytest.approx((0.02 ** 2 + 1e-5) / 3)
    assert res.prediction.var == pytest.approx(0.02 ** 2 + 1e-5 + res.estimate.var)
    assert res.between_session_cv == pytest.approx(np.std([0.0, 0.02, -0.01], ddof=1))
    # the first session: the interval carries the between-invocation component (prior or pooled)
    first = combine_sessions(ests[0], [], session)
    assert first.estimate.var == pytest.approx(0.02 ** 2 + 1e-5) and first.differs_p is None


def test_a_session_outside_its_history_is_flagged():
    session = Component(var=0.01 ** 2, df=30.0, level="between invocations", source="pooled")
    hist = [LogEstimate(c, 1e-6, 30.0) for c in np.random.default_rng(1).normal(0, 0.01, 8)]
    near = combine_sessions(LogEstimate(0.005, 1e-6, 30.0), hist, session)
    far = combine_sessions(LogEstimate(0.08, 1e-6, 30.0), hist, session)
    assert near.differs_p > 0.1 and far.differs_p < 0.001


def test_log_ratio_adds_the_session_term_only_between_invocations():
    a, b = LogEstimate(0.05, 1e-5, 20.0), LogEstimate(0.0, 1e-5, 20.0)
    session = Component(var=0.02 ** 2, df=9.0, level="between invocations", source="pooled")
    apart = log_ratio(a, b, session)
    same = log_ratio(a, b, None)
    assert apart.var == pytest.approx(2e-5 + 2 * 0.02 ** 2) and same.var == pytest.approx(2e-5)
    assert math.exp(apart.centre) == pytest.approx(math.exp(0.05))
    lo, hi = apart.interval()
    assert lo < math.exp(0.05) < hi                        # the point is inside its own interval
    assert apart.p_value() > 0.05 > same.p_value()
    # a p-value below double precision underflows to 0.0: it is shown as a bound, never as "p=0"
    far = LogEstimate(50.0, 1e-6, 1e6).p_value()
    assert 0.0 <= far < 1e-16 and fmt.p_value(far) == "p<1e-16"
    assert fmt.p_value(LogEstimate(0.05, 0.02 ** 2, 9.0).p_value()) == "p=0.034"   # t = 2.5 on 9 df, two-sided


def test_a_aa_false_verdict_rate_is_controlled():
    """A/A, ten invocations in one folder, consecutive pairs compared (CV 3%): few false verdicts."""
    from edgebench.stats.variation import RunFigure as F

    rng = np.random.default_rng(7)
    false = pairs = 0
    for _ in range(150):
        invs = []
        for _j in range(10):
            u = 0.03 * rng.standard_normal()
            invs.append([F(math.exp(u + 0.005 * rng.standard_normal()), 0.003, 30.0) for _ in range(3)])
        rep = pooled_component([[(f.y, f.w) for f in fs] for fs in invs], REPEAT_PRIOR)
        ests = [invocation(fs, rep)[0] for fs in invs]
        ses = pooled_component([[(e.centre, e.var) for e in ests]], SESSION_PRIOR)
        for a, b in zip(ests, ests[1:]):
            lo, hi = log_ratio(b, a, ses).interval()
            false += lo > 1 or hi < 1
            pairs += 1
    assert false / pairs <= 0.06
