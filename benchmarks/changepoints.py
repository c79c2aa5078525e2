"""Change points by simulation: false alarms per A/A series, power at 3 / 5 / 10 % level shifts,
and the coverage of the shift's interval, with the project's variation model.

Each point of a series is one invocation of `edgebench bench` (:mod:`edgebench.stats.variation`):
its log figure is ``mu + u + e``, ``u ~ N(0, sigma2)`` between invocations (CV ``--session-cv``,
the model's prior: 3 %), ``e`` the invocation's own error, whose standard error ``se`` the run
reports (K = 5 repeats at the between-repeat CV 1 % and a within-run error 0.5 %:
``se = sqrt((0.01^2 + 0.005^2) / 5)``). The run's interval holds ``e``, not ``u``: the detector
estimates ``sigma2`` from the series (:func:`edgebench.stats.changepoint.between_spread`).

* A/A: ``--reps`` series of ``--n`` points (default 100) with no shift: the share with any change
  point (false alarms per series) and change points per 100 points;
* power: one shift of 3 %, 5 %, 10 % at a position uniform in the middle 60 % of the series: the
  share where a change is found within +-3 points of it, and the coverage of its 95 % interval
  (the true ratio inside), with the mean absolute position error.

Run: .venv/bin/python benchmarks/changepoints.py [--reps 400] [--n 100] [--session-cv 0.03]
Labelled: simulated.
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

from edgebench.stats.changepoint import detect

REPEAT_CV, WITHIN_CV, K = 0.01, 0.005, 5


def simulate(rng, n: int, session_cv: float, shift: float = 0.0, at: int | None = None):
    se = math.sqrt((REPEAT_CV ** 2 + WITHIN_CV ** 2) / K)
    y = rng.normal(0, session_cv, n) + rng.normal(0, se, n)
    if at is not None:
        y[at:] += math.log1p(shift)
    return np.exp(y), [se] * n


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--session-cv", type=float, default=0.03)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    rng = np.random.default_rng(a.seed)
    t0 = time.perf_counter()
    alarms = changes = 0
    for r in range(a.reps):
        found = detect(*simulate(rng, a.n, a.session_cv), seed=r)
        alarms += bool(found.shifts)
        changes += len(found.shifts)
    per = (time.perf_counter() - t0) / a.reps
    print(f"simulated: {a.reps} A/A series of {a.n} points, between-invocation CV {a.session_cv:.1%}, "
          f"run-own se {math.sqrt((REPEAT_CV ** 2 + WITHIN_CV ** 2) / K):.4f}")
    lo, hi = _wilson(alarms, a.reps)
    print(f"  false alarms: {alarms}/{a.reps} series = {alarms / a.reps:.1%} (95% CI {lo:.1%}-{hi:.1%}); "
          f"{100 * changes / (a.reps * a.n):.2f} change points per 100 points; {per * 1e3:.0f} ms per series")
    for shift in (0.03, 0.05, 0.10):
        hit = covered = 0
        err = []
        for r in range(a.reps):
            at = int(rng.integers(int(0.2 * a.n), int(0.8 * a.n)))
            found = detect(*simulate(rng, a.n, a.session_cv, shift, at), seed=r)
            near = [s for s in found.shifts if abs(s.index - at) <= 3]
            if near:
                s = min(near, key=lambda s: abs(s.index - at))
                hit += 1
                covered += s.ci_low <= 1 + shift <= s.ci_high
                err.append(abs(s.index - at))
        lo, hi = _wilson(hit, a.reps)
        cov = f"{covered / hit:.1%}" if hit else "n/a"
        print(f"  shift {shift:.0%}: found within +-3 points in {hit}/{a.reps} = {hit / a.reps:.1%} "
              f"(95% CI {lo:.1%}-{hi:.1%}); its 95% interval covers the true ratio in {cov} of those; "
              f"mean position error {np.mean(err) if err else float('nan'):.2f} points")


def _wilson(k: int, n: int, z: float = 1.96) -> tuple:
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


if __name__ == "__main__":
    main()
