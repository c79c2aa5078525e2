"""An energy run as text: one figure per line, each ending with its label (measured / estimated)."""
from __future__ import annotations


def energy_lines(result, run_dir=None) -> list:
    """The human summary of an energy run: one figure per line, each ending with its label."""
    from edgebench.stats.energy import si, si_range

    def ci(lo, hi, unit, extra=""):
        parts = ([f"95% CI {si_range(lo, hi, unit)}"] if lo is not None and hi is not None else []) + \
            ([extra] if extra else [])
        return f"({'; '.join(parts)})" if parts else ""

    p = result.power or {}
    lab = p.get("label", "measured")
    out = []
    rate = (result.scenario or {}).get("rate_hz")
    who = (f"{lab} with {p.get('instrument')}, boundary {p.get('boundary')} ({p.get('boundary_meaning', '')}); "
           f"meter code tested against: {p.get('tested_against')}") if p.get("measured") else p.get("note", "")
    at = f"{rate:.4g}/s" if rate is not None else "an unrecorded rate"
    out.append(f"{result.model.get('name')} on {result.board.get('name')} at {at}: {who}")

    def line(name, value, rest=""):
        out.append(f"  {name:<22} {value}{('  ' + rest) if rest else ''}  [{lab}]")

    idle = p.get("idle") or {}
    if idle:
        line("idle power", si(idle.get("power_w"), "W"), ci(idle.get("ci_low_w"), idle.get("ci_high_w"), "W"))
    inf = p.get("inference") or {}
    if inf:
        n = f"n={inf['n']}, " if inf.get("n") else ""
        line("energy per inference", si(inf.get("energy_j"), "J"),
             ci(inf.get("ci_low_j"), inf.get("ci_high_j"), "J",
                f"{n}{si(inf.get('duration_s'), 's')} each, idle share included"))
        if inf.get("above_idle_j") is not None:
            line("  above idle", si(inf.get("above_idle_j"), "J"),
                 ci(inf.get("above_idle_ci_low_j"), inf.get("above_idle_ci_high_j"), "J"))
    ev = p.get("event") or {}
    if ev:
        line("energy per event", si(ev.get("energy_j"), "J"),
             ci(ev.get("ci_low_j"), ev.get("ci_high_j"), "J",
                "above idle, " + ("inference + wake-up" if p.get("measured") else "inference only")))
    wake = p.get("wake_up") or {}
    if wake and wake.get("resolved") is False:
        line("wake-up per event", "not resolved",
             f"(indistinguishable from floating-point rounding: within {si(wake.get('resolution_j'), 'J')} of 0)")
    elif wake:
        line("wake-up per event", si(wake.get("energy_j"), "J"), ci(wake.get("ci_low_j"), wake.get("ci_high_j"), "J"))
    avg = p.get("average") or {}
    if avg:
        meas = f"{lab} {si(avg.get('measured_w'), 'W')}, " if avg.get("measured_w") is not None else ""
        line(f"average at {avg.get('rate_hz') or 0:.3g}/s", f"{meas}model {si(avg.get('model_w'), 'W')}",
             "(model: idle + energy per event x rate)")
    duty = p.get("duty_cycle") or {}
    if duty.get("error"):
        out.append(f"  duty-cycle model: {duty['error']}")
    align = p.get("alignment") or {}
    if align:
        unc = align.get("uncertainty_s")
        unc_text = si(unc, "s") if unc is not None else "n/a"
        out.append(f"  clock alignment: {align.get('method')} (uncertainty {unc_text})")
    ex = p.get("excluded") or {}
    if ex:
        out.append("  excluded: " + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in ex.items()))
    if run_dir is not None:
        out.append(f"  run: {run_dir} ({result.status}{': ' + result.status_reason if result.status_reason else ''})")
    for w in result.warnings:
        out.append(f"  warning: {w.get('message')} ({w.get('remedy') or ''})")
    if not p.get("measured"):  # every line of an estimate says so
        out = [t if t.endswith(f"[{lab}]") else f"{t}  [{lab}]" for t in out]
    return out


def print_energy(console, result, run_dir=None) -> None:
    """An energy run on a terminal (the energy verb, and `runs ID`): one figure per line."""
    for text in energy_lines(result, run_dir):
        console.print(text, markup=False, highlight=False)
