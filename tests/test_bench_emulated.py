"""A big model on an emulated board (issue 31, item 6): QEMU retires the same instructions in
every inference, so its figures are deterministic, but one inference can take a second of wall
time. The bench must not spend every repeat's budget on a warm-up of 10 or more inferences, and a
run that measured nothing is never ``complete``: it says what to raise.

The board here is the simulated one of edgebench.sim with two changes, said so: it reports
``timing: emulated`` as the QEMU firmware does, and each run request does one inference of a
fixed emulated duration and takes ``wall_s`` of real time, as a slow emulator would. (The real
QEMU run of VWW is benchmarks/engine_instructions.py and the command in the closing note.)"""
import re
import time

import numpy as np
import pytest
from conftest import DIGITS_INT8

from edgebench.bench.latency import BenchOptions, run_bench
from edgebench.boards.registry import get_profile
from edgebench.sim import SimClient
from edgebench.stats.warmup import emulated_warmup, warmup_for

STEADY_NS = 700_000_000          # one emulated inference: 0.7 s of emulated time, every time
FIRST_NS = 760_000_000           # the first one after the cold start differs (a timer tick, caches)


class SlowEmulatedClient(SimClient):
    """One inference per run request, ``wall_s`` of real time each, deterministic emulated figures."""

    def __init__(self, *args, wall_s: float, **kwargs):
        super().__init__(*args, **kwargs)
        self.wall_s = wall_s
        self.since_load = 0

    def hello(self) -> dict:
        return {**super().hello(), "timing": "emulated"}

    def load(self, *args, **kwargs):
        self.since_load = 0
        return super().load(*args, **kwargs)

    def run(self, mode, count, max_time_s, rate_hz=None, start_index=0):
        header, arrs = super().run(mode, 1, max_time_s, rate_hz=rate_hz, start_index=start_index)
        time.sleep(self.wall_s)
        value = FIRST_NS if self.since_load == 1 else STEADY_NS      # 0: the cold inference
        self.since_load += 1
        for key in ("e2e_ns", "invoke_ns"):
            arrs[key] = np.full(len(arrs[key]), value, dtype=np.int64)
        for key in ("prep_ns", "set_ns", "get_ns"):
            arrs[key] = np.zeros(len(arrs[key]), dtype=np.int64)
        return {**header, "n": len(arrs["e2e_ns"])}, arrs


def _client(wall_s: float) -> tuple:
    from edgebench.stats import preload

    preload()       # the statistics imports, once: their seconds would come off this run's budget
    profile = get_profile("sim-pi5")
    return profile, SlowEmulatedClient(profile.simulated, description="slow emulated board (fake)", wall_s=wall_s)


def test_emulated_warmup_is_the_leading_samples_off_the_steady_value():
    x = np.array([0.76, 0.70, 0.70, 0.70, 0.70])
    assert emulated_warmup(x).n_warmup == 1
    assert emulated_warmup(np.array([0.9, 0.8, 0.7, 0.7, 0.7, 0.7])).n_warmup == 2     # at most two
    assert emulated_warmup(np.full(8, 0.7)).n_warmup == 0
    assert emulated_warmup(np.array([0.9])).n_warmup == 0                              # keeps one sample
    # a real board keeps the fixed minimum of 10 (MSER needs 20 samples)
    assert warmup_for(np.full(12, 0.7), 10, "measured").n_warmup == 10
    assert warmup_for(np.full(12, 0.7), 10, "emulated").n_warmup == 0


@pytest.mark.slow
def test_slow_emulated_model_gets_a_figure_within_the_budget(tmp_path):
    """A handful of inferences per repeat: with a warm-up of 10 no repeat kept a sample."""
    profile, client = _client(wall_s=0.12)
    opts = BenchOptions(min_samples=200, min_time_s=0.2, max_time_s=3.0, chunk_time_s=0.1, repeat=2,
                        max_repeats=2, sessions=1)
    result, run_dir = run_bench(DIGITS_INT8, profile, opts, runs_root=tmp_path, client=client)
    assert result.label == "emulated"
    assert result.status == "complete", result.status_reason
    e2e = result.latency["e2e"]
    assert abs(e2e.median_s - STEADY_NS / 1e9) < 1e-9
    per = result.warmup.per_repeat
    assert per and all(w["n_warmup"] <= 2 for w in per)
    assert result.stopping.n >= 2 * len(e2e.per_run)


@pytest.mark.slow
def test_a_run_that_measured_nothing_is_incomplete_and_says_what_to_raise(tmp_path, monkeypatch):
    from edgebench.bench import latency

    monkeypatch.setattr(latency, "GRACE_S", 0.3)      # the 5 s grace, shortened for the test
    profile, client = _client(wall_s=0.8)
    opts = BenchOptions(min_samples=200, min_time_s=0.1, max_time_s=1.2, chunk_time_s=0.1, repeat=1,
                        max_repeats=1, sessions=1)
    result, run_dir = run_bench(DIGITS_INT8, profile, opts, runs_root=tmp_path, client=client)
    assert not result.latency
    assert result.status == "incomplete"
    assert "measured nothing" in result.status_reason and "raise --max-time to at least" in result.status_reason
    assert re.search(r"one inference takes about 0\.8\d* s of wall time", result.status_reason)
    import json

    stored = json.loads((run_dir / "run.json").read_text())
    assert stored["status"] == "incomplete" and stored["status_reason"] == result.status_reason
