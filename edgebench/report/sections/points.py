"""The sweep section (level 1, pure): one row per point of the grid, and the sweep's own plots."""
from __future__ import annotations

from edgebench.report import format as fmt
from edgebench.report.sections.base import RunData, img, joules, num, table


def html(d: RunData) -> str:
    rows = []
    for p in d.result.extra.points or []:
        en = p.energy
        rows.append([p.id, p.name, fmt.rate(p.throughput_per_s), fmt.duration(p.latency.median_s),
                     num(p.steady_temp_c, "°C"), "yes" if p.throttled else "no", "yes" if p.steady else "no",
                     f"{joules(en.per_inference_j)} ({en.label})" if en.per_inference_j else "–"])
    out = ["<h3>Points</h3>", table(["point", "configuration", "inferences/s", "median", "steady temp",
                                     "throttled", "steady", "energy/inference"], rows, num_from=2)]
    for caption, png in d.images.items():
        out.append(img(png, caption, caption))
    return "".join(out)


__all__ = ["html"]
