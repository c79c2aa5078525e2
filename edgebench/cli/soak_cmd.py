"""`edgebench soak MODEL --board B`: sustained behaviour under heat, until a statistical steady state."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from edgebench.cli.app import app


def parse_rate(text: Optional[str]) -> Optional[float]:
    """``continuous`` (default) or a positive number of requests per second."""
    from edgebench.errors import UsageError

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


def _conditions(window: dict) -> str:
    """' at 79.5 °C, 1.60 GHz': the medians of the telemetry in a window, where known."""
    bits = [f"{window['temp_c']:.1f} °C" if window.get("temp_c") is not None else None,
            f"{window['freq_hz'] / 1e9:.2f} GHz" if window.get("freq_hz") else None]
    bits = [x for x in bits if x]
    return f" at {', '.join(bits)}" if bits else ""


def print_soak(console, result, run_dir) -> None:
    from rich.markup import escape

    from edgebench.cli.render import latency_table
    from edgebench.report import format as fmt

    soak = result.extra.get("soak") or {}
    if result.latency:
        console.print(latency_table(result, title=f"{result.model.get('name')} on {result.board.get('name')}, "
                                                  f"{result.label}, sustained (final window)"))
    b, s = soak.get("burst") or {}, soak.get("sustained") or {}
    if b and s:
        ratio = soak.get("sustained_over_burst")
        console.print(f"burst (first {b['span_s']:.0f} s): {fmt.rate(b['throughput_per_s'])}/s, median "
                      f"{fmt.duration(b['median_s'])}{_conditions(b)}; sustained: {fmt.rate(s['throughput_per_s'])}/s, "
                      f"median {fmt.duration(s['median_s'])}{_conditions(s)}"
                      + (f"; sustained/burst {ratio:.2f}" if ratio else ""))
    w = (result.power or {}).get("window") or {}
    if w.get("per_inference_j") is not None:
        from edgebench.stats.energy import si

        avg = f", average {si(w['avg_power_w'], 'W')}" if w.get("avg_power_w") is not None else ""
        console.print(f"energy ({w['window']} window): {si(w['per_inference_j'], 'J')} per inference{avg} "
                      + escape(f"[{w['label']}]"))
    v = soak.get("verdict") or {}
    if v:
        mark = "reached" if soak.get("steady") else "NOT reached"
        console.print(f"steady state {mark} after {soak.get('duration_s', 0):.0f} s: {escape(v.get('reason', ''))}")
    th = soak.get("thermal") or {}
    if th.get("max_temp_c") is not None:
        steady_t = th.get("steady_temp_c")
        console.print(f"temperature: max {th['max_temp_c']:.1f} °C at {th.get('max_temp_at_s', 0):.0f} s, steady "
                      f"{'n/a' if steady_t is None else f'{steady_t:.1f} °C'}; first throttle: "
                      + ("none" if th.get("time_to_first_throttle_s") is None
                         else f"{th['time_to_first_throttle_s']:.0f} s"))
    elif th:
        console.print("temperature: no thermal source (thermal steady state not judged)")
    events = {k: e for k, e in (th.get("throttle_events") or {}).items() if e.get("events")}
    if events:
        console.print("throttle events: " + ", ".join(f"{k} ×{e['events']} ({e['time_s']:.0f} s)"
                                                       for k, e in events.items()))
    if th.get("time_at_frequency"):
        console.print(f"time at frequency ({th.get('frequency_source')}): " + ", ".join(
            f"{f['freq_hz'] / 1e9:.2f} GHz {100 * (f['fraction'] or 0):.0f}%" for f in th["time_at_frequency"][:6]))
    if th.get("telemetry_cost_fraction") is not None:
        console.print(f"telemetry: {th.get('telemetry_samples')} samples on the device, cost "
                      f"{100 * th['telemetry_cost_fraction']:.3f}% of the run")
    cool = soak.get("cool_down")
    if cool:
        console.print(f"cool-down: {escape(cool.get('reason', ''))}")
    for w in result.warnings:
        console.print(f"[yellow]warning ({w.get('code')}):[/] {escape(str(w.get('message')))} — "
                      f"{escape(str(w.get('remedy')))}")
    if result.extra.get("claim"):
        console.print(f"[bold]claim:[/] {escape(result.extra['claim'])}")
    console.print(f"run stored in {run_dir} ({result.status})")


@app.command()
def soak(
    model: Optional[Path] = typer.Argument(None, help="The .tflite model to soak (omit with --recover)."),
    board: str = typer.Option("host", "--board", "-b", help="Board profile name (see `edgebench boards`)."),
    cool_down: bool = typer.Option(False, "--cool-down", help="First idle until the temperature is flat."),
    cool_timeout: float = typer.Option(600.0, help="Give up cooling down after this many seconds."),
    rate: Optional[str] = typer.Option(None, help="Requests per second, or 'continuous' (default: back to back)."),
    window: float = typer.Option(60.0, help="Trailing window (s) over which temperature and latency must be flat."),
    burst: float = typer.Option(5.0, help="Seconds at the start reported as the burst figure."),
    max_duration: float = typer.Option(1800.0, help="Stop after this many seconds (device clock) even if not steady."),
    until: str = typer.Option("steady", help="'steady' (stop at steady state) or 'max' (fixed duration)."),
    telemetry_hz: float = typer.Option(2.0, help="Telemetry samples per second on the device (at most 10)."),
    temp_floor: float = typer.Option(0.5, help="Largest negligible temperature change per window, °C."),
    latency_floor: float = typer.Option(0.01, help="Largest negligible latency change per window, fraction."),
    kernels: str = typer.Option("xnnpack", help="xnnpack, builtin or reference."),
    threads: int = typer.Option(1, help="Interpreter threads."),
    delegate: Optional[str] = typer.Option(None, help="Delegate to load, e.g. edgetpu."),
    inputs: Optional[Path] = typer.Option(None, help=".npy/.npz inputs (default: seeded random in range)."),
    seed: int = typer.Option(0, help="Seed of the random inputs."),
    runs_dir: Path = typer.Option(Path("runs"), help="Where run folders are written."),
    url: Optional[str] = typer.Option(None, help="Override the board's address."),
    boards_dir: List[Path] = typer.Option([], help="Extra folder of board profiles (repeatable)."),
    recover: Optional[Path] = typer.Option(None, help="Finish a soak run folder left 'running' by a crash."),
    json_out: bool = typer.Option(False, "--json", help="Print the run as JSON on stdout."),
) -> None:
    """Run a model until the board reaches thermal steady state; burst vs sustained figures."""
    from edgebench.bench.soak import SoakOptions, recover_run, run_soak
    from edgebench.boards.registry import get_profile
    from edgebench.cli.output import emit_json, get_console
    from edgebench.errors import UsageError

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
