"""What ran, where and how (level 0): the model, runtime, board, scenario, timing, settings, cold start and
warm-up sections of run.json (docs/results-schema.md)."""
from __future__ import annotations

from typing import Dict, List, Optional, Union

from edgebench.results.types import Count, Figure, Flag, Int, Mapping_, Num, Str, Text, field, sub


class TensorSection(Figure):
    name: Text = None
    dtype: Text = None
    shape: Optional[List[Optional[Int]]] = None
    quant: Optional[Mapping_] = None


class ModelSection(Figure):
    """The model file: identity, precision read from its tensor types, its quantize sidecar."""
    path: Text = None
    name: Text = None
    sha256: Text = None
    bytes: Count = None
    precision: Text = None
    weights_dtype: Text = None
    activations_dtype: Text = None
    weights_bits: Count = None
    activations_bits: Count = None
    operators: Optional[Dict[str, Int]] = None
    inputs: Optional[List[TensorSection]] = None
    outputs: Optional[List[TensorSection]] = None
    sidecar: Optional[Mapping_] = None
    calibration: Optional[Mapping_] = None
    variants: Optional[List["ModelSection"]] = None


class RuntimeSection(Figure):
    name: Text = None
    version: Text = None
    kernels: Text = None
    op_resolver: Text = None
    threads: Union[Int, List[Int], Str, None] = None     # a sweep over thread counts lists them
    delegate: Text = None
    device_model: Text = field("mlperf-tiny: the model id the DUT reports (`m-model-[...]`)")


class CpuFreqPolicy(Figure):
    governor: Text = None
    scaling_cur_freq_hz: Num = field("the policy's clock when read (what the agent's collector writes)", "Hz")
    cur_hz: Num = None
    max_hz: Num = None
    min_hz: Num = None


class CpuFreq(Figure):
    policies: Optional[Dict[str, CpuFreqPolicy]] = None


class SystemSection(Figure):
    """The board's system description from the agent's collectors (docs/agent-protocol.md)."""
    os: Optional[Mapping_] = None
    cpu: Optional[Mapping_] = None
    board: Optional[Mapping_] = None
    cpufreq: CpuFreq = sub(CpuFreq)
    memory: Optional[Mapping_] = None
    load: Optional[Mapping_] = None
    thermal: Optional[Mapping_] = None
    software: Optional[Mapping_] = None
    firmware: Optional[Mapping_] = field("a microcontroller's firmware report (`eb-info`: `counter-hz`, ...; "
                                         "mlperf-tiny: the DUT's profile)")
    dut_name: Text = field("mlperf-tiny: the name the DUT gives")


class BoardSection(Figure):
    name: Text = None
    title: Text = None
    kind: Text = None
    transport: Text = None
    profile_origin: Text = None
    system: SystemSection = sub(SystemSection)
    collector_errors: Optional[Mapping_] = None
    farm: Optional[Mapping_] = field("a labgrid farm's place the run held: coordinator, place, exporter, "
                                     "reservation, holder")


class ClassOrder(Figure):
    """How an image folder's subfolders were numbered (docs/accuracy.md, Image folders)."""
    by: Text = None
    map: Optional[Dict[str, Int]] = None
    sorted: Optional[List[Str]] = None
    ignored: Text = None


class Inputs(Figure):
    source: Text = None
    count: Count = None
    sha256: Text = None
    shape: Optional[List[Optional[Int]]] = None
    range: Optional[List[Num]] = None
    seed: Count = None
    class_names: Optional[List[Str]] = None
    class_order: ClassOrder = sub(ClassOrder)


class ScenarioSection(Figure):
    name: Text = None
    rate_hz: Num = None
    batch: Count = None
    inputs: Inputs = sub(Inputs)
    duty: Num = field("energy, battery: the share of time spent inferring (0-1)")
    idle_s: Num = field("energy: the idle time between bursts", "s")


class TimingSection(Figure):
    clock: Text = None
    clock_resolution_s: Num = None
    stages: Optional[Dict[str, Text]] = None
    e2e_includes: Text = None
    excludes: Text = None
    prep: Text = field("how the input is prepared: once per distinct input before the timed loop, or per inference")
    clock_resolution_reported_s: Num = field("the clock's resolution as the device reported it (the figures use "
                                             "the coarser of it and the tick the samples show)", "s")


class SettingsSection(Figure):
    stop_rule: Optional[Dict[str, Num]] = None
    seed: Count = None
    repeat: Count = None
    max_repeats: Count = None
    sessions: Count = None
    agent_cpus: Union[Str, Int, List[Int], None] = None
    min_warmup: Count = field("inferences discarded as warm-up at least, per repeat")
    chunk_time_s: Num = field("the length of one request to the agent", "s")
    fresh_process_per_repeat: Flag = field("each repeat opened the agent afresh (a new process and model load)")
    interleaved_with: Optional[List[Str]] = field("run ids measured in alternation with this one (one invocation)")
    wall_s: Num = field("mlperf-tiny: the wall time the dialect's runner took", "s")


class ColdStart(Figure):
    load_s: Num = None
    first_inference_s: Num = None
    first_invoke_s: Num = None
    per_repeat: Optional[List[Dict[str, Num]]] = None
    label: Text = None
    note: Text = field("what the cold start covers")


class Warmup(Figure):
    n_warmup: Count = None
    duration_s: Num = None
    method: Text = None
    at_limit: Flag = None
    per_repeat: Optional[List[Mapping_]] = None
    label: Text = None

