"""When does a statistical soak stop, against a fixed-duration soak? (simulated board, known tau)

Goal (issue 5): on the simulated board with a known thermal time constant tau,
``edgebench soak`` stops at most 1.5 tau after the load starts, and its sustained
figures agree with those of a fixed-duration soak (5 tau). For each board model,
window and seed this runs both soaks on fresh simulated boards and reports:

* stop / tau of the statistical soak (and whether it stayed <= 1.5 tau);
* the sustained median latency and temperature of both, and their ratio;
* the simulated time saved.

Board models: ``sim-pi5`` as shipped (tau 100 s, throttles at 80 °C), the same with
tau 300 s (C x 3), and an honest counter-example that never throttles (trip point out
of reach): there the temperature approaches its end exponentially and no
statistical rule can call it flat within 1.5 tau without lying; the benchmark
reports how long it takes instead.

    .venv/bin/python benchmarks/soak_tau.py [--seeds 5] [--windows 30,60]
"""
from __future__ import annotations

import argparse
import dataclasses
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "models" / "digits" / "digits_int8.tflite"


def one(params, window_s: float, until: str, max_s: float, root: Path):
    from edgebench.bench.soak import SoakOptions, run_soak
    from edgebench.boards.registry import get_profile
    from edgebench.sim import SimClient

    opts = SoakOptions(window_s=window_s, burst_s=5.0, max_duration_s=max_s, until=until)
    result, _ = run_soak(MODEL, get_profile("sim-pi5"), opts, runs_root=root, client=SimClient(params))
    fig = result.extra.soak
    return {"stop_s": fig.duration_s, "steady": fig.steady, "median_s": fig.sustained.median_s,
            "temp_c": fig.thermal.steady_temp_c, "throttle_s": fig.thermal.time_to_first_throttle_s}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--windows", default="30,60")
    ap.add_argument("--fixed-taus", type=float, default=5.0, help="duration of the fixed soak, in tau")
    args = ap.parse_args()

    from edgebench.boards.registry import get_profile

    base = get_profile("sim-pi5").simulated
    models = {
        "sim-pi5 (tau 100 s, throttles)": base,
        "sim-pi5, tau 300 s (throttles)": dataclasses.replace(base, c_th_j_per_c=base.c_th_j_per_c * 3),
        "never throttles (tau 100 s)": dataclasses.replace(base, trip_c=500.0, critical_c=600.0),
    }
    windows = [float(w) for w in args.windows.split(",")]
    print(f"{'board model':32} {'window':>6} {'stop/tau':>17} {'<=1.5tau':>8} {'fixed':>6} "
          f"{'sustained median ratio':>22} {'steady T vs fixed T':>20} {'time saved':>10}")
    t_wall = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        for name, params in models.items():
            tau = params.tau_s
            for window in windows:
                ratios, meds, temps, ok = [], [], [], 0
                for seed in range(args.seeds):
                    p = dataclasses.replace(params, seed=seed)
                    s = one(p, window, "steady", 20 * tau, Path(tmp))
                    f = one(p, window, "max", args.fixed_taus * tau, Path(tmp))
                    ratios.append(s["stop_s"] / tau)
                    ok += s["steady"] and s["stop_s"] <= 1.5 * tau
                    meds.append(s["median_s"] / f["median_s"])
                    temps.append((s["temp_c"] or 0) - (f["temp_c"] or 0))
                print(f"{name:32} {window:5.0f}s {statistics.median(ratios):6.2f} "
                      f"[{min(ratios):.2f}-{max(ratios):.2f}] {ok:>4}/{args.seeds:<3} "
                      f"{args.fixed_taus:4.1f}t {statistics.median(meds):14.4f} "
                      f"[{min(meds):.3f}-{max(meds):.3f}] {statistics.median(temps):+9.2f} °C "
                      f"{1 - statistics.median(ratios) / args.fixed_taus:9.0%}")
    print(f"(simulated time; {time.monotonic() - t_wall:.0f} s of wall time for all soaks)")


if __name__ == "__main__":
    main()
