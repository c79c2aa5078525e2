"""Decisions across invocations, simulated (label: simulated): what `edgebench compare A B` and its
`--max-slowdown` gate decide when every session on record of each side is combined, with the
between-repeat and between-invocation components pooled from those sessions under the fading
prior (edgebench.stats.variation), and the minimum detectable effect it prints (edgebench.stats.power).

Each trial draws S invocations of A and of B; an invocation has K repeats whose log figures are
``mu + u_j + v_jk + e_jk`` (u: between invocations, CV ``--cv``; v: between repeats, CV 0.5%;
e: the run's own error, se_log 0.2%). The library's own functions then do what compare does
(pool, combine each side's sessions, difference of the long-run log figures, t interval).

Figures printed:
- A/A (true ratio 1): the share of false verdicts (p < 0.05) and of failed gates at
  --max-slowdown 1.0 and 1.05, per true invocation CV (0.2%, 1%, 3%, 6%) and S (1, 3, 5);
- power at a true 5% slowdown (called slower) per CV and S;
- the median MDE after S = 1, 3, 10 invocations of each on a quiet board (CV 0.2%);
- the headline (one model's long-run figure over S sessions, S = 1, 3, 10): its 95% CI's coverage
  of the true figure, its re-run (prediction) interval's coverage of a re-run invocation's
  figure, and both widths over the spread (sd) of re-run invocation figures.

The headline rows are printed twice: this model alone on record, and with ``--others`` other models
(3 sessions each) on the same board and host, pooled into the components as `bench` does.

    python benchmarks/decisions_sim.py [--trials 1000] [--seed 1] [--others 4] [--only aa|power|mde|headline]
        [--cvs 0.002,0.01,0.03,0.06] [--sessions 1,3,5]

(``--cvs``/``--sessions``: the A/A table's cells, e.g. the cells near 0.05 again with 40,000 trials:
``--only aa --trials 40000 --cvs 0.03,0.06 --sessions 3,5``; each rate then carries its binomial se.)
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

from edgebench.bench.compare import shared_df
from edgebench.stats.power import detectable
from edgebench.stats.variation import (
    REPEAT_PRIOR,
    SESSION_PRIOR,
    LogEstimate,
    RunFigure,
    combine_sessions,
    invocation,
    pooled_component,
)

REPEAT_CV = 0.005
RUN_SE = 0.002
K = 3
#: sessions on record of each other model (the headline with other models on the same board and host)
OTHER_SESSIONS = 3


def invocations(rng, mu: float, cv: float, s: int) -> list:
    """``s`` invocations of one model: lists of K RunFigures."""
    out = []
    for _ in range(s):
        u = rng.normal(0.0, cv)
        ys = mu + u + rng.normal(0.0, REPEAT_CV, K) + rng.normal(0.0, RUN_SE, K)
        out.append([RunFigure(math.exp(y), RUN_SE, 50.0) for y in ys])
    return out


def side(invs: list, repeat, session):
    ests = [invocation(figs, repeat)[0] for figs in invs]
    return combine_sessions(ests[0], ests[1:], session)


def decide(rng, cv: float, s: int, true_ratio: float) -> tuple:
    """One comparison: (log ratio estimate B/A, mde ratio)."""
    a = invocations(rng, 0.0, cv, s)
    b = invocations(rng, math.log(true_ratio), cv, s)
    repeat = pooled_component([[(f.y, f.w) for f in figs] for figs in a + b], REPEAT_PRIOR)
    groups = [[(e.centre, e.var) for e in (invocation(f, repeat)[0] for f in x)] for x in (a, b)]
    session = pooled_component(groups, SESSION_PRIOR)
    ea, eb = side(a, repeat, session).estimate, side(b, repeat, session).estimate
    est = LogEstimate(eb.centre - ea.centre, ea.var + eb.var, shared_df(ea, eb, s, s, session))
    return est, detectable(est.se, est.df).ratio


def headline(rng, cv: float, s: int, others: int = 0) -> tuple:
    """The long-run figure over s sessions: (its 95% CI covers the truth, the re-run interval covers a
    re-run invocation's figure, CI width / spread, re-run interval width / spread); spread: the sd
    of re-run invocation figures. ``others``: other models on record on the same board and host, with
    OTHER_SESSIONS sessions each, pooled into the components as edgebench.bench.sessions.variation does."""
    invs = invocations(rng, 0.0, cv, s)
    rest = [invocations(rng, rng.normal(0.0, 1.0), cv, OTHER_SESSIONS) for _ in range(others)]
    repeat = pooled_component([[(f.y, f.w) for f in figs] for figs in invs + [f for g in rest for f in g]],
                              REPEAT_PRIOR)
    session = pooled_component([[(e.centre, e.var) for e in (invocation(f, repeat)[0] for f in g)]
                                for g in [invs, *rest]], SESSION_PRIOR)
    res = side(invs, repeat, session)
    lo, hi = (math.log(x) for x in res.estimate.interval(0.95))
    plo, phi = (math.log(x) for x in res.prediction.interval(0.95))
    rerun = float(np.mean([f.y for f in invocations(rng, 0.0, cv, 1)[0]]))
    spread = math.sqrt(cv ** 2 + (REPEAT_CV ** 2 + RUN_SE ** 2) / K)
    return lo <= 0.0 <= hi, plo <= rerun <= phi, (hi - lo) / spread, (phi - plo) / spread


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--others", type=int, default=4, help="other models on record for the headline rows")
    ap.add_argument("--only", choices=("aa", "power", "mde", "headline"), action="append",
                    help="print only these tables (default: all)")
    ap.add_argument("--cvs", default="0.002,0.01,0.03,0.06", help="true invocation CVs of the A/A table")
    ap.add_argument("--sessions", default="1,3,5", help="invocations of each side in the A/A table")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    n = args.trials
    t0 = time.time()

    def want(table: str) -> bool:
        return not args.only or table in args.only

    print(f"simulated, {n} trials per cell, K={K} repeats per invocation, between-repeat CV {100 * REPEAT_CV:.1f}%")
    if want("aa"):
        print("\nA/A (true ratio 1): false verdicts / failed gates at --max-slowdown 1.0 and 1.05")
        print(f"{'CV':>6} {'S':>3} {'false':>7} {'gate1.0':>8} {'gate1.05':>9} {'se(false)':>10}")
        for cv in (float(x) for x in args.cvs.split(",")):
            for s in (int(x) for x in args.sessions.split(",")):
                false = g10 = g105 = 0
                for _ in range(n):
                    est, _ = decide(rng, cv, s, 1.0)
                    lo, _hi = est.interval(0.95)
                    false += est.p_value() < 0.05
                    g10 += math.exp(math.log(lo)) > 1.0
                    g105 += lo > 1.05
                p = false / n
                print(f"{100 * cv:5.1f}% {s:3d} {p:7.4f} {g10 / n:8.4f} {g105 / n:9.4f} {math.sqrt(p * (1 - p) / n):10.4f}")
    if want("power"):
        print("\npower at a true 5% slowdown (called slower, p < 0.05), and the gate --max-slowdown 1.0 failing")
        print(f"{'CV':>6} {'S':>3} {'power':>7}")
        for cv in (0.002, 0.01):
            for s in (1, 2, 3, 5):
                hit = 0
                for _ in range(n):
                    est, _ = decide(rng, cv, s, 1.05)
                    lo, _hi = est.interval(0.95)
                    hit += est.p_value() < 0.05 and lo > 1.0
                print(f"{100 * cv:5.1f}% {s:3d} {hit / n:7.3f}")
    if want("mde"):
        print("\nMDE (80% power, alpha 0.05, one stage) on a quiet board, true invocation CV 0.2%")
        for s in (1, 3, 10):
            mdes = [decide(rng, 0.002, s, 1.0)[1] for _ in range(max(200, n // 5))]
            print(f"  S={s:2d} invocations of each: median MDE {100 * (np.median(mdes) - 1):.2f}%, "
                  f"90th percentile {100 * (np.quantile(mdes, 0.9) - 1):.2f}%")
        print("\nmedian MDE (80% power, alpha 0.05, one stage) by true invocation CV and S invocations of each")
        print(f"{'CV':>6} " + " ".join(f"{'S=' + str(s):>7}" for s in (1, 2, 3, 5, 10)))
        for cv in (0.002, 0.01, 0.03, 0.06):
            row = [np.median([decide(rng, cv, s, 1.0)[1] for _ in range(max(100, n // 10))]) for s in (1, 2, 3, 5, 10)]
            print(f"{100 * cv:5.1f}% " + " ".join(f"{100 * (m - 1):6.1f}%" for m in row))
    if want("headline"):
        print("\nheadline over S sessions: its 95% CI covering the true figure, its re-run interval covering a")
        print("re-run invocation's figure, and each width over the spread (sd) of re-run invocation figures")
        print(f"(others: other models on record on the board and host, {OTHER_SESSIONS} sessions each, pooled)")
        print(f"{'CV':>6} {'S':>3} {'others':>6} {'CI cover':>9} {'CI w/sd':>8} {'rerun cover':>12} {'rerun w/sd':>11}")
        for cv in (0.002, 0.01, 0.03, 0.06):
            for others in (0, args.others):
                for s in (1, 3, 10):
                    res = [headline(rng, cv, s, others) for _ in range(n)]
                    print(f"{100 * cv:5.1f}% {s:3d} {others:6d} {np.mean([r[0] for r in res]):9.3f} "
                          f"{np.median([r[2] for r in res]):8.2f} "
                          f"{np.mean([r[1] for r in res]):12.3f} {np.median([r[3] for r in res]):11.2f}")
    print(f"\n({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
