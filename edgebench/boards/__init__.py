"""Boards (level 3): profiles (what a board is and how to reach it) and their registry."""
from __future__ import annotations

from edgebench.boards.profile import (
    ESTIMATED_LABEL,
    BoardProfile,
    Datasheet,
    FlasherSpec,
    TransportSpec,
    load_profile,
)
from edgebench.boards.registry import (
    builtin_boards_dir,
    get_profile,
    list_profiles,
    user_boards_dir,
    with_transport_url,
)

__all__ = [
    "ESTIMATED_LABEL", "BoardProfile", "Datasheet", "FlasherSpec", "TransportSpec", "load_profile",
    "builtin_boards_dir", "get_profile", "list_profiles", "user_boards_dir", "with_transport_url",
]
