"""`edgebench compare A B`: ratio of medians per stage with the honest interval; a CI regression gate."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from edgebench import ranges as R
from edgebench.cli import options as opt
from edgebench.errors import ResultError, UsageError
from edgebench.report import format as fmt


def comparison_table(comp, a, b):
    # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
    from rich.markup import escape
    from rich.table import Table


    t = Table(title=escape(f"{b.model.name} ({b.run_id}) against {a.model.name} ({a.run_id}), "
                           f"{comp.label}; speed-up = median(A) / median(B), > 1: B faster"), title_justify="left",
              box=None, pad_edge=False, padding=(0, 1, 0, 0), header_style="bold underline")
    m = len(comp.stages)
    adj = f"{100 - 5 / m:.3g}% CI (Holm)" if m > 1 else None
    for col in ("stage", "A", "B", "speed-up", "95% CI", *((adj,) if adj else ()), "p", "Holm p", "verdict", "runs"):
        t.add_column(col, justify="left" if col in ("stage", "verdict") else "right", no_wrap=True)

    def p(x):
        return fmt.p_value(x).removeprefix("p=").replace("p<", "<")

    for stage, s in comp.stages.items():
        t.add_row(stage, fmt.duration(a.stage(stage).median_s), fmt.duration(b.stage(stage).median_s), f"{s['ratio']:.3f}",
                  f"{s['ci_low']:.3f}–{s['ci_high']:.3f}",
                  *((f"{s['ci_adjusted_low']:.3f}–{s['ci_adjusted_high']:.3f}",) if adj else ()),
                  p(s["p_value"]), p(s["p_holm"]),
                  s["verdict"], f"{s['runs_a']}/{s['runs_b']}")
    return t


def compare(
    a: str = typer.Argument(..., help="Baseline run: id, folder name prefix, folder, or 'latest'."),
    b: str = typer.Argument(..., help="Candidate run compared against it."),
    runs_dir: Path = opt.runs_dir(writes=False),
    stage: str = typer.Option("e2e", help="Headline stage (e2e, prep, set, invoke, get)."),
    allow_different: bool = typer.Option(False, "--allow-different",
                                         help="Compare even on another board, CPU, scenario or batch (refused by "
                                              "default: the ratio would not be about the models)."),
    max_slowdown: Optional[float] = typer.Option(
        None, "--max-slowdown", callback=opt.within(R.MAX_SLOWDOWN),
        help="Exit 2 when B is slower than X times A beyond the interval's doubt (lower bound of the slowdown "
             "interval > X); exit 3 when it cannot decide (X below the smallest slowdown detected with 80% power)."),
    only_these: bool = typer.Option(False, "--only-these",
                                    help="Compare these two runs alone (by default every session on record of "
                                         "each side in the runs folder is combined)."),
    json_out: bool = opt.json_flag("the comparison"),
) -> None:
    """Compare two runs: ratio of medians per stage, run- and dependence-aware interval, Holm across stages.

    Every session on record of each side (same model, board, host, conditions) is combined unless
    --only-these; the smallest difference the comparison detects (80% power) is printed. Exit 2:
    the gate failed; exit 3: the gate cannot decide (its threshold lies below that detectable
    difference)."""
    # lazy: pydantic, rich (import pydantic 199 ms, rich 52 ms measured), kept off `edgebench VERB --help`
    from edgebench.bench.compare import compare_stored
    from edgebench.bench.conditions import condition_differences, refused_differences, short_value
    from edgebench.cli.output import emit_json, get_console
    from edgebench.results.model import STAGES, refuse_mixed_labels
    from edgebench.results.store import read_result, read_samples, resolve_run

    if stage not in STAGES:
        raise UsageError(f"unknown stage {stage!r}", f"use one of {', '.join(STAGES)}")
    if max_slowdown is not None and not max_slowdown > 0:
        raise UsageError(f"--max-slowdown must be a positive ratio, got {max_slowdown}", "e.g. --max-slowdown 1.05")
    da, db = resolve_run(a, runs_dir), resolve_run(b, runs_dir)
    ra, rb = read_result(da), read_result(db)
    refuse_mixed_labels(ra, rb)
    if "profile" in (ra.kind, rb.kind):     # two profile runs: layer by layer (bench/profile_compare.py)
        # lazy: pydantic (import pydantic 199 ms measured), kept off `edgebench VERB --help`
        from edgebench.bench.profile_compare import compare_layers
        from edgebench.cli.render.profile import print_layer_comparison

        layers = compare_layers(ra, read_samples(da), rb, read_samples(db))
        emit_json(layers) if json_out else print_layer_comparison(get_console(), layers, ra, rb)
        return
    for r, d in ((ra, da), (rb, db)):
        if not r.latency.get(stage):
            raise ResultError(f"run {d.name} ({r.kind}) has no {stage} latency to compare",
                              "compare runs of bench, soak, energy or mlperf-tiny")
    diffs = condition_differences(ra, rb)
    refused = refused_differences(diffs)
    if refused and not allow_different:
        listed = "; ".join(f"{d['condition']} {short_value(d['baseline'])} vs {short_value(d['candidate'])}"
                           for d in refused)
        raise UsageError(f"refusing to compare runs measured under different {listed}: the ratio would not be "
                         "about the models", "pass --allow-different to compare anyway (the differences are "
                                             "printed beside the result)")
    stored = compare_stored(da, ra, db, rb, stage=stage, only_these=only_these)
    gate = stored.apply_gate(max_slowdown, stage) if max_slowdown is not None else None
    if json_out:
        emit_json(stored)
    else:
        out = get_console()
        out.print(comparison_table(stored, ra, rb))
        out.print(stored.sentence(stage), markup=False, soft_wrap=True)
        out.print(stored.case_sentence(), markup=False, soft_wrap=True)
        if diffs:
            out.print(f"conditions differ ({len(diffs)}):", markup=False)
            for d in diffs:
                out.print(f"  {d['condition']}: {short_value(d['baseline'])} (A) vs {short_value(d['candidate'])} (B)",
                          markup=False)
        else:
            out.print("conditions: every recorded condition is the same in both runs", markup=False)
        out.print(stored.mde_advice(max_slowdown, stage), markup=False, soft_wrap=True)
        if gate is not None:
            out.print(stored.gate_line(), markup=False, soft_wrap=True)
    stored.raise_for_gate()
