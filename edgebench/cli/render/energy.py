"""An energy run as text: one figure per line, each ending with its label (measured / estimated)."""
from __future__ import annotations

from edgebench.results.model import RunResult
from edgebench.stats.energy import si, si_range


def energy_lines(result: RunResult, run_dir=None) -> list:
    """The human summary of an energy run: one figure per line, each ending with its label."""
    def ci(lo, hi, unit, extra=""):
        parts = ([f"95% CI {si_range(lo, hi, unit)}"] if lo is not None and hi is not None else []) + \
            ([extra] if extra else [])
        return f"({'; '.join(parts)})" if parts else ""

    p = result.power
    lab = p.label or "measured"
    out = []
    rate = result.scenario.rate_hz
    note = p.note or ""     # an estimate's note on how it was made
    who = (f"{lab} with {p.instrument}, boundary {p.boundary} ({p.boundary_meaning or ''}); "
           f"meter code tested against: {p.tested_against}") if p.measured else note
    at = f"{rate:.4g}/s" if rate is not None else "an unrecorded rate"
    out.append(f"{result.model.name} on {result.board.name} at {at}: {who}")

    def line(name, value, rest=""):
        out.append(f"  {name:<22} {value}{('  ' + rest) if rest else ''}  [{lab}]")

    idle = p.idle
    if idle:
        line("idle power", si(idle.power_w, "W"), ci(idle.ci_low_w, idle.ci_high_w, "W"))
    inf = p.inference
    if inf:
        n = f"n={inf.n}, " if inf.n else ""
        line("energy per inference", si(inf.energy_j, "J"),
             ci(inf.ci_low_j, inf.ci_high_j, "J", f"{n}{si(inf.duration_s, 's')} each, idle share included"))
        if inf.above_idle_j is not None:
            line("  above idle", si(inf.above_idle_j, "J"), ci(inf.above_idle_ci_low_j, inf.above_idle_ci_high_j, "J"))
    ev = p.event
    if ev:
        line("energy per event", si(ev.energy_j, "J"),
             ci(ev.ci_low_j, ev.ci_high_j, "J",
                "above idle, " + ("inference + wake-up" if p.measured else "inference only")))
    wake = p.wake_up
    # getattr: a wake-up's `resolved` and `resolution_j`, a duty cycle's `error`: keys of EnergyFigure the
    # benchthermal branch declares (either reads them)
    if wake and wake.resolved is False:
        line("wake-up per event", "not resolved",
             f"(indistinguishable from floating-point rounding: within {si(getattr(wake, 'resolution_j', None), 'J')}"
             " of 0)")
    elif wake:
        line("wake-up per event", si(wake.energy_j, "J"), ci(wake.ci_low_j, wake.ci_high_j, "J"))
    avg = p.average
    if avg:
        meas = f"{lab} {si(avg.measured_w, 'W')}, " if avg.measured_w is not None else ""
        line(f"average at {avg.rate_hz or 0:.3g}/s", f"{meas}model {si(avg.model_w, 'W')}",
             "(model: idle + energy per event x rate)")
    error = p.duty_cycle.error
    if error:
        out.append(f"  duty-cycle model: {error}")
    align = p.alignment
    if align:
        unc = align.uncertainty_s
        unc_text = si(unc, "s") if unc is not None else "n/a"
        out.append(f"  clock alignment: {align.method} (uncertainty {unc_text})")
    ex = p.excluded or {}
    if ex:
        out.append("  excluded: " + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in ex.items()))
    if run_dir is not None:
        out.append(f"  run: {run_dir} ({result.status}{': ' + result.status_reason if result.status_reason else ''})")
    for w in result.warnings:
        out.append(f"  warning: {w.message} ({w.remedy or ''})")
    if not p.measured:  # every line of an estimate says so
        out = [t if t.endswith(f"[{lab}]") else f"{t}  [{lab}]" for t in out]
    return out


def print_energy(console, result: RunResult, run_dir=None) -> None:
    """An energy run on a terminal (the energy verb, and `runs ID`): one figure per line."""
    for text in energy_lines(result, run_dir):
        console.print(text, markup=False, highlight=False)
