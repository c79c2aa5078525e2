"""What the report's sections share (level 1, pure): :class:`RunData` (a run and what its folder holds)
and the small HTML helpers (escaping, tables, inlined PNG figures, number formats)."""
from __future__ import annotations

import base64
import html as _html
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Optional, Sequence

from edgebench.results.model import RunResult


@dataclass
class RunData:
    """One run and what its folder holds, read by the caller (the CLI): frames may be None."""

    result: RunResult
    path: str = ""
    samples: Any = None                  # samples.parquet
    soak_series: Optional[dict] = None   # see report_plots.soak_series
    power: Any = None                    # power.parquet (t_s, dt_s, power_w)
    events: Any = None                   # energy_events.parquet
    battery: Optional[dict] = None       # see report_plots.battery_curve
    images: Dict[str, bytes] = field(default_factory=dict)  # caption -> PNG bytes already in the folder


def e(x: Any) -> str:
    """``x`` as HTML text (``–`` for None)."""
    return _html.escape("–" if x is None else str(x))


def img(png: bytes, alt: str, caption: str) -> str:
    """A PNG inlined as a base64 ``data:`` URI, with its caption."""
    data = base64.b64encode(png).decode("ascii")
    return (f'<figure><img alt="{e(alt)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{e(caption)}</figcaption></figure>")


def table(head: Sequence[Any], rows: Sequence[Sequence[Any]], num_from: int = 1,
          row_class: Optional[Callable[[int, Sequence[Any]], str]] = None) -> str:
    """An HTML table; cells from column ``num_from`` on are right-aligned numbers."""
    out = ["<table><thead><tr>", *(f"<th>{e(h)}</th>" for h in head), "</tr></thead><tbody>"]
    for i, row in enumerate(rows):
        cls = f' class="{row_class(i, row)}"' if row_class and row_class(i, row) else ""
        cells = "".join(f'<td class="num">{e(c)}</td>' if j >= num_from else f"<td>{e(c)}</td>"
                        for j, c in enumerate(row))
        out.append(f"<tr{cls}>{cells}</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def vclass(v: str) -> str:
    """The CSS class of a verdict."""
    return {"pass": "v-pass", "warn": "v-warn", "fail": "v-fail"}.get(v, "v-na")


def joules(j: Optional[float]) -> str:
    if j is None:
        return "n/a"
    for scale, unit in ((1.0, "J"), (1e-3, "mJ"), (1e-6, "µJ")):
        if abs(j) >= scale or unit == "µJ":
            return f"{j / scale:.3g} {unit}"
    return f"{j} J"  # pragma: no cover


def num(x: Optional[float], unit: str = "") -> str:
    if x is None:
        return "n/a"
    return f"{x:.3g}{(' ' + unit) if unit else ''}"


def signed(x: Any) -> str:
    """A signed figure with two decimals, or a dash where the run holds none (null, not a number)."""
    return f"{x:+.2f}" if isinstance(x, (int, float)) and not isinstance(x, bool) else "–"


def model_on_board(r: RunResult) -> str:
    """``digits_int8 on pi5``: the run's model and board, as titles say them."""
    return f"{r.model.name} on {r.board.name}"


__all__ = ["RunData", "e", "img", "table", "vclass", "joules", "num", "signed", "model_on_board"]
