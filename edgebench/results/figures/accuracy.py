"""The accuracy comparison (level 0): ``extra.accuracy``, the candidate against its baseline on the same
samples (docs/accuracy.md). Every key is optional: a run of an older edgebench may lack one."""
from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional

from edgebench.results.conditions import RuntimeSection
from edgebench.results.types import Count, Figure, Flag, Mapping_, Num, Str, Text, field, sub


class Proportion(Figure):
    """A proportion (0-1) with its 95% interval."""
    accuracy: Num = None
    ci_low: Num = None
    ci_high: Num = None
    n: Count = None
    correct: Count = None


class PerClass(Figure):
    class_name: Text = None
    class_index: Count = None
    accuracy: Num = None
    n: Count = None


class ClassifierFigures(Figure):
    top1: Proportion = sub(Proportion)
    top5: Proportion = sub(Proportion)
    per_class: Optional[List[PerClass]] = None
    label: Text = None
    num_classes: Count = None


class SideModel(Figure):
    name: Text = None
    precision: Text = None
    sha256: Text = None
    path: Text = None


class BaselineProvenance(Figure):
    """Whether the baseline is the FP32 model the candidate's sidecar names (docs/accuracy.md, Provenance)."""
    status: Optional[Literal["matches", "same-source", "differs", "unchecked"]] = None
    baseline_sha256: Text = None
    expected_sha256: Text = None
    expected_file: Text = None
    source_sha256: Text = None
    baseline_source_sha256: Text = None


class AccuracySide(Figure):
    """The candidate's or the baseline's model, runtime and board."""
    board: Text = None
    where: Text = None
    model: SideModel = sub(SideModel)
    runtime: RuntimeSection = sub(RuntimeSection)
    provenance: BaselineProvenance = sub(BaselineProvenance)


class CalibrationBin(Figure):
    accuracy: Num = None
    confidence: Num = None
    count: Count = None


class CalibrationFigure(Figure):
    bins: Optional[List[CalibrationBin]] = None
    ece: Num = None
    ece_ci_low: Num = None
    ece_ci_high: Num = None
    ece_debiased: Num = None
    ece_null_expected: Num = None
    n: Count = None


class Scaling(Figure):
    temperature: Num = None
    ece_eval_before: Num = None
    ece_eval_after: Num = None


class TemperatureScaling(Figure):
    baseline: Scaling = sub(Scaling)
    candidate: Scaling = sub(Scaling)
    n_eval: Count = None
    n_fit: Count = None
    seed: Count = None


class CalibrationSection(Figure):
    baseline: CalibrationFigure = sub(CalibrationFigure)
    candidate: CalibrationFigure = sub(CalibrationFigure)
    diagrams: Optional[Dict[str, Text]] = None
    temperature_scaling: TemperatureScaling = sub(TemperatureScaling)


class Paired(Figure):
    n: Count = None
    agreement_rate: Num = None
    flips_right_to_wrong: Count = None
    flips_wrong_to_right: Count = None
    diff_points: Num = None
    diff_ci_low_points: Num = None
    diff_ci_high_points: Num = None
    mcnemar_p: Num = None


class Relative(Figure):
    statements: Optional[List[Str]] = None
    diff_points: Num = None
    error_increase_pct: Num = None
    candidate_pct_of_baseline_correct: Num = None
    baseline_errors: Count = None
    candidate_errors: Count = None


class Resolution(Figure):
    n: Count = None
    mdd_points: Num = None
    power: Num = None
    alpha: Num = None
    statement: Text = None
    observed_diff_points: Num = None
    resolvable: Flag = None
    resolvable_at_all: Flag = None
    verdict: Text = None


class Fidelity(Figure):
    """Agreement of outputs with reference outputs: ``rmse`` and ``max_abs_error`` over all elements;
    ``cosine_similarity`` the mean over samples (both vectors zero: 1, one zero: 0);
    ``relative_l2_error`` = ||test - ref|| / ||ref|| over all elements, None when the reference is all zeros."""
    n: Count = field("samples compared")
    rmse: Num = None
    max_abs_error: Num = None
    cosine_similarity: Num = None
    relative_l2_error: Num = None


class SliceSide(Figure):
    accuracy: Num = None
    ci_low: Num = None
    ci_high: Num = None


class SliceRow(Figure):
    slice: Text = None
    family: Text = None
    severity: Count = None
    n: Count = None
    baseline: SliceSide = sub(SliceSide)
    candidate: SliceSide = sub(SliceSide)
    drop_points: Num = None
    drop_ci_low_points: Num = None
    drop_ci_high_points: Num = None
    mcnemar_p: Num = None
    mcnemar_p_holm: Num = None


class EdgeCases(Figure):
    source: Text = None
    seed: Count = None
    clean: SliceRow = sub(SliceRow)
    slices: Optional[List[SliceRow]] = None
    worst: Text = None
    multiple_comparisons: Optional[Mapping_] = None


class GateRow(Figure):
    rule: Text = None
    metric: Text = None
    unit: Text = None
    outcome: Text = None
    note: Text = None
    acceptable: Flag = None
    baseline: Num = None
    candidate: Num = None
    value: Num = None
    threshold: Num = None
    point: Num = None
    ci_low: Num = None
    ci_high: Num = None


class Validation(Figure):
    gate_on: Text = None
    rows: Optional[List[GateRow]] = None
    passed: Flag = None
    failed: Optional[List[Str]] = None
    default_exceeded: Optional[List[Str]] = None
    unresolved: Optional[List[Any]] = None
    thresholds: Optional[Mapping_] = None


class BothFigures(Figure):
    baseline: ClassifierFigures = sub(ClassifierFigures)
    candidate: ClassifierFigures = sub(ClassifierFigures)


class AccuracyFigure(Figure):
    """`accuracy`: the candidate against its baseline on the same samples (docs/accuracy.md)."""
    accuracy: BothFigures = sub(BothFigures)
    baseline: AccuracySide = sub(AccuracySide)
    candidate: AccuracySide = sub(AccuracySide)
    calibration: CalibrationSection = sub(CalibrationSection)
    edge_cases: EdgeCases = sub(EdgeCases)
    fidelity: Fidelity = sub(Fidelity)
    paired: Paired = sub(Paired)
    predictions: Text = None
    relative: Relative = sub(Relative)
    resolution: Resolution = sub(Resolution)
    validation: Validation = sub(Validation)

