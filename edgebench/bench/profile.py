"""``edgebench profile``: where the time of one inference goes, layer by layer (level 4).

Flow of :func:`run_profile`: read and inspect the model on the host (operators, shapes, MACs),
choose the method (:data:`edgebench.bench.profile_methods.METHODS`: the device's counter on a
microcontroller, isolated operators or ``benchmark_model`` on a Linux board), then K repeats
(``--repeat``), each on a freshly opened board client like ``bench``'s repeats, each timing the
whole model and every layer. The figures (:mod:`edgebench.bench.profile_summary`) go to
``extra.profile`` of a run of kind ``profile``; the samples (``repeat``, ``row``, ``latency_s``,
``statistic``) to samples.parquet. The run skeleton (:mod:`edgebench.bench.record`) keeps what
was measured when the run is stopped.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np

from edgebench.bench.describe import figure_label
from edgebench.bench.hostinfo import host_description
from edgebench.bench.options import KERNELS
from edgebench.bench.profile_methods import ISOLATED_WARNING, METHODS, check_method, default_method
from edgebench.bench.profile_summary import Means
from edgebench.bench.profile_table import profile_section
from edgebench.bench.record import RunFolder, board_client, board_section, new_result, record_end_state
from edgebench.bench.tensors import tensor_bytes, try_host_tensors
from edgebench.boards.connect import require_runtime
from edgebench.data.inputs import InputSet, load_inputs, random_inputs
from edgebench.errors import UsageError
from edgebench.modelfile import read_model
from edgebench.provenance import read_sidecar
from edgebench.report.layers import profile_claim
from edgebench.results import store
from edgebench.results.conditions import (
    ModelSection,
    RuntimeSection,
    ScenarioSection,
    SettingsSection,
    TimingSection,
)
from edgebench.results.figures.energy import PowerSection
from edgebench.results.figures.thermal import ThermalSection
from edgebench.results.journal import Journal
from edgebench.results.model import RunResult
from edgebench.runtime.cut import CutOperator, cut_model
from edgebench.runtime.inspect import inspect_model

#: operators whose values feed the isolated runs (the first of the inputs)
POOL = 8
Progress = Callable[[dict], None]


@dataclass
class ProfileOptions:
    method: Optional[str] = None          # None: the board's default (profile_methods.default_method)
    kernels: str = "xnnpack"
    threads: int = 1
    delegate: Optional[str] = None
    repeat: int = 3                       # fresh board client per repeat
    inputs: Optional[str] = None          # .npy/.npz; None: seeded random in the input's range
    input_count: int = POOL
    input_range: Optional[tuple] = None
    seed: int = 0
    warmup: int = 5                       # at least this many inferences dropped (MSER-5 above it)
    min_samples: int = 30                 # isolated: per operator per repeat, after the warm-up
    op_time_s: float = 0.2                # isolated: per operator per repeat
    whole_time_s: float = 1.0             # isolated: the whole model per repeat (half before, half after)
    layer_samples: int = 12               # device counter: per-layer inferences per repeat
    benchmark_model: Optional[str] = None # path of benchmark_model on the board (None: its PATH)
    bm_runs: int = 50                     # benchmark_model --num_runs per repeat

    def validate(self) -> None:
        if self.kernels not in KERNELS:
            raise UsageError(f"unknown kernel set {self.kernels!r}", f"use one of {', '.join(KERNELS)}")
        for name, low in (("threads", 1), ("repeat", 1), ("input_count", 1), ("min_samples", 2),
                          ("layer_samples", 2), ("bm_runs", 2), ("warmup", 0)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise UsageError(f"--{name.replace('_', '-')} must be a whole number of at least {low}, got {v!r}")
        for name in ("op_time_s", "whole_time_s"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise UsageError(f"--{name[:-2].replace('_', '-')} must be a positive number of seconds, got {v!r}")


def run_profile(model_path, profile, opts: ProfileOptions, runs_root="runs", url: Optional[str] = None,
                progress: Optional[Progress] = None, client=None) -> tuple[RunResult, Path]:
    """Profile ``model_path`` layer by layer on ``profile``'s board; the result and its folder."""
    return ProfileRun(model_path, profile, opts, runs_root, url, progress, client).run()


class ProfileRun:
    """One profile run: the model, its operators, the method and the repeats measured so far."""

    def __init__(self, model_path, profile, opts: ProfileOptions, runs_root="runs", url=None,
                 progress: Optional[Progress] = None, client=None):
        opts.validate()
        self.opts, self.profile, self.url, self.client = opts, profile, url, client
        self.kind = profile.client_kind
        self.method = check_method(opts.method or default_method(self.kind, opts.benchmark_model),
                                   self.kind, profile.name)
        if self.method.name == "device-counter" and (opts.delegate or opts.threads != 1):
            raise UsageError(f"board {profile.name} is a microcontroller: no delegate, one thread",
                             "drop --delegate and --threads")
        self.model = read_model(model_path)
        self.report = inspect_model(model_path)
        self.emit = progress or (lambda event: None)
        self.folder = RunFolder(runs_root, self.model.name, profile.name)
        self.result: Optional[RunResult] = None
        self.repeats: list = []
        self.inputs: Optional[InputSet] = None
        self.loaded: Optional[dict] = None
        self.blob: Any = None               # device counter: the blob's layer map
        self.cuts: Optional[list[CutOperator]] = None   # isolated: CutOperator per operator
        self.pools: dict = {}               # isolated: operator index -> float inputs
        self.fixed_model: Optional[bytes] = None   # isolated: the almost empty model of the fixed cost
        self.pool_note: Optional[str] = None
        self.journal: Optional[Journal] = None

    # -- the run ----------------------------------------------------------------------
    def run(self) -> tuple[RunResult, Path]:
        with self.folder.guard(self._stopped, lambda: bool(self.repeats)):
            for k in range(self.opts.repeat):
                with board_client(self.profile, self.url, self.client, self.emit if k == 0 else None) as client:
                    result = self.result or self._start(client)
                    self.emit({"event": "repeat", "repeat": k + 1, "of": self.opts.repeat})
                    rep = self.method.collect(self, client, k)
                    if k == self.opts.repeat - 1:
                        record_end_state(result, client)
                self.repeats.append(rep)
                if self.journal is not None:
                    self.journal.append(_frame([rep], start=k))
                self._summarise("running", None)
        self._finish("complete", None)
        assert self.result is not None and self.folder.path is not None   # the first repeat started the run
        return self.result, self.folder.path

    def _stopped(self, status: str, reason: str) -> None:
        self._finish(status, reason)

    def _start(self, client) -> RunResult:
        hello = require_runtime(client, self.profile.name)
        tensor = self.model.inputs[0].to_dict()
        self.inputs = (load_inputs(self.opts.inputs, tensor, limit=self.opts.input_count, model=self.model) if self.opts.inputs
                       else random_inputs(tensor, count=self.opts.input_count, seed=self.opts.seed,
                                          override=self.opts.input_range))
        result = new_result("profile", figure_label(hello))
        describe(result, self, client, hello)
        self.result = result
        path = self.folder.start(result)
        self.journal = store.open_journal(path)
        return result

    # -- isolated operators: the models and their inputs ---------------------------------
    def prepare_cuts(self) -> None:
        """Cut every operator; its input values (and those of further non-constant inputs) from a
        run of the whole model with the reference kernels on this computer, or seeded random
        values in each tensor's range when this computer cannot run the model."""
        assert self.inputs is not None   # _start read them
        cm = cut_model(self.model.content, self.model.path)
        first = [cm.cut(k) for k in range(len(cm))]
        # an operator that cut (``ok``) has the tensor it is fed
        fed = {c.input_tensor for c in first if c.ok and c.input_tensor is not None}
        wanted = sorted(fed | {i for c in first if c.ok for i in c.frozen_inputs})
        shapes = [(cm.tensor_shape(i), cm.tensor_dtype(i) or np.float32) for i in wanted]
        values, why = try_host_tensors(self.model, self.inputs.x[:POOL], wanted, tensor_bytes(shapes))
        if values is None:
            self.pool_note = (f"operators were fed seeded random values in each tensor's range: the values inside "
                              f"the model could not be computed on this computer ({why})")
            rng = np.random.default_rng(self.opts.seed)
            values = {i: _random_raw(cm, i, min(POOL, len(self.inputs.x)), rng) for i in wanted}
        else:
            self.pool_note = (f"each operator was fed the values it sees inside the model for the first "
                              f"{min(POOL, len(self.inputs.x))} inputs (reference kernels on this computer)")
        cuts = []
        for c in first:
            if not c.ok or c.input_tensor is None:
                cuts.append(c)
                continue
            cuts.append(cm.cut(c.index, {i: values[i][0] for i in c.frozen_inputs}))
            self.pools[c.index] = _as_float(cm, c.input_tensor, values[c.input_tensor])
        self.cuts = cuts
        try:
            self.fixed_model = cm.fixed_cost()
        except Exception as exc:   # a schema this reader cannot rebuild: operators keep their gross times, said so
            self.fixed_model = None
            self.pool_note = (self.pool_note or "") + (f"; the per-invocation fixed cost was not measured "
                                                       f"({type(exc).__name__}): each operator's time includes it")

    # -- figures and storing -----------------------------------------------------------------
    def _summarise(self, status: str, reason: Optional[str]) -> None:
        result = self.result
        if result is None:
            return
        result.extra.profile = profile_section(self)
        if self.loaded:      # what the board's load said: the op resolver (kernels) and delegate that ran
            ran = {k: self.loaded.get(k) for k in ("op_resolver", "kernels", "delegate")
                   if self.loaded.get(k) is not None}
            result.runtime = RuntimeSection.model_validate({**result.runtime.to_dict(), **ran})
        result.status, result.status_reason = status, reason   # type: ignore[assignment]  # one of STATUSES
        result.extra.claim = profile_claim(result)
        self.folder.save(result)

    def _finish(self, status: str, reason: Optional[str]) -> None:
        if self.result is None or self.folder.path is None:
            return
        self._summarise(status, reason)
        self.folder.save(self.result, _frame(self.repeats))
        if self.journal is not None:
            self.journal.remove()
            self.journal = None


def describe(result: RunResult, run: ProfileRun, client, hello: dict) -> None:
    """The run's conditions: host, model (and its sidecar), runtime, board, scenario, timing."""
    assert run.inputs is not None   # read before the run starts
    system = client.sysinfo()
    sidecar = read_sidecar(run.model.path)
    o = run.opts
    mcu = run.kind == "mcu"
    result.host = host_description()
    result.model = ModelSection.model_validate({
        **run.model.to_dict(), "sidecar": sidecar, "calibration": (sidecar or {}).get("calibration"),
        "macs": run.report.macs, "macs_complete": not run.report.macs_not_counted})
    runtime = hello.get("runtime") or {}
    result.runtime = RuntimeSection(name=runtime.get("name"), version=runtime.get("version"),
                                    kernels="reference" if mcu else o.kernels, threads=1 if mcu else o.threads,
                                    delegate=None if mcu else o.delegate)
    result.board = board_section(run.profile, client.description, system)
    result.agent = {k: hello.get(k) for k in ("protocol", "agent_version", "python", "numpy", "pid")}
    result.scenario = ScenarioSection.model_validate({"name": "profile", "method": run.method.name,
                                                      "inputs": run.inputs.describe()})
    clock = (f"device counter at {hello.get('firmware', {}).get('counter-hz')} Hz ({hello.get('timing')})" if mcu
             else "device time.perf_counter_ns around interpreter.invoke()" if run.method.name == "isolated"
             else "benchmark_model's profiler (whole microseconds)")
    result.timing = TimingSection.model_validate({"clock": clock, "method": run.method.name,
                                                  "includes": run.method.sees, "excludes": run.method.cannot_see})
    result.settings = SettingsSection.model_validate({
        "repeat": o.repeat, "seed": o.seed, "warmup": o.warmup, "min_samples": o.min_samples,
        "op_time_s": o.op_time_s, "whole_time_s": o.whole_time_s, "layer_samples": o.layer_samples,
        "benchmark_model": o.benchmark_model, "bm_runs": o.bm_runs, "fresh_process_per_repeat": run.client is None})
    start = client.thermal()
    result.thermal = ThermalSection(available=bool(start.get("available")), start=start)
    result.power = PowerSection.model_validate({"measured": False, "boundary": None, "instrument": None,
                                                "note": "no power meter attached to this run: energy not measured"})


def _frame(repeats: list, start: int = 0):
    """One sample per row: ``repeat``, ``row`` (``whole``, ``op:<index>``, ...), ``latency_s``,
    ``statistic`` (``sample``; ``mean`` with ``std_s`` and ``count`` for benchmark_model)."""
    import pandas as pd  # ~1 s to import (measured): only when samples are written

    cols: dict = {"repeat": [], "row": [], "latency_s": [], "statistic": [], "std_s": [], "count": []}

    def add(k, key, value):
        if isinstance(value, Means):
            vals, stat, std, cnt = [value.mean_s], "mean", value.std_s, value.count
        else:
            vals, stat, std, cnt = list(np.asarray(value, dtype=np.float64)), "sample", np.nan, 1
        cols["repeat"] += [k] * len(vals)
        cols["row"] += [key] * len(vals)
        cols["latency_s"] += vals
        cols["statistic"] += [stat] * len(vals)
        cols["std_s"] += [std] * len(vals)
        cols["count"] += [cnt] * len(vals)

    for k, rep in enumerate(repeats, start):
        add(k, "whole", rep.whole)
        for key, value in rep.rows.items():
            add(k, key, value)
    return pd.DataFrame(cols).astype({"repeat": "int64", "count": "int64", "latency_s": "float64",
                                      "std_s": "float64"})


def _random_raw(cm, i: int, n: int, rng) -> np.ndarray:
    dtype = np.dtype(cm.tensor_dtype(i) or np.float32)
    shape = (n,) + cm.tensor_shape(i)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, int(info.max) + 1, size=shape).astype(dtype)
    return rng.uniform(0.0, 1.0, size=shape).astype(dtype)


def _as_float(cm, i: int, raw: np.ndarray) -> np.ndarray:
    """Raw tensor values as the float inputs the agent quantizes back (exactly, scale for scale)."""
    q = cm.tensors[i].quantization
    raw = np.asarray(raw)
    raw = raw.reshape((len(raw),) + tuple(cm.tensor_shape(i)[1:]))     # (N, shape without its batch)
    if q is not None and q.scale is not None and len(q.scale) == 1 and raw.dtype.kind in "iu":
        return ((raw.astype(np.float32) - np.float32(q.zeroPoint[0])) * np.float32(q.scale[0])).astype(np.float32)
    return raw.astype(np.float32)


__all__ = ["ProfileOptions", "ProfileRun", "run_profile", "METHODS", "ISOLATED_WARNING", "KERNELS"]
