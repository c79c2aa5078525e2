"""The slices of an accuracy run (level 4): the clean test set and its edge cases.

A :class:`Slice` is a named set of labelled inputs whose inputs are produced on
demand (perturbations are computed, not stored), so that both models can see
exactly the same bytes in two passes without keeping every perturbed copy:
:class:`SliceInputs` caches generated inputs up to :data:`CACHE_BYTES` and
regenerates the rest (perturbations are deterministic under the seed).

Edge cases are either the built-in perturbation families that suit the model's
input shape (:func:`edgebench.data.perturb.families_for`) at the chosen
severities, all under one seed, or a user-supplied labelled .npz (``x``, ``y``
and optionally ``slice``: one slice name per sample; without it the whole file
is one slice).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from edgebench.data.datasets import check_against_model, load_npz
from edgebench.data.perturb import FAMILIES, families_for, family_group, perturb
from edgebench.errors import DataError, UsageError

CLEAN = "clean"
CACHE_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class Slice:
    name: str
    family: Optional[str]
    severity: Optional[int]
    labels: np.ndarray            # int64 (N,)
    sample_index: np.ndarray      # index into the test set (or the edge-case file)
    make: Callable[[], np.ndarray]
    nbytes: int

    @property
    def n(self) -> int:
        return int(self.labels.size)


class SliceInputs:
    """Inputs of each slice, generated once and cached while they fit in ``budget`` bytes."""

    def __init__(self, slices: list, budget: int = CACHE_BYTES):
        self.slices = slices
        self.budget = budget
        self._cache: dict = {}
        self._used = 0

    def get(self, i: int) -> np.ndarray:
        if i in self._cache:
            return self._cache[i]
        x = np.ascontiguousarray(self.slices[i].make(), dtype=np.float32)
        if self._used + x.nbytes <= self.budget:
            self._cache[i] = x
            self._used += x.nbytes
        return x


def clean_slice(dataset) -> Slice:
    x = dataset.x
    return Slice(CLEAN, None, None, dataset.y, np.arange(len(dataset), dtype=np.int64), lambda: x, x.nbytes)


def value_range(dataset, declared) -> tuple[tuple, str]:
    """The value range perturbations clip to: declared, or the observed range of the test inputs."""
    if declared is not None:
        lo, hi = (float(v) for v in declared)
        if not lo < hi:
            raise UsageError(f"--value-range must be LOW,HIGH with LOW < HIGH, got {lo:g},{hi:g}")
        return (lo, hi), "declared (--value-range)"
    lo, hi = float(dataset.x.min()), float(dataset.x.max())
    if not lo < hi:
        raise DataError(f"the test inputs are constant ({lo:g}): no value range to perturb within",
                        hint="declare one with --value-range LOW,HIGH")
    return (lo, hi), "observed min/max of the test inputs (declare it with --value-range)"


def builtin_slices(dataset, input_shape, families, severities, seed: int, declared_range=None) -> tuple[list, dict]:
    """One slice per (family, severity), perturbing the whole test set under ``seed``."""
    suitable = families_for(input_shape)
    chosen = tuple(families) if families else suitable
    unknown = [f for f in chosen if f not in suitable]
    if unknown:
        group = family_group(input_shape)
        raise UsageError(f"perturbation famil{'ies' if len(unknown) > 1 else 'y'} {', '.join(unknown)} "
                         f"do not suit inputs of shape {'x'.join(map(str, input_shape))} ({group} inputs)",
                         hint=f"choose from {', '.join(FAMILIES[group])}")
    vr, how = value_range(dataset, declared_range)
    x, y = dataset.x, dataset.y
    idx = np.arange(len(dataset), dtype=np.int64)
    slices = []
    for family in chosen:
        for sev in severities:
            slices.append(Slice(f"{family}/s{sev}", family, int(sev), y, idx,
                                partial(perturb, x, family, sev, seed, value_range=vr), x.nbytes))
    desc = {"source": "builtin", "group": family_group(input_shape), "families": list(chosen),
            "severities": [int(s) for s in severities], "seed": int(seed), "value_range": list(vr),
            "value_range_source": how, "module": "edgebench.data.perturb",
            "note": "every family perturbs every test sample; one seed for all severities, so positions and "
                    "directions do not change with severity"}
    return slices, desc


def edge_set_slices(path, input_shape, num_classes: int, data_options: dict) -> tuple[list, dict]:
    """Slices from a labelled edge-case .npz (``x``, ``y``, optional ``slice``)."""
    p = Path(path)
    if p.suffix.lower() != ".npz":
        raise DataError(f"the edge-case set {p} must be a .npz file with arrays x, y (and optionally slice)")
    opts = {k: v for k, v in data_options.items() if k in ("scale", "mean", "std")}
    ds = load_npz(p, num_classes=num_classes, **opts)
    check_against_model(ds, input_shape, num_classes)
    with np.load(p, allow_pickle=False) as npz:
        names = np.asarray(npz["slice"]).astype(str).reshape(-1) if "slice" in npz.files else None
    if names is None:
        names = np.full(len(ds), f"edge-set:{p.stem}")
    elif names.size != len(ds):
        raise DataError(f"{p}: {names.size} slice names for {len(ds)} samples; give one per sample")
    slices = []
    for name in dict.fromkeys(names.tolist()):  # first-seen order
        sel = np.flatnonzero(names == name)
        x = ds.x[sel]
        slices.append(Slice(str(name), None, None, ds.y[sel], sel.astype(np.int64), partial(np.asarray, x), x.nbytes))
    desc = {"source": "file", "data": ds.to_dict(), "slices": [s.name for s in slices]}
    return slices, desc
