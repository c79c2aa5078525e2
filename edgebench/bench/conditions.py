"""The recorded conditions of a run (level 4): what a comparison reports when they differ, what
makes a ratio meaningless, and what makes two runs sessions of one measurement."""
from __future__ import annotations

from edgebench.results.model import RunResult


def short_value(v) -> str:
    """A sha256 as its first 12 hex digits (enough to tell two apart in a sentence)."""
    text = str(v)
    return text[:12] + "…" if len(text) == 64 and all(c in "0123456789abcdef" for c in text) else text


def hardware_cpu(r: RunResult):
    """The CPU (or board) model a run was measured on (``board.system.cpu`` and ``.board`` are the
    collectors' free-form descriptions: plain dicts)."""
    system = r.board.system
    return (system.cpu or {}).get("model_name") or (system.board or {}).get("model")


def _governors(r: RunResult):
    pol = r.board.system.cpufreq.policies or {}
    govs = sorted({p.governor for p in pol.values() if p.governor})
    return "/".join(govs) or None


def _thermal_state(r: RunResult):
    t = r.thermal
    if not t.available:
        return "unknown (no sensor)"
    thr = t.end.throttled or {}
    now = sorted(k[:-4] for k, v in thr.items() if k.endswith("_now") and v)
    return "throttled (" + ", ".join(now) + ")" if now else "not throttled"


# (condition, getter): every recorded condition of a run besides the model; a comparison reports those
# that differ, and refuses those in REFUSED (the ratio would not be about the two models at all)
CONDITIONS = (
    ("runtime", lambda r: r.runtime.name),
    ("runtime version", lambda r: r.runtime.version),
    ("kernels", lambda r: r.runtime.kernels),
    ("threads", lambda r: r.runtime.threads),
    ("delegate", lambda r: r.runtime.delegate),
    ("board", lambda r: r.board.name),
    ("CPU model", hardware_cpu),
    ("pinning (settings.agent_cpus)", lambda r: r.settings.agent_cpus),
    ("governor", _governors),
    ("thermal state", _thermal_state),
    ("scenario", lambda r: r.scenario.name),
    ("inputs sha256", lambda r: r.scenario.inputs.sha256),
    ("inputs shape", lambda r: r.scenario.inputs.shape),
    ("inputs source", lambda r: r.scenario.inputs.source),
    ("model precision", lambda r: r.model.precision),
    ("batch", lambda r: r.scenario.batch),
)

#: conditions under which a ratio of two runs is meaningless (other hardware, another kind of load)
REFUSED = ("board", "CPU model", "scenario", "batch")


def condition_differences(a: RunResult, b: RunResult) -> list:
    """Every recorded condition that differs between runs ``a`` and ``b``:
    ``[{condition, baseline, candidate}]`` (the model itself is what is compared, not a condition)."""
    out = []
    for name, get in CONDITIONS:
        va, vb = get(a), get(b)
        if va != vb:
            out.append({"condition": name, "baseline": va, "candidate": vb})
    return out


def refused_differences(diffs: list) -> list:
    """The differences (of :func:`condition_differences`) that make a ratio meaningless."""
    return [d for d in diffs if d["condition"] in REFUSED]

__all__ = ["CONDITIONS", "REFUSED", "condition_differences", "refused_differences", "hardware_cpu", "short_value"]
