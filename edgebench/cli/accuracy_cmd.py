"""`edgebench accuracy MODEL --baseline FP32 --data TEST --board B`: accuracy against the baseline.

Exit codes: 0 ok, 1 bad input or an error (nothing stored), 2 a compression
threshold the user set failed (the run is stored and printed first). A default threshold
the user did not set is a warning (``default-threshold-exceeded``), not a gate.
"""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from edgebench import ranges as R
from edgebench.cli import options as opt
from edgebench.cli.runargs import RunArgs
from edgebench.errors import GateFailed, UsageError


def _numbers(text: Optional[str], name: str, count: Optional[int] = None, kind=float):
    """'a,b,c' -> tuple of numbers; fractions like 1/255 allowed for floats."""
    if text is None or text == "":
        return None

    def one(v: str):
        v = v.strip()
        if kind is float and "/" in v:
            num, _, den = v.partition("/")
            return float(num) / float(den)
        return kind(v)

    try:
        values = tuple(one(v) for v in str(text).split(","))
    except (ValueError, ZeroDivisionError):
        raise UsageError(f"{name} {text!r} is not a comma-separated list of numbers") from None
    if count is not None and len(values) != count:
        raise UsageError(f"{name} needs {count} values, got {len(values)} ({text!r})")
    return values


def _progress(console):
    live = console.is_terminal
    passes: dict = {}  # role -> its latest progress line (two agents run both models chunk by chunk)

    def show(ev: dict) -> None:
        kind = ev["event"]
        if kind == "connect":
            console.print(f"[dim]connecting to {ev['board']}…[/]")
        elif kind == "load":
            console.print(f"[dim]{ev['role']}: loading {ev['model']} ({ev['kernels']} kernels)…[/]")
        elif kind == "infer":
            if not live and ev["done"] != ev["total"]:
                return  # a log, not a terminal: one line per pass
            rate = ev.get("samples_per_s")
            passes[ev["role"]] = (f"{ev['role']} {ev['model']}: {ev['done']:,}/{ev['total']:,}"
                                  f"{f', {rate:,.0f}/s' if rate else ''}", ev["done"] == ev["total"])
            text = " · ".join(line for line, _ in passes.values()) if live else passes[ev["role"]][0]
            finished = all(done for _, done in passes.values()) if live else True
            console.print(f"[dim]{text} ({ev['slice']})[/]" + (" " * 8 if live else ""),
                          end="\n" if finished else "\r")
            if live and finished:
                passes.clear()
        elif kind == "analyse":
            console.print("[dim]computing statistics…[/]")

    return show


PREP, GATES, EDGE, RUN = "Preprocessing", "Gates", "Edge cases", "How the models run"
_OLD_PREP = {"scale": "--scale", "mean": "--mean", "std": "--std", "size": "--size", "resize": "--resize",
             "channels": "--channels"}


def _preprocessing(items: Optional[List[str]], old: dict, err) -> dict:
    """``--preprocess KEY=VALUE`` items (the spelling ``quantize`` uses too), plus the deprecated
    ``--scale/--mean/--std/--size/--resize/--channels`` options, which say so on stderr."""
    # lazy: numpy, pydantic (import numpy 460 ms, pydantic 199 ms measured), kept off `edgebench VERB --help`
    from edgebench.quantize.calibration import parse_preprocess

    given = {k: v for k, v in old.items() if v is not None}
    for key in given:
        err.print(f"warning: {_OLD_PREP[key]} is deprecated; use --preprocess {key}=VALUE", markup=False,
                  soft_wrap=True)
    spelled = [f"{k}={str(v).replace(',', 'x') if k in ('size', 'resize') else v}" for k, v in given.items()]
    options = parse_preprocess(list(items or []) + spelled)  # a key given both ways: "given twice"
    return {k: tuple(v) if isinstance(v, list) else v for k, v in options.items()}


def _given(ctx, names: dict) -> tuple:
    """The options of ``names`` the user gave (command line or environment), as the option names the
    library knows: a threshold given is a gate (exit 2), a default one a warning (docs/check.md)."""
    given = ("COMMANDLINE", "ENVIRONMENT")   # by name: typer may carry its own copy of click's enum
    return tuple(lib for cli, lib in names.items()
                 if getattr(ctx.get_parameter_source(cli), "name", None) in given)


def accuracy(
    ctx: typer.Context,
    model: Optional[Path] = typer.Argument(None,
                                           help="The model under test (.tflite, e.g. INT8; omit with --recover)."),
    baseline: Optional[Path] = typer.Option(
        None, "--baseline", help="The FP32 model it came from (.tflite), or auto: the one its provenance sidecar "
                                 "names (path and sha256 checked). A baseline other than the sidecar's is warned about."),
    labels: Optional[Path] = typer.Option(
        None, "--labels", metavar="FILE", help="Class names, one per line, class 0 first: they number an image "
                                               "folder's subfolders (default: names the model carries, else sorted "
                                               "folder names; docs/accuracy.md)."),
    data: Optional[str] = typer.Option(None, "--data",
                                       help="Test set: digits, digits:test, an .npz (x, y) or an image folder."),
    preprocess: Optional[List[str]] = opt.preprocess(rich_help_panel=PREP),
    max_drop: float = typer.Option(1.0, callback=opt.within(R.MAX_DROP), rich_help_panel=GATES,
                                   help="Maximum top-1 drop in points: the upper 95% bound must be within it "
                                        "(inf: not gated)."),
    max_ece: float = typer.Option(0.05, callback=opt.within(R.MAX_ECE), rich_help_panel=GATES,
                                  help="Maximum bias-corrected ECE of the model under test: the upper 95% bound "
                                       "must be within it (inf: not gated)."),
    max_edge_drop: float = typer.Option(3.0, callback=opt.within(R.MAX_EDGE_DROP), rich_help_panel=GATES,
                                        help="Maximum drop on the worst edge-case slice, points (upper 95% bound)."),
    gate_on: str = typer.Option("interval", rich_help_panel=GATES,
                                help="interval: gates act on the upper 95% bound; point: on the point estimate "
                                     "(labelled so in the output and run.json)."),
    edge_cases: bool = typer.Option(False, "--edge-cases", rich_help_panel=EDGE,
                                    help="Evaluate the built-in perturbation families."),
    edge_set: Optional[Path] = typer.Option(None, rich_help_panel=EDGE,
                                            help="A labelled edge-case .npz (x, y, optional slice)."),
    families: Optional[str] = typer.Option(None, rich_help_panel=EDGE,
                                           help="Comma-separated subset of the perturbation families."),
    severities: str = typer.Option("1,2,3,4,5", rich_help_panel=EDGE,
                                   help="Perturbation severities (1-5), comma-separated."),
    value_range: Optional[str] = typer.Option(None, rich_help_panel=EDGE,
                                              help="LOW,HIGH the inputs live in (default: observed)."),
    seed: int = opt.seed(
        help="Seed of the perturbations, the calibration split and the ECE bootstrap.", rich_help_panel=opt.RUNTIME),
    calib_fraction: float = typer.Option(
        0.5, callback=opt.within(R.CALIB_FRACTION), help="Share of the test set that fits the temperature."),
    kernels: str = opt.kernels(
        help="Kernels of the model under test: xnnpack, builtin, reference.", rich_help_panel=opt.RUNTIME),
    threads: int = opt.threads(help="Interpreter threads of the model under test.", rich_help_panel=opt.RUNTIME),
    delegate: Optional[str] = opt.delegate(
        help="Delegate of the model under test, e.g. edgetpu.", rich_help_panel=opt.RUNTIME),
    baseline_on_board: bool = typer.Option(False, rich_help_panel=RUN,
                                           help="Run the baseline on the board too (default: host board)."),
    baseline_kernels: str = typer.Option("reference", rich_help_panel=RUN,
                                         help="Kernels of the baseline (default: reference)."),
    chunk: Optional[int] = typer.Option(None, callback=opt.within(R.CHUNK), rich_help_panel=RUN,
                                        help="Samples per infer request (default: up to 4 MB, 2048)."),
    scale: Optional[str] = typer.Option(None, hidden=True, help="Deprecated: --preprocess scale=S."),
    mean: Optional[str] = typer.Option(None, hidden=True, help="Deprecated: --preprocess mean=M."),
    std: Optional[str] = typer.Option(None, hidden=True, help="Deprecated: --preprocess std=S."),
    size: Optional[str] = typer.Option(None, hidden=True, help="Deprecated: --preprocess size=HxW."),
    resize: Optional[str] = typer.Option(None, hidden=True, help="Deprecated: --preprocess resize=HxW."),
    channels: Optional[int] = typer.Option(
        None, callback=opt.within(R.CHANNELS), hidden=True, help="Deprecated: --preprocess channels=N."),
    *,
    run: RunArgs,                       # given by edgebench.cli.runargs.command
) -> None:
    """Accuracy of a model on a board against its FP32 baseline, with edge cases and a CI gate."""
    # lazy: numpy, pydantic, rich (import numpy 460 ms, pydantic 199 ms, rich 52 ms), kept off `edgebench VERB --help`
    from edgebench.bench.accuracy import AccuracyOptions, gate_failures, run_accuracy
    from edgebench.cli.output import get_err_console
    from edgebench.results import store

    err = get_err_console()
    sev = _numbers(severities, "--severities", kind=int)
    data_options = _preprocessing(preprocess, {"scale": scale, "mean": mean, "std": std, "size": size,
                                               "resize": resize, "channels": channels}, err)
    opts = AccuracyOptions(
        kernels=kernels, threads=threads, delegate=delegate, baseline_on_board=baseline_on_board,
        baseline_kernels=baseline_kernels, edge_cases=edge_cases, edge_set=str(edge_set) if edge_set else None,
        families=tuple(f.strip() for f in families.split(",") if f.strip()) if families else None,
        severities=sev or (), seed=seed, value_range=_numbers(value_range, "--value-range", 2),
        max_drop_points=max_drop, max_ece=max_ece, max_edge_drop_points=max_edge_drop, gate_on=gate_on,
        gates_set=_given(ctx, {"max_drop": "max_drop_points", "max_ece": "max_ece",
                               "max_edge_drop": "max_edge_drop_points"}),
        calib_fraction=calib_fraction, chunk_size=chunk, data_options=data_options, cpus=run.cpus,
        labels=str(labels) if labels else None)
    result, run_dir = run_accuracy(model, baseline, data, run.profile(), opts, runs_root=run.runs_dir, url=run.url,
                                   progress=run.progress(live=_progress(err)))
    run.show(result, run_dir, json_obj=store.read_result(run_dir))
    failed = gate_failures(result)
    if failed:
        raise GateFailed("compression check failed: " + "; ".join(failed), hint=f"run stored in {run_dir}")
