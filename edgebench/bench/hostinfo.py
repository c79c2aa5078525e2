"""The computer that ran edgebench (not the board): best-effort, stdlib only."""
from __future__ import annotations

import platform
import sys

from edgebench import __version__


def host_description() -> dict:
    return {
        "edgebench_version": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "hostname": platform.node(),
        "argv": list(sys.argv),
    }
