"""``extra.verify`` (level 0): the board's outputs against the host's reference kernels (docs/mcu.md)."""
from __future__ import annotations

from typing import Dict, List, Optional

from edgebench.results.types import Count, Figure, Flag, Num, Str, Text, sub


class VerifyOutput(Figure):
    name: Text = None
    bytes: Count = None
    samples: Count = None
    differing_bytes: Count = None
    differing_samples: Count = None
    max_diff_lsb: Num = None
    mean_abs_diff_lsb: Num = None
    top1_agreement: Num = None
    max_abs_diff: Num = None


class VerifySide(Figure):
    kernels: Text = None
    runtime: Optional[Dict[str, Text]] = None
    where: Text = None


class VerifyGate(Figure):
    applies: Flag = None
    passed: Flag = None
    rule: Text = None
    reason: Text = None


class VerifyFigure(Figure):
    """`verify`: the board's outputs against the host's reference kernels (docs/mcu.md)."""
    bit_exact: Flag = None
    device: VerifySide = sub(VerifySide)
    reference: VerifySide = sub(VerifySide)
    gate: VerifyGate = sub(VerifyGate)
    notes: Optional[List[Str]] = None
    outputs: Optional[List[VerifyOutput]] = None

