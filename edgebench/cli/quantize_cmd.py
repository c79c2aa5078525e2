"""`edgebench quantize`: FP32 baseline + full-integer INT8 .tflite from a Keras, ONNX or SavedModel model."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from edgebench import ranges as R
from edgebench.cli import options as opt


def quantize_command(
    model: Path = typer.Argument(..., help="A Keras model (.keras, .h5), an ONNX model (.onnx) or a SavedModel directory."),
    calib: str = typer.Option(..., "--calib", help="Calibration data: .npz/.npy file, image folder, or digits[:split]."),
    out: Optional[Path] = typer.Option(None, "-o", "--out",
                                       help="INT8 model path (default: <model>_int8.tflite beside the model)."),
    fp32_out: Optional[Path] = typer.Option(None, "--fp32-out",
                                            help="FP32 baseline path (default: <out base>_fp32.tflite)."),
    io: str = typer.Option("int8", "--io", help="Input/output dtype of the INT8 model: int8 or uint8."),
    per_tensor: bool = typer.Option(False, "--per-tensor", help="Per-tensor weight scales (default per-channel)."),
    batch: int = typer.Option(
        1, "--batch", callback=opt.within(R.BATCH), help="Fixed batch size of the exported models."),
    float16: bool = typer.Option(False, "--float16", help="Also write a float16-weights model (<base>_fp16.tflite)."),
    dynamic_range: bool = typer.Option(False, "--dynamic-range",
                                       help="Also write a dynamic-range model (<base>_dynamic.tflite)."),
    calib_count: Optional[int] = typer.Option(None, "--calib-count", callback=opt.within(R.CALIB_COUNT),
                                              help="Calibrate with N samples, evenly spaced (default: all)."),
    preprocess: Optional[List[str]] = opt.preprocess(" of the calibration data"),
    calib_preprocess: Optional[List[str]] = typer.Option(
        None, "--calib-preprocess", hidden=True, help="Deprecated name of --preprocess."),
    calib_key: Optional[str] = typer.Option(None, "--calib-key", help="Array name in a .npz file (default x)."),
    json_out: bool = opt.json_flag("the result"),
    onnx_rtol: float = typer.Option(1e-3, "--onnx-rtol", callback=opt.within(R.ONNX_RTOL),
                                    help="ONNX: largest FP32 difference from onnxruntime allowed, relative to the "
                                         "largest output."),
    min_agreement: float = typer.Option(
        0.80, "--min-agreement", callback=opt.within(R.MIN_AGREEMENT),
        help="Refuse the INT8 model (nothing written) when its top-1 agreement with the FP32 model on the "
             "calibration samples is below this; below 0.95 warns."),
    min_sqnr: float = typer.Option(
        10.0, "--min-sqnr", callback=opt.within(R.MIN_SQNR_DB), help="Likewise for outputs that are not class scores: the INT8 output's SQNR in dB "
                                 "against the FP32 output; below 20 warns."),
    show_progress: bool = typer.Option(False, "--progress", hidden=True,
                                       help="Deprecated: progress is reported in logs too (--quiet: never)."),
    quiet: bool = opt.quiet(),
) -> None:
    """Convert to an FP32 .tflite baseline and a calibrated full-integer INT8 .tflite, each with a sidecar."""
    # lazy: numpy, pydantic, rich (import numpy 460 ms, pydantic 199 ms, rich 52 ms), kept off `edgebench VERB --help`
    from edgebench.cli.output import emit_json, get_console, get_err_console
    from edgebench.quantize import QuantizeOptions, parse_preprocess, quantize_model

    err = get_err_console()
    if calib_preprocess:
        err.print("warning: --calib-preprocess is deprecated; use --preprocess KEY=VALUE (the spelling accuracy "
                  "uses too)", markup=False, soft_wrap=True)
    options = QuantizeOptions(
        io=io.lower(), per_channel=not per_tensor, batch=batch, float16=float16, dynamic_range=dynamic_range,
        calib_count=calib_count, calib_key=calib_key, onnx_rtol=onnx_rtol,
        min_agreement=min_agreement, min_sqnr_db=min_sqnr,
        calib_preprocess=parse_preprocess(list(preprocess or []) + list(calib_preprocess or [])))

    # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
    from edgebench.cli.progress import reporter

    steps = reporter(model.name, quiet=quiet)   # one line per step, on a terminal and in a log alike
    def on_progress(message: str) -> None:
        steps({"event": "message", "message": message})

    # lazy: numpy, pydantic (import numpy 460 ms, pydantic 199 ms measured), kept off `edgebench VERB --help`
    from edgebench.quantize.onnx_lower.graph import looks_like_onnx

    if looks_like_onnx(model):     # a model from anywhere: converted in a child with memory and CPU limits
        # lazy: numpy, pydantic (import numpy 460 ms, pydantic 199 ms measured), kept off `edgebench VERB --help`
        from edgebench.quantize.child import run_contained

        result = run_contained(quantize_model, (model, calib), {"out": out, "fp32_out": fp32_out, "options": options},
                               on_progress, what=f"quantize {model.name}")
    else:
        result = quantize_model(model, calib, out=out, fp32_out=fp32_out, options=options, progress=on_progress)
    for w in result.warnings:
        err.print(f"warning: {w.one_line()}", markup=False, soft_wrap=True)
    if json_out:
        emit_json(result)
        return
    _show(get_console(), result)


def _agreement(a: dict) -> str:
    parts = []
    for o in a["outputs"]:
        if o["kind"] == "classification":
            parts.append(f"top-1 agreement {o['top1_agreement']:.1%}")
        else:
            db = o["sqnr_db"]
            parts.append(f"SQNR {'inf' if db == 'inf' else '-' if db is None else f'{db:.1f}'} dB")
    return "; ".join(parts) + f" on {a['samples']} calibration samples [measured]"


def _size(n: int) -> str:
    return f"{n / 1024:.1f} KiB" if n >= 1024 else f"{n} B"


def _quant(q) -> str:
    return "-" if not q else f"s={q[0]:.6g} zp={q[1]}"


def _show(out, r) -> None:
    # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    g = Table.grid(padding=(0, 2))
    g.add_column(style="bold", no_wrap=True)
    g.add_column(overflow="fold")
    src = r.source
    g.add_row("source", escape(f"{src['path']} ({src['kind']}, sha256 {src['sha256'][:16]}… of {src['sha256_of']})"))
    g.add_row("input", escape(f"{r.input['name']} {r.input['dtype']}, exported as "
                              + "x".join(map(str, r.input["export_shape"]))))
    c = r.calibration
    g.add_row("calibration", escape(f"{c['count']} samples ({c['selection']}) from {c['source']}, "
                                    f"sha256 {c['sha256'][:16]}…"))
    g.add_row("converter", escape(f"TensorFlow {r.versions['tensorflow']}, Keras {r.versions['keras']}; {r.export}"))
    if r.lowering is not None:
        lw, f = r.lowering, r.lowering["faithfulness"]
        g.add_row("lowering", escape(f"ONNX opset {lw['opset']} ({lw['producer']}): "
                                     f"{sum(lw['onnx_operators'].values())} nodes, "
                                     f"{lw['batchnorm_folded']} BatchNormalization folded; input "
                                     f"{lw['inputs'][0]['layout']} (data given {lw['inputs'][0]['source_layout']} "
                                     "is transposed)"))
        g.add_row("vs onnxruntime", f"FP32 max abs error {f['max_abs_error']:.3g} on {f['samples']} samples "
                  f"(tolerance {f['tolerance']:.3g})")
    if r.agreement is not None:
        g.add_row("INT8 vs FP32", escape(_agreement(r.agreement)))
    g.add_row("time", f"{r.timings_s.get('total', 0):.1f} s")
    out.print(g)
    t = Table(title="written", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for col in ("model", "precision", "input", "output", "size", "sha256", "path"):
        t.add_column(col, justify="right" if col == "size" else "left", no_wrap=col != "path", overflow="fold")
    for o in r.outputs:
        t.add_row(o.role, o.precision, f"{o.input_dtype} {_quant(o.input_quantization)}",
                  f"{o.output_dtype} {_quant(o.output_quantization)}", _size(o.bytes), o.sha256[:12],
                  escape(o.path))
    out.print(t)
    # lazy: pydantic (import pydantic 199 ms measured), kept off `edgebench VERB --help`
    from edgebench.provenance import sidecar_path

    names = ", ".join(sidecar_path(o.path).name for o in r.outputs)
    out.print(f"sidecars (provenance, beside each model): {names}", style="dim", markup=False)
