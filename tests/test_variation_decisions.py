"""Decisions across invocations under the stated priors: the cells of benchmarks/decisions_sim.py that
the between-invocation prior decides, checked on a few hundred seeded trials (not timed)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from edgebench.stats.variation import (
    REPEAT_PRIOR,
    SESSION_PRIOR,
    RunFigure,
    combine_sessions,
    invocation,
    log_ratio,
    pooled_component,
    prior_weight,
)


def _invocations(rng, mu, cv, s, k=3):
    return [[RunFigure(math.exp(mu + y), 0.002, 50.0)
             for y in (u + rng.normal(0, 0.005, k) + rng.normal(0, 0.002, k))]
            for u in rng.normal(0.0, cv, s)]


def _components(groups):
    repeat = pooled_component([[(f.y, f.w) for f in figs] for g in groups for figs in g], REPEAT_PRIOR)
    session = pooled_component([[(e.centre, e.var) for e in (invocation(f, repeat)[0] for f in g)] for g in groups],
                               SESSION_PRIOR)
    return repeat, session


def test_one_invocation_per_side_on_a_noisy_machine_is_not_called_different():
    """Nothing on record, one invocation of each, true between-invocation CV 6% (twice the prior's 3%):
    the prior alone weighs 2 df, so t(2) keeps A/A false verdicts near 5% (t(4) called 17.5%)."""
    rng = np.random.default_rng(3)
    false = 0
    trials = 400
    for _ in range(trials):
        a, b = _invocations(rng, 0.0, 0.06, 1), _invocations(rng, 0.0, 0.06, 1)
        repeat, session = _components([a, b])
        assert session.source == "prior"
        lo, hi = log_ratio(invocation(b[0], repeat)[0], invocation(a[0], repeat)[0], session).interval()
        false += lo > 1.0 or hi < 1.0
    assert false / trials <= 0.07


@pytest.mark.slow
def test_a_quiet_boards_headline_is_decided_by_its_pooled_sessions():
    """CV 0.2%, three sessions of this model and three of four other models on record: the headline's
    width is at most about 3x the spread of re-run invocations and still covers the truth."""
    rng = np.random.default_rng(4)
    spread = math.sqrt(0.002 ** 2 + (0.005 ** 2 + 0.002 ** 2) / 3)
    widths, cover = [], 0
    trials = 200
    for _ in range(trials):
        this = _invocations(rng, 0.0, 0.002, 3)
        others = [_invocations(rng, rng.normal(), 0.002, 3) for _ in range(4)]
        repeat, session = _components([this, *others])
        assert session.prior_df < 0.05            # 10 df of data: the prior weighs 2 / (1 + 100)
        ests = [invocation(f, repeat)[0] for f in this]
        lo, hi = (math.log(x) for x in combine_sessions(ests[0], ests[1:], session).estimate.interval())
        widths.append((hi - lo) / spread)
        cover += lo <= 0.0 <= hi
    assert np.median(widths) <= 3.0 and cover / trials >= 0.9


def test_the_between_invocation_prior_fades_with_the_square_of_the_data_df():
    assert prior_weight(SESSION_PRIOR, 0) == 2.0
    assert prior_weight(SESSION_PRIOR, 1) == 1.0              # two sessions: t(2), never t(1)
    assert prior_weight(SESSION_PRIOR, 10) < 0.02


def test_the_prior_widens_but_never_narrows():
    """Sessions noisier than the 3% prior stand alone; quieter ones are pulled up towards it."""
    noisy = [[(0.06 * z, 1e-8) for z in (-1.2, 0.3, 0.9)], [(0.06 * z, 1e-8) for z in (0.8, -0.5, -0.3)]]
    c = pooled_component(noisy, SESSION_PRIOR)
    assert c.var == pytest.approx(c.data_var) and c.data_var > SESSION_PRIOR.cv ** 2
    assert c.df == pytest.approx(4.0, rel=1e-3)              # the data's own 4 df, no pseudo df on top
    assert "stand alone" in c.describe()
    two = pooled_component([[(-0.05, 1e-8), (0.05, 1e-8)]], SESSION_PRIOR)
    assert two.var == pytest.approx(two.data_var) and two.df == 2.0   # one data df: t(2), never t(1)
    quiet = [[(0.002 * z, 1e-8) for z in (-1.2, 0.3, 0.9)], [(0.002 * z, 1e-8) for z in (0.8, -0.5, -0.3)]]
    q = pooled_component(quiet, SESSION_PRIOR)
    assert q.var > q.data_var and "stand alone" not in q.describe()
