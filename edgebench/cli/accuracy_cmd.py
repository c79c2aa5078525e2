"""`edgebench accuracy MODEL --baseline FP32 --data TEST --board B`: accuracy against the baseline.

Exit codes: 0 ok, 1 bad input or an error (nothing stored), 2 a compression
threshold failed (the run is stored and printed first).
"""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from edgebench.cli.app import app


def _numbers(text: Optional[str], name: str, count: Optional[int] = None, kind=float):
    """'a,b,c' -> tuple of numbers; fractions like 1/255 allowed for floats."""
    if text is None or text == "":
        return None
    from edgebench.errors import UsageError

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


def _pct(x, d: int = 2) -> str:
    return "–" if x is None else f"{100 * x:.{d}f}%"


def _p(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _acc(s: Optional[dict]) -> str:
    if not s:
        return "–"
    return f"{_pct(s['accuracy'])} ({_pct(s['ci_low'], 1)}–{_pct(s['ci_high'], 1)})"


def print_accuracy(console, result, run_dir) -> None:
    from rich.markup import escape
    from rich.table import Table

    if "accuracy" not in (result.extra or {}):  # a recovered run in which no sample was evaluated by both
        console.print(f"run {run_dir}: {result.status} ({escape(result.status_reason or '')}); no figures")
        return
    a = result.extra["accuracy"]
    bp = a["baseline"]["model"]["precision"].upper()
    cp = a["candidate"]["model"]["precision"].upper()
    t = Table(title=f"accuracy on {escape(result.scenario['inputs']['source'])} "
                    f"(n={a['paired']['n']:,}, {result.label}; 95% Wilson CIs)", title_justify="left")
    for col in ("model", "where, kernels", "top-1 (95% CI)", "top-5 (95% CI)", "ECE bias-corr. (95% CI)",
                "ECE plug-in"):
        t.add_column(col)
    for role in ("baseline", "candidate"):
        m, acc, rt, cal = a[role], a["accuracy"][role], a[role]["runtime"], a["calibration"][role]
        how = rt.get("delegate") or rt.get("kernels")
        t.add_row(f"{escape(m['model']['name'])} ({role})", f"{m['board']}, {how}, {rt.get('threads')} thr",
                  _acc(acc["top1"]), _acc(acc["top5"]),
                  f"{cal['ece_debiased']:.4f} ({cal['ece_ci_low']:.4f}–{cal['ece_ci_high']:.4f})",
                  f"{cal['ece']:.4f}")
    console.print(t)
    pr, res = a["paired"], a["resolution"]
    console.print(f"paired: agreement {_pct(pr['agreement_rate'], 1)}, flips right→wrong "
                  f"{pr['flips_right_to_wrong']}, wrong→right {pr['flips_wrong_to_right']}")
    console.print("relative: " + "; ".join(escape(s) for s in a["relative"]["statements"]))
    mdd = "no difference of any size" if res["mdd_points"] is None else f"{res['mdd_points']:.2f} points"
    console.print(f"verdict: {escape(res['statement'])}")
    console.print(f"resolution (a property of the test set): a true difference of {mdd} is detected with "
                  f"{res['power']:.0%} power (two-sided α={res['alpha']:g}, n={res['n']:,})")
    cal = a["calibration"]["candidate"]
    console.print(f"calibration: a perfectly calibrated model would show a plug-in ECE of "
                  f"{cal['ece_null_expected']:.4f} here by sampling noise alone; the bias-corrected ECE removes "
                  "most of that bias")
    ts = a["calibration"]["temperature_scaling"]
    console.print(f"calibration: temperature scaling fitted on {ts['n_fit']}, evaluated on {ts['n_eval']} "
                  f"(seed {ts['seed']}): " + "; ".join(
                      f"{r} T={ts[r]['temperature']:.3g}, ECE {ts[r]['ece_eval_before']:.4f} → "
                      f"{ts[r]['ece_eval_after']:.4f}" for r in ("baseline", "candidate")))
    f = a["fidelity"]
    rel = "–" if f["relative_l2_error"] is None else f"{f['relative_l2_error']:.4g}"
    console.print(f"fidelity ({cp} vs {bp} outputs): RMSE {f['rmse']:.4g}, max abs error {f['max_abs_error']:.4g}, "
                  f"cosine {f['cosine_similarity']:.6f}, relative L2 {rel}")
    per = list(zip(a["accuracy"]["baseline"]["per_class"], a["accuracy"]["candidate"]["per_class"]))
    if len(per) <= 20:
        pc = Table(title="per-class top-1", title_justify="left")
        for col in ("class", "n", bp, cp):
            pc.add_column(col, justify="right")
        for b, c in per:
            pc.add_row(escape(str(b["class_name"] if b["class_name"] is not None else b["class_index"])),
                       str(b["n"]), _pct(b["accuracy"], 1), _pct(c["accuracy"], 1))
        console.print(pc)
    edge = a.get("edge_cases")
    if edge:
        et = Table(title=f"edge cases ({edge['source']}"
                         + (f", seed {edge['seed']}" if edge["source"] == "builtin" else "") + ")",
                   title_justify="left")
        for col in ("slice", "n", bp, cp, "drop pt [95% CI]", "McNemar p", "Holm p"):
            et.add_column(col, justify="left" if col == "slice" else "right", no_wrap=True)
        for r in [edge["clean"]] + edge["slices"]:
            mark = " ◀ worst" if r["slice"] == edge["worst"] else ""
            et.add_row(escape(r["slice"]) + mark, f"{r['n']:,}", _pct(r["baseline"]["accuracy"], 1),
                       _pct(r["candidate"]["accuracy"], 1),
                       f"{r['drop_points']:+.2f} [{r['drop_ci_low_points']:+.2f}, {r['drop_ci_high_points']:+.2f}]",
                       _p(r["mcnemar_p"]), "–" if "mcnemar_p_holm" not in r else _p(r["mcnemar_p_holm"]))
        console.print(et)
    v = a["validation"]
    on = "upper 95% bound" if v.get("gate_on") != "point" else "POINT ESTIMATE (not the interval)"
    vt = Table(title=f"compression validation (gates on the {on})", title_justify="left")
    for col in ("metric", bp, cp, "gated value", "threshold", "acceptable?"):
        vt.add_column(col)
    for r in v["rows"]:
        fmt = (lambda x: "–" if x is None else f"{x:.4f}") if r["unit"] in ("ece", "ratio") else _pct
        points = r["unit"] == "fraction"
        thr = "–" if r["threshold"] is None else (
            f"drop ≤ {r['threshold']:g} pt" if points else f"≤ {r['threshold']:g}")
        gated = "–" if r["value"] is None else (f"{r['value']:+.2f} pt" if points else f"{r['value']:.4f}")
        ok = {"pass": "[green]yes[/]", "fail": "[red]NO[/]", "unresolved": "[red]NO (unresolved)[/]",
              "not gated": "not gated"}[r["outcome"]]
        vt.add_row(escape(r["metric"]), fmt(r["baseline"]), fmt(r["candidate"]), gated, thr, ok)
    console.print(vt)
    for r in v["rows"]:
        if r["acceptable"] is not None and r["note"]:
            console.print(f"  {escape(r['metric'])}: {escape(r['note'])}")
    verdict = "[green]passed[/]" if v["passed"] else f"[red]FAILED[/] ({escape(', '.join(v['failed']))})"
    console.print(f"compression check {verdict}")
    for w in result.warnings:
        console.print(f"[yellow]warning ({w.get('code')}):[/] {escape(str(w.get('message')))} — "
                      f"{escape(str(w.get('remedy')))}")
    console.print(f"[bold]claim:[/] {escape(result.extra.get('claim') or '')}")
    console.print(f"run stored in {run_dir} ({result.status}): run.json, {a['predictions']}, "
                  + ", ".join(a["calibration"]["diagrams"].values()))


PREP, GATES, EDGE, RUN = "Preprocessing", "Gates", "Edge cases", "How the models run"
_OLD_PREP = {"scale": "--scale", "mean": "--mean", "std": "--std", "size": "--size", "resize": "--resize",
             "channels": "--channels"}


def _preprocessing(items: Optional[List[str]], old: dict, err) -> dict:
    """``--preprocess KEY=VALUE`` items (the spelling ``quantize`` uses too), plus the deprecated
    ``--scale/--mean/--std/--size/--resize/--channels`` options, which say so on stderr."""
    from edgebench.quantize.calibration import parse_preprocess

    given = {k: v for k, v in old.items() if v is not None}
    for key in given:
        err.print(f"warning: {_OLD_PREP[key]} is deprecated; use --preprocess {key}=VALUE", markup=False,
                  soft_wrap=True)
    spelled = [f"{k}={str(v).replace(',', 'x') if k in ('size', 'resize') else v}" for k, v in given.items()]
    options = parse_preprocess(list(items or []) + spelled)  # a key given both ways: "given twice"
    return {k: tuple(v) if isinstance(v, list) else v for k, v in options.items()}


@app.command()
def accuracy(
    model: Optional[Path] = typer.Argument(None,
                                           help="The model under test (.tflite, e.g. INT8; omit with --recover)."),
    baseline: Optional[Path] = typer.Option(None, "--baseline", help="The FP32 model it came from (.tflite)."),
    data: Optional[str] = typer.Option(None, "--data",
                                       help="Test set: digits, digits:test, an .npz (x, y) or an image folder."),
    board: str = typer.Option("host", "--board", "-b", help="Board the model under test runs on."),
    preprocess: Optional[List[str]] = typer.Option(
        None, "--preprocess", rich_help_panel=PREP,
        help="Declared preprocessing, KEY=VALUE, repeatable (as in quantize): scale=1/255, mean=0.5 or per "
             "channel mean=0.485,0.456,0.406, std=..., and for image folders size=HxW, resize=HxW, channels=1|3."),
    max_drop: float = typer.Option(1.0, rich_help_panel=GATES,
                                   help="Maximum top-1 drop in points: the upper 95% bound must be within it "
                                        "(inf: not gated)."),
    max_ece: float = typer.Option(0.05, rich_help_panel=GATES,
                                  help="Maximum bias-corrected ECE of the model under test: the upper 95% bound "
                                       "must be within it (inf: not gated)."),
    max_edge_drop: float = typer.Option(3.0, rich_help_panel=GATES,
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
    seed: int = typer.Option(0, help="Seed of the perturbations, the calibration split and the ECE bootstrap."),
    calib_fraction: float = typer.Option(0.5, help="Share of the test set that fits the temperature."),
    kernels: str = typer.Option("xnnpack", rich_help_panel=RUN,
                                help="Kernels of the model under test: xnnpack, builtin, reference."),
    threads: int = typer.Option(1, rich_help_panel=RUN, help="Interpreter threads of the model under test."),
    delegate: Optional[str] = typer.Option(None, rich_help_panel=RUN,
                                           help="Delegate of the model under test, e.g. edgetpu."),
    baseline_on_board: bool = typer.Option(False, rich_help_panel=RUN,
                                           help="Run the baseline on the board too (default: host board)."),
    baseline_kernels: str = typer.Option("reference", rich_help_panel=RUN,
                                         help="Kernels of the baseline (default: reference)."),
    chunk: Optional[int] = typer.Option(None, rich_help_panel=RUN,
                                        help="Samples per infer request (default: up to 4 MB, 2048)."),
    scale: Optional[str] = typer.Option(None, hidden=True, help="Deprecated: --preprocess scale=S."),
    mean: Optional[str] = typer.Option(None, hidden=True, help="Deprecated: --preprocess mean=M."),
    std: Optional[str] = typer.Option(None, hidden=True, help="Deprecated: --preprocess std=S."),
    size: Optional[str] = typer.Option(None, hidden=True, help="Deprecated: --preprocess size=HxW."),
    resize: Optional[str] = typer.Option(None, hidden=True, help="Deprecated: --preprocess resize=HxW."),
    channels: Optional[int] = typer.Option(None, hidden=True, help="Deprecated: --preprocess channels=N."),
    runs_dir: Path = typer.Option(Path("runs"), help="Where run folders are written."),
    url: Optional[str] = typer.Option(None, help="Override the board's address (ssh://user@host, /dev/ttyUSB0)."),
    boards_dir: List[Path] = typer.Option([], help="Extra folder of board profiles (repeatable)."),
    recover: Optional[Path] = typer.Option(None, help="Finish an accuracy run folder left 'running' by a crash "
                                                      "or a kill, from the outputs it journalled."),
    json_out: bool = typer.Option(False, "--json", help="Print the stored run as JSON on stdout."),
) -> None:
    """Accuracy of a model on a board against its FP32 baseline, with edge cases and a CI gate."""
    from edgebench.bench.accuracy import AccuracyOptions, gate_failures, recover_accuracy, run_accuracy
    from edgebench.boards.registry import get_profile
    from edgebench.cli.output import emit_json, get_console, get_err_console
    from edgebench.errors import GateFailed, UsageError
    from edgebench.results import store

    err = get_err_console()
    if recover is not None:
        if model is not None or baseline is not None or data is not None:
            raise UsageError("give a model to evaluate or --recover RUN_DIR, not both")
        result = recover_accuracy(recover)
        emit_json(store.read_result(recover)) if json_out else print_accuracy(get_console(), result, recover)
        return
    missing = [name for name, v in (("MODEL", model), ("--baseline", baseline), ("--data", data)) if v is None]
    if missing:
        raise UsageError(f"missing {', '.join(missing)}",
                         "edgebench accuracy MODEL.tflite --baseline FP32.tflite --data TEST")
    sev = _numbers(severities, "--severities", kind=int)
    data_options = _preprocessing(preprocess, {"scale": scale, "mean": mean, "std": std, "size": size,
                                               "resize": resize, "channels": channels}, err)
    opts = AccuracyOptions(
        kernels=kernels, threads=threads, delegate=delegate, baseline_on_board=baseline_on_board,
        baseline_kernels=baseline_kernels, edge_cases=edge_cases, edge_set=str(edge_set) if edge_set else None,
        families=tuple(f.strip() for f in families.split(",") if f.strip()) if families else None,
        severities=sev or (), seed=seed, value_range=_numbers(value_range, "--value-range", 2),
        max_drop_points=max_drop, max_ece=max_ece, max_edge_drop_points=max_edge_drop, gate_on=gate_on,
        calib_fraction=calib_fraction, chunk_size=chunk, data_options=data_options)
    profile = get_profile(board, extra_dirs=tuple(boards_dir))
    result, run_dir = run_accuracy(model, baseline, data, profile, opts, runs_root=runs_dir, url=url,
                                   progress=_progress(err))
    if json_out:
        emit_json(store.read_result(run_dir))
    else:
        print_accuracy(get_console(), result, run_dir)
    failed = gate_failures(result)
    if failed:
        raise GateFailed("compression check failed: " + "; ".join(failed), hint=f"run stored in {run_dir}")
