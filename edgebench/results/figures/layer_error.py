"""``extra.layer_error`` (level 0): where an INT8 model's error enters, layer by layer, against its FP32
baseline (docs/layer-error.md). Written by :mod:`edgebench.bench.layer_error`."""
from __future__ import annotations

from typing import Any, List, Optional

from edgebench.results.types import Count, Figure, Mapping_, Num, Pair, Str, Text, field, sub


class LocalError(Figure):
    """A layer's own error: its output's against what its inputs brought (the noise budget)."""
    local_sqnr_db: Num = field("the layer's own SQNR", "dB")
    local_ci: Pair = field("its 95% bootstrap interval", "dB")
    drop_db: Num = field("how far below its inputs' SQNR the output falls", "dB")
    what: Text = field("what the figure measures")
    worst_tenth_sqnr_db: Num = field("the layer's own SQNR over the worst tenth of the inputs", "dB")
    worst_tenth_ci: Pair = field("its 95% interval", "dB")


class LayerErrorRow(Figure):
    """One compared tensor (a layer's output, or the model input)."""
    index: Count = field("the operator's index (null: the model input)")
    op: Text = field("the operator (`input` for the model input)")
    name: Text = field("the output tensor's name")
    baseline_index: Count = field("the matched FP32 operator's index")
    matched_by: Text = field("how it was matched: `name`, `position` or `input`")
    sqnr_db: Num = field("mean over inputs of the SQNR of this output against FP32", "dB")
    sqnr_ci: Pair = field("its 95% interval", "dB")
    output_sqnr_db: Num = field("SQNR of the model output when only up to this layer is quantized", "dB")
    cosine: Num = field("mean over inputs of the cosine similarity of this output with FP32")
    saturated_share: Num = field("share of the FP32 values outside the INT8 range (0-1)")
    best_sqnr_db: Num = field("what 8-bit rounding alone allows for this tensor", "dB")
    reference_db: Num = field("the SQNR 8-bit rounding explains for the layer", "dB")
    reference: Text = field("how `reference_db` was made")
    scale: Num = field("the INT8 scale")
    zero_point: Count = field("the INT8 zero point")
    fp32_min: Num = field("the FP32 output's observed minimum")
    fp32_max: Num = field("its maximum")
    levels_used: Num = field("INT8 steps the observed range spans")
    saturated_below: Num = field("share of values clipped at the low end (0-1)")
    clip_excess_steps: Num = field("rms distance of the clipped values to the range, in steps")
    local: LocalError = sub(LocalError, "the layer's own error")
    weights: Optional[Mapping_] = field("the weights' own rounding (`sqnr_db`, `scale_spread`, ...)")
    channels: Optional[Mapping_] = field("the per-channel range (`widest`, `widest_share`, `crushed`, ...)")
    explained_by: Optional[List[Str]] = field("what explains the layer's error, one phrase each")


class LayerPick(Figure):
    """A layer singled out (the first jump, the largest drop)."""
    index: Count = field("the operator's index")
    op: Text = field("the operator")
    name: Text = field("its output tensor")
    local: LocalError = sub(LocalError, "its own error")
    sqnr_db: Num = field("its output's SQNR", "dB")
    output_sqnr_db: Num = field("the model output's SQNR up to it", "dB")
    best_sqnr_db: Num = field("what rounding alone allows", "dB")
    reference_db: Num = field("what rounding explains", "dB")
    reference: Text = field("how `reference_db` was made")
    explained_by: Optional[List[Str]] = field("what explains it, one phrase each")
    which: Text = field("the first jump: which figure jumped")


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
