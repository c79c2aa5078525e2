"""The layout a converted model's tensor has against the model it came from (level 2).

A model lowered from ONNX takes NHWC inputs where the ONNX model took NCHW: the
conversion transposes once, at the input, and the sidecar records it (``layout``).
Data for such a model (calibration, accuracy, verify inputs) is given as the ONNX
model takes it and is transposed with the model: :meth:`TensorLayout.adopt`. Arrays
that already have the converted model's shape are used as they are (said so in the
returned description); decoded images are H x W x C already.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from edgebench.errors import DataError
from edgebench.provenance import read_sidecar


def inverse(perm) -> tuple:
    """The permutation that undoes ``perm``."""
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


def _dims(shape) -> str:
    return "x".join(str(int(d)) for d in shape) or "scalar"


@dataclass(frozen=True)
class TensorLayout:
    """How a converted model's tensor relates to the source model's: ``model = transpose(source, perm)``."""

    name: str
    source_shape: tuple          # the source (ONNX) model's shape, batch first
    model_shape: tuple           # the converted model's shape
    perm: tuple

    @property
    def transposed(self) -> bool:
        return tuple(self.perm) != tuple(range(len(self.perm)))

    @property
    def layout(self) -> str:
        if not self.transposed:
            return "as the source model"
        return "NHWC" if tuple(self.perm) == (0, 2, 3, 1) else "channels-last"

    @property
    def source_layout(self) -> str:
        if not self.transposed:
            return "as the converted model"
        return "NCHW" if tuple(self.perm) == (0, 2, 3, 1) else "channels-first"

    def to_model(self, x: np.ndarray) -> np.ndarray:
        """A batch in the source layout -> the converted model's layout."""
        return np.ascontiguousarray(np.transpose(x, self.perm)) if self.transposed else x

    def to_source(self, y: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(np.transpose(y, inverse(self.perm))) if self.transposed else y

    def adopt(self, x: np.ndarray, source: str, images: bool = False) -> tuple:
        """(x in the converted model's layout, how): ``x`` (N, ...) given in the source model's
        layout is transposed; given in the converted model's layout (or decoded images), kept."""
        sample = tuple(int(d) for d in x.shape[1:])
        src, mod = tuple(self.source_shape[1:]), tuple(self.model_shape[1:])
        if not self.transposed:
            return x, "as given"
        if sample == src and not images:
            return self.to_model(x), (f"given {self.source_layout} {_dims(src)} (the source model's layout), "
                                      f"transposed to {self.layout} {_dims(mod)}")
        if sample == mod:
            what = "decoded images" if images else f"given {self.layout} {_dims(mod)}"
            return x, f"{what}: already the converted model's layout, used as they are"
        raise DataError(f"{source}: samples of shape {_dims(sample)} fit neither the source model's input "
                        f"{self.name!r} ({self.source_layout} {_dims(src)}) nor the converted model's "
                        f"({self.layout} {_dims(mod)})",
                        f"give arrays shaped (N, {', '.join(map(str, src))}) as the ONNX model takes them")

    def to_dict(self) -> dict:
        return {"name": self.name, "source_shape": list(self.source_shape), "model_shape": list(self.model_shape),
                "perm": list(self.perm), "layout": self.layout, "source_layout": self.source_layout}

    @classmethod
    def from_dict(cls, d: dict) -> "TensorLayout":
        return cls(str(d["name"]), tuple(int(v) for v in d["source_shape"]),
                   tuple(int(v) for v in d["model_shape"]), tuple(int(v) for v in d["perm"]))


def input_layout(sidecar: Optional[dict]) -> Optional[TensorLayout]:
    """The first input's layout recorded in a model's sidecar (None: none recorded, or not transposed)."""
    try:
        d = (sidecar or {}).get("layout") or {}
        items = d.get("inputs") or []
        lay = TensorLayout.from_dict(items[0]) if items else None
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return lay if lay is not None and lay.transposed else None


def model_layout(model) -> Optional[TensorLayout]:
    """The input layout recorded in the sidecar of ``model`` (a path, or an object with ``.path``):
    the one lookup every verb's ``--inputs`` and ``--data`` use (None: no sidecar, or not transposed)."""
    path = getattr(model, "path", model)
    try:
        return input_layout(read_sidecar(path))
    except (OSError, ValueError, TypeError):  # an unreadable sidecar: the model's own shape decides
        return None
