"""A verify result on a terminal: the board's outputs against the host's reference kernels."""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:     # `edgebench demo --help` imports this module: the imports below cost it 0.3 s (-X importtime)
    from edgebench.bench.verify import VerifyResult


def _n(x) -> str:
    return "–" if x is None else f"{x:,}"


def print_verify(console, r: VerifyResult) -> None:
    # inside: `edgebench demo --help` imports this module (the record's types: 0.11 s, -X importtime)
    from edgebench.results.conditions import BoardSection, Inputs, ModelSection
    from edgebench.results.figures.verify import VerifyGate, VerifyOutput, VerifySide

    # each part read as its declared type: a VerifyResult made by the verb holds dicts, one read back from a
    # stored run (VerifyResult.from_run) the run's sections (model_validate takes either)
    model, board = ModelSection.model_validate(r.model), BoardSection.model_validate(r.board)
    dev, ref = VerifySide.model_validate(r.device), VerifySide.model_validate(r.reference)
    inputs, gate = Inputs.model_validate(r.inputs), VerifyGate.model_validate(r.gate)
    dev_rt, ref_rt = dev.runtime or {}, ref.runtime or {}
    t = Table(title=f"{model.name} on {board.name} ({dev_rt.get('name')}, "
                    f"{dev.kernels} kernels) vs reference kernels on this computer "
                    f"({ref_rt.get('name')} {ref_rt.get('version')}), "
                    f"{inputs.count} inputs ({escape(str(inputs.source))})", title_justify="left")
    for col in ("output", "differing bytes", "differing samples", "max diff", "mean |diff|", "top-1 agreement"):
        t.add_column(col, justify="right" if col != "output" else "left")
    for o in (VerifyOutput.model_validate(x) for x in r.outputs or []):
        lsb = o.max_diff_lsb
        # getattr: a float output's `max_abs_diff` is declared in VerifyOutput on another branch
        mx = f"{lsb} LSB" if lsb is not None else f"{getattr(o, 'max_abs_diff', None) or 0:.3g}"
        mean = f"{o.mean_abs_diff_lsb:.4f} LSB" if o.mean_abs_diff_lsb is not None else "–"
        agree = "–" if o.top1_agreement is None else f"{100 * o.top1_agreement:.1f}%"
        t.add_row(escape(str(o.name)), f"{_n(o.differing_bytes)} of {_n(o.bytes)}",
                  f"{_n(o.differing_samples)} of {_n(o.samples)}", mx, mean, agree)
    console.print(t)
    if gate.applies:
        verdict = "[green]bit-exact[/]" if gate.passed else "[red]NOT bit-exact[/]"
        console.print(f"{verdict}: {escape(str(gate.rule))}")
    else:
        console.print(("bit-exact" if r.bit_exact else "differs from the reference")
                      + f" (not gated: {escape(str(gate.reason))})")
    for note in r.notes or []:
        console.print(f"[dim]note: {escape(note)}[/]")
    if r.run_dir:
        console.print(f"run stored in {escape(r.run_dir)}")


def print_verify_run(console, result, run_dir=None) -> None:
    """A verify run: the comparison as the verb made it (a VerifyResult), or as stored (`runs ID`)."""
    from edgebench.bench.verify import VerifyResult  # inside: 0.3 s at `edgebench demo --help` (-X importtime)

    if not isinstance(result, VerifyResult):
        result = VerifyResult.from_run(result, run_dir)
    print_verify(console, result)
