"""``extra.layer_error`` (level 0): where an INT8 model's error enters, layer by layer, against its FP32
baseline (docs/layer-error.md). Written by :mod:`edgebench.bench.layer_error`."""
from __future__ import annotations

from typing import Any, List, Optional

from edgebench.results.types import Count, Figure, Flag, Mapping_, Num, Pair, Str, Text, field, sub


class LocalError(Figure):
    """A layer's own error: its output's against what its inputs brought (the noise budget)."""
    local_sqnr_db: Num = field("the layer's own SQNR", "dB")
    local_ci: Pair = field("its 95% bootstrap interval", "dB")
    drop_db: Num = field("how far below its inputs' SQNR the output falls", "dB")
    drop_ci: Pair = field("its 95% interval (paired t over inputs)", "dB")
    input_sqnr_db: Num = field("the SQNR of its worst input (the one the drop is taken from)", "dB")
    worst_input: Count = field("which of its inputs that is (position among the non-constant inputs)")
    worst_tenth_sqnr_db: Num = field("the local SQNR of the worst tenth of the inputs (10th percentile)", "dB")
    worst_tenth_ci: Pair = field("its order-statistic 95% interval", "dB")
    what: Text = field("what the figure measures")


class LayerSqnr(Figure):
    """A compared tensor's error against FP32 and what rounding explains of it (a :class:`LayerPick` repeats
    its row's)."""
    index: Count = field("the operator's index (null: the model input)")
    op: Text = field("the operator (`input` for the model input)")
    name: Text = field("the output tensor's name")
    sqnr_db: Num = field("mean over inputs of the SQNR of this output against FP32", "dB")
    output_sqnr_db: Num = field("SQNR of the FP32 output rounded with the layer's own scale and zero point", "dB")
    best_sqnr_db: Num = field("what 8-bit rounding alone allows for this tensor", "dB")
    reference_db: Num = field("the SQNR 8-bit rounding explains for the layer", "dB")
    reference: Text = field("how `reference_db` was made")
    local: LocalError = sub(LocalError, "the layer's own error")
    explained_by: Optional[List[Str]] = field("what explains the layer's error, one phrase each")


class LayerErrorRow(LayerSqnr):
    """One compared tensor (a layer's output, or the model input)."""
    baseline_index: Count = field("the matched FP32 operator's index")
    matched_by: Text = field("how it was matched: `name`, `position` or `input`")
    sqnr_ci: Pair = field("the 95% interval of `sqnr_db`", "dB")
    cosine: Num = field("mean over inputs of the cosine similarity of this output with FP32")
    cosine_ci: Pair = field("its 95% interval")
    output_sqnr_ci: Pair = field("the 95% interval of `output_sqnr_db`", "dB")
    saturated_share: Num = field("mean over inputs of the share of FP32 values outside the INT8 range (0-1)")
    saturated_ci: Pair = field("its 95% interval")
    n: Count = field("inputs with a figure")
    n_exact: Count = field("inputs whose INT8 tensor equals the FP32 one exactly")
    n_zero: Count = field("inputs whose FP32 tensor is all zeros")
    exact: Flag = field("the INT8 tensor equals the FP32 one on every input (no SQNR)")
    scale: Num = field("the INT8 scale")
    zero_point: Count = field("the INT8 zero point")
    fp32_min: Num = field("the FP32 output's observed minimum")
    fp32_max: Num = field("its maximum")
    levels_used: Num = field("INT8 steps the observed range spans")
    saturated_below: Num = field("share of values clipped at the low end (0-1)")
    clip_excess_steps: Num = field("rms distance of the clipped values to the range, in steps")
    weights: Optional[Mapping_] = field("the weights' own rounding (`sqnr_db`, `scale_spread`, ...)")
    channels: Optional[Mapping_] = field("the per-channel range (`widest`, `widest_share`, `crushed`, ...)")


class LayerPick(LayerSqnr):
    """A layer singled out (the first jump, the largest drop): its row's figures (``PICKED`` in
    :mod:`edgebench.bench.layer_error`)."""
    which: Text = field("the first jump: which figure jumped (`typical` or `worst tenth`)")


class LayerErrorFigure(Figure):
    """`extra.layer_error`: per-layer SQNR of the INT8 model against its FP32 baseline (docs/layer-error.md)."""
    layers: Optional[List[LayerErrorRow]] = field("the compared layers, in the model's order")
    input: LayerErrorRow = sub(LayerErrorRow, "the model input's own quantization")
    first_jump: LayerPick = sub(LayerPick, "the first layer whose own error exceeds what rounding explains")
    largest_drop: LayerPick = sub(LayerPick, "the layer with the largest drop")
    channel_outlier: Optional[Mapping_] = field("a channel that holds most of a per-tensor range")
    jump_db: Num = field("how far below the rounding reference counts as a jump", "dB")
    n: Count = field("inputs compared")
    ci_level: Num = field("the intervals' level")
    method: Text = field("how the figures were made")
    notes: Optional[List[Any]] = field("notes on the comparison")
