"""The board a verb runs on (level 5): ``--board NAME`` turned into the profile the verb uses.

A profile name is looked up (:func:`edgebench.boards.registry.get_profile`: a name resolves to a
profile, nothing else). A labgrid place (``labgrid:PLACE`` or ``labgrid:TAG=VALUE,...``) is a
board the command must hold: the farm reserves and acquires it (:func:`edgebench.farm.lease.hold`,
held for the rest of the command and released by the CLI's exit path), then the profile its
``edgebench-profile`` tag names is reached through its resources
(:func:`edgebench.boards.registry.place_profile`).
"""
from __future__ import annotations

import warnings
from typing import Iterable

from edgebench.boards.profile import BoardProfile
from edgebench.boards.registry import get_profile, place_profile
from edgebench.errors import InputWarning
from edgebench.farm.spec import is_farm


def board_profile(board: str, boards_dir: Iterable = ()) -> BoardProfile:
    """The profile of ``--board``; a labgrid place is held from here on (see the module)."""
    extra = tuple(boards_dir or ())
    if not is_farm(board):
        return get_profile(board, extra_dirs=extra)
    # Loaded only for a farm board: edgebench.farm.lease costs 60-110 ms of imports (pydantic through
    # farm.fanout, the results store through farm.holders; python -X importtime), and the CLI's exit
    # path releases places only when it is loaded (edgebench.cli.app._farm_lines).
    from edgebench.farm.lease import hold

    held = hold(board, progress=lambda line: warnings.warn(line, InputWarning, stacklevel=2))
    try:
        return place_profile(held, extra)
    except BaseException:
        held.release()
        raise
