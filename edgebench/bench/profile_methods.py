"""How ``edgebench profile`` times each layer: one declared method per way of seeing (level 4).

:data:`METHODS` is the table the verb, its docs and its report iterate over. Each method's
``collect(run, client, repeat)`` takes one repeat on an open board client and returns a
:class:`Repeat`: the whole model's and every row's figures (arrays of seconds, or
:class:`~edgebench.bench.profile_summary.Means`).

* ``device-counter`` (microcontrollers with edgebench firmware, capability ``layer-timing``):
  ``eb-infer N W layers``: the N inferences timed whole and one more timed layer by layer by
  the device's own counter, taken modulo its width (one wrap within a layer is harmless;
  firmware/PROTOCOL.md, Timing). Blob layers map to the model's operators by the tensor they
  write (a SPLIT lowered to several SLICE layers is summed back into its operator).
* ``isolated`` (Linux boards and this computer): each operator cut into a model of its own
  (:mod:`edgebench.runtime.cut`, original quantization kept), loaded with the same runtime,
  kernels, threads and delegate on the same board, fed the values it sees inside the model
  (computed on this computer with the reference kernels), its ``invoke`` timed like ``bench``
  times the whole model's; the whole model is timed before and after the operators. Each
  invocation pays a fixed cost whatever its operator (measured on an almost empty model timed
  the same way, ``FIXED_KEY``), shown as its own row; the sum of the operators less that cost
  for all but one of them (``sum_ratio_net``) is comparable to the whole model, which pays it once.
* ``benchmark-model`` (Linux boards with LiteRT's ``benchmark_model``, capability
  ``benchmark-model``): the tool run on the board with operator profiling in proto mode
  (:mod:`edgebench.runtime.benchmark_model`); the whole model from its log.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from edgebench import board_protocol as bp
from edgebench.bench.profile_summary import Means
from edgebench.errors import AgentError, ModelError, UsageError
from edgebench.mcu.blob import convert
from edgebench.modelfile import parse_model
from edgebench.runtime.benchmark_model import parse_profile
from edgebench.stats.warmup import warmup_or_minimum

#: the warning beside isolated-operator timings (and in the run)
ISOLATED_WARNING = ("isolated timings omit cache and fusion effects: each operator ran alone, so the cache "
                    "state it finds, any fusion a delegate does with its neighbours, and the interpreter's "
                    "work between operators are not in its time; the sum of the layers is printed against the "
                    "whole model beside it")


#: isolated: the row of the per-invocation fixed cost (an almost empty model timed like each operator). Each
#: operator's time includes it; the whole model pays it once: ``sum_ratio_net`` takes it off all rows but one
FIXED_KEY = "fixed"
FIXED_ROW = {"key": FIXED_KEY, "index": None, "op": "(fixed cost)", "name": "per-invocation fixed cost",
             "in_sum": False, "where": "runtime",
             "note": "one RESHAPE of one element timed like each operator: what every invocation pays (invoke, "
                     "inputs, outputs); inside each operator's time; the whole model pays it once"}

#: MCU: inferences timed whole per eb-infer call (each call adds one per-layer inference)
MCU_WHOLE_PER_CALL = 2


@dataclass
class Repeat:
    """One repeat: ``whole`` and ``rows`` (key -> seconds array or Means); ``extra_rows``
    describes rows the method found that are not operators of the model (delegate nodes)."""

    whole: object
    rows: dict
    extra_rows: list = field(default_factory=list)
    info: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Method:
    name: str
    title: str
    board_kind: str                 # "mcu" or "agent": the clients it runs on
    capability: Optional[str]       # what the client must declare
    statistic: str                  # "median" of samples or "mean" (benchmark_model)
    sees: str
    cannot_see: str
    collect: Callable


def op_key(index: int) -> str:
    return f"op:{index}"


# ---------------------------------------------------------------- device counter (MCU)

def _blob_map(run) -> tuple:
    """(blob layer -> operator index, {operator index: note}) from the converted blob."""
    blob = convert(run.model, name=run.model.name)
    producer = {t: layer.index for layer in run.report.layers for t in layer.outputs}
    mapping = {}
    for b in blob.layers:
        op = producer.get(b.get("output_tensor"))
        if op is None:
            raise ModelError(f"{run.model.name}: blob layer {b['index']} ({b['op']}) writes a tensor no operator of "
                             "the model writes", "report this as a bug with the model")
        mapping[int(b["index"])] = op
    fused = {layer.index: "run inside another layer by the engine (not timed on its own)"
             for layer in run.report.layers if layer.index not in set(mapping.values())}
    return mapping, fused, len(blob.layers)


def collect_device_counter(run, client, k: int) -> Repeat:
    bp.require(client, bp.LAYER_TIMING, f"per-layer timing on board {run.profile.name}")
    if run.blob is None:
        run.blob = _blob_map(run)
    mapping, fused, n_layers = run.blob
    sha = client.ensure_model(run.model)
    run.loaded = client.load(sha, kernels="reference", name=run.model.name)
    client.set_inputs(run.inputs.x)
    whole: list = []
    rows: dict = {op_key(i): [] for i in set(mapping.values())}
    calls = run.opts.layer_samples
    for c in range(calls):
        got = client.run_layers(MCU_WHOLE_PER_CALL, run.opts.warmup if c == 0 else 0, index=c)
        if len(got["layers"]) != n_layers:
            raise AgentError(f"{client.description} timed {len(got['layers'])} layers, the model's blob has "
                             f"{n_layers}", "the firmware keeps at most EB_LAYERS_MAX layer timings")
        indices = sorted(int(x["layer"]) for x in got["layers"])
        if indices != sorted(mapping) or len(got["ns"]) != MCU_WHOLE_PER_CALL:
            raise AgentError(f"{client.description} answered layers {indices[:8]}{'…' if len(indices) > 8 else ''} "
                             f"and {len(got['ns'])} whole-model times; the blob has layers 0–{n_layers - 1} and "
                             f"{MCU_WHOLE_PER_CALL} were asked for",
                             "a damaged reply or a firmware of another edgebench version: re-run, or re-flash")
        whole += got["ns"]
        acc: dict = {}
        for x in got["layers"]:
            key = op_key(mapping[int(x["layer"])])
            acc[key] = acc.get(key, 0) + int(x["ns"])
        for key, ns in acc.items():
            rows[key].append(ns)
        run.emit({"event": "layer-call", "call": c + 1, "of": calls, "repeat": k + 1})
    return Repeat(whole=np.asarray(whole, dtype=np.float64) / 1e9,
                  rows={key: np.asarray(v, dtype=np.float64) / 1e9 for key, v in rows.items()},
                  info={"fused": fused, "calls": calls, "whole_per_call": MCU_WHOLE_PER_CALL,
                        "counter_hz": got["counter_hz"]})


# ---------------------------------------------------------------- isolated operators (agent)

def _timed(run, client, seconds: float) -> np.ndarray:
    """invoke_ns of single-stream chunks for at least ``seconds`` and ``min_samples`` samples after
    the warm-up, at most three times ``seconds``; seconds, warm-up dropped."""
    got: list = []
    t0 = time.monotonic()
    start = 0
    while True:
        left = max(0.05, seconds - (time.monotonic() - t0))
        header, arrs = client.run("single-stream", count=100000, max_time_s=left, start_index=start)
        start += int(header.get("n", len(arrs["invoke_ns"])))
        got.append(arrs["invoke_ns"])
        x = np.concatenate(got).astype(np.float64) / 1e9
        kept = x[warmup_or_minimum(x, run.opts.warmup).n_warmup:]
        spent = time.monotonic() - t0
        if (spent >= seconds and kept.size >= run.opts.min_samples) or spent >= 3 * seconds:
            return kept


def collect_isolated(run, client, k: int) -> Repeat:
    o = run.opts
    if run.cuts is None:
        run.prepare_cuts()
    load = dict(kernels=o.kernels, threads=o.threads, delegate=o.delegate)
    sha = client.ensure_model(run.model)
    run.loaded = client.load(sha, name=run.model.name, **load)
    client.set_inputs(run.inputs.x)
    run.emit({"event": "whole", "repeat": k + 1})
    whole = [_timed(run, client, o.whole_time_s / 2)]
    rows = {}
    extra = []
    fixed_s = 0.0
    if run.fixed_model is not None:        # what every invocation pays: measured, then taken off each operator
        m = parse_model(run.fixed_model, f"{run.model.name}-fixed-cost.tflite")
        client.load(client.ensure_model(m), name=m.name, **load)
        client.set_inputs(np.zeros((len(run.inputs.x[:8]), 1), dtype=np.float32))
        rows[FIXED_KEY] = _timed(run, client, o.op_time_s)
        fixed_s = float(np.median(rows[FIXED_KEY]))
        extra.append(dict(FIXED_ROW))
    cuts = [c for c in run.cuts if c.ok]
    for n, cut in enumerate(cuts):
        run.emit({"event": "layer", "index": cut.index, "op": cut.op, "n": n + 1, "of": len(cuts), "repeat": k + 1})
        m = parse_model(cut.data, f"{run.model.name}-op{cut.index}.tflite")
        client.load(client.ensure_model(m), name=m.name, **load)
        client.set_inputs(run.pools[cut.index])
        rows[op_key(cut.index)] = _timed(run, client, o.op_time_s)
    client.load(sha, name=run.model.name, **load)
    client.set_inputs(run.inputs.x)
    whole.append(_timed(run, client, o.whole_time_s / 2))
    return Repeat(whole=np.concatenate(whole), rows=rows, extra_rows=extra,
                  info={"whole_halves": [int(len(w)) for w in whole], "fixed_cost_median_s": fixed_s or None})


# ---------------------------------------------------------------- benchmark_model (agent)

def collect_benchmark_model(run, client, k: int) -> Repeat:
    o = run.opts
    bp.require(client, bp.BENCHMARK_MODEL, f"the benchmark-model method on board {run.profile.name}")
    sha = client.ensure_model(run.model)
    run.emit({"event": "benchmark-model", "repeat": k + 1, "runs": o.bm_runs})
    header, data = client.benchmark_model(sha, binary=o.benchmark_model, threads=o.threads, kernels=o.kernels,
                                          runs=o.bm_runs, warmup_runs=o.warmup, delegate=o.delegate)
    prof = parse_profile(data, header.get("log", ""))
    w = prof.whole
    if not w.get("inference_avg_us"):
        raise AgentError(f"benchmark_model on {client.description} logged no whole-model timing "
                         "('Inference timings in us: ... Inference (avg)')", "check the tool's output: "
                         + " | ".join(header.get("log", "").strip().splitlines()[-2:]))
    whole = Means(w["inference_avg_us"] * 1e-6, (w.get("std_us") or 0.0) * 1e-6, int(w.get("count") or o.bm_runs))
    n_ops = len(run.report.layers)
    rows, extra = {}, []
    for r in prof.rows:
        value = Means(r.avg_us * 1e-6, r.stddev_us * 1e-6, r.count)
        if r.node_index is not None and r.node_index < n_ops:
            rows[op_key(r.node_index)] = value
        else:
            key = f"node:{r.node_index}" if r.node_index is not None else f"event:{r.name}"
            rows[key] = value
            extra.append({"key": key, "index": r.node_index, "op": r.op, "name": r.name,
                          "in_sum": r.node_index is not None, "where": "delegate kernel" if r.node_index is not None
                          else "runtime event", "note": "runs several operators of the model"
                          if r.node_index is not None else "not an operator: outside the sum"})
    for r in prof.delegate_rows:
        key = f"inner:{r.run_order}"
        rows[key] = Means(r.avg_us * 1e-6, r.stddev_us * 1e-6, r.count)
        extra.append({"key": key, "index": None, "op": r.op, "name": r.name, "in_sum": False,
                      "where": "inside the delegate", "note": "the delegate's own operator (its name, not the "
                                                              "model's): inside its kernel's time, outside the sum"})
    return Repeat(whole=whole, rows=rows, extra_rows=extra,
                  info={"argv": header.get("argv"), "binary": header.get("binary"),
                        "elapsed_s": header.get("elapsed_s"), "whole": w})


METHODS = {m.name: m for m in (
    Method("device-counter", "the device's own counter, layer by layer", "mcu", bp.LAYER_TIMING, "median",
           sees="every layer as the engine runs it inside the model, on the device's counter (instructions under "
                "QEMU's -icount); the whole model timed in the same eb-infer calls",
           cannot_see="the time of the per-layer hook itself (excluded by the firmware); layers an engine fuses "
                      "are timed as one",
           collect=collect_device_counter),
    Method("isolated", "each operator alone, same board, runtime and kernels", "agent", None, "median",
           sees="each operator's own kernel time with the runtime, kernels, threads and delegate of the board, "
                "fed the values it sees inside the model",
           cannot_see="cache and fusion effects: inside the model an operator finds its input in cache (or not), a "
                      "delegate may fuse it with its neighbours, and the interpreter's work between operators is "
                      "not in any isolated time; compare the sum with the whole model beside it",
           collect=collect_isolated),
    Method("benchmark-model", "LiteRT's benchmark_model with operator profiling", "agent", bp.BENCHMARK_MODEL, "mean",
           sees="every node the interpreter runs inside the model (a delegate's kernel as one node, and the "
                "operators the delegate reports inside it), timed by the runtime's own profiler",
           cannot_see="per-inference samples (the tool reports means, standard deviations and counts, in whole "
                      "microseconds) and what a node a delegate claimed does inside, beyond what the delegate reports",
           collect=collect_benchmark_model),
)}


def default_method(kind: str, benchmark_model: Optional[str] = None) -> str:
    """The method a board gets without --method: its counter (MCU), benchmark_model when pointed at
    one, else isolated operators."""
    if kind == "mcu":
        return "device-counter"
    return "benchmark-model" if benchmark_model else "isolated"


def check_method(name: str, kind: str, board: str) -> Method:
    if name not in METHODS:
        raise UsageError(f"unknown profile method {name!r}", f"use one of {', '.join(METHODS)}")
    if kind not in {m.board_kind for m in METHODS.values()}:
        raise UsageError(f"board {board} is simulated: a power and latency model has no layers to time",
                         "profile on a real board, this computer (--board host) or an emulated one (qemu-m4)")
    m = METHODS[name]
    if m.board_kind != kind:
        runs_on = ("microcontrollers with edgebench firmware" if m.board_kind == "mcu"
                   else "Linux boards and this computer")
        raise UsageError(f"the {name} method runs on {runs_on}; board {board} is not one",
                         f"use --method {default_method(kind)} (or leave --method out)")
    return m


__all__ = ["METHODS", "Method", "Repeat", "default_method", "check_method", "op_key"]
