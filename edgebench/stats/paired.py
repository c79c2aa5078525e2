"""Two sides measured in blocks of separate invocations, compared paired by block (level 1: pure functions).

``edgebench bench A B --rounds N`` (:mod:`edgebench.bench.rounds`) runs A and B once each in
every block, in a seeded random order, each a fresh invocation. Block ``i`` gives each side's
figure as a log (``log median``) with its within-invocation standard error; the block's
difference ``d_i = y_B,i - y_A,i`` is the log of B's figure over A's. What drifts slowly across
blocks (the machine warming, another engineer's load arriving) falls on both sides of a block
and cancels in ``d_i``; what is left is each side's between-invocation scatter and the
within-invocation terms.

The estimate is ``mean(d_i)``, its variance ``v / N`` where ``v`` is the sample variance of the
``d_i`` on ``N - 1`` degrees of freedom, but never below the mean within-block term
``mean(se_A,i^2 + se_B,i^2)`` (the blocks cannot scatter less than their own invocations'
intervals say; with that floor the df stay ``N - 1``, conservative). The interval is Student t.

**Fewer than 3 blocks** (``N - 1 < 2`` degrees of freedom, where t(1) would give a 95% interval
12.7 standard errors wide): the variance of a block's difference is pooled with the stated prior
for the variation between invocations (:func:`edgebench.stats.variation.priors`; twice its
variance, one invocation per side) weighted by its pseudo degrees of freedom, but never below
the blocks' own spread (a machine noisier than the prior keeps its own variance), so the interval
uses t(N - 1 + prior df), and the result says so (``fallback``). With so few blocks the prior
decides the width, and on a machine noisier than the prior two equal sides would be called
different (11.6% of A/A sets at a true invocation CV of 6%, ``benchmarks/rounds_sim.py``), so no
verdict is given (:data:`NO_VERDICT`): the interval is printed, and a gate either fails on its
lower bound or cannot decide.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional, Sequence

from edgebench.errors import DataError
from edgebench.stats.power import GATE_RULE, beyond_limit, detectable, gate_verdict

#: below this many blocks the between-block variance is pooled with the stated prior (module doc)
MIN_BLOCKS = 3
#: the verdict with fewer than MIN_BLOCKS blocks: the interval is printed, nothing is called
NO_VERDICT = "no verdict with fewer than 3 rounds"


@dataclass(frozen=True)
class Block:
    """One block: each side's figure (a positive number, e.g. a median in seconds) and the
    standard error of its log within its invocation (0 when unknown)."""

    a: float
    b: float
    se_a: float = 0.0
    se_b: float = 0.0

    @property
    def d(self) -> float:
        return math.log(self.b) - math.log(self.a)

    @property
    def within_var(self) -> float:
        return self.se_a ** 2 + self.se_b ** 2


@dataclass
class PairedResult:
    """Ratio B / A (> 1: B's figure is larger, i.e. slower for a latency) over the blocks."""

    ratio: float
    ci_low: float
    ci_high: float
    ci_level: float
    se_log: float
    df: float
    blocks: int
    p_value: float
    verdict: str                     # "B larger" / "B smaller" / "no difference resolved" / NO_VERDICT
    block_ratios: list
    between_block_sd_log: Optional[float]   # sample sd of d_i (None with one block)
    within_var_log: float                   # mean within-block variance of d_i
    method: str
    fallback: Optional[str] = None          # what replaced t(N-1) when N < MIN_BLOCKS
    mde: Optional[dict] = None              # edgebench.stats.power.Detectable.to_dict()
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"ratio": self.ratio, "ci_low": self.ci_low, "ci_high": self.ci_high, "ci_level": self.ci_level,
                "se_log": self.se_log, "df": self.df, "blocks": self.blocks, "p_value": self.p_value,
                "verdict": self.verdict, "block_ratios": self.block_ratios,
                "between_block_sd_log": self.between_block_sd_log, "within_var_log": self.within_var_log,
                "method": self.method, "fallback": self.fallback, "mde": self.mde, **self.extra}


def paired_blocks(blocks: Sequence[Block], level: float = 0.95, alpha: float = 0.05,
                  label: str = "measured") -> PairedResult:
    """The paired-by-block ratio B / A with its interval, verdict and minimum detectable ratio (module doc)."""
    from scipy.stats import t as student_t

    from edgebench.stats.variation import priors

    if not blocks:
        raise DataError("no blocks to compare", "run at least one round of both sides")
    if not 0.0 < level < 1.0:
        raise DataError(f"a confidence level must lie in (0, 1), got {level}")
    for blk in blocks:
        for v in (blk.a, blk.b):
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise DataError(f"a block's figures must be positive and finite, got {blk.a!r} and {blk.b!r}")
    n = len(blocks)
    d = [blk.d for blk in blocks]
    mean = sum(d) / n
    within = sum(blk.within_var for blk in blocks) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1)) if n > 1 else None
    fallback = None
    if n >= MIN_BLOCKS:
        v, df = max(sd ** 2 if sd is not None else 0.0, within), float(n - 1)
        method = f"paired by block: Student t on {n - 1} df over {n} blocks (within-block terms as a floor)"
    else:
        prior = priors(label)[1]
        prior_var = 2.0 * math.log1p(prior.cv) ** 2        # one invocation per side in a block
        own_df = float(n - 1)
        pooled = ((own_df * sd ** 2 if sd is not None else 0.0) + prior.df * prior_var) / (own_df + prior.df)
        own = sd ** 2 if sd is not None else 0.0
        v, df = max(pooled, own, within), own_df + prior.df
        if df <= 0:
            raise DataError("no degrees of freedom for a paired interval", "run at least 3 rounds")
        fallback = (f"{n} block{'s' if n != 1 else ''} (< {MIN_BLOCKS}): the blocks' spread pooled with the "
                    f"stated prior {prior.level} (CV {prior.cv:.0%}, {prior.df:g} df; never below their own spread), "
                    f"t on {df:g} df instead "
                    f"of t({max(n - 1, 0)})")
        method = f"paired by block with a prior: Student t on {df:g} df over {n} block{'s' if n != 1 else ''}"
    se = math.sqrt(v / n)
    q = float(student_t.ppf(0.5 + level / 2.0, df))
    lo, hi = mean - q * se, mean + q * se
    if se > 0:
        p = float(2.0 * student_t.sf(abs(mean) / se, df))
        p = max(p, float(2.0 * student_t.sf(1e3, df)), 1e-300)   # never printed as 0
    else:
        p = 0.0 if mean != 0 else 1.0
        p = max(p, 1e-300)
    verdict = "no difference resolved" if lo <= 0.0 <= hi else ("B larger" if lo > 0 else "B smaller")
    if fallback is not None:        # one df of its own: a machine noisier than the prior would be called
        verdict = NO_VERDICT
    mde = beyond_limit(detectable(se, df, alpha=alpha)) if df > 0 else None
    return PairedResult(ratio=math.exp(mean), ci_low=math.exp(lo), ci_high=math.exp(hi), ci_level=level,
                        se_log=se, df=df, blocks=n, p_value=p, verdict=verdict,
                        block_ratios=[math.exp(x) for x in d], between_block_sd_log=sd, within_var_log=within,
                        method=method, fallback=fallback, mde=mde)


def gate(result: PairedResult, max_slowdown: float) -> dict:
    """The regression gate on a paired result (B is the candidate): ``failed`` when the interval's
    lower bound of the slowdown B / A exceeds ``max_slowdown``; ``undecided`` when it did not fail
    and ``max_slowdown`` lies below the minimum detectable ratio (a slowdown just beyond the
    threshold would pass more often than not: the gate cannot decide), or with fewer than
    :data:`MIN_BLOCKS` blocks (no verdict: module doc)."""
    v = gate_verdict(result.ci_low, max_slowdown, result.mde, no_verdict=result.fallback is not None)
    return {"max_slowdown": max_slowdown, "slowdown": result.ratio, "slowdown_ci_low": result.ci_low,
            "slowdown_ci_high": result.ci_high, **v, "rule": GATE_RULE}


__all__ = ["Block", "PairedResult", "paired_blocks", "gate", "MIN_BLOCKS", "NO_VERDICT"]
