"""The two passes of an accuracy run (level 4): both models' outputs, slice by slice, journalled.

With two agents the candidate and then the baseline run each chunk, so whatever
stops the run leaves a prefix evaluated by both (paired); one agent holds one model
at a time, so then the candidate's pass comes first, whole. Every chunk's outputs
are appended to the run folder's journal (``outputs.journal.NNNN.arrows``, one row
per sample: ``role``, ``slice`` index, ``offset`` within the slice, ``y0``..``yC-1``)
before the next request, so a killed run can be finished by ``accuracy --recover``.
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Optional

import numpy as np

JOURNAL = "outputs"
ROLES = ("candidate", "baseline")


class Passes:
    """Outputs (N, C) float64 of both roles per slice, with the inference time of each role."""

    def __init__(self, inputs, chunk: int, emit, journal=None):
        self.inputs, self.chunk, self.emit, self.journal = inputs, chunk, emit, journal
        self.outs: dict = {role: [] for role in ROLES}        # per role: per slice, list of (n, C) parts
        self.infer_s: dict = {role: 0.0 for role in ROLES}
        self.done: dict = {role: 0 for role in ROLES}
        self.total = sum(s.n for s in inputs.slices)

    def run(self, sides: dict) -> None:
        """``sides``: role -> (client, model name, load()): load the model on that client."""
        if len({id(side[0]) for side in sides.values()}) == len(sides):
            for side in sides.values():
                side[2]()
            self._slices(sides)
            return
        for role, side in sides.items():
            side[2]()
            self._slices({role: side})

    def _slices(self, sides: dict) -> None:
        for i, s in enumerate(self.inputs.slices):
            x = self.inputs.get(i)
            for role in sides:
                self.outs[role].append([])
            for j in range(0, len(x), self.chunk):
                for role, (client, name, _) in sides.items():
                    t0 = time.perf_counter()
                    _, y = client.infer(x[j:j + self.chunk])
                    self.infer_s[role] += time.perf_counter() - t0
                    part = np.asarray(y, dtype=np.float64).reshape(len(y), -1)
                    self._journal(role, i, j, part)
                    self.outs[role][-1].append(part)
                    self.done[role] += len(part)
                    rate = self.done[role] / self.infer_s[role] if self.infer_s[role] > 0 else None
                    self.emit({"event": "infer", "role": role, "model": name, "slice": s.name,
                               "done": self.done[role], "total": self.total, "samples_per_s": rate})
            top1 = {}
            for role in sides:   # the slice's top-1 of each role, for a log line (the run computes its own)
                parts = self.outs[role][-1]
                if parts and parts[0].shape[1] > 1 and len(s.labels):
                    top1[role] = float(np.mean(np.argmax(np.concatenate(parts), axis=1) == s.labels))
            self.emit({"event": "slice-done", "slice": s.name, "index": i + 1, "of": len(self.inputs.slices),
                       "n": s.n, "top1": top1})

    def _journal(self, role: str, index: int, offset: int, part: np.ndarray) -> None:
        if self.journal is None:
            return
        k = len(part)
        self.journal.append({"role": np.full(k, role), "slice": np.full(k, index, dtype=np.int64),
                             "offset": np.arange(offset, offset + k, dtype=np.int64),
                             **{f"y{c}": part[:, c] for c in range(part.shape[1])}})

    def restore(self, frame) -> None:
        """Refill the outputs from a journal frame (what a killed run had evaluated, in order)."""
        columns = sorted((c for c in frame.columns if c.startswith("y") and c[1:].isdigit()), key=lambda c: int(c[1:]))
        for role in ROLES:
            rows = frame[frame["role"] == role]
            self.outs[role] = []
            for i, s in enumerate(self.inputs.slices):
                mine = rows[rows["slice"] == i].sort_values("offset")
                gaps = np.flatnonzero(mine["offset"].to_numpy() != np.arange(len(mine)))
                k = int(gaps[0]) if gaps.size else len(mine)  # the contiguous prefix only
                if k == 0:
                    break
                self.outs[role].append([mine[columns].to_numpy(dtype=np.float64)[:k]])
                self.done[role] += k
                if k < s.n:
                    break
        self.infer_s = {role: None for role in ROLES}

    def paired(self) -> tuple[list, list, list]:
        """Slices evaluated by both models (a slice cut short keeps its paired prefix), and their outputs."""
        slices, cand, base = [], [], []
        for s, c_parts, b_parts in zip(self.inputs.slices, self.outs["candidate"], self.outs["baseline"]):
            c = np.concatenate(c_parts) if c_parts else np.zeros((0, 0))
            b = np.concatenate(b_parts) if b_parts else np.zeros((0, 0))
            k = min(len(c), len(b))
            if k == 0:
                break
            slices.append(s if k == s.n else replace(s, labels=s.labels[:k], sample_index=s.sample_index[:k]))
            cand.append(c[:k])
            base.append(b[:k])
            if k < s.n:
                break
        return slices, cand, base

    def timing(self, role: str) -> dict:
        n, t = self.done[role], self.infer_s[role]
        return {"samples": n, "infer_s": t, "samples_per_s": n / t if t else None, "chunk": self.chunk,
                "requests": -(-n // self.chunk) if n else 0}


def timings(passes: Passes, wall_s: Optional[float]) -> dict:
    return {"candidate": passes.timing("candidate"), "baseline": passes.timing("baseline"), "wall_s": wall_s}
