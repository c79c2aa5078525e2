"""Recording an accuracy run (level 4): figures, warnings, conditions, files.

:func:`describe` makes the run's RunResult from what is known before the models
run; :func:`store_run` turns the outputs both models gave on the evaluated slices
(all of them, or the paired prefix of a stopped run) into the ``extra["accuracy"]``
section (:mod:`edgebench.bench.accuracy_eval`), the warnings and the conditions of
both models, and writes them into the run folder of the run skeleton:
``predictions.parquet`` (one row per sample and slice: ``sample_index``,
``slice``, ``label``, ``pred_base``, ``pred_cand``, ``conf_base``,
``conf_cand``), the two reliability diagrams and ``run.json``, the last one
written when everything else is in place.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, List, Optional

import numpy as np

from edgebench.bench import accuracy_eval as ev
from edgebench.bench.accuracy_options import AccuracyOptions
from edgebench.bench.describe import figure_label
from edgebench.bench.hostinfo import host_description
from edgebench.bench.memory import run_memory
from edgebench.bench.record import board_section, new_result
from edgebench.data.datasets import Dataset
from edgebench.modelfile import ModelFile
from edgebench.provenance import baseline_provenance, read_sidecar
from edgebench.report.claim import accuracy_claim
from edgebench.results import store
from edgebench.results.conditions import (
    ModelSection,
    RuntimeSection,
    ScenarioSection,
    SettingsSection,
    TimingSection,
)
from edgebench.results.figures.accuracy import AccuracyFigure, AccuracySide, BaselineProvenance, EdgeCases
from edgebench.results.figures.device import MemoryFigure
from edgebench.results.figures.energy import PowerSection
from edgebench.results.figures.thermal import ThermalSection
from edgebench.results.model import RunResult, RunWarning
from edgebench.stats.calibration import reliability_diagram

PREDICTIONS = "predictions.parquet"
DIAGRAMS = {"baseline": "reliability_baseline.png", "candidate": "reliability_candidate.png"}
CLIP_WARN_FRACTION = 0.01
UNDERUSED_RANGE = 0.05


def input_range_warnings(model: ModelFile, x: np.ndarray) -> List[RunWarning]:
    """Warnings when test inputs clip at, or use little of, the INT8 input range of ``model``."""
    t = model.inputs[0]
    if not t.scale or t.dtype not in ("int8", "uint8", "int16"):
        return []
    info = np.iinfo(t.dtype)
    scale, zp = float(t.scale[0]), float(t.zero_point[0] if t.zero_point else 0)
    lo, hi = (info.min - zp) * scale, (info.max - zp) * scale
    out = []
    clipped = float(np.mean((x < lo - scale / 2) | (x > hi + scale / 2)))
    if clipped > CLIP_WARN_FRACTION:
        out.append(RunWarning(code="inputs-clipped",
                              message=f"{100 * clipped:.1f}% of the input values fall outside {model.name}'s "
                                      f"{t.dtype} input range [{lo:.4g}, {hi:.4g}] and are clipped by quantization",
                              remedy="check the preprocessing against the calibration data "
                                     "(--preprocess scale=, mean=, std=)"))
    span = float(x.max() - x.min())
    if span < UNDERUSED_RANGE * (hi - lo):
        out.append(RunWarning(code="input-range-underused",
                              message=f"the test inputs span {span:.4g}, {100 * span / (hi - lo):.1f}% of "
                                      f"{model.name}'s {t.dtype} input range [{lo:.4g}, {hi:.4g}]: few quantization "
                                      "levels are used",
                              remedy="the model likely expects other preprocessing (e.g. 0..255, not 0..1)"))
    return out


MIN_PAIRED = 2  # clean samples both models must have evaluated for a stopped run to keep figures


@dataclass
class Run:
    """Everything an accuracy run knows besides the model outputs (the later fields fill in as it goes)."""

    model: ModelFile
    baseline: ModelFile
    dataset: Dataset
    slices: list
    edge: Optional[dict]
    opts: AccuracyOptions
    profile: Any                                    # a BoardProfile (or, recovering, its name and kind)
    base_profile: Any
    hello: dict
    base_hello: dict
    system: dict
    client_desc: Optional[str]
    thermal: list                                   # [start, end]; end {} until the passes finish
    cand_loaded: dict = field(default_factory=dict)
    base_loaded: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
    agent_status: dict = field(default_factory=dict)


def _runtime(loaded: dict, kernels: str, threads: int) -> RuntimeSection:
    rt = loaded.get("runtime") or {}
    return RuntimeSection(name=rt.get("name"), version=rt.get("version"), kernels=loaded.get("kernels", kernels),
                          op_resolver=loaded.get("op_resolver"), threads=loaded.get("threads", threads),
                          delegate=loaded.get("delegate"))


def _figures(run: Run, slices: list, cand_out: list, base_out: list,
             label: str) -> tuple[AccuracyFigure, dict, list]:
    y = slices[0].labels
    kinds = {"baseline": ev.outputs_kind(base_out[0]), "candidate": ev.outputs_kind(cand_out[0])}
    base = ev.model_outputs(base_out[0], kinds["baseline"])
    cand = ev.model_outputs(cand_out[0], kinds["candidate"])
    names = run.dataset.class_names
    acc_b, acc_c = ev.accuracy_section(base, y, names, label), ev.accuracy_section(cand, y, names, label)
    paired, pc = ev.paired_section(base, cand, y)
    calibration, eces = ev.calibration_section(base, cand, y, run.opts.calib_fraction, run.opts.seed)
    fidelity = ev.fidelity_section(base, cand)
    fidelity.label = label
    per_slice, rows = [], []
    for s, bo, co in zip(slices, base_out, cand_out):
        b, c = ev.model_outputs(bo, kinds["baseline"]), ev.model_outputs(co, kinds["candidate"])
        per_slice.append((s, b, c))
        if s.name != "clean":
            rows.append(ev.slice_row(s.name, s.family, s.severity, b, c, s.labels))
    ev.adjust_slice_p_values(rows)
    o = run.opts
    edge = None if run.edge is None else EdgeCases.model_validate(ev.plain({
        **run.edge, "clean": ev.slice_row("clean", None, None, base, cand, y), "slices": rows,
        "worst": (ev.worst_slice(rows) or {}).get("slice"),
        "multiple_comparisons": {"method": "Holm", "m": len(rows),
                                 "note": "mcnemar_p_holm controls the family-wise error over all slices"},
        "label": label}))
    validation = ev.validation_section(acc_b, acc_c, paired, calibration, fidelity, rows, o.max_drop_points,
                                       o.max_ece, o.max_edge_drop_points, o.gate_on, o.gates_set)
    section = AccuracyFigure.model_validate(ev.plain({
        "label": label,
        "num_classes": int(acc_c["num_classes"]),
        "output_kind": kinds,
        "accuracy": {"baseline": acc_b, "candidate": acc_c},
        "paired": {**paired, "label": label},
        "relative": ev.relative_section(pc),
        "resolution": ev.resolution_section(pc),
        "calibration": {**calibration, "label": label},
        "fidelity": fidelity,
        "validation": validation}))
    if edge is not None:        # no edge cases run: the key stays absent (reads as an empty EdgeCases)
        section.edge_cases = edge
    return section, eces, per_slice


def _warnings(run: Run, section: AccuracyFigure) -> List[RunWarning]:
    out = []
    res = section.resolution
    if res.verdict == "no-difference-resolved":
        out.append(RunWarning(code="difference-not-resolvable", message=res.statement,
                              remedy="do not claim a difference; claim its absence only as 'the difference lies "
                                     "within the interval'; a larger test set narrows it"))
    elif res.verdict == "borderline":
        out.append(RunWarning(code="difference-borderline", message=res.statement,
                              remedy="use more test samples before claiming a difference or its absence"))
    rows = section.validation.rows or []
    for row in rows:
        if row.outcome == "unresolved" or (row.gate_on == "point" and row.interval_straddles):
            pts = row.unit == "fraction"
            ci = (f"{row.ci_low:+.2f} to {row.ci_high:+.2f} points" if pts else
                  f"{row.ci_low:.4f} to {row.ci_high:.4f}")
            out.append(RunWarning(code="gate-unresolved",
                                  message=f"{row.metric}: the 95% interval ({ci}) straddles the limit "
                                          f"{row.threshold:g}; this test set cannot tell whether the gate holds",
                                  remedy="use a larger test set (or, knowingly, --gate-on point)"))
    for row in rows:
        if row.set_by == "default" and row.acceptable is False:
            flag = {"max_drop_points": "--max-drop", "max_ece": "--max-ece",
                    "max_edge_drop_points": "--max-edge-drop"}.get(row.option or "", "the threshold")
            out.append(RunWarning(code="default-threshold-exceeded",
                                  message=f"{row.metric}: {row.note}; beyond the DEFAULT limit {row.threshold:g} "
                                          f"(a warning: you did not set {flag}, so it is not a gate and the exit "
                                          "code stays 0)",
                                  remedy=f"set {flag} to make it a gate (exit 2 on failure), or review the model"))
    scaling = section.calibration.temperature_scaling
    for role, ts in (("baseline", scaling.baseline), ("candidate", scaling.candidate)):
        if ts.at_bound:
            out.append(RunWarning(code="temperature-at-bound",
                                  message=f"the fitted temperature of the {role} ({ts.temperature:.3g}) is at a "
                                          "bound of the search: the likelihood was still improving there",
                                  remedy="read the ECE after scaling with care (e.g. a model right on every fit "
                                         "sample)"))
    for srow in section.edge_cases.slices or []:
        if srow.n is not None and srow.n < 30:
            out.append(RunWarning(code="small-slice", message=f"edge-case slice {srow.slice} has only {srow.n} "
                                  "samples: its accuracy interval is wide", remedy="add samples to that slice"))
    prov = section.baseline.provenance
    if prov.status == "differs":
        out.append(RunWarning(code="baseline-provenance", message=provenance_message(run.model, run.baseline, prov),
                              remedy="pass the FP32 model this one was converted from (--baseline auto finds it "
                                     "from the sidecar), or ignore this if the baseline is knowingly another export"))
    out += class_order_warnings(run.dataset.class_order)
    out += input_range_warnings(run.model, run.dataset.x)
    return out


def class_order_warnings(order: dict) -> List[RunWarning]:
    """An image folder's classes numbered otherwise than sorted folder names would (a labels file or the
    model's names: said, so a surprise is seen), or the model's names ignored because they do not match.
    ``order``: the data set's ``class_order`` (a plain dict, :class:`edgebench.data.datasets.Dataset`)."""
    out = []
    if order.get("ignored"):
        out.append(RunWarning(code="class-names-ignored", message=f"{order['ignored']}: classes are numbered by "
                              "sorted folder name", remedy="pass --labels FILE with the class names in the model's "
                              "training order (one per line, class 0 first)"))
    mapping, ordered = order.get("map") or {}, order.get("sorted") or []
    if mapping and ordered and list(mapping) != list(ordered):
        moved = [f"{name} {ordered.index(name)}→{i}" for name, i in mapping.items() if ordered.index(name) != i]
        out.append(RunWarning(code="class-order", message=f"the {order.get('by')} numbers the folders otherwise "
                              f"than their sorted names would: {', '.join(moved[:6])}"
                              f"{', …' if len(moved) > 6 else ''}; the {order.get('by')} is used",
                              remedy="nothing, if it is the model's training order; else fix the labels file"))
    return out


def provenance_message(model: ModelFile, baseline: ModelFile, prov: BaselineProvenance) -> str:
    """The warning of a baseline other than the one the candidate's sidecar names: both sha256, both files."""
    if prov.expected_sha256 and prov.expected_sha256 != prov.baseline_sha256:
        named = f" ({Path(prov.expected_file).name})" if prov.expected_file else ""
        return (f"baseline {Path(baseline.path).name} (sha256 {str(prov.baseline_sha256)[:12]}…) is not the "
                f"FP32 model {Path(model.path).name}'s sidecar names: sha256 {prov.expected_sha256[:12]}…{named}; "
                "another network with the same input and output shapes would be compared without a word")
    return (f"baseline {Path(baseline.path).name} was made from source sha256 "
            f"{str(prov.baseline_source_sha256)[:12]}…, {Path(model.path).name} from "
            f"{str(prov.source_sha256)[:12]}… (their sidecars): not the same network")


NO_POWER = "no power meter attached to this run: energy not measured"


def describe(run: Run) -> RunResult:
    """A fresh accuracy RunResult with the run's conditions (what is known before the models run)."""
    o = run.opts
    result = new_result("accuracy", figure_label(run.hello))
    sidecar = read_sidecar(run.model.path)
    result.host = host_description()
    result.model = ModelSection.model_validate({**run.model.to_dict(), "sidecar": sidecar,
                                                "calibration": (sidecar or {}).get("calibration")})
    result.board = board_section(run.profile, run.client_desc or "", run.system)
    result.scenario = ScenarioSection(name="accuracy", batch=1, inputs=run.dataset.to_dict())
    result.agent = {k: run.hello.get(k) for k in ("protocol", "agent_version", "python", "numpy", "pid", "timing")}
    result.thermal = ThermalSection(available=bool(run.thermal[0].get("available")), start=run.thermal[0])
    result.timing = TimingSection.model_validate({"note": "no latency is measured in an accuracy run; see "
                                                          "extra.accuracy.evaluation for the evaluation throughput"})
    result.settings = SettingsSection.model_validate({
        "seed": o.seed, "calib_fraction": o.calib_fraction, "severities": list(o.severities),
        "families": None if o.families is None else list(o.families),
        "edge_cases": o.edge_cases, "edge_set": o.edge_set,
        "value_range": None if o.value_range is None else list(o.value_range),
        "chunk_size": o.chunk_size, "gate_on": o.gate_on,
        "data_options": dict(o.data_options), "baseline_on_board": o.baseline_on_board})
    result.power = PowerSection.model_validate({"measured": False, "boundary": None, "instrument": None,
                                                "note": NO_POWER})
    return result


def _describe_end(run: Run, result: RunResult, section: AccuracyFigure) -> None:
    """What is known once the models ran: runtimes, thermal end, evaluation rates, both models' identity."""
    o = run.opts
    result.runtime = _runtime(run.cand_loaded, o.kernels, o.threads)
    result.agent = {**{k: run.hello.get(k) for k in ("protocol", "agent_version", "python", "numpy", "pid")},
                    "status": run.agent_status}
    memory = run_memory(run.profile, run.model.path, run.agent_status) if run.agent_status else None
    if memory:
        result.extra.memory = MemoryFigure.model_validate(memory)
    result.settings = result.settings.model_copy(update={"thresholds": section.validation.thresholds})
    start, end = run.thermal
    result.thermal = ThermalSection(available=bool(start.get("available") or end.get("available")), start=start,
                                    end=end or None)
    base_sidecar = read_sidecar(run.baseline.path)
    m = result.model
    section.candidate = AccuracySide(model={"name": m.name, "path": m.path, "sha256": m.sha256,
                                            "precision": m.precision},
                                     board=run.profile.name, runtime=result.runtime, where="board")
    section.baseline = AccuracySide(
        model={**run.baseline.to_dict(), "sidecar": base_sidecar},
        board=run.base_profile.name, on_board=o.baseline_on_board,
        where="board" if o.baseline_on_board else "host board (local agent)",
        runtime=_runtime(run.base_loaded, o.baseline_kernels, o.baseline_threads),
        agent={k: run.base_hello.get(k) for k in ("protocol", "agent_version", "python", "numpy")},
        provenance=baseline_provenance(run.model.path, run.baseline.path, run.baseline.sha256))
    t = run.timings
    section.evaluation = {
        "candidate": t["candidate"], "baseline": t["baseline"], "wall_s": t["wall_s"],
        "definition": "samples / host wall time of the infer requests (transfer, agent-side quantization, "
                      "invoke, dequantization); perturbation and statistics excluded; wall_s covers both passes"}
    section.predictions = PREDICTIONS
    section.calibration.diagrams = dict(DIAGRAMS)


def _predictions_frame(per_slice: list):
    import pandas as pd  # ~1 s to import (measured): only when the predictions are written

    parts = []
    for s, b, c in per_slice:
        parts.append(pd.DataFrame({
            "sample_index": s.sample_index.astype(np.int64), "slice": np.full(s.n, s.name, dtype=object),
            "label": s.labels.astype(np.int64), "pred_base": b.pred.astype(np.int64),
            "pred_cand": c.pred.astype(np.int64), "conf_base": b.conf.astype(np.float64),
            "conf_cand": c.conf.astype(np.float64)}))
    return pd.concat(parts, ignore_index=True)


def store_run(run: Run, result: RunResult, folder, slices: list, cand_out: list, base_out: list,
              status: str = "complete", reason: Optional[str] = None) -> None:
    """Compute the figures of the paired ``slices`` and write them into ``folder`` (a started
    :class:`~edgebench.bench.record.RunFolder`): predictions, diagrams, then run.json last."""
    section, eces, per_slice = _figures(run, slices, cand_out, base_out, result.label)
    if status != "complete":
        done = sum(s.n for s in slices)
        planned = sum(s.n for s in run.slices)
        section.evaluated = {"samples": done, "planned": planned, "slices": [s.name for s in slices],
                             "note": "the run stopped: figures cover the samples both models evaluated"}
    _describe_end(run, result, section)
    result.warnings = _warnings(run, section)
    if status != "complete":
        result.warnings.append(RunWarning(code="run-incomplete", message=f"{reason}; figures cover {done:,} of "
                                          f"{planned:,} planned samples",
                                          remedy="run the command again to evaluate every sample"))
    result.extra.accuracy = section
    store.write_parquet(folder.path / PREDICTIONS, _predictions_frame(per_slice))
    for role, model in (("baseline", run.baseline), ("candidate", run.model)):
        reliability_diagram(eces[role], folder.path / DIAGRAMS[role],
                            title=f"{model.name} ({model.precision.upper()}, {role})")
    result.status, result.status_reason = status, reason   # type: ignore[assignment]  # one of STATUSES
    result.extra.claim = accuracy_claim(result)
    folder.save(result)
