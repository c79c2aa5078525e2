"""What a telemetry channel is and the limits of a sampling schedule: shared by the agent's sampler
(:mod:`edgebench.agent.telemetry`) and the simulated board (:mod:`edgebench.sim`), which answers as
the agent would.

The host may import this module (it reads no file and starts nothing), unlike the sampler itself
(pyproject's import contract "The host imports only the agent's wire protocol, ..."). Part of the
agent: standard library only, Python 3.9.
"""
from __future__ import annotations

from typing import Optional

SOURCES = ("thermal_zone", "cpufreq", "hwmon", "vcgencmd", "apex")
DEFAULT_INTERVAL_S = 0.5      # 2 Hz
MIN_INTERVAL_S = 0.1          # at most 10 Hz
MAX_INTERVAL_S = 60.0
MAX_IDLE_S = 60.0             # longest idle sampling one ``telemetry`` request may take

#: the channels read through ``vcgencmd``, in row order: name, quantity, unit, label
VCGENCMD_CHANNELS = (("vcgencmd.temp_c", "temp", "°C", "measure_temp"),
                     ("vcgencmd.arm_freq_hz", "freq", "Hz", "measure_clock arm"),
                     ("vcgencmd.throttled", "flags", "bits", "get_throttled"))
CPUFREQ_KEYS = ("cur", "min", "max")  # the scaling_{key}_freq channels of a policy, in row order


def channel(name: str, source: str, quantity: str, unit: Optional[str], label: Optional[str]) -> dict:
    """One channel as a run header lists it (``channels`` / ``text_channels``)."""
    return {"name": name, "source": source, "quantity": quantity, "unit": unit, "label": label}


def cpufreq_channel(policy: str, key: str) -> dict:
    """The ``scaling_{key}_freq`` channel of a cpufreq ``policy`` (Hz)."""
    return channel(f"{policy}.{key}_freq_hz", "cpufreq", "freq", "Hz", f"{policy} scaling_{key}_freq")


def governor_channel(policy: str) -> dict:
    """The text channel of a cpufreq ``policy``'s governor."""
    return channel(f"{policy}.governor", "cpufreq", "governor", None, f"{policy} governor")
