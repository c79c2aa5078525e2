"""``edgebench boards``: the known board profiles, or one of them in full."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from edgebench.cli import options as opt


def _figure(value: float, unit: str) -> str:
    """A datasheet figure in its unit (the unit the profile schema declares for it)."""
    if unit == "Hz":
        return _hz(value)
    if unit == "A" and value < 1:
        return f"{value * 1000:g} mA"
    if unit == "bytes":
        for div, name in ((2 ** 30, "GiB"), (2 ** 20, "MiB"), (2 ** 10, "KiB")):
            if value >= div:
                return f"{value / div:g} {name}"
        return f"{value:g} bytes"
    return f"{value:g} {unit}".rstrip()


def _hz(value: float) -> str:
    for div, unit in ((1e9, "GHz"), (1e6, "MHz"), (1e3, "kHz")):
        if value >= div:
            return f"{value / div:g} {unit}"
    return f"{value:g} Hz"


def _watts(value) -> str | None:
    return f"{value:g}" if value else None


def _power_summary(ds) -> str:
    """Short power figures from a datasheet (all estimates), '-' if none are published."""
    if ds is None:
        return "-"
    estimated = ds.typical_current_a * ds.supply_voltage_v if ds.typical_current_a and ds.supply_voltage_v else None
    psu = ds.supply_current_a * ds.supply_voltage_v if ds.supply_current_a and ds.supply_voltage_v else None
    figures = (("idle", _watts(ds.idle_power_w)),
               ("typ", _watts(ds.typical_load_power_w) or (estimated and f"~{estimated:.1f}")),
               ("max", _watts(ds.max_power_w)), ("TPU", _watts(ds.accel_power_w)), ("PSU", _watts(psu)))
    parts = [f"{label} {text} W" for label, text in figures if text]
    return ", ".join(parts) if parts else "-"


def _transport_cell(transport) -> str:
    if transport.type == "ssh":
        return "ssh " + transport.url.replace("ssh://", "", 1)
    if transport.type == "serial":
        return f"serial {transport.url}"
    return transport.type


def _table(profiles, width: int):
    """The board list: one row per board, or (below 150 columns) one block per board."""
    # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
    from rich import box
    from rich.table import Table

    from edgebench.boards.profile import ESTIMATED_LABEL
    from edgebench.cli.output import plain_text as Text

    power_head = f"power, {ESTIMATED_LABEL}"
    if width < 150:
        grid = Table(box=None, show_header=False, pad_edge=False, padding=(0, 2, 0, 0))
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="fold")
        for i, p in enumerate(profiles):
            if i:
                grid.add_row("", "")
            grid.add_row(Text(p.name, style="bold"), Text(f"{p.title} ({p.kind})"))
            grid.add_row("  transport", Text(_transport_cell(p.transport)))
            grid.add_row("  runtimes", Text(_runtimes_cell(p)))
            grid.add_row("  telemetry", Text(", ".join(p.telemetry) or "-"))
            grid.add_row("  power", Text(f"{_power_summary(p.datasheet)}  [{ESTIMATED_LABEL}]"
                                         if p.datasheet else "-"))
        return grid
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("name", no_wrap=True)
    table.add_column("title")
    table.add_column("kind")
    table.add_column("transport", overflow="fold")
    table.add_column("runtimes / delegates")
    table.add_column("telemetry")
    table.add_column(power_head)
    for p in profiles:
        table.add_row(Text(p.name, style="bold"), Text(p.title), Text(p.kind),
                      Text(_transport_cell(p.transport)), Text(_runtimes_cell(p)),
                      Text(", ".join(p.telemetry) or "-"), Text(_power_summary(p.datasheet)))
    return table


def _runtimes_cell(p) -> str:
    text = ", ".join(p.runtimes)
    if p.delegates:
        text += " / " + ", ".join(p.delegates)
    return text


def _detail(p):
    # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
    from rich.table import Table

    from edgebench.boards.profile import ESTIMATED_LABEL, figure_info
    from edgebench.cli.output import plain_text as Text

    grid = Table(title=f"{p.name}: {p.title}", title_justify="left", show_header=False, box=None,
                 padding=(0, 2, 0, 0))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()

    def row(key: str, value: str) -> None:
        grid.add_row(Text(key), Text(value))

    row("kind", p.kind)
    row("soc", p.soc or "-")
    row("transport", p.transport.describe())
    if p.transport.python:
        row("agent python", p.transport.python)
    row("runtimes", ", ".join(p.runtimes))
    row("kernels", ", ".join(p.kernels))
    row("delegates", ", ".join(p.delegates) or "-")
    row("default threads", str(p.default_threads))
    row("telemetry", ", ".join(p.telemetry) or "-")
    row("flasher", " ".join(p.flasher.argv) if p.flasher else "-")
    if p.flasher and p.flasher.targets:
        row("flashers", ", ".join(f"{k} ({v})" for k, v in p.flasher.targets)
            + f"; edgebench flash --board {p.name} --flasher NAME")
    if p.transport.usb:
        row("serial port", f"found by USB id: {', '.join(p.transport.usb)} (edgebench boards --connected)")
    if p.datasheet is None:
        row("datasheet", "- (no published figures)")
    else:
        ds = p.datasheet
        for key, value in ds.figures().items():
            label, unit = figure_info(key)
            row(label, f"{_figure(value, unit)}  [{ESTIMATED_LABEL}]")
        if ds.typical_load_power_w is None and ds.typical_current_a and ds.supply_voltage_v:
            watts = ds.typical_current_a * ds.supply_voltage_v
            row("typical power", f"~{watts:.1f} W = {ds.typical_current_a:g} A x "
                f"{ds.supply_voltage_v:g} V  [{ESTIMATED_LABEL}]")
        row("datasheet source", ds.source)
    if p.notes:
        row("notes", " ".join(p.notes.split()))
    row("profile file", p.origin or "-")
    return grid


def boards(
    name: Optional[str] = typer.Argument(None, metavar="NAME", help="Show this board's profile in full."),
    json_out: bool = opt.json_flag("the profiles"),
    boards_dir: Optional[List[Path]] = opt.boards_dir(),
    connected_only: bool = typer.Option(False, "--connected",
                                        help="List the USB serial ports plugged in and the profiles each matches."),
) -> None:
    """Known boards: how each is reached, its runtimes, what it can measure."""
    # lazy: pydantic, rich (import pydantic 199 ms, rich 52 ms measured), kept off `edgebench VERB --help`
    from edgebench.boards.registry import list_profiles
    from edgebench.cli.board import board_profile
    from edgebench.cli.output import emit_json, get_console

    extra = tuple(boards_dir or ())
    if connected_only:
        # lazy: numpy (import numpy 460 ms measured), kept off `edgebench VERB --help`
        from edgebench.mcu.serial_ports import connected

        ports = connected(list_profiles(extra_dirs=extra))
        if json_out:
            emit_json(ports)
            return
        console = get_console()
        if not ports:
            console.print("no USB serial port is plugged in", markup=False, highlight=False)
        for port in ports:
            names = ", ".join(port["profiles"]) or "no profile (add transport.usb to one: docs/boards.md)"
            console.print(f"{port['device']}  {port['usb']}  {port['description']}  ->  {names}",
                          markup=False, highlight=False)
        return
    if name is not None:
        profile = board_profile(name, extra)
        if json_out:
            emit_json(profile)
        else:
            get_console().print(_detail(profile))
        return
    profiles = list_profiles(extra_dirs=extra)
    if json_out:
        emit_json([p.to_dict() for p in profiles])
    else:
        # lazy: pydantic (import pydantic 199 ms measured), kept off `edgebench VERB --help`
        from edgebench.boards.profile import ESTIMATED_LABEL

        console = get_console()
        console.print(_table(profiles, console.width))
        console.print(f"power figures are {ESTIMATED_LABEL}: vendor figures, never measured; "
                      "'edgebench boards NAME' shows a board in full with its sources",
                      markup=False, highlight=False)
