"""`edgebench verify MODEL --board B`: the board's outputs against the host's reference kernels.

Exit codes: 0 ok, 1 error, 2 a board that promises bit-exact outputs is not bit-exact.
"""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from edgebench.cli.app import app


def print_verify(console, r) -> None:
    from rich.markup import escape
    from rich.table import Table

    dev, ref = r.device, r.reference
    t = Table(title=f"{r.model['name']} on {r.board['name']} ({(dev.get('runtime') or {}).get('name')}, "
                    f"{dev.get('kernels')} kernels) vs reference kernels on this computer "
                    f"({(ref.get('runtime') or {}).get('name')} {(ref.get('runtime') or {}).get('version')}), "
                    f"{r.inputs['count']} inputs ({escape(str(r.inputs['source']))})", title_justify="left")
    for col in ("output", "differing bytes", "differing samples", "max diff", "mean |diff|", "top-1 agreement"):
        t.add_column(col, justify="right" if col != "output" else "left")
    for o in r.outputs:
        lsb = o.get("max_diff_lsb")
        mx = f"{lsb} LSB" if lsb is not None else f"{o.get('max_abs_diff', 0):.3g}"
        mean = f"{o['mean_abs_diff_lsb']:.4f} LSB" if "mean_abs_diff_lsb" in o else "–"
        agree = "–" if o.get("top1_agreement") is None else f"{100 * o['top1_agreement']:.1f}%"
        t.add_row(escape(o["name"]), f"{o['differing_bytes']:,} of {o['bytes']:,}",
                  f"{o['differing_samples']} of {o['samples']}", mx, mean, agree)
    console.print(t)
    g = r.gate
    if g["applies"]:
        verdict = "[green]bit-exact[/]" if g["passed"] else "[red]NOT bit-exact[/]"
        console.print(f"{verdict}: {escape(g['rule'])}")
    else:
        console.print(("bit-exact" if r.bit_exact else "differs from the reference") + f" (not gated: {escape(g['reason'])})")
    for n in r.notes:
        console.print(f"[dim]note: {escape(n)}[/]")


@app.command()
def verify(
    model: Path = typer.Argument(..., help="The .tflite model (INT8 for microcontrollers)."),
    board: str = typer.Option(..., "--board", "-b", help="Board profile name (see `edgebench boards`)."),
    inputs: Optional[Path] = typer.Option(None, help=".npy/.npz inputs (default: seeded random in the input range)."),
    count: int = typer.Option(32, help="Number of inputs (random, or the first of --inputs)."),
    seed: int = typer.Option(0, help="Seed of the random inputs."),
    kernels: Optional[str] = typer.Option(None, help="Linux boards: kernels on the board (default xnnpack)."),
    url: Optional[str] = typer.Option(None, help="Override the board's address (a serial port, ssh://...)."),
    image: Optional[Path] = typer.Option(None, help="Emulated boards: firmware image to start instead of building "
                                                    "one (e.g. from `edgebench flash --build-only`)."),
    boards_dir: List[Path] = typer.Option([], help="Extra folder of board profiles (repeatable)."),
    json_out: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
) -> None:
    """Run inputs on the board and on the host's reference kernels; report differing bytes and LSB."""
    from edgebench.bench.verify import VerifyOptions, run_verify
    from edgebench.boards.registry import get_profile
    from edgebench.cli.output import emit_json, get_console, get_err_console
    from edgebench.errors import GateFailed

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
                            progress=show)
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
