"""Change points (edgebench.stats.changepoint): found at a planted shift, rare in A/A series, each
point weighed by its own interval. Rates over many seeds are measured by benchmarks/changepoints.py."""
from __future__ import annotations

import numpy as np
import pytest

from edgebench.stats.changepoint import between_spread, detect

SESSION_CV, OWN_SE = 0.03, 0.005      # the variation model's prior between invocations; a run's own interval


def series(seed: int, n: int = 60, shift: float = 0.0, at: int = 30):
    rng = np.random.default_rng(seed)
    y = rng.normal(0.0, SESSION_CV, n) + rng.normal(0.0, OWN_SE, n)
    y[at:] += np.log1p(shift)
    return np.exp(y) * 1e-3, [OWN_SE] * n


@pytest.mark.parametrize("seed", range(5))
def test_a_planted_ten_percent_shift_is_found_where_it_was_planted(seed):
    values, se = series(seed, shift=0.10, at=37)
    found = detect(values, se, seed=seed)
    assert [s.index for s in found.shifts] and min(abs(s.index - 37) for s in found.shifts) <= 2
    s = min(found.shifts, key=lambda s: abs(s.index - 37))
    assert abs(s.ratio - 1.10) < 0.05 and s.ci_low < s.ratio < s.ci_high and s.p_value < 0.01


def test_a_and_a_series_have_no_change_in_most_seeds():
    alarms = sum(bool(detect(*series(seed), seed=seed).shifts) for seed in range(30))
    assert alarms <= 3                     # alpha 0.01 per test: ~0.3 expected in 30


def test_a_point_is_weighed_by_its_own_interval():
    rng = np.random.default_rng(7)
    n = 40
    y = rng.normal(0.0, 0.01, n)
    y[20:] += 0.05                         # the later runs 5 % slower ...
    wide = [0.01] * 20 + [0.5] * 20        # ... but their own intervals say they know nothing
    assert detect(np.exp(y), wide).shifts == []
    sure = [0.01] * n                      # the same values, each run sure of itself: a change
    assert [s.index for s in detect(np.exp(y), sure).shifts] == [20]


def test_the_between_invocation_spread_is_estimated_past_the_shift():
    values, se = series(3, n=200, shift=0.2, at=100)
    sigma = np.sqrt(between_spread(np.log(values), np.square(se)))
    assert 0.02 < sigma < 0.04             # the planted 3 %, not inflated by the 20 % shift


def test_constant_short_and_bad_series():
    assert detect([1.0] * 20).shifts == []
    assert detect([1.0, 2.0, 3.0]).shifts == []
    with pytest.raises(ValueError):
        detect([1.0, 0.0, 1.0])
    with pytest.raises(ValueError):
        detect([1.0, 2.0], [0.1])
