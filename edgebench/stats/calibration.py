"""Calibration and output fidelity of classifier outputs (level 1: pure, writes only where told).

Expected calibration error
--------------------------
:func:`expected_calibration_error` bins samples by their top-class confidence
``max_c p[i, c]`` into ``n_bins`` equal-width bins with edges
``0, 1/n_bins, ..., 1``. Bins are right-inclusive, ``(lo, hi]``, except the
first, ``[0, hi]``, so every confidence in [0, 1] falls in exactly one bin (and
1.0 lands in the last). With ``B_m`` the samples of bin m,

    ECE = sum_m |B_m| / N * |accuracy(B_m) - mean confidence(B_m)|

where a sample is accurate when its top class (``np.argmax``, ties to the lower
index) is its label. Empty bins contribute nothing and are reported with count 0
and None for their confidence and accuracy. Probabilities are used as given (for
an INT8 model: the dequantized outputs); rows need not sum exactly to 1, but
values outside [0, 1] are rejected, because they are logits, not probabilities.

The plug-in ECE above is biased upward at small n: sampling noise alone makes
``|accuracy - confidence|`` positive in every bin, so a perfectly calibrated model
scores about 0.09 at n=100 and 0.03 at n=1,000 (15 bins).

Bias-corrected ECE and its interval
-----------------------------------
:func:`ece_estimate` estimates each bin's gap from an unbiased estimate of its
*square* (Kumar, Liang & Ma 2019, "Verified uncertainty calibration"): with
``g_b`` = accuracy - mean confidence in bin b and ``a_b`` its accuracy over
``n_b`` samples, ``E[g_b^2 - a_b (1 - a_b) / (n_b - 1)]`` is the squared true gap,
so bin b contributes ``n_b / N * sqrt(max(0, g_b^2 - a_b (1 - a_b) / (n_b - 1)))``
(a bin of one sample uses its confidence c for the variance, c (1 - c)). This
keeps the ECE's L1 form and removes about half of the plug-in's bias for a
calibrated model, almost all of it for a miscalibrated one. Subtracting the
expected plug-in ECE of a perfectly calibrated model (reported as
``ece_null_expected``, by simulating labels as Bernoulli(confidence)) would centre
a calibrated model on 0 but understates a miscalibrated model's ECE by up to that
amount, so it is reported for context and not used as the estimate.

The interval is a seeded nonparametric bootstrap over samples (``n_boot``
resamples, bins fixed by the edges): the union of the percentile and the basic
(reflected) interval, clipped at 0. The percentile interval covers miscalibrated
models but, since the bootstrap adds noise of its own, excludes 0 for calibrated
ones; the basic interval does the reverse; their union covered the true binned
ECE in 0.90-1.00 of seeded simulations (n = 100, 300, 1,000; calibrated,
over- and under-confident models; 200 repetitions each, 95% nominal).
Assumptions: samples are independent and the bins are fixed before looking at
the labels.

Temperature scaling
-------------------
:func:`fit_temperature` finds the T > 0 that minimizes the mean negative
log-likelihood of ``softmax(z / T)`` (``scipy.optimize.minimize_scalar``,
bounded, on log T within :data:`TEMPERATURE_BOUNDS`). ``z`` are logits, or,
when probabilities are given, their logarithms (floored at ``prob_floor``,
because dequantized outputs contain exact zeros): softmax(log p / T) is p
sharpened or flattened. ``kind="auto"`` treats the input as probabilities when
every value is within [0, 1] and every row sums to 1 within
:data:`PROB_SUM_TOLERANCE`; pass ``kind`` explicitly to avoid the guess. A result at a
bound means the likelihood was still improving there (e.g. a model that is right
on every fitting sample wants T -> 0). Fit on a held-out split
(:func:`calibration_split`), never on the samples the ECE is then reported on.

Output fidelity
---------------
:func:`output_fidelity` compares a model's outputs with a reference's (e.g.
dequantized INT8 vs FP32) sample by sample.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from edgebench.errors import DataError, UsageError
from edgebench.results.figures.accuracy import Fidelity
from edgebench.stats._samples import as_matrix, check_count, check_level

DEFAULT_BINS = 15
TEMPERATURE_BOUNDS = (0.01, 100.0)
PROB_SUM_TOLERANCE = 0.05
PROB_FLOOR = 1e-7
_KINDS = ("auto", "logits", "probs")


def _as_labels(labels, n: int, num_classes: int) -> np.ndarray:
    y = np.asarray(labels)
    if y.shape != (n,):
        raise DataError(f"labels must have shape ({n},), got {y.shape}")
    if y.dtype.kind not in "iu":
        raise DataError(f"labels must be integer class indices, got dtype {y.dtype}")
    if n and (y.min() < 0 or y.max() >= num_classes):
        raise DataError(f"labels must be in [0, {num_classes - 1}], got values from {y.min()} to {y.max()}")
    return y.astype(np.int64)


# ---------------------------------------------------------------- ECE

@dataclass(frozen=True)
class ECEResult:
    """Expected calibration error and its bins (a list of dicts: lo, hi, count, confidence, accuracy)."""

    ece: float
    n: int
    n_bins: int
    bins: list

    @property
    def accuracy(self) -> float:
        return sum(b["accuracy"] * b["count"] for b in self.bins if b["count"]) / self.n

    def to_dict(self) -> dict:
        return {"ece": float(self.ece), "n": int(self.n), "n_bins": int(self.n_bins),
                "bins": [dict(b) for b in self.bins]}


def _probs_and_labels(probs, labels) -> tuple[np.ndarray, np.ndarray]:
    p = as_matrix(probs, "probs")
    if p.min() < 0.0 or p.max() > 1.0:
        raise DataError(f"probs must lie in [0, 1], got values from {p.min():.4g} to {p.max():.4g}",
                        hint="apply softmax to logits first")
    return p, _as_labels(labels, p.shape[0], p.shape[1])


def _bin_index(confidence: np.ndarray, n_bins: int) -> np.ndarray:
    """Bin of each confidence: equal-width, right-inclusive, the first bin closed."""
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    return np.clip(np.searchsorted(edges, confidence, side="left") - 1, 0, n_bins - 1)


def expected_calibration_error(probs, labels, n_bins: int = DEFAULT_BINS) -> ECEResult:
    """ECE of probabilities ``probs`` (N, C) against ``labels`` (N,); bins as in the module docstring."""
    p, y = _probs_and_labels(probs, labels)
    n_bins = check_count(n_bins, "n_bins", minimum=1)
    confidence = p.max(axis=1)
    correct = p.argmax(axis=1) == y
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    index = _bin_index(confidence, n_bins)
    bins, ece, n = [], 0.0, p.shape[0]
    for m in range(n_bins):
        mask = index == m
        count = int(mask.sum())
        conf = acc = None
        if count:
            conf, acc = float(confidence[mask].mean()), float(correct[mask].mean())
            ece += count / n * abs(acc - conf)
        bins.append({"lo": float(edges[m]), "hi": float(edges[m + 1]), "count": count,
                     "confidence": conf, "accuracy": acc})
    return ECEResult(ece=float(ece), n=int(n), n_bins=n_bins, bins=bins)


# ---------------------------------------------------------------- bias-corrected ECE

N_BOOT = 1000
N_NULL = 200
_BOOT_CELLS = 2_000_000  # resample rows x samples held in memory at once


@dataclass(frozen=True)
class ECEEstimate:
    """Plug-in ECE, its bias-corrected estimate and a bootstrap interval (see the module docstring)."""

    n: int
    n_bins: int
    ece_plugin: float
    ece_debiased: float
    ci_low: float
    ci_high: float
    ci_level: float
    ece_null_expected: float
    n_boot: int
    seed: int
    method: str = ("per-bin unbiased squared gap (Kumar et al. 2019), square root, weighted by bin share; "
                   "interval: union of the bootstrap percentile and basic intervals, clipped at 0")

    def to_dict(self) -> dict:
        return asdict(self)


def _binned(index: np.ndarray, conf: np.ndarray, correct: np.ndarray,
            n_bins: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-row bin counts, summed correctness and summed confidence of (R, N) index arrays."""
    rows = index.shape[0]
    flat = (np.arange(rows)[:, None] * n_bins + index).ravel()
    size = rows * n_bins

    def total(weights=None):
        return np.bincount(flat, weights=weights, minlength=size).reshape(rows, n_bins)

    return total().astype(np.float64), total(correct.ravel()), total(conf.ravel())


def _debiased(count, sum_correct, sum_conf, n: int) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = (sum_correct - sum_conf) / count
        acc, mean_conf = sum_correct / count, sum_conf / count
        var = np.where(count > 1, acc * (1.0 - acc) / (count - 1), mean_conf * (1.0 - mean_conf))
        per_bin = np.where(count > 0, count / n * np.sqrt(np.maximum(gap * gap - var, 0.0)), 0.0)
    return per_bin.sum(axis=1)


def _plugin(sum_correct, sum_conf, n: int) -> np.ndarray:
    return np.abs(sum_correct - sum_conf).sum(axis=1) / n


def ece_estimate(probs, labels, n_bins: int = DEFAULT_BINS, ci_level: float = 0.95, n_boot: int = N_BOOT,
                 seed: int = 0) -> ECEEstimate:
    """Bias-corrected ECE of ``probs`` (N, C) against ``labels`` with a seeded bootstrap interval."""
    level = check_level(ci_level)
    p, y = _probs_and_labels(probs, labels)
    n_bins = check_count(n_bins, "n_bins", minimum=1)
    n_boot = check_count(n_boot, "n_boot", minimum=10)
    seed = check_count(seed, "seed", minimum=0)
    n = p.shape[0]
    conf = p.max(axis=1)
    correct = (p.argmax(axis=1) == y).astype(np.float64)
    index = _bin_index(conf, n_bins)
    count, s_cor, s_conf = _binned(index[None], conf[None], correct[None], n_bins)
    plugin, point = float(_plugin(s_cor, s_conf, n)[0]), float(_debiased(count, s_cor, s_conf, n)[0])

    rng = np.random.default_rng(seed)
    chunks = []
    step = max(1, _BOOT_CELLS // n)
    for start in range(0, n_boot, step):
        rows = rng.integers(0, n, size=(min(step, n_boot - start), n))
        chunks.append(_debiased(*_binned(index[rows], conf[rows], correct[rows], n_bins), n))
    boot = np.concatenate(chunks)
    tail = (1.0 - level) / 2.0
    q_low, q_high = (float(v) for v in np.quantile(boot, [tail, 1.0 - tail]))
    low = max(0.0, min(q_low, 2.0 * point - q_high))
    high = max(q_high, 2.0 * point - q_low)

    null = []
    for start in range(0, N_NULL, step):
        k = min(step, N_NULL - start)
        draws = (rng.random((k, n)) < conf[None, :]).astype(np.float64)
        _, s_cor_null, s_conf_null = _binned(np.broadcast_to(index, (k, n)), np.broadcast_to(conf, (k, n)),
                                             draws, n_bins)
        null.append(_plugin(s_cor_null, s_conf_null, n))
    return ECEEstimate(n=int(n), n_bins=n_bins, ece_plugin=plugin, ece_debiased=point, ci_low=low,
                       ci_high=max(high, point), ci_level=level, ece_null_expected=float(np.mean(np.concatenate(null))),
                       n_boot=n_boot, seed=seed)


# ---------------------------------------------------------------- temperature scaling

def _log_inputs(values, kind: str, prob_floor: float) -> np.ndarray:
    if kind not in _KINDS:
        raise UsageError(f"kind must be one of {', '.join(_KINDS)}, got {kind!r}")
    z = as_matrix(values, "logits_or_probs")
    if kind == "auto":
        in_unit = z.min() >= 0.0 and z.max() <= 1.0
        kind = "probs" if in_unit and np.all(np.abs(z.sum(axis=1) - 1.0) <= PROB_SUM_TOLERANCE) else "logits"
    if kind == "probs":
        if z.min() < 0.0 or z.max() > 1.0:
            raise DataError("probabilities must lie in [0, 1]", hint="pass kind='logits' for logits")
        if not 0.0 < prob_floor < 1.0:
            raise UsageError(f"prob_floor must be in (0, 1), got {prob_floor!r}")
        return np.log(np.maximum(z, prob_floor))
    return z


def _nll(z: np.ndarray, y: np.ndarray, temperature: float) -> float:
    from scipy.special import log_softmax

    return float(-np.mean(log_softmax(z / temperature, axis=1)[np.arange(y.size), y]))


def fit_temperature(logits_or_probs, labels, kind: str = "auto", prob_floor: float = PROB_FLOOR) -> float:
    """Temperature T > 0 minimizing the NLL of ``softmax(z / T)`` on these samples (see module docstring)."""
    from scipy.optimize import minimize_scalar

    z = _log_inputs(logits_or_probs, kind, prob_floor)
    y = _as_labels(labels, z.shape[0], z.shape[1])
    lo, hi = (math.log(b) for b in TEMPERATURE_BOUNDS)
    res = minimize_scalar(lambda log_t: _nll(z, y, math.exp(log_t)), bounds=(lo, hi), method="bounded",
                          options={"xatol": 1e-6})
    return float(math.exp(res.x))


def apply_temperature(logits_or_probs, temperature: float, kind: str = "auto",
                      prob_floor: float = PROB_FLOOR) -> np.ndarray:
    """Probabilities ``softmax(z / temperature)`` (N, C); ``z`` as in :func:`fit_temperature`."""
    from scipy.special import softmax

    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) \
            or not math.isfinite(temperature) or temperature <= 0:
        raise UsageError(f"temperature must be a finite number > 0, got {temperature!r}")
    z = _log_inputs(logits_or_probs, kind, prob_floor)
    return softmax(z / float(temperature), axis=1)


def calibration_split(n: int, fit_fraction: float = 0.5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint sorted index arrays ``(fit, evaluate)`` over ``n`` samples, seeded.

    Fit the temperature on ``fit`` and report ECE after scaling on ``evaluate``.
    """
    n = check_count(n, "n", minimum=2)
    if isinstance(fit_fraction, bool) or not isinstance(fit_fraction, (int, float)) or not 0.0 < fit_fraction < 1.0:
        raise UsageError(f"fit_fraction must be in (0, 1), got {fit_fraction!r}")
    order = np.random.default_rng(check_count(seed, "seed", minimum=0)).permutation(n)
    k = min(max(int(round(n * fit_fraction)), 1), n - 1)
    return np.sort(order[:k]), np.sort(order[k:])


# ---------------------------------------------------------------- reliability diagram

def reliability_diagram(ece_result: ECEResult, path, title: str = "Reliability diagram") -> Path:
    """Write a reliability diagram of ``ece_result`` as a PNG at ``path``; returns the path.

    Bars: accuracy per confidence bin (empty bins left blank), the diagonal is
    perfect calibration, the bin's mean confidence is marked. matplotlib is imported
    here (Agg canvas, no pyplot state) so that importing edgebench stays fast.
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise UsageError("the reliability diagram needs matplotlib", hint="pip install matplotlib") from None

    out = Path(path)
    bins = [b for b in ece_result.bins if b["count"]]
    fig = Figure(figsize=(4.5, 4.5), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey", linewidth=1, label="perfect calibration")
    ax.bar([b["lo"] for b in bins], [b["accuracy"] for b in bins], width=[b["hi"] - b["lo"] for b in bins],
           align="edge", edgecolor="black", color="#4c72b0", alpha=0.8, label="accuracy")
    ax.plot([b["confidence"] for b in bins], [b["confidence"] for b in bins], "o", color="#dd8452",
            markersize=4, label="mean confidence")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("confidence (top class)")
    ax.set_ylabel("accuracy")
    ax.set_title(f"{title}\nECE {ece_result.ece:.4f}, n={ece_result.n:,}, {ece_result.n_bins} bins", fontsize=10)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(out, format="png")
    return out


# ---------------------------------------------------------------- output fidelity

def output_fidelity(y_ref, y_test) -> Fidelity:
    """:class:`Fidelity` of ``y_test`` against ``y_ref``, both float (N, ...) of the same shape."""
    try:
        ref = np.asarray(y_ref, dtype=np.float64)
        test = np.asarray(y_test, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataError(f"outputs must be numeric arrays ({exc})") from None
    if ref.shape != test.shape:
        raise DataError(f"output shapes differ: reference {ref.shape}, test {test.shape}")
    if ref.ndim < 1 or ref.shape[0] < 1 or ref.size == 0:
        raise DataError(f"outputs must have shape (N, ...) with N >= 1, got {ref.shape}")
    for name, a in (("reference", ref), ("test", test)):
        if not np.isfinite(a).all():
            raise DataError(f"{name} outputs have {int((~np.isfinite(a)).sum())} non-finite value(s)")
    r = ref.reshape(ref.shape[0], -1)
    t = test.reshape(test.shape[0], -1)
    diff = t - r
    norm_r, norm_t = np.linalg.norm(r, axis=1), np.linalg.norm(t, axis=1)
    both = norm_r * norm_t
    cos = np.where(both > 0, np.sum(r * t, axis=1) / np.where(both > 0, both, 1.0),
                   np.where((norm_r == 0) & (norm_t == 0), 1.0, 0.0))
    ref_norm = float(np.linalg.norm(r))
    return Fidelity(
        n=int(r.shape[0]),
        rmse=float(np.sqrt(np.mean(diff ** 2))),
        max_abs_error=float(np.max(np.abs(diff))),
        cosine_similarity=float(np.mean(cos)),
        relative_l2_error=float(np.linalg.norm(diff)) / ref_norm if ref_norm > 0 else None,
    )
