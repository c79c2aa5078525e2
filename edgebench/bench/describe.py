"""What a latency run ran, where and how (level 4): the conditions sections of its run.json, shared by
``bench`` and ``soak`` (docs/results-schema.md).

The board's replies (``hello``, ``loaded``, its system description) are the agent protocol's free-form
dicts (docs/agent-protocol.md); what is read from them goes into the typed sections of
:mod:`edgebench.results.conditions`.
"""
from __future__ import annotations

import os
from typing import Optional

from edgebench.agent.protocol import PREP_PER_INFERENCE, PREP_PRECOMPUTED
from edgebench.bench.hostinfo import host_description
from edgebench.bench.record import Label, board_section
from edgebench.provenance import read_sidecar
from edgebench.results.conditions import (
    ModelSection,
    RuntimeSection,
    ScenarioSection,
    SettingsSection,
    TimingSection,
)
from edgebench.results.figures.energy import PowerSection
from edgebench.results.model import STAGE_MEANING, STAGES, RunResult


def clock_resolution(hello: dict) -> float:
    """Seconds per tick of the clock that timed the samples: the agent reports
    ``time.get_clock_info('perf_counter').resolution``; firmware its counter's frequency."""
    res = hello.get("clock_resolution_s")
    if res:
        return float(res)
    firmware = hello.get("firmware")
    hz = firmware.get("counter-hz") if isinstance(firmware, dict) else None
    try:
        return 1.0 / float(hz) if hz else 0.0
    except (TypeError, ValueError, ZeroDivisionError):
        return 0.0


def load_average() -> Optional[list]:
    """The host's load averages (1, 5, 15 min), or None where the platform has none."""
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def figure_label(hello: dict) -> Label:
    """'emulated' when the device says its clock counts emulated instructions (QEMU), 'simulated'
    for a simulated board (edgebench.sim), else 'measured'."""
    timing = hello.get("timing")
    return timing if timing in ("emulated", "simulated") else "measured"


def describe_run(result: RunResult, model, loaded, hello, system, profile, client, opts, inputs) -> None:
    """Fill ``result``'s conditions: host, model (with its sidecar and calibration), runtime and
    kernels, agent, board, scenario (inputs, options) and timing (bench and soak share it)."""
    sidecar = read_sidecar(model.path)            # the quantize sidecar: a free-form dict, or None
    result.host = host_description()
    result.model = ModelSection.model_validate({**model.to_dict(), "sidecar": sidecar,
                                                "calibration": sidecar.get("calibration") if sidecar else None})
    runtime = loaded.get("runtime") if isinstance(loaded.get("runtime"), dict) else {}
    result.runtime = RuntimeSection(name=runtime.get("name"), version=runtime.get("version"),
                                    kernels=loaded.get("kernels", opts.kernels), op_resolver=loaded.get("op_resolver"),
                                    threads=loaded.get("threads", opts.threads), delegate=loaded.get("delegate"))
    result.board = board_section(profile, client.description, system)
    result.agent = {k: hello.get(k) for k in ("protocol", "agent_version", "python", "numpy", "pid")}
    result.scenario = ScenarioSection(name=opts.scenario, rate_hz=opts.rate_hz, batch=loaded.get("batch", opts.batch),
                                      inputs=inputs.describe())
    result.timing = TimingSection(
        clock="device time.perf_counter_ns (monotonic)",
        stages={s: STAGE_MEANING[s] for s in STAGES},
        prep=PREP_PRECOMPUTED,
        e2e_includes=e2e_includes(loaded, PREP_PRECOMPUTED),
        excludes="host-to-board transfer of inputs (inputs are on the device before timing), "
                 "feature extraction / image decoding (not part of this model)",
    )
    device_timing = loaded.get("timing")
    if isinstance(device_timing, dict):            # a device that times less says so (MCU: invoke only)
        for key, value in device_timing.items():
            setattr(result.timing, key, value)
    result.settings = SettingsSection(stop_rule={"target_rel_ci": opts.target_rel_ci, "min_samples": opts.min_samples,
                                                 "min_time_s": opts.min_time_s, "max_time_s": opts.max_time_s},
                                      min_warmup=opts.min_warmup, seed=opts.seed, chunk_time_s=opts.chunk_time_s,
                                      agent_cpus=opts.cpus)
    result.power = PowerSection(measured=False, boundary=None, instrument=None,
                                note="no power meter attached to this run: energy not measured")


def e2e_includes(loaded: dict, prep: str) -> str:
    """What an agent board's end-to-end figure holds: the agent prepares (quantizes) each distinct
    input before the timed loop, unless its pool is too large to keep prepared (then per inference)."""
    what = "input quantization" if (loaded["inputs"][0].get("quant")) else "input cast to float32"
    rest = "transfer into the interpreter, invoke, output read and dequantization"
    if prep == PREP_PER_INFERENCE:
        return f"{what} (per inference), {rest}"
    return f"{rest}; the {what} is done once per distinct input before the timed loop (not timed)"


__all__ = ["describe_run", "e2e_includes", "figure_label", "clock_resolution", "load_average"]
