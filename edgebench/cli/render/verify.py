"""A verify result on a terminal: the board's outputs against the host's reference kernels."""
from __future__ import annotations


def print_verify(console, r) -> None:
    from rich.markup import escape
    from rich.table import Table

    dev, ref = r.device or {}, r.reference or {}
    t = Table(title=f"{r.model.get('name')} on {r.board.get('name')} ({(dev.get('runtime') or {}).get('name')}, "
                    f"{dev.get('kernels')} kernels) vs reference kernels on this computer "
                    f"({(ref.get('runtime') or {}).get('name')} {(ref.get('runtime') or {}).get('version')}), "
                    f"{r.inputs.get('count')} inputs ({escape(str(r.inputs.get('source')))})", title_justify="left")
    for col in ("output", "differing bytes", "differing samples", "max diff", "mean |diff|", "top-1 agreement"):
        t.add_column(col, justify="right" if col != "output" else "left")
    def n(x) -> str:
        return "–" if x is None else f"{x:,}"

    for o in r.outputs:
        lsb = o.get("max_diff_lsb")
        mx = f"{lsb} LSB" if lsb is not None else f"{o.get('max_abs_diff') or 0:.3g}"
        mean = f"{o['mean_abs_diff_lsb']:.4f} LSB" if o.get("mean_abs_diff_lsb") is not None else "–"
        agree = "–" if o.get("top1_agreement") is None else f"{100 * o['top1_agreement']:.1f}%"
        t.add_row(escape(str(o.get("name"))), f"{n(o.get('differing_bytes'))} of {n(o.get('bytes'))}",
                  f"{n(o.get('differing_samples'))} of {n(o.get('samples'))}", mx, mean, agree)
    console.print(t)
    g = r.gate or {}
    if g.get("applies"):
        verdict = "[green]bit-exact[/]" if g.get("passed") else "[red]NOT bit-exact[/]"
        console.print(f"{verdict}: {escape(str(g.get('rule')))}")
    else:
        console.print(("bit-exact" if r.bit_exact else "differs from the reference")
                      + f" (not gated: {escape(str(g.get('reason')))})")
    for n in r.notes or []:
        console.print(f"[dim]note: {escape(n)}[/]")
    if r.run_dir:
        console.print(f"run stored in {escape(r.run_dir)}")


def print_verify_run(console, result, run_dir=None) -> None:
    """A verify run: the comparison as the verb made it (a VerifyResult), or as stored (`runs ID`)."""
    from edgebench.bench.verify import VerifyResult

    if not isinstance(result, VerifyResult):
        result = VerifyResult.from_run(result, run_dir)
    print_verify(console, result)
