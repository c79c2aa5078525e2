"""Compare two stored runs (level 4): ratio of medians per stage with a run- and dependence-aware
interval, a verdict only where the interval excludes 1, Holm's adjustment across stages."""
from __future__ import annotations

from dataclasses import dataclass, field

from edgebench.errors import ResultError

ALPHA = 0.05


@dataclass
class Comparison:
    baseline: str          # run id of the denominator's reference (e.g. FP32)
    candidate: str         # run id compared against it (e.g. INT8)
    stage: str             # the headline stage (first of ``stages``)
    speedup: dict          # headline stage: ratio = median(baseline) / median(candidate), CI, p, verdict
    conditions_differ: list  # conditions that differ between the runs besides the model
    stages: dict = field(default_factory=dict)   # every stage tested: same fields, Holm-adjusted p

    def to_dict(self) -> dict:
        return {"baseline": self.baseline, "candidate": self.candidate, "stage": self.stage,
                "speedup": self.speedup, "stages": self.stages, "conditions_differ": self.conditions_differ}

    def sentence(self, stage: str | None = None) -> str:
        from edgebench.report import format as fmt

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
    measured = samples[samples["phase"] == "measure"]
    if "repeat" not in measured:
        return [measured[col].to_numpy()]
    return [g[col].to_numpy() for _, g in measured.groupby("repeat", sort=True) if len(g) >= 2]


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
    from edgebench.results.model import refuse_mixed_labels
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
        raw[st] = ratio_of_medians(a, b, paired=paired)   # median(baseline) / median(candidate)
    adjusted = holm([r.p_value for r in raw.values()])
    out = {}
    for (st, r), p_adj in zip(raw.items(), adjusted):
        out[st] = {**r.to_dict(), "p_holm": p_adj, "verdict": _verdict(r.ci_low, r.ci_high, p_adj),
                   "baseline_name": baseline.model.get("name"), "candidate_name": candidate.model.get("name"),
                   "definition": f"median {st} latency of baseline / of candidate (>1: candidate faster)"}
    differ = []
    for section, key in (("board", "name"), ("runtime", "kernels"), ("runtime", "threads"),
                         ("runtime", "delegate"), ("scenario", "name"), ("runtime", "name"),
                         ("settings", "agent_cpus")):
        va, vb = getattr(baseline, section).get(key), getattr(candidate, section).get(key)
        if va != vb:
            differ.append(f"{section}.{key}: {va} vs {vb}")
    return Comparison(baseline.run_id, candidate.run_id, stage, out[stage], differ, out)


def _interleaved(a, b) -> bool:
    ia, ib = (a.settings or {}).get("interleaved_with"), (b.settings or {}).get("interleaved_with")
    return bool(ia and ib and b.run_id in ia and a.run_id in ib)


__all__ = ["Comparison", "compare", "ALPHA"]
