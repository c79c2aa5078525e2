"""Coverage and false-alarm rates of the per-layer figures, by simulation.

1. layer-error: N independent inputs, each with its own signal power and a noise ratio with a
   lognormal spread across inputs (the spreads measured on the digits model's layers, up to
   the 2.5 of a saturating one); the target is the mean per-input SQNR in dB. Counts how often
   the t interval of a layer's SQNR (:func:`layer_figures`), the paired interval of the drop
   between two layers and the bootstrap interval of the local SQNR (:func:`local_error`)
   contain the true values; and, with the typical input's local SQNR at its reference, how often
   :func:`first_jump` calls a jump anyway (on the typical input or the worst tenth: the latter
   is no false alarm when the noise varies so much across inputs that the worst tenth really
   is more than 6 dB worse, as with a log-spread of 1 or more).
2. profile compare, A/A: two profile runs of the same build (K = 3 repeats each, a run effect
   of CV ``--run-cv`` on every layer, AR(1) samples within a repeat), L layers compared with
   :func:`edgebench.bench.profile_compare.compare_layers`: how often any layer is called
   slower or faster (family-wise false alarm, Holm over the rows), and, with one layer 1.3x
   slower, how often it is found.
3. the sum of the layers against the whole model (:func:`sum_ratio`): K repeats whose layer
   medians carry run effects; how often its interval contains the true ratio.

Run: .venv/bin/python benchmarks/profile_coverage.py [--reps 400]. Prints one line per cell.
"""
from __future__ import annotations

import argparse
import math
import sys

import numpy as np
from scipy.signal import lfilter

from edgebench.stats.layer_error import Accumulator, first_jump, layer_figures, local_error, resamples


def _acc(signal, noise) -> Accumulator:
    a = Accumulator.empty()
    a.signal, a.noise, a.cosine = list(signal), list(noise), [1.0] * len(signal)
    return a


def layer_error_cells(rng, reps: int, n: int, spread: float) -> None:
    """Per-input noise ratios lognormal with log-sd ``spread`` around 30 dB (40 dB at the input),
    signal powers with log-sd 0.25 (as measured on the digits model's layers: 0.1-0.25; noise
    spreads 0.1-0.5, up to 2.5 on a saturating layer)."""
    base_db, drop_db = 30.0, 8.0
    # each input's SQNR in dB is normal: mean base - 10 log10(E... ) with E[m] = 1, i.e. the mean of
    # -10 log10(m) for log m ~ N(-spread^2 / 2, spread^2)
    shift = 10 / math.log(10) * spread ** 2 / 2
    true_db = base_db + shift
    cover = cover_drop = cover_local = false_jump = 0
    true_local = -10 * math.log10(10 ** (-true_db / 10) - 10 ** (-(true_db + drop_db) / 10))
    for _ in range(reps):
        s = np.exp(rng.normal(0, 0.25, n))
        e_in = s * 10 ** (-(base_db + drop_db) / 10) * np.exp(rng.normal(0, spread, n) - spread ** 2 / 2)
        e_out = s * 10 ** (-base_db / 10) * np.exp(rng.normal(0, spread, n) - spread ** 2 / 2)
        idx = resamples(n, int(rng.integers(1 << 30)))
        out, inp = _acc(s, e_out), _acc(s, e_in)
        fig = layer_figures(out)
        cover += fig.sqnr_ci[0] <= true_db <= fig.sqnr_ci[1]
        d = local_error([inp], out, idx)
        cover_drop += d["drop_ci"][0] <= drop_db <= d["drop_ci"][1]
        cover_local += d["local_ci"] is not None and d["local_ci"][0] <= true_local <= d["local_ci"][1]
        false_jump += first_jump([d], [true_local], 6.0) is not None   # its typical local is its reference
    print(f"layer-error  n={n:3d} noise spread {spread:.1f}: SQNR coverage {cover / reps:.3f}, drop coverage "
          f"{cover_drop / reps:.3f}, local coverage {cover_local / reps:.3f}, false jump (6 dB) "
          f"{false_jump / reps:.3f}  ({reps} reps)")


def _runs(rng, median, k, n, phi, run_cv):
    e = rng.standard_normal((k, n)) * math.sqrt(1 - phi ** 2)
    e[:, 0] = rng.standard_normal(k)
    x = lfilter([1.0], [1.0, -phi], e, axis=1)
    eff = rng.normal(0, run_cv, (k, 1))
    return median * np.exp(0.05 * x + eff)


def compare_cells(rng, reps: int, layers: int, run_cv: float) -> None:
    import pandas as pd

    from edgebench.bench.profile_compare import compare_layers
    from edgebench.bench.record import new_result

    def run(factor_row=None):
        r = new_result("profile", "measured")
        frames, rows = [], []
        for j, key in enumerate(["whole"] + [f"op:{i}" for i in range(layers)]):
            med = 1e-3 * (1.3 if key == factor_row else 1.0)
            x = _runs(rng, med, 3, 200, 0.5, run_cv)
            for k in range(3):
                frames.append(pd.DataFrame({"repeat": k, "row": key, "latency_s": x[k], "statistic": "sample"}))
            if key != "whole":
                rows.append({"key": key, "index": j - 1, "op": "CONV_2D", "median_s": med})
        r.extra.profile = {"method": "device-counter", "statistic": "median", "layers": rows,
                              "whole": {"median_s": 1e-3}, "clock_resolution_s": 1e-9}
        return r, pd.concat(frames, ignore_index=True)

    alarms = found = 0
    for _ in range(reps):
        a, sa = run()
        b, sb = run()
        c = compare_layers(a, sa, b, sb)
        alarms += bool(c["slower"] or c["faster"])
        b2, sb2 = run("op:1")
        found += "op:1" in compare_layers(a, sa, b2, sb2)["slower"]
    print(f"compare      {layers} layers, run CV {run_cv:.2f}, K=3: A/A false alarm (any layer) {alarms / reps:.3f}, "
          f"1.3x slower layer found {found / reps:.3f}  ({reps} reps)")


def sum_ratio_cells(rng, reps: int, layers: int, run_cv: float) -> None:
    from edgebench.bench.profile_summary import row_summary, sum_ratio

    cover = 0
    meds = np.full(layers, 1e-3)
    true = 0.97
    for _ in range(reps):
        rows = [row_summary(list(_runs(rng, m, 3, 100, 0.5, run_cv)), 0.0) for m in meds]
        whole = row_summary(list(_runs(rng, meds.sum() / true, 3, 100, 0.5, run_cv)), 0.0)
        q = sum_ratio(rows, whole)
        cover += q is not None and q.ci_low is not None and q.ci_high is not None and q.ci_low <= true <= q.ci_high
    print(f"sum ratio    {layers} layers, run CV {run_cv:.2f}, K=3: coverage {cover / reps:.3f}  ({reps} reps)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--run-cv", type=float, default=0.03)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    for n, spread in ((16, 0.3), (16, 2.0), (64, 0.3), (64, 1.0), (64, 2.0)):
        layer_error_cells(rng, args.reps, n, spread)
    for cv in (0.0, args.run_cv):
        compare_cells(rng, max(50, args.reps // 4), 8, cv)
    for cv in (0.0, args.run_cv):
        sum_ratio_cells(rng, args.reps, 8, cv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
