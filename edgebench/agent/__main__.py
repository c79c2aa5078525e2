"""``python -m edgebench.agent``: serve the agent protocol on stdin/stdout."""
from __future__ import annotations

import sys

from edgebench.agent.server import main

sys.exit(main())
