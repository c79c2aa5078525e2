"""Bias and interval coverage of the bias-corrected ECE (edgebench.stats.calibration.ece_estimate).

Seeded simulation, not a timed test. Confidences of the top class are Beta(5, 1.2)
clipped to [1/3, 1] (a confident classifier); a sample is correct with probability
``acc(confidence)``: calibrated (acc = c), over-confident by 0.02 and 0.05 (c - d),
strongly over-confident (c^2) and under-confident (c + 0.3 (1 - c)). The true binned
ECE (15 bins) comes from two million samples. For each scenario and n, ``--reps``
test sets are drawn; printed: the mean plug-in ECE, the mean bias-corrected ECE, the
mean upper bound of its 95% interval and the share of intervals that contain the
true ECE (goal: about 0.95).

    .venv/bin/python benchmarks/ece_coverage.py [--reps 200] [--boot 500] [--n 100,300,1000]
"""
from __future__ import annotations

import argparse

import numpy as np

from edgebench.stats.calibration import ece_estimate, expected_calibration_error

SCENARIOS = {
    "calibrated": lambda c: c,
    "over 0.02": lambda c: np.clip(c - 0.02, 0, 1),
    "over 0.05": lambda c: np.clip(c - 0.05, 0, 1),
    "over c^2": lambda c: c ** 2,
    "under": lambda c: np.clip(c + 0.3 * (1 - c), 0, 1),
}


def draw(rng, n: int, accuracy) -> tuple[np.ndarray, np.ndarray]:
    conf = np.clip(rng.beta(5, 1.2, n), 1 / 3, 1.0)
    correct = rng.random(n) < accuracy(conf)
    return np.stack([conf, 1 - conf], axis=1), np.where(correct, 0, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--boot", type=int, default=500)
    ap.add_argument("--n", default="100,300,1000")
    args = ap.parse_args()
    sizes = [int(v) for v in args.n.split(",")]
    print(f"{'scenario':12s} {'true':>6s} {'n':>6s} {'plug-in':>8s} {'corrected':>9s} {'upper':>7s} {'coverage':>8s}")
    for name, acc in SCENARIOS.items():
        # two classes: top-class confidence c in [1/3, 1]; below 0.5 the argmax is class 1, so true ECE is
        # measured on the same construction by the plug-in on a very large sample
        true = expected_calibration_error(*draw(np.random.default_rng(99), 2_000_000, acc)).ece
        for n in sizes:
            rng = np.random.default_rng(1)
            runs = [ece_estimate(*draw(rng, n, acc), seed=i, n_boot=args.boot) for i in range(args.reps)]
            cover = np.mean([r.ci_low <= true <= r.ci_high for r in runs])
            print(f"{name:12s} {true:6.4f} {n:6d} {np.mean([r.ece_plugin for r in runs]):8.4f} "
                  f"{np.mean([r.ece_debiased for r in runs]):9.4f} {np.mean([r.ci_high for r in runs]):7.4f} "
                  f"{cover:8.3f}", flush=True)


if __name__ == "__main__":
    main()
