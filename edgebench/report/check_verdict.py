"""`edgebench check`'s verdicts (level 1, pure): what a rule returns, the report of all rules, and how a
rule about each run alone is summarised over the runs (the worst verdict, with every run's evidence).

The rules themselves are in :mod:`edgebench.report.check_timing` (what the timing holds and how it
varies) and :mod:`edgebench.report.check_figures` (what is compared and how it is stated); the list of
rules and :func:`edgebench.report.check.check` in :mod:`edgebench.report.check`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from edgebench.results.figures.accuracy import AccuracyFigure
from edgebench.results.figures.latency import LatencyFigure
from edgebench.results.model import RunResult

PASS, WARN, FAIL, NA = "pass", "warn", "fail", "not applicable"
VERDICTS = (PASS, WARN, FAIL, NA)
SEVERITY = {NA: 0, PASS: 1, WARN: 2, FAIL: 3}
QUANTIZED = ("int8", "uint8", "dynamic-range", "mixed", "fp16")
HOEFLER = "Hoefler & Belli, SC15"

# what a per-run check returns: (verdict, evidence, remedy), or None where the rule does not apply to the run
Outcome = Optional[Tuple[str, str, Optional[str]]]


@dataclass
class Verdict:
    """One rule's verdict over the runs checked."""

    rule: str            # stable id, e.g. "single-run"
    title: str           # the way to fool the masses it guards against
    verdict: str         # pass | warn | fail | not applicable
    evidence: str        # what in the runs led to the verdict
    remedy: Optional[str] = None
    source: str = ""
    runs: list = field(default_factory=list)   # run ids the evidence comes from

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class CheckReport:
    runs: list
    verdicts: List[Verdict]

    @property
    def counts(self) -> Dict[str, int]:
        return {v: sum(1 for x in self.verdicts if x.verdict == v) for v in VERDICTS}

    @property
    def failed(self) -> bool:
        return any(v.verdict == FAIL for v in self.verdicts)

    def to_dict(self) -> dict:
        return {"format": "edgebench-check", "runs": self.runs, "counts": self.counts,
                "verdicts": [v.to_dict() for v in self.verdicts]}


def worse(a: str, b: str) -> str:
    """The more severe of two verdicts."""
    return a if SEVERITY[a] >= SEVERITY[b] else b


def e2e(r: RunResult) -> LatencyFigure:
    """The run's end-to-end latency figure (empty when it has none)."""
    return r.stage("e2e")


def has_latency(r: RunResult) -> bool:
    return bool(e2e(r).median_s)


def acc(r: RunResult) -> AccuracyFigure:
    """The run's accuracy comparison (empty, so falsy, when it has none)."""
    return r.extra.accuracy


def per_run(rule: str, title: str, source: str, check: Callable[[Any], Outcome], runs: list,
            remedy_default: Optional[str] = None) -> Verdict:
    """Evaluate ``check(run) -> (verdict, evidence, remedy) | None`` per run; worst wins."""
    got = [(r, v) for r, v in ((r, check(r)) for r in runs) if v is not None]
    if not got:
        return Verdict(rule, title, NA, "no run this rule applies to", None, source, [])
    worst = max(SEVERITY[v[0]] for _, v in got)
    verdict = next(k for k, s in SEVERITY.items() if s == worst)
    evidence = "; ".join(f"{r.run_id}: {v[1]}" for r, v in got) if len(got) > 1 else got[0][1][1]
    remedies = [v[2] for _, v in got if v[0] == verdict and v[2]]
    return Verdict(rule, title, verdict, evidence, remedies[0] if remedies else remedy_default, source,
                   [r.run_id for r, _ in got])


__all__ = ["Verdict", "CheckReport", "Outcome", "PASS", "WARN", "FAIL", "NA", "VERDICTS", "SEVERITY", "QUANTIZED",
           "HOEFLER", "worse", "e2e", "has_latency", "acc", "per_run"]
