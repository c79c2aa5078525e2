"""`edgebench soak MODEL --board B`: sustained behaviour under heat, until a statistical steady state."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from edgebench import ranges as R
from edgebench.cli import options as opt
from edgebench.cli.runargs import RunArgs, RuntimeArgs
from edgebench.errors import UsageError
from edgebench.report import format as fmt


def parse_rate(text: Optional[str]) -> Optional[float]:
    """``continuous`` (default) or a positive rate: 20, 20/s, 2/min."""
    # lazy: numpy (import numpy 460 ms measured), kept off `edgebench VERB --help`
    from edgebench.stats.energy import parse_rate as parse

    if text is None or text.strip().lower() in ("continuous", "max", ""):
        return None
    try:
        return parse(text)
    except UsageError as exc:
        if "not a number" not in exc.message:
            raise
        raise UsageError(f"--rate {text!r} is neither a number nor 'continuous'",
                         "e.g. --rate 20, --rate 2/min, or --rate continuous") from None


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
    # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
    from rich.live import Live
    from rich.table import Table

    from edgebench.cli.output import get_err_console

    err = get_err_console()
    lines: list[str] = []
    live: Live | None = None

    def render(ev: dict):
        t = Table.grid(padding=(0, 2))
        t.add_column(style="bold")
        t.add_column()
        t.add_row("soak", title)
        for line in lines[-3:]:
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
            lines.append(text)
        nonlocal live
        if live is None:
            live = Live(render(ev), console=err, refresh_per_second=4, transient=False)
            live.start()
        else:
            live.update(render(ev))

    def stop() -> None:
        nonlocal live
        if live is not None:
            live.stop()
            live = None
            if not err.is_terminal:
                err.line()

    return callback, stop


def soak(
    model: Optional[Path] = typer.Argument(None, help="The .tflite model to soak (omit with --recover)."),
    cool_down: bool = opt.cool_down(rich_help_panel=opt.STEADY),
    cool_timeout: float = opt.cool_timeout(rich_help_panel=opt.STEADY),
    rate: Optional[str] = opt.rate(help="Requests per second (50, 50/s, 2/min), or 'continuous' (default: back "
                                        "to back)."),
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
    rt: RuntimeArgs = RuntimeArgs(),    # --kernels, --threads, --delegate, --inputs, --seed
    *,
    run: RunArgs,                       # given by edgebench.cli.runargs.command
) -> None:
    """Run a model until the board reaches thermal steady state; burst vs sustained figures."""
    # lazy: numpy, pydantic (import numpy 460 ms, pydantic 199 ms measured), kept off `edgebench VERB --help`
    from edgebench.bench.soak import SoakOptions, run_soak

    assert model is not None                # runargs.before refused a run without one
    profile = run.profile()
    opts = SoakOptions(rate_hz=parse_rate(rate), **rt.options(), cool_down=cool_down,
                       cool_timeout_s=cool_timeout, window_s=window, burst_s=burst, max_duration_s=max_duration,
                       until=until, telemetry_hz=telemetry_hz, temp_floor_c=temp_floor,
                       latency_floor_rel=latency_floor, cpus=run.cpus)
    callback, stop = live_view(f"{model.name} on {profile.name}")
    show = run.progress(model.name, callback, stop)
    try:
        with run.client() as client:
            result, run_dir = run_soak(model, profile, opts, runs_root=run.runs_dir, url=run.url, progress=show,
                                       client=client)
    finally:
        show.close()
    run.show(result, run_dir)
