"""What ran, where and how (level 0): the model, runtime, board, scenario, timing, settings, cold start and
warm-up sections of run.json (docs/results-schema.md)."""
from __future__ import annotations

from typing import Dict, List, Optional, Union

from edgebench.results.figures.common import Batched, Engine, Labelled
from edgebench.results.types import Count, Figure, Flag, Int, Mapping_, Num, Str, Text, field, sub


class TensorSection(Figure):
    """One input or output tensor of the model: name, dtype, shape and quantization."""
    name: Text = field("the tensor's name in the model")
    dtype: Text = field("its element type (`float32`, `int8`, ...)")
    shape: Optional[List[Optional[Int]]] = field("its shape (null for a dimension the model leaves open)")
    quant: Optional[Mapping_] = field("its quantization (`scale`, `zero_point`, per-channel `axis`), null for a "
                                      "float tensor")


class ModelIdentity(Figure):
    """Which model file: its path, name, hash and precision."""
    path: Text = field("the model file's path as given")
    name: Text = field("the model's name (the file's stem)")
    sha256: Text = field("SHA-256 of the model file (hex)")
    precision: Text = field("`fp32`, `int8`, `uint8`, `fp16`, `dynamic-range` or `mixed`, read from the tensor types "
                            "(not the name)")


class ModelSection(ModelIdentity):
    """The model file: identity, precision read from its tensor types, its quantize sidecar."""
    bytes: Count = field("size of the model file", "bytes")
    weights_dtype: Text = field("the weights' dtype")
    activations_dtype: Text = field("the activations' dtype")
    weights_bits: Count = field("bits per weight", "bits")
    activations_bits: Count = field("bits per activation", "bits")
    operators: Optional[Dict[str, Int]] = field("operator counts by operator name")
    inputs: Optional[List[TensorSection]] = field("the model's input tensors")
    outputs: Optional[List[TensorSection]] = field("the model's output tensors")
    sidecar: Optional[Mapping_] = field("the `<model>.json` quantize wrote beside the model (its source model, "
                                        "calibration, ...)")
    calibration: Optional[Mapping_] = field("the calibration set of a quantized model (`source`, `count`, `sha256`)")
    variants: Optional[List["ModelSection"]] = field("the models of a run over several (a sweep's), each its own "
                                                     "section")


class RuntimeSection(Engine):
    """The interpreter that ran the model: runtime, kernels, threads, delegate."""
    name: Text = field("the runtime the agent or firmware reports")
    version: Text = field("its version")
    op_resolver: Text = field("the op resolver the interpreter was built with")
    # a sweep over thread counts lists them
    threads: Union[Int, List[Int], Str, None] = field("the interpreter's threads (a sweep over thread counts lists "
                                                      "them)")
    device_model: Text = field("mlperf-tiny: the model id the DUT reports (`m-model-[...]`)")


class CpuFreqPolicy(Figure):
    """One cpufreq policy of a Linux board: its governor and clocks."""
    governor: Text = field("the scaling governor (`performance`, `ondemand`, `schedutil`, ...)")
    scaling_cur_freq_hz: Num = field("the policy's clock when read (what the agent's collector writes)", "Hz")
    cur_hz: Num = field("the policy's current clock when read")
    max_hz: Num = field("its maximum clock")
    min_hz: Num = field("its minimum clock")


class CpuFreq(Figure):
    """The board's cpufreq policies, by policy name."""
    policies: Optional[Dict[str, CpuFreqPolicy]] = field("each policy (`policy0`, ...) with its governor and clocks")


class SystemSection(Figure):
    """The board's system description from the agent's collectors (docs/agent-protocol.md)."""
    os: Optional[Mapping_] = field("the operating system (name, release, kernel)")
    cpu: Optional[Mapping_] = field("the CPU (model, cores, architecture, flags)")
    board: Optional[Mapping_] = field("the board's model (device tree, DMI)")
    cpufreq: CpuFreq = sub(CpuFreq, "the cpufreq policies when the run started")
    memory: Optional[Mapping_] = field("the board's memory (total, available, in bytes)")
    load: Optional[Mapping_] = field("load averages and running processes when the run started")
    thermal: Optional[Mapping_] = field("the thermal zones and their trip points")
    software: Optional[Mapping_] = field("the Python, numpy and runtime packages on the board")
    firmware: Optional[Mapping_] = field("a microcontroller's firmware report (`eb-info`: `counter-hz`, ...; "
                                         "mlperf-tiny: the DUT's profile)")
    dut_name: Text = field("mlperf-tiny: the name the DUT gives")
    firmware_image: Optional[Mapping_] = field("a microcontroller's firmware build that ran (`image`, "
                                               "`image_sha256`, ...)")


class BoardSection(Figure):
    """The board under test: its profile and its system description."""
    name: Text = field("the board profile's name (`edgebench boards`)")
    title: Text = field("the profile's title")
    kind: Text = field("the profile's kind of board")
    transport: Text = field("how edgebench reached the board (the board client's description of its link)")
    profile_origin: Text = field("where the profile came from (built in, or its file)")
    system: SystemSection = sub(SystemSection, "the board's system description from the agent's collectors")
    collector_errors: Optional[Mapping_] = field("the collectors that failed, each with its error")
    farm: Optional[Mapping_] = field("a labgrid farm's place the run held: coordinator, place, exporter, "
                                     "reservation, holder")


class ClassOrder(Figure):
    """How an image folder's subfolders were numbered (docs/accuracy.md, Image folders)."""
    by: Text = field("how the classes were numbered (`sorted` folder names, or a `--class-map`)")
    map: Optional[Dict[str, Int]] = field("class name to index")
    sorted: Optional[List[Str]] = field("the subfolder names in the order given their indices")
    ignored: Text = field("subfolders left out, and why")


class Inputs(Figure):
    """The inputs the model was fed: their source, count, shape and range."""
    source: Text = field("where the inputs came from (`random`, a file, an image folder, ...)")
    count: Count = field("distinct inputs")
    sha256: Text = field("SHA-256 of the inputs (a data set's file, or the generated array)")
    shape: Optional[List[Optional[Int]]] = field("one input's shape")
    range: Optional[List[Num]] = field("the range random inputs were drawn from [low, high]")
    seed: Count = field("the random generator's seed")
    class_names: Optional[List[Str]] = field("a labelled set: the class names, in index order")
    class_order: ClassOrder = sub(ClassOrder, "how an image folder's subfolders became class indices")


class ScenarioSection(Batched):
    """How inferences were issued: single-stream, offline or fixed-rate, and on what inputs."""
    name: Text = field("`single-stream`, `offline` or `fixed-rate`")
    rate_hz: Num = field("fixed-rate: the rate inferences were scheduled at")
    inputs: Inputs = sub(Inputs, "the inputs fed to the model")
    duty: Num = field("energy, battery: the share of time spent inferring (0-1)")
    idle_s: Num = field("energy: the idle time between bursts", "s")


class TimingSection(Figure):
    """What the clock is and what each timed stage covers."""
    clock: Text = field("the clock the stages were timed on (device `time.perf_counter_ns`, or the MCU counter)")
    clock_resolution_s: Num = field("seconds per tick of that clock (the coarser of the reported and the observed "
                                    "tick)")
    stages: Optional[Dict[str, Text]] = field("each stage (`prep`, `set`, `invoke`, `get`, `e2e`) and what it covers")
    e2e_includes: Text = field("what the end-to-end time includes")
    excludes: Text = field("what no stage includes (the host link, scheduling, ...)")
    prep: Text = field("how the input is prepared: once per distinct input before the timed loop, or per inference")
    clock_resolution_reported_s: Num = field("the clock's resolution as the device reported it (the figures use "
                                             "the coarser of it and the tick the samples show)", "s")


class SettingsSection(Figure):
    """The settings the run measured with: stop rule, repeats, sessions, seed, pinning."""
    stop_rule: Optional[Dict[str, Num]] = field("the stop rule: `target_rel_ci` (relative CI half-width, 0-1), "
                                                "`min_samples`, `min_time_s` and `max_time_s` per repeat")
    seed: Count = field("the seed of the inputs and of every random choice")
    repeat: Count = field("repeats asked for (each a fresh process)")
    max_repeats: Count = field("the most repeats the stop rule may add")
    sessions: Count = field("earlier invocations of the same measurement combined into the headline")
    agent_cpus: Union[Str, Int, List[Int], None] = field("the CPUs a local agent was pinned to (`--agent-cpus`), or "
                                                         "null")
    min_warmup: Count = field("inferences discarded as warm-up at least, per repeat")
    chunk_time_s: Num = field("the length of one request to the agent", "s")
    fresh_process_per_repeat: Flag = field("each repeat opened the agent afresh (a new process and model load)")
    interleaved_with: Optional[List[Str]] = field("run ids measured in alternation with this one (one invocation)")
    wall_s: Num = field("mlperf-tiny: the wall time the dialect's runner took", "s")


class ColdStart(Labelled):
    """The first repeat's cold start: model load and first inference, and one per repeat."""
    load_s: Num = field("model load: interpreter construction + allocate_tensors")
    first_inference_s: Num = field("the first inference after the load, end to end, timed alone")
    first_invoke_s: Num = field("the first invoke after the load")
    per_repeat: Optional[List[Dict[str, Num]]] = field("each repeat's `repeat`, `load_s`, `first_inference_s`, "
                                                       "`first_invoke_s`")
    note: Text = field("what the cold start covers")


class Warmup(Labelled):
    """The inferences discarded as warm-up before the measured samples."""
    n_warmup: Count = field("inferences discarded as warm-up, over all repeats")
    duration_s: Num = field("their total duration")
    method: Text = field("how the warm-up's end was found (MSER-5 on the e2e series)")
    at_limit: Flag = field("the search hit its limit (the series may not have settled)")
    per_repeat: Optional[List[Mapping_]] = field("each repeat's own warm-up (`repeat`, `n_warmup`, `duration_s`, ...)")

