"""`edgebench verify MODEL --board B`: the board's outputs against the host's reference kernels.

Exit codes: 0 ok, 1 error, 2 a board that promises bit-exact outputs is not bit-exact.
"""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from edgebench import ranges as R
from edgebench.cli import options as opt
from edgebench.cli.app import app
from edgebench.cli.render.verify import print_verify
from edgebench.errors import GateFailed


@app.command()
def verify(
    model: Path = typer.Argument(..., help="The .tflite model (INT8 for microcontrollers)."),
    board: Optional[str] = opt.board(None, help="Board profile name (see `edgebench boards`), or a labgrid "
                                     "farm's place: labgrid:PLACE or labgrid:TAG=VALUE (docs/farm.md)."),
    inputs: Optional[Path] = opt.inputs(help=".npy/.npz inputs (default: seeded random in the input range)."),
    count: int = typer.Option(
        32, callback=opt.within(R.COUNT), help="Number of inputs (random, or the first of --inputs)."),
    seed: int = opt.seed(),
    kernels: Optional[str] = opt.kernels(None, help="Linux boards: kernels on the board (default xnnpack)."),
    url: Optional[str] = opt.url(),
    image: Optional[Path] = opt.image(),
    boards_dir: List[Path] = opt.boards_dir(),
    farm: Optional[str] = opt.farm(),
    runs_dir: Path = opt.runs_dir(),
    json_out: bool = opt.json_flag("the comparison"),
) -> None:
    """Run inputs on the board and on the host's reference kernels; report differing bytes and LSB."""
    from edgebench.bench.verify import VerifyOptions, run_verify
    from edgebench.boards.registry import get_profile
    from edgebench.cli.output import emit_json, get_console, get_err_console

    if farm is not None:   # every matching place of a labgrid farm (cli/farm_fanout.py)
        from edgebench.cli.farm_fanout import fan_out

        return fan_out("verify", farm, board, runs_dir, json_out)
    if board is None:
        from edgebench.errors import UsageError

        raise UsageError("missing option --board", "edgebench verify MODEL --board BOARD (or --farm TAGS)")

    profile = get_profile(board, extra_dirs=tuple(boards_dir))
    if profile.kind == "mcu" and model is not None and Path(model).is_file():
        from edgebench.mcu.fit import check_fit

        check_fit(model, profile).raise_if_unfit()  # operators, model buffer, arena: before any upload
    err = get_err_console()

    def show(ev: dict) -> None:
        if ev["event"] == "connect":
            err.print(f"[dim]connecting to {ev['board']}…[/]")
        elif ev["event"] == "infer":
            err.print(f"[dim]running {ev['n']} inputs on {ev['where']}…[/]")

    from contextlib import nullcontext

    from edgebench.boards.connect import board_client

    with board_client(profile, url, image=image) if image else nullcontext() as client:
        result = run_verify(model, profile, VerifyOptions(inputs=str(inputs) if inputs else None, count=count,
                                                          seed=seed, kernels=kernels), url=url, client=client,
                            progress=show, runs_root=runs_dir)
    if json_out:
        emit_json(result)
    else:
        print_verify(get_console(), result)
    if result.failed:
        worst = max((o.get("max_diff_lsb") or 0) for o in result.outputs)
        bad = sum(o["differing_bytes"] for o in result.outputs)
        raise GateFailed(f"{profile.name} promises bit-exact outputs but {bad} output bytes differ from the "
                         f"reference kernels (up to {worst} LSB)",
                         "a firmware/engine bug: report it with this model and `edgebench verify --json`")
