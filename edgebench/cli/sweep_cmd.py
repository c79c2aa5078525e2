"""`edgebench sweep MODEL --board B`: soaks over duty cycle or rate × variant × kernels/delegate × threads."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from edgebench import ranges as R
from edgebench.cli import options as opt
from edgebench.cli.runargs import RunArgs
from edgebench.errors import UsageError, interrupt_reason
from edgebench.report import format as fmt


def _items(text: str, option: str) -> list:
    items = [t.strip() for t in str(text).split(",")]
    if not text or any(not t for t in items):
        raise UsageError(f"{option} {text!r} is not a comma-separated list", f"e.g. {option} 0.1,1.0")
    return items


def parse_duties(text: str) -> tuple:
    out = []
    for t in _items(text, "--duty"):
        try:
            out.append(float(t))
        except ValueError:
            raise UsageError(f"--duty {t!r} is not a number",
                             "give fractions of time spent inferring, e.g. --duty 0.01,0.1,0.5,1.0") from None
    return tuple(out)


def parse_rates(text: str) -> tuple:
    # lazy: numpy (import numpy 460 ms measured), kept off `edgebench VERB --help`
    from edgebench.stats.energy import parse_rate

    return tuple(parse_rate(t) for t in _items(text, "--rate"))


def parse_threads(text: str) -> tuple:
    try:
        return tuple(int(t) for t in _items(text, "--threads"))
    except ValueError:
        raise UsageError(f"--threads {text!r}: whole numbers only", "e.g. --threads 1,4") from None


def parse_delegates(text: str) -> tuple:
    return tuple(None if t.lower() in ("none", "no", "cpu") else t for t in _items(text, "--delegate"))


def progress_view():
    """A progress callback on stderr: one line per finished point, a live line for the running one."""
    # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
    from rich.live import Live
    from rich.markup import escape

    from edgebench.cli.output import get_err_console

    err = get_err_console()
    state: dict = {"live": None, "head": "", "now": "", "run_dir": None}

    def render():
        # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
        from rich.table import Table

        t = Table.grid(padding=(0, 2))
        t.add_column(style="bold")
        t.add_column()
        t.add_row("sweep", escape(state["head"]))
        t.add_row("", escape(state["now"]))
        return t

    def stop_live():
        if state["live"] is not None:
            state["live"].stop()
            state["live"] = None

    def callback(ev: dict) -> None:
        kind = ev.get("event")
        if kind == "sweep-start":
            state["run_dir"] = ev["run_dir"]
            err.print(f"sweep: {ev['points']} points by {ev['axis']}, {ev['label']}, into {escape(ev['run_dir'])}")
            return
        if kind in ("point-done", "point-failed"):
            stop_live()
            if kind == "point-failed":
                err.print(f"[red]✗[/] point {ev['index']}/{ev['of']} {escape(ev['name'])}: {escape(ev['error'])}")
            else:
                p = ev["point"]
                temp = p.get("steady_temp_c")
                err.print(f"✓ point {ev['index']}/{ev['of']} {escape(ev['name'])}: "
                          f"{'steady' if p.get('steady') else 'NOT steady'} after {p.get('duration_s') or 0:.0f} s, "
                          f"{fmt.rate(p.get('throughput_per_s'))}/s"
                          + ("" if temp is None else f", {temp:.1f} °C")
                          + (f" [red]({escape(p['rate_message'])})[/]" if p.get("rate_message") else ""))
            return
        if kind == "point-start":
            state["head"] = f"point {ev['index']}/{ev['of']}: {ev['name']}"
            state["now"] = "probing and loading…"
        elif kind == "chunk":
            temp, freq = ev.get("temp_c"), ev.get("freq_hz")
            state["now"] = (f"{ev['elapsed_s']:.0f} s of max {ev['max_duration_s']:.0f} s, "
                            f"{'no sensor' if temp is None else f'{temp:.1f} °C'}, "
                            f"{'clock n/a' if not freq else f'{freq / 1e9:.2f} GHz'}, "
                            f"latency {fmt.duration(ev['latency_s'])}, "
                            f"{'STEADY' if ev['steady'] else 'not yet steady'}")
        elif kind == "cool":
            elapsed = ev.get("elapsed_s") or 0.0
            state["now"] = f"cooling down: {ev.get('message') or f'{elapsed:.0f} s'}"
        else:
            return
        if state["live"] is None:
            live = state["live"] = Live(render(), console=err, refresh_per_second=4, transient=True)
            live.start()
        else:
            state["live"].update(render())

    return callback, stop_live, state


def _keeping(show, state: dict):
    """``show``, noting the sweep's folder first (kept on Ctrl-C whether or not a live view runs)."""
    def callback(ev: dict) -> None:
        if ev.get("event") == "sweep-start":
            state["run_dir"] = ev["run_dir"]
        show(ev)
    return callback


def sweep(
    model: Optional[Path] = typer.Argument(None, help="The .tflite model to sweep (more with --variant; omit with "
                                           "--recover)."),
    duty: Optional[str] = typer.Option(None, help="Duty cycles in (0, 1], comma separated "
                                                  "(default 0.01,0.1,0.5,1.0; 1 = continuous)."),
    rate: Optional[str] = opt.rate(help="Inference rates instead of duty cycles, comma separated, e.g. 1,10,100 "
                                        "(each 50, 50/s, 2/min or 30/h)."),
    threads: str = opt.threads(
        "1", help="Interpreter threads, comma separated, e.g. 1,4.", rich_help_panel=opt.RUNTIME),
    variant: List[Path] = typer.Option([], "--variant", help="Another model of the grid, e.g. the FP32 one "
                                                             "(repeatable)."),
    kernels: str = opt.kernels(
        help="Kernel sets, comma separated: xnnpack, builtin, reference.", rich_help_panel=opt.RUNTIME),
    delegate: str = opt.delegate(
        "none", help="Delegates, comma separated, 'none' for the CPU, e.g. none,edgetpu.",
        rich_help_panel=opt.RUNTIME),
    max_duration_per_point: float = typer.Option(
        900.0, callback=opt.within(R.MAX_DURATION_PER_POINT_S), rich_help_panel=opt.STEADY,
        help="Stop a point after this many seconds (device clock) even if not steady."),
    window: float = opt.window(
        help="Trailing window (s) for the steady-state verdict (widened at low rates to hold 500 inferences).",
        rich_help_panel=opt.STEADY),
    burst: float = opt.burst(
        help="Seconds at the start of each point reported as its burst.", rich_help_panel=opt.STEADY),
    cool_down: bool = opt.cool_down(
        help="Idle before each point until the temperature is flat.", rich_help_panel=opt.STEADY),
    cool_timeout: float = opt.cool_timeout(rich_help_panel=opt.STEADY),
    telemetry_hz: float = opt.telemetry_hz(rich_help_panel=opt.STEADY),
    inputs: Optional[Path] = opt.inputs(rich_help_panel=opt.RUNTIME),
    seed: int = opt.seed(rich_help_panel=opt.RUNTIME),
    *,
    run: RunArgs,                       # given by edgebench.cli.runargs.command
) -> None:
    """Soak to steady state at every point of a grid; one table, one folder, PNG plots."""
    # lazy: numpy, pydantic (import numpy 460 ms, pydantic 199 ms measured), kept off `edgebench VERB --help`
    from edgebench.bench.sweep import SweepOptions, run_sweep
    from edgebench.results import store

    opts = SweepOptions(duty=parse_duties(duty) if duty is not None else None,
                        rate_hz=parse_rates(rate) if rate is not None else None,
                        threads=parse_threads(threads), variants=tuple(str(v) for v in variant),
                        kernels=tuple(_items(kernels, "--kernels")), delegates=parse_delegates(delegate),
                        max_duration_per_point_s=max_duration_per_point, window_s=window, burst_s=burst,
                        cool_down=cool_down, cool_timeout_s=cool_timeout, telemetry_hz=telemetry_hz,
                        inputs=str(inputs) if inputs else None, seed=seed, cpus=run.cpus)
    profile = run.profile()
    callback, stop, state = progress_view()
    show = run.progress(model.name if model else "", callback, stop)
    try:
        with run.client() as client:
            result, run_dir = run_sweep(model, profile, opts, runs_root=run.runs_dir, url=run.url,
                                        progress=_keeping(show, state), client=client)
    except KeyboardInterrupt as exc:
        stop()
        if not state["run_dir"]:
            raise
        # finished points are kept: show them, then exit as interrupted (130). typer turns a
        # KeyboardInterrupt into a return value that the entry point does not pass on, hence SystemExit.
        result = store.read_result(state["run_dir"])
        try:
            run.show(result, state["run_dir"])
        except Exception:  # noqa: BLE001 - showing the table is a courtesy; the data are on disk
            pass
        finished = result.stopping.finished or 0
        print(f"{interrupt_reason(exc)}: {finished} of {len(result.extra.points or [])} points finished; kept, "
              f"marked incomplete, in {state['run_dir']}", file=sys.stderr)
        raise SystemExit(130) from None
    finally:
        stop()
    run.show(result, run_dir)
