"""The soak section (level 1, pure): burst against sustained, the thermal course, the verdict."""
from __future__ import annotations

from edgebench.report import format as fmt
from edgebench.report import report_plots as rp
from edgebench.report.sections.base import RunData, e, img, model_on_board, num, table


def html(d: RunData) -> str:
    r = d.result
    s = r.extra.soak
    if not s:
        return ""
    rows = []
    for key, w in (("burst", s.burst), ("sustained", s.sustained)):
        if w:
            rows.append([key, f"{w.t_from_s or 0:.0f}–{w.t_to_s or 0:.0f} s", fmt.rate(w.throughput_per_s),
                         fmt.duration(w.median_s), fmt.duration_range(w.ci_low_s, w.ci_high_s),
                         fmt.duration(w.p99_s), fmt.count(w.n)])
    th = s.thermal
    out = ["<h3>Burst against sustained</h3>",
           table(["window", "device time", "inferences/s", "median", "95% CI", "p99", "n"], rows),
           f"<p>{e(s.verdict.reason)}</p>",
           f"<p class=small>sustained/burst throughput {e(num(s.sustained_over_burst))}; max "
           f"{e(num(th.max_temp_c, '°C'))} at {e(num(th.max_temp_at_s, 's'))}; steady "
           f"{e(num(th.steady_temp_c, '°C'))}; first throttle at "
           f"{e(num(th.time_to_first_throttle_s, 's'))}</p>"]
    if d.soak_series:
        out.append(img(rp.soak_series(d.soak_series, f"{model_on_board(r)}: soak", r.label), "soak time series",
                       "Temperature, CPU clock and latency (median and 10–90% of equal-time bins) against device "
                       "time; dashed lines: throttle onsets."))
    return "".join(out)


__all__ = ["html"]
