"""``extra.verify`` (level 0): the board's outputs against the host's reference kernels (docs/mcu.md)."""
from __future__ import annotations

from typing import Dict, List, Optional

from edgebench.results.types import Count, Figure, Flag, Int, Mapping_, Num, Str, Text, field, sub


class VerifyOutput(Figure):
    """One output tensor compared, byte for byte, with the reference kernels'."""
    name: Text = field("the output's name")
    bytes: Count = field("bytes compared (all samples)")
    samples: Count = field("inputs compared")
    differing_bytes: Count = field("bytes that differ")
    differing_samples: Count = field("inputs with at least one differing byte")
    max_diff_lsb: Num = field("integer outputs: the largest element difference (null for a float output)", "LSB")
    mean_abs_diff_lsb: Num = field("integer outputs: the mean absolute element difference", "LSB")
    top1_agreement: Num = field("the share of inputs whose top-1 is the same on both (0-1)")
    dtype: Text = field("the output's dtype")
    shape: Optional[List[Optional[Int]]] = field("its shape without the batch")
    unit: Text = field("the differences' unit: `LSB` for an integer output, absolute for a float one")
    elements_off_by: Optional[Dict[str, Int]] = field("integer outputs: elements off by k LSB, per k > 0")
    max_diff_real: Num = field("the largest difference in real units (LSB x the output's scale)")
    max_abs_diff: Num = field("float outputs: the largest absolute difference")


class VerifySide(Figure):
    """One side of the comparison: the board's engine, or the host's reference kernels."""
    kernels: Text = field("the kernels (`reference` on the host, the board's on the device)")
    runtime: Optional[Dict[str, Text]] = field("its runtime (`name`, `version`)")
    op_resolver: Text = field("the op resolver the load reported")
    timing: Text = field("the board's timing (`measured`, `emulated`, ...)")
    link: Optional[Mapping_] = field("a serial link's report (retries, discarded lines, ...)")
    where: Text = field("where the reference ran")


class VerifyGate(Figure):
    """The board profile's bit-exact promise and whether the run kept it."""
    applies: Flag = field("the board's profile promises bit-exact outputs")
    passed: Flag = field("the outputs were bit-exact (null when the gate does not apply)")
    rule: Text = field("the gate in words")
    reason: Text = field("why it failed, or why it does not apply (null when it passed)")


class VerifyFigure(Figure):
    """`verify`: the board's outputs against the host's reference kernels (docs/mcu.md)."""
    bit_exact: Flag = field("every output byte equals the reference's")
    device: VerifySide = sub(VerifySide, "the board's side")
    reference: VerifySide = sub(VerifySide, "the host reference kernels' side")
    gate: VerifyGate = sub(VerifyGate, "the profile's bit-exact gate")
    notes: Optional[List[Str]] = field("notes on the comparison")
    outputs: Optional[List[VerifyOutput]] = field("each output compared")

