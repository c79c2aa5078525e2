"""The accuracy comparison (level 0): ``extra.accuracy``, the candidate against its baseline on the same
samples (docs/accuracy.md). Every key is optional: a run of an older edgebench may lack one."""
from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional

from edgebench.results.conditions import ModelSection, RuntimeSection
from edgebench.results.figures.common import IntervalLevel, Labelled
from edgebench.results.types import Count, Figure, Flag, Int, Mapping_, Num, Str, Text, field, sub


class WilsonAccuracy(Figure):
    """An accuracy (0-1): the samples a model got right of those it evaluated, with their 95% Wilson interval."""
    accuracy: Num = field("correct / n (0-1)")
    n: Count = field("samples evaluated")
    correct: Count = field("samples the model got right")
    ci_low: Num = field("its 95% Wilson interval, low end (0-1)")
    ci_high: Num = field("... high end (0-1)")


class Proportion(IntervalLevel, WilsonAccuracy):
    """A proportion (0-1) with its 95% interval."""


class PerClass(WilsonAccuracy):
    """One class's top-1 accuracy over the class's samples, with its Wilson interval."""
    class_name: Text = field("the class's name (null when the set names none)")
    class_index: Count = field("the class's index in the model's output")


class Classified(Labelled):
    """Figures of a classifier's outputs."""
    num_classes: Count = field("classes of the model's output")


class ClassifierFigures(Classified):
    """One model's classifier figures: top-1, top-5 and per class."""
    top1: Proportion = sub(Proportion, "top-1 accuracy with its interval")
    top5: Proportion = sub(Proportion, "top-5 accuracy with its interval (null with fewer than 5 classes)")
    per_class: Optional[List[PerClass]] = field("each class's accuracy")


class BaselineProvenance(Figure):
    """Whether the baseline is the FP32 model the candidate's sidecar names (docs/accuracy.md, Provenance)."""
    status: Optional[Literal["matches", "same-source", "differs", "unchecked"]] = field("`matches` (the sidecar "
                                                                                        "names this baseline), "
                                                                                        "`same-source` (made from "
                                                                                        "the same source model), "
                                                                                        "`differs` or `unchecked` "
                                                                                        "(no sidecar)")
    baseline_sha256: Text = field("SHA-256 of the baseline file")
    expected_sha256: Text = field("the FP32 model's SHA-256 the candidate's sidecar names")
    expected_file: Text = field("the FP32 file the candidate's sidecar names")
    source_sha256: Text = field("the candidate's source model's SHA-256 (its sidecar)")
    baseline_source_sha256: Text = field("the baseline's source model's SHA-256 (its sidecar)")


class AccuracySide(Figure):
    """The candidate's or the baseline's model, runtime and board."""
    board: Text = field("the board it ran on (`host` for the host)")
    where: Text = field("where it ran, in words")
    model: ModelSection = sub(ModelSection, "the model: the candidate's name, path, sha256 and precision; the "
                                            "baseline's whole model section (its tensors, operators, sidecar)")
    on_board: Flag = field("the baseline: run on the board under test (`--baseline-on-board`), not the host")
    agent: Optional[Mapping_] = field("the baseline's agent (`protocol`, `agent_version`, `python`, `numpy`)")
    runtime: RuntimeSection = sub(RuntimeSection, "the runtime it ran on")
    provenance: BaselineProvenance = sub(BaselineProvenance, "the baseline: whether it is the FP32 model the "
                                                             "candidate's sidecar names")


class CalibrationBin(Figure):
    """One confidence bin of a reliability diagram."""
    accuracy: Num = field("the bin's accuracy (0-1)")
    confidence: Num = field("the bin's mean top-1 confidence (0-1)")
    count: Count = field("samples in the bin")
    lo: Num = field("the bin's lower confidence edge")
    hi: Num = field("its upper edge")


class ConfidenceBins(Figure):
    """Calibration figures over equal-width confidence bins."""
    n_bins: Count = field("confidence bins")


class CalibrationFigure(ConfidenceBins):
    """One model's calibration: the ECE (plug-in and bias-corrected) and its bins."""
    bins: Optional[List[CalibrationBin]] = field("the confidence bins (equal width)")
    ece: Num = field("plug-in expected calibration error: sum of n_b / N x abs(accuracy - confidence) (0-1)")
    ece_ci_low: Num = field("the bias-corrected ECE's bootstrap interval, low end")
    ece_ci_high: Num = field("... high end")
    ece_debiased: Num = field("bias-corrected ECE (each bin's squared gap estimated without bias), the gated figure")
    ece_null_expected: Num = field("the plug-in ECE a perfectly calibrated model would score on these samples "
                                   "(context)")
    n: Count = field("samples")
    ece_ci_level: Num = field("the bootstrap interval's level")
    ece_n_boot: Count = field("bootstrap resamples of the interval")
    ece_method: Text = field("how the bias-corrected ECE and its interval were made")


class Scaling(Figure):
    """One model's fitted temperature and its ECE before and after."""
    temperature: Num = field("the fitted temperature (logits divided by it)")
    ece_eval_before: Num = field("ECE on the evaluation share, unscaled")
    ece_eval_after: Num = field("ECE on the evaluation share, scaled")
    at_bound: Flag = field("the fitted temperature is at a bound of the search (the likelihood still improved there)")


class TemperatureScaling(Figure):
    """Temperature scaling fitted on a share of the samples, judged on the rest."""
    baseline: Scaling = sub(Scaling, "the baseline's temperature")
    candidate: Scaling = sub(Scaling, "the candidate's temperature")
    n_eval: Count = field("samples it was judged on")
    n_fit: Count = field("samples it was fitted on")
    seed: Count = field("the seed of the split")
    fit_fraction: Num = field("share of the samples the temperature was fitted on (`--calib-fraction`)")
    method: Text = field("how the temperature was fitted and judged")


class CalibrationSection(Labelled, ConfidenceBins):
    """Calibration of both models: ECE, bins, reliability diagrams, temperature scaling."""
    baseline: CalibrationFigure = sub(CalibrationFigure, "the baseline's calibration")
    candidate: CalibrationFigure = sub(CalibrationFigure, "the candidate's calibration")
    diagrams: Optional[Dict[str, Text]] = field("the reliability diagrams written beside run.json, per role")
    temperature_scaling: TemperatureScaling = sub(TemperatureScaling, "the temperature each model's logits are best "
                                                                      "scaled by")
    confidence: Text = field("what the confidence is")
    ece_meaning: Text = field("what each ECE figure means")


class PairedTest(Figure):
    """Both models on the same samples: their agreement, the flips between them and McNemar's test."""
    n: Count = field("samples both models evaluated")
    agreement_rate: Num = field("share of samples with the same top-1 on both models (0-1)")
    flips_right_to_wrong: Count = field("samples the baseline got right and the candidate wrong")
    flips_wrong_to_right: Count = field("samples the baseline got wrong and the candidate right")
    mcnemar_p: Num = field("McNemar's exact two-sided p (1 without discordant samples)")


class RelativeFigures(Figure):
    """The candidate relative to the baseline, three ways (:class:`Relative` repeats :class:`Paired`'s)."""
    diff_points: Num = field("candidate - baseline top-1 accuracy, x 100 (negative: a drop)")
    error_increase_pct: Num = field("100 x (candidate errors - baseline errors) / baseline errors (null: the "
                                    "baseline made none and the candidate did)")
    candidate_pct_of_baseline_correct: Num = field("100 x candidate correct / baseline correct: the candidate's "
                                                   "correct answers as a percentage of the baseline's", "%")
    baseline_errors: Count = field("samples the baseline got wrong")
    candidate_errors: Count = field("samples the candidate got wrong")


class Paired(Labelled, RelativeFigures, PairedTest):
    """The paired comparison on the same samples: flips, difference in points, McNemar's test."""
    diff_ci_low_points: Num = field("the paired 95% interval of `diff_points`, low end (Newcombe method 10)")
    diff_ci_high_points: Num = field("... high end")
    baseline_correct: Count = field("samples the baseline got right")
    candidate_correct: Count = field("samples the candidate got right")
    baseline_accuracy: Num = field("the baseline's top-1 accuracy (0-1)")
    candidate_accuracy: Num = field("the candidate's top-1 accuracy (0-1)")
    discordant_proportion: Num = field("(right-to-wrong + wrong-to-right flips) / n")
    ci_level: Num = field("the difference interval's level (Newcombe method 10)")
    test: Text = field("the significance test")


class Relative(RelativeFigures):
    """The candidate relative to the baseline, three ways, with statements in words."""
    statements: Optional[List[Str]] = field("the comparison in sentences")


class Resolution(Figure):
    """What this test set can resolve: the minimum detectable difference and the verdict."""
    n: Count = field("samples")
    mdd_points: Num = field("the smallest true accuracy difference n samples resolve at `alpha` with `power`, x 100 "
                            "(null: none is)")
    power: Num = field("the power the MDD is computed at (0-1)")
    alpha: Num = field("the two-sided significance level (0-1)")
    statement: Text = field("what the test set can resolve, in words")
    observed_diff_points: Num = field("the observed candidate - baseline difference, x 100")
    resolvable: Flag = field("a difference is resolved (the same as `resolved`)")
    resolvable_at_all: Flag = field("some feasible difference is resolvable with these samples")
    verdict: Optional[Literal["difference", "no-difference-resolved", "borderline"]] = field(
        "McNemar's test and the paired interval together: a difference, none resolved, or borderline")
    resolved: Flag = field("a difference is resolved (significant and the interval excludes 0)")
    significant: Flag = field("McNemar's p is below alpha")
    ci_excludes_zero: Flag = field("the paired interval excludes 0")
    method: Text = field("how the minimum detectable difference was computed")
    mdd_meaning: Text = field("what `mdd_points` means")
    warning: Text = field("the statement when no difference is resolved (else null)")


class Fidelity(Labelled):
    """Agreement of outputs with reference outputs: ``rmse`` and ``max_abs_error`` over all elements;
    ``cosine_similarity`` the mean over samples (both vectors zero: 1, one zero: 0);
    ``relative_l2_error`` = ||test - ref|| / ||ref|| over all elements, None when the reference is all zeros."""
    n: Count = field("samples compared")
    rmse: Num = field("root mean square error over all elements")
    max_abs_error: Num = field("the largest absolute element error")
    cosine_similarity: Num = field("mean over samples of the cosine similarity (both zero: 1, one zero: 0)")
    relative_l2_error: Num = field("norm(test - reference) / norm(reference) over all elements (null: the reference "
                                   "is all zeros)")
    compared: Text = field("what was compared with what")


class SliceSide(Proportion):
    """One model's top-1 accuracy on a slice, with its Wilson interval."""


class SliceRow(PairedTest):
    """One edge-case slice (its samples): both models' accuracy and the candidate's paired drop."""
    slice: Text = field("the slice's name (family and severity, or the file's slice)")
    family: Text = field("the perturbation family (null: the clean set, or a slice of an edge-case file)")
    severity: Count = field("its severity (1-5)")
    baseline: SliceSide = sub(SliceSide, "the baseline's accuracy on it")
    candidate: SliceSide = sub(SliceSide, "the candidate's accuracy on it")
    drop_points: Num = field("baseline - candidate top-1 accuracy on the slice, x 100 (positive: a drop)")
    drop_ci_low_points: Num = field("its paired 95% interval, low end")
    drop_ci_high_points: Num = field("... high end")
    mcnemar_p_holm: Num = field("McNemar's p, Holm-adjusted over all slices")


class EdgeCases(Labelled):
    """The edge-case slices: built-in perturbation families (`source` builtin) or a labelled file (`file`)."""
    source: Text = field("`builtin` (perturbation families) or `file` (a labelled edge-case set)")
    seed: Count = field("the perturbations' seed")
    group: Text = field("builtin: the family group the input's shape allows (image, audio, ...)")
    families: Optional[List[Str]] = field("builtin: the perturbation families run")
    severities: Optional[List[Int]] = field("builtin: the severities run (1-5)")
    value_range: Optional[List[Num]] = field("builtin: the range perturbed values are clipped to")
    value_range_source: Text = field("where that range came from (declared, or observed)")
    module: Text = field("builtin: the module that perturbs")
    note: Text = field("how the perturbations are seeded")
    data: Optional[Mapping_] = field("file: the edge-case file as a data set (source, count, sha256, ...)")
    clean: SliceRow = sub(SliceRow, "the clean set's row")
    slices: Optional[List[SliceRow]] = field("each slice's row")
    worst: Text = field("the slice with the largest drop")
    multiple_comparisons: Optional[Mapping_] = field("the adjustment over all slices (`method`, `m`, `note`)")


class GateRow(Figure):
    """One row of the validation table: a metric, its threshold and the outcome."""
    rule: Text = field("the rule in words")
    metric: Text = field("the figure gated (`top-1 accuracy`, ECE, the worst edge-case slice, ...)")
    unit: Text = field("the unit of `baseline` and `candidate` (`fraction`, `ece`, `ratio`)")
    outcome: Text = field("`pass`, `fail`, `unresolved` (the interval straddles the threshold) or `not gated`")
    note: Text = field("the figure and its interval in words")
    acceptable: Flag = field("the gated bound is within the threshold (null: not gated)")
    baseline: Num = field("the baseline's figure (accuracy 0-1, or ECE)")
    candidate: Num = field("the candidate's figure")
    value: Num = field("the value compared with the threshold (the interval's upper bound, or the point)")
    threshold: Num = field("the threshold (accuracy points for a drop, an ECE for calibration)")
    point: Num = field("the gated point estimate (a drop in accuracy points, or the ECE)")
    ci_low: Num = field("its 95% interval, low end")
    ci_high: Num = field("... high end")
    gate_on: Text = field("what the gate compared: `interval` (its upper bound) or `point` (null: not gated)")
    interval_straddles: Flag = field("the interval straddles the threshold")
    set_by: Optional[Literal["user", "default"]] = field("who set the threshold: a user's is a gate, a default's "
                                                         "a warning")
    option: Text = field("the threshold's option (`max_drop_points`, `max_ece`, `max_edge_drop_points`)")


class Validation(Figure):
    """The validation gates: the thresholds, each row's outcome and what failed."""
    gate_on: Text = field("what the gates compare: `interval` (its upper bound) or `point`")
    rows: Optional[List[GateRow]] = field("each gated (and ungated) figure")
    passed: Flag = field("no gate the user set failed")
    failed: Optional[List[Str]] = field("the metrics whose user-set gate failed")
    default_exceeded: Optional[List[Str]] = field("rows beyond a default threshold the user never set (warnings)")
    unresolved: Optional[List[Any]] = field("the metrics whose interval straddles the threshold")
    thresholds: Optional[Mapping_] = field("the thresholds in force (`max_drop_points`, `max_ece`, "
                                           "`max_edge_drop_points`, `gate_on`)")


class BothFigures(Figure):
    """Both models' classifier figures."""
    baseline: ClassifierFigures = sub(ClassifierFigures, "the baseline's")
    candidate: ClassifierFigures = sub(ClassifierFigures, "the candidate's")


class AccuracyFigure(Classified):
    """`accuracy`: the candidate against its baseline on the same samples (docs/accuracy.md)."""
    accuracy: BothFigures = sub(BothFigures, "both models' top-1, top-5 and per-class accuracy")
    baseline: AccuracySide = sub(AccuracySide, "the baseline's model, runtime and board")
    candidate: AccuracySide = sub(AccuracySide, "the candidate's model, runtime and board")
    calibration: CalibrationSection = sub(CalibrationSection, "both models' calibration")
    edge_cases: EdgeCases = sub(EdgeCases, "the edge-case slices")
    fidelity: Fidelity = sub(Fidelity, "the candidate's outputs against the baseline's")
    paired: Paired = sub(Paired, "the paired comparison on the same samples")
    predictions: Text = field("the predictions file written beside run.json")
    relative: Relative = sub(Relative, "the candidate relative to the baseline")
    resolution: Resolution = sub(Resolution, "what the test set can resolve")
    validation: Validation = sub(Validation, "the gates and their outcome")
    output_kind: Optional[Dict[str, Text]] = field("per role: `probabilities` or `logits` (softmax applied)")
    evaluation: Optional[Mapping_] = field("evaluation rates per role (samples over host wall time) and `wall_s`")
    evaluated: Optional[Mapping_] = field("a stopped run: the `samples` both models evaluated of those `planned`")

