"""The minimum detectable effect (edgebench.stats.power): checked against a simulation of the t test it describes."""
import math

import numpy as np
import pytest

from edgebench.errors import DataError
from edgebench.stats.power import detectable, gate_verdict, power_at, sessions_needed


def test_mde_is_detected_with_the_stated_power_by_simulation():
    from scipy.stats import t as student_t

    rng = np.random.default_rng(7)
    se, df, alpha = 0.02, 12, 0.05
    mde = detectable(se, df, alpha=alpha, power=0.8)
    # a t test on a log ratio estimated with se and df (chi-squared variance estimate)
    n = 20000
    est = rng.normal(math.log(mde.ratio), se, n)
    s = se * np.sqrt(rng.chisquare(df, n) / df)
    called = np.abs(est / s) > student_t.ppf(1 - alpha / 2, df)
    assert abs(called.mean() - 0.8) < 0.03
    assert abs(power_at(mde.ratio, se, df, alpha) - 0.8) < 1e-3


def test_more_tests_or_fewer_df_need_a_larger_ratio():
    base = detectable(0.02, 30).ratio
    assert detectable(0.02, 30, tests=5).ratio > base
    assert detectable(0.02, 3).ratio > base
    assert power_at(1.0, 0.02, 30) < 0.06


def test_sessions_needed_falls_with_session_variance():
    few = sessions_needed(1.05, 0.0, 0.01 ** 2, df=30)
    many = sessions_needed(1.05, 0.0, 0.03 ** 2, df=30)
    assert few is not None and many is not None and few < many
    assert sessions_needed(1.01, 0.02 ** 2, 0.03 ** 2, df=30, max_sessions=50) is None


def test_bad_arguments_are_one_clear_error():
    with pytest.raises(DataError):
        detectable(-1.0, 10)
    with pytest.raises(DataError):
        detectable(0.1, 10, alpha=1.5)


def test_the_one_gate_rule_fails_passes_and_cannot_decide_where_it_should():
    mde = {"ratio": 1.08, "beyond_limit": False}
    assert gate_verdict(1.06, 1.05, mde)["failed"]                       # interval wholly above the limit
    passed = gate_verdict(0.99, 1.10, mde)
    assert not passed["failed"] and not passed["undecided"]              # the limit lies above the mde
    blind = gate_verdict(0.99, 1.05, mde)
    assert not blind["failed"] and blind["undecided"] and blind["mde_ratio"] == 1.08
    nothing = gate_verdict(0.99, 1.5, {"ratio": None, "beyond_limit": True})
    assert nothing["undecided"] and nothing["mde_beyond_limit"]
    assert gate_verdict(0.99, 1.5, None, no_verdict=True)["undecided"]    # too few blocks
    assert not gate_verdict(0.99, 1.5, None)["undecided"]                 # no power figure: no doubt from it
    assert gate_verdict(1.2, 1.05, {"ratio": None, "beyond_limit": True})["failed"]   # failing needs no power
    with pytest.raises(DataError):
        gate_verdict(1.0, 0.9, mde)
