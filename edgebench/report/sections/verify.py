"""The verify section (level 1, pure): the board's outputs against the host's reference kernels."""
from __future__ import annotations

from edgebench.report import format as fmt
from edgebench.report.sections.base import RunData, e, num, table
from edgebench.results.figures.verify import VerifyFigure, VerifyOutput


def _row(o: VerifyOutput) -> list:
    return [o.name, f"{o.differing_bytes or 0:,} of {o.bytes or 0:,}", f"{o.differing_samples} of {o.samples}",
            f"{o.max_diff_lsb:g} LSB" if o.max_diff_lsb is not None else num(o.max_abs_diff),
            "–" if o.top1_agreement is None else fmt.percent(o.top1_agreement)]


def verdict(v: VerifyFigure) -> str:
    """Bit-exact or not, and whether the board's profile gates on it."""
    gate = v.gate
    if gate.applies:
        return ("bit-exact" if gate.passed else "NOT bit-exact") + f": {gate.rule}"
    return ("bit-exact" if v.bit_exact else "differs from the reference") + f" (not gated: {gate.reason})"


def html(d: RunData) -> str:
    v = d.result.extra.verify
    if not v:
        return ""
    rows = [_row(o) for o in v.outputs or []]
    return ("<h3>Outputs against the reference kernels</h3>"
            f"<p class=small>board: {e(v.device.kernels)} kernels; reference: {e(v.reference.kernels)} kernels, "
            f"{e(v.reference.where)}</p>"
            + table(["output", "differing bytes", "differing samples", "max diff", "top-1 agreement"], rows)
            + f"<p>{e(verdict(v))}</p>")


__all__ = ["html", "verdict"]
