"""Coverage of edgebench's latency intervals under autocorrelation and run-to-run variation.

Simulates lognormal latencies whose log follows a stationary AR(1) series (lag-1
autocorrelation phi), the dependence measured on real benchmark runs, and counts how
often each interval contains the true value:

1. within one run: the dependence-aware interval of the median
   (:func:`edgebench.stats.dependence.quantile_interval`) against the textbook
   order-statistic interval that assumes independent samples;
2. within one run, two models with the same true median: how often the ratio-of-medians
   interval (:func:`edgebench.stats.compare.ratio_of_medians`) excludes 1 (a false
   "faster"/"slower" verdict) and how often it covers a true ratio of 1.1;
3. across runs: K runs whose medians differ by a random run effect (coefficient of
   variation ``--run-cv``), the headline interval (:func:`runs_interval`) and the
   paired ratio of interleaved runs;
4. across sessions (invocations of the command): a session effect shared by the K = 3
   repeats of one invocation (CV ``--session-cv``) on top of a smaller repeat effect
   (CV ``--run-cv`` / 6) and AR(1) within each repeat. The headline interval with S - 1
   earlier sessions on record (:func:`sessions_interval`) is scored two ways: coverage of
   the long-run median, and "re-run": whether it contains the median of 7 further
   sessions' medians (what the re-run benchmark ``rerun_realism.py`` counts); "pred.1" is
   the coverage of the prediction interval (``rerun_low``/``rerun_high``) for the median of
   one more invocation. S = 1 is
   one invocation alone: its repeats cannot see the session effect.

Run: .venv/bin/python benchmarks/ci_coverage.py [--reps 1000]. Prints one row per cell.
An interval the estimator refuses to give (too few effective samples) counts as a miss
in "coverage" and is also shown in the "refused" column.
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
from edgebench.stats.dependence import quantile_interval, runs_interval, sessions_interval

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
                    r = ratio_of_medians(a[i], b[i])
                    fp += r.verdict != "no difference resolved"
                    r2 = ratio_of_medians(c[i], b[i])
                    cov += r2.ci_low <= 1.1 <= r2.ci_high
                except DataError:  # a run too short for an interval: no verdict, no interval
                    refused += 1
            print(f"{phi:>4} {n:>6} {fp / reps:>10.3f} {cov / reps:>11.3f} {refused:>8}")


def across(rng, reps, n, phis, ks, run_cv):
    print(f"\nacross runs (run-to-run CV {run_cv:.0%}, {n:,} samples a run): coverage of the headline "
          "interval of the long-run median, and false positives of the paired run ratio")
    print(f"{'phi':>4} {'K':>3} {'cover':>7} {'false+':>7} {'rel.hw':>8}")
    for phi in phis:
        for k in ks:
            hit = fp = 0
            hw = []
            for _ in range(reps):
                runs_a, runs_b, meds, ivs = [], [], [], []
                for _j in range(k):
                    shared = np.exp(run_cv * rng.standard_normal())  # machine state shared by a pair
                    ea = shared * np.exp(0.5 * run_cv * rng.standard_normal())
                    eb = shared * np.exp(0.5 * run_cv * rng.standard_normal())
                    xa = latencies(rng, phi, n, 1, MEDIAN_S * ea)[0]
                    xb = latencies(rng, phi, n, 1, MEDIAN_S * eb)[0]
                    q = quantile_interval(xa)
                    runs_a.append(xa)
                    runs_b.append(xb)
                    meds.append(q.estimate)
                    ivs.append((q.low, q.high))
                iv = runs_interval(meds, ivs)
                hit += iv.low <= MEDIAN_S <= iv.high
                hw.append((iv.high - iv.low) / 2 / iv.estimate)
                fp += ratio_of_medians(runs_a, runs_b, paired=True).verdict != "no difference resolved"
            print(f"{phi:>4} {k:>3} {hit / reps:>7.3f} {fp / reps:>7.3f} {np.median(hw):>8.4f}")


def _session(rng, phi, n, k, session_cv, repeat_cv):
    """One invocation: K repeats sharing a session effect; (median, interval) as bench makes them."""
    shared = np.exp(session_cv * rng.standard_normal())
    meds, ivs = [], []
    for _ in range(k):
        x = latencies(rng, phi, n, 1, MEDIAN_S * shared * np.exp(repeat_cv * rng.standard_normal()))[0]
        q = quantile_interval(x)
        meds.append(q.estimate)
        ivs.append((q.low, q.high))
    iv = runs_interval(meds, ivs)
    return iv.estimate, (iv.low, iv.high), k


def sessions(rng, reps, n, phi, counts, session_cv, repeat_cv, k=3, others=7):
    print(f"\nacross sessions (session CV {session_cv:.0%}, repeat CV {repeat_cv:.1%}, K={k} repeats of "
          f"{n:,} samples, phi={phi}): the headline interval with S-1 earlier sessions on record "
          "(goal >= 0.93 for S >= 2)")
    print(f"{'S':>3} {'cover':>7} {'re-run':>7} {'rel.hw':>8} {'pred.1':>7}")
    for count in counts:
        hit = rerun = pred = 0
        hw = []
        for _ in range(reps):
            runs = [_session(rng, phi, n, k, session_cv, repeat_cv) for _ in range(count)]
            this, earlier = runs[-1], runs[:-1]
            iv = sessions_interval(this[0], this[1], [m for m, _, _ in earlier], [i for _, i, _ in earlier],
                                   runs=[r[2] for r in (this, *earlier)])
            hit += iv.low <= MEDIAN_S <= iv.high
            later = np.median([MEDIAN_S * np.exp(session_cv * rng.standard_normal()) for _ in range(others)])
            rerun += iv.low <= later <= iv.high
            hw.append((iv.high - iv.low) / 2 / this[0])
            if iv.rerun_low is not None:
                nxt = _session(rng, phi, n, k, session_cv, repeat_cv)[0]
                pred += iv.rerun_low <= nxt <= iv.rerun_high
        shown = f"{pred / reps:>7.3f}" if count > 1 else f"{'–':>7}"
        print(f"{count:>3} {hit / reps:>7.3f} {rerun / reps:>7.3f} {np.median(hw):>8.4f} {shown}")


def rerun_protocol(rng, reps, n, phi, session_cv, repeat_cv, invocations=8, k=3):
    """The re-run benchmark's protocol, simulated: ``invocations`` sessions in turn in one runs
    folder (invocation i has the i - 1 before it on record); count the intervals containing the
    median of the other invocations' medians."""
    print(f"\nre-run protocol ({invocations} invocations in one runs folder, session CV {session_cv:.0%}): "
          f"intervals containing the median of the other {invocations - 1} (goal >= 6 of {invocations})")
    hits = []
    firsts = 0
    for _ in range(reps):
        runs = [_session(rng, phi, n, k, session_cv, repeat_cv) for _ in range(invocations)]
        h = 0
        for i, (m, iv0, kk) in enumerate(runs):
            iv = sessions_interval(m, iv0, [x for x, _, _ in runs[:i]], [y for _, y, _ in runs[:i]],
                                   runs=[kk] + [r[2] for r in runs[:i]])
            other = np.median([x for j, (x, _, _) in enumerate(runs) if j != i])
            ok = iv.low <= other <= iv.high
            h += ok
            firsts += ok and i == 0
        hits.append(h)
    hits = np.asarray(hits)
    print(f"hits: mean {hits.mean():.2f} of {invocations}; P(>= 6) {np.mean(hits >= 6):.3f}; "
          f"first invocation (nothing on record) {firsts / reps:.3f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--run-cv", type=float, default=0.03)
    ap.add_argument("--session-cv", type=float, default=0.03)
    ap.add_argument("--only-sessions", action="store_true", help="run the across-sessions cell only")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    t0 = time.time()
    if not args.only_sessions:
        within(rng, args.reps, (100, 1000, 10000), (0.0, 0.5, 0.9))
        ratios(rng, args.reps, (100, 1000, 10000), (0.0, 0.5, 0.9))
        across(rng, max(100, args.reps // 2), 2000, (0.5, 0.9), (3, 5), args.run_cv)
    sessions(rng, max(100, args.reps // 2), 1000, 0.5, (1, 2, 3, 5, 8), args.session_cv, args.run_cv / 6)
    rerun_protocol(rng, max(100, args.reps // 4), 1000, 0.5, args.session_cv, args.run_cv / 6)
    print(f"\n{args.reps} repetitions a cell, seed {args.seed}, {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
