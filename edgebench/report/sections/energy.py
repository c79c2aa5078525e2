"""The energy section (level 1, pure): idle power, energy per inference and per event, average power at
the run's duty, the meter's trace and battery life against duty cycle."""
from __future__ import annotations

from typing import Callable, Optional

from edgebench.report import format as fmt
from edgebench.report import report_plots as rp
from edgebench.report.sections.base import RunData, e, img, joules, model_on_board, num, table
from edgebench.results.figures.energy import EnergyFigure


def _ci(lo: Optional[float], hi: Optional[float], f: Callable[[Optional[float]], str]) -> str:
    return f"{f(lo)}–{f(hi)}" if lo is not None else "–"


def _watts(w: Optional[float]) -> str:
    return num(w, "W")


def _row(what: str, fig: EnergyFigure, joule: bool = True) -> list:
    if joule:
        return [what, joules(fig.energy_j), _ci(fig.ci_low_j, fig.ci_high_j, joules), fig.label]
    return [what, _watts(fig.power_w), _ci(fig.ci_low_w, fig.ci_high_w, _watts), fig.label]


def html(d: RunData) -> str:
    r = d.result
    p = r.power
    if not p:
        return ""
    duty = p.duty_cycle
    rows = [_row("idle power", p.idle, joule=False),
            _row("energy per inference (idle share included)", p.inference),
            _row("energy per event above idle", p.event),
            [f"average power at {fmt.rate(duty.rate_hz)}/s (duty {num(duty.duty)})", _watts(duty.avg_power_w), "–",
             duty.label]]
    out = ["<h3>Energy</h3>", f"<p>{e(p.label)}; instrument {e(p.instrument)}; boundary "
                              f"{e(p.boundary)}; {e(p.model)}</p>",
           table(["figure", "value", "95% CI", "label"], rows)]
    name = model_on_board(r)
    if d.power is not None and len(d.power):
        out.append(img(rp.energy_trace(d.power, d.events, f"{name}: power trace", p.label or r.label),
                       "energy trace", "Meter samples with the inference windows shaded; energy per event."))
    if d.battery:
        out.append(img(rp.battery_curve(d.battery, f"{name}: battery life",
                                        d.battery.get("label") or p.label or r.label),
                       "battery life against duty cycle",
                       f"Battery life on {d.battery.get('cell')} ({d.battery.get('assumptions', '')}) from this "
                       "run's idle power and energy per event."))
    return "".join(out)


__all__ = ["html"]
