"""Telemetry on the host (level 2): request it from the device, decode it, read what it says.

- :mod:`.capture`  — ask a client for telemetry (on the device between inferences,
  or a ``thermal()`` snapshot after each chunk as a fallback) and decode it into frames
- :mod:`.analysis` — primary temperature, effective clock, time at each frequency,
  throttle events by cause

The device side is ``edgebench.agent.telemetry``; the protocol additions are in
``docs/agent-protocol.md``. Samples that must survive a kill go to the run's journal
(:func:`edgebench.results.store.open_journal`).
"""
from edgebench.telemetry.capture import DEFAULT_RATE_HZ, MAX_RATE_HZ, Capture, TelemetrySpec

__all__ = ["Capture", "TelemetrySpec", "DEFAULT_RATE_HZ", "MAX_RATE_HZ"]
