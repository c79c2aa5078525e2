"""`edgebench battery [RUN] --cell C`: battery life at a rate or duty cycle, from a run or given figures."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from edgebench import ranges as R
from edgebench.cli import options as opt
from edgebench.errors import UsageError

CELL = "Battery"  # the cell and what of it is usable
WORKLOAD = "Workload (instead of the run's figures)"


def battery_estimate(run: Optional[str], runs_dir, cell: str, capacity_mah, voltage, usable, regulator_eff,
                     self_discharge, temp_c, temp_derate, rate, duty, idle_w, event_above_idle_j, event_s,
                     active_w=None, event_j=None):
    """Build the estimate from CLI arguments (shared by the verb and the tests).

    An event is given in one of two forms: its energy above idle (``event_above_idle_j``;
    ``event_j`` is the deprecated name of the same figure), or the board's power while active
    (``active_w``, idle included) for ``event_s`` seconds.
    """
    # lazy: numpy, pandas (battery 0.18 s, numpy 460 ms measured), kept off `edgebench VERB --help`
    from edgebench.bench.battery import (
        SOURCE_KEYS,
        above_idle_from_active,
        estimate,
        figures_from_run,
        load_from_figures,
        load_from_window,
        make_cell,
    )
    from edgebench.stats.energy import parse_rate

    notes = []
    if event_j is not None:
        if event_above_idle_j is not None:
            raise UsageError("--event-j is the old name of --event-above-idle-j: give one of them")
        event_above_idle_j = event_j
        notes.append("--event-j was read as energy per event ABOVE IDLE (its deprecated name; use "
                     "--event-above-idle-j, or --active-w with --event-s for the board's power while active)")
    if active_w is not None and event_above_idle_j is not None:
        raise UsageError("give the event as --event-above-idle-j J or as --active-w W with --event-s S, not both",
                         "--active-w is the board's total power while inferring; the other is energy above idle")
    if rate is not None and duty is not None:
        raise UsageError("give either --rate or --duty, not both")
    c = make_cell(cell, capacity_mah, voltage)
    figs: dict = {}
    r = parse_rate(rate) if rate is not None else None
    if run is not None:
        # lazy: pydantic (import pydantic 199 ms measured), kept off `edgebench VERB --help`
        from edgebench.results.store import read_result, resolve_run

        figs = figures_from_run(read_result(resolve_run(run, runs_dir)), rate_hz=r, duty=duty)
    elif idle_w is None or (event_above_idle_j is None and active_w is None):
        raise UsageError("give a stored run (energy, soak or sweep), or --idle-w with --event-above-idle-j "
                         "(or --active-w and --event-s)",
                         "e.g. edgebench battery --idle-w 0.05 --active-w 2 --event-s 1 --duty 0.01")
    if figs.get("avg_power_w") is not None:  # a soak or sweep: the average power of the window it used
        if idle_w is not None or event_above_idle_j is not None or active_w is not None:
            raise UsageError(f"run {figs['run_id']} is a {figs['kind']}: its figure is an average power at its own "
                             "load; --idle-w, --event-above-idle-j and --active-w do not apply",
                             "drop them, or give the figures without a run")
        load = load_from_window(figs)
        return estimate(c, load, usable=usable, regulator_eff=regulator_eff,
                        self_discharge_pct_per_month=self_discharge, temp_c=temp_c, temp_derate=temp_derate)
    given = idle_w is not None or event_above_idle_j is not None or active_w is not None
    label = "given" if given or not figs else figs["label"]
    i_w = idle_w if idle_w is not None else figs["idle_w"]
    e_s = event_s if event_s is not None else figs.get("event_s")
    if active_w is not None:
        e_j = above_idle_from_active(i_w, active_w, e_s)
    else:
        e_j = event_above_idle_j if event_above_idle_j is not None else figs["event_j"]
    if r is None and duty is None:
        r = figs.get("rate_hz")
        if r is None:
            raise UsageError("give --rate or --duty", "e.g. --rate 1/min")
    own_event = event_above_idle_j is None and active_w is None
    load = load_from_figures(i_w, e_j, label, rate_hz=r, duty=duty, event_s=e_s,
                             idle_ci=figs.get("idle_ci", (None, None)) if idle_w is None else (None, None),
                             event_ci=figs.get("event_ci", (None, None)) if own_event else (None, None),
                             source={k: figs.get(k) for k in SOURCE_KEYS if k in figs}
                             if figs else {"given": True})
    if active_w is not None:
        load.detail["active_w"] = float(active_w)
        load.detail["event_from"] = f"(active {active_w:g} W - idle {i_w:g} W) x {e_s:g} s"
    est = estimate(c, load, usable=usable, regulator_eff=regulator_eff,
                   self_discharge_pct_per_month=self_discharge, temp_c=temp_c, temp_derate=temp_derate)
    est.notes[:0] = notes
    return est


def _life(hours: float) -> str:
    if hours < 48:
        return f"{hours:.3g} hours"
    if hours < 2 * 8765.82:
        return f"{hours / 24:.3g} days"
    return f"{hours / 8765.82:.3g} years"


def _power_terms(d: dict) -> str:
    """How the average power was formed: a window's average, or idle + event energy x rate."""
    # lazy: numpy (import numpy 460 ms measured), kept off `edgebench VERB --help`
    from edgebench.stats.energy import si

    if d.get("window"):
        rate = f" at {d['rate_hz']:.4g}/s" if d.get("rate_hz") else ""
        return f"the average over {d['window']}{rate}"
    event = f"{si(d['event_j'], 'J')} per event above idle"
    if d.get("event_from"):
        event += f" [{d['event_from']}]"
    return f"idle {si(d['idle_w'], 'W')} + {event} x {d['rate_hz']:.4g}/s"


def battery_lines(est) -> list:
    # lazy: numpy (import numpy 460 ms measured), kept off `edgebench VERB --help`
    from edgebench.stats.energy import si

    c, load, a = est.cell, est.load, est.assumptions
    src = load["detail"].get("source") or {}
    how = (f", meter: {src['instrument']}" if src.get("instrument")
           else f", {src['method']}" if src.get("method") else "")    # the meter; without one, how power is known
    origin = (f"{src.get('kind') or 'energy'} run {src.get('run_id')} ({src.get('model')} on {src.get('board')}, "
              f"boundary {src.get('boundary')}{how})" if src.get("run_id") else "given figures")
    d = load["detail"]
    rng = ""
    if est.life_low_h and est.life_high_h:
        rng = f" (from the power's CI: {_life(est.life_low_h)} to {_life(est.life_high_h)})"
    out = [
        f"battery life {_life(est.life_h)} ({est.life_h:,.4g} h){rng}  [{est.label}]",
        f"  cell            {c['name']}: {c['description']}, {c['capacity_mah']:g} mAh at {c['voltage_v']:g} V "
        f"= {est.energy_nominal_wh:.3g} Wh  [datasheet: {c['source']}]",
        f"  usable energy   {est.energy_usable_wh:.3g} Wh (usable fraction {a['usable_fraction']:g}"
        + (f", temperature derating {a['temp_derate']:g}" if a.get("temp_derate") else "") + ")  [assumed]",
        f"  average power   {si(load['avg_power_w'], 'W')} at the board = {_power_terms(d)}"
        + (f" (duty cycle {d['duty']:.3g})" if d.get("duty") is not None else "") + f"  [{load['label']}: {origin}]",
        f"  from the cell   {si(est.battery_power_w, 'W')} through a {a['regulator_efficiency']:g}-efficient "
        f"regulator  [assumed efficiency]",
        f"  self-discharge  {a['self_discharge_pct_per_month']:.3g}%/month = {si(est.self_discharge_w, 'W')}  "
        f"[{a['self_discharge_source']}]",
    ]
    out += [f"  note: {n}" for n in est.notes]
    return out


def battery(
    run: Optional[str] = typer.Argument(None, help="A stored energy, soak or sweep run (folder, name prefix or "
                                        "'latest')."),
    cell: str = typer.Option("2xAA", rich_help_panel=CELL, help="2xAA, CR2032, 18650, lipo-1000 or custom."),
    capacity_mah: Optional[float] = typer.Option(
        None, callback=opt.within(R.CAPACITY_MAH), rich_help_panel=CELL,
        help="Capacity in mAh (custom cell, or override)."),
    voltage: Optional[float] = typer.Option(
        None, callback=opt.within(R.VOLTAGE_V), rich_help_panel=CELL,
        help="Nominal voltage (custom cell, or override)."),
    usable: float = typer.Option(
        0.8, callback=opt.within(R.USABLE), rich_help_panel=CELL,
        help="Fraction of the capacity usable down to the device's cut-off."),
    regulator_eff: float = typer.Option(
        0.85, callback=opt.within(R.REGULATOR_EFF), rich_help_panel=CELL,
        help="Efficiency of the regulator between cell and board."),
    self_discharge_pct_per_month: Optional[float] = typer.Option(
        None, callback=opt.within(R.SELF_DISCHARGE), rich_help_panel=CELL,
        help="Self-discharge, % of capacity per month."),
    temp_c: Optional[float] = typer.Option(
        None, callback=opt.within(R.TEMP_C), rich_help_panel=CELL,
        help="Operating temperature (checked against the cell's range)."),
    temp_derate: Optional[float] = typer.Option(
        None, callback=opt.within(R.TEMP_DERATE), rich_help_panel=CELL,
        help="Fraction of capacity left at that temperature."),
    rate: Optional[str] = opt.rate(help="Inference rate: 10, 1/s, 2/min, 30/h (default: the run's).",
                                   rich_help_panel=WORKLOAD),
    duty: Optional[float] = typer.Option(
        None, callback=opt.within(R.DUTY), rich_help_panel=WORKLOAD,
        help="Duty cycle in (0, 1] instead of a rate."),
    idle_w: Optional[float] = typer.Option(
        None, callback=opt.within(R.POWER_W), rich_help_panel=WORKLOAD,
        help="Idle (sleep) power in W (instead of a run's)."),
    event_above_idle_j: Optional[float] = typer.Option(
        None, callback=opt.within(R.EVENT_ABOVE_IDLE_J), rich_help_panel=WORKLOAD,
        help="Energy per event ABOVE IDLE in J (instead of a run's); or give --active-w and --event-s."),
    active_w: Optional[float] = typer.Option(
        None, callback=opt.within(R.ACTIVE_W), rich_help_panel=WORKLOAD,
        help="The board's total power while inferring, in W (idle included), for --event-s seconds per event."),
    event_s: Optional[float] = typer.Option(
        None, callback=opt.within(R.EVENT_S), rich_help_panel=WORKLOAD,
        help="Duration of one event in s (needed by --duty and --active-w)."),
    event_j: Optional[float] = typer.Option(
        None, callback=opt.within(R.EVENT_J), hidden=True, help="Deprecated name of --event-above-idle-j."),
    runs_dir: Path = opt.runs_dir(writes=False, rich_help_panel=opt.OUTPUT),
    json_out: bool = opt.json_flag("the estimate", rich_help_panel=opt.OUTPUT),
) -> None:
    """Battery life at a duty cycle: from a stored energy, soak or sweep run, or from given idle power and
    either the energy per event above idle or the power while active."""
    # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
    from edgebench.cli.output import emit_json, get_console

    est = battery_estimate(run, runs_dir, cell, capacity_mah, voltage, usable, regulator_eff,
                           self_discharge_pct_per_month, temp_c, temp_derate, rate, duty, idle_w, event_above_idle_j,
                           event_s, active_w=active_w, event_j=event_j)
    if json_out:
        emit_json(est)
        return
    out = get_console()
    for text in battery_lines(est):
        out.print(text, markup=False, highlight=False)
