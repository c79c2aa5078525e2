"""This invocation of the command line (level 5): what the entry point learnt before a verb runs.

``STATE["argv"]``: the arguments as given (``--debug`` moved to the front), which a ``--farm``
fan-out reruns on every place. Set by :func:`edgebench.cli.app.main`; read by the verbs that
need it, so no verb module imports the app.
"""
from __future__ import annotations

STATE: dict = {"argv": None}


__all__ = ["STATE"]
