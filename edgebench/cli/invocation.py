"""This invocation of the command line (level 5): what the entry point learnt before a verb runs.

``STATE["argv"]``: the arguments as given (``--debug`` moved to the front), which a ``--farm``
fan-out reruns on every place; ``STATE["debug"]``: ``--debug`` was given. Set by
:func:`edgebench.cli.app.main` and the root callback; read by the verbs that need them, so no
verb module imports the app.
"""
from __future__ import annotations

STATE: dict = {"debug": False, "argv": None}


def debug_enabled() -> bool:
    return bool(STATE["debug"])


__all__ = ["STATE", "debug_enabled"]
