"""`edgebench soak MODEL --board B`: sustained behaviour under heat, until a statistical steady state."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from edgebench import ranges as R
from edgebench.cli import options as opt
from edgebench.cli.app import app
from edgebench.cli.render.thermal import print_soak
from edgebench.errors import UsageError


def parse_rate(text: Optional[str]) -> Optional[float]:
    """``continuous`` (default) or a positive number of requests per second."""
    if text is None or text.strip().lower() in ("continuous", "max", ""):
        return None
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"--rate {text!r} is neither a number nor 'continuous'", "e.g. --rate 20") from None
    if not value > 0:
        raise UsageError(f"--rate must be positive, got {text}", "e.g. --rate 20, or --rate continuous")
    return value


def _trend_text(tr: Optional[dict]) -> str:
    if not tr:
        return "not judged"
    if tr.get("change") is None:
        return f"{tr['state']} ({tr['covered_s']:.0f}/{tr['window_s']:.0f} s)"
    unit = tr["unit"]
    if unit == "s":
        ch, lo, hi = (100 * tr[k] / tr["level"] if tr["level"] else 0.0
                      for k in ("change", "change_low", "change_high"))
        return f"{tr['state']} ({ch:+.2f}%, CI {lo:+.2f}…{hi:+.2f}%)"
    return f"{tr['state']} ({tr['change']:+.2f} {unit}, CI {tr['change_low']:+.2f}…{tr['change_high']:+.2f})"


def live_view(title: str):
    """A progress callback drawing a rich Live panel on stderr; returns (callback, stop)."""
    from rich.live import Live
    from rich.table import Table

    from edgebench.cli.output import get_err_console
    from edgebench.report import format as fmt

    err = get_err_console()
    state = {"live": None, "lines": []}

    def render(ev: dict):
        t = Table.grid(padding=(0, 2))
        t.add_column(style="bold")
        t.add_column()
        t.add_row("soak", title)
        for line in state["lines"][-3:]:
            t.add_row("", line)
        if ev.get("event") == "cool":
            temp = ev.get("temp_c")
            t.add_row("cool-down", f"{ev.get('elapsed_s', 0):.0f} s, "
                      f"{'n/a' if temp is None else f'{temp:.1f} °C'}, trend {_trend_text(ev.get('trend'))}")
        elif ev.get("event") == "chunk":
            temp, freq = ev.get("temp_c"), ev.get("freq_hz")
            t.add_row("time", f"{ev['elapsed_s']:.0f} s of max {ev['max_duration_s']:.0f} s, "
                      f"n={ev['n']:,}")
            t.add_row("now", f"{'no sensor' if temp is None else f'{temp:.1f} °C'}, "
                      f"{'clock n/a' if not freq else f'{freq / 1e9:.2f} GHz'}, latency "
                      f"{fmt.duration(ev['latency_s'])} ({1 / ev['latency_s']:,.0f}/s)")
            verdict = "STEADY" if ev["steady"] else "not yet steady"
            temp_text = _trend_text(ev.get("temperature")) if ev.get("thermal_judged") else "not judged (no sensor)"
            t.add_row(f"last {ev['window_s']:.0f} s", f"temperature {temp_text}; latency "
                      f"{_trend_text(ev.get('latency'))} → {verdict}")
        return t

    def callback(ev: dict) -> None:
        if ev["event"] in ("connect", "load", "no-thermal") or (ev["event"] == "cool" and "message" in ev):
            text = {"connect": f"connecting to {ev.get('board')}…", "load": f"loading {ev.get('model')}…"}.get(
                ev["event"], ev.get("message", ""))
            state["lines"].append(text)
        if state["live"] is None:
            state["live"] = Live(render(ev), console=err, refresh_per_second=4, transient=False)
            state["live"].start()
        else:
            state["live"].update(render(ev))

    def stop() -> None:
        if state["live"] is not None:
            state["live"].stop()
            state["live"] = None
            if not err.is_terminal:
                err.line()

    return callback, stop


@app.command()
def soak(
    model: Optional[Path] = typer.Argument(None, help="The .tflite model to soak (omit with --recover)."),
    board: str = opt.board(rich_help_panel=opt.BOARD),
    cool_down: bool = opt.cool_down(rich_help_panel=opt.STEADY),
    cool_timeout: float = opt.cool_timeout(rich_help_panel=opt.STEADY),
    rate: Optional[str] = typer.Option(None, help="Requests per second, or 'continuous' (default: back to back)."),
    window: float = opt.window(rich_help_panel=opt.STEADY),
    burst: float = opt.burst(rich_help_panel=opt.STEADY),
    max_duration: float = typer.Option(
        1800.0, callback=opt.within(R.MAX_DURATION_S), rich_help_panel=opt.STEADY,
        help="Stop after this many seconds (device clock) even if not steady."),
    until: str = typer.Option(
        "steady", rich_help_panel=opt.STEADY,
        help="'steady' (stop at steady state) or 'max' (fixed duration)."),
    telemetry_hz: float = opt.telemetry_hz(rich_help_panel=opt.STEADY),
    temp_floor: float = typer.Option(
        0.5, callback=opt.within(R.TEMP_FLOOR_C), rich_help_panel=opt.STEADY,
        help="Largest negligible temperature change per window, °C."),
    latency_floor: float = typer.Option(
        0.01, callback=opt.within(R.LATENCY_FLOOR), rich_help_panel=opt.STEADY,
        help="Largest negligible latency change per window, fraction."),
    kernels: str = opt.kernels(rich_help_panel=opt.RUNTIME),
    threads: int = opt.threads(rich_help_panel=opt.RUNTIME),
    delegate: Optional[str] = opt.delegate(rich_help_panel=opt.RUNTIME),
    inputs: Optional[Path] = opt.inputs(rich_help_panel=opt.RUNTIME),
    seed: int = opt.seed(rich_help_panel=opt.RUNTIME),
    runs_dir: Path = opt.runs_dir(rich_help_panel=opt.OUTPUT),
    url: Optional[str] = opt.url(rich_help_panel=opt.BOARD),
    boards_dir: List[Path] = opt.boards_dir(rich_help_panel=opt.BOARD),
    farm: Optional[str] = opt.farm(rich_help_panel=opt.BOARD),
    recover: Optional[Path] = opt.recover("soak", rich_help_panel=opt.OUTPUT),
    json_out: bool = opt.json_flag("the run", rich_help_panel=opt.OUTPUT),
) -> None:
    """Run a model until the board reaches thermal steady state; burst vs sustained figures."""
    from edgebench.bench.soak import SoakOptions, recover_run, run_soak
    from edgebench.boards.registry import get_profile
    from edgebench.cli.output import emit_json, get_console

    if farm is not None:   # every matching place of a labgrid farm (cli/farm_fanout.py)
        from edgebench.cli.farm_fanout import fan_out

        if recover is not None:
            raise UsageError("--farm runs new work; --recover resumes one run", "give one of the two")
        return fan_out("soak", farm, board, runs_dir, json_out)
    if recover is not None:
        result = recover_run(recover)
        emit_json(result) if json_out else print_soak(get_console(), result, recover)
        return
    if model is None:
        raise UsageError("missing MODEL", "edgebench soak MODEL --board B")
    profile = get_profile(board, extra_dirs=tuple(boards_dir))
    opts = SoakOptions(rate_hz=parse_rate(rate), kernels=kernels, threads=threads, delegate=delegate,
                       inputs=str(inputs) if inputs else None, seed=seed, cool_down=cool_down,
                       cool_timeout_s=cool_timeout, window_s=window, burst_s=burst, max_duration_s=max_duration,
                       until=until, telemetry_hz=telemetry_hz, temp_floor_c=temp_floor,
                       latency_floor_rel=latency_floor)
    callback, stop = live_view(f"{model.name} on {profile.name}")
    try:
        result, run_dir = run_soak(model, profile, opts, runs_root=runs_dir, url=url, progress=callback)
    finally:
        stop()
    if json_out:
        emit_json(result)
    else:
        print_soak(get_console(), result, run_dir)
