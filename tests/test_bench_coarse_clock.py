"""A device clock that ticks every millisecond (microcontroller timers do): the bench must
not print a zero-width interval, must warn, and the claim must say so."""

import numpy as np
from conftest import DIGITS_INT8

from edgebench.bench.latency import BenchOptions, run_bench
from edgebench.boards.registry import get_profile
from edgebench.sim import SimClient

TICK_NS = 1_000_000
TRUE_MEDIAN_NS = 2_600_000


class CoarseClockClient(SimClient):
    """The simulated board read through a 1 ms timer: latencies around 2.6 ms read as 2 or 3 ms."""

    def hello(self) -> dict:
        return {**super().hello(), "clock_resolution_s": TICK_NS / 1e9}

    def run(self, mode, count, max_time_s, rate_hz=None, start_index=0):
        header, arrs = super().run(mode, count, max_time_s, rate_hz=rate_hz, start_index=start_index)
        e2e = arrs["e2e_ns"].astype(np.float64)
        if e2e.size:
            scale = TRUE_MEDIAN_NS / max(float(np.median(e2e)), 1.0)
            for key in ("e2e_ns", "invoke_ns", "prep_ns", "set_ns", "get_ns"):
                arrs[key] = (np.floor(arrs[key].astype(np.float64) * scale / TICK_NS) * TICK_NS).astype(np.int64)
        return header, arrs


def test_coarse_clock_is_widened_warned_and_claimed(tmp_path):
    profile = get_profile("sim-pi5")
    client = CoarseClockClient(profile.simulated, description="simulated board with a 1 ms timer")
    opts = BenchOptions(min_samples=50, min_time_s=0.3, max_time_s=3.0, chunk_time_s=0.1, repeat=2,
                        max_repeats=2)
    result, _ = run_bench(DIGITS_INT8, profile, opts, runs_root=tmp_path, client=client)
    e2e = result.latency["e2e"]
    assert set(np.round(np.array([r.median_s for r in e2e.per_run]) * 1e3)) <= {2.0, 3.0}
    # not [3, 3] ms: at least one tick either side, and it holds the true 2.6 ms
    assert e2e.ci_high_s - e2e.ci_low_s >= 2e-3 - 1e-12
    assert e2e.ci_low_s <= 2.6e-3 <= e2e.ci_high_s
    assert result.timing.clock_resolution_s == 1e-3
    assert "coarse-clock" in {w.code for w in result.warnings}
    assert "ticks every 1.00 ms" in result.extra.claim
