"""``extra.verify`` (level 0): the board's outputs against the host's reference kernels (docs/mcu.md)."""
from __future__ import annotations

from typing import Dict, List, Optional

from edgebench.results.types import Count, Figure, Flag, Int, Mapping_, Num, Str, Text, field, sub


class VerifyOutput(Figure):
    name: Text = None
    bytes: Count = None
    samples: Count = None
    differing_bytes: Count = None
    differing_samples: Count = None
    max_diff_lsb: Num = None
    mean_abs_diff_lsb: Num = None
    top1_agreement: Num = None
    dtype: Text = field("the output's dtype")
    shape: Optional[List[Optional[Int]]] = field("its shape without the batch")
    unit: Text = field("the differences' unit: `LSB` for an integer output, absolute for a float one")
    elements_off_by: Optional[Dict[str, Int]] = field("integer outputs: elements off by k LSB, per k > 0")
    max_diff_real: Num = field("the largest difference in real units (LSB x the output's scale)")
    max_abs_diff: Num = field("float outputs: the largest absolute difference")


class VerifySide(Figure):
    kernels: Text = None
    runtime: Optional[Dict[str, Text]] = None
    op_resolver: Text = field("the op resolver the load reported")
    timing: Text = field("the board's timing (`measured`, `emulated`, ...)")
    link: Optional[Mapping_] = field("a serial link's report (retries, discarded lines, ...)")
    where: Text = field("where the reference ran")


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

