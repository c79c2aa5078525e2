"""Coverage and A/A false-alarm rates of edgebench's intervals and decisions, by simulation.

Simulates lognormal latencies whose log follows a stationary AR(1) series (lag-1
autocorrelation phi), the dependence measured on real benchmark runs, and the model of
variation (:mod:`edgebench.stats.variation`) on top, and counts how often each interval
contains the true value and how often a decision calls a difference that is not there:

1. within one run: the dependence-aware interval of the median
   (:func:`edgebench.stats.dependence.quantile_interval`) against the textbook one;
2. within one run each, two models with the same true median, interleaved (no between-run
   term): false "faster"/"slower" verdicts and coverage of a true ratio of 1.1;
3. across runs: K runs with a run effect (CV ``--run-cv``): the invocation interval
   (:func:`runs_interval`, pooled between-repeat component);
4. level shifts (``--only-level-shifts``): two levels 5% apart in regimes of ~500 samples
   (``--regime-length``, e.g. 5000): the within-run interval, and the interval of a single run
   with the between-repeat component pooled from the runs folder; the share of runs warned
   'regimes', of runs that saw a switch of level at all (no test on one run can see more), and of
   runs either covered or warned;
5. A/A (``--only-aa``): ten invocations of one bench into one runs folder, every consecutive
   pair compared as `edgebench compare` does (between-invocation component pooled over the
   folder): false verdicts and failed ``--max-slowdown 1.05`` gates at between-invocation CV
   0 / 1% / 3%; power at a true 5% slowdown (different invocations, and interleaved);
   headline width after exactly two invocations;
6. tails (``--only-tails``): p90/p99 intervals when a run's tail shape moves between runs more
   than its median does (the folder's between-repeat component comes from medians).

Run: .venv/bin/python benchmarks/ci_coverage.py [--reps 1000] [--only-aa] [--only-level-shifts] [--only-tails].
An interval the estimator refuses to give (too few effective samples) counts as a miss.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from scipy.signal import lfilter
from scipy.stats import binom

from edgebench.errors import DataError
from edgebench.stats.compare import ratio_of_medians
from edgebench.stats.dependence import quantile_interval, runs_interval
from edgebench.stats.variation import (
    REPEAT_PRIOR,
    SESSION_PRIOR,
    Component,
    RunFigure,
    combine_sessions,
    invocation,
    log_ratio,
    pooled_component,
)

#: no between-repeat variation: isolates the within-run part of a comparison
NONE = Component(var=0.0, df=1e6, level="between repeats", source="prior")

SIGMA = 0.2          # sd of log latency
MEDIAN_S = 1e-3


def ar1(rng, phi: float, n: int, reps: int) -> np.ndarray:
    """reps x n stationary AR(1) series with unit variance."""
    e = rng.standard_normal((reps, n)) * np.sqrt(1.0 - phi ** 2)
    e[:, 0] = rng.standard_normal(reps)
    return lfilter([1.0], [1.0, -phi], e, axis=1)


def latencies(rng, phi, n, reps, median=MEDIAN_S):
    return median * np.exp(SIGMA * ar1(rng, phi, n, reps))


def textbook_ci(x: np.ndarray, level=0.95):
    """Order-statistic interval for independent samples (what edgebench printed before)."""
    xs = np.sort(x)
    n = xs.size
    j = int(binom.ppf((1 - level) / 2, n, 0.5))
    if binom.cdf(j, n, 0.5) > (1 - level) / 2:
        j -= 1
    j += 1
    if j < 1:
        return None
    return xs[j - 1], xs[n - j]


def within(rng, reps, ns, phis):
    print("within one run: coverage of the 95% interval of the median (goal >= 0.93)")
    print(f"{'phi':>4} {'n':>6} {'edgebench':>10} {'refused':>8} {'rel.hw':>8} {'n_eff':>7} {'textbook':>9}")
    for phi in phis:
        for n in ns:
            x = latencies(rng, phi, n, reps)
            hit = refused = hit_tb = 0
            hw, neff = [], []
            for row in x:
                q = quantile_interval(row)
                if q.low is None:
                    refused += 1
                else:
                    hit += q.low <= MEDIAN_S <= q.high
                    hw.append(q.rel_halfwidth)
                    neff.append(q.n_eff)
                tb = textbook_ci(row)
                hit_tb += tb is not None and tb[0] <= MEDIAN_S <= tb[1]
            print(f"{phi:>4} {n:>6} {hit / reps:>10.3f} {refused:>8} {np.median(hw):>8.4f} "
                  f"{np.median(neff):>7.0f} {hit_tb / reps:>9.3f}")


def ratios(rng, reps, ns, phis):
    print("\nwithin one run each: ratio of medians, 95% interval "
          "(goal: false positives <= 0.07, coverage >= 0.93)")
    print(f"{'phi':>4} {'n':>6} {'false+ @1':>10} {'cover @1.1':>11} {'refused':>8}")
    for phi in phis:
        for n in ns:
            a = latencies(rng, phi, n, reps)
            b = latencies(rng, phi, n, reps)
            c = latencies(rng, phi, n, reps, MEDIAN_S * 1.1)
            fp = cov = refused = 0
            for i in range(reps):
                try:
                    r = ratio_of_medians(a[i], b[i], same_invocation=True, repeat=NONE)
                    fp += r.verdict != "no difference resolved"
                    r2 = ratio_of_medians(c[i], b[i], same_invocation=True, repeat=NONE)
                    cov += r2.ci_low <= 1.1 <= r2.ci_high
                except DataError:  # a run too short for an interval: no verdict, no interval
                    refused += 1
            print(f"{phi:>4} {n:>6} {fp / reps:>10.3f} {cov / reps:>11.3f} {refused:>8}")


def across(rng, reps, n, phis, ks, run_cv):
    print(f"\nacross runs (run-to-run CV {run_cv:.0%}, {n:,} samples a run): coverage of the invocation "
          "interval (between-repeat component from these runs and the prior, or pooled from 10 earlier "
          "invocations), and its width against the oracle's (1.96 x the true standard error)")
    print(f"{'phi':>4} {'K':>3} {'cover':>7} {'rel.hw':>8} {'cover/10':>9} {'rel.hw/10':>10}")
    for phi in phis:
        for k in ks:
            hit = hit10 = 0
            hw, hw10 = [], []
            for _ in range(reps):
                per = [quantile_interval(
                    latencies(rng, phi, n, 1, MEDIAN_S * np.exp(run_cv * rng.standard_normal()))[0])
                       for _ in range(k)]
                iv = runs_interval(per)
                hit += iv.low <= MEDIAN_S <= iv.high
                hw.append((iv.high - iv.low) / 2 / iv.estimate)
                # ten earlier invocations on record: figure-level draws with the same spread
                groups = [[(run_cv * rng.standard_normal() + (q.se_log or 0) * rng.standard_normal(),
                            (q.se_log or 0) ** 2) for q in per] for _ in range(10)]
                groups.append([(np.log(q.estimate / MEDIAN_S), q.se_log ** 2) for q in per])
                iv10 = runs_interval(per, pooled_component(groups, REPEAT_PRIOR))
                hit10 += iv10.low <= MEDIAN_S <= iv10.high
                hw10.append((iv10.high - iv10.low) / 2 / iv10.estimate)
            print(f"{phi:>4} {k:>3} {hit / reps:>7.3f} {np.median(hw):>8.4f} {hit10 / reps:>9.3f} "
                  f"{np.median(hw10):>10.4f}")


def _invocation_figs(rng, mu, session_cv, repeat_cv, k, within_se, df=30):
    """K run figures of one invocation: log = mu + u + v_k + e_k; se as a batch-means estimate (df)."""
    u = session_cv * rng.standard_normal()
    out = []
    for _ in range(k):
        y = mu + u + repeat_cv * rng.standard_normal() + within_se * rng.standard_normal()
        se = within_se * np.sqrt(rng.chisquare(df) / df)
        out.append(RunFigure(float(np.exp(y)), float(se), float(df)))
    return out


def _folder_components(invs, keys):
    repeat = pooled_component([[(f.y, f.w) for f in figs] for figs in invs], REPEAT_PRIOR)
    groups = {}
    for key, figs in zip(keys, invs):
        groups.setdefault(key, []).append(invocation(figs, repeat)[0])
    session = pooled_component([[(e.centre, e.var) for e in g] for g in groups.values()], SESSION_PRIOR)
    return repeat, session


def aa(rng, reps, session_cvs, repeat_cv=0.005, within_se=0.004, k=3, invocations=10, slowdown=1.05):
    print(f"\nA/A: {invocations} invocations of one bench in one runs folder (K={k}, repeat CV {repeat_cv:.1%}, "
          f"within-run se {within_se:.1%}), every consecutive pair compared with the between-invocation "
          f"component pooled over the folder (goal: false verdicts <= 0.06, gates {slowdown:g} ~ 0); power at a "
          "true 5% slowdown (5 A and 5 B invocations alternating; and interleaved in one invocation)")
    print(f"{'CV':>5} {'false+':>7} {'gates':>7} {'folder>=1/9':>12} {'power':>7} {'power.il':>9} "
          f"{'w2/spread':>10} {'w2/own1':>8} {'w2/head1':>9}")
    for cv in session_cvs:
        fp = gates = pairs = folders_bad = 0
        pw = pw_il = tries = 0
        w_spread, w_own, w_head = [], [], []
        for _ in range(reps):
            invs = [_invocation_figs(rng, 0.0, cv, repeat_cv, k, within_se) for _ in range(invocations)]
            repeat, session = _folder_components(invs, ["a"] * invocations)
            ests = [invocation(f, repeat)[0] for f in invs]
            bad = 0
            for a, b in zip(ests, ests[1:]):
                lr = log_ratio(b, a, session)
                lo, hi = lr.interval(0.95)
                bad += lo > 1 or hi < 1
                gates += lo > slowdown
                pairs += 1
            fp += bad
            folders_bad += bad > 1
            # power: A B A B ... invocations of two models, B 5% slower
            invs = [_invocation_figs(rng, np.log(1.05) * (j % 2), cv, repeat_cv, k, within_se) for j in range(10)]
            repeat, session = _folder_components(invs, [j % 2 for j in range(10)])
            ests = [invocation(f, repeat)[0] for f in invs]
            for j in range(0, 10, 2):
                lo, _ = log_ratio(ests[j + 1], ests[j], session).interval(0.95)
                pw += lo > 1
                tries += 1
            # interleaved: A and B in one invocation share u; no session term
            u = cv * rng.standard_normal()
            fa = _invocation_figs(rng, u, 0.0, repeat_cv, k, within_se)
            fb = _invocation_figs(rng, u + np.log(1.05), 0.0, repeat_cv, k, within_se)
            rep = pooled_component([[(f.y, f.w) for f in fa], [(f.y, f.w) for f in fb]], REPEAT_PRIOR)
            lo, _ = log_ratio(invocation(fb, rep)[0], invocation(fa, rep)[0], None).interval(0.95)
            pw_il += lo > 1
            # width after exactly two invocations of a new measurement, nothing else on record
            two = [_invocation_figs(rng, 0.0, cv, repeat_cv, k, within_se) for _ in range(2)]
            repeat, session = _folder_components(two, ["a", "a"])
            e1, e2 = (invocation(f, repeat)[0] for f in two)
            r1, _ = _folder_components(two[:1], ["a"])
            own1 = invocation(two[0], r1)[0]
            head1 = combine_sessions(own1, [], pooled_component([], SESSION_PRIOR)).estimate
            head2 = combine_sessions(e2, [e1], session).estimate
            lo2, hi2 = head2.interval(0.95)
            lo1, hi1 = own1.interval(0.95)
            hl1, hh1 = head1.interval(0.95)
            spread = abs(e1.value - e2.value)
            w_spread.append((hi2 - lo2) / spread if spread > 0 else np.inf)
            w_own.append((hi2 - lo2) / (hi1 - lo1))
            w_head.append((hi2 - lo2) / (hh1 - hl1))
        print(f"{cv:>5.0%} {fp / pairs:>7.3f} {gates / pairs:>7.4f} {folders_bad / reps:>12.3f} {pw / tries:>7.3f} "
              f"{pw_il / reps:>9.3f} {np.median(w_spread):>10.1f} {np.median(w_own):>8.1f} {np.median(w_head):>9.2f}")


def regimes(rng, n, length=500, gap=0.05, phi=0.5, sigma=0.02, with_level=False):
    """Two levels ``gap`` apart, regimes of geometric length (mean ``length``), AR(1) noise inside
    (``with_level``: also the 0/1 level of each sample)."""
    level = np.empty(n)
    cur, i = rng.integers(2), 0
    while i < n:
        step = rng.geometric(1.0 / length)
        level[i:i + step] = cur
        i += step
        cur = 1 - cur
    x = MEDIAN_S * np.exp(gap * level + sigma * ar1(rng, phi, n, 1)[0])
    return (x, level) if with_level else x


def level_shifts(rng, reps, ns, length=500):
    from edgebench.stats.dependence import level_shifts as shows_regimes

    truth = float(np.median(np.concatenate([regimes(rng, 100_000, length) for _ in range(10)])))
    print(f"\nlevel shifts (two levels 5% apart, regimes of ~{length} samples, AR(1) 0.5 inside): coverage of the "
          "within-run interval, and of one run's interval with the between-repeat component pooled from 10 "
          "earlier single-run invocations (goal >= 0.9); share of runs warned 'regimes', of runs that saw a "
          "switch of level at all, and of runs covered or warned")
    print(f"{'n':>6} {'within':>7} {'rel.hw':>8} {'one run':>8} {'rel.hw':>8} {'warned':>7} {'switch':>7} "
          f"{'cov|warn':>9}")
    for n in ns:
        hit = hit1 = warned = switched = either = 0
        hw, hw1 = [], []
        for _ in range(reps):
            x, lev = regimes(rng, n, length, with_level=True)
            q = quantile_interval(x)
            covered = q.low is not None and q.low <= truth <= q.high
            hit += covered
            if q.low is not None:
                hw.append(q.rel_halfwidth)
            seen = shows_regimes(x) is not None if n >= 200 else False
            warned += seen
            switched += bool(np.any(lev != lev[0]))
            either += covered or seen
            history = [quantile_interval(regimes(rng, n, length)) for _ in range(10)]
            groups = [[(np.log(h.estimate), h.se_log ** 2)] for h in history if h.se_log is not None]
            # single runs: each invocation one run, so the spread between invocations is the repeat spread
            pool = pooled_component([[(y, w) for g in groups for y, w in g]], REPEAT_PRIOR)
            iv = runs_interval([q], pool)
            hit1 += iv.low is not None and iv.low <= truth <= iv.high
            if iv.low is not None:
                hw1.append((iv.high - iv.low) / 2 / iv.estimate)
        print(f"{n:>6} {hit / reps:>7.3f} {np.median(hw):>8.4f} {hit1 / reps:>8.3f} {np.median(hw1):>8.4f} "
              f"{warned / reps:>7.3f} {switched / reps:>7.3f} {either / reps:>9.3f}")


def tails(rng, reps, ks, shape_cvs, n=5000, phi=0.5, level_cv=0.01):
    """p90/p99 intervals when a run's tail moves more than its median: each run's log-latency scale
    is SIGMA x (1 + v), v ~ N(0, shape CV), on top of a level effect (CV ``level_cv``). The
    between-repeat component comes from the medians (these runs and the prior, as `bench` does
    with an empty runs folder); the truth is exp(E log p_q) of a run."""
    from scipy.stats import norm

    from edgebench.stats.latency import summarize_runs
    from edgebench.stats.variation import priors

    def from_medians(figs):
        return pooled_component([[(f.y, f.w) for f in figs]], priors("measured")[0])

    print(f"\ntails ({reps} trials a cell, AR(1) phi {phi}, {n:,} samples a run, run level CV {level_cv:.0%}): "
          "coverage of the 95% "
          "intervals of p50/p90/p99 when the tail's shape varies between runs (goal >= 0.93), and the p99 "
          "interval's median half-width relative to the truth")
    print(f"{'K':>3} {'shape CV':>9} {'p50':>6} {'p90':>6} {'p99':>6} {'p99 rel.hw':>11} {'refused':>8}")
    for k in ks:
        for s in shape_cvs:
            hit = {0.5: 0, 0.9: 0, 0.99: 0}
            refused, width = 0, []
            for _ in range(reps):
                runs = [MEDIAN_S * np.exp(rng.normal(0.0, level_cv)
                                          + SIGMA * (1.0 + rng.normal(0.0, s)) * ar1(rng, phi, n, 1)[0])
                        for _ in range(k)]
                sm = summarize_runs(runs, repeat=from_medians)
                for q, iv in ((0.5, (sm.ci_low_s, sm.ci_high_s)), (0.9, sm.p90_ci_s), (0.99, sm.p99_ci_s)):
                    truth = MEDIAN_S * float(np.exp(SIGMA * norm.ppf(q)))
                    if iv is None or iv[0] is None:
                        refused += 1
                        continue
                    hit[q] += iv[0] <= truth <= iv[1]
                    if q == 0.99:
                        width.append((iv[1] - iv[0]) / 2.0 / truth)
            print(f"{k:>3} {s:>9.2f} {hit[0.5] / reps:>6.3f} {hit[0.9] / reps:>6.3f} {hit[0.99] / reps:>6.3f} "
                  f"{np.median(width):>11.3f} {refused:>8}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--run-cv", type=float, default=0.03)
    ap.add_argument("--only-aa", action="store_true", help="run the A/A, power and two-invocation cells only")
    ap.add_argument("--only-level-shifts", action="store_true", help="run the level-shift cell only")
    ap.add_argument("--only-tails", action="store_true", help="run the p90/p99 cell only")
    ap.add_argument("--regime-length", type=int, default=500, help="mean regime length of the level-shift cell")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    t0 = time.time()
    only = [name for name in ("aa", "level_shifts", "tails") if getattr(args, f"only_{name}")]
    if not only:
        within(rng, args.reps, (100, 1000, 10000), (0.0, 0.5, 0.9))
        ratios(rng, args.reps, (100, 1000, 10000), (0.0, 0.5, 0.9))
        across(rng, max(100, args.reps // 2), 2000, (0.5, 0.9), (1, 3, 5), args.run_cv)
    if not only or "level_shifts" in only:
        level_shifts(rng, max(100, args.reps // 4), (100, 1000, 10000), args.regime_length)
    if not only or "tails" in only:
        tails(rng, max(100, args.reps // 4), (1, 3, 5), (0.0, 0.05, 0.1, 0.2))
    if not only or "aa" in only:
        aa(rng, args.reps, (0.0, 0.01, 0.03))
    print(f"\n--reps {args.reps} trials a cell (across runs: half of it, at least 100; level shifts and tails: a "
          f"quarter, at least 100), seed {args.seed}, "
          f"{time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
