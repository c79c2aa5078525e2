"""`edgebench sweep MODEL --board B`: soaks over duty cycle or rate × variant × kernels/delegate × threads."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from edgebench.cli.app import app


def _items(text: str, option: str) -> list:
    from edgebench.errors import UsageError

    items = [t.strip() for t in str(text).split(",")]
    if not text or any(not t for t in items):
        raise UsageError(f"{option} {text!r} is not a comma-separated list", f"e.g. {option} 0.1,1.0")
    return items


def parse_duties(text: str) -> tuple:
    from edgebench.errors import UsageError

    out = []
    for t in _items(text, "--duty"):
        try:
            out.append(float(t))
        except ValueError:
            raise UsageError(f"--duty {t!r} is not a number",
                             "give fractions of time spent inferring, e.g. --duty 0.01,0.1,0.5,1.0") from None
    return tuple(out)


def parse_rates(text: str) -> tuple:
    from edgebench.stats.energy import parse_rate

    return tuple(parse_rate(t) for t in _items(text, "--rate"))


def parse_threads(text: str) -> tuple:
    from edgebench.errors import UsageError

    try:
        return tuple(int(t) for t in _items(text, "--threads"))
    except ValueError:
        raise UsageError(f"--threads {text!r}: whole numbers only", "e.g. --threads 1,4") from None


def parse_delegates(text: str) -> tuple:
    return tuple(None if t.lower() in ("none", "no", "cpu") else t for t in _items(text, "--delegate"))


def progress_view():
    """A progress callback on stderr: one line per finished point, a live line for the running one."""
    from rich.live import Live
    from rich.markup import escape

    from edgebench.cli.output import get_err_console
    from edgebench.report import format as fmt

    err = get_err_console()
    state: dict = {"live": None, "head": "", "now": "", "run_dir": None}

    def render():
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
            state["live"] = Live(render(), console=err, refresh_per_second=4, transient=True)
            state["live"].start()
        else:
            state["live"].update(render())

    return callback, stop_live, state


def _cells(p: dict, energy_label=None) -> list:
    """One point as narrow cells (the table fits 80 columns): the unit of the interval is the
    median's; an energy label is written only where it differs from the table's caption."""
    from edgebench.report import format as fmt
    from edgebench.stats.energy import si

    lat, en = p.get("latency") or {}, p.get("energy") or {}
    if p["status"] == "not-run":
        return [f"{p['id']} {p['name']}", "", "", "", "", "", "", "not run"]
    tp = fmt.rate(p["throughput_per_s"]) if p.get("throughput_per_s") else "n/a"
    if p.get("axis") == "duty" and p.get("realized_duty") is not None and p.get("duty") \
            and abs(p["realized_duty"] - p["duty"]) > 0.05 * p["duty"]:
        tp += f"\n(duty {p['realized_duty']:.2g})"
    if p.get("rate_sustained") is False:
        tp += f"\n[red]asked {p['requested_rate_hz']:.4g}/s: NOT sustained[/]"
    latency = "n/a"
    if lat.get("median_s"):
        ci = fmt.duration_range(lat["ci_low_s"], lat["ci_high_s"])
        median = fmt.duration(lat["median_s"])
        if ci.split(" ")[-1] == median.split(" ")[-1]:
            ci = ci.rsplit(" ", 1)[0]
        latency = f"{median} [{ci}]"
    temp = "n/a" if p.get("steady_temp_c") is None else f"{p['steady_temp_c']:.1f}"
    clock = f"{p['sustained_freq_hz'] / 1e9:.2f}" if p.get("sustained_freq_hz") else "n/a"
    throttled = {None: "n/a", True: f"at {p.get('time_to_first_throttle_s') or 0:.0f} s",
                 False: "no"}[p.get("throttled")]
    energy = "n/a"
    if en.get("per_inference_j"):
        energy = si(en["per_inference_j"], "J") + (f" ({en['label']})" if en.get("label") != energy_label else "")
    if p.get("error") and not p.get("run_id"):
        verdict = f"[red]failed[/]: {p['error']}"
    elif p.get("steady"):
        verdict = f"{p.get('duration_s') or 0:.0f} s"
    else:
        verdict = f"[yellow]NOT steady[/] ({p.get('duration_s') or 0:.0f} s)"
    if p["status"] == "incomplete":
        verdict += f"\n[yellow]incomplete[/]: {p.get('status_reason')}"
    return [f"{p['id']} {p['name']}", tp, latency, temp, clock, throttled, energy, verdict]


def print_sweep(console, result, run_dir) -> None:
    from rich.markup import escape
    from rich.table import Table

    from edgebench.bench.sweep import plot_note

    energy_label = (result.power or {}).get("label")
    mixed = [w for w in result.warnings if w.get("code") == "mixed-labels"]
    if mixed:
        console.print(f"[bold red]{escape(mixed[0]['message'])}[/]")
    table = Table(title=f"sweep: {result.model.get('name')} on {result.board.get('name')}, {result.label}; "
                        "sustained figures", title_justify="left", caption=plot_note(result.label, energy_label),
                  caption_justify="left", box=None, pad_edge=False, padding=(0, 1, 0, 0), header_style="bold underline")
    for col in ("point", "inf/s", "median [95% CI]", "°C", "GHz", "throttled", "J/inf", "steady after"):
        table.add_column(col, overflow="fold", justify="left" if col in ("point", "throttled", "steady after")
                         else "right")
    for p in result.extra.get("points", []):
        table.add_row(*_cells(p, energy_label))
    console.print(table)
    for w in result.warnings:
        if w.get("code") != "mixed-labels":
            console.print(f"[yellow]warning ({w.get('code')}):[/] {escape(str(w.get('message')))} — "
                          f"{escape(str(w.get('remedy')))}")
    if result.extra.get("plots"):
        console.print("plots: " + ", ".join(escape(str(Path(run_dir) / p)) for p in result.extra["plots"]))
    if result.extra.get("claim"):
        console.print(f"[bold]summary:[/] {escape(result.extra['claim'])}")
    console.print(f"run stored in {escape(str(run_dir))} ({result.status})")


@app.command()
def sweep(
    model: Optional[Path] = typer.Argument(None, help="The .tflite model to sweep (more with --variant; omit with "
                                           "--recover)."),
    board: str = typer.Option("host", "--board", "-b", help="Board profile name (see `edgebench boards`)."),
    duty: Optional[str] = typer.Option(None, help="Duty cycles in (0, 1], comma separated "
                                                  "(default 0.01,0.1,0.5,1.0; 1 = continuous)."),
    rate: Optional[str] = typer.Option(None, help="Inference rates per second instead of duty cycles, e.g. 1,10,100."),
    threads: str = typer.Option("1", help="Interpreter threads, comma separated, e.g. 1,4."),
    variant: List[Path] = typer.Option([], "--variant", help="Another model of the grid, e.g. the FP32 one "
                                                             "(repeatable)."),
    kernels: str = typer.Option("xnnpack", help="Kernel sets, comma separated: xnnpack, builtin, reference."),
    delegate: str = typer.Option("none", help="Delegates, comma separated, 'none' for the CPU, e.g. none,edgetpu."),
    max_duration_per_point: float = typer.Option(900.0, help="Stop a point after this many seconds (device "
                                                             "clock) even if not steady."),
    window: float = typer.Option(60.0, help="Trailing window (s) for the steady-state verdict (widened at low "
                                            "rates to hold 500 inferences)."),
    burst: float = typer.Option(5.0, help="Seconds at the start of each point reported as its burst."),
    cool_down: bool = typer.Option(False, "--cool-down", help="Idle before each point until the temperature is flat."),
    cool_timeout: float = typer.Option(600.0, help="Give up cooling down after this many seconds."),
    telemetry_hz: float = typer.Option(2.0, help="Telemetry samples per second on the device (at most 10)."),
    inputs: Optional[Path] = typer.Option(None, help=".npy/.npz inputs (default: seeded random in range)."),
    seed: int = typer.Option(0, help="Seed of the random inputs."),
    runs_dir: Path = typer.Option(Path("runs"), help="Where the sweep's run folder is written."),
    url: Optional[str] = typer.Option(None, help="Override the board's address."),
    boards_dir: List[Path] = typer.Option([], help="Extra folder of board profiles (repeatable)."),
    recover: Optional[Path] = typer.Option(None, help="Finish a sweep folder left 'running' by a kill or a crash "
                                           "(keeps its finished points, recovers the one it was in)."),
    json_out: bool = typer.Option(False, "--json", help="Print the stored sweep run as JSON on stdout."),
) -> None:
    """Soak to steady state at every point of a grid; one table, one folder, PNG plots."""
    from edgebench.bench.sweep import SweepOptions, recover_sweep, run_sweep
    from edgebench.boards.registry import get_profile
    from edgebench.cli.output import emit_json, get_console
    from edgebench.errors import UsageError
    from edgebench.results import store

    if recover is not None:
        if model is not None:
            raise UsageError("give a model to sweep or --recover RUN_DIR, not both")
        result = recover_sweep(recover)
        emit_json(result) if json_out else print_sweep(get_console(), result, recover)
        return
    if model is None:
        raise UsageError("missing the model to sweep", "edgebench sweep MODEL.tflite --board BOARD")

    opts = SweepOptions(duty=parse_duties(duty) if duty is not None else None,
                        rate_hz=parse_rates(rate) if rate is not None else None,
                        threads=parse_threads(threads), variants=tuple(str(v) for v in variant),
                        kernels=tuple(_items(kernels, "--kernels")), delegates=parse_delegates(delegate),
                        max_duration_per_point_s=max_duration_per_point, window_s=window, burst_s=burst,
                        cool_down=cool_down, cool_timeout_s=cool_timeout, telemetry_hz=telemetry_hz,
                        inputs=str(inputs) if inputs else None, seed=seed)
    profile = get_profile(board, extra_dirs=tuple(boards_dir))
    callback, stop, state = progress_view()
    try:
        result, run_dir = run_sweep(model, profile, opts, runs_root=runs_dir, url=url, progress=callback)
    except KeyboardInterrupt as exc:
        from edgebench.errors import interrupt_reason

        stop()
        if not state["run_dir"]:
            raise
        # finished points are kept: show them, then exit as interrupted (130). typer turns a
        # KeyboardInterrupt into a return value that the entry point does not pass on, hence SystemExit.
        result = store.read_result(state["run_dir"])
        try:
            emit_json(result) if json_out else print_sweep(get_console(), result, state["run_dir"])
        except Exception:  # noqa: BLE001 - showing the table is a courtesy; the data are on disk
            pass
        finished = (result.stopping or {}).get("finished", 0)
        print(f"{interrupt_reason(exc)}: {finished} of {len(result.extra.get('points', []))} points finished; kept, "
              f"marked incomplete, in {state['run_dir']}", file=sys.stderr)
        raise SystemExit(130) from None
    finally:
        stop()
    emit_json(result) if json_out else print_sweep(get_console(), result, run_dir)
