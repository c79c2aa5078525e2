"""`edgebench inspect`: what a .tflite (or, before conversion, an .onnx) model contains and costs."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from edgebench.cli import options as opt
from edgebench.errors import GateFailed, UsageError


def inspect_command(
    model: Path = typer.Argument(..., help="A .tflite model, or an .onnx model (before conversion)."),
    json_out: bool = opt.json_flag("the model report"),
    layers: bool = typer.Option(False, "--layers", help="Also show the per-layer table (MACs, params, live memory)."),
    tensors: bool = typer.Option(False, "--tensors", help="Also show every tensor with its quantization."),
    board: Optional[str] = opt.board(
        None, help="Microcontroller board: check that the model fits it (operators, model buffer, flash, arena, "
             "RAM); exit 2 if not."),
    boards_dir: List[Path] = opt.boards_dir(),
) -> None:
    """Operators, tensors, quantization, parameters, MACs and peak activation memory of a model."""
    # lazy: numpy, pydantic, rich (import numpy 460 ms, pydantic 199 ms, rich 52 ms), kept off `edgebench VERB --help`
    from edgebench.cli.output import emit_json, get_console
    from edgebench.quantize.onnx_lower.graph import looks_like_onnx
    from edgebench.runtime.inspect import inspect_model

    if looks_like_onnx(model):
        _inspect_onnx(model, json_out, layers, board)
        return
    report = inspect_model(model)
    fit = None
    if board is not None:
        # lazy: numpy, pydantic (import numpy 460 ms, pydantic 199 ms measured), kept off `edgebench VERB --help`
        from edgebench.cli.board import board_profile
        from edgebench.mcu.fit import check_fit

        fit = check_fit(model, board_profile(board, boards_dir))
    if json_out:
        emit_json(report if fit is None else {**report.to_dict(), "fit": fit.to_dict()})
        _gate(fit)
        return
    out = get_console()
    _summary(out, report)
    _operators(out, report)
    _io(out, report)
    if layers:
        _layers(out, report)
    if tensors:
        _tensors(out, report)
    if fit is not None:
        _fit(out, fit)
        _gate(fit)


def _inspect_onnx(model: Path, json_out: bool, layers: bool, board) -> None:
    # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
    from rich.markup import escape

    from edgebench.cli.output import emit_json, get_console
    from edgebench.quantize.onnx_lower.inspect import inspect_onnx
    from edgebench.quantize.onnx_lower.table import supported_list

    if board is not None:
        raise UsageError(f"--board checks a converted model; {model} is ONNX",
                         f"convert it first: edgebench quantize {model} --calib DATA, then inspect the .tflite")
    r = inspect_onnx(model)
    if json_out:
        emit_json(r)
        return
    out = get_console()
    # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
    from rich.table import Table

    g = Table.grid(padding=(0, 2))
    g.add_column(style="bold", no_wrap=True)
    g.add_column(overflow="fold")
    g.add_row("model", escape(f"{Path(r.path).stem}  ({r.path})"))
    g.add_row("sha256", r.sha256)
    g.add_row("file size", _bytes(r.bytes))
    g.add_row("format", escape(f"ONNX, opset {r.opset}, produced by {r.producer}"))
    g.add_row("nodes", f"{len(r.nodes)} ({sum(1 for n in r.nodes if n.status == 'folded')} computed from constants)")
    g.add_row("parameters", f"{r.params:,} in initializers, {_bytes(r.param_bytes)}")
    macs = f"{_si(r.macs)} per inference, batch 1  \\[computed from inferred shapes]"
    if r.macs_not_counted:
        macs += f"; not counted for {len(r.macs_not_counted)} node(s)"
    g.add_row("MACs", macs)
    if r.unsupported:           # the verdict quantize refuses on (onnx_lower.verdict): same check, same reason
        ops = sorted({n.op for n in r.unsupported})
        first = r.reasons[0] if r.reasons else f"first {r.unsupported[0].name!r}"
        g.add_row("conversion", escape(f"[{len(r.unsupported)} node(s) edgebench cannot lower: {', '.join(ops)}; "
                                       f"{first}] supported: {supported_list()}"))
    else:
        g.add_row("conversion", "every operator is supported: edgebench quantize converts it")
    for note in r.notes:
        g.add_row("note", escape(note))
    out.print(g)
    macs_by: dict = {}
    status: dict = {}
    for n in r.nodes:
        macs_by[n.op] = None if n.macs is None or macs_by.get(n.op, 0) is None else macs_by.get(n.op, 0) + n.macs
        status.setdefault(n.op, n.status)
    rows = [(op, cnt, "not counted" if macs_by[op] is None else f"{macs_by[op]:,}", status[op])
            for op, cnt in sorted(r.operators.items(), key=lambda kv: (-kv[1], kv[0]))]
    _print_table(out, "operators", ("operator", "count", "MACs", "lowering"), rows)
    rows = [("input", i.name, _shape(i.shape), i.dtype) for i in r.inputs]
    rows += [("output", name, _shape(shape) if shape is not None else "?", "") for name, shape in r.outputs]
    _print_table(out, "inputs and outputs (ONNX layout)", ("role", "name", "shape", "dtype"), rows)
    if layers:
        node_rows = [(n.index, n.op, _name(n.name),
                      ", ".join(_shape(s) if s is not None else "?" for s in n.output_shapes),
                      "not counted" if n.macs is None else f"{n.macs:,}", f"{n.params:,}", n.status) for n in r.nodes]
        _print_table(out, "nodes, in graph order", ("#", "operator", "name", "output", "MACs", "params", "lowering"),
                     node_rows)


def _gate(fit) -> None:
    if fit is not None and not fit.ok:
        raise GateFailed(f"{fit.model} does not fit {fit.board}: " + "; ".join(fit.problems()), fit.hint())


def _fit(out, f) -> None:
    # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
    from rich.markup import escape

    out.print(f"[bold]fit on {escape(f.board)}[/] (firmware engine version {f.engine_version}, "
              f"{escape(f.engine_version_basis)})")
    if f.missing:
        out.print("  operators the firmware lacks: " + escape(", ".join(
            f"{op} (x{n}, first layer {k} '{_name(t)}')" if n > 1 else f"{op} (layer {k} '{_name(t)}')"
            for op, n, k, t in f.missing)))
    else:
        out.print("  operators: all supported")
    if f.refused:
        out.print(f"  refused by the converter: {escape(f.refused)}")
    # lazy: numpy (import numpy 460 ms measured), kept off `edgebench VERB --help`
    from edgebench.mcu.fit import PLACEMENTS

    rows = [(c.what, c.placement or "both", f"{c.need_bytes:,}", f"{c.have_bytes:,}", "yes" if c.fits else "NO",
             c.basis) for c in f.checks]
    if rows:
        _print_table(out, "sizes", ("check", "blob in", "need B", "have B", "fits", "basis"), rows,
                     "\n".join(f"{c.what} ({c.placement or 'both'}): {c.note}" for c in f.checks if c.note) or None)
    for u in f.unknown:
        out.print(f"  not checked: {escape(u)}")
    for p in f.placements:
        out.print(f"  blob in {p} ({escape(PLACEMENTS[p])}): " + ("fits" if f.fits_in(p) else "does not fit"))
    out.print("  verdict: " + ("fits" if f.ok else "[bold red]does not fit[/]"))


def _bytes(n) -> str:
    if n is None:
        return "n/a"
    for div, unit in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if n >= div:
            return f"{n:,} B ({n / div:.1f} {unit})"
    return f"{n:,} B"


def _si(n: int) -> str:
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= div:
            return f"{n:,} ({n / div:.3g} {unit})"
    return f"{n:,}"


def _print_table(out, title: str, columns, rows, caption: str | None = None) -> None:
    """A rich table whose numeric columns are never cut: on a narrow terminal, only the
    ``name`` column (ellipsis) and the ``quantization`` column (wrapped) give way."""
    # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
    from rich import box
    from rich.table import Table

    t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, caption=caption,
              caption_justify="left", pad_edge=False)
    widths = [max(len(str(c)) for c in [col] + [row[k] for row in rows]) for k, col in enumerate(columns)]
    flexible = {"name": 12, "quantization": 18}
    fixed = sum(w for c, w in zip(columns, widths) if c not in flexible) + 3 * len(columns)
    room = max(out.width - fixed, sum(min(flexible[c], w) for c, w in zip(columns, widths) if c in flexible))
    for c, w in zip(columns, widths):
        if c == "name":
            other = sum(min(flexible["quantization"], w2) for c2, w2 in zip(columns, widths) if c2 == "quantization")
            t.add_column(c, no_wrap=True, overflow="ellipsis", max_width=max(min(12, w), min(w, room - other)))
        elif c == "quantization":
            t.add_column(c, overflow="fold", min_width=min(flexible[c], w))
        else:
            t.add_column(c, justify="right" if c in _NUMERIC else "left", no_wrap=True, min_width=w)
    for row in rows:
        t.add_row(*map(str, row))
    out.print(t)


_NUMERIC = {"count", "MACs", "params", "param B", "live B", "bytes", "#", "need B", "have B"}


def _name(name: str) -> str:
    """TFLite names fused tensors 'a;b;c': show the first part (JSON has the full name)."""
    return name.split(";")[0] + ("…" if ";" in name else "")


def _summary(out, r) -> None:
    # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
    from rich.markup import escape
    from rich.table import Table

    m = r.model
    t = Table.grid(padding=(0, 2))
    t.add_column(style="bold", no_wrap=True)
    t.add_column(overflow="fold")
    t.add_row("model", f"{m.name}  ({m.path})")
    t.add_row("sha256", m.sha256)
    t.add_row("file size", _bytes(m.bytes))
    t.add_row("precision", f"{m.precision} (weights {m.weights_dtype}, activations {m.activations_dtype})")
    t.add_row("operators", f"{len(r.layers)} in the main subgraph"
              + (f" ({r.subgraphs} subgraphs)" if r.subgraphs > 1 else ""))
    t.add_row("parameters", f"{r.params:,} in constant tensors, {_bytes(r.param_bytes)}")
    macs = f"{_si(r.macs)} per inference  \\[computed from shapes]"
    if r.macs_not_counted:
        ops = sorted({layer.op for layer in r.macs_not_counted})
        macs += f"; MACs not counted for {len(r.macs_not_counted)} operator(s): {', '.join(ops)}"
    t.add_row("MACs", macs)
    if r.peak_op_index is not None:
        peak_op = r.layers[r.peak_op_index].op
        where = f" at operator #{r.peak_op_index} {peak_op}, {len(r.peak_tensors)} tensors live"
    else:
        where = ""
    t.add_row("peak activations", f"{_bytes(r.peak_activation_bytes)}{where}  \\[estimated: liveness, "
              "no in-place reuse; not TFLM's planner]")
    t.add_row("all activations", f"{_bytes(r.activation_bytes_no_reuse)} if nothing were reused")
    for note in r.notes:
        t.add_row("note", escape(note))
    out.print(t)


def _operators(out, r) -> None:
    macs: dict = {}
    for layer in r.layers:
        if layer.macs is None:
            macs[layer.op] = None
        elif layer.op not in macs or macs[layer.op] is not None:
            macs[layer.op] = (macs.get(layer.op) or 0) + layer.macs
    rows = [(op, n, "not counted" if macs.get(op, 0) is None else f"{macs.get(op, 0):,}")
            for op, n in sorted(r.operators.items(), key=lambda kv: (-kv[1], kv[0]))]
    _print_table(out, "operators", ("operator", "count", "MACs"), rows)


def _quant(tensor) -> str:
    """'s=0.0394 zp=-128' per tensor; 'axis 0 x16: s=1e-05…3e-04 zp=0' per channel."""
    q = tensor.quant_dict()
    if q is None:
        return "-"
    if q["channels"] == 1:
        return f"s={q['scale']:.6g} zp={q['zero_point']}"
    scales = [float(s) for s in q["scale"]]
    zps = sorted({int(z) for z in q["zero_point"]})
    zp = str(zps[0]) if len(zps) == 1 else f"{zps[0]}…{zps[-1]}"
    return f"axis {q['quantized_dimension']} x{q['channels']}: s={min(scales):.2g}…{max(scales):.2g} zp={zp}"


def _shape(shape) -> str:
    return "x".join(map(str, shape)) or "scalar"


def _io(out, r) -> None:
    rows = [(role, _name(t.name), _shape(t.shape), t.dtype, _quant(t))
            for role, items in (("input", r.inputs), ("output", r.outputs)) for t in items]
    _print_table(out, "inputs and outputs", ("role", "name", "shape", "dtype", "quantization"), rows)


def _layers(out, r) -> None:
    rows = []
    for layer in r.layers:
        rows.append((layer.index, layer.op, ", ".join(_shape(s) for s in layer.output_shapes),
                     "not counted" if layer.macs is None else f"{layer.macs:,}",
                     f"{layer.params:,}", f"{layer.param_bytes:,}",
                     f"{layer.live_bytes:,}" + ("*" if layer.index == r.peak_op_index else " ")))
    rows.append(("", "total", "", f"{r.macs:,}" + ("+" if r.macs_not_counted else ""),
                 f"{r.params:,}", f"{r.param_bytes:,}", f"{r.peak_activation_bytes:,}*"))
    caption = "live B: activation bytes live while the operator runs (estimate); * peak"
    notes = [f"#{layer.index} {layer.op}: {layer.note}" for layer in r.layers if layer.note and layer.note != "no MACs"]
    if notes:
        caption += "\n" + "\n".join(notes)
    _print_table(out, "layers, in execution order",
                 ("#", "operator", "output", "MACs", "params", "param B", "live B"), rows, caption)


def _tensors(out, r) -> None:
    rows = [(t.index, _name(t.name), _shape(t.shape), t.dtype, f"{t.bytes:,}",
             "const" if t.constant else ("var" if t.variable else "act"), _quant(t))
            for t in r.tensors]
    _print_table(out, "tensors", ("#", "name", "shape", "dtype", "bytes", "kind", "quantization"), rows,
                 "kind: const = constant (parameters), act = activation, var = variable (state); "
                 "s = scale, zp = zero point, axis N xC: per-channel on axis N with C channels")
