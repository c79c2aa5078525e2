"""The board-client protocol (level 1): what every board client offers, and what it can do.

Three clients speak to a board: :class:`~edgebench.transport.client.AgentClient` (the
Python agent on a Linux board, over any channel), :class:`~edgebench.mcu.board.McuClient`
(a microcontroller's firmware over a serial link) and :class:`~edgebench.sim.client.SimClient`
(a simulated board). They live at level 2 and must not import each other; the benchmarks
at level 4 drive any of them. This module is the contract between the two, so it sits
below both: plain typing, no I/O, nothing imported from the packages that implement it.

A caller asks ``client.capabilities`` (a frozenset of the names below) before using an
optional feature, and :func:`require` turns a missing one into one clear
:class:`~edgebench.errors.UsageError`. Nothing is discovered by looking at signatures or
attributes. A client whose abilities depend on what answers (an MCU running MLPerf Tiny
reference firmware has none of edgebench's extensions) computes its set after ``hello``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Protocol, runtime_checkable

from edgebench.errors import UsageError

if TYPE_CHECKING:  # the type only: modelfile parses flatbuffers, this module stays plain
    import numpy as np

    from edgebench.modelfile import ModelFile

#: ``run(..., start_ns=)`` (schedule continuation) takes a device time at most this far ahead
MAX_START_AHEAD_S = 10.0

#: Computes outputs: ``infer`` / ``infer_all`` return the model's outputs (accuracy, verify).
OUTPUTS = "outputs"
#: ``run(mode="fixed-rate", rate_hz=...)``: requests issued on a device-side schedule.
FIXED_RATE = "fixed-rate"
#: ``run(..., start_ns=...)`` continues a fixed-rate schedule across runs on the device clock.
SCHEDULE_CONTINUATION = "schedule-continuation"
#: The ``telemetry`` op and ``run(..., telemetry={...})``: samples taken on the device
#: between inferences; ``request_arrays`` answers both.
TELEMETRY = "telemetry"
#: ``link_report()``: what it took to get intact answers over a serial link.
LINK_REPORT = "link-report"
#: The board's device counter times each layer (``eb-infer N W layers``).
LAYER_TIMING = "layer-timing"
#: The MLPerf Tiny device-under-test dialect (``name%``, ``db load``, ``infer N W%``):
#: ``mlperf_profile()``, ``mlperf_performance(inputs, ...)``, ``mlperf_scores(inputs, ...)``.
MLPERF_MODE = "mlperf-mode"
#: ``deploy(model, force, model_id, input_encoding, results)``: convert the model to the firmware's
#: blob, upload and load it, with the MLPerf Tiny settings the DUT then reports (``DeployReport``).
DEPLOY = "deploy"
#: ``status()["simulated_energy_j"]``: a power model's energy counter (a simulated board).
ENERGY_COUNTER = "energy-counter"
#: ``load(..., preserve_all_tensors=True)`` and ``tensors(x, indices)``: intermediate tensors.
TENSORS = "tensors"
#: ``benchmark_model(sha256, ...)``: LiteRT's benchmark_model run on the board, per-operator profile.
BENCHMARK_MODEL = "benchmark-model"

ALL = frozenset({OUTPUTS, FIXED_RATE, SCHEDULE_CONTINUATION, TELEMETRY, LINK_REPORT, LAYER_TIMING,
                 MLPERF_MODE, DEPLOY, ENERGY_COUNTER, TENSORS, BENCHMARK_MODEL})

_WHAT = {
    OUTPUTS: "computing outputs", FIXED_RATE: "a device-side request scheduler",
    SCHEDULE_CONTINUATION: "continuing a fixed-rate schedule across runs", TELEMETRY: "on-device telemetry",
    LINK_REPORT: "a serial link report", LAYER_TIMING: "per-layer timing", MLPERF_MODE: "MLPerf Tiny mode",
    DEPLOY: "deploying a model blob to firmware",
    ENERGY_COUNTER: "a simulated energy counter", TENSORS: "reading intermediate tensors",
    BENCHMARK_MODEL: "running LiteRT's benchmark_model",
}


@runtime_checkable
class BoardClient(Protocol):
    """The interface the benchmarks drive. ``description`` names the board and the way it
    is reached (stored with every result); ``capabilities`` says which optional features
    (the constants of this module) it has."""

    description: str

    @property
    def capabilities(self) -> frozenset: ...

    def hello(self) -> dict:
        """Runtime, versions and ``timing`` (``real`` / ``emulated`` / ``simulated``)."""

    def sysinfo(self) -> dict:
        """``{"system": {...}, "collector_errors": {...}}``: the board's full description."""

    def thermal(self) -> dict:
        """``available``, ``temps_c``, ``freqs_hz``, ``throttled``, ``clock_ns``."""

    def status(self) -> dict:
        """``model_loaded``, ``pool`` and what the client adds (``link``, energy counter)."""

    def ensure_model(self, model: "ModelFile") -> str:
        """Put ``model`` (read and hashed once, by :func:`edgebench.modelfile.read_model`) on the
        board unless it holds it; return its sha256."""

    def load(self, sha256: str, kernels: str = ..., threads: int = 1, delegate: Optional[str] = None,
             batch: int = 1, name: Optional[str] = None, preserve_all_tensors: bool = False) -> dict:
        """Load a model put there by ``ensure_model``; its tensors, runtime, kernels, load time.
        ``preserve_all_tensors`` (capability ``tensors``; refused by a client without it): every
        intermediate tensor's value is kept for ``tensors``."""

    def set_inputs(self, x: "np.ndarray") -> int:
        """The input pool ``run`` cycles through; returns its size."""

    def run(self, mode: str, count: int, max_time_s: float, rate_hz: Optional[float] = None,
            start_index: int = 0, **more) -> tuple:
        """One timed run: ``(header, per-inference int64 arrays)``. ``start_ns=`` only with
        :data:`SCHEDULE_CONTINUATION`."""

    def infer(self, x: "np.ndarray") -> tuple:
        """Output 0 of every sample, raw and dequantized (needs :data:`OUTPUTS`)."""

    def infer_all(self, x: "np.ndarray") -> dict:
        """Every output: ``y``/``y_float``, ``y1``/``y1_float``... (needs :data:`OUTPUTS`)."""

    def close(self) -> None:
        """Release the board (stop the agent or emulator this client started)."""


def require(client, capability: str, doing: str) -> None:
    """UsageError unless ``client`` declares ``capability``: what is missing, on which board."""
    if capability not in ALL:
        raise ValueError(f"unknown capability {capability!r}")
    if capability not in client.capabilities:
        raise UsageError(f"{doing} needs {_WHAT[capability]}, which {client.description} does not offer",
                         "pick a board that has it (edgebench boards), or drop the option that asks for it")


__all__ = ["BoardClient", "require", "ALL", "OUTPUTS", "FIXED_RATE", "SCHEDULE_CONTINUATION", "TELEMETRY",
           "LINK_REPORT", "LAYER_TIMING", "MLPERF_MODE", "DEPLOY", "ENERGY_COUNTER", "TENSORS", "BENCHMARK_MODEL"]
