"""The on-device agent: an island that runs on the board.

It needs only the standard library, numpy and a TFLite runtime, runs on Python
3.9+, and imports nothing from edgebench outside ``edgebench.agent`` (it is
packed into a zipapp and copied to boards). Protocol: docs/agent-protocol.md.
"""
from __future__ import annotations

__version__ = "0.1.0"
