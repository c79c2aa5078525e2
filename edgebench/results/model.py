"""The run record (level 0): :class:`RunResult`, one benchmark run, as run.json holds it. No I/O here.

A run is what ran (model, runtime, kernels, threads), where (board and its system
description), how (scenario, what the timing includes, warm-up, stopping rule), in what state
(thermal at start and end, power boundary) and the figures, each labelled ``measured``,
``emulated``, ``simulated`` or ``estimated``. Each section is declared once, as a typed
:class:`edgebench.results.types.Figure`: the conditions in :mod:`edgebench.results.conditions`,
each kind of figure in :mod:`edgebench.results.figures` (latency, throughput, energy, accuracy,
thermal, points, verify, profile, layer error, selftest, the microcontroller's own). The
statistics return those types; readers use their attributes. From the same declarations come
validation on load (one line naming the file and the key when a value is of the wrong type),
``edgebench schema run`` (the JSON Schema) and docs/results-schema.md's tables
(``scripts/schema_docs.py``).

Schema history (``schema_version``); :func:`edgebench.results.upgrade.upgrade` brings a file of
an older version to this one when it is read, so old run folders keep reading:

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
* 4 (edgebench 0.3): one typed declaration per figure; a stage's 1/median is
  ``latency.<stage>.inverse_median_per_s`` (1-3: ``throughput_per_s``); the profile, layer-error
  and selftest sections are declared (``extra.profile``, ``extra.layer_error``, ``extra.selftest``).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, Final, List, Literal, Optional, get_type_hints

from pydantic import ConfigDict, Field
from pydantic.dataclasses import dataclass
from typing_extensions import Annotated

from edgebench.errors import ResultError
from edgebench.results.conditions import (
    BoardSection,
    ColdStart,
    ModelSection,
    RuntimeSection,
    ScenarioSection,
    SettingsSection,
    TimingSection,
    Warmup,
)
from edgebench.results.figures.accuracy import AccuracyFigure
from edgebench.results.figures.common import FixedRate
from edgebench.results.figures.device import MacRate, MemoryFigure
from edgebench.results.figures.energy import PowerSection
from edgebench.results.figures.latency import LatencyFigure, Stopping, Throughput
from edgebench.results.figures.layer_error import LayerErrorFigure
from edgebench.results.figures.points import Point
from edgebench.results.figures.profile import ProfileFigure
from edgebench.results.figures.selftest import SelftestFigure
from edgebench.results.figures.thermal import SoakFigure, ThermalSection
from edgebench.results.figures.verify import VerifyFigure
from edgebench.results.types import Figure, Mapping_, Num, Str, Text, field, sub
from edgebench.results.upgrade import SCHEMA_HISTORY, SCHEMA_VERSION, upgrade
from edgebench.schema import MAX_TEXT, adapter, expects, got, validate

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


class RunWarning(Figure):
    """A warning a reader must see beside the figures (docs/warnings.md)."""
    code: Text = field("the warning's code (docs/warnings.md)")
    message: Text = field("what was seen, with its figures")
    remedy: Text = field("what to do about it")


class Extra(FixedRate):
    """A verb's own figures (each documented in its page under docs/) and the claim."""
    claim: Annotated[Text, Field(max_length=100_000)] = field("the run's claim: what it shows and under what "
                                                              "conditions, in sentences (docs/claim.md)")
    accuracy: AccuracyFigure = sub(AccuracyFigure, "the candidate model against its baseline on the same samples")
    soak: SoakFigure = sub(SoakFigure, "burst against sustained, the thermal course and the steady-state verdict")
    points: Optional[List[Point]] = field("a sweep's points, one per configuration")
    axis: Text = field("a sweep: what its grid varies (`duty`, `rate`, `threads`, ...)")
    table: Text = field("a sweep: the file beside run.json with one row per point (`points.parquet`)")
    verify: VerifyFigure = sub(VerifyFigure, "the board's outputs against the host's reference kernels")
    mlperf: Optional[Mapping_] = field("the MLPerf Tiny dialect's own figures (docs/mlperf-tiny.md)")
    mac_rate: MacRate = sub(MacRate, "a microcontroller's instructions or cycles per MAC")
    profile: ProfileFigure = sub(ProfileFigure, "a layer profile: where the time goes, layer by layer")
    layer_error: LayerErrorFigure = sub(LayerErrorFigure, "per-layer SQNR of the INT8 model against its FP32 baseline")
    selftest: SelftestFigure = sub(SelftestFigure, "a firmware board's bring-up checks")
    baseline: Optional[Mapping_] = field("layer-error: the FP32 baseline model (as `model`) and its sidecar")
    link: Optional[Mapping_] = field("selftest: the serial link's own figures")
    load_at_start: Optional[List[Num]] = field("the board's load averages (1, 5, 15 min) when the run started")
    cycle_estimate: Optional[Mapping_] = field("mlperf-tiny on QEMU: the cycle model's estimate, labelled estimated")
    anchors: Optional[Mapping_] = field("mlperf-tiny: the published MLPerf Tiny figures for the model, beside the "
                                         "estimate")
    memory: MemoryFigure = sub(MemoryFigure, "peak memory: a Linux board's process, or a microcontroller's plan and "
                                             "fit")
    plots: Optional[List[Str]] = field("the plot files written beside run.json")
    lateness_median_s: Num = field("fixed-rate scenario: the median delay of an inference's start past its slot", "s")
    lateness_p99_s: Num = field("... its 99th percentile", "s")
    figure_window: Optional[Mapping_] = field("soak: the window the claim's figures come from (`name`, `freq_hz`, "
                                              "`temp_c`), or null")
    writer: Optional[Mapping_] = field("while `running`: the writing process (`pid`, `host`, `boot_id`, ...)")
    recovery: Optional[Mapping_] = field("a recovered run: what was recovered from the journal")
    labels: Optional[Dict[str, Str]] = field("the run's `--label key=value` pairs, `commit` (the git commit of the "
                                                "folder it ran in) by default (docs/store.md)")
    unknown_keys: Optional[List[Str]] = field("top-level keys of the file this version does not know")


RunId = Annotated[Str, Field(min_length=1, max_length=200, pattern=r"^[^/\\\x00]+$",
                             json_schema_extra=expects("a non-empty id without slashes"))]
Status = Literal["running", "complete", "incomplete", "failed"]
Label = Literal["measured", "emulated", "simulated", "estimated"]
Kind = Annotated[Str, Field(pattern=r"^[a-z0-9][a-z0-9-]*$", json_schema_extra=expects("a run kind (bench, accuracy, soak, ...)"))]


@dataclass(config=ConfigDict(extra="ignore", str_max_length=MAX_TEXT, defer_build=True, validate_assignment=True))
class RunResult:
    """One benchmark run: each section a typed :class:`Figure` (see the module docstring)."""

    run_id: RunId = Field(
        description="the run's id (12 hex digits); `edgebench runs` lists the shortest unique "
                    'prefix')
    created_utc: Str = Field(
        description='when the run started, ISO 8601 with its offset')
    format: Literal["edgebench-run"] = field("always `edgebench-run`", default=FORMAT)
    # Field, not field(): field() would blank the `x-expected` phrase Kind's own Field carries
    kind: Kind = Field(default="bench", description="what produced it: `bench`, `accuracy`, `soak`, `sweep`, `energy`, "
                       "`mlperf-tiny`, `verify`, `profile`, `layer-error`, `selftest` (`edgebench/results/kinds.py`; "
                       "each verb's own figures live in `extra`, one table each below)")
    status: Status = field("`running` while measuring; `complete`; `incomplete` (Ctrl-C, SIGTERM/SIGHUP or an error "
                           "after the first samples: what was measured is kept; the reason says which, e.g. `stopped "
                           "by SIGTERM`); `failed`. While `running`, `extra.writer` names the writing process (`pid`, "
                           "`host`, `boot_id`, `process_start_ticks` from `/proc/<pid>/stat`, `platform`); a finished "
                           "run has no writer. `abandoned` is never stored: `edgebench runs` and "
                           "`edgebench.load_runs` *show* a `running` run as `abandoned` when its writer was on this "
                           "host and is gone (pid gone, pid reused by a process with another start time, or the "
                           "computer restarted since); a run from another host, or without a writer, stays `running`",
                           default="running")
    status_reason: Text = field("why a run is `incomplete` or `failed` (e.g. `stopped by SIGTERM`)", default=None)
    label: Label = field("`measured`, `emulated` (QEMU), `simulated` (a physics model) or `estimated` (datasheet "
                         "arithmetic): applies to every figure of the run", default="measured")
    edgebench_version: Str = field("the edgebench that wrote the run", default="")
    host: Mapping_ = sub(dict, "the computer that ran edgebench (not the board)")
    model: ModelSection = sub(ModelSection, "path, name, sha256, bytes, precision (`fp32`, `int8`, `uint8`, `fp16`, "
                                            "`dynamic-range`, `mixed`, read from the file's tensor types, not its "
                                            "name), weights and activation dtypes and bits, operators, inputs/outputs "
                                            "with quantization, `sidecar` (the `<model>.json` written by quantize), "
                                            "`calibration` (source, count, sha256)")
    runtime: RuntimeSection = sub(RuntimeSection, "runtime name and version, `kernels` (`xnnpack`, `builtin`, "
                                                  "`reference`), op resolver, threads, delegate")
    board: BoardSection = sub(BoardSection, "profile name, title, kind, transport, the board's system description "
                                            "from the agent's collectors (os, cpu, board model, cpufreq, thermal "
                                            "zones, apex, vcgencmd, memory, load, software) and collector errors")
    scenario: ScenarioSection = sub(ScenarioSection, "`single-stream`, `offline` or `fixed-rate`; `rate_hz`; `batch`; "
                                                     "`inputs` (source, seed, count, shape, range, sha256)")
    timing: TimingSection = sub(TimingSection, "the clock (device `time.perf_counter_ns`, or the MCU counter), "
                                               "`clock_resolution_s` (seconds per tick: `time.get_clock_info` on a "
                                               "Linux board, 1 / counter Hz on firmware), each stage and what it "
                                               "covers, what end-to-end includes and excludes")
    settings: SettingsSection = sub(SettingsSection, "stop rule (target CI half-width, minimum samples and time per "
                                                     "repeat, time budget), `repeat` and `max_repeats`, "
                                                     "`fresh_process_per_repeat`, `interleaved_with` (run ids "
                                                     "measured in alternation with this one), minimum warm-up, seed, "
                                                     "`agent_cpus` (CPUs a local agent was pinned to, or null)")
    cold_start: ColdStart = sub(ColdStart, "model load time (interpreter construction + allocate), first inference, "
                                           "first invoke of the first repeat; `per_repeat` (one cold start per fresh "
                                           "process)")
    warmup: Warmup = sub(Warmup, "inferences discarded as warm-up (all repeats), their duration, the method (MSER-5) "
                                 "and whether it hit its search limit; `per_repeat`")
    thermal: ThermalSection = sub(ThermalSection, "`available`; snapshots at `start` and `end` (temperatures, "
                                                  "frequencies, decoded throttle flags)")
    power: PowerSection = sub(PowerSection, "`measured` (false without a meter), boundary, instrument")
    latency: Dict[str, LatencyFigure] = sub(dict, "per stage (`e2e`, `prep`, `set`, `invoke`, `get`): its latency "
                                                  "over the samples after each repeat's warm-up, with the headline "
                                                  "95% interval (the `latency.<stage>` table below; "
                                                  "docs/statistics.md)")
    throughput: Throughput = sub(Throughput, "achieved throughput (`per_s`: inferences completed over the measuring "
                                             "windows' wall time) with its interval over repeats and sessions (the "
                                             "`throughput` table below)")
    stopping: Stopping = sub(Stopping, "the stop rule's outcome: whether the headline interval reached the target, "
                                       "its relative half-width, why the run stopped, the repeats, each repeat's own "
                                       "decision")
    warnings: List[RunWarning] = sub(list, "`{code, message, remedy}`: spread, drift, outliers, too-few, warm-up "
                                           "unsettled, target not reached, rate not sustained")
    agent: Mapping_ = sub(dict, "agent and protocol version, Python, numpy, resident memory at the end")
    extra: Extra = sub(Extra, "a verb's own figures (`accuracy`, `soak`, `points`, `verify`, `profile`, "
                              "`layer_error`, `selftest`, `mac_rate`, `memory`, `mlperf`), the `claim`, fixed-rate "
                              "lateness, the run's `labels` (docs/store.md); one table each below")
    schema_version: Literal[1, 2, 3, 4] = field("this format's version (the schema history above; older files are "
                                                "upgraded when read)", default=SCHEMA_VERSION)

    def to_dict(self) -> dict:
        """The run as run.json holds it."""
        # warnings="error": a section holding an untyped dict (a writer that mutated a mapping in place) fails here
        return {"format": FORMAT, **adapter(RunResult).dump_python(self, mode="python", warnings="error")}

    @classmethod
    def from_dict(cls, d: Any, source: str = "<dict>") -> "RunResult":
        """A run.json document as a RunResult, upgraded to this version; ResultError (one line: the file,
        the key) if it does not fit."""
        if not isinstance(d, dict):
            raise ResultError(f"{source}: not a JSON object", "point at a run folder written by `edgebench bench`")
        if d.get("format") != FORMAT:
            raise ResultError(f"{source}: not an edgebench run (format {got(d.get('format'))})",
                              "point at a run folder written by `edgebench bench`")
        version = d.get("schema_version")
        if isinstance(version, bool) or version not in SCHEMA_HISTORY:   # a newer file may differ in any key
            raise ResultError(f"{source}: schema_version {got(version)} is not known to edgebench "
                              f"(knows {sorted(SCHEMA_HISTORY)})", "upgrade edgebench to read it")
        d = upgrade(d)
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(k for k in d if k not in names)
        result = validate(cls, d, source, ResultError, "the run.json is damaged or from another tool")
        if unknown:
            result.extra.unknown_keys = unknown
        return result

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    def stage(self, name: str = "e2e") -> LatencyFigure:
        """The latency figure of a stage; an empty one (every key None) when the run has none."""
        return self.latency.get(name) or LatencyFigure()


def figure_type(path: str) -> type:
    """The declared type of the figure at ``path`` in a run (``"latency"``: each stage's
    :class:`LatencyFigure`; ``"extra.points"``: :class:`Point`); KeyError for a path that names none."""
    head, _, rest = path.partition(".")
    kind = _figure_of(get_type_hints(RunResult)[head])
    for key in rest.split(".") if rest else ():
        kind = _figure_of(kind.model_fields[key].annotation)
    if not (isinstance(kind, type) and issubclass(kind, Figure)):
        raise KeyError(f"{path} is not a figure")
    return kind


def _figure_of(annotation: Any) -> Any:
    """The Figure class inside ``Optional[List[X]]``, ``Dict[str, X]`` or ``X``."""
    if isinstance(annotation, type) and issubclass(annotation, Figure):
        return annotation
    for arg in reversed(getattr(annotation, "__args__", ()) or ()):
        found = _figure_of(arg)
        if found is not None:
            return found
    return None


def failed_gates(result: RunResult) -> List[str]:
    """The gates a stored run failed (docs/check.md, "Gates"): compression thresholds the user set
    (``extra.accuracy.validation.failed``) and a board profile's bit-exact promise
    (``extra.verify.gate``). A default threshold the user never set is a warning, not listed here."""
    out = list(result.extra.accuracy.validation.failed or [])
    gate = result.extra.verify.gate
    if gate.applies and gate.passed is False:
        out.append("bit-exact outputs (verify)")
    return out


def refuse_mixed_labels(*results: RunResult) -> str:
    """The common label of ``results``; ResultError when they mix measured, emulated, simulated
    or estimated figures (a simulated figure must never be compared with a measured one)."""
    labels = {r.label for r in results}
    if len(labels) > 1:
        raise ResultError(f"refusing to compare {' with '.join(sorted(str(x) for x in labels))} figures",
                          "compare runs of the same kind only (a simulated board is not a measurement)")
    return str(labels.pop()) if labels else "measured"
