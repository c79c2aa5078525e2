"""Change points in a history of figures (level 1: pure functions on numpy/scipy).

A series is one figure per run over time (one run = one invocation of the command), each
with its own standard error of log(value) ``se`` from the run's interval. On the log scale
(:mod:`edgebench.stats.variation`)::

    y_i = mu_segment(i) + u_i + e_i,   u_i ~ N(0, sigma2) between invocations,  e_i ~ N(0, se_i^2)

A run's own interval covers what varied inside it (samples, repeats), not what differs
between invocations (``sigma2``, a property of the machine), so each point is weighed by
``1 / (se_i^2 + sigma2)``; ``sigma2`` is estimated from the series itself by the spread of
successive differences (robust to the level shifts being looked for: a shift moves one
difference, not the median of them), less the points' own variance, never below 0.

Detection is binary segmentation (as e-divisive and Otava do): over a segment, the split
``k`` maximising the weighted two-sample statistic
``|mean_w(y[:k]) - mean_w(y[k:])| / sqrt(1/W_before + 1/W_after)`` is a change when its
**permutation p-value** (the same maximum over random orders of the segment's points, each
with its own ``se``) is below ``alpha``; both halves are then searched again. The maximum
over every split is what is permuted, so the p-value already pays for looking at all of
them. The false-alarm rate per A/A series and the power at 3/5/10% shifts are measured by
simulation with the project's variation model (``benchmarks/changepoints.py``, docs/store.md).

Each change reports the ratio of the weighted mean levels after/before (between the
neighbouring changes) with its interval, Student t on the points' count.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional, Sequence

ALPHA = 0.01            # permutation p-value below which a split is a change
PERMUTATIONS = 499      # random orders per test (p-values down to 1/500)
MIN_SIZE = 3            # points on each side of a change at least
MAX_CHANGES = 20
LEVEL = 0.95


@dataclass(frozen=True)
class Shift:
    """A level shift: points from ``index`` on sit at ``ratio`` times the level before
    (``ci_low``..``ci_high`` at :data:`LEVEL`), permutation ``p_value``, the statistic ``z``."""
    index: int
    ratio: float
    ci_low: float
    ci_high: float
    p_value: float
    z: float

    def to_dict(self) -> dict:
        return {"index": self.index, "ratio": self.ratio, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "p_value": self.p_value, "z": self.z}


@dataclass
class Changes:
    """What :func:`detect` found: the shifts (by index) and the between-invocation spread used."""
    shifts: list = field(default_factory=list)
    sigma_log: float = 0.0
    n: int = 0
    method: str = ""

    def to_dict(self) -> dict:
        return {"shifts": [s.to_dict() for s in self.shifts], "sigma_log": self.sigma_log, "n": self.n,
                "method": self.method}


def between_spread(y, se2) -> float:
    """The between-invocation variance of ``y`` beyond the points' own ``se2``: from the median
    absolute successive difference (normal consistency 1.4826, difference of two: / sqrt 2)."""
    import numpy as np

    if len(y) < 3:
        return 0.0
    d = np.abs(np.diff(y))
    total = (1.4826 * float(np.median(d))) ** 2 / 2.0
    return max(0.0, total - float(np.median(se2)))


def _best_split(y, w, min_size: int):
    """``(index, |z|)`` of the best split of each row of ``y`` (2-D: rows are orders), weights ``w``."""
    import numpy as np

    cw = np.cumsum(w, axis=1)
    cwy = np.cumsum(w * y, axis=1)
    total_w, total_wy = cw[:, -1:], cwy[:, -1:]
    n = y.shape[1]
    ks = np.arange(min_size, n - min_size + 1)           # split before index k
    wb, wyb = cw[:, ks - 1], cwy[:, ks - 1]
    wa, wya = total_w - wb, total_wy - wyb
    z = np.abs(wyb / wb - wya / wa) / np.sqrt(1.0 / wb + 1.0 / wa)
    best = np.argmax(z, axis=1)
    return ks[best], z[np.arange(z.shape[0]), best]


def _test(y, w, min_size: int, permutations: int, rng):
    import numpy as np

    k, z = _best_split(y[None, :], w[None, :], min_size)
    order = np.argsort(rng.random((permutations, len(y))), axis=1)
    _, zp = _best_split(y[order], w[order], min_size)
    p = (1 + int(np.sum(zp >= z[0] - 1e-12))) / (permutations + 1)
    return int(k[0]), float(z[0]), p


def _shift(y, w, lo: int, k: int, hi: int, p: float, z: float, level: float) -> Shift:
    from scipy import stats

    before, after = slice(lo, k), slice(k, hi)
    wb, wa = float(w[before].sum()), float(w[after].sum())
    mb, ma = float((w[before] * y[before]).sum() / wb), float((w[after] * y[after]).sum() / wa)
    se = math.sqrt(1.0 / wb + 1.0 / wa)
    q = float(stats.t.ppf(1 - (1 - level) / 2, max(1, hi - lo - 2)))
    d = ma - mb
    return Shift(index=k, ratio=math.exp(d), ci_low=math.exp(d - q * se), ci_high=math.exp(d + q * se),
                 p_value=p, z=z)


def detect(values: Sequence[float], se_log: Optional[Sequence[Optional[float]]] = None, alpha: float = ALPHA,
           permutations: int = PERMUTATIONS, min_size: int = MIN_SIZE, max_changes: int = MAX_CHANGES,
           seed: int = 0, level: float = LEVEL) -> Changes:
    """The level shifts of the positive ``values`` (module doc). ``se_log``: each point's standard
    error of log(value) (None or missing: 0, the point weighed by the between spread only)."""
    import numpy as np

    v = np.asarray(values, dtype=float)
    if np.any(~np.isfinite(v)) or np.any(v <= 0):
        raise ValueError("change points need finite positive values")
    y = np.log(v)
    se = np.array([0.0 if s is None or not math.isfinite(float(s)) else float(s)
                   for s in (se_log if se_log is not None else [None] * len(y))])
    if len(se) != len(y):
        raise ValueError("se_log must have one entry per value")
    se2 = se ** 2
    sigma2 = between_spread(y, se2)
    var = se2 + sigma2
    floor = max(float(np.median(var[var > 0])) if np.any(var > 0) else 0.0, 1e-18) * 1e-6
    w = 1.0 / np.maximum(var, floor)                      # identical points: equal weights, no division by 0
    rng = np.random.default_rng(seed)
    method = (f"binary segmentation, weighted mean-shift statistic, permutation p < {alpha:g} "
              f"({permutations} orders), at least {min_size} points a side")
    cuts: list = []
    todo = [(0, len(y))]
    while todo and len(cuts) < max_changes:
        lo, hi = todo.pop()
        if hi - lo < 2 * min_size or np.ptp(y[lo:hi]) == 0:
            continue
        k, z, p = _test(y[lo:hi], w[lo:hi], min_size, permutations, rng)
        if p < alpha:
            cuts.append((lo + k, p, z))
            todo += [(lo, lo + k), (lo + k, hi)]
    cuts.sort()
    bounds = [0] + [c[0] for c in cuts] + [len(y)]
    shifts = [_shift(y, w, bounds[i], c[0], bounds[i + 2], c[1], c[2], level) for i, c in enumerate(cuts)]
    return Changes(shifts=shifts, sigma_log=math.sqrt(sigma2), n=len(y), method=method)


__all__ = ["ALPHA", "PERMUTATIONS", "MIN_SIZE", "Changes", "Shift", "between_spread", "detect"]
