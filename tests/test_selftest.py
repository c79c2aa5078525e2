"""edgebench selftest's clock check (edgebench.bench.selftest): the bound and the verdicts.

The device's timestamps are bracketed by the host's send and receive times; the bound must contain
the true rate error whatever the round trips, and a wrong clock tree (a port that believes it runs at
180 MHz while its PLL never locked: the device's microseconds run 11.25x slow) must fail.
"""
from __future__ import annotations

import numpy as np
import pytest

from edgebench.bench.selftest import CLOCK_TOLERANCE, FAIL, PASS, SKIP, WARN, _clock_check, clock_rate


def _readings(rate: float, seconds: float = 10.0, every: float = 0.25, rtt_ms=(2.0, 40.0), seed: int = 0):
    """(send ns, receive ns, device µs): the device reads its clock at a random point of each round trip."""
    rng = np.random.default_rng(seed)
    out, t = [], 1_000_000_000.0
    offset_us = 123_456.0
    for _ in range(int(seconds / every) + 7):
        rtt = rng.uniform(*rtt_ms) * 1e6
        at = t + rng.uniform(0, 1) * rtt
        out.append((int(t), int(t + rtt), int(offset_us + (at - 1e9) / 1e3 * (1 + rate))))
        t += every * 1e9
    return out


@pytest.mark.parametrize("rate", [0.0, 2e-4, -0.015, 0.04])
def test_the_bound_contains_the_true_rate_error(rate):
    for seed in range(50):
        c = clock_rate(_readings(rate, seed=seed))
        lo, hi = c["interval"]
        assert lo <= rate <= hi, (seed, c)
        assert lo <= c["rate_error"] <= hi
        assert c["host_s"] >= 10.0 - 0.5


def test_verdicts_on_a_real_board():
    good = clock_rate(_readings(50e-6, rtt_ms=(1.0, 3.0)))
    assert _clock_check(good, "measured")["status"] == PASS
    # the PLL did not lock but the port claims 180 MHz: its µs run at 16/180 of real time
    wrong = clock_rate(_readings(16 / 180 - 1))
    check = _clock_check(wrong, "measured")
    assert check["status"] == FAIL and "outside ±2%" in check["summary"]
    assert wrong["interval"][0] <= 16 / 180 - 1 <= wrong["interval"][1]
    # a bound straddling the tolerance cannot decide
    edge = clock_rate(_readings(CLOCK_TOLERANCE, seconds=10.0, rtt_ms=(200.0, 400.0)))
    assert _clock_check(edge, "measured")["status"] == WARN
    assert _clock_check(wrong, "emulated")["status"] == SKIP


def test_too_few_or_frozen_timestamps_are_one_line():
    from edgebench.errors import UsageError

    with pytest.raises(UsageError, match="at least 4 timestamps"):
        clock_rate(_readings(0.0)[:3])
    frozen = [(s, r, 5) for s, r, _ in _readings(0.0)]
    with pytest.raises(UsageError, match="did not advance"):
        clock_rate(frozen)


def _info(clock, ppm, fallback="none"):
    return {"counter-hz": 120_000_000, "clock": clock, "clock-ppm": ppm, "clock-fallback": fallback}


def test_clock_source_against_the_mlperf_tolerance():
    """A crystal passes; an internal RC oscillator (or a crystal that did not start) warns; a measured
    rate outside the MLPerf dialect's 0.1 % fails; old firmware that does not say warns."""
    from edgebench.bench.selftest import _clock_source_check

    near = clock_rate(_readings(50e-6, rtt_ms=(1.0, 3.0)))
    hsi_off = clock_rate(_readings(-4e-3, rtt_ms=(1.0, 3.0)))
    assert _clock_source_check(_info("hse-bypass", 50), near, "measured")["status"] == PASS
    untrimmed = _clock_source_check(_info("hsi", 10000, "hse-bypass"), near, "measured")
    assert untrimmed["status"] == WARN and "wanted hse-bypass" in untrimmed["summary"]
    assert "this measurement was within it" in untrimmed["summary"]
    assert _clock_source_check(_info("msi-lse", 2500), near, "measured")["status"] == WARN
    failed = _clock_source_check(_info("hsi", 10000), hsi_off, "measured")
    assert failed["status"] == FAIL and "outside the MLPerf dialect's ±0.1%" in failed["summary"]
    # even a crystal's claim loses to a measured rate outside the tolerance
    assert _clock_source_check(_info("hse-bypass", 50), hsi_off, "measured")["status"] == FAIL
    assert _clock_source_check({"counter-hz": 1}, near, "measured")["status"] == WARN
    assert _clock_source_check(_info("emulated", 0), near, "emulated")["status"] == SKIP
    assert _clock_source_check(_info("host", 0), near, "measured")["status"] == SKIP
