"""The conditions of a run (level 1, pure): what must travel with every figure it holds, as rows
(``[(condition, value)]``) that the HTML page tabulates one column per run and Markdown alike."""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from edgebench.report import format as fmt
from edgebench.report.sections.base import RunData, table
from edgebench.results.conditions import SystemSection
from edgebench.results.figures.thermal import Snapshot
from edgebench.results.model import RunResult


def governor(sysd: SystemSection) -> Optional[str]:
    """The CPU frequency governors of the board's policies (``schedutil``, ``performance/powersave``)."""
    policies = sysd.cpufreq.policies or {}
    return "/".join(sorted({p.governor for p in policies.values() if p.governor})) or None


def _hottest(s: Snapshot) -> str:
    v = [x for x in (s.temps_c or {}).values() if isinstance(x, (int, float))]
    return f"{max(v):.0f} °C" if v else "?"


def thermal(r: RunResult) -> str:
    t = r.thermal
    start, end = t.start, t.end
    if not (t.available or start.available or end.available):
        return "unknown (no thermal sensor)"
    now = sorted(k[:-4] for k, v in (end.throttled or {}).items() if k.endswith("_now") and v)
    return f"{_hottest(start)} → {_hottest(end)}" + (f", throttled ({', '.join(now)})" if now else ", not throttled")


def conditions(r: RunResult) -> List[Tuple[str, str]]:
    """``[(condition, value)]`` of a run: what must travel with every figure it holds."""
    m, rt, b, sc = r.model, r.runtime, r.board, r.scenario
    sysd = b.system
    # the collectors' own output (docs/agent-protocol.md): free-form dicts
    cpu_d, osd, board_d = sysd.cpu or {}, sysd.os or {}, sysd.board or {}
    inp = sc.inputs
    cpu = cpu_d.get("model_name") or board_d.get("model") or cpu_d.get("hardware")
    if cpu and cpu_d.get("logical_cpus"):
        cpu = f"{cpu} ({cpu_d['logical_cpus']} CPUs)"
    bits = (f"weights {m.weights_bits}-bit, activations {m.activations_bits}-bit" if m.weights_bits else None)
    pinned = r.settings.agent_cpus
    shape = "×".join(str(d) for d in inp.shape or [])
    inputs = None
    if inp:
        inputs = f"{shape} from {inp.source} ({inp.count})"
        if inp.sha256:
            inputs += f", sha256 {inp.sha256[:12]}"
    os_name = osd.get("os_pretty_name") or osd.get("system")
    if osd.get("kernel"):
        os_name = f"{os_name}, kernel {osd['kernel']}" if os_name else f"kernel {osd['kernel']}"
    power = r.power
    rows = [
        ("run", f"{r.run_id} ({r.kind}, {r.status}{', ' + r.status_reason if r.status_reason else ''})"),
        ("created (UTC)", r.created_utc),
        ("label", r.label),
        ("model", f"{m.name} (sha256 {str(m.sha256)[:12]}, {fmt.count(m.bytes)} bytes)"),
        ("precision", f"{m.precision}" + (f" ({bits})" if bits else "")),
        ("runtime", " ".join(str(x) for x in (rt.name, rt.version) if x) or None),
        ("kernels", rt.kernels),
        ("threads", rt.threads),
        ("delegate", rt.delegate or "none"),
        ("board", f"{b.title or b.name} ({b.name})"),
        ("CPU", cpu),
        ("pinning", f"agent pinned to CPU {pinned}" if pinned not in (None, "") else "not pinned"),
        ("governor", governor(sysd) or "unknown"),
        ("OS", os_name),
        ("thermal state", thermal(r)),
        ("scenario", sc.name),
        ("inputs", inputs),
        ("timing includes", r.timing.e2e_includes),
        ("power", power.label or ("measured" if power.measured else "not measured")),
    ]
    return [(k, "–" if v in (None, "") else str(v)) for k, v in rows]


def conditions_table(runs: Sequence[RunData]) -> str:
    """The conditions of ``runs`` as one HTML table, a column per run, differing rows marked."""
    cols = [conditions(d.result) for d in runs]
    names = [k for k, _ in cols[0]]
    rows = [[name] + [c[i][1] for c in cols] for i, name in enumerate(names)]

    def differs(i: int, row: Sequence[object]) -> str:
        return "differs" if len(runs) > 1 and names[i] not in ("run", "created (UTC)") and len(set(row[1:])) > 1 else ""
    head = ["condition"] + [f"{d.result.run_id}" for d in runs]
    note = "<p class=small>highlighted: conditions that differ between the runs</p>" if len(runs) > 1 else ""
    return '<div class=wide>' + table(head, rows, num_from=99, row_class=differs) + "</div>" + note


__all__ = ["conditions", "conditions_table", "governor", "thermal"]
