"""Classification accuracy with honest uncertainty (level 1: pure functions, no I/O).

Intervals
---------
- :func:`wilson_interval`: Wilson score interval of a proportion, without
  continuity correction (``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")``).
  It stays inside [0, 1] and keeps near-nominal coverage at accuracies close to
  1, where the Wald interval collapses.
- :class:`PairedComparison` ``diff_ci_*``: Newcombe's (1998) interval for a
  difference of *paired* proportions ("method 10", square-and-add of the two
  Wilson intervals with the correlation term phi, which is 0 when
  ``0 <= ad - bc <= n/2`` and ``(ad - bc - n/2) / sqrt(efgh)`` above that).

Top-k ranking
-------------
A sample is top-k correct when fewer than k classes rank above its true class,
ranking by score with ties broken towards the lower class index, the rule of
``np.argmax``. Dequantized INT8 outputs tie often (several classes saturated at
the same level), so the tie rule matters and is stated here.

Paired comparison (same samples, baseline vs candidate)
-------------------------------------------------------
``b`` = baseline right, candidate wrong (a right->wrong flip); ``c`` = baseline
wrong, candidate right (wrong->right). McNemar's *exact* test: under the null of
equal accuracy each discordant sample is a fair coin, so the two-sided p-value is
``scipy.stats.binomtest(b, b + c, 0.5).pvalue`` (``= min(1, 2 P(X <= min(b, c)))``);
it is 1 when there are no discordant samples. Relative accuracy, three ways:

- ``candidate_pct_of_baseline_correct`` = 100 x candidate correct / baseline correct;
  None when the baseline got nothing right.
- ``diff_points`` = 100 x (candidate accuracy - baseline accuracy); negative is a drop.
- ``error_increase_pct`` = 100 x (candidate errors - baseline errors) / baseline errors;
  0.0 when neither made an error; None when the baseline made no errors and the
  candidate did (an infinite relative increase: read the error counts instead).

Minimum detectable difference
-----------------------------
:func:`min_detectable_difference` answers "how large must a true accuracy difference
be for this test set to find it (two-sided alpha, given power)?":

- with ``paired_discordance`` psi (the proportion of samples on which the two models
  disagree in correctness, ``(b + c) / n``): the normal approximation to McNemar's
  test (Connor 1987), ``n = (z_{a/2} sqrt(psi) + z_b sqrt(psi - d^2))^2 / d^2``,
  solved for ``d`` by ``scipy.optimize.brentq`` on ``0 < d <= psi`` (a difference of
  discordant proportions cannot exceed psi);
- without it (None, or psi = 0 where the formula degenerates): two independent
  proportions of n samples each, a two-sided z test's power (as statsmodels' ``NormalIndPower``) solved
  for Cohen's ``h = 2 asin(sqrt(p1)) - 2 asin(sqrt(p2))``, mapped back to a drop
  below ``p_base``: ``p_base - sin^2(asin(sqrt(p_base)) - h / 2)``. Ignoring the
  pairing is conservative when the models agree on most samples, as a quantized
  model and its float original do.

It returns ``math.inf`` when no difference in the feasible range is resolvable
(n too small for even the largest possible difference). Differences are proportions
(0.01 = one accuracy point).

Significance and resolution, side by side
-----------------------------------------
They answer different questions and are never mixed. *Significance* is about the
observed data: :func:`difference_verdict` says a difference is resolved when
McNemar's exact p is below alpha **and** the paired interval excludes 0; no
difference is resolved when p >= alpha and the interval contains 0; when the
two disagree (it happens at the boundary, they are different procedures) the
verdict is "borderline" and no difference is claimed. *Resolution* (the MDD) is
about the test set's power before looking: a true difference of MDD points would
be found in ``power`` of repeated test sets. A significant difference smaller
than the MDD is still resolved (it was found); a non-significant one says only
that the difference lies within the interval, and that differences below the MDD
can go undetected.

Gates on intervals
------------------
:func:`gate_check` decides a "figure <= threshold" gate (a drop, an ECE) from the
figure's interval: it passes when the interval's *upper* bound is within the
threshold, fails when the lower bound is beyond it, and is "unresolved" (the
test set cannot tell; the gate does not pass) when the interval straddles the
threshold. Gating on the point estimate is available only when asked
(``gate_on="point"``) and is recorded as such.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass
from typing import Optional, Sequence

import numpy as np

from edgebench.errors import DataError, UsageError
from edgebench.stats._samples import as_matrix, check_count, check_level

TOP5 = 5


def wilson_interval(k: int, n: int, ci_level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval ``(low, high)`` for ``k`` successes out of ``n`` trials.

    Raises UsageError for n < 1, k outside [0, n], or a ``ci_level`` outside (0, 1).
    """
    from scipy.stats import binomtest

    level = check_level(ci_level)
    n = check_count(n, "n", minimum=1)
    k = check_count(k, "k", minimum=0)
    if k > n:
        raise UsageError(f"k ({k}) cannot exceed n ({n})")
    ci = binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
    return float(ci.low), float(ci.high)


# ---------------------------------------------------------------- input checks

def _as_labels(labels, n: int, num_classes: Optional[int] = None) -> np.ndarray:
    y = np.asarray(labels)
    if y.ndim != 1:
        raise DataError(f"labels must be one-dimensional class indices, got shape {y.shape}")
    if y.size != n:
        raise DataError(f"{y.size} labels for {n} samples")
    if y.dtype.kind not in "iu":
        if y.dtype.kind == "f" and np.isfinite(y).all() and np.all(y == np.round(y)):
            y = y.astype(np.int64)
        else:
            raise DataError(f"labels must be integer class indices, got dtype {y.dtype}")
    y = y.astype(np.int64)
    if y.size and y.min() < 0:
        raise DataError(f"labels have {int((y < 0).sum())} negative value(s)")
    if num_classes is not None and y.size and y.max() >= num_classes:
        raise DataError(
            f"labels have {int((y >= num_classes).sum())} value(s) >= the {num_classes} classes "
            f"(largest label {int(y.max())})")
    return y


def _as_correct(correct, name: str) -> np.ndarray:
    c = np.asarray(correct)
    if c.ndim != 1:
        raise DataError(f"{name} must be a one-dimensional boolean array, got shape {c.shape}")
    if c.dtype != np.bool_:
        if c.dtype.kind in "iu" and np.isin(c, (0, 1)).all():
            c = c.astype(bool)
        else:
            raise DataError(f"{name} must be boolean (True = correct), got dtype {c.dtype}")
    return c


def _ratio(num: float, den: float) -> Optional[float]:
    return None if den == 0 else num / den


def _plain(value):
    """numpy scalars -> Python numbers for JSON."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return value


# ---------------------------------------------------------------- accuracy

def topk_accuracy(scores, labels, k: int) -> np.ndarray:
    """Per-sample top-k correctness (bool, shape (N,)) of ``scores`` (N, C) against ``labels``.

    Ties rank towards the lower class index (as ``np.argmax``), see the module docstring.
    Raises DataError for bad arrays, UsageError for k outside [1, C].
    """
    s = as_matrix(scores, "scores")
    n, c = s.shape
    y = _as_labels(labels, n, num_classes=c)
    k = check_count(k, "k", minimum=1)
    if k > c:
        raise UsageError(f"top-{k} needs at least {k} classes, the scores have {c}")
    true_score = s[np.arange(n), y][:, None]
    idx = np.arange(c)[None, :]
    rank = (s > true_score).sum(axis=1) + ((s == true_score) & (idx < y[:, None])).sum(axis=1)
    return rank < k


@dataclass(frozen=True)
class AccuracySummary:
    """``correct`` of ``n`` samples right; Wilson CI of the accuracy at ``ci_level``."""

    n: int
    correct: int
    accuracy: float
    ci_low: float
    ci_high: float
    ci_level: float = 0.95

    def to_dict(self) -> dict:
        return {key: _plain(value) for key, value in asdict(self).items()}


def summarize_correct(correct, ci_level: float = 0.95) -> AccuracySummary:
    """:class:`AccuracySummary` of a per-sample correctness array (bool, shape (N,), N >= 1)."""
    c = _as_correct(correct, "correct")
    if c.size == 0:
        raise DataError("no samples: accuracy needs at least one")
    k, n = int(c.sum()), int(c.size)
    low, high = wilson_interval(k, n, ci_level)
    return AccuracySummary(n=n, correct=k, accuracy=k / n, ci_low=low, ci_high=high, ci_level=float(ci_level))


@dataclass(frozen=True)
class ClassAccuracy:
    """Top-1 accuracy on the samples whose true class is ``class_index`` (its recall).

    ``accuracy``/``ci_*`` are None when the class has no samples.
    """

    class_index: int
    class_name: Optional[str]
    n: int
    correct: int
    accuracy: Optional[float]
    ci_low: Optional[float]
    ci_high: Optional[float]

    def to_dict(self) -> dict:
        return {key: _plain(value) for key, value in asdict(self).items()}


@dataclass(frozen=True)
class AccuracyReport:
    """Top-1 and top-5 (None unless there are more than 5 classes) and per-class top-1."""

    top1: AccuracySummary
    top5: Optional[AccuracySummary]
    per_class: tuple
    num_classes: int

    def to_dict(self) -> dict:
        return {
            "top1": self.top1.to_dict(),
            "top5": None if self.top5 is None else self.top5.to_dict(),
            "per_class": [c.to_dict() for c in self.per_class],
            "num_classes": int(self.num_classes),
        }


def per_class_accuracy(correct, labels, num_classes: int, class_names: Optional[Sequence[str]] = None,
                       ci_level: float = 0.95) -> tuple:
    """Per-class accuracy with Wilson CIs: one :class:`ClassAccuracy` per class 0..num_classes-1."""
    c = _as_correct(correct, "correct")
    num_classes = check_count(num_classes, "num_classes", minimum=1)
    y = _as_labels(labels, c.size, num_classes=num_classes)
    if class_names is not None and len(class_names) != num_classes:
        raise DataError(f"{len(class_names)} class names for {num_classes} classes")
    out = []
    for cls in range(num_classes):
        mask = y == cls
        n = int(mask.sum())
        k = int(c[mask].sum())
        ci = wilson_interval(k, n, ci_level) if n else (None, None)
        out.append(ClassAccuracy(
            class_index=cls, class_name=None if class_names is None else str(class_names[cls]),
            n=n, correct=k, accuracy=k / n if n else None, ci_low=ci[0], ci_high=ci[1]))
    return tuple(out)


def accuracy_report(scores, labels, class_names: Optional[Sequence[str]] = None,
                    ci_level: float = 0.95) -> AccuracyReport:
    """Top-1, top-5 (when C > 5) and per-class accuracy of ``scores`` (N, C) with Wilson CIs."""
    s = as_matrix(scores, "scores")
    top1 = topk_accuracy(s, labels, 1)
    c = s.shape[1]
    top5 = summarize_correct(topk_accuracy(s, labels, TOP5), ci_level) if c > TOP5 else None
    return AccuracyReport(
        top1=summarize_correct(top1, ci_level),
        top5=top5,
        per_class=per_class_accuracy(top1, labels, c, class_names, ci_level),
        num_classes=c,
    )


# ---------------------------------------------------------------- paired comparison

@dataclass(frozen=True)
class PairedComparison:
    """Baseline vs candidate on the same ``n`` samples; see the module docstring.

    Accuracies and the difference CI (``diff_ci_*_points``, Newcombe method 10) are
    in the units their names say. ``agreement_rate`` (same predicted label) is None
    when no predictions were given. ``discordant_proportion`` = (b + c) / n is the
    ``paired_discordance`` to pass to :func:`min_detectable_difference`.
    """

    n: int
    baseline_correct: int
    candidate_correct: int
    baseline_accuracy: float
    candidate_accuracy: float
    agreement_rate: Optional[float]
    flips_right_to_wrong: int
    flips_wrong_to_right: int
    discordant_proportion: float
    mcnemar_p: float
    diff_points: float
    diff_ci_low_points: float
    diff_ci_high_points: float
    ci_level: float
    candidate_pct_of_baseline_correct: Optional[float]
    baseline_errors: int
    candidate_errors: int
    error_increase_pct: Optional[float]
    test: str = "McNemar exact (two-sided binomial test of b of b + c at p = 0.5)"

    def to_dict(self) -> dict:
        return {key: _plain(value) for key, value in asdict(self).items()}


def mcnemar_exact_p(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts; 1.0 when b + c = 0."""
    from scipy.stats import binomtest

    b = check_count(b, "b", minimum=0)
    c = check_count(c, "c", minimum=0)
    if b + c == 0:
        return 1.0
    return float(binomtest(b, b + c, 0.5, alternative="two-sided").pvalue)


def _paired_diff_ci(a: int, b: int, c: int, d: int, ci_level: float) -> tuple[float, float]:
    """Newcombe (1998) method 10 CI of (candidate - baseline) accuracy from the paired table.

    a: both right, b: baseline only, c: candidate only, d: both wrong.
    """
    n = a + b + c + d
    p_base, p_cand = (a + b) / n, (a + c) / n
    l_base, u_base = wilson_interval(a + b, n, ci_level)
    l_cand, u_cand = wilson_interval(a + c, n, ci_level)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    cross = a * d - b * c
    if margins == 0 or 0 <= cross <= n / 2:
        phi = 0.0
    elif cross > n / 2:
        phi = (cross - n / 2) / math.sqrt(margins)
    else:
        phi = cross / math.sqrt(margins)
    diff = p_cand - p_base
    lo_c, hi_b = p_cand - l_cand, u_base - p_base
    hi_c, lo_b = u_cand - p_cand, p_base - l_base
    low = diff - math.sqrt(max(lo_c ** 2 - 2 * phi * lo_c * hi_b + hi_b ** 2, 0.0))
    high = diff + math.sqrt(max(hi_c ** 2 - 2 * phi * hi_c * lo_b + lo_b ** 2, 0.0))
    return max(low, -1.0), min(high, 1.0)


def paired_comparison(correct_base, correct_cand, pred_base=None, pred_cand=None,
                      ci_level: float = 0.95) -> PairedComparison:
    """Compare a candidate (e.g. INT8) with its baseline (e.g. FP32) on the same samples.

    ``correct_*``: per-sample correctness (bool, shape (N,)); ``pred_*``: predicted
    labels (shape (N,)) for the agreement rate, optional (both or neither).
    """
    level = check_level(ci_level)
    base = _as_correct(correct_base, "correct_base")
    cand = _as_correct(correct_cand, "correct_cand")
    if base.size != cand.size:
        raise DataError(f"baseline has {base.size} samples, candidate {cand.size}: they must be the same samples")
    n = int(base.size)
    if n == 0:
        raise DataError("no samples to compare")
    if (pred_base is None) != (pred_cand is None):
        raise UsageError("give both pred_base and pred_cand, or neither")
    agreement = None
    if pred_base is not None:
        pb, pc = np.asarray(pred_base), np.asarray(pred_cand)
        if pb.shape != (n,) or pc.shape != (n,):
            raise DataError(f"predictions must have shape ({n},), got {pb.shape} and {pc.shape}")
        agreement = float(np.mean(pb == pc))

    a = int(np.sum(base & cand))
    b = int(np.sum(base & ~cand))
    c = int(np.sum(~base & cand))
    d = n - a - b - c
    k_base, k_cand = a + b, a + c
    err_base, err_cand = n - k_base, n - k_cand
    if err_base == 0:
        error_increase = 0.0 if err_cand == 0 else None
    else:
        error_increase = 100.0 * (err_cand - err_base) / err_base
    pct_of_base = _ratio(100.0 * k_cand, k_base)
    ci_low, ci_high = _paired_diff_ci(a, b, c, d, level)
    return PairedComparison(
        n=n,
        baseline_correct=k_base,
        candidate_correct=k_cand,
        baseline_accuracy=k_base / n,
        candidate_accuracy=k_cand / n,
        agreement_rate=agreement,
        flips_right_to_wrong=b,
        flips_wrong_to_right=c,
        discordant_proportion=(b + c) / n,
        mcnemar_p=mcnemar_exact_p(b, c),
        diff_points=100.0 * (k_cand - k_base) / n,
        diff_ci_low_points=100.0 * ci_low,
        diff_ci_high_points=100.0 * ci_high,
        ci_level=level,
        candidate_pct_of_baseline_correct=pct_of_base,
        baseline_errors=err_base,
        candidate_errors=err_cand,
        error_increase_pct=error_increase,
    )


# ---------------------------------------------------------------- resolution of the test set

def _check_probability(value, name: str, closed: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise UsageError(f"{name} must be a number in [0, 1], got {value!r}")
    v = float(value)
    if not (0.0 <= v <= 1.0 if closed else 0.0 < v < 1.0):
        raise UsageError(f"{name} must be in {'[0, 1]' if closed else '(0, 1)'}, got {value!r}")
    return v


def _cohen_h_resolved(n: int, alpha: float, power: float) -> float:
    """Cohen's h that a two-sided z test of two groups of ``n`` reaches with ``power`` at ``alpha``.

    The power of that test is ``Φ(h·√(n/2) − z) + Φ(−h·√(n/2) − z)`` with ``z = Φ⁻¹(1 − α/2)``
    (both tails; what statsmodels' ``NormalIndPower`` solves with ratio 1), solved for h.
    """
    from scipy.optimize import brentq
    from scipy.stats import norm

    z, root_n = norm.isf(alpha / 2.0), math.sqrt(n / 2.0)

    def short(h: float) -> float:
        return norm.sf(z - h * root_n) + norm.cdf(-z - h * root_n) - power

    upper = 1.0
    while short(upper) < 0:
        upper *= 2.0
    return float(brentq(short, 0.0, upper, xtol=1e-14, rtol=1e-12))


def min_detectable_difference(n: int, p_base: float, alpha: float = 0.05, power: float = 0.8,
                              paired_discordance: Optional[float] = None) -> float:
    """Smallest true accuracy difference (a proportion) that ``n`` test samples resolve.

    Two-sided test at ``alpha`` with the given ``power``; the method (McNemar's
    normal approximation when ``paired_discordance`` > 0, else two independent
    proportions via Cohen's h) is described in the module docstring. Returns
    ``math.inf`` when no feasible difference is resolvable. Decreases with ``n``.
    """
    from scipy.optimize import brentq
    from scipy.stats import norm

    n = check_count(n, "n", minimum=1)
    p_base = _check_probability(p_base, "p_base")
    alpha = _check_probability(alpha, "alpha", closed=False)
    power = _check_probability(power, "power", closed=False)
    psi = None if paired_discordance is None else _check_probability(paired_discordance, "paired_discordance")

    if psi:  # McNemar, normal approximation (Connor 1987)
        z_a, z_b = norm.ppf(1.0 - alpha / 2.0), norm.ppf(power)

        def excess(delta: float) -> float:
            root = math.sqrt(max(psi - delta * delta, 0.0))
            return (z_a * math.sqrt(psi) + z_b * root) ** 2 / delta ** 2 - n

        if excess(psi) > 0:
            return math.inf
        tiny = psi * 1e-9
        return float(brentq(excess, tiny, psi, xtol=1e-12, rtol=1e-10))

    h = _cohen_h_resolved(n, alpha, power)
    angle = math.asin(math.sqrt(p_base)) - h / 2.0
    if angle < 0:
        return math.inf
    return p_base - math.sin(angle) ** 2


GATE_ON = ("interval", "point")
VERDICTS = ("difference", "no-difference-resolved", "borderline")


def difference_verdict(pc: PairedComparison, alpha: float = 0.05) -> dict:
    """The verdict on a paired comparison from McNemar's test and the paired interval together.

    ``verdict`` is one of :data:`VERDICTS` (see the module docstring); ``resolved``
    is True only for "difference". The MDD is reported beside it, never mixed in.
    """
    alpha = _check_probability(alpha, "alpha", closed=False)
    significant = pc.mcnemar_p < alpha
    excludes_zero = pc.diff_ci_low_points > 0 or pc.diff_ci_high_points < 0
    if significant and excludes_zero:
        verdict = "difference"
    elif not significant and not excludes_zero:
        verdict = "no-difference-resolved"
    else:
        verdict = "borderline"
    return {"verdict": verdict, "resolved": verdict == "difference", "significant": bool(significant),
            "ci_excludes_zero": bool(excludes_zero), "alpha": alpha}


def gate_check(point: Optional[float], low: Optional[float], high: Optional[float], threshold: Optional[float],
               gate_on: str = "interval") -> dict:
    """Decide "figure <= threshold" from the figure's interval (or its point estimate when asked).

    ``outcome`` is "pass", "fail", "unresolved" (interval straddles the threshold:
    not passed) or "not gated" (no threshold or no figure); ``acceptable`` is True,
    False, False, None respectively; ``value`` is the number the gate compared.
    """
    if gate_on not in GATE_ON:
        raise UsageError(f"gate_on must be one of {', '.join(GATE_ON)}, got {gate_on!r}")
    if threshold is None or point is None or (gate_on == "interval" and (low is None or high is None)):
        return {"gate_on": gate_on, "value": None, "acceptable": None, "outcome": "not gated",
                "interval_straddles": None}
    straddles = None if low is None or high is None else bool(low <= threshold < high)
    if gate_on == "point":
        ok = bool(point <= threshold)
        return {"gate_on": gate_on, "value": float(point), "acceptable": ok, "outcome": "pass" if ok else "fail",
                "interval_straddles": straddles}
    assert low is not None and high is not None   # gate_on "interval": checked above
    outcome = "pass" if high <= threshold else ("fail" if low > threshold else "unresolved")
    return {"gate_on": gate_on, "value": float(high), "acceptable": outcome == "pass", "outcome": outcome,
            "interval_straddles": straddles}
