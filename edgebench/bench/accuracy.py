"""Accuracy of a model on a board against its FP32 baseline (level 4).

Flow of :func:`run_accuracy`: read both models on the host and check that they
are the same network (input and output shapes; dtypes may differ, int8 against
float32 is the point), load the test set and check it against the model, plan
the slices (clean set, edge cases), then run the model under test on the board
through the agent (``infer``, in chunks; a microcontroller board answers the same
calls through its firmware, see edgebench.boards.mcu) and the baseline on the host board (a
local agent, reference kernels by default) or, when asked, on the board. Every
check on the inputs happens before a board is contacted and before a run folder
exists, so bad input leaves nothing behind. The figures
(:mod:`edgebench.bench.accuracy_eval`) go to ``RunResult.extra["accuracy"]``,
the per-sample predictions to ``predictions.parquet`` and the reliability
diagrams to PNGs, all in one run folder written when the run is complete.

:func:`accuracy_claim` writes the run's claim sentence; :func:`gate_failures`
lists the compression-validation rows that failed (the CLI turns them into
exit code 2).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from edgebench.bench.accuracy_record import DIAGRAMS, PREDICTIONS
from edgebench.errors import ModelError, UsageError
from edgebench.results.model import RunResult

KERNELS = ("xnnpack", "builtin", "reference")
CHUNK_BYTES = 4 * 1024 * 1024
MAX_CHUNK = 2048
MCU_CHUNK = 32

Progress = Callable[[dict], None]


@dataclass
class AccuracyOptions:
    kernels: str = "xnnpack"                  # model under test, on the board
    threads: int = 1
    delegate: Optional[str] = None
    baseline_on_board: bool = False
    baseline_kernels: str = "reference"
    baseline_threads: int = 1
    edge_cases: bool = False                  # built-in perturbation families
    edge_set: Optional[str] = None            # or a labelled .npz of edge cases
    families: Optional[tuple] = None          # subset of the built-in families
    severities: tuple = (1, 2, 3, 4, 5)
    seed: int = 0
    value_range: Optional[tuple] = None       # perturbations clip to it; default: observed
    max_drop_points: Optional[float] = 1.0
    max_ece: Optional[float] = 0.05
    max_edge_drop_points: Optional[float] = 3.0
    calib_fraction: float = 0.5
    chunk_size: Optional[int] = None          # samples per infer request; default from CHUNK_BYTES
    data_options: dict = field(default_factory=dict)

    def validate(self) -> None:
        from edgebench.data.perturb import SEVERITIES

        for name, k in (("--kernels", self.kernels), ("--baseline-kernels", self.baseline_kernels)):
            if k not in KERNELS:
                raise UsageError(f"unknown kernel set {k!r} for {name}", f"use one of {', '.join(KERNELS)}")
        if self.threads < 1 or self.baseline_threads < 1:
            raise UsageError("threads must be at least 1")
        if self.edge_cases and self.edge_set:
            raise UsageError("--edge-cases and --edge-set exclude each other", "choose one")
        if not self.severities or any(s not in SEVERITIES for s in self.severities):
            raise UsageError(f"severities must be among {', '.join(map(str, SEVERITIES))}, "
                             f"got {', '.join(map(str, self.severities)) or 'none'}")
        if len(set(self.severities)) != len(self.severities):
            raise UsageError("severities repeat")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise UsageError(f"seed must be an integer >= 0, got {self.seed!r}")
        if not 0.0 < self.calib_fraction < 1.0:
            raise UsageError(f"--calib-fraction must be in (0, 1), got {self.calib_fraction!r}")
        for name, v in (("--max-drop", self.max_drop_points), ("--max-ece", self.max_ece),
                        ("--max-edge-drop", self.max_edge_drop_points)):
            if v is not None and v != v:
                raise UsageError(f"{name} must be a number (inf to disable), got NaN")
        if self.chunk_size is not None and self.chunk_size < 1:
            raise UsageError(f"chunk size must be at least 1, got {self.chunk_size}")


# ---------------------------------------------------------------- checks before any board is contacted

def _dims(shape) -> str:
    return "x".join(str(int(d)) for d in shape)


def check_signatures(model, baseline) -> None:
    """ModelError unless ``baseline`` has ``model``'s input and output shapes (dtypes may differ)."""
    def sig(m, which):
        return [list(t.shape) for t in getattr(m, which)]

    for which in ("inputs", "outputs"):
        a, b = sig(model, which), sig(baseline, which)
        if a != b:
            fmt = lambda s: ", ".join(_dims(x) for x in s) or "none"  # noqa: E731
            raise ModelError(
                f"baseline {baseline.name} does not match {model.name}: {which} {fmt(b)} vs {fmt(a)}",
                "the baseline must be the same network before quantization (dtypes may differ, shapes may not)")


def num_classes_of(model) -> int:
    if not model.outputs:
        raise ModelError(f"{model.name} has no outputs")
    shape = list(model.outputs[0].shape)
    classes = int(np.prod(shape[1:])) if len(shape) >= 2 else 0
    if classes < 2 or sum(1 for d in shape[1:] if d > 1) > 1:
        raise ModelError(f"{model.name}: output 0 has shape {_dims(shape)}, not a classifier's (1, classes)",
                         "accuracy needs class scores (N, C) with C >= 2")
    return classes


def _plan_slices(dataset, model, num_classes: int, opts: AccuracyOptions) -> tuple[list, Optional[dict]]:
    from edgebench.bench.accuracy_slices import builtin_slices, clean_slice, edge_set_slices

    slices = [clean_slice(dataset)]
    edge = None
    shape = list(model.inputs[0].shape)
    if opts.edge_cases:
        more, edge = builtin_slices(dataset, shape, opts.families, opts.severities, opts.seed, opts.value_range)
        slices += more
    elif opts.edge_set:
        more, edge = edge_set_slices(opts.edge_set, shape, num_classes, opts.data_options)
        slices += more
    return slices, edge


def _load_data(data, opts: AccuracyOptions):
    from edgebench.data.datasets import load_dataset

    text = str(data)
    options = {k: v for k, v in opts.data_options.items() if v is not None}
    if (text == "digits" or text.startswith("digits:")) and options:
        raise UsageError(f"the built-in digits set has fixed preprocessing; drop {', '.join(sorted(options))}")
    if Path(text).suffix.lower() == ".npz":
        bad = sorted(set(options) - {"scale", "mean", "std"})
        if bad:
            raise UsageError(f"{', '.join(bad)} apply to image folders, not to .npz files")
    return load_dataset(text, **options)


# ---------------------------------------------------------------- running the models

def _chunk(opts: AccuracyOptions, sample_bytes: int, board_kind: str = "") -> int:
    """Samples per infer request: --chunk, else up to CHUNK_BYTES (MCU_CHUNK over a serial link)."""
    if opts.chunk_size:
        return int(opts.chunk_size)
    if board_kind == "mcu":
        return MCU_CHUNK  # one sample at a time over the wire: small requests keep progress visible
    return int(max(1, min(MAX_CHUNK, CHUNK_BYTES // max(sample_bytes, 1))))


def _run_model(client, model, role, kernels, threads, delegate, inputs, chunk, emit) -> tuple[dict, list, dict]:
    """Outputs (N, C) float of ``model`` for every slice; the agent's load reply; timing."""
    sha = client.ensure_model(Path(model.path).read_bytes(), name=model.name)
    emit({"event": "load", "role": role, "model": model.name, "kernels": kernels})
    loaded = client.load(sha, kernels=kernels, threads=threads, delegate=delegate, name=model.name)
    total = sum(s.n for s in inputs.slices)
    done, infer_s, outs = 0, 0.0, []
    for i, s in enumerate(inputs.slices):
        x = inputs.get(i)
        parts = []
        for j in range(0, len(x), chunk):
            t0 = time.perf_counter()
            _, y = client.infer(x[j:j + chunk])
            infer_s += time.perf_counter() - t0
            parts.append(np.asarray(y, dtype=np.float64).reshape(len(y), -1))
            done += len(parts[-1])
            emit({"event": "infer", "role": role, "model": model.name, "slice": s.name, "done": done,
                  "total": total, "samples_per_s": done / infer_s if infer_s > 0 else None})
        outs.append(np.concatenate(parts))
    timing = {"samples": total, "infer_s": infer_s, "samples_per_s": total / infer_s if infer_s > 0 else None,
              "chunk": chunk, "requests": sum(-(-s.n // chunk) for s in inputs.slices)}
    return loaded, outs, timing


def run_accuracy(model_path, baseline_path, data, profile, opts: AccuracyOptions, runs_root="runs",
                 url: Optional[str] = None, progress: Optional[Progress] = None, client=None,
                 baseline_client=None) -> tuple[RunResult, Path]:
    """Accuracy of ``model_path`` on ``profile``'s board against ``baseline_path``; result and run folder."""
    from edgebench.bench.accuracy_record import Run, store_run
    from edgebench.bench.accuracy_slices import SliceInputs
    from edgebench.boards.connect import open_agent, require_runtime
    from edgebench.boards.registry import get_profile
    from edgebench.data.datasets import check_against_model
    from edgebench.runtime.tflite_file import read_model

    opts.validate()
    model, baseline = read_model(model_path), read_model(baseline_path)
    check_signatures(model, baseline)
    classes = num_classes_of(model)
    dataset = _load_data(data, opts)
    check_against_model(dataset, model.inputs[0].shape, classes)
    slices, edge = _plan_slices(dataset, model, classes, opts)
    emit = progress or (lambda event: None)

    base_profile = profile if opts.baseline_on_board else get_profile("host")
    same_agent = opts.baseline_on_board or (profile.name == "host" and url is None)
    opened = []
    try:
        if client is None:
            emit({"event": "connect", "board": profile.name})
            client = open_agent(profile, url)
            opened.append(client)
        if baseline_client is None:
            if same_agent:
                baseline_client = client
            else:
                emit({"event": "connect", "board": base_profile.name})
                baseline_client = open_agent(base_profile)
                opened.append(baseline_client)
        hello = require_runtime(client, profile.name)
        base_hello = hello if baseline_client is client else require_runtime(baseline_client, base_profile.name)
        system = client.sysinfo()
        thermal_start = client.thermal()
        inputs = SliceInputs(slices)
        chunk = _chunk(opts, int(np.prod(dataset.x.shape[1:])) * 4, getattr(profile, "kind", ""))
        started = time.perf_counter()
        cand_loaded, cand_out, cand_t = _run_model(client, model, "candidate", opts.kernels, opts.threads,
                                                   opts.delegate, inputs, chunk, emit)
        base_loaded, base_out, base_t = _run_model(
            baseline_client, baseline, "baseline", opts.baseline_kernels, opts.baseline_threads,
            None, inputs, chunk, emit)
        thermal_end = client.thermal()
        wall_s = time.perf_counter() - started
        status = client.status()
    finally:
        for c in opened:
            c.close()

    emit({"event": "analyse"})
    run = Run(model=model, baseline=baseline, dataset=dataset, slices=slices, edge=edge, opts=opts,
              profile=profile, base_profile=base_profile, hello=hello, base_hello=base_hello, system=system,
              client_desc=getattr(client, "description", None), cand_loaded=cand_loaded,
              base_loaded=base_loaded, timings={"candidate": cand_t, "baseline": base_t, "wall_s": wall_s},
              thermal=(thermal_start, thermal_end), agent_status=status)
    return store_run(run, cand_out, base_out, runs_root)


# ---------------------------------------------------------------- claim and gate

_KERNELS = {"xnnpack": "XNNPACK", "builtin": "builtin kernels", "reference": "reference kernels"}
_PRECISION = {"int8": "INT8", "uint8": "UINT8", "fp32": "FP32", "fp16": "FP16",
              "dynamic-range": "dynamic-range", "mixed": "mixed precision"}


def _how(rt: dict, with_threads: bool = True) -> str:
    how = f"{rt['delegate']} delegate" if rt.get("delegate") else _KERNELS.get(rt.get("kernels"), str(rt.get("kernels")))
    if with_threads:
        t = rt.get("threads")
        how += f", {t} thread{'s' if t != 1 else ''}"
    return how


def _p(p: float) -> str:
    return "<0.001" if p < 0.001 else f"={p:.2f}" if p >= 0.01 else f"={p:.3f}"


def _pct(x: float, d: int = 1) -> str:
    return f"{100 * x:.{d}f}"


def _data_name(source: str) -> str:
    """'builtin:digits/test (...)' -> 'digits/test'; 'npz:/a/b/test.npz [x, y]' -> 'test.npz'."""
    kind, _, rest = source.partition(":")
    rest = rest.split(" [")[0].split(" (")[0]
    return rest if kind == "builtin" else Path(rest).name


def accuracy_claim(result: RunResult) -> str:
    """One sentence stating the accuracy figures of a stored accuracy run with their conditions."""
    a = result.extra["accuracy"]
    c1 = a["accuracy"]["candidate"]["top1"]
    b1 = a["accuracy"]["baseline"]["top1"]
    pr, res, cal = a["paired"], a["resolution"], a["calibration"]
    cand, base = a["candidate"], a["baseline"]
    cprec = _PRECISION.get(cand["model"]["precision"], cand["model"]["precision"])
    bprec = _PRECISION.get(base["model"]["precision"], base["model"]["precision"])
    data = _data_name((result.scenario.get("inputs") or {}).get("source", ""))
    text = (f"{_pct(c1['accuracy'], 2)}% top-1 (95% CI {_pct(c1['ci_low'])}–{_pct(c1['ci_high'])}%, "
            f"n={c1['n']:,}{', ' + data if data else ''}) for {cand['model']['name']} {cprec} "
            f"({_how(cand['runtime'])}) on {cand['board']} vs {bprec} {_pct(b1['accuracy'], 2)}% "
            f"({_how(base['runtime'], False)}, {base['board']}), McNemar p{_p(pr['mcnemar_p'])}, "
            f"agreement {_pct(pr['agreement_rate'])}%")
    if not res["resolvable"]:
        limit = "at any size" if res["mdd_points"] is None else f"below {res['mdd_points']:.1f} points"
        text += f"; difference not resolvable {limit} with this test set"
    else:
        text += (f"; difference {pr['diff_points']:+.2f} points (95% CI {pr['diff_ci_low_points']:+.2f} to "
                 f"{pr['diff_ci_high_points']:+.2f}), resolvable (MDD {res['mdd_points']:.1f} points)")
    text += f"; ECE {cal['candidate']['ece']:.3f} ({bprec} {cal['baseline']['ece']:.3f})"
    edge = a.get("edge_cases")
    if edge and edge.get("slices"):
        w = next(r for r in edge["slices"] if r["slice"] == edge["worst"])
        name = f"{w['family']} s{w['severity']}" if w["family"] else w["slice"]
        m = len(edge["slices"])
        holm = f", p{_p(w['mcnemar_p_holm'])} Holm-adjusted over {m} slices" if m > 1 else ""
        text += (f"; worst edge-case slice: {name}, drop {w['drop_points']:.1f} points (95% CI "
                 f"{w['drop_ci_low_points']:.1f} to {w['drop_ci_high_points']:.1f}, McNemar p{_p(w['mcnemar_p'])}"
                 f"{holm})")
    else:
        text += "; no edge cases evaluated"
    text += f"; {result.label}."
    v = a.get("validation") or {}
    if v.get("failed"):
        text += f" Compression check FAILED: {', '.join(v['failed'])}."
    if result.status != "complete":
        text += f" INCOMPLETE run ({result.status_reason or result.status})."
    return text


def gate_failures(result: RunResult) -> list:
    """One line per failed compression-validation row of an accuracy run (empty: passed)."""
    rows = ((result.extra or {}).get("accuracy") or {}).get("validation", {}).get("rows", [])
    out = []
    for r in rows:
        if r["acceptable"] is False:
            if "drop" in r["rule"]:
                out.append(f"{r['metric']} drops {r['value']:.2f} points, more than the limit of "
                           f"{r['threshold']:g}")
            else:
                out.append(f"{r['metric']} is {r['value']:.4g}, above the limit of {r['threshold']:g}")
    return out


__all__ = ["AccuracyOptions", "run_accuracy", "accuracy_claim", "gate_failures", "check_signatures",
           "num_classes_of", "KERNELS", "PREDICTIONS", "DIAGRAMS"]
