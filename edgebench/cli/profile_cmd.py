"""`edgebench profile MODEL --board B`: where one inference's time goes, layer by layer."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from edgebench import ranges as R
from edgebench.cli import options as opt
from edgebench.cli.runargs import RunArgs

METHOD_HELP = ("How each layer is timed: device-counter (microcontrollers: the firmware's own counter), isolated "
               "(each operator cut into a model of its own, same board, runtime and kernels), benchmark-model "
               "(LiteRT's benchmark_model on the board). Default: the board's own: device-counter on a "
               "microcontroller, benchmark-model with --benchmark-model, else isolated.")


def profile(
    model: Optional[Path] = typer.Argument(None, help="The .tflite model to profile."),
    method: Optional[str] = typer.Option(None, "--method", help=METHOD_HELP, rich_help_panel=opt.RUNTIME),
    kernels: str = opt.kernels(rich_help_panel=opt.RUNTIME),
    threads: int = opt.threads(rich_help_panel=opt.RUNTIME),
    delegate: Optional[str] = opt.delegate(rich_help_panel=opt.RUNTIME),
    benchmark_model: Optional[str] = typer.Option(
        None, "--benchmark-model", metavar="PATH", rich_help_panel=opt.RUNTIME,
        help="Path of LiteRT's benchmark_model ON THE BOARD; with --method benchmark-model and no path, the "
             "board's PATH is searched."),
    inputs: Optional[Path] = opt.inputs(rich_help_panel=opt.RUNTIME),
    seed: int = opt.seed(rich_help_panel=opt.RUNTIME),
    repeat: int = typer.Option(3, callback=opt.within(R.REPEAT), rich_help_panel=opt.STOPPING,
                               help="Independent repeats (a fresh board client each); the intervals combine them."),
    op_time: float = typer.Option(0.2, "--op-time", callback=opt.within(R.OP_TIME_S), rich_help_panel=opt.STOPPING,
                                  help="isolated: seconds each operator is timed per repeat."),
    whole_time: float = typer.Option(1.0, "--whole-time", callback=opt.within(R.WHOLE_TIME_S),
                                     rich_help_panel=opt.STOPPING,
                                     help="isolated: seconds the whole model is timed per repeat (half before the "
                                          "operators, half after)."),
    layer_samples: int = typer.Option(12, "--layer-samples", callback=opt.within(R.LAYER_SAMPLES),
                                      rich_help_panel=opt.STOPPING,
                                      help="device-counter: inferences timed layer by layer per repeat."),
    runs: int = typer.Option(50, "--runs", callback=opt.within(R.BM_RUNS), rich_help_panel=opt.STOPPING,
                             help="benchmark-model: the tool's --num_runs per repeat."),
    *,
    run: RunArgs,                       # given by edgebench.cli.runargs.command
) -> None:
    """Time every layer of a model on a board: a per-layer table, the sum against the whole model."""
    # lazy: numpy, pydantic, rich (import numpy 460 ms, pydantic 199 ms, rich 52 ms), kept off `edgebench VERB --help`
    from edgebench.bench.profile import ProfileOptions, run_profile
    from edgebench.cli.output import get_err_console
    from edgebench.cli.progress import line_view

    prof = run.profile()
    run.check_fit(model)      # a microcontroller: operators, model buffer, arena, before any upload
    opts = ProfileOptions(method=method, kernels=kernels, threads=threads, delegate=delegate, repeat=repeat,
                          inputs=str(inputs) if inputs else None, seed=seed, op_time_s=op_time,
                          whole_time_s=whole_time, layer_samples=layer_samples, benchmark_model=benchmark_model,
                          bm_runs=runs)
    assert model is not None                # runargs.before refused a run without one
    with run.client() as client:  # with --image: one emulator for all repeats
        result, run_dir = run_profile(model, prof, opts, runs_root=run.runs_dir, url=run.url, client=client,
                                      progress=run.progress(model.name, line_view(get_err_console())))
    run.show(result, run_dir)
