"""A simulated board (level 2) for tests and for showing soak and sweep without hardware.

- :mod:`.params`  — the model's parameters (a board profile's ``simulated:`` block)
- :mod:`.physics` — RC thermal node, step_wise-like DVFS governor, power, latency
- :mod:`.client`  — :class:`SimClient`, the same interface as ``AgentClient``

Everything it produces is labelled ``simulated`` (``hello()["timing"]``), and
its clock is simulated: nothing sleeps.
"""
from edgebench.sim.params import SimParams

__all__ = ["SimClient", "SimParams"]


def __getattr__(name: str):  # PEP 562: the client (numpy) only when used, so profiles load light
    if name == "SimClient":
        # lazy: edgebench (measured), kept off `edgebench VERB --help`
        from edgebench.sim.client import SimClient

        return SimClient
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
