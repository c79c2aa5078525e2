"""Convert a Keras model or SavedModel to an FP32 baseline and a full-integer INT8 .tflite.

:func:`quantize_model` runs the whole job: identify the source, import TensorFlow,
load the model and the calibration data (checked against the model's input),
convert each variant from a fixed-batch copy, check the INT8 model's tensors,
and write every model with its sidecar atomically. Library code: it raises
``edgebench.errors`` types and reports progress through a callback, never prints.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from edgebench import __version__
from edgebench.errors import EdgebenchError, ModelError, UsageError
from edgebench.provenance import sidecar_path
from edgebench.quantize import agreement as agr
from edgebench.quantize import calibration as cal_mod
from edgebench.quantize import checks, sidecar
from edgebench.quantize._tf import Quiet, first_error_line, import_tensorflow, keras_version, onednn_setting
from edgebench.quantize.onnx_lower import reference
from edgebench.quantize.onnx_lower.graph import import_onnxruntime, read_onnx
from edgebench.quantize.onnx_lower.verdict import require_convertible
from edgebench.quantize.result import OutputModel, QuantizeOptions, QuantizeResult, QuantizeWarning
from edgebench.quantize.source import check_onnx_inputs, export_target, identify, isolated_keras_names, load
from edgebench.runtime.inspect import inspect_model

Progress = Optional[Callable[[str], None]]
PROGRESS_EVERY_S = 2.0      # calibration progress: at most one message per this many seconds
FAITHFULNESS_SAMPLES = 32   # ONNX: calibration samples the FP32 model is checked on against onnxruntime
_SUFFIX = {"fp32": "_fp32", "int8": "_int8", "fp16": "_fp16", "dynamic-range": "_dynamic"}
_LABEL = {"fp32": "FP32 baseline", "int8": "full-integer INT8", "fp16": "float16",
          "dynamic-range": "dynamic-range"}


def output_paths(model, out=None, fp32_out=None, options: Optional[QuantizeOptions] = None) -> dict:
    """role -> Path of every file the run writes (sidecars are ``<path>.json``)."""
    options = options or QuantizeOptions()
    src = Path(model)
    if out is None:
        stem = src.name if src.is_dir() else src.stem
        out_p = src.parent / f"{stem}_int8.tflite"
    else:
        out_p = Path(out)
    if out_p.is_dir():
        raise UsageError(f"output {out_p} is a directory", "give the INT8 model's file name with -o")
    base = out_p.stem
    for tail in ("_int8", "_uint8"):
        if base.endswith(tail) and len(base) > len(tail):
            base = base[: -len(tail)]
            break
    paths = {"fp32": Path(fp32_out) if fp32_out is not None else out_p.with_name(f"{base}_fp32.tflite")}
    if options.float16:
        paths["fp16"] = out_p.with_name(f"{base}_fp16.tflite")
    if options.dynamic_range:
        paths["dynamic-range"] = out_p.with_name(f"{base}_dynamic.tflite")
    paths["int8"] = out_p
    seen: dict = {}
    src_resolved = src.resolve()
    for role, p in paths.items():
        if p.is_dir():
            raise UsageError(f"output {p} is a directory", "give a file name")
        r = p.resolve()
        if r == src_resolved or src_resolved in r.parents:
            raise UsageError(f"output {p} would overwrite the source model {src}", "choose another output name")
        if r in seen:
            raise UsageError(f"the {role} and {seen[r]} models would both be written to {p}",
                             "give distinct names with -o and --fp32-out")
        seen[r] = role
    return paths


def quantize_model(model, calib, out=None, fp32_out=None, options: Optional[QuantizeOptions] = None,
                   progress: Progress = None) -> QuantizeResult:
    """Write the FP32 baseline and the INT8 model of ``model`` (plus optional variants), with sidecars.

    ``model``: a .keras/.h5 file or a SavedModel directory. ``calib``: a .npz/.npy file,
    an image folder, or ``digits[:split]``. ``out``: the INT8 model's path (default
    ``<model>_int8.tflite`` beside the model); ``fp32_out`` the baseline's (default
    ``<out base>_fp32.tflite``). ``progress(message)`` is called before long steps.
    """
    options = options or QuantizeOptions()
    t_start = time.perf_counter()
    timings: dict = {}
    source = identify(model)                                   # missing/unsupported files: before TF loads
    if source.kind == "onnx":               # and a damaged, dynamic-shape or several-input ONNX file too

        import_onnxruntime()
        require_convertible(check_onnx_inputs(read_onnx(model, options.batch)))   # inspect's verdict
    cal_mod.exists(calib)
    paths = output_paths(model, out, fp32_out, options)
    warns: list = []

    def step(name: str, message: Optional[str] = None):
        if message and progress is not None:
            progress(message)
        return _Timer(timings, name)

    with step("import_tensorflow", "loading TensorFlow"):
        tf = import_tensorflow()
    onednn = onednn_setting()
    if onednn != "0":
        warns.append(QuantizeWarning(
            "onednn-enabled", f"TensorFlow was imported with TF_ENABLE_ONEDNN_OPTS={onednn!r} before quantize "
            "could turn oneDNN off: converted bytes may differ from run to run",
            "set TF_ENABLE_ONEDNN_OPTS=0 before importing TensorFlow"))

    with isolated_keras_names():
        loaded, cal, export_shape, how, roles, converted, recorded = _load_and_convert(
            tf, source, calib, options, paths, step, progress, warns)
    lowering = None
    if loaded.onnx is not None:
        with step("check_onnx", "checking the FP32 model against onnxruntime"):
            lowering = _onnx_lowering(loaded, converted["fp32"], cal, options)

    converter = {"name": "tf.lite.TFLiteConverter", "entry": how, "tensorflow_version": tf.__version__,
                 "keras_version": keras_version(tf), "tf_enable_onednn_opts": onednn}
    source_d = {**source.to_dict(), "loader": loaded.loader}
    with step("check_and_write", "checking the INT8 model against the FP32 model and writing files"):
        outputs, agreement = _check_and_write(roles, paths, converted, recorded, converter, source_d, cal, options,
                                              warns, timings, lowering)
    timings["total"] = round(time.perf_counter() - t_start, 4)
    return QuantizeResult(
        source=source_d,
        input={"name": loaded.input_name,
               "model_shape": None if loaded.input_shape is None else list(loaded.input_shape),
               "export_shape": list(export_shape), "dtype": loaded.input_dtype},
        export=how, calibration=cal.to_dict(), options=options, outputs=tuple(outputs),
        warnings=tuple(warns),
        versions={"tensorflow": tf.__version__, "keras": keras_version(tf), "edgebench": __version__,
                  "numpy": np.__version__, **_onnx_versions(loaded)},
        timings_s=timings, lowering=lowering, agreement=agreement)


def _load_and_convert(tf, source, calib, options: QuantizeOptions, paths: dict, step, progress, warns: list):
    """Load model and calibration data, check them against each other, convert every role to bytes."""
    with step("load_model", f"loading {source.kind} model {source.path}"
              + (" and lowering it to Keras" if source.kind == "onnx" else "")):
        loaded = load(tf, source, options.batch)
    layout = loaded.onnx[1].inputs[0] if loaded.onnx is not None else None
    shape_txt = ("x".join("?" if d is None else str(d) for d in loaded.input_shape[1:])
                 if loaded.input_shape is not None else "(undeclared)")
    expected = f"{loaded.input_dtype} N x {shape_txt} for the model input {loaded.input_name!r}"
    with step("load_calibration", f"reading calibration data {calib}"):
        cal_all = cal_mod.load_calibration(calib, options.calib_preprocess, options.calib_key, expected, layout)
        export_shape = cal_mod.check_against_input(cal_all, loaded.input_name, loaded.input_shape,
                                                   loaded.input_dtype, options.batch)
        cal, notes = cal_mod.select(cal_all, options.calib_count, options.batch)
    warns.extend(QuantizeWarning("calibration-count", n, None, "int8") for n in notes)
    declared_scale = options.calib_preprocess.get("scale") is not None or cal.preprocessing.get("scale") is not None
    warns.extend(checks.calibration_warnings(cal, declared_scale))

    q = Quiet()
    try:
        with step("prepare_export", "fixing the input shape to " + "x".join(map(str, export_shape))), q:
            factory, how = export_target(tf, loaded, export_shape, cal.x[: options.batch])
    except EdgebenchError:
        raise
    except Exception as exc:
        raise ModelError(f"cannot make a fixed-shape copy of {source.path}: {first_error_line(exc, q.text)}",
                         "try --batch with the model's own batch size") from None

    roles = ["fp32"] + [r for r in ("fp16", "dynamic-range") if r in paths] + ["int8"]
    converted: dict = {}
    recorded: dict = {}
    for role in roles:
        what = _LABEL[role]
        if role == "int8":
            what += f" ({options.io} input/output, {cal.count} calibration samples)"
        q = Quiet()
        try:
            with step(f"convert_{role}", f"converting {what}"), q:
                conv = factory()
                recorded[role] = _configure(tf, conv, role, options, cal, export_shape, q, progress)
                converted[role] = bytes(conv.convert())
        except EdgebenchError:
            raise
        except Exception as exc:
            raise ModelError(f"the TensorFlow Lite converter failed on the {role} model of {source.path}: "
                             f"{first_error_line(exc, q.text)}",
                             "models need TFLite builtin operators for full-integer quantization") from None

    return loaded, cal, export_shape, how, roles, converted, recorded


def _check_and_write(roles, paths, converted, recorded, converter, source_d, cal, options, warns, timings,
                     lowering=None):
    """Write every model to a temporary file, inspect it, add the INT8 checks' warnings, build the
    sidecars, then rename everything into place (sidecar.commit). Temporary files never survive, and an
    INT8 model that disagrees with the FP32 one below the hard limit (agreement.verdict) leaves nothing."""
    temps: list = []
    sidecar.remove_stale([p for role in roles for p in (paths[role], sidecar_path(paths[role]))])
    try:
        model_tmp, reports = {}, {}
        for role in roles:
            model_tmp[role] = _guard_write(sidecar.write_temp, paths[role], converted[role])
            temps.append(model_tmp[role])
            reports[role] = _inspect(model_tmp[role])
        warns.extend(_model_warnings(reports["int8"], converted["fp32"], cal, options.batch))
        agreement = agr.measure(model_tmp["fp32"], model_tmp["int8"], cal.x, options.batch)
        low = agr.verdict(agreement, options.min_agreement, options.min_sqnr_db)   # ModelError: nothing kept
        if low is not None:
            warns.append(low)
        fp32_sha = reports["fp32"].model.sha256
        outputs, pairs = [], []
        for role in roles:
            baseline = None if role == "fp32" else {
                "file": os.path.relpath(paths["fp32"], start=paths[role].parent), "sha256": fp32_sha}
            data = sidecar.build(
                role, reports[role], source_d, {**converter, "options": recorded[role]},
                cal.to_dict() if role == "int8" else None, dict(cal.preprocessing), baseline,
                [w for w in warns if w.model in (None, role)],
                {**_sidecar_lowering(lowering), **({"agreement": agreement} if role == "int8" else {})})
            side_p = sidecar_path(paths[role])
            side_tmp = _guard_write(sidecar.write_temp, side_p, sidecar.dumps(data))
            temps.append(side_tmp)
            pairs.append((model_tmp[role], paths[role], side_tmp, side_p))
            outputs.append(_output(role, paths[role], side_p, reports[role], timings.get(f"convert_{role}", 0.0)))
        _guard_write(sidecar.commit, pairs)
        temps = []
        return outputs, agreement
    finally:
        for t in temps:
            Path(t).unlink(missing_ok=True)


class _Timer:
    def __init__(self, timings: dict, name: str):
        self.timings, self.name = timings, name

    def __enter__(self):
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.timings[self.name] = round(time.perf_counter() - self.t0, 4)
        return None


def _configure(tf, conv, role: str, options: QuantizeOptions, cal, export_shape, q: Quiet, progress) -> dict:
    """Set the converter up for ``role`` and return exactly what was set, for the sidecar."""
    rec = {"input_shape": list(export_shape), "batch": options.batch}
    if role == "fp32":
        rec.update(optimizations=[], supported_ops=["TFLITE_BUILTINS"],
                   inference_input_type="float32", inference_output_type="float32")
        return rec
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    if role == "fp16":
        conv.target_spec.supported_types = [tf.float16]
        rec.update(optimizations=["DEFAULT"], supported_types=["float16"],
                   inference_input_type="float32", inference_output_type="float32")
        return rec
    if role == "dynamic-range":
        rec.update(optimizations=["DEFAULT"], supported_ops=["TFLITE_BUILTINS"],
                   inference_input_type="float32", inference_output_type="float32",
                   per_channel_weights=options.per_channel)
        if not options.per_channel:
            conv._experimental_disable_per_channel = True
        return rec
    io = {"int8": tf.int8, "uint8": tf.uint8}[options.io]
    x, b = cal.x, options.batch
    batches = x.shape[0] // b

    def representative_dataset():
        last = time.monotonic()
        for k in range(batches):
            if progress is not None and time.monotonic() - last >= PROGRESS_EVERY_S:
                last = time.monotonic()
                q.say(progress, f"calibrating: {k * b}/{batches * b} samples")
            yield [x[k * b:(k + 1) * b]]

    conv.representative_dataset = representative_dataset
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    conv.inference_input_type = io
    conv.inference_output_type = io
    if not options.per_channel:
        conv._experimental_disable_per_channel = True
    rec.update(optimizations=["DEFAULT"], supported_ops=["TFLITE_BUILTINS_INT8"],
               inference_input_type=options.io, inference_output_type=options.io,
               representative_dataset=f"{cal.source}: {cal.selection}, in order, batches of {b}",
               calibration_batches=batches, per_channel_weights=options.per_channel,
               bias_type="int32")
    return rec


def _onnx_lowering(loaded, fp32_bytes: bytes, cal, options: QuantizeOptions) -> dict:
    """The lowering's record, after checking the FP32 .tflite against onnxruntime on up to
    :data:`FAITHFULNESS_SAMPLES` calibration samples; ModelError above the tolerance."""
    g, lowered = loaded.onnx
    lay = lowered.inputs[0]
    n = (min(cal.count, FAITHFULNESS_SAMPLES) // options.batch) * options.batch
    x = cal.x[:n]
    q = Quiet()
    with q:
        faith = reference.check(g.path, lambda xs: checks.run_fp32(fp32_bytes, xs[0], options.batch), lowered.inputs,
                                lowered.outputs, {lay.name: lay.to_source(x)},
                                "the FP32 .tflite baseline (LiteRT, builtin kernels)",
                                options.batch if isinstance(g.inputs[0].declared[0], int) else None,
                                rtol=options.onnx_rtol)
    if not faith.ok:
        worst = max(faith.outputs, key=lambda o: o["max_abs_error"])
        raise ModelError(
            f"the FP32 model lowered from {g.path} differs from onnxruntime by up to {faith.max_abs_error:.3g} "
            f"at output {worst['name']!r} (tolerance {faith.tolerance:.3g}: rtol {faith.rtol:g} of the largest "
            f"output {worst['max_abs_reference']:.3g}; {faith.samples} calibration samples)",
            "a lowering mistake: report it with the model; --onnx-rtol loosens the check")
    return {"from": "onnx", "opset": g.opset, "producer": g.producer, "graph_inputs": [i.to_dict() for i in g.inputs],
            **lowered.to_dict(), "faithfulness": faith.to_dict()}


def _sidecar_lowering(lowering) -> dict:
    """The sidecar keys of a model lowered from ONNX: ``layout`` (read by accuracy and verify to
    transpose data given in the ONNX layout) and ``lowering``."""
    if lowering is None:
        return {}
    layout = {"inputs": lowering["inputs"], "outputs": lowering["outputs"]}
    rest = {k: v for k, v in lowering.items() if k not in ("inputs", "outputs")}
    return {"layout": layout, "lowering": rest}


def _onnx_versions(loaded) -> dict:
    if loaded.onnx is None:
        return {}
    # lazy: onnx, onnxruntime, numpy (optional; import onnx 735 ms, onnxruntime 458 ms, numpy 460 ms), loaded only where used
    import onnx
    import onnxruntime

    return {"onnx": onnx.__version__, "onnxruntime": onnxruntime.__version__}


def _inspect(path):
    return inspect_model(path)


def _model_warnings(int8_report, fp32_bytes: bytes, cal, batch: int) -> list:
    out = []
    w = checks.degenerate_scale_warning(int8_report.tensors, "int8")
    if w is not None:
        out.append(w)
    q = Quiet()
    try:
        with q:
            y = checks.run_fp32(fp32_bytes, cal.x, batch)
    except Exception as exc:
        out.append(QuantizeWarning("check-skipped", "could not run the FP32 baseline on the calibration data "
                                   f"to check the INT8 output range ({first_error_line(exc, q.text)})",
                                   None, "int8"))
        return out
    w = checks.collapsed_output_warning(y, int8_report.outputs, "int8")
    if w is not None:
        out.append(w)
    return out


def _guard_write(fn, *args):
    try:
        return fn(*args)
    except OSError as exc:
        where = getattr(exc, "filename", None) or (args[0] if args else "?")
        raise UsageError(f"cannot write {where}: {exc.strerror or exc}",
                         "check the output folder and its permissions") from None


def _output(role: str, path: Path, side: Path, rep, convert_s: float) -> OutputModel:
    m = rep.model
    inp, out = rep.inputs[0], rep.outputs[0]
    return OutputModel(
        role=role, path=str(path), sidecar_path=str(side), sha256=m.sha256, bytes=m.bytes,
        precision=m.precision, weights_bits=m.weights_bits, activations_bits=m.activations_bits,
        input_dtype=inp.dtype, output_dtype=out.dtype, input_shape=list(inp.shape), output_shape=list(out.shape),
        input_quantization=sidecar.io_quantization(inp) if inp.scale else None,
        output_quantization=sidecar.io_quantization(out) if out.scale else None,
        convert_s=convert_s)
