"""Thermal runs on a terminal: a soak (burst against sustained, steady state, throttling) and a
sweep (one row per point)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from rich.markup import escape
from rich.table import Table

from edgebench.bench.sweep import plot_note
from edgebench.cli.render import latency_table, print_warnings
from edgebench.report import format as fmt
from edgebench.results.figures.points import Point
from edgebench.results.figures.thermal import SoakWindow
from edgebench.results.model import RunResult
from edgebench.stats.energy import si


def _conditions(window: SoakWindow) -> str:
    """' at 79.5 °C, 1.60 GHz': the medians of the telemetry in a window, where known."""
    bits = [x for x in (f"{window.temp_c:.1f} °C" if window.temp_c is not None else None,
                        f"{window.freq_hz / 1e9:.2f} GHz" if window.freq_hz else None) if x]
    return f" at {', '.join(bits)}" if bits else ""


def print_soak(console, result: RunResult, run_dir) -> None:
    soak = result.extra.soak
    if result.latency:
        console.print(latency_table(result, title=f"{result.model.name} on {result.board.name}, "
                                                  f"{result.label}, sustained (final window)"))
    b, s = soak.burst, soak.sustained
    if b and s:
        ratio = soak.sustained_over_burst
        console.print(f"burst (first {b.span_s or 0:.0f} s): {fmt.rate(b.throughput_per_s)}/s, median "
                      f"{fmt.duration(b.median_s)}{_conditions(b)}; sustained: "
                      f"{fmt.rate(s.throughput_per_s)}/s, median {fmt.duration(s.median_s)}{_conditions(s)}"
                      + (f"; sustained/burst {ratio:.2f}" if ratio else ""))
    w = result.power.window
    if w.per_inference_j is not None:
        avg = f", average {si(w.avg_power_w, 'W')}" if w.avg_power_w is not None else ""
        console.print(f"energy ({w.window} window): {si(w.per_inference_j, 'J')} per inference{avg} "
                      + escape(f"[{w.label}]"))
    v = soak.verdict
    if v:
        mark = "reached" if soak.steady else "NOT reached"
        console.print(f"steady state {mark} after {soak.duration_s or 0:.0f} s: {escape(str(v.reason or ''))}")
    th = soak.thermal
    if th.max_temp_c is not None:
        steady_t, first = th.steady_temp_c, th.time_to_first_throttle_s
        console.print(f"temperature: max {th.max_temp_c:.1f} °C at {th.max_temp_at_s or 0:.0f} s, steady "
                      f"{'n/a' if steady_t is None else f'{steady_t:.1f} °C'}; first throttle: "
                      + ("none" if first is None else f"{first:.0f} s"))
    elif th:
        console.print("temperature: no thermal source (thermal steady state not judged)")
    events = {k: e for k, e in (th.throttle_events or {}).items() if e.events}
    if events:
        console.print("throttle events: " + ", ".join(f"{k} ×{e.events} ({e.time_s or 0:.0f} s)"
                                                       for k, e in events.items()))
    if th.time_at_frequency:
        console.print(f"time at frequency ({th.frequency_source}): " + ", ".join(
            f"{(f.freq_hz or 0) / 1e9:.2f} GHz {100 * (f.fraction or 0):.0f}%" for f in th.time_at_frequency[:6]))
    if th.telemetry_cost_fraction is not None:
        console.print(f"telemetry: {th.telemetry_samples} samples on the device, cost "
                      f"{100 * th.telemetry_cost_fraction:.3f}% of the run")
    cool = soak.cool_down       # a free-form mapping (the soak's cool-down before it started)
    if cool:
        console.print(f"cool-down: {escape(cool.get('reason', ''))}")
    print_warnings(console, result, run_dir=run_dir)
    if result.extra.claim:
        console.print(f"[bold]claim:[/] {escape(result.extra.claim)}")
    console.print(f"run stored in {run_dir} ({result.status})")


def _cells(p: Point, energy_label: Optional[str] = None) -> list:
    """One point as narrow cells (the table fits 80 columns): the unit of the interval is the
    median's; an energy label is written only where it differs from the table's caption."""
    lat, en = p.latency, p.energy
    name = f"{p.id} {p.name}"
    if p.status == "not-run":
        return [name, "", "", "", "", "", "", "not run"]
    tp = fmt.rate(p.throughput_per_s) if p.throughput_per_s else "n/a"
    if p.axis == "duty" and p.realized_duty is not None and p.duty \
            and abs(p.realized_duty - p.duty) > 0.05 * p.duty:
        tp += f"\n(duty {p.realized_duty:.2g})"
    if p.rate_sustained is False:
        tp += f"\n[red]asked {fmt.rate(p.requested_rate_hz)}/s: NOT sustained[/]"
    latency = "n/a"
    if lat.median_s:
        ci = fmt.duration_range(lat.ci_low_s, lat.ci_high_s)
        median = fmt.duration(lat.median_s)
        if ci.split(" ")[-1] == median.split(" ")[-1]:
            ci = ci.rsplit(" ", 1)[0]
        latency = f"{median} [{ci}]"
    temp = "n/a" if p.steady_temp_c is None else f"{p.steady_temp_c:.1f}"
    clock = f"{p.sustained_freq_hz / 1e9:.2f}" if p.sustained_freq_hz else "n/a"
    throttled = {None: "n/a", True: f"at {p.time_to_first_throttle_s or 0:.0f} s", False: "no"}[p.throttled]
    energy = "n/a"
    if en.per_inference_j:
        energy = si(en.per_inference_j, "J") + (f" ({en.label})" if en.label != energy_label else "")
    error = p.error
    if error and not p.run_id:
        verdict = f"[red]failed[/]: {error}"
    elif p.steady:
        verdict = f"{p.duration_s or 0:.0f} s"
    else:
        verdict = f"[yellow]NOT steady[/] ({p.duration_s or 0:.0f} s)"
    if p.status == "incomplete":
        verdict += f"\n[yellow]incomplete[/]: {p.status_reason}"
    return [name, tp, latency, temp, clock, throttled, energy, verdict]


def print_sweep(console, result: RunResult, run_dir) -> None:
    energy_label = result.power.label
    mixed = [w for w in result.warnings if w.code == "mixed-labels"]
    if mixed:
        console.print(f"[bold red]{escape(str(mixed[0].message))}[/]")
    table = Table(title=f"sweep: {result.model.name} on {result.board.name}, {result.label}; "
                        "sustained figures", title_justify="left", caption=plot_note(result.label, energy_label),
                  caption_justify="left", box=None, pad_edge=False, padding=(0, 1, 0, 0), header_style="bold underline")
    for col in ("point", "inf/s", "median [95% CI]", "°C", "GHz", "throttled", "J/inf", "steady after"):
        table.add_column(col, overflow="fold", justify="left" if col in ("point", "throttled", "steady after")
                         else "right")
    for p in result.extra.points or []:
        table.add_row(*_cells(p, energy_label))
    console.print(table)
    print_warnings(console, result, skip=("mixed-labels",), run_dir=run_dir)
    if result.extra.plots:
        console.print("plots: " + ", ".join(escape(str(Path(run_dir) / p)) for p in result.extra.plots))
    if result.extra.claim:
        console.print(f"[bold]summary:[/] {escape(result.extra.claim)}")
    console.print(f"run stored in {escape(str(run_dir))} ({result.status})")
