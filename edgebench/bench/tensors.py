"""Intermediate tensors of a model, computed on this computer in a child process (level 4).

``edgebench layer-error`` compares every layer of an INT8 model with its FP32 baseline, and
the isolated-operator method of ``edgebench profile`` feeds each operator the values it sees
inside the model. Both need the model's intermediate tensors: a local agent (a child process,
so a runtime that aborts on a model takes only that process with it) loads the model with
``preserve_all_tensors`` and the reference kernels by default, and answers ``tensors``
requests in chunks (capability ``tensors``, docs/agent-protocol.md).
"""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from edgebench import board_protocol as bp
from edgebench.boards.connect import open_client
from edgebench.boards.registry import get_profile
from edgebench.errors import EdgebenchError

#: bytes of tensors one request may bring back (the agent refuses more than 256 MiB)
CHUNK_BYTES = 32 * 1024 * 1024


def tensor_bytes(shapes_dtypes) -> int:
    """Bytes of one sample's tensors: ``[(shape, numpy dtype), ...]``."""
    return int(sum(int(np.prod(s)) * np.dtype(d).itemsize for s, d in shapes_dtypes))


class HostTensors:
    """A local agent holding one model with every intermediate tensor kept (a context manager)."""

    def __init__(self, model, kernels: str = "reference", client=None):
        self.model = model
        self.kernels = kernels
        self._own = client is None
        self.client = client if client is not None else open_client(get_profile("host"))
        try:
            bp.require(self.client, bp.TENSORS, "reading a model's intermediate tensors")
            sha = self.client.ensure_model(model)
            self.loaded = self.client.load(sha, kernels=kernels, threads=1, name=model.name,
                                           preserve_all_tensors=True)
        except BaseException:
            self.close()
            raise

    def describe(self) -> dict:
        return {"runtime": self.loaded.get("runtime"), "kernels": self.loaded.get("kernels"),
                "op_resolver": self.loaded.get("op_resolver"), "where": "this computer, a child process",
                "preserve_all_tensors": True}

    def capture(self, x: np.ndarray, indices: list, sample_bytes: int,
                each: Optional[Callable[[int, dict], None]] = None) -> Optional[dict]:
        """The tensors ``indices`` for every sample of ``x``, in chunks of at most CHUNK_BYTES;
        ``each(start, chunk)`` receives every chunk as it comes (then nothing is kept and None is
        returned), else the stacked arrays ``{index: (N, *shape)}``."""
        per = max(1, CHUNK_BYTES // max(1, sample_bytes))
        parts: dict = {i: [] for i in indices}
        for start in range(0, len(x), per):
            got = self.client.tensors(x[start:start + per], indices)
            chunk = {i: got[f"t{i}"] for i in indices}
            if each is not None:
                each(start, chunk)
            else:
                for i in indices:
                    parts[i].append(chunk[i])
        if each is not None:
            return None
        return {i: np.concatenate(parts[i]) for i in indices}

    def close(self) -> None:
        if self._own and self.client is not None:
            self.client.close()
            self.client = None

    def __enter__(self) -> "HostTensors":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def try_host_tensors(model, x: np.ndarray, indices: list, sample_bytes: int) -> tuple:
    """``(tensors or None, reason or None)``: the tensors from the reference kernels on this
    computer, or why they could not be had (no runtime, an operator the host cannot run...)."""
    try:
        with HostTensors(model) as host:
            return host.capture(x, indices, sample_bytes), None
    except EdgebenchError as exc:
        return None, exc.one_line()


__all__ = ["HostTensors", "try_host_tensors", "tensor_bytes", "CHUNK_BYTES"]
