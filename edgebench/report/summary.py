"""The one-screen summary of a set of runs (level 1, pure): the answer to forward, before the long claims.

One row per model and board: the headline figure with its interval (a latency run's median end to end;
else top-1, energy per inference), the accuracy delta against the FP32 baseline with its interval,
peak memory and, on a microcontroller, the fit (flash and RAM against the board's), and ``check``'s
verdicts on the row's runs as icons. Under it the warnings of all runs grouped by code, ranked by
what they change, each remedy once (:mod:`edgebench.report.warnings`); acknowledged ones folded.
``report`` (HTML, Markdown) puts it on top; ``bench A B`` and ``demo`` print it at the end.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from edgebench.report import format as fmt
from edgebench.report.warnings import acknowledged_line, fold
from edgebench.results.figures.device import FitFigure, MemoryFigure
from edgebench.results.kinds import kind_of
from edgebench.results.model import RunResult

PASS, WARN, FAIL = "pass", "warn", "fail"
#: a verdict -> its icon in HTML/Markdown and on a terminal.
ICONS = {PASS: "✅", WARN: "⚠️", FAIL: "❌"}
TERMINAL_ICONS = {PASS: "✓", WARN: "⚠", FAIL: "✗"}
COLUMNS = ("model", "board", "label", "headline [95% CI]", "accuracy Δ [95% CI]", "memory / fit", "check")


def size(nbytes) -> str:
    """Bytes in KiB/MiB (binary, as memory is sized), ``–`` for None."""
    if nbytes is None:
        return "–"
    n = float(nbytes)
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} B"


def _memory(mem: Union[MemoryFigure, Mapping[str, Any], None]) -> MemoryFigure:
    """``extra.memory`` as its figure (a dict, as :mod:`edgebench.bench.memory` computes it, is read as one)."""
    if isinstance(mem, MemoryFigure):
        return mem
    return MemoryFigure.model_validate(dict(mem)) if mem else MemoryFigure()


def memory_text(mem: Union[MemoryFigure, Mapping[str, Any], None], short: bool = False) -> Optional[str]:
    """``extra.memory`` in a few words: a process's peak RSS, or a microcontroller's arena, scratch and
    model (``short``: the arena only, a table cell)."""
    m = _memory(mem)
    if m.peak_rss_bytes is not None:
        return f"peak RSS {size(m.peak_rss_bytes)}"
    if m.rss_bytes is not None:
        return f"RSS {size(m.rss_bytes)}"
    if m.arena_bytes is None:
        return None
    parts = [f"arena {size(m.arena_bytes)}"]
    if short:
        return parts[0]
    if m.scratch_bytes:
        parts.append(f"scratch {size(m.scratch_bytes)}")
    parts.append(f"model {size(m.model_bytes)}")
    return ", ".join(parts)


def _fitting(checks: List[FitFigure]) -> Optional[List[FitFigure]]:
    """The sizes of the first placement (ram, flash) in which every size fits (those of both included);
    None when the model fits in none."""
    def of(p: Optional[str]) -> List[FitFigure]:
        return [c for c in checks if c.placement in (p, "both", "", None)]

    placements = sorted({c.placement for c in checks if c.placement not in ("both", "", None)}) or ["ram"]
    return next((of(p) for p in placements if all(c.fits for c in of(p))), None)


def fit_text(mem: Union[MemoryFigure, Mapping[str, Any], None], short: bool = False) -> Optional[str]:
    """The fit sizes of a microcontroller run: ``fits: RAM 21.0 KiB of 192 KiB (11%); ...``, each size once;
    ``short``: ``fits (RAM 11%)``, the fullest size only (a table cell)."""
    checks = [c for c in _memory(mem).fit or [] if c.have_bytes]
    if not checks:
        return None
    fitting = _fitting(checks)
    verdict = "fits" if fitting is not None else "DOES NOT FIT"

    def share(c: FitFigure) -> float:
        return 100.0 * (c.need_bytes or 0) / (c.have_bytes or 1)

    if short:
        full = max(fitting or checks, key=share)
        return f"{verdict} ({full.what} {share(full):.0f}%)"
    out, seen = [], set()
    for c in checks:
        if c.what not in seen:
            seen.add(c.what)
            out.append(f"{c.what} {size(c.need_bytes)} of {size(c.have_bytes)} ({share(c):.0f}%)")
    return f"{verdict}: " + "; ".join(out)


@dataclass
class Row:
    """One model on one board, from all its runs among those summarised."""

    model: str
    board: str
    label: str
    runs: list = field(default_factory=list)
    headline: str = "–"
    accuracy: str = "–"
    memory: str = "–"
    verdicts: dict = field(default_factory=dict)    # pass/warn/fail -> [rule ids] on this row's runs

    def cells(self, icons: dict = ICONS, names: bool = True) -> list:
        return [self.model, self.board, self.label, self.headline, self.accuracy, self.memory,
                self.check(icons, names)]

    def check(self, icons: dict = ICONS, names: bool = True, escape=str) -> str:
        """``❌ gates · ⚠️ single-run, cold-start · ✅ 9``: failed and warned rules by name (``names=False``:
        counted, for a narrow terminal), passes counted; ``escape`` applied to the names (``icons`` are
        put as they are: HTML may be given)."""
        parts = [f"{icons[v]} {escape(', '.join(self.verdicts[v])) if names else len(self.verdicts[v])}"
                 for v in (FAIL, WARN) if self.verdicts.get(v)]
        if self.verdicts.get(PASS):
            parts.append(f"{icons[PASS]} {len(self.verdicts[PASS])}")
        return " · ".join(parts) or "–"

    def to_dict(self) -> dict:
        return {"model": self.model, "board": self.board, "label": self.label, "runs": list(self.runs),
                "headline": self.headline, "accuracy": self.accuracy, "memory": self.memory,
                "verdicts": {k: list(v) for k, v in self.verdicts.items()}}


@dataclass
class Summary:
    rows: list
    warnings: list          # WarningGroup, not acknowledged, ranked
    acknowledged: list      # WarningGroup, acknowledged
    answers: list = field(default_factory=list)   # one-line results (comparisons) above the table

    @property
    def acknowledged_line(self) -> Optional[str]:
        return acknowledged_line({g.code: g.acknowledged for g in self.acknowledged})

    def rules(self, verdict: str) -> list:
        """``[(rule, [model on board, ...])]`` of the rules with ``verdict`` on some row, in first-seen order."""
        out: dict = {}
        for row in self.rows:
            for rule in row.verdicts.get(verdict) or []:
                out.setdefault(rule, []).append(f"{row.model} on {row.board}")
        return list(out.items())

    def to_dict(self) -> dict:
        return {"answers": list(self.answers), "rows": [r.to_dict() for r in self.rows],
                "warnings": [g.to_dict() for g in self.warnings],
                "acknowledged": [g.to_dict() for g in self.acknowledged]}


def latency_headline(r: RunResult) -> Optional[str]:
    e2e = r.stage("e2e")
    if not e2e.median_s:
        return None
    ci = fmt.duration_range(e2e.ci_low_s, e2e.ci_high_s) if e2e.ci_low_s is not None else None
    return f"e2e {fmt.duration(e2e.median_s)}" + (f" [{ci}]" if ci else "")


def accuracy_figures(r: RunResult) -> Optional[Tuple[str, str]]:
    """``(top-1 text, delta text)`` of an accuracy run."""
    a = r.extra.accuracy
    t1, p = a.accuracy.candidate.top1, a.paired
    if t1.accuracy is None:
        return None
    top1 = f"top-1 {fmt.percent(t1.accuracy)}" + (
        f" [{fmt.percent(t1.ci_low)}–{fmt.percent(t1.ci_high)}]" if t1.ci_low is not None else "")
    delta = "–"
    if p.diff_points is not None:
        delta = f"{p.diff_points:+.2f} pt" + (
            f" [{p.diff_ci_low_points:+.2f}, {p.diff_ci_high_points:+.2f}]"
            if p.diff_ci_low_points is not None and p.diff_ci_high_points is not None else "")
    return top1, delta


def energy_headline(r: RunResult) -> Optional[str]:
    ev = r.power.inference
    if not ev.energy_j:
        return None
    lo, hi = ev.ci_low_j, ev.ci_high_j
    return f"{fmt.count(round(ev.energy_j * 1e6))} µJ/inference" + (
        f" [{lo * 1e6:,.0f}–{hi * 1e6:,.0f}]" if lo is not None and hi is not None else "")


def _row_key(r: RunResult) -> Tuple[Optional[str], Optional[str]]:
    return (r.model.sha256 or r.model.name, r.board.name)


def summarise(runs: Sequence[RunResult], report: Any = None, acks: Optional[dict] = None, answers: tuple = ()) -> Summary:
    """The summary of ``runs`` (RunResult objects), with ``report`` (their CheckReport, optional) and the
    acknowledgements of their runs folder (``acks``: code -> reason)."""
    rows: Dict[Tuple[Optional[str], Optional[str]], Row] = {}
    for r in runs:
        key = _row_key(r)
        if key not in rows:
            name = str(r.model.name)
            prec = str(r.model.precision or "")
            rows[key] = Row(f"{name} {prec.upper()}".strip() if prec and prec.lower() not in name.lower() else name,
                            str(r.board.name), r.label)
        row = rows[key]
        row.runs.append(r.run_id)
        if r.label not in row.label.split("/"):
            row.label += f"/{r.label}"
        kind = kind_of(r)
        lat = latency_headline(r) if kind.latency else None
        acc = accuracy_figures(r) if kind.accuracy else None
        energy = energy_headline(r) if kind.energy else None
        if lat and (row.headline == "–" or kind.repeats):
            row.headline = lat
        elif energy and row.headline == "–":
            row.headline = energy
        if acc:
            row.accuracy = acc[1]
            if row.headline == "–":
                row.headline = acc[0]
        mem = r.extra.memory
        text = ", ".join(t for t in (memory_text(mem, short=True), fit_text(mem, short=True)) if t)
        if text and row.memory == "–":
            row.memory = text
    if report is not None:
        for row in rows.values():
            ids = set(row.runs)
            for v in report.verdicts:
                if v.verdict in (PASS, WARN, FAIL) and ids & set(v.runs or []):
                    row.verdicts.setdefault(v.verdict, []).append(v.rule)
    groups, acked = fold(runs, acks)
    return Summary(list(rows.values()), groups, acked, list(answers))


__all__ = ["COLUMNS", "ICONS", "TERMINAL_ICONS", "Row", "Summary", "accuracy_figures", "fit_text", "memory_text",
           "size", "summarise"]
