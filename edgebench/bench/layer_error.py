"""``edgebench layer-error``: which layer of an INT8 model loses the accuracy (level 4).

Flow of :func:`run_layer_error`: read and inspect both models (the INT8 one and the FP32 one it
came from), match their layers (:func:`match_layers`: by the output tensor names the converter
keeps, then by position in the graph for the rest, each match saying how it was made), load the
inputs (a data set, a .npy/.npz, or seeded random values), run both models with every
intermediate tensor kept (``experimental_preserve_all_tensors``) on this computer, each in a
child process (:class:`edgebench.bench.tensors.HostTensors`; the reference kernels by default,
the INT8 semantics), and per matched layer compare the dequantized INT8 tensor with the FP32 one
(:mod:`edgebench.stats.layer_error`): SQNR in dB and cosine similarity with bootstrap intervals
across the inputs, the SQNR drop from the layer's inputs, the first layer whose drop is a jump,
and the quantization parameters that explain it (saturated share, levels used, a zero point at
the edge, the weights' own error and channel scales). Stored as a run of kind ``layer-error``.
"""
from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import numpy as np

from edgebench.bench.accuracy import check_signatures
from edgebench.bench.accuracy_eval import plain
from edgebench.bench.hostinfo import host_description
from edgebench.bench.options import KERNELS
from edgebench.bench.record import RunFolder, new_result
from edgebench.bench.tensors import HostTensors, tensor_bytes
from edgebench.data.datasets import check_against_model, load_dataset
from edgebench.data.inputs import load_inputs, random_inputs
from edgebench.data.layout import model_layout
from edgebench.errors import ModelError, UsageError
from edgebench.modelfile import read_model
from edgebench.provenance import read_sidecar
from edgebench.report.layers import layer_error_claim
from edgebench.results.conditions import BoardSection, ModelSection, RuntimeSection, ScenarioSection, SettingsSection
from edgebench.results.figures.layer_error import LayerErrorFigure, LayerErrorRow, LayerPick
from edgebench.results.model import RunResult, RunWarning
from edgebench.runtime.cut import cut_model
from edgebench.runtime.inspect import inspect_model
from edgebench.stats.layer_error import (
    Accumulator,
    best_sqnr_db,
    channel_figures,
    first_jump,
    layer_figures,
    local_error,
    reference_db,
    resamples,
    sqnr_db,
    worst_tenth,
)

#: operators that only convert between float and integer at the edges of an INT8 graph
CONVERSIONS = frozenset({"QUANTIZE", "DEQUANTIZE"})
#: a layer's quantization is flagged when it saturates more than this share of its FP32 values ...
SATURATION_FLAG = 1e-3
#: ... uses fewer levels than this of the 256 ...
LEVELS_FLAG = 32
#: ... or its weights are quantized with an SQNR below this (dB)
WEIGHT_SQNR_FLAG = 25.0
WEIGHT_OPS = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV"})

Progress = Callable[[dict], None]


@dataclass
class LayerErrorOptions:
    data: Optional[str] = None               # a data set (digits, .npz, image folder): its inputs
    inputs: Optional[str] = None             # or a .npy/.npz of inputs
    count: int = 64
    seed: int = 0
    input_range: Optional[tuple] = None      # random inputs: LOW,HIGH (default: the input's range)
    kernels: str = "reference"
    jump_db: float = 6.0
    data_options: Optional[dict] = None

    def validate(self) -> None:
        if self.data and self.inputs:
            raise UsageError("--data and --inputs exclude each other", "give one source of inputs")
        if self.kernels not in KERNELS:
            raise UsageError(f"unknown kernel set {self.kernels!r}", f"use one of {', '.join(KERNELS)}")
        if isinstance(self.count, bool) or not isinstance(self.count, int) or self.count < 2:
            raise UsageError(f"--count must be a whole number of at least 2, got {self.count!r}",
                             "an interval across inputs needs at least 2 of them")
        if not (isinstance(self.jump_db, (int, float)) and math.isfinite(self.jump_db) and self.jump_db > 0):
            raise UsageError(f"--jump-db must be a positive number of dB, got {self.jump_db!r}", "e.g. --jump-db 6")


# ---------------------------------------------------------------- matching the two graphs

def _compared(report) -> list:
    return [layer for layer in report.layers if layer.op not in CONVERSIONS and layer.outputs]


def match_layers(q_report, f_report) -> list:
    """``[(int8 layer, fp32 layer, how)]`` in the INT8 graph's order; ``how`` is ``name`` (the
    same output tensor name) or ``position`` (aligned by operator sequence: the names differ)."""
    qs, fs = _compared(q_report), _compared(f_report)
    fname: Dict[str, Any] = {}
    for layer in fs:
        fname.setdefault(f_report.tensors[layer.outputs[0]].name, layer)
    pairs, used = {}, set()
    for layer in qs:
        other = fname.get(q_report.tensors[layer.outputs[0]].name)
        if other is not None and other.op == layer.op and other.index not in used:
            pairs[layer.index] = (other, "name")
            used.add(other.index)
    rest_q = [layer for layer in qs if layer.index not in pairs]
    rest_f = [layer for layer in fs if layer.index not in used]
    sm = difflib.SequenceMatcher(a=[x.op for x in rest_q], b=[x.op for x in rest_f], autojunk=False)
    for block in sm.get_matching_blocks():
        for j in range(block.size):
            pairs[rest_q[block.a + j].index] = (rest_f[block.b + j], "position")
    return [(layer, pairs[layer.index][0], pairs[layer.index][1]) for layer in qs if layer.index in pairs]


# ---------------------------------------------------------------- quantization parameters

def _quant(report, i: int) -> tuple:
    t = report.tensors[i]
    return (t.scale[0], t.zero_point[0]) if len(t.scale) == 1 else (None, None)


def _levels(report, i: int) -> Optional[tuple]:
    """``(scale, zero_point, qmin, qmax)`` of a per-tensor quantized integer tensor, else None."""
    t = report.tensors[i]
    scale, zp = _quant(report, i)
    if scale is None or t.dtype not in ("int8", "uint8", "int16"):
        return None
    info = np.iinfo(t.dtype)
    return scale, zp, int(info.min), int(info.max)


def _weights(q_cut, f_cut, q_layer, f_layer) -> Optional[dict]:
    """The weights' own quantization: SQNR of the dequantized INT8 weights against the FP32 ones,
    per-tensor or per-channel scales and how far the channels' scales spread."""
    if q_layer.op not in WEIGHT_OPS or len(q_layer.inputs) < 2 or len(f_layer.inputs) < 2:
        return None
    wi, fi = q_layer.inputs[1], f_layer.inputs[1]      # the filter (TRANSPOSE_CONV: after output_shape)
    qt = q_cut.tensors[wi].quantization
    qv, fv = q_cut.constant_value(wi), f_cut.constant_value(fi)
    if qv is None or qt is None or qt.scale is None or not len(qt.scale):
        return None
    scales = np.asarray(qt.scale, dtype=np.float64)
    zps = np.asarray(qt.zeroPoint if qt.zeroPoint is not None else [0] * len(scales), dtype=np.float64)
    out: Dict[str, Any] = {"per_channel": bool(len(scales) > 1), "channels": int(len(scales)),
           "scale_spread": float(scales.max() / scales.min()) if scales.min() > 0 else None, "sqnr_db": None}
    if fv is None or fv.shape != qv.shape or fv.dtype.kind != "f":
        out["note"] = "the FP32 weights differ in shape or are not stored as constants: their error is not computed"
        return out
    axis = int(qt.quantizedDimension or 0) if len(scales) > 1 else None
    shape = [1] * qv.ndim
    if axis is not None:
        shape[axis] = len(scales)
    deq = (qv.astype(np.float64) - zps.reshape(shape)) * scales.reshape(shape)
    f = fv.astype(np.float64)
    out["sqnr_db"] = sqnr_db(float((f ** 2).sum()), float(((f - deq) ** 2).sum()))
    return out


def explain(row: LayerErrorRow) -> List[str]:
    """The quantization parameters of a layer that can explain its error, one phrase each."""
    why = []
    sat, excess = row.saturated_share, row.clip_excess_steps
    if sat is not None and sat > SATURATION_FLAG and excess is not None and excess > 1.0:
        why.append(f"{sat:.1%} of its FP32 values lie outside the INT8 range (scale {row.scale:.3g}, "
                   f"zero point {row.zero_point}), by {excess:.1f} steps (rms): they saturate")
        zp, below = row.zero_point, row.saturated_below or 0.0
        if zp == -128 and below > SATURATION_FLAG:
            why.append(f"zero point at the edge (-128): the {below:.1%} of values below zero are clipped")
        elif zp == 127 and sat - below > SATURATION_FLAG:
            why.append(f"zero point at the edge (127): the {sat - below:.1%} of values above zero are clipped")
    levels = row.levels_used
    if levels is not None and levels < LEVELS_FLAG:
        why.append(f"its FP32 values span only {levels:.0f} of the 256 levels (scale {row.scale:.3g}): "
                   "the calibrated range is much wider than what these inputs reach")
    ch = row.channels or {}                        # channel_figures' free-form dict
    if ch.get("dominant") and ch.get("crushed"):
        why.append(f"channel {ch['widest']} holds {ch['widest_share']:.0%} of the range "
                   f"({ch['widest_over_next']:.0f}x the next widest channel): {len(ch['crushed'])} of the other "
                   f"{ch['channels'] - 1} channels get a few levels of the shared scale (SQNR below 20 dB)")
    w = row.weights or {}                          # _weights' free-form dict
    if w.get("sqnr_db") is not None and w["sqnr_db"] < WEIGHT_SQNR_FLAG:
        how = (f"per-channel scales spreading {w['scale_spread']:.0f}x" if w.get("per_channel")
               else "one per-tensor scale")
        why.append(f"its weights are quantized with an SQNR of only {w['sqnr_db']:.1f} dB ({how})")
    return why


# ---------------------------------------------------------------- the run

def load_samples(opts: LayerErrorOptions, model) -> tuple:
    """``(x, description)``: the inputs, at most ``count`` of them (a seeded choice from a data set)."""
    tensor = model.inputs[0].to_dict()
    if opts.data:
        options = {k: v for k, v in (opts.data_options or {}).items() if v is not None}
        ds = load_dataset(opts.data, layout=model_layout(model), **options)   # as accuracy and verify read it
        check_against_model(ds, model.inputs[0].shape)
        pick = np.sort(np.random.default_rng(opts.seed).permutation(len(ds))[:opts.count])
        return ds.x[pick].astype(np.float32), {
            "source": ds.source, "count": int(len(pick)), "of": len(ds), "sha256": ds.sha256, "random": False,
            "selection": f"{len(pick)} of {len(ds)}, seeded choice (seed {opts.seed})"}
    s = (load_inputs(opts.inputs, tensor, limit=opts.count, model=model) if opts.inputs
         else random_inputs(tensor, count=opts.count, seed=opts.seed, override=opts.input_range))
    return s.x, {**s.describe(), "random": not opts.inputs}


def run_layer_error(model_path, baseline_path, opts: LayerErrorOptions, runs_root="runs",
                    progress: Optional[Progress] = None) -> tuple[RunResult, Path]:
    """Per-layer error of the INT8 ``model_path`` against the FP32 ``baseline_path``."""
    opts.validate()
    emit = progress or (lambda event: None)
    model, baseline = read_model(model_path), read_model(baseline_path)
    check_signatures(model, baseline)
    if baseline.precision not in ("fp32", "fp16"):
        raise ModelError(f"baseline {baseline.name} is a {baseline.precision} model, not a float one",
                         "pass the FP32 model the INT8 one was converted from as --baseline")
    if model.precision in ("fp32", "fp16"):
        raise ModelError(f"{model.name} is a {model.precision} model: there is no quantization error to locate",
                         "pass the INT8 model first and the FP32 one as --baseline")
    q_rep, f_rep = inspect_model(model_path), inspect_model(baseline_path)
    pairs = match_layers(q_rep, f_rep)
    if not pairs:
        raise ModelError(f"no layer of {model.name} matches one of {baseline.name}",
                         "the baseline must be the FP32 model the INT8 one was converted from")
    x, described = load_samples(opts, model)
    q_idx = [q.outputs[0] for q, _, _ in pairs]
    f_idx = [f.outputs[0] for _, f, _ in pairs]
    acc = {q.index: Accumulator.empty() for q, _, _ in pairs}
    inputs_acc = Accumulator.empty()          # the model input: float against its quantized form
    q_in, f_in = q_rep.input_indices[0], f_rep.input_indices[0]
    levels = {q.index: _levels(q_rep, q.outputs[0]) for q, _, _ in pairs}
    folder = RunFolder(runs_root, model.name, "host")
    result = new_result("layer-error", "measured")
    emit({"event": "connect", "board": "host (two child processes)"})
    with HostTensors(model, opts.kernels) as qh, HostTensors(baseline, opts.kernels) as fh:
        result.runtime = _runtime(qh.describe(), fh.describe())
        q_bytes = tensor_bytes([(q_rep.tensors[i].shape, q_rep.tensors[i].dtype) for i in q_idx + [q_in]])
        f_bytes = tensor_bytes([(f_rep.tensors[i].shape, "float32") for i in f_idx + [f_in]])
        step = max(1, min(len(x), 32 * 1024 * 1024 // max(1, q_bytes + f_bytes)))
        for start in range(0, len(x), step):
            xs = x[start:start + step]
            emit({"event": "tensors", "done": start, "of": len(x)})
            qt = qh.capture(xs, q_idx + [q_in], q_bytes)
            ft = fh.capture(xs, f_idx + [f_in], f_bytes)
            assert qt is not None and ft is not None   # no ``each``: the arrays are returned
            inputs_acc.add(ft[f_in], _dequant(q_rep, q_in, qt[q_in]), _levels(q_rep, q_in))
            for (q, _f, _), qi, fi in zip(pairs, q_idx, f_idx):
                ref, test = ft[fi], _dequant(q_rep, qi, qt[qi])
                if ref.shape != test.shape:
                    raise ModelError(f"layer {q.index} ({q.op}) of {model.name} writes {list(test.shape[1:])}, its "
                                     f"match in {baseline.name} {list(ref.shape[1:])}",
                                     "the two models are not the same network")
                acc[q.index].add(ref, test, levels[q.index])
    emit({"event": "analyse"})
    q_cut, f_cut = cut_model(model.content, model.path), cut_model(baseline.content, baseline.path)
    section = _section(q_rep, pairs, acc, inputs_acc, opts, q_cut, f_cut)
    result.model = ModelSection.model_validate({**model.to_dict(), "sidecar": read_sidecar(model.path)})
    result.extra.baseline = {**baseline.to_dict(), "sidecar": read_sidecar(baseline.path)}
    result.extra.layer_error = section
    result.scenario = ScenarioSection.model_validate({"name": "layer-error", "inputs": described})
    result.board = BoardSection(name="host", title="this computer", kind="host",
                                transport="two local agents (child processes)")
    result.settings = SettingsSection.model_validate({"count": opts.count, "seed": opts.seed, "kernels": opts.kernels,
                                                      "jump_db": opts.jump_db})
    result.host = host_description()
    if described.get("random"):
        result.warnings.append(RunWarning(code="random-inputs", message="seeded random inputs, not real data: "
                                          "activations may range differently than in use, so saturation and levels "
                                          "used describe these inputs only",
                                          remedy="pass --data or --inputs with real inputs"))
    result.status = "complete"
    result.extra.claim = layer_error_claim(result)
    result.status = "running"             # until its samples are stored too: a kill in between is recoverable
    path = folder.start(result)
    result.status = "complete"
    folder.save(result, _per_sample_frame(pairs, acc, inputs_acc))
    return result, path


def _runtime(int8: dict, fp32: dict) -> RuntimeSection:
    """The run's runtime section: the INT8 model's runtime and kernels (as every run records them),
    the baseline's beside. ``int8``, ``fp32``: what the two agents said of their runtimes."""
    rt = int8.get("runtime") or {}
    return RuntimeSection.model_validate({
        "name": rt.get("name"), "version": rt.get("version"), "kernels": int8.get("kernels"),
        "op_resolver": int8.get("op_resolver"), "threads": 1, "delegate": None, "where": int8.get("where"),
        "preserve_all_tensors": True, "baseline": fp32})


def _dequant(report, i: int, raw: np.ndarray) -> np.ndarray:
    scale, zp = _quant(report, i)
    if scale is None or raw.dtype.kind == "f":
        return raw.astype(np.float64)
    return (raw.astype(np.float64) - zp) * scale


def _row(q_rep, tensor: int, a, fig, local: Optional[dict], idx_name: dict) -> LayerErrorRow:
    """A compared tensor's row: figures, quantization, range used, saturation, local error."""
    scale, zp = _quant(q_rep, tensor)
    span = (a.hi - a.lo) if math.isfinite(a.hi) and math.isfinite(a.lo) else None
    clip_steps = None         # rms distance of the saturated values to the range, in steps
    n_saturated = float(np.sum(a.saturated)) * _elements(q_rep, tensor) if a.saturated else 0.0
    if scale and n_saturated > 0:
        clip_steps = math.sqrt(float(np.sum(a.clip)) / n_saturated) / scale
    row = {**idx_name, **fig.to_dict(), "best_sqnr_db": best_sqnr_db(a), "scale": scale, "zero_point": zp,
           "fp32_min": a.lo if math.isfinite(a.lo) else None, "fp32_max": a.hi if math.isfinite(a.hi) else None,
           "levels_used": span / scale if span is not None and scale else None,
           "saturated_below": float(np.mean(a.below)) if a.below else None,
           "clip_excess_steps": clip_steps, "channels": channel_figures(a)}
    if local is not None:     # no local figure: the key stays absent
        row["local"] = local
    out = LayerErrorRow.model_validate(plain(row))
    out.explained_by = explain(out)
    return out


def _input_tail(a) -> dict:
    """The worst tenth of the inputs' SQNR at the model input (its quantization is its own noise)."""
    clean = Accumulator.empty()
    clean.signal, clean.noise = list(a.signal), [0.0] * len(a.signal)
    return worst_tenth(a, clean)


PICKED = ("index", "op", "name", "local", "sqnr_db", "output_sqnr_db", "best_sqnr_db", "reference_db", "reference",
          "explained_by")


def _pick(r: LayerErrorRow, **more: Any) -> LayerPick:
    """A row singled out, as the row holds it (keys it lacks stay absent)."""
    d = r.to_dict()
    return LayerPick.model_validate({**{k: d[k] for k in PICKED if k in d}, **more})


def _section(q_rep, pairs, acc, inputs_acc, opts, q_cut, f_cut) -> LayerErrorFigure:
    n = len(inputs_acc.signal)
    idx = resamples(n, opts.seed)
    producer = {t: layer.index for layer in q_rep.layers for t in layer.outputs}
    q_in = q_rep.input_indices[0]
    input_fig = layer_figures(inputs_acc)
    own = {"local_sqnr_db": input_fig.sqnr_db, "local_ci": input_fig.to_dict()["sqnr_ci"], "drop_db": None,
           "what": "the model input's own quantization (the float input against its INT8 form)",
           **_input_tail(inputs_acc)}
    input_row = _row(q_rep, q_in, inputs_acc, input_fig, own,
                     {"index": None, "op": "input", "name": q_rep.tensors[q_in].name, "matched_by": "input",
                      "weights": None})
    rows = []
    for q, f, how in pairs:
        a = acc[q.index]
        feeders = []
        for i in q.inputs:
            if i < 0 or q_rep.tensors[i].constant:
                continue
            p = producer.get(i)
            if p is None and i == q_in:
                feeders.append(inputs_acc)
            elif p in acc:
                feeders.append(acc[p])
        rows.append(_row(q_rep, q.outputs[0], a, layer_figures(a), local_error(feeders, a, idx) if feeders else None,
                         {"index": q.index, "op": q.op, "name": q_rep.tensors[q.outputs[0]].name,
                          "baseline_index": f.index, "matched_by": how, "weights": _weights(q_cut, f_cut, q, f)}))
    chain = [input_row] + rows
    for r in chain:
        r.reference_db, r.reference = reference_db(r.best_sqnr_db, r.output_sqnr_db, (r.weights or {}).get("sqnr_db"),
                                                   r.op or "")
    found = first_jump([r.local.to_dict() for r in chain], [r.reference_db for r in chain], opts.jump_db)
    jump, which = found if found else (None, None)
    worst = max((k for k, r in enumerate(rows) if r.local.drop_db is not None),
                key=lambda k: rows[k].local.drop_db or 0.0, default=None)
    notes = []
    by_position = [r for r in rows if r.matched_by == "position"]
    if by_position:
        notes.append(f"{len(by_position)} layer(s) matched by graph position (their output names differ between the "
                     f"two models): {', '.join(str(r.index) for r in by_position)}")
    unmatched = [layer.index for layer in _compared(q_rep) if layer.index not in acc]
    if unmatched:
        notes.append(f"layer(s) {', '.join(map(str, unmatched))} have no counterpart in the baseline: not compared")

    outlier = next((r for r in rows if r.channels and r.channels.get("dominant") and r.channels["crushed"]), None)
    channel_outlier = None
    if outlier is not None and outlier.channels:
        ch = outlier.channels
        channel_outlier = {"index": outlier.index, "op": outlier.op, "name": outlier.name,
                           "channel": ch["widest"], "share": ch["widest_share"], "over_next": ch["widest_over_next"],
                           "crushed": len(ch["crushed"]), "channels": ch["channels"],
                           "message": f"channel {ch['widest']} of {outlier.name} (layer {outlier.index}, "
                                      f"{outlier.op}) holds {ch['widest_share']:.0%} of the range: "
                                      f"{len(ch['crushed'])} of its other {ch['channels'] - 1} channels are crushed "
                                      "(per-tensor INT8 scale); rebalance that channel (equalize it with the next "
                                      "layer) or calibrate with per-channel activation ranges"}
    section = LayerErrorFigure(
        layers=rows, input=input_row, channel_outlier=channel_outlier, jump_db=opts.jump_db, n=n, ci_level=0.95,
        method="SQNR: the mean over inputs of each input's SQNR in dB (sum of squared FP32 values over sum "
               "of squared differences), Student t interval across the (independent) inputs; cosine and "
               "saturated share likewise; local SQNR by the noise budget 1/SQNR_out = 1/SQNR_in + 1/SQNR_local, "
               f"95% percentile bootstrap over inputs ({idx.shape[0]} resamples shared by every layer: paired); "
               f"a jump: a local SQNR whose interval lies more than {opts.jump_db:g} dB below what 8-bit "
               "rounding alone explains for the layer (its output over its own observed range, or with a "
               "SOFTMAX/LOGISTIC/TANH's fixed scale; plus its weights' own rounding)",
        notes=notes)
    if jump is not None:        # none found: the key stays absent (reads as an empty LayerPick)
        section.first_jump = _pick(chain[jump], which=which)
    if worst is not None:
        section.largest_drop = _pick(rows[worst])
    return section


def _elements(report, i: int) -> int:
    return int(np.prod(report.tensors[i].shape))


def _per_sample_frame(pairs, acc, inputs_acc):
    """Per input and layer: signal and noise power, cosine, saturated share (samples.parquet)."""
    import pandas as pd  # ~1 s to import (measured): only when samples are written

    cols: dict = {"layer": [], "sample": [], "signal": [], "noise": [], "cosine": [], "saturated": []}
    for key, a in [(-1, inputs_acc)] + [(q.index, acc[q.index]) for q, _, _ in pairs]:
        n = len(a.signal)
        cols["layer"] += [key] * n
        cols["sample"] += list(range(n))
        cols["signal"] += list(a.signal)
        cols["noise"] += list(a.noise)
        cols["cosine"] += list(a.cosine)
        cols["saturated"] += list(a.saturated) if len(a.saturated) == n else [np.nan] * n
    return pd.DataFrame(cols)


__all__ = ["LayerErrorOptions", "run_layer_error", "match_layers", "explain", "KERNELS"]
