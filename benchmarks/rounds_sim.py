"""Simulated: `bench A B --rounds N` (blocks, paired) against the same invocations unpaired, on a drifting machine.

The machine's level drifts as a random walk across invocations (step SD ``--drift`` of the log per
invocation, 0.5% by default: what a machine shared with other engineers does over minutes) plus a
step of ``--shift`` (a load arriving) half way through the set. Each invocation adds its own
between-invocation scatter (true CV 0.2 / 1 / 3 / 6%) and a within-invocation error (SD ``--within``
of the log, its standard error known to the analysis, as each run stores ``se_log``).

- **blocks**: 2N invocations in N blocks, each block A and B in a seeded balanced random order,
  analysed by :func:`edgebench.stats.paired.paired_blocks` (what ``--rounds`` does);
- **unpaired**: the same 2N invocations run as a user without ``--rounds`` would, N of A then N
  of B, analysed as two independent samples (Welch t on the log medians).

Per true CV and N: the A/A false verdict rate, the A/A ``--max-slowdown 1.05`` gate failures, the
gate's "cannot decide" rate, the power at a true 5% slowdown (verdict "B larger"), the rate at which
the gate fails on a true 10% slowdown, and the median minimum detectable slowdown. All figures are
simulated.

Run: .venv/bin/python benchmarks/rounds_sim.py [--trials 2000] [--seed 1]
"""
from __future__ import annotations

import argparse
import math
import sys

import numpy as np


def machine(rng, n_inv: int, drift: float, shift: float) -> np.ndarray:
    walk = np.cumsum(rng.normal(0.0, drift, n_inv))
    walk[n_inv // 2:] += shift
    return walk


def one_set(rng, n: int, cv: float, effect: float, drift: float, shift: float, within: float):
    """One set of 2n invocations; returns (blocks for paired analysis, A logs, B logs of the unpaired run)."""
    from edgebench.bench.rounds import plan_orders
    from edgebench.stats.paired import Block

    sd_inv = math.log1p(cv)
    level = machine(rng, 2 * n, drift, shift)
    noise = rng.normal(0.0, sd_inv, 2 * n) + rng.normal(0.0, within, 2 * n)
    y = level + noise
    orders = plan_orders(n, int(rng.integers(1 << 30)))
    blocks = []
    for k, order in enumerate(orders):
        first, second = y[2 * k], y[2 * k + 1]
        ya, yb = (first, second) if order == "AB" else (second, first)
        blocks.append(Block(math.exp(ya), math.exp(yb + math.log1p(effect)), within, within))
    # unpaired: the same machine, N invocations of A then N of B
    level2 = machine(rng, 2 * n, drift, shift)
    y2 = level2 + rng.normal(0.0, sd_inv, 2 * n) + rng.normal(0.0, within, 2 * n)
    return blocks, y2[:n], y2[n:] + math.log1p(effect)


def welch(ya, yb, alpha=0.05):
    from scipy.stats import t as student_t

    va, vb = np.var(ya, ddof=1) / len(ya), np.var(yb, ddof=1) / len(yb)
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / (len(ya) - 1) + vb ** 2 / (len(yb) - 1))
    d = float(np.mean(yb) - np.mean(ya))
    q = float(student_t.ppf(1 - alpha / 2, df))
    return d - q * se, d + q * se


def run(args) -> None:
    from edgebench.stats.paired import gate, paired_blocks

    rng = np.random.default_rng(args.seed)
    print(f"simulated: drift SD {args.drift:.2%}/invocation, step {args.shift:.1%} mid-set, within SD "
          f"{args.within:.2%}, {args.trials} trials per cell")
    print(f"{'CV':>5} {'N':>2} | {'A/A false':>9} {'A/A gate':>8} {'undecided':>9} {'power 5%':>8} "
          f"{'gate@10%':>8} {'MDE med':>7} | {'unpaired A/A':>12} {'unpaired 5%':>11}")
    for cv in args.cv:
        for n in args.rounds:
            cnt = dict(false=0, gate=0, und=0, pow5=0, gate10=0, ufalse=0, upow=0)
            mdes = []
            for effect in (0.0, 0.05, 0.10):
                for _ in range(args.trials):
                    blocks, ua, ub = one_set(rng, n, cv, effect, args.drift, args.shift, args.within)
                    r = paired_blocks(blocks)
                    g = gate(r, 1.05)
                    if effect == 0.0:
                        cnt["false"] += r.verdict in ("B larger", "B smaller")
                        cnt["gate"] += g["failed"]
                        cnt["und"] += g["undecided"]
                        mdes.append(r.mde["percent"])
                        lo, hi = welch(ua, ub)
                        cnt["ufalse"] += not (lo <= 0 <= hi)
                    elif effect == 0.05:
                        cnt["pow5"] += r.verdict == "B larger"
                        lo, _ = welch(ua, ub)
                        cnt["upow"] += lo > 0
                    else:
                        cnt["gate10"] += g["failed"]
            t = args.trials
            print(f"{cv:5.1%} {n:2d} | {cnt['false'] / t:9.3f} {cnt['gate'] / t:8.3f} {cnt['und'] / t:9.3f} "
                  f"{cnt['pow5'] / t:8.3f} {cnt['gate10'] / t:8.3f} {np.median(mdes):6.1f}% | "
                  f"{cnt['ufalse'] / t:12.3f} {cnt['upow'] / t:11.3f}")
            sys.stdout.flush()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cv", type=float, nargs="+", default=[0.002, 0.01, 0.03, 0.06])
    ap.add_argument("--rounds", type=int, nargs="+", default=[2, 4, 5, 6])
    ap.add_argument("--drift", type=float, default=0.005)
    ap.add_argument("--shift", type=float, default=0.03)
    ap.add_argument("--within", type=float, default=0.003)
    run(ap.parse_args(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
