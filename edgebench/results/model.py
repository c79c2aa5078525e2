"""The stored-result data model (level 0): no I/O here but to/from dict.

A :class:`RunResult` is one benchmark run and everything needed to judge it:
what ran (model, runtime, kernels, threads), where (board and its system
description), how (scenario, what the timing includes, warm-up, stopping rule),
in what state (thermal at start and end, power boundary) and the figures, each
block labelled ``measured``, ``emulated``, ``simulated`` or ``estimated``.

It is described once, here, as a pydantic dataclass whose sections are TypedDicts (plain
dicts in Python, typed for validation): :meth:`RunResult.from_dict` checks a run.json against
it (one line naming the file and the key when a value is of the wrong type), ``edgebench
schema run`` prints its JSON Schema, and docs/results-schema.md's table of sections is
written from it (``scripts/schema_docs.py``). Sections keep keys this version does not know
(each verb adds its own figures under ``extra``); the keys the readers (runs, report, check,
compare, ``load_runs``) use are typed, so a tampered value is refused on load rather than
failing in a reader.

Schema history (``schema_version``):

* 1 (edgebench 0.1): first version. Sections as documented in
  ``docs/results-schema.md``.
* 2 (edgebench 0.2): bench runs are K repeats; latency intervals combine within- and
  between-run variation; throughput is achieved, not 1/median; a ``repeat`` sample column.
* 3 (edgebench 0.2, additive): the model of variation (``edgebench.stats.variation``): latency
  figures carry ``se_log``, ``df``, ``repeat_variation``, ``session_variation``,
  ``session_differs_p``, ``repeats_disagree_p``, ``regimes``, and ``per_run`` entries their
  ``se_log``/``df``; throughput its interval (``ci_low_per_s``/``ci_high_per_s``, ``per_repeat``,
  ``device_busy_per_s``; emulated boards ``host_limited_per_s``); accuracy validation rows
  ``set_by``; energy figures ``resolved``. Version 2 files lack them (readers treat them as absent).
"""
from __future__ import annotations

import copy
import dataclasses
from typing import Any, Dict, Final, List, Literal, Optional, Union

from pydantic import ConfigDict, Field, with_config
from pydantic.dataclasses import dataclass
from typing_extensions import Annotated, TypedDict

from edgebench.errors import ResultError
from edgebench.schema import MAX_TEXT, OPEN, Bool, Float, Int, Str, expects, got, validate

SCHEMA_VERSION: Final = 3
SCHEMA_HISTORY = {1: "edgebench 0.1: first version",
                  2: "edgebench 0.2: repeats, run- and dependence-aware intervals, achieved throughput",
                  3: "edgebench 0.2: the model of variation (pooled between-repeat and between-invocation "
                     "components), throughput intervals, gates set by the user"}
FORMAT: Final = "edgebench-run"
LABELS = ("measured", "emulated", "simulated", "estimated")
STATUSES = ("running", "complete", "incomplete", "failed")
STAGES = ("e2e", "prep", "set", "invoke", "get")
STAGE_MEANING = {
    "prep": "input preparation: picking the input prepared before the timed loop (cast, or quantized for "
            "INT8), or preparing it per inference where the input pool is too large to keep prepared "
            "(timing.prep says which)",
    "set": "transfer into the interpreter (set_tensor)",
    "invoke": "interpreter invoke (the kernels)",
    "get": "output read and dequantization",
    "e2e": "end to end: preparation + transfer + invoke + output read",
}

Num = Optional[Float]          # a figure: a number, or null where it could not be computed
Count = Optional[Int]
Text = Optional[Str]
Flag = Optional[Bool]
Pair = Optional[List[Num]]     # an interval [low, high]
Mapping_ = Dict[str, Any]


# A run.json section: a TypedDict whose keys below are typed, any other key kept as it is (a later
# version's, a verb's own figures), texts bounded (schema.MAX_TEXT).
section = with_config(OPEN)

# ---------------------------------------------------------------------------- what ran, where, how

@section
class TensorInfo(TypedDict, total=False):
    name: Text
    dtype: Text
    shape: Optional[List[Optional[Int]]]
    quant: Optional[Mapping_]


@section
class ModelSection(TypedDict, total=False):
    """The model file: identity, precision read from its tensor types, its quantize sidecar."""
    path: Text
    name: Text
    sha256: Text
    bytes: Count
    precision: Text
    weights_dtype: Text
    activations_dtype: Text
    weights_bits: Count
    activations_bits: Count
    operators: Optional[Dict[str, Int]]
    inputs: Optional[List[TensorInfo]]
    outputs: Optional[List[TensorInfo]]
    sidecar: Optional[Mapping_]
    calibration: Optional[Mapping_]
    variants: Optional[List["ModelSection"]]


@section
class RuntimeSection(TypedDict, total=False):
    name: Text
    version: Text
    kernels: Text
    op_resolver: Text
    threads: Union[Int, List[Int], Str, None]     # a sweep over thread counts lists them
    delegate: Text


@section
class CpuFreqPolicy(TypedDict, total=False):
    governor: Text
    cur_hz: Num
    max_hz: Num
    min_hz: Num


@section
class CpuFreq(TypedDict, total=False):
    policies: Optional[Dict[str, CpuFreqPolicy]]


@section
class SystemSection(TypedDict, total=False):
    """The board's system description from the agent's collectors (docs/agent-protocol.md)."""
    os: Optional[Mapping_]
    cpu: Optional[Mapping_]
    board: Optional[Mapping_]
    cpufreq: Optional[CpuFreq]
    memory: Optional[Mapping_]
    load: Optional[Mapping_]
    thermal: Optional[Mapping_]
    software: Optional[Mapping_]


@section
class BoardSection(TypedDict, total=False):
    name: Text
    title: Text
    kind: Text
    transport: Text
    profile_origin: Text
    system: Optional[SystemSection]
    collector_errors: Optional[Mapping_]


@section
class ClassOrder(TypedDict, total=False):
    """How an image folder's subfolders were numbered (docs/accuracy.md, Image folders)."""
    by: Text
    map: Optional[Dict[str, Int]]
    sorted: Optional[List[Str]]
    ignored: Text


@section
class Inputs(TypedDict, total=False):
    source: Text
    count: Count
    sha256: Text
    shape: Optional[List[Optional[Int]]]
    range: Optional[List[Num]]
    seed: Count
    class_names: Optional[List[Str]]
    class_order: Optional[ClassOrder]


@section
class ScenarioSection(TypedDict, total=False):
    name: Text
    rate_hz: Num
    batch: Count
    inputs: Optional[Inputs]


@section
class TimingSection(TypedDict, total=False):
    clock: Text
    clock_resolution_s: Num
    stages: Optional[Dict[str, Text]]
    e2e_includes: Text
    excludes: Text


@section
class SettingsSection(TypedDict, total=False):
    stop_rule: Optional[Dict[str, Num]]
    seed: Count
    repeat: Count
    max_repeats: Count
    sessions: Count
    agent_cpus: Union[Str, Int, List[Int], None]


@section
class ColdStart(TypedDict, total=False):
    load_s: Num
    first_inference_s: Num
    first_invoke_s: Num
    per_repeat: Optional[List[Dict[str, Num]]]


@section
class Warmup(TypedDict, total=False):
    n_warmup: Count
    duration_s: Num
    method: Text
    at_limit: Flag
    per_repeat: Optional[List[Mapping_]]


@section
class Snapshot(TypedDict, total=False):
    """A thermal snapshot: temperatures, clocks, decoded throttle flags."""
    available: Flag
    temps_c: Optional[Dict[str, Num]]
    freqs_hz: Optional[Dict[str, Num]]
    throttled: Optional[Dict[str, Union[Bool, Str, Int, None]]]
    clock_ns: Count
    errors: Optional[Mapping_]


@section
class ThermalSection(TypedDict, total=False):
    available: Flag
    start: Optional[Snapshot]
    end: Optional[Snapshot]
    max_temp_c: Num
    start_temp_c: Num
    steady_temp_c: Num
    time_to_first_throttle_s: Num
    telemetry: Optional[Mapping_]


# ---------------------------------------------------------------------------- the figures

@section
class RunFigure(TypedDict, total=False):
    """One repeat's (or session's) median and interval."""
    median_s: Num
    ci_low_s: Num
    ci_high_s: Num
    n: Count
    n_eff: Num
    lag1: Num
    rel_ci_halfwidth: Num
    ci_method: Text
    runs: Count


@section
class CombinedFigure(TypedDict, total=False):
    """The headline over every session combined: the long-run figure's centre, interval, se and df."""
    median_s: Num
    ci_low_s: Num
    ci_high_s: Num
    se_log: Num
    df: Num
    sessions: Count
    ci_method: Text


@section
class LatencySummary(TypedDict, total=False):
    """One stage's latency over the measured samples (docs/statistics.md)."""
    n: Count
    median_s: Num
    ci_low_s: Num
    ci_high_s: Num
    ci_level: Num
    ci_method: Text
    rel_ci_halfwidth: Num
    runs: Count
    per_run: Optional[List[RunFigure]]
    lag1_autocorr: Num
    n_eff: Num
    between_run_cv: Num
    clock_resolution_s: Num
    sessions: Count
    session_runs: Optional[List[Any]]
    session_medians_s: Optional[List[Num]]
    between_session_cv: Num
    rerun_low_s: Num
    rerun_high_s: Num
    invocation: Optional[RunFigure]
    combined: Optional[CombinedFigure]
    se_log: Num
    df: Num
    mean_s: Num
    std_s: Num
    mad_s: Num
    mad_scaled_s: Num
    min_s: Num
    max_s: Num
    p50_s: Num
    p90_s: Num
    p99_s: Num
    p999_s: Num
    p90_ci_s: Pair
    p99_ci_s: Pair
    inverse_median_per_s: Num
    label: Text


@section
class Throughput(TypedDict, total=False):
    per_s: Num
    definition: Text
    per_repeat_per_s: Optional[List[Num]]
    inverse_median_per_s: Num
    label: Text


@section
class Stopping(TypedDict, total=False):
    target_reached: Flag
    rel_ci_halfwidth: Num
    target_rel_ci: Num
    reason: Text
    n: Count
    repeats: Count
    elapsed_s: Num
    per_repeat: Optional[List[Mapping_]]
    steady: Union[Bool, Int, None]


@section
class Warning_(TypedDict, total=False):
    code: Text
    message: Text
    remedy: Text


@section
class EnergyFigure(TypedDict, total=False):
    """An energy or power figure with its interval (docs/energy.md)."""
    energy_j: Num
    power_w: Num
    ci_low_j: Num
    ci_high_j: Num
    ci_low_w: Num
    ci_high_w: Num
    above_idle_j: Num
    above_idle_ci_low_j: Num
    above_idle_ci_high_j: Num
    avg_power_w: Num
    per_inference_j: Num
    rate_hz: Num
    duty: Num
    duration_s: Num
    n: Count
    sd_j: Num
    sd_w: Num
    label: Text
    ci_method: Text
    window: Text


@section
class Average(TypedDict, total=False):
    """Average power at the run's rate: measured and from the model (idle + energy per event x rate)."""
    measured_w: Num
    model_w: Num
    rate_hz: Num
    requested_rate_hz: Num
    span_s: Num
    label: Text
    note: Text


@section
class Alignment(TypedDict, total=False):
    """How the meter's clock was aligned with the device's."""
    method: Text
    offset_s: Num
    uncertainty_s: Num


@section
class PowerSection(TypedDict, total=False):
    measured: Flag
    boundary: Text
    boundary_meaning: Text
    instrument: Text
    tested_against: Text
    label: Text
    method: Text
    model: Text
    idle: Optional[EnergyFigure]
    inference: Optional[EnergyFigure]
    event: Optional[EnergyFigure]
    wake_up: Optional[EnergyFigure]
    duty_cycle: Optional[EnergyFigure]
    average: Optional[Average]
    window: Optional[EnergyFigure]
    alignment: Optional[Alignment]
    excluded: Optional[Dict[str, Count]]
    meter: Optional[Mapping_]
    samples: Optional[Mapping_]


# `accuracy` (docs/accuracy.md). Every key is optional: a run of an older edgebench may lack one, and
# its printer (cli/render/accuracy.py) shows what there is.

@section
class Proportion(TypedDict, total=False):
    """A proportion (0-1) with its 95% interval."""
    accuracy: Num
    ci_low: Num
    ci_high: Num
    n: Count
    correct: Count


@section
class PerClass(TypedDict, total=False):
    class_name: Text
    class_index: Count
    accuracy: Num
    n: Count


@section
class Figures(TypedDict, total=False):
    top1: Optional[Proportion]
    top5: Optional[Proportion]
    per_class: Optional[List[PerClass]]
    label: Text
    num_classes: Count


@section
class SideModel(TypedDict, total=False):
    name: Text
    precision: Text
    sha256: Text
    path: Text


@section
class BaselineProvenance(TypedDict, total=False):
    """Whether the baseline is the FP32 model the candidate's sidecar names (docs/accuracy.md, Provenance)."""
    status: Optional[Literal["matches", "same-source", "differs", "unchecked"]]
    baseline_sha256: Text
    expected_sha256: Text
    expected_file: Text
    source_sha256: Text
    baseline_source_sha256: Text


@section
class Side(TypedDict, total=False):
    """The candidate's or the baseline's model, runtime and board."""
    board: Text
    where: Text
    model: Optional[SideModel]
    runtime: Optional[RuntimeSection]
    provenance: Optional[BaselineProvenance]


@section
class CalibrationBin(TypedDict, total=False):
    accuracy: Num
    confidence: Num
    count: Count


@section
class Calibration(TypedDict, total=False):
    bins: Optional[List[CalibrationBin]]
    ece: Num
    ece_ci_low: Num
    ece_ci_high: Num
    ece_debiased: Num
    ece_null_expected: Num
    n: Count


@section
class Scaling(TypedDict, total=False):
    temperature: Num
    ece_eval_before: Num
    ece_eval_after: Num


@section
class TemperatureScaling(TypedDict, total=False):
    baseline: Optional[Scaling]
    candidate: Optional[Scaling]
    n_eval: Count
    n_fit: Count
    seed: Count


@section
class CalibrationSection(TypedDict, total=False):
    baseline: Optional[Calibration]
    candidate: Optional[Calibration]
    diagrams: Optional[Dict[str, Text]]
    temperature_scaling: Optional[TemperatureScaling]


@section
class Paired(TypedDict, total=False):
    n: Count
    agreement_rate: Num
    flips_right_to_wrong: Count
    flips_wrong_to_right: Count
    diff_points: Num
    diff_ci_low_points: Num
    diff_ci_high_points: Num
    mcnemar_p: Num


@section
class Relative(TypedDict, total=False):
    statements: Optional[List[Str]]
    diff_points: Num
    error_increase_pct: Num
    candidate_pct_of_baseline_correct: Num
    baseline_errors: Count
    candidate_errors: Count


@section
class Resolution(TypedDict, total=False):
    n: Count
    mdd_points: Num
    power: Num
    alpha: Num
    statement: Text
    observed_diff_points: Num
    resolvable: Flag
    resolvable_at_all: Flag


@section
class Fidelity(TypedDict, total=False):
    rmse: Num
    max_abs_error: Num
    cosine_similarity: Num
    relative_l2_error: Num


@section
class SliceSide(TypedDict, total=False):
    accuracy: Num


@section
class SliceRow(TypedDict, total=False):
    slice: Text
    n: Count
    baseline: Optional[SliceSide]
    candidate: Optional[SliceSide]
    drop_points: Num
    drop_ci_low_points: Num
    drop_ci_high_points: Num
    mcnemar_p: Num
    mcnemar_p_holm: Num


@section
class EdgeCases(TypedDict, total=False):
    source: Text
    seed: Count
    clean: Optional[SliceRow]
    slices: Optional[List[SliceRow]]
    worst: Text


@section
class GateRow(TypedDict, total=False):
    rule: Text
    metric: Text
    unit: Text
    outcome: Text
    note: Text
    acceptable: Flag
    baseline: Num
    candidate: Num
    value: Num
    threshold: Num
    point: Num
    ci_low: Num
    ci_high: Num


@section
class Validation(TypedDict, total=False):
    gate_on: Text
    rows: Optional[List[GateRow]]
    passed: Flag
    failed: Optional[List[Str]]
    unresolved: Optional[List[Any]]
    thresholds: Optional[Mapping_]


@section
class BothFigures(TypedDict, total=False):
    baseline: Figures
    candidate: Figures


@section
class AccuracyExtra(TypedDict, total=False):
    """`accuracy`: the candidate against its baseline on the same samples (docs/accuracy.md)."""
    accuracy: Optional[BothFigures]
    baseline: Optional[Side]
    candidate: Optional[Side]
    calibration: Optional[CalibrationSection]
    edge_cases: Optional[EdgeCases]
    fidelity: Optional[Fidelity]
    paired: Optional[Paired]
    predictions: Text
    relative: Optional[Relative]
    resolution: Optional[Resolution]
    validation: Optional[Validation]


@section
class Window(TypedDict, total=False):
    """A soak's burst or sustained window: latency and throughput, clock and temperature."""
    median_s: Num
    ci_low_s: Num
    ci_high_s: Num
    p99_s: Num
    n: Count
    span_s: Num
    t_from_s: Num
    t_to_s: Num
    temp_c: Num
    freq_hz: Num
    throughput_per_s: Num


@section
class ThrottleEvent(TypedDict, total=False):
    events: Count
    time_s: Num


@section
class FrequencyShare(TypedDict, total=False):
    freq_hz: Num
    fraction: Num
    time_s: Num


@section
class SoakThermal(TypedDict, total=False):
    frequency_source: Text
    max_temp_c: Num
    max_temp_at_s: Num
    start_temp_c: Num
    steady_temp_c: Num
    time_to_first_throttle_s: Num
    telemetry_samples: Count
    telemetry_cost_fraction: Num
    throttle_events: Optional[Dict[str, ThrottleEvent]]
    time_at_frequency: Optional[List[FrequencyShare]]


@section
class Verdict(TypedDict, total=False):
    steady: Flag
    reason: Text
    thermal_judged: Flag
    latency: Optional[Mapping_]
    temperature: Optional[Mapping_]


@section
class SoakExtra(TypedDict, total=False):
    """`soak`: burst against sustained, the thermal course, the steady-state verdict (docs/soak.md)."""
    burst: Optional[Window]
    sustained: Optional[Window]
    sustained_over_burst: Num
    steady: Flag
    duration_s: Num
    cool_down: Optional[Mapping_]
    thermal: Optional[SoakThermal]
    verdict: Optional[Verdict]


@section
class PointLatency(TypedDict, total=False):
    median_s: Num
    ci_low_s: Num
    ci_high_s: Num


@section
class PointEnergy(TypedDict, total=False):
    per_inference_j: Num
    label: Text


@section
class Point(TypedDict, total=False):
    """One point of a sweep (docs/soak.md, "Sweeps")."""
    id: Text
    name: Text
    axis: Text
    status: Text
    duty: Num
    realized_duty: Num
    duration_s: Num
    throughput_per_s: Num
    max_temp_c: Num
    steady_temp_c: Num
    sustained_freq_hz: Num
    time_to_first_throttle_s: Num
    steady: Flag
    throttled: Flag
    rate_sustained: Flag
    latency: Optional[PointLatency]
    energy: Optional[PointEnergy]


@section
class VerifyOutput(TypedDict, total=False):
    name: Text
    bytes: Count
    samples: Count
    differing_bytes: Count
    differing_samples: Count
    max_diff_lsb: Num
    mean_abs_diff_lsb: Num
    top1_agreement: Num


@section
class VerifySide(TypedDict, total=False):
    kernels: Text
    runtime: Optional[Dict[str, Text]]


@section
class Gate(TypedDict, total=False):
    applies: Flag
    passed: Flag
    rule: Text
    reason: Text


@section
class VerifyExtra(TypedDict, total=False):
    """`verify`: the board's outputs against the host's reference kernels (docs/mcu.md)."""
    bit_exact: Flag
    device: Optional[VerifySide]
    reference: Optional[VerifySide]
    gate: Optional[Gate]
    notes: Optional[List[Str]]
    outputs: Optional[List[VerifyOutput]]


@section
class MacRate(TypedDict, total=False):
    """`bench` on a microcontroller: instructions or cycles per MAC (bench/mac_rate.py)."""
    available: Flag
    unit: Text
    label: Text
    basis: Text
    stage: Text
    reason: Text
    macs: Count
    per_inference: Num
    per_mac: Num
    per_mac_ci: Pair


@section
class FitFigure(TypedDict, total=False):
    """One size of a microcontroller's fit check: what the model needs against what the board has."""
    what: Text
    need_bytes: Count
    have_bytes: Count
    fits: Flag
    basis: Text
    placement: Text


@section
class Memory(TypedDict, total=False):
    """Peak memory of the run (docs/results-schema.md): a Linux board's process, or a microcontroller's plan."""
    peak_rss_bytes: Count
    rss_bytes: Count
    basis: Text
    arena_bytes: Count
    scratch_bytes: Count
    model_bytes: Count
    fit: Optional[List[FitFigure]]


@section
class Extra(TypedDict, total=False):
    """A verb's own figures (each documented in its page under docs/) and the claim."""
    claim: Annotated[Text, Field(max_length=100_000)]
    accuracy: Optional[AccuracyExtra]
    soak: Optional[SoakExtra]
    points: Optional[List[Point]]
    verify: Optional[VerifyExtra]
    mlperf: Optional[Mapping_]
    mac_rate: Optional[MacRate]
    cycle_estimate: Optional[Mapping_]      # mlperf-tiny on QEMU: edgebench.mcu.cycles, label estimated
    anchors: Optional[Mapping_]             # ... and the published figures beside it (edgebench.mcu.anchors)
    memory: Optional[Memory]
    plots: Optional[List[Str]]
    achieved_rate_hz: Num
    requested_rate_hz: Num
    writer: Optional[Mapping_]
    recovery: Optional[Mapping_]
    labels: Optional[Dict[str, Str]]
    unknown_keys: Optional[List[Str]]


DOC = {  # what each key of run.json holds: docs/results-schema.md's table is written from these
    "run_id": (
        "the run's id (12 hex digits); `edgebench runs` lists the shortest unique prefix"
    ),
    "created_utc": (
        "when the run started, ISO 8601 with its offset"
    ),
    "kind": (
        "what produced it: `bench`, `accuracy`, `soak`, `sweep`, `energy`, `mlperf-tiny`, `verify` (each "
        "verb's own figures live in `extra`, documented in its page under docs/; a `verify` run keeps "
        "`extra.verify` = `device`, `reference`, `outputs`, `bit_exact`, `gate`, `notes` as `verify --json` "
        "prints them, and its `samples.parquet` has one row per input and output: `input_index`, `output`, "
        "`differing_bytes`, `max_diff` in LSB for integer outputs)"
    ),
    "status": (
        "`running` while measuring; `complete`; `incomplete` (Ctrl-C, SIGTERM/SIGHUP or an error after the "
        "first samples: what was measured is kept; the reason says which, e.g. `stopped by SIGTERM`); "
        "`failed`. While `running`, `extra.writer` names the writing process (`pid`, `host`, `boot_id`, "
        "`process_start_ticks` from `/proc/<pid>/stat`, `platform`); a finished run has no writer. "
        "`abandoned` is never stored: `edgebench runs` and `edgebench.load_runs` *show* a `running` run as "
        "`abandoned` when its writer was on this host and is gone (pid gone, pid reused by a process with "
        "another start time, or the computer restarted since); a run from another host, or without a writer, "
        "stays `running`"
    ),
    "status_reason": (
        "why a run is `incomplete` or `failed` (e.g. `stopped by SIGTERM`)"
    ),
    "label": (
        "`measured`, `emulated` (QEMU), `simulated` (a physics model) or `estimated` (datasheet arithmetic): "
        "applies to every figure of the run"
    ),
    "edgebench_version": (
        "the edgebench that wrote the run"
    ),
    "host": (
        "the computer that ran edgebench (not the board)"
    ),
    "model": (
        "path, name, sha256, bytes, precision (`fp32`, `int8`, `uint8`, `fp16`, `dynamic-range`, `mixed`, "
        "read from the file's tensor types, not its name), weights and activation dtypes and bits, operators,"
        " inputs/outputs with quantization, `sidecar` (the `<model>.json` written by quantize), `calibration`"
        " (source, count, sha256)"
    ),
    "runtime": (
        "runtime name and version, `kernels` (`xnnpack`, `builtin`, `reference`), op resolver, threads, "
        "delegate"
    ),
    "board": (
        "profile name, title, kind, transport, the board's system description from the agent's collectors "
        "(os, cpu, board model, cpufreq, thermal zones, apex, vcgencmd, memory, load, software) and collector"
        " errors"
    ),
    "scenario": (
        "`single-stream`, `offline` or `fixed-rate`; `rate_hz`; `batch`; `inputs` (source, seed, count, "
        "shape, range, sha256)"
    ),
    "timing": (
        "the clock (device `time.perf_counter_ns`, or the MCU counter), `clock_resolution_s` (seconds per "
        "tick: `time.get_clock_info` on a Linux board, 1 / counter Hz on firmware), each stage and what it "
        "covers, what end-to-end includes and excludes"
    ),
    "settings": (
        "stop rule (target CI half-width, minimum samples and time per repeat, time budget), `repeat` and "
        "`max_repeats`, `fresh_process_per_repeat`, `interleaved_with` (run ids measured in alternation with "
        "this one), minimum warm-up, seed, `agent_cpus` (CPUs a local agent was pinned to, or null)"
    ),
    "cold_start": (
        "model load time (interpreter construction + allocate), first inference, first invoke of the first "
        "repeat; `per_repeat` (one cold start per fresh process)"
    ),
    "warmup": (
        "inferences discarded as warm-up (all repeats), their duration, the method (MSER-5) and whether it "
        "hit its search limit; `per_repeat`"
    ),
    "thermal": (
        "`available`; snapshots at `start` and `end` (temperatures, frequencies, decoded throttle flags)"
    ),
    "power": (
        "`measured` (false without a meter), boundary, instrument"
    ),
    "latency": (
        "per stage (`e2e`, `prep`, `set`, `invoke`, `get`), over the samples after each repeat's warm-up: n, "
        "median (pooled), `ci_low_s`/`ci_high_s` (the headline 95% interval: Student t on the log medians of "
        "the repeats, each repeat's own interval dependence-aware; see docs/statistics.md), `ci_method`, "
        "`runs`, `per_run` (median, interval, n, n_eff, lag1 of each repeat), `lag1_autocorr`, `n_eff`, "
        "`between_run_cv`, `clock_resolution_s`; since sessions: `sessions` (this invocation and the earlier "
        "runs combined), `session_runs`, `session_medians_s`, `between_session_cv`, "
        "`rerun_low_s`/`rerun_high_s` (where one more invocation's median should fall), and `invocation` "
        "(this invocation's own `median_s`, `ci_low_s`, `ci_high_s`, `rel_ci_halfwidth`, `ci_method`, `runs`, "
        "`se_log`, `df`) and `combined` (the sessions' long-run `median_s`, `ci_low_s`, `ci_high_s`, `se_log`, "
        "`df`, `sessions`: one coherent set; the top-level `se_log`/`df` are the combined ones too)"
        " — `ci_low_s`/`ci_high_s` then combine the sessions (docs/statistics.md, \"Across invocations\"); "
        "mean, std, MAD, min, max, p50/p90/p99/p99.9 (null when n is too small) with `p90_ci_s`/`p99_ci_s`, "
        "`inverse_median_per_s` (1/median, named so: not a throughput; versions 1–3 called it "
        "`throughput_per_s`), label"
    ),
    "throughput": (
        "`per_s`: achieved, inferences completed over the wall time of the measuring windows (device clock, "
        "all repeats), `definition`, `per_repeat_per_s`, `inverse_median_per_s` (named so); since version 3 "
        "its interval `ci_low_per_s`/`ci_high_per_s` (over repeats and, for bench, earlier sessions: the model "
        "of variation), `per_repeat`, `device_busy_per_s` (inferences over the device time spent inferring); on "
        "an emulated board `per_s` is the emulated device rate and `host_limited_per_s` the wall-clock rate with "
        "the emulator and the serial link"
    ),
    "stopping": (
        "whether the headline interval reached the target, its relative half-width, why the run stopped, the "
        "number of repeats, each repeat's own stop reason"
    ),
    "warnings": (
        "`{code, message, remedy}`: spread, drift, outliers, too-few, warm-up unsettled, target not reached, "
        "rate not sustained"
    ),
    "agent": (
        "agent and protocol version, Python, numpy, resident memory at the end"
    ),
    "extra": (
        "scenario-specific figures (fixed-rate achieved rate and lateness) and the `claim` sentence; a verb's"
        " own figures (`accuracy`, `soak`, `points`, `verify`, `mlperf`, `mac_rate`, below); `memory`: peak memory "
        "(a Linux board's agent process: `peak_rss_bytes` from VmHWM, `rss_bytes` at the end; a microcontroller: "
        "`arena_bytes`, `scratch_bytes`, `model_bytes` and the `fit` sizes against the board's); `labels`: the "
        "run's `--label key=value` pairs (text), `commit` the git commit of the folder it ran in by default "
        "(docs/store.md)"
    ),
}


RunId = Annotated[Str, Field(min_length=1, max_length=200, pattern=r"^[^/\\\x00]+$",
                             json_schema_extra=expects("a non-empty id without slashes"))]


@dataclass(config=ConfigDict(extra="ignore", str_max_length=MAX_TEXT, defer_build=True))
class RunResult:
    """One benchmark run. Every section is a plain JSON-able dict or list."""

    run_id: Annotated[RunId, Field(description=DOC["run_id"])]
    created_utc: Annotated[Str, Field(description=DOC["created_utc"])]
    format: Annotated[Literal["edgebench-run"], Field(description="always `edgebench-run`")] = FORMAT
    kind: Annotated[Str, Field(pattern=r"^[a-z0-9][a-z0-9-]*$", description=DOC["kind"],
        json_schema_extra=expects("a run kind (bench, accuracy, soak, ...)"))] = "bench"
    status: Annotated[Literal["running", "complete", "incomplete", "failed"], Field(
        description=DOC["status"])] = "running"
    status_reason: Annotated[Text, Field(description=DOC["status_reason"])] = None
    label: Annotated[Literal["measured", "emulated", "simulated", "estimated"], Field(
        description=DOC["label"])] = "measured"
    edgebench_version: Annotated[Str, Field(description=DOC["edgebench_version"])] = ""
    host: Annotated[Mapping_, Field(description=DOC["host"])] = \
        dataclasses.field(default_factory=dict)
    model: Annotated[ModelSection, Field(description=DOC["model"])] = \
        dataclasses.field(default_factory=ModelSection)
    runtime: Annotated[RuntimeSection, Field(description=DOC["runtime"])] = \
        dataclasses.field(default_factory=RuntimeSection)
    board: Annotated[BoardSection, Field(description=DOC["board"])] = \
        dataclasses.field(default_factory=BoardSection)
    scenario: Annotated[ScenarioSection, Field(description=DOC["scenario"])] = \
        dataclasses.field(default_factory=ScenarioSection)
    timing: Annotated[TimingSection, Field(description=DOC["timing"])] = \
        dataclasses.field(default_factory=TimingSection)
    settings: Annotated[SettingsSection, Field(description=DOC["settings"])] = \
        dataclasses.field(default_factory=SettingsSection)
    cold_start: Annotated[ColdStart, Field(description=DOC["cold_start"])] = \
        dataclasses.field(default_factory=ColdStart)
    warmup: Annotated[Warmup, Field(description=DOC["warmup"])] = \
        dataclasses.field(default_factory=Warmup)
    thermal: Annotated[ThermalSection, Field(description=DOC["thermal"])] = \
        dataclasses.field(default_factory=ThermalSection)
    power: Annotated[PowerSection, Field(description=DOC["power"])] = \
        dataclasses.field(default_factory=PowerSection)
    latency: Annotated[Dict[str, LatencySummary], Field(description=DOC["latency"])] = \
        dataclasses.field(default_factory=dict)
    throughput: Annotated[Throughput, Field(description=DOC["throughput"])] = \
        dataclasses.field(default_factory=Throughput)
    stopping: Annotated[Stopping, Field(description=DOC["stopping"])] = \
        dataclasses.field(default_factory=Stopping)
    warnings: Annotated[List[Warning_], Field(description=DOC["warnings"])] = \
        dataclasses.field(default_factory=list)
    agent: Annotated[Mapping_, Field(description=DOC["agent"])] = \
        dataclasses.field(default_factory=dict)
    extra: Annotated[Extra, Field(description=DOC["extra"])] = \
        dataclasses.field(default_factory=Extra)
    schema_version: Annotated[Literal[1, 2, 3], Field(description="this format's version (the schema history "
                                                               "above)")] = SCHEMA_VERSION

    def to_dict(self) -> dict:
        return {"format": FORMAT, **{f.name: copy.deepcopy(getattr(self, f.name)) for f in dataclasses.fields(self)}}

    @classmethod
    def from_dict(cls, d: Any, source: str = "<dict>") -> "RunResult":
        """A run.json document as a RunResult; ResultError (one line: the file, the key) if it does not fit."""
        if not isinstance(d, dict):
            raise ResultError(f"{source}: not a JSON object", "point at a run folder written by `edgebench bench`")
        if d.get("format") != FORMAT:
            raise ResultError(f"{source}: not an edgebench run (format {got(d.get('format'))})",
                              "point at a run folder written by `edgebench bench`")
        version = d.get("schema_version")
        if isinstance(version, bool) or version not in SCHEMA_HISTORY:   # a newer file may differ in any key
            raise ResultError(f"{source}: schema_version {got(version)} is not known to edgebench "
                              f"(knows {sorted(SCHEMA_HISTORY)})", "upgrade edgebench to read it")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(k for k in d if k not in names)
        result = validate(cls, d, source, ResultError, "the run.json is damaged or from another tool")
        if unknown:
            result.extra = {**result.extra, "unknown_keys": unknown}
        return result

    @property
    def complete(self) -> bool:
        return self.status == "complete"


def failed_gates(result) -> list:
    """The gates a stored run failed (docs/check.md, "Gates"): compression thresholds the user set
    (``extra.accuracy.validation.failed``) and a board profile's bit-exact promise
    (``extra.verify.gate``). A default threshold the user never set is a warning, not listed here."""
    extra = getattr(result, "extra", None) or {}
    out = list((((extra.get("accuracy") or {}).get("validation") or {}).get("failed")) or [])
    gate = (extra.get("verify") or {}).get("gate") or {}
    if gate.get("applies") and gate.get("passed") is False:
        out.append("bit-exact outputs (verify)")
    return out


def refuse_mixed_labels(*results) -> str:
    """The common label of ``results``; ResultError when they mix measured, emulated, simulated
    or estimated figures (a simulated figure must never be compared with a measured one)."""
    labels = {getattr(r, "label", None) or (r.get("label") if isinstance(r, dict) else None) for r in results}
    if len(labels) > 1:
        raise ResultError(f"refusing to compare {' with '.join(sorted(str(x) for x in labels))} figures",
                          "compare runs of the same kind only (a simulated board is not a measurement)")
    return str(labels.pop()) if labels else "measured"
