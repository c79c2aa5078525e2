"""Compare two stored runs (level 4): ratio of medians with a bootstrap CI and a rank test."""
from __future__ import annotations

from dataclasses import dataclass

from edgebench.errors import ResultError


@dataclass
class Comparison:
    baseline: str          # run id of the denominator's reference (e.g. FP32)
    candidate: str         # run id compared against it (e.g. INT8)
    stage: str
    speedup: dict          # ratio = median(baseline) / median(candidate), CI, p-value
    conditions_differ: list  # conditions that differ between the runs besides the model

    def to_dict(self) -> dict:
        return {"baseline": self.baseline, "candidate": self.candidate, "stage": self.stage,
                "speedup": self.speedup, "conditions_differ": self.conditions_differ}

    def sentence(self) -> str:
        s = self.speedup
        verdict = ("faster" if s["ratio"] > 1 else "slower")
        sig = "significant" if s["p_value"] < 0.05 else "not significant"
        return (f"{s['candidate_name']} is {s['ratio']:.2f}x the speed of {s['baseline_name']} "
                f"({self.stage} median ratio, 95% bootstrap CI {s['ci_low']:.2f}–{s['ci_high']:.2f}; "
                f"{verdict}, Mann-Whitney p={s['p_value']:.2g}, {sig}; n={s['n_a']:,} vs {s['n_b']:,})")


def compare(baseline, baseline_samples, candidate, candidate_samples, stage: str = "e2e") -> Comparison:
    """``baseline``/``candidate`` are RunResults; samples their Parquet frames."""
    from edgebench.results.model import refuse_mixed_labels
    from edgebench.stats.compare import ratio_of_medians

    refuse_mixed_labels(baseline, candidate)  # never a simulated or emulated figure against a measured one
    col = f"{stage}_s"
    a = baseline_samples.loc[baseline_samples["phase"] == "measure", col].to_numpy()
    b = candidate_samples.loc[candidate_samples["phase"] == "measure", col].to_numpy()
    if a.size < 2 or b.size < 2:
        raise ResultError("a run to compare has fewer than 2 measured samples", "re-run the benchmark")
    r = ratio_of_medians(a, b)
    speedup = {**r.to_dict(), "baseline_name": baseline.model.get("name"),
               "candidate_name": candidate.model.get("name"),
               "definition": f"median {stage} latency of baseline / of candidate (>1: candidate faster)"}
    differ = []
    for section, key in (("board", "name"), ("runtime", "kernels"), ("runtime", "threads"),
                         ("runtime", "delegate"), ("scenario", "name"), ("runtime", "name")):
        va, vb = getattr(baseline, section).get(key), getattr(candidate, section).get(key)
        if va != vb:
            differ.append(f"{section}.{key}: {va} vs {vb}")
    return Comparison(baseline.run_id, candidate.run_id, stage, speedup, differ)
