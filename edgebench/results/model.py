"""The stored-result data model (level 0): no I/O here but to/from dict.

A :class:`RunResult` is one benchmark run and everything needed to judge it:
what ran (model, runtime, kernels, threads), where (board and its system
description), how (scenario, what the timing includes, warm-up, stopping rule),
in what state (thermal at start and end, power boundary) and the figures, each
block labelled ``measured``, ``emulated``, ``simulated`` or ``estimated``.

Schema history (``schema_version``):

* 1 (edgebench 0.1): first version. Sections as documented in
  ``docs/results-schema.md``.
* 2 (edgebench 0.2): bench runs are K repeats; latency intervals combine within- and
  between-run variation; throughput is achieved, not 1/median; a ``repeat`` sample column.
* 3 (edgebench 0.2, additive): the model of variation (``edgebench.stats.variation``): latency
  figures carry ``se_log``, ``df``, ``repeat_variation``, ``session_variation``,
  ``session_differs_p``, ``repeats_disagree_p``, ``regimes``, and ``per_run`` entries their
  ``se_log``/``df``; throughput its interval (``ci_low_per_s``/``ci_high_per_s``, ``per_repeat``,
  ``device_busy_per_s``; emulated boards ``host_limited_per_s``); accuracy validation rows
  ``set_by``; energy figures ``resolved``. Version 2 files lack them (readers treat them as absent).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from edgebench.errors import ResultError

SCHEMA_VERSION = 3
SCHEMA_HISTORY = {1: "edgebench 0.1: first version",
                  2: "edgebench 0.2: repeats, run- and dependence-aware intervals, achieved throughput",
                  3: "edgebench 0.2: the model of variation (pooled between-repeat and between-invocation "
                     "components), throughput intervals, gates set by the user"}
FORMAT = "edgebench-run"
LABELS = ("measured", "emulated", "simulated", "estimated")
STATUSES = ("running", "complete", "incomplete", "failed")
STAGES = ("e2e", "prep", "set", "invoke", "get")
STAGE_MEANING = {
    "prep": "input preparation (float to input-tensor type, quantization for INT8)",
    "set": "transfer into the interpreter (set_tensor)",
    "invoke": "interpreter invoke (the kernels)",
    "get": "output read and dequantization",
    "e2e": "end to end: preparation + transfer + invoke + output read",
}


@dataclass
class RunResult:
    """One benchmark run. Every section is a plain JSON-able dict or list."""

    run_id: str
    created_utc: str
    kind: str = "bench"                      # what produced it: bench (later: soak, sweep, ...)
    status: str = "running"
    status_reason: str | None = None
    label: str = "measured"                  # of every figure in this run
    edgebench_version: str = ""
    host: dict = field(default_factory=dict)       # the computer that ran edgebench
    model: dict = field(default_factory=dict)      # path, name, sha256, bytes, precision, bits, io, sidecar
    runtime: dict = field(default_factory=dict)    # name, version, kernels, op_resolver, threads, delegate
    board: dict = field(default_factory=dict)      # profile name, title, transport, system description
    scenario: dict = field(default_factory=dict)   # name, rate_hz, batch, inputs
    timing: dict = field(default_factory=dict)     # clock, stages and what each includes
    settings: dict = field(default_factory=dict)   # stop rule, seed
    cold_start: dict = field(default_factory=dict) # load_s, first_inference_s
    warmup: dict = field(default_factory=dict)     # n, duration_s, method
    thermal: dict = field(default_factory=dict)    # start, end snapshots; available
    power: dict = field(default_factory=dict)      # measured?, boundary, instrument
    latency: dict = field(default_factory=dict)    # stage -> LatencySummary dict
    throughput: dict = field(default_factory=dict) # per_s, definition
    stopping: dict = field(default_factory=dict)   # target_reached, reason, n, elapsed_s
    warnings: list = field(default_factory=list)   # {code, message, remedy}
    agent: dict = field(default_factory=dict)      # agent version, rss
    extra: dict = field(default_factory=dict)      # scenario-specific figures (fixed-rate lateness...)
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        return {"format": FORMAT, **d}

    @classmethod
    def from_dict(cls, d: dict, source: str = "<dict>") -> "RunResult":
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise ResultError(f"{source}: not an edgebench run (format {d.get('format')!r})"
                              if isinstance(d, dict) else f"{source}: not a JSON object",
                              "point at a run folder written by `edgebench bench`")
        version = d.get("schema_version")
        if version not in SCHEMA_HISTORY:
            raise ResultError(f"{source}: schema_version {version!r} is not known to edgebench "
                              f"(knows {sorted(SCHEMA_HISTORY)})", "upgrade edgebench to read it")
        names = {f.name for f in dataclasses.fields(cls)}
        missing = [k for k in ("run_id", "created_utc") if k not in d]
        if missing:
            raise ResultError(f"{source}: missing keys {missing}", "the run.json is damaged")
        unknown = set(d) - names - {"format"}
        kwargs: dict[str, Any] = {k: v for k, v in d.items() if k in names}
        result = cls(**kwargs)
        if unknown:
            result.extra = {**result.extra, "unknown_keys": sorted(unknown)}
        if result.status not in STATUSES:
            raise ResultError(f"{source}: status {result.status!r} not one of {STATUSES}")
        if result.label not in LABELS:
            raise ResultError(f"{source}: label {result.label!r} not one of {LABELS}")
        return result

    @property
    def complete(self) -> bool:
        return self.status == "complete"


def failed_gates(result) -> list:
    """The gates a stored run failed (docs/check.md, "Gates"): compression thresholds the user set
    (``extra.accuracy.validation.failed``) and a board profile's bit-exact promise
    (``extra.verify.gate``). A default threshold the user never set is a warning, not listed here."""
    extra = getattr(result, "extra", None) or {}
    out = list((((extra.get("accuracy") or {}).get("validation") or {}).get("failed")) or [])
    gate = (extra.get("verify") or {}).get("gate") or {}
    if gate.get("applies") and gate.get("passed") is False:
        out.append("bit-exact outputs (verify)")
    return out


def refuse_mixed_labels(*results) -> str:
    """The common label of ``results``; ResultError when they mix measured, emulated, simulated
    or estimated figures (a simulated figure must never be compared with a measured one)."""
    labels = {getattr(r, "label", None) or (r.get("label") if isinstance(r, dict) else None) for r in results}
    if len(labels) > 1:
        raise ResultError(f"refusing to compare {' with '.join(sorted(str(x) for x in labels))} figures",
                          "compare runs of the same kind only (a simulated board is not a measurement)")
    return labels.pop() if labels else "measured"
