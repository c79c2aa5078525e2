"""Latency benchmarks (level 4): drive the agent, decide when to stop, store the run.

Flow of :func:`run_bench`: read the model on the host (identity, precision),
open the agent on the board, describe the board, load the model (cold start:
load time, then the first inference timed alone), send the inputs, then run
chunks of inferences until the stop rule is met on the samples after the
detected warm-up, or the maximum time. Samples go to Parquet and the run to
``run.json``; Ctrl-C or an error after the first samples keeps them and marks
the run incomplete.
"""
from __future__ import annotations

import datetime as _dt
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from edgebench import __version__
from edgebench.errors import EdgebenchError, UsageError
from edgebench.results.model import STAGE_MEANING, STAGES, RunResult

SCENARIOS = ("single-stream", "offline", "fixed-rate")
KERNELS = ("xnnpack", "builtin", "reference")


@dataclass
class BenchOptions:
    scenario: str = "single-stream"
    kernels: str = "xnnpack"
    threads: int = 1
    delegate: Optional[str] = None
    rate_hz: Optional[float] = None
    batch: int = 1
    inputs: Optional[str] = None          # .npy/.npz path; None: seeded random in range
    input_count: int = 64
    input_range: Optional[tuple] = None
    seed: int = 0
    target_rel_ci: float = 0.01
    min_samples: int = 200
    min_time_s: float = 2.0
    max_time_s: float = 30.0
    min_warmup: int = 10
    chunk_time_s: float = 0.25
    cpus: Optional[str] = None            # pin a local agent to these CPUs ("0", "2,3")

    def validate(self) -> None:
        if self.scenario not in SCENARIOS:
            raise UsageError(f"unknown scenario {self.scenario!r}", f"use one of {', '.join(SCENARIOS)}")
        if self.kernels not in KERNELS:
            raise UsageError(f"unknown kernel set {self.kernels!r}", f"use one of {', '.join(KERNELS)}")
        if self.threads < 1:
            raise UsageError(f"threads must be at least 1, got {self.threads}")
        if self.scenario == "fixed-rate" and not (self.rate_hz and self.rate_hz > 0):
            raise UsageError("the fixed-rate scenario needs a positive --rate", "e.g. --rate 50")
        if self.batch < 1:
            raise UsageError(f"batch must be at least 1, got {self.batch}")


Progress = Callable[[dict], None]


def _stop_rule(o: BenchOptions):
    from edgebench.stats import preload
    from edgebench.stats.latency import StopRule

    preload()

    return StopRule(target_rel_ci=o.target_rel_ci, min_samples=o.min_samples,
                    min_time_s=o.min_time_s, max_time_s=o.max_time_s)


def run_bench(model_path, profile, opts: BenchOptions, runs_root="runs", url: str | None = None,
              progress: Progress | None = None, client=None) -> tuple[RunResult, Path]:
    """Benchmark ``model_path`` on the board of ``profile``; return the result and its folder."""
    from edgebench.boards.connect import board_client
    from edgebench.runtime.tflite_file import read_model

    opts.validate()
    rule = _stop_rule(opts)
    model = read_model(model_path)
    emit = progress or (lambda event: None)
    with board_client(profile, url, client, emit, cpus=opts.cpus) as client:
        return _run(client, model, profile, opts, rule, runs_root, emit)


def _run(client, model, profile, opts, rule, runs_root, emit):
    from edgebench.data.inputs import load_inputs, random_inputs
    from edgebench.results import store

    from edgebench.boards.connect import require_runtime

    hello = require_runtime(client, profile.name)
    system = client.sysinfo()
    sha = client.ensure_model(Path(model.path).read_bytes())
    emit({"event": "load", "model": model.name})
    loaded = client.load(sha, kernels=opts.kernels, threads=opts.threads,
                         delegate=opts.delegate, batch=opts.batch)
    tensor = loaded["inputs"][0]
    if opts.inputs:
        inputs = load_inputs(opts.inputs, tensor)
    else:
        inputs = random_inputs(tensor, count=opts.input_count, seed=opts.seed, override=opts.input_range)
    client.set_inputs(inputs.x)
    thermal_start = client.thermal()

    result = RunResult(
        run_id=uuid.uuid4().hex[:12],
        created_utc=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        edgebench_version=__version__,
        label=_label(hello),
    )
    _describe(result, model, loaded, hello, system, profile, client, opts, inputs)
    result.thermal = {"available": bool(thermal_start.get("available")), "start": thermal_start, "end": None}
    run_dir = store.new_run_dir(runs_root, model.name, profile.name)
    store.write_result(run_dir, result)

    chunks: list = []
    t0 = time.monotonic()
    decision = None
    try:
        header, cold = client.run("single-stream", count=1, max_time_s=60.0)
        cold["phase"] = np.array(["cold"])
        chunks.append(cold)
        result.cold_start = {
            "load_s": loaded.get("load_s"),
            "first_inference_s": float(cold["e2e_ns"][0]) / 1e9,
            "first_invoke_s": float(cold["invoke_ns"][0]) / 1e9,
            "label": result.label,
            "note": "model load = interpreter construction + allocate_tensors; first inference timed alone",
        }
        start_index = 1
        schedule = _Schedule(opts, client)
        while True:
            header, arrs = client.run(opts.scenario, count=100000, max_time_s=opts.chunk_time_s,
                                      rate_hz=opts.rate_hz, start_index=start_index, **schedule.next_kwargs())
            n = int(header.get("n", len(arrs["e2e_ns"])))
            schedule.advance(arrs, n)
            start_index += n
            arrs["phase"] = np.array(["measure"] * n)
            chunks.append(arrs)
            e2e = _concat(chunks[1:], "e2e_ns") / 1e9
            warm = _warmup(e2e, opts)
            measured = e2e[warm.n_warmup:]
            decision = rule.check(measured, time.monotonic() - t0) if measured.size else None
            emit({"event": "chunk", "n": int(measured.size), "n_warmup": warm.n_warmup,
                  "elapsed_s": time.monotonic() - t0,
                  "median_s": float(np.median(measured)) if measured.size else None,
                  "rel_ci": decision.rel_ci_halfwidth if decision else None,
                  "target": opts.target_rel_ci})
            if decision is not None and decision.done:
                break
            if time.monotonic() - t0 > opts.max_time_s + 5:
                break
    except KeyboardInterrupt:
        _finish(result, chunks, opts, client, run_dir, decision, status="incomplete",
                reason="interrupted by the user (Ctrl-C)")
        raise
    except EdgebenchError as exc:
        if len(chunks) <= 1:
            store.discard_run_dir(run_dir)
            raise
        _finish(result, chunks, opts, client, run_dir, decision, status="incomplete",
                reason=f"stopped by an error: {exc.one_line()}", alive=False)
        raise
    _finish(result, chunks, opts, client, run_dir, decision, status="complete", reason=None)
    return result, run_dir


class _Schedule:
    """Keeps a fixed-rate schedule continuous across chunks.

    The first chunk's first request fixes the origin on the device clock; each later
    chunk is told (``start_ns``) when its first request is due, so the time spent
    between chunks shows up as lateness of the requests it delayed, never as a
    silent gap in the schedule, and rates below one request per chunk work.
    """

    def __init__(self, opts: BenchOptions, client):
        import inspect

        # a client whose run() cannot continue a schedule (an MCU's firmware) restarts it per chunk
        continues = "start_ns" in inspect.signature(client.run).parameters
        self.period_ns = 1e9 / opts.rate_hz if opts.scenario == "fixed-rate" and continues else None
        self.origin_ns = None
        self.requests = 0

    def next_kwargs(self) -> dict:
        if self.period_ns is None or self.origin_ns is None:
            return {}
        return {"start_ns": int(self.origin_ns + round(self.requests * self.period_ns))}

    def advance(self, arrs: dict, n: int) -> None:
        if self.period_ns is None or n == 0:
            return
        if self.origin_ns is None and "scheduled_ns" in arrs:
            self.origin_ns = int(arrs["scheduled_ns"][0])
        self.requests += n


def _label(hello: dict) -> str:
    """'emulated' when the device says its clock counts emulated instructions (QEMU), 'simulated'
    for a simulated board (edgebench.sim), else 'measured'."""
    return hello.get("timing") if hello.get("timing") in ("emulated", "simulated") else "measured"


def _warmup(e2e: np.ndarray, opts: BenchOptions):
    from edgebench.stats.warmup import WarmupResult, detect_warmup

    if e2e.size < max(2 * opts.min_warmup, 20):
        n = min(opts.min_warmup, e2e.size)
        return WarmupResult(n, "fixed minimum (too few samples for MSER-5)", float(e2e[:n].sum()))
    return detect_warmup(e2e, min_warmup=opts.min_warmup)


def _concat(chunks: list, key: str) -> np.ndarray:
    parts = [c[key] for c in chunks if key in c and len(c[key])]
    return np.concatenate(parts).astype(np.float64) if parts else np.zeros(0)


def _describe(result, model, loaded, hello, system, profile, client, opts, inputs) -> None:
    from edgebench.runtime.tflite_file import read_sidecar

    sidecar = read_sidecar(model.path)
    result.host = _host()
    result.model = {**model.to_dict(), "sidecar": sidecar,
                    "calibration": (sidecar or {}).get("calibration")}
    result.runtime = {
        "name": (loaded.get("runtime") or {}).get("name"),
        "version": (loaded.get("runtime") or {}).get("version"),
        "kernels": loaded.get("kernels", opts.kernels),
        "op_resolver": loaded.get("op_resolver"),
        "threads": loaded.get("threads", opts.threads),
        "delegate": loaded.get("delegate"),
    }
    result.board = {
        "name": profile.name,
        "title": getattr(profile, "title", profile.name),
        "kind": getattr(profile, "kind", None),
        "transport": client.description if hasattr(client, "description") else None,
        "profile_origin": str(getattr(profile, "origin", "") or ""),
        "system": system.get("system", system),
        "collector_errors": system.get("collector_errors", {}),
    }
    result.agent = {k: hello.get(k) for k in ("protocol", "agent_version", "python", "numpy", "pid")}
    result.scenario = {"name": opts.scenario, "rate_hz": opts.rate_hz, "batch": loaded.get("batch", opts.batch),
                       "inputs": inputs.describe()}
    prep = "input quantization" if (loaded["inputs"][0].get("quant")) else "input cast to float32"
    result.timing = {
        "clock": "device time.perf_counter_ns (monotonic)",
        "stages": {s: STAGE_MEANING[s] for s in STAGES},
        "e2e_includes": f"{prep}, transfer into the interpreter, invoke, output read and dequantization",
        "excludes": "host-to-board transfer of inputs (inputs are on the device before timing), "
                    "feature extraction / image decoding (not part of this model)",
    }
    result.timing.update(loaded.get("timing") or {})  # a device that times less says so (MCU: invoke only)
    result.settings = {"stop_rule": {"target_rel_ci": opts.target_rel_ci, "min_samples": opts.min_samples,
                                     "min_time_s": opts.min_time_s, "max_time_s": opts.max_time_s},
                       "min_warmup": opts.min_warmup, "seed": opts.seed, "chunk_time_s": opts.chunk_time_s,
                       "agent_cpus": opts.cpus}
    result.power = {"measured": False, "boundary": None, "instrument": None,
                    "note": "no power meter attached to this run: energy not measured"}


def _host() -> dict:
    from edgebench.bench.hostinfo import host_description

    return host_description()


def _finish(result, chunks, opts, client, run_dir, decision, status, reason, alive=True) -> None:
    """Summarise what was measured, write samples and run.json; used on every exit path."""
    from edgebench.results import store
    from edgebench.stats.latency import summarize
    from edgebench.stats.stability import instability_warnings

    frame = _frame(chunks)
    measure = frame[frame["phase"] != "cold"]
    e2e = measure["e2e_s"].to_numpy()
    warm = _warmup(e2e, opts)
    phase = np.array(["measure"] * len(measure), dtype=object)
    phase[: warm.n_warmup] = "warmup"
    frame.loc[frame["phase"] != "cold", "phase"] = phase
    kept = measure.iloc[warm.n_warmup:]
    result.warmup = {**warm.to_dict(), "label": result.label}
    latency = {}
    batch = int(result.scenario.get("batch") or 1)
    if len(kept) >= 2:
        for stage in STAGES:
            latency[stage] = {**summarize(kept[f"{stage}_s"].to_numpy()).to_dict(), "label": result.label}
        result.warnings = [w.to_dict() for w in instability_warnings(kept["e2e_s"].to_numpy())]
    result.latency = latency
    if warm.at_limit:
        result.warnings.append({
            "code": "warmup-unsettled",
            "message": f"the detected warm-up ({warm.n_warmup:,} inferences) reaches the search limit "
                       "(half the samples): latency may not have settled",
            "remedy": "raise --min-time, or run `edgebench soak` first"})
    result.throughput = _throughput(result, kept, batch, opts)
    if opts.scenario == "fixed-rate" and len(kept) >= 2:
        _fixed_rate(result, kept, opts)
    result.stopping = {
        "target_reached": bool(decision.target_reached) if decision else False,
        "reason": decision.reason if decision else "stopped before any measurement",
        "n": int(len(kept)),
        "elapsed_s": float(kept["e2e_s"].sum()) if len(kept) else 0.0,
    }
    if decision and not decision.target_reached:
        result.warnings.append({"code": "target-not-reached", "message": decision.reason,
                                "remedy": "raise --max-time, or accept a wider --target"})
    if alive:
        try:
            result.thermal["end"] = client.thermal()
            result.thermal["available"] = bool(result.thermal["available"] or result.thermal["end"].get("available"))
            result.agent["status"] = client.status()
        except (EdgebenchError, KeyboardInterrupt):
            pass
    result.status, result.status_reason = status, reason
    from edgebench.report.claim import claim

    result.extra = {**result.extra, "claim": claim(result) if latency else None}
    store.write_samples(run_dir, frame)
    store.write_result(run_dir, result)


def _frame(chunks):
    import pandas as pd

    cols = {"phase": np.concatenate([np.asarray(c["phase"], dtype=object) for c in chunks])}
    cols["t_start_ns"] = np.concatenate([c["t_start_ns"] for c in chunks]).astype(np.int64)
    for stage in STAGES:
        cols[f"{stage}_s"] = np.concatenate([c[f"{stage}_ns"] for c in chunks]).astype(np.float64) / 1e9
    if all("input_index" in c for c in chunks):
        cols["input_index"] = np.concatenate([c["input_index"] for c in chunks]).astype(np.int64)
    if all("scheduled_ns" in c for c in chunks[1:]) and len(chunks) > 1:
        sched = [c.get("scheduled_ns", np.full(len(c["e2e_ns"]), -1)) for c in chunks]
        cols["scheduled_ns"] = np.concatenate(sched).astype(np.int64)
    return pd.DataFrame(cols)


def _throughput(result, kept, batch, opts) -> dict:
    if len(kept) < 2:
        return {}
    if opts.scenario == "single-stream":
        med = result.latency["e2e"]["median_s"]
        return {"per_s": batch / med, "definition": "1 / median end-to-end latency (one request at a time)",
                "label": result.label}
    t = kept["t_start_ns"].to_numpy()
    span = (t[-1] + kept["e2e_s"].to_numpy()[-1] * 1e9 - t[0]) / 1e9
    return {"per_s": len(kept) * batch / span,
            "definition": "inferences completed / wall span on the device clock", "label": result.label}


def _fixed_rate(result, kept, opts) -> None:
    t = kept["t_start_ns"].to_numpy()
    achieved = (len(t) - 1) / ((t[-1] - t[0]) / 1e9) if t[-1] > t[0] else None
    extra = {"requested_rate_hz": opts.rate_hz, "achieved_rate_hz": achieved}
    if "scheduled_ns" in kept:
        late = (t - kept["scheduled_ns"].to_numpy()) / 1e9
        late = late[kept["scheduled_ns"].to_numpy() >= 0]
        if late.size:
            extra.update({"lateness_median_s": float(np.median(late)),
                          "lateness_p99_s": float(np.percentile(late, 99))})
    result.extra = {**result.extra, **extra}
    if achieved is not None and achieved < 0.95 * opts.rate_hz:
        result.warnings.append({
            "code": "rate-not-sustained",
            "message": f"the board did not sustain {opts.rate_hz:g}/s: achieved {achieved:.1f}/s",
            "remedy": "lower --rate, use more threads or a faster delegate"})


__all__ = ["BenchOptions", "run_bench", "SCENARIOS", "KERNELS"]
