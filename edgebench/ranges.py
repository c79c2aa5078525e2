"""The values every numeric option may take, declared once (level 0): the CLI and the library check them.

A :class:`Range` is one option's bounds (finite always; integers where the option counts
something) with the flag users type. Each is declared here once; the CLI checks it as the
option is parsed (``edgebench.cli.options.within``: one line naming the range, exit 1) and the
library's option dataclasses check the same fields (:func:`check_fields`), so a library caller
passing ``rate_hz=1e-320`` gets the same one line as ``--rate 1e-320``.

The bounds are those of a meaningful run, not of a data type: a rate below a request every
1000 s, a soak window under a second or a duty cycle under one in a million measure nothing
(and overflowed schedules or divided by almost zero before).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from edgebench.errors import UsageError

DAY_S = 86400.0


@dataclass(frozen=True)
class Range:
    """``low`` .. ``high`` (``low_open``: ``low`` itself excluded), finite, an integer if ``integer``."""

    low: float | None = None
    high: float | None = None
    unit: str = ""
    integer: bool = False
    low_open: bool = False
    flag: str = ""
    inf_ok: bool = False         # inf also accepted (a gate that is off)

    def describe(self) -> str:
        kind = "a whole number" if self.integer else "a number" if self.inf_ok else "a finite number"
        unit = (f" {self.unit}" if self.unit else "") + (" (inf: no limit)" if self.inf_ok else "")
        lo, hi = _num(self.low), _num(self.high)
        if self.low is not None and self.high is not None:
            if self.low_open:
                return f"{kind} above {lo} and at most {hi}{unit}"
            return f"{kind} from {lo} to {hi}{unit}"
        if self.low is not None:
            return f"{kind} {'above' if self.low_open else 'of at least'} {lo}{unit}"
        if self.high is not None:
            return f"{kind} of at most {hi}{unit}"
        return kind + unit

    def problem(self, value) -> str | None:
        """None when ``value`` is in the range, else what is wrong (for a message)."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"must be {self.describe()}, got {value!r}"
        if self.integer and isinstance(value, float) and not value.is_integer():
            return f"must be {self.describe()}, got {value!r}"
        below = self.low is not None and (value < self.low or self.low_open and value == self.low)
        bad = math.isnan(value) or (math.isinf(value) and not (self.inf_ok and value > 0))
        if bad or below or (self.high is not None and value > self.high):
            return f"must be {self.describe()}, got {_got(value)}"
        return None

    def check(self, value, name: str | None = None) -> None:
        """UsageError naming the option and the range when ``value`` is outside it."""
        why = self.problem(value)
        if why:
            raise UsageError(f"{name or self.flag or 'value'} {why}")


def _num(x) -> str:
    if x is None:
        return ""
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) < 1e15):
        return f"{int(x):,}" if abs(x) >= 10000 else str(int(x))
    return f"{x:g}"


def _got(x) -> str:
    """The value as the user typed it: 1e-320, not 9.99989e-321."""
    return _num(x) if isinstance(x, int) or (isinstance(x, float) and x.is_integer()) else repr(x)


def check_fields(obj, table: dict) -> None:
    """Check every field of ``obj`` named in ``table`` (field name -> :class:`Range`); a field that is
    None is not given; a tuple or list is checked item by item."""
    for name, rng in table.items():
        value = getattr(obj, name, None)
        for item in (value if isinstance(value, (tuple, list)) else (value,)):
            if item is not None:
                rng.check(item, rng.flag or name)


# ------------------------------------------------------------------------------ the options
THREADS = Range(1, 1024, integer=True, flag="--threads")
SEED = Range(0, 2 ** 32 - 1, integer=True, flag="--seed")
CLOCK_CHECK_S = Range(10.0, DAY_S, "s", flag="--clock-seconds")
SELFTEST_COUNT = Range(1, 10 ** 4, integer=True, flag="--count")
OP_TIME_S = Range(0.001, 3600.0, "s", flag="--op-time")
WHOLE_TIME_S = Range(0.001, 3600.0, "s", flag="--whole-time")
LAYER_SAMPLES = Range(2, 10 ** 6, integer=True, flag="--layer-samples")
BM_RUNS = Range(2, 10 ** 6, integer=True, flag="--runs")
LAYER_ERROR_COUNT = Range(2, 10 ** 6, integer=True, flag="--count")
JUMP_DB = Range(0.1, 100.0, "dB", flag="--jump-db")
MIN_AGREEMENT = Range(0.0, 1.0, "(top-1 agreement of INT8 with FP32)", flag="--min-agreement")
MIN_SQNR_DB = Range(-100.0, 200.0, "dB", flag="--min-sqnr")
ONNX_RTOL = Range(1e-9, 1.0, "(of the largest output)", flag="--onnx-rtol")
BATCH = Range(1, 65536, integer=True, flag="--batch")
RATE_HZ = Range(1e-4, 1e6, "inferences per second", flag="--rate")
DUTY = Range(1e-6, 1.0, "(the fraction of time spent inferring)", flag="--duty")
TARGET = Range(0.0, 1.0, "(relative half-width of the interval)", low_open=True, flag="--target")
MIN_SAMPLES = Range(1, 10 ** 9, integer=True, flag="--min-samples")
MIN_TIME_S = Range(0.0, 30 * DAY_S, "s", flag="--min-time")
MAX_TIME_S = Range(0.1, 30 * DAY_S, "s", flag="--max-time")
REPEAT = Range(1, 1000, integer=True, flag="--repeat")
MAX_REPEATS = Range(1, 1000, integer=True, flag="--max-repeats")
SESSIONS = Range(1, 1000, integer=True, flag="--sessions")
ROUNDS = Range(1, 1000, integer=True, flag="--rounds")
INPUT_COUNT = Range(1, 10 ** 6, integer=True, flag="--input-count")
MIN_WARMUP = Range(0, 10 ** 6, integer=True, flag="min_warmup")
CHUNK_TIME_S = Range(0.01, 3600.0, "s", flag="chunk_time_s")
# the thermal-soak family
WINDOW_S = Range(1.0, 30 * DAY_S, "s", flag="--window")
BURST_S = Range(0.0, 30 * DAY_S, "s", flag="--burst")
MAX_DURATION_S = Range(1.0, 365 * DAY_S, "s", flag="--max-duration")
MAX_DURATION_PER_POINT_S = Range(1.0, 365 * DAY_S, "s", flag="--max-duration-per-point")
COOL_TIMEOUT_S = Range(0.0, 30 * DAY_S, "s", flag="--cool-timeout")
TELEMETRY_HZ = Range(0.01, 10.0, "samples per second", flag="--telemetry-hz")
TEMP_FLOOR_C = Range(0.0, 100.0, "°C", low_open=True, flag="--temp-floor")
LATENCY_FLOOR = Range(0.0, 1.0, "(relative)", low_open=True, flag="--latency-floor")
SOAK_CHUNK_S = Range(0.01, 3600.0, "s", flag="chunk_s")
# energy
IDLE_S = Range(0.5, DAY_S, "s", flag="--idle-s")
MARGIN_S = Range(0.0, DAY_S, "s", flag="--margin-s")
# accuracy and verify
MAX_DROP = Range(-100.0, None, "accuracy points", inf_ok=True, flag="--max-drop")
MAX_ECE = Range(0.0, None, inf_ok=True, flag="--max-ece")
MAX_EDGE_DROP = Range(-100.0, None, "accuracy points", inf_ok=True, flag="--max-edge-drop")
CALIB_FRACTION = Range(0.0, 1.0, "(exclusive of 1)", low_open=True, flag="--calib-fraction")
CHUNK = Range(1, 10 ** 6, integer=True, flag="--chunk")
CHANNELS = Range(1, 4, integer=True, flag="--channels")
COUNT = Range(1, 10 ** 6, integer=True, flag="--count")
# farm demo
DEMO_PLACES = Range(1, 8, integer=True, flag="--places")
# battery
CAPACITY_MAH = Range(0.0, 1e9, "mAh", low_open=True, flag="--capacity-mah")
VOLTAGE_V = Range(0.0, 1000.0, "V", low_open=True, flag="--voltage")
USABLE = Range(0.0, 1.0, "(fraction of the capacity)", low_open=True, flag="--usable")
REGULATOR_EFF = Range(0.0, 1.0, "(efficiency)", low_open=True, flag="--regulator-eff")
SELF_DISCHARGE = Range(0.0, 100.0, "% per month", flag="--self-discharge-pct-per-month")
TEMP_C = Range(-60.0, 150.0, "°C", flag="--temp-c")
TEMP_DERATE = Range(0.0, 1.0, "(fraction)", low_open=True, flag="--temp-derate")
POWER_W = Range(0.0, 1e6, "W", flag="--idle-w")
ACTIVE_W = Range(0.0, 1e6, "W", flag="--active-w")
EVENT_J = Range(0.0, 1e9, "J", flag="--event-j")
EVENT_ABOVE_IDLE_J = Range(0.0, 1e9, "J", flag="--event-above-idle-j")
EVENT_S = Range(0.0, DAY_S, "s", low_open=True, flag="--event-s")
# the rest
MAX_SLOWDOWN = Range(0.0, 1e6, "(ratio)", low_open=True, flag="--max-slowdown")
COMPILE_TIMEOUT_S = Range(1.0, DAY_S, "s", flag="--timeout")
CALIB_COUNT = Range(1, 10 ** 7, integer=True, flag="--calib-count")

__all__ = ["Range", "check_fields"]
