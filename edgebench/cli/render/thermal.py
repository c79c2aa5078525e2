"""Thermal runs on a terminal: a soak (burst against sustained, steady state, throttling) and a
sweep (one row per point)."""
from __future__ import annotations

from pathlib import Path

from edgebench.cli.render import latency_table, print_warnings


def _conditions(window: dict) -> str:
    """' at 79.5 °C, 1.60 GHz': the medians of the telemetry in a window, where known."""
    bits = [f"{window['temp_c']:.1f} °C" if window.get("temp_c") is not None else None,
            f"{window['freq_hz'] / 1e9:.2f} GHz" if window.get("freq_hz") else None]
    bits = [x for x in bits if x]
    return f" at {', '.join(bits)}" if bits else ""


def print_soak(console, result, run_dir) -> None:
    from rich.markup import escape

    from edgebench.report import format as fmt

    soak = result.extra.get("soak") or {}
    if result.latency:
        console.print(latency_table(result, title=f"{result.model.get('name')} on {result.board.get('name')}, "
                                                  f"{result.label}, sustained (final window)"))
    b, s = soak.get("burst") or {}, soak.get("sustained") or {}
    if b and s:
        ratio = soak.get("sustained_over_burst")
        console.print(f"burst (first {b.get('span_s') or 0:.0f} s): {fmt.rate(b.get('throughput_per_s'))}/s, median "
                      f"{fmt.duration(b.get('median_s'))}{_conditions(b)}; sustained: "
                      f"{fmt.rate(s.get('throughput_per_s'))}/s, median {fmt.duration(s.get('median_s'))}{_conditions(s)}"
                      + (f"; sustained/burst {ratio:.2f}" if ratio else ""))
    w = (result.power or {}).get("window") or {}
    if w.get("per_inference_j") is not None:
        from edgebench.stats.energy import si

        avg = f", average {si(w['avg_power_w'], 'W')}" if w.get("avg_power_w") is not None else ""
        console.print(f"energy ({w.get('window')} window): {si(w['per_inference_j'], 'J')} per inference{avg} "
                      + escape(f"[{w.get('label')}]"))
    v = soak.get("verdict") or {}
    if v:
        mark = "reached" if soak.get("steady") else "NOT reached"
        console.print(f"steady state {mark} after {soak.get('duration_s') or 0:.0f} s: {escape(str(v.get('reason') or ''))}")
    th = soak.get("thermal") or {}
    if th.get("max_temp_c") is not None:
        steady_t = th.get("steady_temp_c")
        console.print(f"temperature: max {th['max_temp_c']:.1f} °C at {th.get('max_temp_at_s') or 0:.0f} s, steady "
                      f"{'n/a' if steady_t is None else f'{steady_t:.1f} °C'}; first throttle: "
                      + ("none" if th.get("time_to_first_throttle_s") is None
                         else f"{th['time_to_first_throttle_s']:.0f} s"))
    elif th:
        console.print("temperature: no thermal source (thermal steady state not judged)")
    events = {k: e for k, e in (th.get("throttle_events") or {}).items() if e.get("events")}
    if events:
        console.print("throttle events: " + ", ".join(f"{k} ×{e['events']} ({e.get('time_s') or 0:.0f} s)"
                                                       for k, e in events.items()))
    if th.get("time_at_frequency"):
        console.print(f"time at frequency ({th.get('frequency_source')}): " + ", ".join(
            f"{(f.get('freq_hz') or 0) / 1e9:.2f} GHz {100 * (f.get('fraction') or 0):.0f}%"
            for f in th["time_at_frequency"][:6]))
    if th.get("telemetry_cost_fraction") is not None:
        console.print(f"telemetry: {th.get('telemetry_samples')} samples on the device, cost "
                      f"{100 * th['telemetry_cost_fraction']:.3f}% of the run")
    cool = soak.get("cool_down")
    if cool:
        console.print(f"cool-down: {escape(cool.get('reason', ''))}")
    print_warnings(console, result, run_dir=run_dir)
    if result.extra.get("claim"):
        console.print(f"[bold]claim:[/] {escape(result.extra['claim'])}")
    console.print(f"run stored in {run_dir} ({result.status})")


def _cells(p: dict, energy_label=None) -> list:
    """One point as narrow cells (the table fits 80 columns): the unit of the interval is the
    median's; an energy label is written only where it differs from the table's caption."""
    from edgebench.report import format as fmt
    from edgebench.stats.energy import si

    lat, en = p.get("latency") or {}, p.get("energy") or {}
    name = f"{p.get('id')} {p.get('name')}"
    if p.get("status") == "not-run":
        return [name, "", "", "", "", "", "", "not run"]
    tp = fmt.rate(p["throughput_per_s"]) if p.get("throughput_per_s") else "n/a"
    if p.get("axis") == "duty" and p.get("realized_duty") is not None and p.get("duty") \
            and abs(p["realized_duty"] - p["duty"]) > 0.05 * p["duty"]:
        tp += f"\n(duty {p['realized_duty']:.2g})"
    if p.get("rate_sustained") is False:
        tp += f"\n[red]asked {fmt.rate(p.get('requested_rate_hz'))}/s: NOT sustained[/]"
    latency = "n/a"
    if lat.get("median_s"):
        ci = fmt.duration_range(lat.get("ci_low_s"), lat.get("ci_high_s"))
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
        energy = si(en["per_inference_j"], "J") + (f" ({en.get('label')})" if en.get("label") != energy_label else "")
    if p.get("error") and not p.get("run_id"):
        verdict = f"[red]failed[/]: {p['error']}"
    elif p.get("steady"):
        verdict = f"{p.get('duration_s') or 0:.0f} s"
    else:
        verdict = f"[yellow]NOT steady[/] ({p.get('duration_s') or 0:.0f} s)"
    if p.get("status") == "incomplete":
        verdict += f"\n[yellow]incomplete[/]: {p.get('status_reason')}"
    return [name, tp, latency, temp, clock, throttled, energy, verdict]


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
    for p in result.extra.get("points") or []:
        table.add_row(*_cells(p, energy_label))
    console.print(table)
    print_warnings(console, result, skip=("mixed-labels",), run_dir=run_dir)
    if result.extra.get("plots"):
        console.print("plots: " + ", ".join(escape(str(Path(run_dir) / p)) for p in result.extra["plots"]))
    if result.extra.get("claim"):
        console.print(f"[bold]summary:[/] {escape(result.extra['claim'])}")
    console.print(f"run stored in {escape(str(run_dir))} ({result.status})")
