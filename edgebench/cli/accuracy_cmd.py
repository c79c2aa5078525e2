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
            console.print(f"[dim]{ev['role']} {ev['model']}: {ev['done']:,}/{ev['total']:,} samples "
                          f"({ev['slice']}){f', {rate:,.0f}/s' if rate else ''}[/]" + (" " * 8 if live else ""),
                          end="\n" if ev["done"] == ev["total"] else "\r")
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

    a = result.extra["accuracy"]
    bp = a["baseline"]["model"]["precision"].upper()
    cp = a["candidate"]["model"]["precision"].upper()
    t = Table(title=f"accuracy on {escape(result.scenario['inputs']['source'])} "
                    f"(n={a['paired']['n']:,}, {result.label}; 95% Wilson CIs)", title_justify="left")
    for col in ("model", "where, kernels", "top-1 (95% CI)", "top-5 (95% CI)", "ECE"):
        t.add_column(col)
    for role in ("baseline", "candidate"):
        m, acc, rt = a[role], a["accuracy"][role], a[role]["runtime"]
        how = rt.get("delegate") or rt.get("kernels")
        t.add_row(f"{escape(m['model']['name'])} ({role})", f"{m['board']}, {how}, {rt.get('threads')} thr",
                  _acc(acc["top1"]), _acc(acc["top5"]), f"{a['calibration'][role]['ece']:.4f}")
    console.print(t)
    pr, res = a["paired"], a["resolution"]
    console.print(f"paired: agreement {_pct(pr['agreement_rate'], 1)}, flips right→wrong "
                  f"{pr['flips_right_to_wrong']}, wrong→right {pr['flips_wrong_to_right']}, McNemar exact "
                  f"p={pr['mcnemar_p']:.3g}")
    console.print("relative: " + "; ".join(escape(s) for s in a["relative"]["statements"]))
    mdd = "no difference" if res["mdd_points"] is None else f"{res['mdd_points']:.2f} points"
    console.print(f"resolution: smallest difference this test set resolves (power {res['power']:.0%}, "
                  f"α={res['alpha']}): {mdd}; observed {pr['diff_points']:+.2f} points "
                  f"(95% CI {pr['diff_ci_low_points']:+.2f} to {pr['diff_ci_high_points']:+.2f})")
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
    vt = Table(title="compression validation", title_justify="left")
    for col in ("metric", bp, cp, "threshold", "acceptable?"):
        vt.add_column(col)
    for r in v["rows"]:
        fmt = (lambda x: "–" if x is None else f"{x:.4f}") if r["unit"] in ("ece", "ratio") else _pct
        thr = "–" if r["threshold"] is None else (
            f"drop ≤ {r['threshold']:g} pt" if "drop" in r["rule"] else f"≤ {r['threshold']:g}")
        ok = {True: "[green]yes[/]", False: "[red]NO[/]", None: "not gated"}[r["acceptable"]]
        vt.add_row(escape(r["metric"]), fmt(r["baseline"]), fmt(r["candidate"]), thr, ok)
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


@app.command()
def accuracy(
    model: Path = typer.Argument(..., help="The model under test (.tflite, e.g. INT8)."),
    baseline: Path = typer.Option(..., "--baseline", help="The FP32 model it came from (.tflite)."),
    data: str = typer.Option(..., "--data", help="Test set: digits, digits:test, an .npz (x, y) or an image folder."),
    board: str = typer.Option("host", "--board", "-b", help="Board the model under test runs on."),
    baseline_on_board: bool = typer.Option(False, help="Run the baseline on the board too (default: host board)."),
    edge_cases: bool = typer.Option(False, "--edge-cases", help="Evaluate the built-in perturbation families."),
    edge_set: Optional[Path] = typer.Option(None, help="A labelled edge-case .npz (x, y, optional slice)."),
    families: Optional[str] = typer.Option(None, help="Comma-separated subset of the perturbation families."),
    severities: str = typer.Option("1,2,3,4,5", help="Perturbation severities (1-5), comma-separated."),
    seed: int = typer.Option(0, help="Seed of the perturbations and of the calibration split."),
    value_range: Optional[str] = typer.Option(None, help="LOW,HIGH the inputs live in (default: observed)."),
    max_drop: float = typer.Option(1.0, help="Gate: maximum top-1 drop in points (inf: not gated)."),
    max_ece: float = typer.Option(0.05, help="Gate: maximum ECE of the model under test (inf: not gated)."),
    max_edge_drop: float = typer.Option(3.0, help="Gate: maximum drop on the worst edge-case slice, points."),
    calib_fraction: float = typer.Option(0.5, help="Share of the test set that fits the temperature."),
    kernels: str = typer.Option("xnnpack", help="Kernels of the model under test: xnnpack, builtin, reference."),
    threads: int = typer.Option(1, help="Interpreter threads of the model under test."),
    delegate: Optional[str] = typer.Option(None, help="Delegate of the model under test, e.g. edgetpu."),
    baseline_kernels: str = typer.Option("reference", help="Kernels of the baseline (default: reference)."),
    scale: Optional[str] = typer.Option(None, help="Declared preprocessing: x * SCALE (e.g. 1/255)."),
    mean: Optional[str] = typer.Option(None, help="Declared preprocessing: subtract MEAN (one or per channel)."),
    std: Optional[str] = typer.Option(None, help="Declared preprocessing: divide by STD (one or per channel)."),
    size: Optional[str] = typer.Option(None, help="Image folders: expected H,W."),
    resize: Optional[str] = typer.Option(None, help="Image folders: resize to H,W (bilinear)."),
    channels: Optional[int] = typer.Option(None, help="Image folders: 1 (greyscale) or 3 (RGB)."),
    chunk: Optional[int] = typer.Option(None, help="Samples per infer request (default: up to 4 MB, 2048)."),
    runs_dir: Path = typer.Option(Path("runs"), help="Where run folders are written."),
    url: Optional[str] = typer.Option(None, help="Override the board's address (ssh://user@host, /dev/ttyUSB0)."),
    boards_dir: List[Path] = typer.Option([], help="Extra folder of board profiles (repeatable)."),
    json_out: bool = typer.Option(False, "--json", help="Print the stored run as JSON on stdout."),
) -> None:
    """Accuracy of a model on a board against its FP32 baseline, with edge cases and a CI gate."""
    from edgebench.bench.accuracy import AccuracyOptions, gate_failures, run_accuracy
    from edgebench.boards.registry import get_profile
    from edgebench.cli.output import emit_json, get_console, get_err_console
    from edgebench.errors import GateFailed
    from edgebench.results import store

    sev = _numbers(severities, "--severities", kind=int)
    data_options = {"scale": (_numbers(scale, "--scale", 1) or (None,))[0], "mean": _numbers(mean, "--mean"),
                    "std": _numbers(std, "--std"), "size": _numbers(size, "--size", 2, int),
                    "resize": _numbers(resize, "--resize", 2, int), "channels": channels}
    opts = AccuracyOptions(
        kernels=kernels, threads=threads, delegate=delegate, baseline_on_board=baseline_on_board,
        baseline_kernels=baseline_kernels, edge_cases=edge_cases, edge_set=str(edge_set) if edge_set else None,
        families=tuple(f.strip() for f in families.split(",") if f.strip()) if families else None,
        severities=sev or (), seed=seed, value_range=_numbers(value_range, "--value-range", 2),
        max_drop_points=max_drop, max_ece=max_ece, max_edge_drop_points=max_edge_drop,
        calib_fraction=calib_fraction, chunk_size=chunk,
        data_options={k: v for k, v in data_options.items() if v is not None})
    profile = get_profile(board, extra_dirs=tuple(boards_dir))
    err = get_err_console()
    result, run_dir = run_accuracy(model, baseline, data, profile, opts, runs_root=runs_dir, url=url,
                                   progress=_progress(err))
    if json_out:
        emit_json(store.read_result(run_dir))
    else:
        print_accuracy(get_console(), result, run_dir)
    failed = gate_failures(result)
    if failed:
        raise GateFailed("compression check failed: " + "; ".join(failed), hint=f"run stored in {run_dir}")
