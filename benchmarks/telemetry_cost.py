"""What on-device telemetry costs the workload: throughput with default sampling vs without.

Goal (issue 5): on the host board, throughput with the default telemetry sampling
(2 Hz, every source the device has) is within 1% of throughput without it. One agent
(the real child process and protocol) runs alternating chunks with and without
telemetry, so drift of the machine hits both alike; the loss is
the median over adjacent (with, without) pairs of ``1 - throughput with / without``,
with a bootstrap CI of that median and a Wilcoxon signed-rank p. The agent also
records the time each sample took, which is the loss the loop itself sees (it does
not run an inference while it samples).

Two sysfs views are measured:

* ``host``: this computer's own /sys (a container may expose no sensors at all, so
  the sampler has nothing to read: this bounds the cost of the mechanism itself);
* ``pi5-like``: a fake tree with a Raspberry Pi 5's layout (thermal zone with trip
  points, cpufreq policy, hwmon sensors) plus a fake ``vcgencmd`` (a shell script, so
  its three process starts per sample are real) through ``EDGEBENCH_SYSFS_ROOT``.
  Files on tmpfs are cheaper to read than real sysfs attributes, whose drivers may
  talk to hardware; the per-sample cost the agent records is reported beside it.

    .venv/bin/python benchmarks/telemetry_cost.py [--rounds 30] [--chunk 1.0] [--model PATH]
"""
from __future__ import annotations

import argparse
import os
import stat
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def pi5_tree(base: Path) -> tuple[Path, Path]:
    def w(rel, text):
        p = base / "root" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"{text}\n")

    z = "sys/class/thermal/thermal_zone0/"
    w(z + "type", "cpu-thermal")
    w(z + "temp", 61450)
    for i, t in enumerate([110000, 50000, 60000, 67500, 75000]):
        w(z + f"trip_point_{i}_temp", t)
        w(z + f"trip_point_{i}_type", "critical" if i == 0 else "active")
    p = "sys/devices/system/cpu/cpufreq/policy0/"
    for name, v in [("scaling_cur_freq", 2400000), ("scaling_min_freq", 1500000), ("scaling_max_freq", 2400000),
                    ("cpuinfo_max_freq", 2400000), ("scaling_governor", "ondemand"), ("affected_cpus", "0 1 2 3")]:
        w(p + name, v)
    w("sys/class/hwmon/hwmon0/name", "cpu_thermal")
    w("sys/class/hwmon/hwmon0/temp1_input", 61450)
    w("sys/class/hwmon/hwmon1/name", "rp1_adc")
    for i in range(1, 5):
        w(f"sys/class/hwmon/hwmon1/in{i}_input", 1650)
    w("sys/class/hwmon/hwmon1/temp1_input", 55000)
    bin_dir = base / "bin"
    bin_dir.mkdir()
    script = bin_dir / "vcgencmd"
    script.write_text('#!/bin/sh\ncase "$1" in\n  measure_temp) echo "temp=61.4\'C" ;;\n'
                      "  measure_clock) echo 'frequency(0)=2400000000' ;;\n"
                      "  get_throttled) echo 'throttled=0x0' ;;\nesac\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return base / "root", bin_dir


def measure(label: str, env: dict, model: Path, rounds: int, chunk_s: float) -> None:
    from scipy.stats import bootstrap, wilcoxon

    from edgebench.data.inputs import random_inputs
    from edgebench.modelfile import read_model
    from edgebench.telemetry import capture
    from edgebench.transport.client import AgentClient
    from edgebench.transport.local import LocalTransport

    transport = LocalTransport(env=env)
    client = AgentClient(transport.open(), transport.describe(), timeout_s=60)
    try:
        sha = client.ensure_model(read_model(model))
        info = client.load(sha)
        client.set_inputs(random_inputs(info["inputs"][0], count=64, seed=0).x)
        spec = capture.TelemetrySpec().to_request()        # the default: 2 Hz, every source
        desc, _ = client.request("telemetry", **spec)
        client.run("single-stream", 1_000_000, 1.0)        # warm up
        off, on, cost, tm_n, run_s = [], [], 0, 0, 0.0
        for r in range(2 * rounds):
            use = (r % 2 == 1) if (r // 2) % 2 == 0 else (r % 2 == 0)  # ABBA order cancels slow drift
            args = dict(mode="single-stream", count=1_000_000, max_time_s=chunk_s, rate_hz=None, start_index=0)
            if use:
                header, body = client.request("run", telemetry=spec, timeout_s=chunk_s + 60, **args)
                a = capture._decode(body)
                cost += int(a["tm_cost_ns"].sum())
                tm_n += len(a["tm_t_ns"])
            else:
                header, body = client.request("run", timeout_s=chunk_s + 60, **args)
                a = capture._decode(body)
            span = (a["t_start_ns"][-1] + a["e2e_ns"][-1] - a["t_start_ns"][0]) / 1e9
            (on if use else off).append(len(a["e2e_ns"]) / span)
            run_s += span if use else 0.0
        # each adjacent pair (one chunk with, one without) gives one ratio; drift cancels within a pair
        pair = np.log(np.array(on)) - np.log(np.array(off))
        boot = bootstrap((pair,), np.median, confidence_level=0.95, n_resamples=5000, random_state=0,
                         method="percentile").confidence_interval
        loss, lo, hi = (1 - np.exp(v) for v in (np.median(pair), boot.high, boot.low))
        p = wilcoxon(pair).pvalue
        print(f"{label:9} channels {len(desc['channels']) + len(desc['text_channels']):2d} "
              f"(found {desc['found']}), samples {tm_n} in {run_s:.0f} s with telemetry")
        print(f"          throughput without {np.median(off):,.0f}/s, with {np.median(on):,.0f}/s; paired loss "
              f"{100 * loss:+.2f}% (95% CI {100 * lo:+.2f}…{100 * hi:+.2f}%, Wilcoxon p={p:.2g}, {rounds} pairs); "
              f"recorded sampling time {cost / tm_n / 1e3 if tm_n else 0:.0f} µs/sample = "
              f"{100 * cost / 1e9 / run_s:.3f}% of the run")
    finally:
        client.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=str(ROOT / "models/digits/digits_int8.tflite"))
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--chunk", type=float, default=1.0)
    args = ap.parse_args()
    model = Path(args.model)
    print(f"model {model.name}, chunks of {args.chunk:g} s, alternating without/with telemetry (ABBA)")
    measure("host", {}, model, args.rounds, args.chunk)
    with tempfile.TemporaryDirectory() as tmp:
        root, bin_dir = pi5_tree(Path(tmp))
        env = {"EDGEBENCH_SYSFS_ROOT": str(root), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
        measure("pi5-like", env, model, args.rounds, args.chunk)


if __name__ == "__main__":
    main()
