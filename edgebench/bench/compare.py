"""Compare two stored runs (level 4): ratio of medians per stage with a run- and dependence-aware
interval, a verdict only where the interval excludes 1, Holm's adjustment across stages."""
from __future__ import annotations

from dataclasses import dataclass, field

from edgebench.errors import ResultError
from edgebench.report import format as fmt
from edgebench.results.model import refuse_mixed_labels

ALPHA = 0.05


@dataclass
class Comparison:
    baseline: str          # run id of the denominator's reference (e.g. FP32)
    candidate: str         # run id compared against it (e.g. INT8)
    stage: str             # the headline stage (first of ``stages``)
    speedup: dict          # headline stage: ratio = median(baseline) / median(candidate), CI, p, verdict
    conditions_differ: list  # conditions that differ between the runs besides the model
    stages: dict = field(default_factory=dict)   # every stage tested: same fields, Holm-adjusted p
    differences: list = field(default_factory=list)  # {condition, baseline, candidate} of every differing condition
    label: str = "measured"                           # the common label of both runs
    gate: dict | None = None                          # the --max-slowdown gate, when one was applied

    def to_dict(self) -> dict:
        return {"format": "edgebench-compare", "baseline": self.baseline, "candidate": self.candidate,
                "label": self.label, "stage": self.stage, "speedup": self.speedup, "stages": self.stages,
                "conditions_differ": self.conditions_differ, "differences": self.differences, "gate": self.gate}

    def slowdown(self, stage: str | None = None) -> dict:
        """Slowdown = median(candidate) / median(baseline) (> 1: the candidate is slower), with the
        interval of the speed-up inverted (the same test, the same coverage)."""
        s = self.stages.get(stage or self.stage, self.speedup)
        return {"ratio": 1.0 / s["ratio"], "ci_low": 1.0 / s["ci_high"], "ci_high": 1.0 / s["ci_low"],
                "ci_level": s["ci_level"]}

    def apply_gate(self, max_slowdown: float, stage: str | None = None) -> dict:
        """The regression gate: fails when the slowdown interval lies wholly above ``max_slowdown``
        (the candidate is slower than that beyond the interval's doubt). Stored in ``gate``."""
        stage = stage or self.stage
        sd = self.slowdown(stage)
        failed = sd["ci_low"] > max_slowdown
        self.gate = {"max_slowdown": max_slowdown, "stage": stage, "slowdown": sd["ratio"],
                     "slowdown_ci_low": sd["ci_low"], "slowdown_ci_high": sd["ci_high"], "failed": failed,
                     "rule": "fails when the lower bound of the slowdown interval exceeds max_slowdown"}
        return self.gate

    def sentence(self, stage: str | None = None) -> str:
        stage = stage or self.stage
        s = self.stages.get(stage, self.speedup)
        runs = (f"{s['runs_a']} vs {s['runs_b']} runs" if s["runs_a"] > 1 or s["runs_b"] > 1
                else "one run each: run-to-run variation not measured")
        adjusted = (f", Holm-adjusted over {len(self.stages)} stages {fmt.p_value(s['p_holm'])}"
                    if len(self.stages) > 1 else "")
        return (f"{s['candidate_name']} is {s['ratio']:.2f}x the speed of {s['baseline_name']} "
                f"({stage} median ratio, {int(round(100 * s['ci_level']))}% CI {s['ci_low']:.2f}–{s['ci_high']:.2f}: "
                f"{s['verdict']}; {fmt.p_value(s['p_value'])}{adjusted}; {runs}, "
                f"n={s['n_a']:,} vs {s['n_b']:,})")


def _runs(samples, col: str) -> list:
    if col not in samples:
        return []
    measured = samples[samples["phase"] == "measure"]
    if not len(measured):  # a soak: its sustained window is the figure it stands for
        measured = samples[samples["phase"] == "sustained"]
    if "repeat" not in measured:
        return [measured[col].to_numpy()]
    return [g[col].to_numpy() for _, g in measured.groupby("repeat", sort=True) if len(g) >= 2]


def _tick(baseline, candidate, a, b) -> float:
    """The coarser clock of the two runs: as recorded, and as their samples show it."""
    import numpy as np

    from edgebench.stats.dependence import observed_tick

    recorded = [((r.timing or {}).get("clock_resolution_s") or 0.0) for r in (baseline, candidate)]
    return max(*recorded, observed_tick(np.concatenate(a)), observed_tick(np.concatenate(b)))


def _verdict(ci_low: float, ci_high: float, p_holm: float) -> str:
    """Speed-up = baseline / candidate: > 1 means the candidate is faster."""
    if p_holm < ALPHA and ci_low > 1.0:
        return "faster"
    if p_holm < ALPHA and ci_high < 1.0:
        return "slower"
    return "no difference resolved"


def compare(baseline, baseline_samples, candidate, candidate_samples, stage: str = "e2e",
            stages: tuple = ()) -> Comparison:
    """``baseline``/``candidate`` are RunResults; samples their Parquet frames.

    ``stage`` is the headline; ``stages`` (default: just it) are all tested, Holm-adjusted.
    Runs of the two that were interleaved (``settings.interleaved``, equal repeats) are
    compared pairwise, repeat by repeat.
    """
    from edgebench.stats.compare import holm, ratio_of_medians

    refuse_mixed_labels(baseline, candidate)  # never a simulated or emulated figure against a measured one
    tested = tuple(dict.fromkeys((stage, *stages)))
    raw = {}
    for st in tested:
        a = _runs(baseline_samples, f"{st}_s")
        b = _runs(candidate_samples, f"{st}_s")
        if not a or not b:
            raise ResultError("a run to compare has fewer than 2 measured samples", "re-run the benchmark")
        paired = _interleaved(baseline, candidate) and len(a) == len(b)
        raw[st] = ratio_of_medians(a, b, paired=paired, resolution_s=_tick(baseline, candidate, a, b))
    adjusted = holm([r.p_value for r in raw.values()])
    out = {}
    for (st, r), p_adj in zip(raw.items(), adjusted):
        out[st] = {**r.to_dict(), "p_holm": p_adj, "verdict": _verdict(r.ci_low, r.ci_high, p_adj),
                   "baseline_name": baseline.model.get("name"), "candidate_name": candidate.model.get("name"),
                   "definition": f"median {st} latency of baseline / of candidate (>1: candidate faster)"}
    diffs = condition_differences(baseline, candidate)
    differ = [f"{d['condition']}: {short_value(d['baseline'])} vs {short_value(d['candidate'])}" for d in diffs]
    return Comparison(baseline.run_id, candidate.run_id, stage, out[stage], differ, out, diffs,
                      label=baseline.label)


def short_value(v) -> str:
    """A sha256 as its first 12 hex digits (enough to tell two apart in a sentence)."""
    text = str(v)
    return text[:12] + "…" if len(text) == 64 and all(c in "0123456789abcdef" for c in text) else text


def _hw_cpu(r):
    sysd = (r.board or {}).get("system") or {}
    return (sysd.get("cpu") or {}).get("model_name") or (sysd.get("board") or {}).get("model")


def _governors(r):
    pol = (((r.board or {}).get("system") or {}).get("cpufreq") or {}).get("policies") or {}
    govs = sorted({p.get("governor") for p in pol.values() if isinstance(p, dict) and p.get("governor")})
    return "/".join(govs) or None


def _thermal_state(r):
    t = r.thermal or {}
    if not t.get("available"):
        return "unknown (no sensor)"
    end = t.get("end") or {}
    thr = end.get("throttled") or {}
    now = sorted(k[:-4] for k, v in thr.items() if k.endswith("_now") and v) if isinstance(thr, dict) else []
    return "throttled (" + ", ".join(now) + ")" if now else "not throttled"


def _inputs(r, key):
    return ((r.scenario or {}).get("inputs") or {}).get(key)


# (condition, getter): every condition that must match for a ratio to be about one thing
CONDITIONS = (
    ("runtime", lambda r: (r.runtime or {}).get("name")),
    ("runtime version", lambda r: (r.runtime or {}).get("version")),
    ("kernels", lambda r: (r.runtime or {}).get("kernels")),
    ("threads", lambda r: (r.runtime or {}).get("threads")),
    ("delegate", lambda r: (r.runtime or {}).get("delegate")),
    ("board", lambda r: (r.board or {}).get("name")),
    ("CPU model", _hw_cpu),
    ("pinning (settings.agent_cpus)", lambda r: (r.settings or {}).get("agent_cpus")),
    ("governor", _governors),
    ("thermal state", _thermal_state),
    ("scenario", lambda r: (r.scenario or {}).get("name")),
    ("inputs sha256", lambda r: _inputs(r, "sha256")),
    ("inputs shape", lambda r: _inputs(r, "shape")),
    ("inputs source", lambda r: _inputs(r, "source")),
    ("model precision", lambda r: (r.model or {}).get("precision")),
)


def condition_differences(a, b) -> list:
    """Every recorded condition that differs between runs ``a`` and ``b``:
    ``[{condition, baseline, candidate}]`` (the model itself is what is compared, not a condition)."""
    out = []
    for name, get in CONDITIONS:
        va, vb = get(a), get(b)
        if va != vb:
            out.append({"condition": name, "baseline": va, "candidate": vb})
    return out


def _interleaved(a, b) -> bool:
    ia, ib = (a.settings or {}).get("interleaved_with"), (b.settings or {}).get("interleaved_with")
    return bool(ia and ib and b.run_id in ia and a.run_id in ib)


__all__ = ["Comparison", "compare", "condition_differences", "short_value", "CONDITIONS", "ALPHA"]
