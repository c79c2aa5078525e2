"""What a latency benchmark is asked to do (level 4): :class:`BenchOptions`, checked against the ranges
the command line checks too (:mod:`edgebench.ranges`)."""
from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Optional

from edgebench import ranges as R
from edgebench.errors import UsageError
from edgebench.ranges import check_fields

SCENARIOS = ("single-stream", "offline", "fixed-rate")
KERNELS = ("xnnpack", "builtin", "reference")


@dataclass
class RuntimeOptions:
    """How the model runs on the board, as the measuring verbs' options (bench, energy, soak) take it: the
    kernel set, threads and delegate, the inputs, and the CPUs a local agent is pinned to."""
    kernels: str = "xnnpack"
    threads: int = 1
    delegate: Optional[str] = None
    inputs: Optional[str] = None          # .npy/.npz path; None: seeded random in range
    input_range: Optional[tuple] = None
    seed: int = 0
    cpus: Optional[str] = None            # pin a local agent to these CPUs ("0", "2,3")

    def runtime(self) -> dict:
        """These fields by name: what a verb that measures through another's options hands on."""
        return {f.name: getattr(self, f.name) for f in fields(RuntimeOptions)}


@dataclass
class BenchOptions(RuntimeOptions):
    scenario: str = "single-stream"
    rate_hz: Optional[float] = None
    batch: int = 1
    input_count: int = 64
    target_rel_ci: float = 0.01
    min_samples: int = 200
    min_time_s: float = 1.0               # per repeat
    max_time_s: float = 20.0              # whole run, all repeats
    repeat: int = 3                       # independent runs (fresh process and model load each)
    max_repeats: int = 10
    min_warmup: int = 10
    chunk_time_s: float = 0.25
    sessions: int = 10                    # combine up to this many invocations (this one included); 1: this only
    run_kind: str = "bench"               # the run.json kind from the start: "energy" when energy measures with it

    def validate(self) -> None:
        check_fields(self, RANGES)
        if self.scenario not in SCENARIOS:
            raise UsageError(f"unknown scenario {self.scenario!r}", f"use one of {', '.join(SCENARIOS)}")
        if self.kernels not in KERNELS:
            raise UsageError(f"unknown kernel set {self.kernels!r}", f"use one of {', '.join(KERNELS)}")
        if self.threads < 1:
            raise UsageError(f"threads must be at least 1, got {self.threads}")
        if self.rate_hz is not None and not (math.isfinite(self.rate_hz) and self.rate_hz > 0):
            raise UsageError(f"--rate must be a positive finite number of requests per second, got {self.rate_hz!r}",
                             "e.g. --rate 50")
        if self.scenario == "fixed-rate" and self.rate_hz is None:
            raise UsageError("the fixed-rate scenario needs a positive --rate", "e.g. --rate 50")
        if self.rate_hz is not None and self.rate_hz * self.max_time_s < 2:
            raise UsageError(f"--rate {self.rate_hz:g}/s sends fewer than 2 requests within --max-time "
                             f"{self.max_time_s:g} s",
                             f"raise --max-time to at least {2 / self.rate_hz:g} s, or --rate")
        if self.scenario != "fixed-rate" and self.rate_hz is not None:
            raise UsageError(f"--rate applies to --scenario fixed-rate only (scenario is {self.scenario})",
                             "add --scenario fixed-rate, or drop --rate")
        if self.repeat < 1 or self.max_repeats < self.repeat:
            raise UsageError(f"--repeat must be at least 1 and at most --max-repeats ({self.max_repeats}), "
                             f"got {self.repeat}")
        for name in ("target_rel_ci", "min_time_s", "max_time_s", "chunk_time_s"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise UsageError(f"{name.replace('_rel_ci', '').replace('_s', '').replace('_', '-')} must be a "
                                 f"positive finite number, got {value!r}")
        if self.max_time_s < self.min_time_s:
            raise UsageError(f"--max-time ({self.max_time_s:g} s) is shorter than --min-time ({self.min_time_s:g} s)")
        if self.batch < 1:
            raise UsageError(f"batch must be at least 1, got {self.batch}")
        if not isinstance(self.sessions, int) or self.sessions < 1:
            raise UsageError(f"--sessions must be a whole number of at least 1, got {self.sessions!r}",
                             "1 uses this invocation only; the default combines up to 10")


#: the ranges of BenchOptions' numeric fields (edgebench.ranges: the CLI checks the same)
RANGES = {"threads": R.THREADS, "rate_hz": R.RATE_HZ, "batch": R.BATCH, "input_count": R.INPUT_COUNT,
          "seed": R.SEED, "target_rel_ci": R.TARGET, "min_samples": R.MIN_SAMPLES, "min_time_s": R.MIN_TIME_S,
          "max_time_s": R.MAX_TIME_S, "repeat": R.REPEAT, "max_repeats": R.MAX_REPEATS,
          "min_warmup": R.MIN_WARMUP, "chunk_time_s": R.CHUNK_TIME_S, "sessions": R.SESSIONS}


__all__ = ["RuntimeOptions", "BenchOptions", "RANGES", "SCENARIOS", "KERNELS"]
