"""The accuracy comparison (level 0): ``extra.accuracy``, the candidate against its baseline on the same
samples (docs/accuracy.md). Every key is optional: a run of an older edgebench may lack one."""
from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional

from edgebench.results.conditions import ModelSection, RuntimeSection
from edgebench.results.types import Count, Figure, Flag, Int, Mapping_, Num, Str, Text, field, sub


class Proportion(Figure):
    """A proportion (0-1) with its 95% interval."""
    accuracy: Num = None
    ci_low: Num = None
    ci_high: Num = None
    n: Count = None
    correct: Count = None
    ci_level: Num = field("the interval's level (Wilson)")


class PerClass(Figure):
    class_name: Text = None
    class_index: Count = None
    accuracy: Num = None
    n: Count = None
    correct: Count = field("samples of the class the model got right")
    ci_low: Num = field("95% Wilson interval of its accuracy, low end")
    ci_high: Num = field("... high end")


class ClassifierFigures(Figure):
    top1: Proportion = sub(Proportion)
    top5: Proportion = sub(Proportion)
    per_class: Optional[List[PerClass]] = None
    label: Text = None
    num_classes: Count = None


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
    model: ModelSection = sub(ModelSection, "the model: the candidate's name, path, sha256 and precision; the "
                                            "baseline's whole model section (its tensors, operators, sidecar)")
    on_board: Flag = field("the baseline: run on the board under test (`--baseline-on-board`), not the host")
    agent: Optional[Mapping_] = field("the baseline's agent (`protocol`, `agent_version`, `python`, `numpy`)")
    runtime: RuntimeSection = sub(RuntimeSection)
    provenance: BaselineProvenance = sub(BaselineProvenance)


class CalibrationBin(Figure):
    accuracy: Num = None
    confidence: Num = None
    count: Count = None
    lo: Num = field("the bin's lower confidence edge")
    hi: Num = field("its upper edge")


class CalibrationFigure(Figure):
    bins: Optional[List[CalibrationBin]] = None
    ece: Num = None
    ece_ci_low: Num = None
    ece_ci_high: Num = None
    ece_debiased: Num = None
    ece_null_expected: Num = None
    n: Count = None
    n_bins: Count = field("confidence bins")
    ece_ci_level: Num = field("the bootstrap interval's level")
    ece_n_boot: Count = field("bootstrap resamples of the interval")
    ece_method: Text = field("how the bias-corrected ECE and its interval were made")


class Scaling(Figure):
    temperature: Num = None
    ece_eval_before: Num = None
    ece_eval_after: Num = None
    at_bound: Flag = field("the fitted temperature is at a bound of the search (the likelihood still improved there)")


class TemperatureScaling(Figure):
    baseline: Scaling = sub(Scaling)
    candidate: Scaling = sub(Scaling)
    n_eval: Count = None
    n_fit: Count = None
    seed: Count = None
    fit_fraction: Num = field("share of the samples the temperature was fitted on (`--calib-fraction`)")
    method: Text = field("how the temperature was fitted and judged")


class CalibrationSection(Figure):
    baseline: CalibrationFigure = sub(CalibrationFigure)
    candidate: CalibrationFigure = sub(CalibrationFigure)
    diagrams: Optional[Dict[str, Text]] = None
    temperature_scaling: TemperatureScaling = sub(TemperatureScaling)
    n_bins: Count = field("confidence bins")
    confidence: Text = field("what the confidence is")
    ece_meaning: Text = field("what each ECE figure means")
    label: Text = field("the figures' label (`measured`, `emulated`, ...)")


class Paired(Figure):
    n: Count = None
    agreement_rate: Num = None
    flips_right_to_wrong: Count = None
    flips_wrong_to_right: Count = None
    diff_points: Num = None
    diff_ci_low_points: Num = None
    diff_ci_high_points: Num = None
    mcnemar_p: Num = None
    baseline_correct: Count = field("samples the baseline got right")
    candidate_correct: Count = field("samples the candidate got right")
    baseline_accuracy: Num = field("the baseline's top-1 accuracy (0-1)")
    candidate_accuracy: Num = field("the candidate's top-1 accuracy (0-1)")
    discordant_proportion: Num = field("(right-to-wrong + wrong-to-right flips) / n")
    ci_level: Num = field("the difference interval's level (Newcombe method 10)")
    candidate_pct_of_baseline_correct: Num = field("candidate's correct answers as a percentage of the baseline's", "%")
    baseline_errors: Count = None
    candidate_errors: Count = None
    error_increase_pct: Num = None
    test: Text = field("the significance test")
    label: Text = field("the figures' label")


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
    verdict: Optional[Literal["difference", "no-difference-resolved", "borderline"]] = field(
        "McNemar's test and the paired interval together: a difference, none resolved, or borderline")
    resolved: Flag = field("a difference is resolved (significant and the interval excludes 0)")
    significant: Flag = field("McNemar's p is below alpha")
    ci_excludes_zero: Flag = field("the paired interval excludes 0")
    method: Text = field("how the minimum detectable difference was computed")
    mdd_meaning: Text = field("what `mdd_points` means")
    warning: Text = field("the statement when no difference is resolved (else null)")


class Fidelity(Figure):
    """Agreement of outputs with reference outputs: ``rmse`` and ``max_abs_error`` over all elements;
    ``cosine_similarity`` the mean over samples (both vectors zero: 1, one zero: 0);
    ``relative_l2_error`` = ||test - ref|| / ||ref|| over all elements, None when the reference is all zeros."""
    n: Count = field("samples compared")
    rmse: Num = None
    max_abs_error: Num = None
    cosine_similarity: Num = None
    relative_l2_error: Num = None
    compared: Text = field("what was compared with what")
    label: Text = field("the figures' label")


class SliceSide(Figure):
    accuracy: Num = None
    n: Count = None
    correct: Count = None
    ci_low: Num = field("95% Wilson interval, low end")
    ci_high: Num = field("... high end")
    ci_level: Num = None


class SliceRow(Figure):
    slice: Text = None
    family: Text = field("the perturbation family (null: the clean set, or a slice of an edge-case file)")
    severity: Count = field("its severity (1-5)")
    n: Count = None
    baseline: SliceSide = sub(SliceSide)
    candidate: SliceSide = sub(SliceSide)
    drop_points: Num = None
    drop_ci_low_points: Num = None
    drop_ci_high_points: Num = None
    mcnemar_p: Num = None
    mcnemar_p_holm: Num = None
    agreement_rate: Num = field("share of samples with the same top-1 on both models")
    flips_right_to_wrong: Count = None
    flips_wrong_to_right: Count = None


class EdgeCases(Figure):
    """The edge-case slices: built-in perturbation families (`source` builtin) or a labelled file (`file`)."""
    source: Text = None
    seed: Count = None
    group: Text = field("builtin: the family group the input's shape allows (image, audio, ...)")
    families: Optional[List[Str]] = field("builtin: the perturbation families run")
    severities: Optional[List[Int]] = field("builtin: the severities run (1-5)")
    value_range: Optional[List[Num]] = field("builtin: the range perturbed values are clipped to")
    value_range_source: Text = field("where that range came from (declared, or observed)")
    module: Text = field("builtin: the module that perturbs")
    note: Text = field("how the perturbations are seeded")
    data: Optional[Mapping_] = field("file: the edge-case file as a data set (source, count, sha256, ...)")
    clean: SliceRow = sub(SliceRow)
    slices: Optional[List[SliceRow]] = None
    worst: Text = None
    multiple_comparisons: Optional[Mapping_] = field("the adjustment over all slices (`method`, `m`, `note`)")
    label: Text = field("the figures' label")


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
    gate_on: Text = field("what the gate compared: `interval` (its upper bound) or `point` (null: not gated)")
    interval_straddles: Flag = field("the interval straddles the threshold")
    set_by: Optional[Literal["user", "default"]] = field("who set the threshold: a user's is a gate, a default's "
                                                         "a warning")
    option: Text = field("the threshold's option (`max_drop_points`, `max_ece`, `max_edge_drop_points`)")


class Validation(Figure):
    gate_on: Text = None
    rows: Optional[List[GateRow]] = None
    passed: Flag = None
    failed: Optional[List[Str]] = None
    default_exceeded: Optional[List[Str]] = field("rows beyond a default threshold the user never set (warnings)")
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
    label: Text = field("the figures' label (`measured`, `emulated`, ...)")
    num_classes: Count = field("classes of the model's output")
    output_kind: Optional[Dict[str, Text]] = field("per role: `probabilities` or `logits` (softmax applied)")
    evaluation: Optional[Mapping_] = field("evaluation rates per role (samples over host wall time) and `wall_s`")
    evaluated: Optional[Mapping_] = field("a stopped run: the `samples` both models evaluated of those `planned`")

