"""`edgebench energy MODEL --board B --meter M`: energy per inference, idle power, wake-up energy."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from edgebench import ranges as R
from edgebench.cli import options as opt
from edgebench.cli.progress import end_live_line
from edgebench.cli.render import progress_printer
from edgebench.cli.runargs import RunArgs, RuntimeArgs
from edgebench.errors import UsageError
from edgebench.farm.spec import is_farm

METER = "Power meter"  # which meter, how it is wired, how inferences are found in its samples


def _progress(console, label: str):
    inner = progress_printer(console, label)

    def show(ev: dict) -> None:
        if ev["event"] == "meter":
            console.print(f"[dim]{label}: {ev['instrument']} started[/]")
        elif ev["event"] == "idle":
            if ev["which"] == "after":
                console.print()  # the chunk progress line ends with a carriage return
            console.print(f"[dim]{label}: idle window {ev['which']} the run ({ev['seconds']:g} s)…[/]")
        else:
            inner(ev)

    return show


def energy(
    model: Optional[Path] = typer.Argument(None, help="The .tflite model (omit with --recover)."),
    meter: Optional[str] = typer.Option(
        None, rich_help_panel=METER,
        help="Power meter: rapl, hwmon, ina219, ina226, ina260, vcgencmd, ppk2, joulescope, lpm01a. None: "
             "datasheet estimates."),
    meter_port: Optional[str] = typer.Option(
        None, rich_help_panel=METER,
        help="Where the meter is: serial port, I2C BUS:ADDR, hwmon name, RAPL zone (see docs/power.md)."),
    meter_opt: List[str] = typer.Option(
        [], rich_help_panel=METER,
        help="Meter option KEY=VALUE (repeatable), e.g. shunt_ohm=0.1."),
    boundary: Optional[str] = typer.Option(
        None, rich_help_panel=METER,
        help="What the meter's figure includes, as wired: soc, board, board+accelerator, target-supply, ..."),
    rate: Optional[str] = opt.rate(help="Inference rate: 10, 1/s, 2/min, 30/h."),
    duty: Optional[float] = typer.Option(
        None, callback=opt.within(R.DUTY), help="Duty cycle in (0, 1]: fraction of time spent inferring."),
    idle_s: float = typer.Option(
        3.0, callback=opt.within(R.IDLE_S), rich_help_panel=METER,
        help="Length of each quiet window before and after the run, seconds."),
    margin_s: Optional[float] = typer.Option(
        None, callback=opt.within(R.MARGIN_S), rich_help_panel=METER,
        help="Largest margin around an inference counted as its wake-up (default: half the period)."),
    alignment: str = typer.Option(
        "auto", rich_help_panel=METER,
        help="auto, clock (device timestamps) or marker (GPIO edges)."),
    rt: RuntimeArgs = RuntimeArgs(),    # --kernels, --threads, --delegate, --inputs, --seed
    min_samples: int = typer.Option(
        30, callback=opt.within(R.MIN_SAMPLES), rich_help_panel=opt.STOPPING, help="Minimum measured inferences."),
    min_time: float = typer.Option(
        10.0, callback=opt.within(R.MIN_TIME_S), rich_help_panel=opt.STOPPING, help="Minimum measuring time, seconds."),
    max_time: float = typer.Option(
        60.0, callback=opt.within(R.MAX_TIME_S), rich_help_panel=opt.STOPPING, help="Maximum measuring time, seconds."),
    *,
    run: RunArgs,                       # given by edgebench.cli.runargs.command
) -> None:
    """Energy per inference, idle power and wake-up energy at a fixed rate or duty cycle."""
    # lazy: numpy, pydantic, rich (import numpy 460 ms, pydantic 199 ms, rich 52 ms), kept off `edgebench VERB --help`
    from edgebench.bench.energy import estimate_energy, measure_energy, simulated_energy
    from edgebench.bench.energy_analysis import EnergyOptions
    from edgebench.boards.profile import SIM_CLIENT
    from edgebench.cli.output import get_err_console
    from edgebench.power import open_meter, parse_options
    from edgebench.stats.energy import parse_rate

    err = get_err_console()
    opts = EnergyOptions(rate_hz=parse_rate(rate) if rate is not None else None, duty=duty, idle_s=idle_s,
                         margin_s=margin_s, alignment=alignment, **rt.options(), min_samples=min_samples,
                         min_time_s=min_time, max_time_s=max_time, cpus=run.cpus)
    opts.validate()

    if is_farm(run.board) and meter is not None:   # before a place is reserved
        raise UsageError(f"--meter {meter} is read by this computer, but {run.board} is a labgrid farm's board "
                         "elsewhere: the farm exports no power meters",
                         "run edgebench energy on the computer the meter is wired to (docs/farm.md)")
    assert model is not None                # runargs.before refused a run without one
    profile = run.profile()
    show = run.progress(model.name, _progress(err, model.name), max_time_s=max_time)
    where = dict(runs_root=run.runs_dir, url=run.url, progress=show)
    if profile.client_kind == SIM_CLIENT:
        if meter is not None or meter_port or meter_opt:
            raise UsageError(f"board {profile.name} is simulated: its power comes from its power model, not a meter",
                             "drop --meter, --meter-port and --meter-opt")
        result, run_dir = simulated_energy(model, profile, opts, boundary=boundary, **where)
    elif meter is None:
        if meter_port or meter_opt or boundary:
            raise UsageError("--meter-port, --meter-opt and --boundary need --meter")
        result, run_dir = estimate_energy(model, profile, opts, **where)
    else:
        m = open_meter(meter, meter_port, parse_options(meter_opt), boundary)
        result, run_dir = measure_energy(model, profile, opts, m, **where)
    end_live_line(err)
    run.show(result, run_dir)
