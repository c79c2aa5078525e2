"""`edgebench layer-error INT8 --baseline FP32`: which layer of an INT8 model loses the accuracy."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from edgebench import ranges as R
from edgebench.cli import options as opt
from edgebench.cli.runargs import RunArgs


def layer_error(
    model: Optional[Path] = typer.Argument(None, help="The INT8 .tflite model."),
    baseline: Optional[Path] = typer.Option(None, "--baseline", help="The FP32 .tflite model it was converted from."),
    data: Optional[str] = typer.Option(None, "--data", help="Inputs from a data set: digits[:split], a .npz "
                                       "(x, y) or an image folder (labels are not needed)."),
    inputs: Optional[Path] = opt.inputs(help=".npy/.npz inputs (default: seeded random in the input's range; "
                                             "real inputs make saturation and levels used meaningful)."),
    count: int = typer.Option(64, "--count", callback=opt.within(R.LAYER_ERROR_COUNT), help="Inputs to compare (a seeded choice from --data)."),
    seed: int = opt.seed(help="Seed of the choice of inputs, random inputs and the bootstrap."),
    kernels: str = opt.kernels("reference", help="Kernels of both models on this computer: reference (default, "
                                                 "the INT8 semantics), builtin or xnnpack."),
    jump_db: float = typer.Option(6.0, "--jump-db", callback=opt.within(R.JUMP_DB), help="A layer whose own error is this many dB below the "
                                                        "model's typical layer is a jump."),
    *,
    run: RunArgs,                       # given by edgebench.cli.runargs.command
) -> None:
    """Compare every layer of an INT8 model with its FP32 baseline: SQNR, cosine, where the error jumps, why."""
    # lazy: numpy, pydantic, rich (import numpy 460 ms, pydantic 199 ms, rich 52 ms), kept off `edgebench VERB --help`
    from edgebench.bench.layer_error import LayerErrorOptions, run_layer_error
    from edgebench.cli.output import get_err_console
    from edgebench.cli.progress import line_view

    assert model is not None                # runargs.before refused a run without one
    opts = LayerErrorOptions(data=data, inputs=str(inputs) if inputs else None, count=count, seed=seed,
                             kernels=kernels or "reference", jump_db=jump_db)
    result, run_dir = run_layer_error(model, baseline, opts, runs_root=run.runs_dir,
                                      progress=run.progress(model.name, line_view(get_err_console())))
    run.show(result, run_dir)
