"""Warnings people read (level 1, pure): ranked by what they change, folded across runs, acknowledged.

Every run keeps its warnings in run.json (``{code, message, remedy}``). What prints them asks this module:

* :data:`RANKS`: what a code changes, most first — a failed gate, a figure that is not what it seems
  (emulated, simulated, estimated), a figure that is incomplete, an uncertainty that changes a
  conclusion (single session, target not reached), then conditions and noise;
* :func:`fold`: one :class:`WarningGroup` per code across runs (the runs it concerns, the first message,
  the remedy said once), with a failed gate and a non-measured label as warnings of their own, ranked;
* acknowledged codes (:mod:`edgebench.results.acks`) come back apart, for one folded line.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Tuple

from edgebench.results.model import RunResult, RunWarning, failed_gates

GATE, LABEL, INCOMPLETE, UNCERTAIN, CONDITIONS = range(5)
#: rank -> what warnings of that rank change (a heading for the grouped list).
TIERS = {GATE: "changes the verdict", LABEL: "not a real board's measurement", INCOMPLETE: "a figure is incomplete",
         UNCERTAIN: "the interval or the comparison is weaker than it looks", CONDITIONS: "conditions and noise"}
#: warning code -> rank (codes not listed are CONDITIONS).
RANKS = {
    **dict.fromkeys(("gate-failed", "not-bit-exact", "default-threshold-exceeded", "gate-unresolved",
                     "baseline-provenance", "class-names-ignored", "unchecked-link"), GATE),
    **dict.fromkeys(("label-emulated", "label-simulated", "label-estimated", "mixed-labels", "energy-estimated",
                     "simulated-ignores-config", "no-energy"), LABEL),
    **dict.fromkeys(("run-incomplete", "run-json-damaged", "journal-damaged", "point-failed",
                     "steady-state-not-reached", "rate-not-sustained", "duty-not-met", "no-energy-events",
                     "cool-down-timeout", "model-id-mismatch", "sum-differs", "class-order", "window-too-short"),
                   INCOMPLETE),
    **dict.fromkeys(("single-session", "session-differs", "target-not-reached", "repeats-disagree", "single-run",
                     "difference-not-resolvable", "difference-borderline", "small-slice", "regimes",
                     "few-effective-samples", "short-windows"), UNCERTAIN),
}
_LABELS = {"emulated": ("figures count emulated time (QEMU instructions or a model of the device), not a real "
                        "board's speed", "measure on the real board before quoting a speed"),
           "simulated": ("figures come from a physics model of the board, not a measurement",
                         "measure on the real board before quoting a figure"),
           "estimated": ("figures are datasheet arithmetic, not a measurement",
                         "measure with a power meter (docs/power.md) before quoting energy")}


def rank(code: str) -> int:
    return RANKS.get(code, CONDITIONS)


@dataclass
class WarningGroup:
    """One warning code across the runs it concerns."""

    code: str
    rank: int
    message: str                  # the first run's message (the others in ``messages``)
    remedy: str
    runs: list = field(default_factory=list)      # run ids, in the order given
    messages: list = field(default_factory=list)
    acknowledged: Optional[str] = None            # the reason, when the code is acknowledged

    @property
    def tier(self) -> str:
        return TIERS[self.rank]

    def to_dict(self) -> dict:
        return {"code": self.code, "rank": self.rank, "tier": self.tier, "message": self.message,
                "remedy": self.remedy, "runs": list(self.runs), "acknowledged": self.acknowledged}


def run_warnings(result: RunResult) -> List[RunWarning]:
    """The run's warnings with a failed gate and a non-measured label first, as warnings of their own."""
    out = []
    gates = failed_gates(result)
    if gates:
        out.append(RunWarning(code="gate-failed", message="failed: " + "; ".join(str(g) for g in gates),
                              remedy="the run does not meet the limits set: fix the model or the board, or revise "
                                     "them"))
    if result.label in _LABELS:
        what, remedy = _LABELS[result.label]
        out.append(RunWarning(code=f"label-{result.label}", message=what, remedy=remedy))
    return out + list(result.warnings)


def foldable(acks: Optional[dict]) -> dict:
    """The acknowledgements that may fold a warning: never a code that changes the verdict (a failed
    gate, outputs not bit-exact...), whatever a hand-edited acknowledged.json says."""
    return {code: why for code, why in (acks or {}).items() if rank(code) != GATE}


def fold(results: Iterable[RunResult], acks: Optional[dict] = None) -> Tuple[List[WarningGroup], List[WarningGroup]]:
    """``(groups, acknowledged)``: one :class:`WarningGroup` per code over ``results``, ranked (rank, then
    the number of runs it concerns, then first seen); the acknowledged codes (``acks``: code -> reason)
    apart, in the same order (:func:`foldable`)."""
    acks = foldable(acks)
    groups: Dict[str, WarningGroup] = {}
    for r in results:
        for w in run_warnings(r):
            code = str(w.code or "warning")
            g = groups.get(code)
            if g is None:
                g = groups[code] = WarningGroup(code, rank(code), str(w.message or ""), str(w.remedy or ""),
                                                acknowledged=acks.get(code))
            if r.run_id not in g.runs:
                g.runs.append(r.run_id)
                g.messages.append(str(w.message or ""))
    seen = {code: i for i, code in enumerate(groups)}
    ordered = sorted(groups.values(), key=lambda g: (g.rank, -len(g.runs), seen[g.code]))
    return [g for g in ordered if g.acknowledged is None], [g for g in ordered if g.acknowledged is not None]


def acknowledged_line(acked: dict) -> Optional[str]:
    """``2 acknowledged warnings: no-thermal-source (no sensor on this VM), single-session`` for ``acked``
    (code -> reason, in the order to print); None for none."""
    if not acked:
        return None
    parts = [code + (f" ({reason})" if reason else "") for code, reason in acked.items()]
    return f"{len(acked)} acknowledged warning{'s' if len(acked) != 1 else ''}: {', '.join(parts)}"


__all__ = ["RANKS", "TIERS", "WarningGroup", "acknowledged_line", "fold", "foldable", "rank", "run_warnings"]
