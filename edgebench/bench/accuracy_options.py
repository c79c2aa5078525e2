"""The options of an accuracy run (``edgebench accuracy``), checked against their ranges before any board
is contacted; their own module because the run (:mod:`edgebench.bench.accuracy`) and its record
(:mod:`edgebench.bench.accuracy_record`) both read them."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from edgebench import ranges as R
from edgebench.data.perturb import SEVERITIES
from edgebench.errors import UsageError
from edgebench.ranges import check_fields
from edgebench.stats.accuracy import GATE_ON

KERNELS = ("xnnpack", "builtin", "reference")


@dataclass
class AccuracyOptions:
    kernels: str = "xnnpack"                  # model under test, on the board
    threads: int = 1
    delegate: Optional[str] = None
    baseline_on_board: bool = False
    baseline_kernels: str = "reference"
    baseline_threads: int = 1
    edge_cases: bool = False                  # built-in perturbation families
    edge_set: Optional[str] = None            # or a labelled .npz of edge cases
    families: Optional[tuple] = None          # subset of the built-in families
    severities: tuple = (1, 2, 3, 4, 5)
    seed: int = 0
    value_range: Optional[tuple] = None       # perturbations clip to it; default: observed
    max_drop_points: Optional[float] = 1.0
    max_ece: Optional[float] = 0.05
    max_edge_drop_points: Optional[float] = 3.0
    gate_on: str = "interval"                 # or "point": gates compare point estimates (labelled so)
    gates_set: tuple = ()                     # thresholds the user set (max_drop_points, ...): gates; else warnings
    calib_fraction: float = 0.5
    chunk_size: Optional[int] = None          # samples per infer request; default from CHUNK_BYTES
    data_options: dict = field(default_factory=dict)
    cpus: Optional[str] = None                # pin the board's local agent to these CPUs ("0", "2,3")
    labels: Optional[str] = None              # a labels file: class names, one per line, class 0 first

    def validate(self) -> None:
        check_fields(self, {"threads": R.THREADS, "baseline_threads": R.THREADS, "seed": R.SEED,
                            "max_drop_points": R.MAX_DROP, "max_ece": R.MAX_ECE,
                            "max_edge_drop_points": R.MAX_EDGE_DROP, "calib_fraction": R.CALIB_FRACTION,
                            "chunk_size": R.CHUNK})
        for name, k in (("--kernels", self.kernels), ("--baseline-kernels", self.baseline_kernels)):
            if k not in KERNELS:
                raise UsageError(f"unknown kernel set {k!r} for {name}", f"use one of {', '.join(KERNELS)}")
        if self.threads < 1 or self.baseline_threads < 1:
            raise UsageError("threads must be at least 1")
        if self.edge_cases and self.edge_set:
            raise UsageError("--edge-cases and --edge-set exclude each other", "choose one")
        if not self.severities or any(s not in SEVERITIES for s in self.severities):
            raise UsageError(f"severities must be among {', '.join(map(str, SEVERITIES))}, "
                             f"got {', '.join(map(str, self.severities)) or 'none'}")
        if len(set(self.severities)) != len(self.severities):
            raise UsageError("severities repeat")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise UsageError(f"seed must be an integer >= 0, got {self.seed!r}")
        if not 0.0 < self.calib_fraction < 1.0:
            raise UsageError(f"--calib-fraction must be in (0, 1), got {self.calib_fraction!r}")
        for name, v in (("--max-drop", self.max_drop_points), ("--max-ece", self.max_ece),
                        ("--max-edge-drop", self.max_edge_drop_points)):
            if v is not None and v != v:
                raise UsageError(f"{name} must be a number (inf to disable), got NaN")
        if self.gate_on not in GATE_ON:
            raise UsageError(f"--gate-on must be one of {', '.join(GATE_ON)}, got {self.gate_on!r}",
                             "interval (default): the upper 95% bound must be within the limit")
        if self.chunk_size is not None and self.chunk_size < 1:
            raise UsageError(f"chunk size must be at least 1, got {self.chunk_size}")


# ---------------------------------------------------------------- checks before any board is contacted
