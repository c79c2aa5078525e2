"""The Pareto view of several runs (level 1, pure): one point per model and latency label, its latency
from its latency runs, accuracy from accuracy runs (candidate and baseline), energy from energy runs."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Protocol, Sequence, Set, Tuple

from edgebench.report.sections.base import RunData
from edgebench.results.kinds import kind_of


class Model(Protocol):
    """A model as a run names it: the run's own (``model``) or an accuracy run's baseline."""
    name: Optional[str]
    precision: Optional[str]
    sha256: Optional[str]


def _key(m: Model) -> Optional[str]:
    return m.sha256 or m.name


def pareto_points(runs: Sequence[RunData]) -> List[Dict[str, Any]]:
    """One point per model (sha256): latency from its latency runs, accuracy from accuracy runs
    (candidate and baseline), energy from energy runs."""
    pts: Dict[Tuple[Optional[str], str], Dict[str, Any]] = {}
    lat_labels: Dict[Optional[str], Set[str]] = {}   # model -> labels of its latency runs: a point per both
    for d in runs:
        r = d.result
        if kind_of(r).latency and r.stage("e2e").median_s:
            lat_labels.setdefault(_key(r.model), set()).add(r.label)

    def points(m: Model, latency_label: Optional[str] = None) -> List[Dict[str, Any]]:
        key = _key(m)
        labs = [latency_label] if latency_label else sorted(lat_labels.get(key) or {"measured"})
        return [pts.setdefault((key, lab), {"name": f"{m.name} {m.precision or ''}".strip(),
                                            "labels": set(), "latency_label": lab}) for lab in labs]

    for d in runs:
        r = d.result
        kind = kind_of(r)
        e2e = r.stage("e2e")
        if kind.latency and e2e.median_s:
            p = points(r.model, r.label)[0]
            if "latency_s" not in p or kind.repeats:    # independent repeats make the better latency figure
                p.update(latency_s=e2e.median_s, latency_ci=(e2e.ci_low_s, e2e.ci_high_s))
                p["labels"].add(r.label)
        if kind.energy and r.power.inference.energy_j:
            p = points(r.model, r.label)[0]
            p["energy_j"] = r.power.inference.energy_j
            p["labels"].add((r.power.label or r.label).split(" ")[0])
        a = r.extra.accuracy
        if kind.accuracy and a:
            sides: Tuple[Tuple[Model, Any], ...] = ((r.model, a.accuracy.candidate), (a.baseline.model, a.accuracy.baseline))
            for mm, fig in sides:
                t1 = fig.top1
                if t1.accuracy is not None and mm:
                    for p in points(mm):
                        p.update(accuracy=t1.accuracy, accuracy_ci=(t1.ci_low, t1.ci_high))
                        p["labels"].add(r.label)
    out = []
    for p in pts.values():
        labels = p.pop("labels")
        p["label"] = "/".join(sorted(labels)) or "measured"
        out.append(p)
    return out


__all__ = ["pareto_points"]
