"""`edgebench compile`: compile a full-integer model for an accelerator (today: the Coral Edge TPU)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from edgebench import ranges as R
from edgebench.cli import options as opt
from edgebench.errors import UsageError

TARGETS = ("edgetpu",)


def compile_command(
    model: Path = typer.Argument(..., help="A full-integer (INT8) .tflite model."),
    target: str = typer.Option(..., "--target", help="Compiler target: edgetpu."),
    out_dir: Optional[Path] = typer.Option(None, "-o", "--out-dir",
                                           help="Folder for the compiled model (default: beside MODEL)."),
    timeout: float = typer.Option(
        600.0, "--timeout", callback=opt.within(R.COMPILE_TIMEOUT_S), help="Seconds to let the compiler run."),
    json_out: bool = opt.json_flag("the compile result (sizes, on-chip memory, operator mapping)"),
) -> None:
    """Run edgetpu_compiler, parse its report into the compiled model's sidecar JSON."""
    if target not in TARGETS:
        raise UsageError(f"unknown compile target {target!r}", f"supported: {', '.join(TARGETS)}")
    # lazy: pydantic, rich (import pydantic 199 ms, rich 52 ms measured), kept off `edgebench VERB --help`
    from edgebench.cli.output import emit_json, get_console, get_err_console
    from edgebench.runtime.edgetpu import compile_edgetpu

    run = compile_edgetpu(model, out_dir, timeout_s=timeout)
    if json_out:
        emit_json(run)
        return
    _show(get_console(), run)
    for line in _warnings(run):
        get_err_console().print(f"warning: {line}", markup=False, soft_wrap=True)


def _size(n) -> str:
    if n is None:
        return "n/a"
    for div, unit in ((1 << 20, "MiB"), (1 << 10, "KiB")):
        if n >= div:
            return f"{n / div:.2f} {unit}"
    return f"{n} B"


def _show(out, run) -> None:
    # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
    from rich import box
    from rich.table import Table

    log = run.log
    g = Table.grid(padding=(0, 2))
    g.add_column(style="bold", no_wrap=True)
    g.add_column(overflow="fold")
    g.add_row("compiled model", run.output_model)
    g.add_row("sidecar", run.sidecar + (f" (carried over {Path(run.carried_sidecar).name})"
                                        if run.carried_sidecar else ""))
    g.add_row("compiler", f"edgetpu_compiler {log.compiler_version or '?'}"
              + (f", {log.compile_time_s * 1000:.0f} ms" if log.compile_time_s is not None else ""))
    g.add_row("operations", f"{log.operations_on_edgetpu} of {log.total_operations} on the Edge TPU, "
              f"{log.operations_on_cpu} on the CPU")
    g.add_row("Edge TPU subgraphs", str(log.edgetpu_subgraphs))
    g.add_row("on-chip parameter cache", f"{_size(log.on_chip_memory_used_bytes)} used, "
              f"{_size(log.on_chip_memory_remaining_bytes)} remaining")
    g.add_row("off-chip (streamed)", _size(log.off_chip_memory_used_bytes))
    out.print(g)
    if log.operators:
        t = Table(title="operators", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
        t.add_column("operator", no_wrap=True)
        t.add_column("count", justify="right", no_wrap=True)
        t.add_column("where", no_wrap=True)
        t.add_column("status", overflow="fold")
        for o in log.operators:
            t.add_row(o.operator, str(o.count), "Edge TPU" if o.mapped else "CPU", o.status)
        out.print(t)


def _warnings(run) -> list:
    log = run.log
    lines = []
    if log.operations_on_cpu:
        lines.append(f"{log.operations_on_cpu} of {log.total_operations} operations stay on the CPU: "
                     "latency includes CPU fallback and Edge TPU <-> CPU transfers")
    if log.edgetpu_subgraphs and log.edgetpu_subgraphs > 1:
        lines.append(f"{log.edgetpu_subgraphs} Edge TPU subgraphs: each boundary costs a round trip")
    if log.off_chip_memory_used_bytes:
        lines.append(f"{_size(log.off_chip_memory_used_bytes)} of parameters do not fit on chip and are "
                     "streamed from host memory on every inference")
    lines.extend(run.notes)
    return lines
