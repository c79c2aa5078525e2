"""Per-layer INT8 error (level 1, pure): a layer-error run's claim, its SQNR along the layers and its
table, as blocks (:mod:`edgebench.report.sections.blocks`: HTML and Markdown from one description)."""
from __future__ import annotations

from typing import Optional

from edgebench.report import format as fmt
from edgebench.report import report_plots as rp
from edgebench.report.sections.blocks import Blocks
from edgebench.results.figures.layer_error import LayerErrorRow, LayerPick, LocalError
from edgebench.results.model import RunResult


def _at(fj: LayerPick) -> str:
    return "the model input" if fj.index is None else f"layer {fj.index} {fj.op}"


def claim(r: RunResult) -> Optional[str]:
    """The claim sentence of a layer-error run, or None when it holds no layers."""
    s = r.extra.layer_error
    if not s.layers:
        return None
    base = (r.extra.baseline or {}).get("name")     # free-form: the FP32 baseline model as `model` holds it
    last = s.layers[-1]
    fj = s.first_jump
    if fj:
        tail = fj.which == "worst tenth"
        value = fj.local.worst_tenth_sqnr_db if tail else fj.local.local_sqnr_db
        ref = fj.reference_db if fj.reference_db is not None else fj.best_sqnr_db
        where = (f"the error first jumps at {_at(fj)} (its own error at {value:.1f} dB SQNR"
                 + (" for the worst tenth of the inputs" if tail else "") + f" against "
                 f"{ref:.1f} dB from 8-bit rounding alone"
                 + (f"; {fj.explained_by[0]}" if fj.explained_by else "") + ")")
    else:
        where = "no layer's own error jumps"
    co = s.channel_outlier     # free-form: the channel, its tensor and share
    if co:
        where += (f"; channel {co['channel']} of {co['name']} (layer {co['index']}) holds {co['share']:.0%} of its "
                  f"range, crushing {co['crushed']} of its other {co['channels'] - 1} channels")
    out = "exact" if last.sqnr_db is None else f"{last.sqnr_db:.1f} dB"
    return (f"{r.model.name} against its FP32 baseline {base} over {s.n} inputs "
            f"({r.runtime.kernels} kernels): output SQNR {out}; {where}.")


def _db(v: Optional[float]) -> str:
    return "exact" if v is None else f"{v:.1f}"


def _local(local: LocalError, value: Optional[float]) -> str:
    return "–" if not local else ("none added" if value is None else f"{value:.1f}")


def _row(x: LayerErrorRow) -> list:
    return ["input" if x.index is None else x.index, x.op, _db(x.sqnr_db),
            "–" if not x.sqnr_ci else f"{x.sqnr_ci[0]:.1f}–{x.sqnr_ci[1]:.1f}",
            "–" if x.cosine is None else f"{x.cosine:.5f}", _db(x.output_sqnr_db),
            _local(x.local, x.local.local_sqnr_db), _local(x.local, x.local.worst_tenth_sqnr_db),
            fmt.percent(x.saturated_share, 2), "; ".join(x.explained_by or [])]


def blocks(r: RunResult, images: bool = True) -> Blocks:
    """The layer-error section of ``r`` (``images``: with the SQNR plot)."""
    s = r.extra.layer_error
    if not s.layers:
        return []
    out: Blocks = [("h", "Per-layer INT8 error against FP32")]
    if images:
        out.append(("img", rp.layer_sqnr(s, r.model.name or "", r.label), "SQNR per layer",
                    f"SQNR of each layer's INT8 output against FP32 over {s.n} inputs (95% bootstrap CI across "
                    "inputs), what its output quantization alone allows, and the noise it adds itself."))
    rows = [_row(x) for x in ([s.input] if s.input else []) + s.layers]
    out.append(("table", ["#", "operator", "SQNR dB", "95% CI", "cosine", "output q. dB", "local dB",
                          "worst 10% local dB", "saturated", "explained by"], rows))
    fj = s.first_jump
    if fj:
        out.append(("p", f"First jump: {_at(fj)} ({fj.which or 'typical'} input)"
                         + (": " + "; ".join(fj.explained_by) if fj.explained_by else "") + "."))
    else:
        out.append(("p", f"No layer's own error jumps beyond {s.jump_db:g} dB below what its output would have "
                         "over its own range."))
    out.append(("p", f"Method: {s.method}."))
    for n in s.notes or []:
        out.append(("p", n))
    return out


__all__ = ["blocks", "claim"]
