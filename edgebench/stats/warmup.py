"""Detect where warm-up ends in a series of latencies (MSER-5).

Method: the Marginal Standard Error Rule (MSER) of White (1997), applied to
means of non-overlapping batches of 5 samples (MSER-5, White, Cobb & Spratt
2000). With batch means ``Y_0 .. Y_{m-1}`` (a trailing partial batch is
dropped), truncating the first ``d`` batches leaves ``m - d`` batches with mean
``Ybar_d``, and the MSER statistic is

    MSER(d) = sum_{i=d}^{m-1} (Y_i - Ybar_d)^2 / (m - d)^2

i.e. the squared standard error of the truncated mean (up to a constant). The
truncation point is the ``d`` that minimizes it, searched over
``d <= max_fraction * m`` because MSER is unreliable near the end of the series
(few batches left). ``n_warmup = d * batch``, raised to at least
``min_warmup``. When the minimum sits at the search limit, warm-up may not have
ended within the series: ``at_limit`` says so, and the caller should warn or
measure longer.

References:
    K. P. White Jr. (1997). An effective truncation heuristic for bias reduction
    in simulation output. Simulation 69(6), 323-334.
    K. P. White Jr., M. J. Cobb, S. C. Spratt (2000). A comparison of five
    steady-state truncation heuristics for simulation. Proc. Winter Simulation
    Conference, 755-760.

scipy has no MSER, so the statistic is computed here with numpy suffix sums
(O(n)).
"""
from __future__ import annotations

import numbers
from dataclasses import asdict, dataclass

import numpy as np

from edgebench.errors import UsageError
from edgebench.stats._samples import as_samples, check_count

#: Fewer batches than this and MSER is not attempted: ``n_warmup = min_warmup``.
MIN_BATCHES = 10


@dataclass(frozen=True)
class WarmupResult:
    """Where warm-up ended.

    ``n_warmup``: samples to discard from the start. ``method``: how it was
    found (e.g. "MSER-5"). ``duration_s``: sum of the discarded samples.
    ``at_limit``: the MSER minimum is at the ``max_fraction`` search limit, so
    warm-up may still be going on.
    """

    n_warmup: int
    method: str
    duration_s: float
    at_limit: bool = False

    def to_dict(self) -> dict:
        return asdict(self)


def warmup_or_minimum(samples_s, min_warmup: int = 5) -> WarmupResult:
    """The warm-up of a run's end-to-end samples: MSER-5 (:func:`detect_warmup`), or the fixed
    minimum ``min_warmup`` when there are too few samples for MSER-5."""
    x = np.asarray(samples_s, dtype=np.float64)
    if x.size < max(2 * min_warmup, 20):
        n = min(min_warmup, x.size)
        return WarmupResult(n, "fixed minimum (too few samples for MSER-5)", float(x[:n].sum()))
    return detect_warmup(x, min_warmup=min_warmup)


#: at most this many leading samples are warm-up on an emulated board
EMULATED_MAX_WARMUP = 2
#: a sample within this fraction of the steady value is past warm-up on an emulated board
EMULATED_SETTLED_REL = 1e-3


def emulated_warmup(samples_s, max_warmup: int = EMULATED_MAX_WARMUP) -> WarmupResult:
    """The warm-up of an emulated board (QEMU -icount: every inference of a model retires the
    same instructions, so the timed figure is deterministic but for the first inference or two,
    which may differ by cache/branch-predictor state the emulator models, or by a timer tick):
    the leading samples, at most ``max_warmup``, that differ from the median of the series by
    more than ``EMULATED_SETTLED_REL`` of it. No fixed minimum of 10 and no MSER: a model whose
    inference takes a second of emulation would otherwise spend its whole budget warming up."""
    x = np.asarray(samples_s, dtype=np.float64)
    if x.size == 0:
        return WarmupResult(0, "emulated (deterministic instruction counts)", 0.0)
    steady = float(np.median(x))
    n = 0
    while n < min(max_warmup, x.size - 1) and abs(x[n] - steady) > EMULATED_SETTLED_REL * abs(steady):
        n += 1
    return WarmupResult(n, f"emulated: leading samples off the steady value (at most {max_warmup})",
                        float(x[:n].sum()))


def warmup_for(samples_s, min_warmup: int, label: str | None = None) -> WarmupResult:
    """The warm-up of a run: :func:`emulated_warmup` for figures labelled ``emulated``, else
    :func:`warmup_or_minimum`."""
    if label == "emulated":
        return emulated_warmup(samples_s)
    return warmup_or_minimum(samples_s, min_warmup)


def _mser(batch_means: np.ndarray) -> np.ndarray:
    """MSER(d) for every truncation d = 0 .. m-1 of the batch means."""
    y = batch_means - batch_means.mean()  # centring keeps the suffix sums well conditioned
    s1 = np.cumsum(y[::-1])[::-1]  # s1[d] = sum_{i >= d} y_i
    s2 = np.cumsum((y * y)[::-1])[::-1]
    k = np.arange(y.size, 0, -1, dtype=np.float64)  # batches left after truncating d
    sse = np.clip(s2 - s1 * s1 / k, 0.0, None)
    return sse / (k * k)


def detect_warmup(samples_s, min_warmup: int = 5, batch: int = 5, max_fraction: float = 0.5) -> WarmupResult:
    """Find the end of warm-up in latencies ``samples_s`` (in measurement order) by MSER-5.

    ``min_warmup``: samples always discarded. ``batch``: batch size (5 gives
    MSER-5). ``max_fraction``: the truncation searched is at most this fraction
    of the series. With fewer than ``MIN_BATCHES`` batches, MSER is not
    attempted and ``n_warmup = min_warmup``.

    Raises DataError for bad samples or fewer than ``min_warmup + 2`` of them;
    UsageError for bad parameters.
    """
    min_warmup = check_count(min_warmup, "min_warmup", minimum=0)
    batch = check_count(batch, "batch", minimum=1)
    if isinstance(max_fraction, bool) or not isinstance(max_fraction, numbers.Real) or not 0.0 < max_fraction < 1.0:
        raise UsageError(f"max_fraction must be in (0, 1), got {max_fraction!r}")
    x = as_samples(samples_s, min_n=min_warmup + 2)
    name = f"MSER-{batch}"
    m = x.size // batch
    d_max = int(np.floor(max_fraction * m))

    if m < MIN_BATCHES or d_max < 1:
        n_warmup, method, at_limit = min_warmup, f"min_warmup (too few samples for {name})", False
    else:
        means = x[: m * batch].reshape(m, batch).mean(axis=1)
        d_star = int(np.argmin(_mser(means)[: d_max + 1]))  # first minimum: the shortest truncation
        at_limit = d_star == d_max
        n_warmup, method = d_star * batch, name
        if n_warmup < min_warmup:
            n_warmup, method = min_warmup, f"{name}, raised to min_warmup"
    n_warmup = min(n_warmup, x.size - 2)  # always leave something to measure
    return WarmupResult(
        n_warmup=int(n_warmup),
        method=method,
        duration_s=float(x[:n_warmup].sum()),
        at_limit=bool(at_limit),
    )
