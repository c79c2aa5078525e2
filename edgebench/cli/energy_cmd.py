"""`edgebench energy MODEL --board B --meter M`: energy per inference, idle power, wake-up energy."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from edgebench.cli.app import app


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
    out.append(f"{result.model.get('name')} on {result.board.get('name')} at {rate:.4g}/s: {who}")

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
    if wake:
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
        out.append(f"  warning: {w['message']} ({w.get('remedy', '')})")
    if not p.get("measured"):  # every line of an estimate says so
        out = [t if t.endswith(f"[{lab}]") else f"{t}  [{lab}]" for t in out]
    return out


def _progress(console, label: str):
    from edgebench.cli.bench_cmd import progress_printer

    inner = progress_printer(console, label)

    def show(ev: dict) -> None:
        if ev["event"] == "meter":
            console.print(f"[dim]{label}: starting {ev['instrument']}…[/]")
        elif ev["event"] == "idle":
            if ev["which"] == "after":
                console.print()  # the chunk progress line ends with a carriage return
            console.print(f"[dim]{label}: idle window {ev['which']} the run ({ev['seconds']:g} s)…[/]")
        else:
            inner(ev)

    return show


@app.command()
def energy(
    model: Optional[Path] = typer.Argument(None, help="The .tflite model (omit with --recover)."),
    board: str = typer.Option("host", "--board", "-b", help="Board profile name (see `edgebench boards`)."),
    meter: Optional[str] = typer.Option(None, help="Power meter: rapl, hwmon, ina219, ina226, ina260, vcgencmd, "
                                                   "ppk2, joulescope, lpm01a. None: datasheet estimates."),
    meter_port: Optional[str] = typer.Option(None, help="Where the meter is: serial port, I2C BUS:ADDR, "
                                                        "hwmon name, RAPL zone (see docs/power.md)."),
    meter_opt: List[str] = typer.Option([], help="Meter option KEY=VALUE (repeatable), e.g. shunt_ohm=0.1."),
    boundary: Optional[str] = typer.Option(None, help="What the meter's figure includes, as wired: soc, board, "
                                                      "board+accelerator, target-supply, ..."),
    rate: Optional[str] = typer.Option(None, help="Inference rate: 10, 1/s, 2/min, 30/h."),
    duty: Optional[float] = typer.Option(None, help="Duty cycle in (0, 1]: fraction of time spent inferring."),
    idle_s: float = typer.Option(3.0, help="Length of each quiet window before and after the run, seconds."),
    margin_s: Optional[float] = typer.Option(None, help="Largest margin around an inference counted as its "
                                                        "wake-up (default: half the period)."),
    alignment: str = typer.Option("auto", help="auto, clock (device timestamps) or marker (GPIO edges)."),
    kernels: str = typer.Option("xnnpack", help="xnnpack, builtin or reference."),
    threads: int = typer.Option(1, help="Interpreter threads."),
    delegate: Optional[str] = typer.Option(None, help="Delegate to load, e.g. edgetpu."),
    inputs: Optional[Path] = typer.Option(None, help=".npy/.npz inputs (default: seeded random in range)."),
    seed: int = typer.Option(0, help="Seed of the random inputs."),
    min_samples: int = typer.Option(30, help="Minimum measured inferences."),
    min_time: float = typer.Option(10.0, help="Minimum measuring time, seconds."),
    max_time: float = typer.Option(60.0, help="Maximum measuring time, seconds."),
    runs_dir: Path = typer.Option(Path("runs"), help="Where run folders are written."),
    url: Optional[str] = typer.Option(None, help="Override the board's address."),
    boards_dir: List[Path] = typer.Option([], help="Extra folder of board profiles (repeatable)."),
    recover: Optional[Path] = typer.Option(None, help="Finish an energy run folder left 'running' by a kill or a "
                                           "crash, from its journal (power samples and inference windows)."),
    json_out: bool = typer.Option(False, "--json", help="Print the run as JSON on stdout."),
) -> None:
    """Energy per inference, idle power and wake-up energy at a fixed rate or duty cycle."""
    from edgebench.bench.energy import EnergyOptions, estimate_energy, measure_energy, simulated_energy
    from edgebench.boards.registry import get_profile
    from edgebench.cli.output import emit_json, get_console, get_err_console
    from edgebench.errors import UsageError
    from edgebench.power import open_meter, parse_options
    from edgebench.stats.energy import parse_rate

    if recover is not None:
        from edgebench.bench.energy_journal import recover_energy

        if model is not None:
            raise UsageError("give a model to measure or --recover RUN_DIR, not both")
        result = recover_energy(recover)
        if json_out:
            emit_json(result)
        else:
            for text in energy_lines(result, recover):
                get_console().print(text, markup=False, highlight=False)
        return
    if model is None:
        raise UsageError("missing the model to measure", "edgebench energy MODEL.tflite --board BOARD --rate 1/s")
    err = get_err_console()
    opts = EnergyOptions(rate_hz=parse_rate(rate) if rate is not None else None, duty=duty, idle_s=idle_s,
                         margin_s=margin_s, alignment=alignment, kernels=kernels, threads=threads,
                         delegate=delegate, inputs=str(inputs) if inputs else None, seed=seed,
                         min_samples=min_samples, min_time_s=min_time, max_time_s=max_time)
    opts.validate()
    profile = get_profile(board, extra_dirs=tuple(boards_dir))
    show = _progress(err, model.name)
    if getattr(profile.transport, "type", None) == "sim":
        if meter is not None or meter_port or meter_opt:
            raise UsageError(f"board {profile.name} is simulated: its power comes from its power model, not a meter",
                             "drop --meter, --meter-port and --meter-opt")
        result, run_dir = simulated_energy(model, profile, opts, runs_dir, url, boundary, show)
    elif meter is None:
        if meter_port or meter_opt or boundary:
            raise UsageError("--meter-port, --meter-opt and --boundary need --meter")
        result, run_dir = estimate_energy(model, profile, opts, runs_root=runs_dir, url=url, progress=show)
    else:
        m = open_meter(meter, meter_port, parse_options(meter_opt), boundary)
        result, run_dir = measure_energy(model, profile, opts, m, runs_root=runs_dir, url=url, progress=show)
    err.print()
    if json_out:
        emit_json(result)
    else:
        out = get_console()
        for text in energy_lines(result, run_dir):
            out.print(text, markup=False, highlight=False)
