"""Accuracy of a model on a board against its FP32 baseline (level 4).

Flow of :func:`run_accuracy`: read both models on the host and check that they
are the same network (input and output shapes; dtypes may differ, int8 against
float32 is the point), load the test set and check it against the model, plan
the slices (clean set, edge cases), then run the model under test on the board
through the agent (``infer``, in chunks; a microcontroller board answers the same
calls through its firmware, see edgebench.mcu.board) and the baseline on the host board (a
local agent, reference kernels by default) or, when asked, on the board. Every
check on the inputs happens before a board is contacted and before a run folder
exists, so bad input leaves nothing behind. With two agents (the default: the
baseline on the host) both models run each chunk in turn, so a stopped run keeps
a paired prefix. The run folder is the run skeleton's (:mod:`edgebench.bench.record`):
it appears once the boards answered, and Ctrl-C, SIGTERM/SIGHUP or an error keeps
the figures of what both models evaluated, marked incomplete with the reason. The
figures (:mod:`edgebench.bench.accuracy_eval`) go to ``RunResult.extra["accuracy"]``,
the per-sample predictions to ``predictions.parquet`` and the reliability diagrams
to PNGs; run.json is written last.

:func:`gate_failures` lists the compression-validation rows that failed (the CLI
turns them into exit code 2); the claim sentence is
:func:`edgebench.report.claim.accuracy_claim`.
"""
from __future__ import annotations

import hashlib
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from edgebench import board_protocol as bp
from edgebench.bench.accuracy_options import KERNELS, AccuracyOptions
from edgebench.bench.accuracy_passes import JOURNAL, Passes, timings
from edgebench.bench.accuracy_record import DIAGRAMS, MIN_PAIRED, PREDICTIONS, Run, describe, store_run
from edgebench.bench.accuracy_slices import SliceInputs, builtin_slices, clean_slice, edge_set_slices
from edgebench.bench.record import RunFolder
from edgebench.boards.connect import open_client, require_runtime
from edgebench.boards.registry import get_profile
from edgebench.data.datasets import check_against_model, load_dataset
from edgebench.data.labels import model_labels, read_labels
from edgebench.data.layout import input_layout
from edgebench.errors import EdgebenchError, ModelError, ResultError, UsageError
from edgebench.modelfile import read_model
from edgebench.provenance import named_baseline, read_sidecar, sidecar_path
from edgebench.report.claim import accuracy_claim  # noqa: F401  (moved there; kept importable from here)
from edgebench.results import kinds as rk
from edgebench.results import store
from edgebench.results.model import RunResult
from edgebench.stats.accuracy import GATE_ON

CHUNK_BYTES = 4 * 1024 * 1024
MAX_CHUNK = 2048
MCU_CHUNK = 32

Progress = Callable[[dict], None]


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


INVOCATION = "invocation"   # settings.invocation: how an accuracy run was invoked (what --recover reads)
AUTO = "auto"   # --baseline auto: the FP32 file the model's sidecar names


def resolve_baseline(model_path, baseline_path) -> Path:
    """``baseline_path``, or for ``auto`` the FP32 file ``model_path``'s provenance sidecar names (its path
    relative to the model, its sha256 checked); ModelError (one line) when the sidecar cannot say."""
    if str(baseline_path) != AUTO:
        return Path(baseline_path)
    sc = read_sidecar(model_path)
    side = sidecar_path(model_path)
    if sc is None or "error" in sc:
        raise ModelError(f"--baseline auto reads the baseline from {side.name}, but "
                         + (f"there is no such file beside {Path(model_path).name}" if sc is None else sc["error"]),
                         "give the FP32 model: --baseline FP32.tflite")
    named = named_baseline(model_path, sc)
    if not named or named.get("path") is None:
        raise ModelError(f"--baseline auto: {side.name} names no baseline file (a model edgebench quantize did "
                         "not write?)", "give the FP32 model: --baseline FP32.tflite")
    path = named["path"]
    if not path.is_file():
        raise ModelError(f"--baseline auto: {side.name} names {path}, which does not exist",
                         "give the FP32 model: --baseline FP32.tflite")
    have = hashlib.sha256(path.read_bytes()).hexdigest()
    if named.get("sha256") and have != named["sha256"]:
        raise ModelError(f"--baseline auto: {path} is not the file {side.name} names (sha256 "
                         f"{named['sha256'][:12]}…, the file has {have[:12]}…)",
                         "give the FP32 model it came from: --baseline FP32.tflite")
    return path


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


def _load_data(data, opts: AccuracyOptions, layout=None, model_path=None):
    """The data set, preprocessed as declared; for a model converted from ONNX (``layout``, from its
    sidecar) arrays are given in the ONNX model's layout and transposed with the model. Class names:
    ``opts.labels``, else (an image folder) the ones the model carries (:mod:`edgebench.data.labels`)."""
    text = str(data)
    options = {k: v for k, v in opts.data_options.items() if v is not None}
    digits = text == "digits" or text.startswith("digits:")
    if digits and options:
        raise UsageError(f"the built-in digits set has fixed preprocessing; drop {', '.join(sorted(options))}")
    if Path(text).suffix.lower() == ".npz":
        bad = sorted(set(options) - {"scale", "mean", "std"})
        if bad:
            raise UsageError(f"{', '.join(bad)} apply to image folders, not to .npz files")
    folder = Path(text).is_dir() and not digits
    if opts.labels is not None:
        if digits:
            raise UsageError("--labels names the classes of an image folder or an .npz; the digits set has its own",
                             "drop --labels")
        names = read_labels(opts.labels)
        extra = {"names_from": f"labels file {opts.labels}"} if folder else {}
        return load_dataset(text, layout=layout, class_names=names, **extra, **options)
    carried = model_labels(model_path, read_sidecar(model_path)) if folder and model_path else None
    if carried is not None:
        names, where = carried
        folders = sorted(d.name for d in Path(text).iterdir() if d.is_dir() and not d.name.startswith("."))
        if set(names) == set(folders):
            return load_dataset(text, layout=layout, class_names=names, names_from=where, **options)
        dataset = load_dataset(text, layout=layout, **options)
        order = {**dataset.class_order, "ignored": f"{where} names {len(names)} classes "
                 f"({_few(names)}), not the folders ({_few(folders)})"}
        return replace(dataset, class_order=order)
    return load_dataset(text, layout=layout, **options)


def _few(names, k: int = 4) -> str:
    return ", ".join(list(names)[:k]) + (f", … ({len(names)})" if len(names) > k else "")


# ---------------------------------------------------------------- running the models

def _chunk(opts: AccuracyOptions, sample_bytes: int, serial_link: bool = False) -> int:
    """Samples per infer request: --chunk, else up to CHUNK_BYTES (MCU_CHUNK over a serial link)."""
    if opts.chunk_size:
        return int(opts.chunk_size)
    if serial_link:
        return MCU_CHUNK  # one sample at a time over the wire: small requests keep progress visible
    return int(max(1, min(MAX_CHUNK, CHUNK_BYTES // max(sample_bytes, 1))))


def run_accuracy(model_path, baseline_path, data, profile, opts: AccuracyOptions, runs_root="runs",
                 url: Optional[str] = None, progress: Optional[Progress] = None, client=None,
                 baseline_client=None) -> tuple[RunResult, Path]:
    """Accuracy of ``model_path`` on ``profile``'s board against ``baseline_path``; result and run folder.

    The run skeleton (:mod:`edgebench.bench.record`) holds the folder: it appears with a
    ``running`` run.json once both boards answered; Ctrl-C, SIGTERM/SIGHUP or an error while
    the models run keeps the figures of the samples both models evaluated and marks the run
    incomplete with the reason; when nothing was evaluated the folder is removed.
    """
    opts.validate()
    model, baseline = read_model(model_path), read_model(resolve_baseline(model_path, baseline_path))
    check_signatures(model, baseline)
    classes = num_classes_of(model)
    dataset = _load_data(data, opts, input_layout(read_sidecar(model.path)), model.path)
    check_against_model(dataset, model.inputs[0].shape, classes)
    slices, edge = _plan_slices(dataset, model, classes, opts)
    emit = progress or (lambda event: None)

    base_profile = profile if opts.baseline_on_board else get_profile("host")
    # the baseline gets an agent of its own (on the host a second local process) so both models
    # run each chunk in turn and any stop leaves a paired prefix; only --baseline-on-board shares one
    same_agent = opts.baseline_on_board
    folder = RunFolder(runs_root, model.name, profile.name)
    opened, passes = [], None
    try:
        if client is None:
            emit({"event": "connect", "board": profile.name})
            client = open_client(profile, url, cpus=opts.cpus)
            opened.append(client)
        if baseline_client is None:
            if same_agent:
                baseline_client = client
            else:
                emit({"event": "connect", "board": base_profile.name})
                baseline_client = open_client(base_profile)
                opened.append(baseline_client)
        hello = require_runtime(client, profile.name)
        base_hello = hello if baseline_client is client else require_runtime(baseline_client, base_profile.name)
        bp.require(client, bp.OUTPUTS, f"accuracy on board {profile.name}")
        bp.require(baseline_client, bp.OUTPUTS, f"the baseline on board {base_profile.name}")
        run = Run(model=model, baseline=baseline, dataset=dataset, slices=slices, edge=edge, opts=opts,
                  profile=profile, base_profile=base_profile, hello=hello, base_hello=base_hello,
                  system=client.sysinfo(), client_desc=client.description,
                  thermal=[client.thermal(), {}])
        result = describe(run)
        chunk = _chunk(opts, int(np.prod(dataset.x.shape[1:])) * 4, bp.LINK_REPORT in client.capabilities)
        loaded_by_role: dict = {}
        invocation = {
            "model": _absolute(model.path), "baseline": _absolute(baseline.path), "data": _absolute(data),
            "chunk": chunk, "base_board": base_profile.name,
            "options": {**_options_dict(opts), "edge_set": opts.edge_set and _absolute(opts.edge_set)},
            "base_agent": {k: base_hello.get(k) for k in ("protocol", "agent_version", "python", "numpy")},
            "loaded": loaded_by_role}
        # how the run was invoked (what --recover needs): a key of the accuracy run's own in settings
        result.settings = result.settings.model_copy(update={INVOCATION: invocation})
        passes = Passes(SliceInputs(slices), chunk, emit)
        started = time.perf_counter()

        def finish(status: str, reason: Optional[str]) -> None:
            run.timings = timings(passes, time.perf_counter() - started)
            emit({"event": "analyse"})
            store_run(run, result, folder, *passes.paired(), status=status, reason=reason)
            if passes.journal is not None:
                passes.journal.remove()  # the figures and predictions are written: the journal has served

        def stopped(status: str, reason: str) -> None:
            try:
                finish(status, reason)
            except Exception as exc:  # never leave the run marked running
                result.status = status  # type: ignore[assignment]  # one of STATUSES
                result.status_reason = f"{reason}; its figures could not be computed ({type(exc).__name__}: {exc})"
                folder.save(result)

        def measured() -> bool:
            done = passes.paired()[0]
            return bool(done) and done[0].n >= MIN_PAIRED

        def load(role: str, agent, m, kernels: str, threads: int, delegate: Optional[str]):
            def go() -> None:
                sha = agent.ensure_model(m)
                emit({"event": "load", "role": role, "model": m.name, "kernels": kernels})
                loaded = agent.load(sha, kernels=kernels, threads=threads, delegate=delegate, name=m.name)
                setattr(run, "cand_loaded" if role == "candidate" else "base_loaded", loaded)
                loaded_by_role[role] = loaded     # settings.invocation.loaded (model_copy keeps the same dict)
                folder.save(result)  # what --recover needs to describe the runtimes
            return go

        path = folder.start(result)
        with folder.guard(stopped, measured):
            passes.journal = store.open_journal(path, JOURNAL)
            passes.run({
                "candidate": (client, model.name,
                              load("candidate", client, model, opts.kernels, opts.threads, opts.delegate)),
                "baseline": (baseline_client, baseline.name,
                             load("baseline", baseline_client, baseline, opts.baseline_kernels,
                                  opts.baseline_threads, None))})
            run.thermal[1] = client.thermal()
            run.agent_status = client.status()
            finish("complete", None)
    finally:
        if passes is not None and passes.journal is not None:
            passes.journal.close()
        for c in opened:
            c.close()
    return result, path


def _absolute(ref) -> str:
    """A path as an absolute path (so --recover works from any directory); 'digits' and the like as given."""
    p = Path(str(ref))
    return str(p.resolve()) if p.exists() else str(ref)


def _options_dict(opts: AccuracyOptions) -> dict:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(opts).items()}


def _options_from(d: dict) -> AccuracyOptions:
    known = {f: d[f] for f in AccuracyOptions.__dataclass_fields__ if f in d}
    for name in ("families", "severities", "value_range"):
        if known.get(name) is not None:
            known[name] = tuple(known[name])
    known["data_options"] = {k: tuple(v) if isinstance(v, list) else v
                             for k, v in (known.get("data_options") or {}).items()}
    return AccuracyOptions(**known)


class _Named:
    """A board profile as a stopped run recorded it (recovery needs only its name and kind)."""

    def __init__(self, name: str, kind=None):
        self.name, self.kind, self.title = name, kind, name


def recover_accuracy(run_dir) -> RunResult:
    """Finish an accuracy run folder left ``running`` by a crash or a kill: the outputs it had
    journalled give the figures of the samples both models evaluated; the run is marked incomplete."""
    d = Path(run_dir)
    r = store.read_unfinished(d)
    if r.kind != rk.ACCURACY.name or r.status != "running":
        raise ResultError(f"{d} is not an unfinished accuracy run (kind {r.kind}, status {r.status})",
                          "nothing to recover")
    inv = r.settings.other(INVOCATION)
    if not inv:
        raise ResultError(f"{d} was written by an edgebench that did not record how it was invoked",
                          "it cannot be recovered; run the accuracy command again")
    opts = _options_from(inv["options"])
    try:
        model, baseline = read_model(inv["model"]), read_model(inv["baseline"])
    except EdgebenchError as exc:
        raise ResultError(f"cannot recover {d}: {exc.one_line()}", "the models of the run must still be there") \
            from None
    dataset = _load_data(inv["data"], opts, model_path=model.path)
    slices, edge = _plan_slices(dataset, model, num_classes_of(model), opts)
    passes = Passes(SliceInputs(slices), int(inv["chunk"]), lambda event: None)
    frame = store.read_journal(d, JOURNAL)
    if len(frame):
        passes.restore(frame)
    folder = RunFolder(d.parent, model.name, r.board.name or "")
    folder.path = d
    done = passes.paired()[0]
    reason = "the accuracy process stopped without finishing (crash or kill)"
    if not done or done[0].n < MIN_PAIRED:
        r.status, r.status_reason = "incomplete", f"{reason}; no sample was evaluated by both models"
        folder.save(r)
        store.remove_journal(d, JOURNAL)
        return r
    agent = dict(r.agent or {})
    loaded = inv.get("loaded") or {}
    run = Run(model=model, baseline=baseline, dataset=dataset, slices=slices, edge=edge, opts=opts,
              profile=_Named(r.board.name or "?", r.board.kind), base_profile=_Named(inv["base_board"]),
              hello=agent, base_hello=inv.get("base_agent") or {}, system={}, client_desc=None,
              thermal=[r.thermal.start.to_dict(), {}], cand_loaded=loaded.get("candidate") or {},
              base_loaded=loaded.get("baseline") or {}, timings=timings(passes, None))
    store_run(run, r, folder, *passes.paired(), status="incomplete",
              reason=f"{reason}; recovered the outputs it had journalled")
    store.remove_journal(d, JOURNAL)
    return r


# ---------------------------------------------------------------- gate

def gate_failures(result: RunResult) -> list:
    """One line per failed compression-validation row of an accuracy run whose threshold the user set
    (empty: passed). A default threshold the user never set is a warning, not a gate (docs/check.md)."""
    out = []
    for r in result.extra.accuracy.validation.rows or []:
        if r.acceptable is not False or (r.set_by or "user") != "user":
            continue
        points = r.unit == "fraction"
        fig = (lambda v: f"{v:+.2f} points") if points else (lambda v: f"{v:.4f}")
        limit = f"{r.threshold:g}" + (" points" if points else "")
        what = "drop" if points else "ECE"
        if r.gate_on == "point":
            out.append(f"{r.metric}: {what} {fig(r.point)} (point estimate) exceeds the limit of {limit}")
        elif r.outcome == "unresolved":
            out.append(f"{r.metric}: {what} {fig(r.point)}, but its 95% interval reaches {fig(r.ci_high)}, "
                       f"beyond the limit of {limit}: this test set cannot show the gate holds")
        else:
            out.append(f"{r.metric}: {what} {fig(r.point)}, its whole 95% interval "
                       f"({fig(r.ci_low)} to {fig(r.ci_high)}) beyond the limit of {limit}")
    return out


__all__ = ["AccuracyOptions", "run_accuracy", "recover_accuracy", "gate_failures", "check_signatures",
           "num_classes_of", "KERNELS", "PREDICTIONS", "DIAGRAMS", "GATE_ON"]
