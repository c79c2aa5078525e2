"""`edgebench verify MODEL --board B`: the board's outputs against the host's reference kernels.

Exit codes: 0 ok, 1 error, 2 a board that promises bit-exact outputs is not bit-exact.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from edgebench import ranges as R
from edgebench.cli import options as opt
from edgebench.cli.runargs import RunArgs
from edgebench.errors import GateFailed


def verify(
    model: Optional[Path] = typer.Argument(None, help="The .tflite model (INT8 for microcontrollers)."),
    inputs: Optional[Path] = opt.inputs(help=".npy/.npz inputs (default: seeded random in the input range)."),
    count: int = typer.Option(
        32, callback=opt.within(R.COUNT), help="Number of inputs (random, or the first of --inputs)."),
    seed: int = opt.seed(),
    kernels: Optional[str] = opt.kernels(None, help="Linux boards: kernels on the board (default xnnpack)."),
    *,
    run: RunArgs,                       # given by edgebench.cli.runargs.command
) -> None:
    """Run inputs on the board and on the host's reference kernels; report differing bytes and LSB."""
    # lazy: numpy, pydantic, rich (import numpy 460 ms, pydantic 199 ms, rich 52 ms), kept off `edgebench VERB --help`
    from edgebench.bench.verify import VerifyOptions, run_verify
    from edgebench.cli.output import get_err_console

    profile = run.profile()
    run.check_fit(model)      # a microcontroller: operators, model buffer, arena, before any upload
    err = get_err_console()

    def show(ev: dict) -> None:
        if ev["event"] == "connect":
            err.print(f"[dim]connecting to {ev['board']}…[/]")
        elif ev["event"] == "infer":
            err.print(f"[dim]running {ev['n']} inputs on {ev['where']}…[/]")

    opts = VerifyOptions(inputs=str(inputs) if inputs else None, count=count, seed=seed, kernels=kernels,
                         cpus=run.cpus)
    with run.client() as client:
        result = run_verify(model, profile, opts, url=run.url, client=client, progress=run.progress(live=show),
                            runs_root=run.runs_dir)
    run.show(result, result.run_dir, json_obj=result)
    if result.failed:
        worst = max((o.get("max_diff_lsb") or 0) for o in result.outputs)
        bad = sum(o["differing_bytes"] for o in result.outputs)
        raise GateFailed(f"{profile.name} promises bit-exact outputs but {bad} output bytes differ from the "
                         f"reference kernels (up to {worst} LSB)",
                         "a firmware/engine bug: report it with this model and `edgebench verify --json`")
