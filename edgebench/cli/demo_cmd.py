"""`edgebench demo`: the main job on the embedded default.

Benchmarks the bundled digits FP32 and INT8 models on a board (default: this
computer as the ``host`` board), prints both results with their CIs, the
speed ratio with a bootstrap CI, and the claim sentences.
"""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from edgebench.cli.app import app


@app.command()
def demo(
    board: str = typer.Option("host", "--board", "-b", help="Board profile name."),
    kernels: str = typer.Option("xnnpack", help="Kernel set for both models."),
    threads: int = typer.Option(1, help="Interpreter threads."),
    target: float = typer.Option(0.01, help="Target CI half-width as a fraction of the median."),
    min_time: float = typer.Option(2.0, help="Minimum measuring time per model, seconds."),
    max_time: float = typer.Option(20.0, help="Maximum measuring time per model, seconds."),
    runs_dir: Path = typer.Option(Path("runs"), help="Where run folders are written."),
    url: Optional[str] = typer.Option(None, help="Override the board's address."),
    boards_dir: List[Path] = typer.Option([], help="Extra folder of board profiles (repeatable)."),
    json_out: bool = typer.Option(False, "--json", help="Print both runs and the comparison as JSON."),
) -> None:
    """Benchmark the bundled digits FP32 and INT8 models and compare them honestly."""
    from edgebench.bench.compare import compare
    from edgebench.bench.latency import BenchOptions, run_bench
    from edgebench.boards.registry import get_profile
    from edgebench.cli.bench_cmd import progress_printer
    from edgebench.cli.output import emit_json, get_console, get_err_console
    from edgebench.cli.render import print_run
    from edgebench.data.bundled import bundled_model
    from edgebench.results.store import read_samples

    err, out = get_err_console(), get_console()
    profile = get_profile(board, extra_dirs=tuple(boards_dir))
    runs = {}
    for name in ("digits_fp32", "digits_int8"):
        opts = BenchOptions(kernels=kernels, threads=threads, target_rel_ci=target,
                            min_time_s=min_time, max_time_s=max_time)
        result, run_dir = run_bench(bundled_model(name), profile, opts, runs_root=runs_dir, url=url,
                                    progress=progress_printer(err, name))
        err.print()
        runs[name] = (result, run_dir)
    (fp32, d32), (int8, d8) = runs["digits_fp32"], runs["digits_int8"]
    s32, s8 = read_samples(d32), read_samples(d8)
    comp = compare(fp32, s32, int8, s8)
    comp_invoke = compare(fp32, s32, int8, s8, stage="invoke")
    if json_out:
        emit_json({"fp32": fp32.to_dict(), "int8": int8.to_dict(), "comparison": comp.to_dict(),
                   "comparison_invoke": comp_invoke.to_dict()})
        return
    for result, run_dir in runs.values():
        print_run(out, result, run_dir)
        out.print()
    out.print(f"[bold]INT8 vs FP32, end to end:[/] {comp.sentence()}")
    out.print(f"[bold]INT8 vs FP32, invoke only:[/] {comp_invoke.sentence()}")
    if comp.conditions_differ:
        out.print(f"[yellow]conditions differ:[/] {'; '.join(comp.conditions_differ)}")
    out.print("Accuracy of the pair on the digits test split is in models/digits/model_card.md "
              "(not measured by this command).")
