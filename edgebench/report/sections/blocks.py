"""Sections described once, drawn as HTML here and as Markdown by :mod:`edgebench.report.markdown`
(level 1, pure). A block is ``("h", text)``, ``("p", text)``, ``("table", head, rows)`` or
``("img", png_bytes, alt, caption)`` (Markdown leaves the images out)."""
from __future__ import annotations

from typing import Any, List, Tuple

from edgebench.report.sections.base import e, img, table

Block = Tuple[Any, ...]
Blocks = List[Block]


def blocks_html(blocks: Blocks) -> str:
    """``blocks`` as HTML."""
    out = []
    for b in blocks:
        if b[0] == "h":
            out.append(f"<h3>{e(b[1])}</h3>")
        elif b[0] == "p":
            out.append(f"<p>{e(b[1])}</p>")
        elif b[0] == "table":
            out.append('<div class=wide>' + table(b[1], b[2], num_from=2) + "</div>")
        elif b[0] == "img":
            out.append(img(b[1], b[2], b[3]))
    return "".join(out)


__all__ = ["Block", "Blocks", "blocks_html"]
