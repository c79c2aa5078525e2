"""The layer runs in a report (level 1, pure): which block sections a run has, and the claim of each.

A profile run's bar chart of layer times and its tables (:mod:`edgebench.report.sections.profile`) and a
layer-error run's SQNR along the layers (:mod:`edgebench.report.sections.layer_error`) are described once
as blocks (:mod:`edgebench.report.sections.blocks`), drawn as HTML by :mod:`edgebench.report.html` and
as Markdown, without the images, by :mod:`edgebench.report.markdown`.
"""
from __future__ import annotations

from typing import Callable, Dict

from edgebench.report.sections import layer_error, profile
from edgebench.report.sections.blocks import Blocks
from edgebench.results.kinds import kind_of
from edgebench.results.model import RunResult

profile_claim = profile.claim
layer_error_claim = layer_error.claim

#: The block sections (report section name -> blocks of a run), listed by the run kinds that have them.
BLOCKS: Dict[str, Callable[[RunResult, bool], Blocks]] = {"profile": profile.blocks,
                                                          "layer-error": layer_error.blocks}


def section_blocks(r: RunResult, images: bool = True) -> Blocks:
    """The blocks of a run's block sections (:data:`BLOCKS`, as its kind lists them; none for other kinds)."""
    return [b for name in kind_of(r).sections if name in BLOCKS for b in BLOCKS[name](r, images)]


__all__ = ["BLOCKS", "layer_error_claim", "profile_claim", "section_blocks"]
