"""Arena planning for the microcontroller engine (level 2, pure Python).

Every non-constant tensor and every layer's scratch buffer gets an offset in
one arena. A buffer is live from the layer that writes it (the model input:
from layer 0) to the last layer that reads it (the model output: to the end);
a layer's inputs and outputs are live together, since kernels do not work in
place. Buffers whose lifetimes do not overlap may share bytes.

Placement is greedy by size, largest first (TFLite Micro's GreedyMemoryPlanner
works the same way): each buffer goes at the lowest 4-byte aligned offset
where it overlaps no already placed buffer that is live at the same time. The
result is deterministic (ties broken by first use, then by index).
"""
from __future__ import annotations

from dataclasses import dataclass

ALIGN = 4


def align(n: int, a: int = ALIGN) -> int:
    return (n + a - 1) // a * a


@dataclass
class Buffer:
    key: object          # tensor index or ("scratch", layer)
    size: int
    first: int           # first layer at which it is live
    last: int            # last layer at which it is live
    offset: int = -1


def plan(buffers: list) -> int:
    """Assign ``offset`` to every buffer; return the arena size (peak) in bytes."""
    order = sorted(range(len(buffers)), key=lambda i: (-buffers[i].size, buffers[i].first, i))
    placed: list = []
    for i in order:
        b = buffers[i]
        if b.size == 0:
            b.offset = 0
            continue
        busy = sorted((p.offset, p.offset + align(p.size)) for p in placed
                      if p.first <= b.last and b.first <= p.last)
        offset = 0
        for start, end in busy:
            if offset + b.size <= start:
                break
            offset = max(offset, end)
        b.offset = offset
        placed.append(b)
    return align(max((b.offset + b.size for b in buffers), default=0))


def live_lower_bound(buffers: list, n_layers: int) -> int:
    """Largest total size of the buffers live at one layer: no plan can beat it."""
    return max((sum(align(b.size) for b in buffers if b.first <= k <= b.last)
                for k in range(max(n_layers, 1))), default=0)
