"""`edgebench check RUN...`: the ways to fool the masses, as named rules with verdicts and evidence."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from edgebench import ranges as R
from edgebench.cli import options as opt
from edgebench.errors import GateFailed, UsageError
from edgebench.results.kinds import kind_of

_STYLE = {"pass": "green", "warn": "yellow", "fail": "bold red", "not applicable": "dim"}


def verdict_table(report):
    # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    t = Table(title=f"check of {len(report.runs)} run{'s' if len(report.runs) != 1 else ''}: "
                    + ", ".join(f"{n} {k}" for k, n in report.counts.items() if n), title_justify="left",
              box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, show_lines=True)
    t.add_column("verdict", no_wrap=True)
    t.add_column("rule", max_width=26, overflow="fold")
    t.add_column("evidence", ratio=1, overflow="fold")
    for v in report.verdicts:
        evidence = v.evidence + (f" → {v.remedy}" if v.remedy and v.verdict in ("warn", "fail") else "")
        shown = "n/a" if v.verdict == "not applicable" else v.verdict
        t.add_row(f"[{_STYLE[v.verdict]}]{shown}[/]", f"{escape(v.title)}\n[dim]{v.rule}[/]", escape(evidence))
    return t


def gated_comparisons(pairs: list, max_slowdown: float, baseline: Optional[str], stage: str,
                      only_these: bool, allow_different: bool, runs_dir: Path) -> list:
    """Every latency run of ``pairs`` (``[(folder, result)]``) of the baseline's label against the
    baseline (``baseline``: a reference among them; default the first latency run), each compared as
    ``compare`` does (:func:`edgebench.bench.compare.compare_stored`: every session on record of each
    side unless ``only_these``) and gated at ``max_slowdown``."""
    # lazy: pydantic (import pydantic 199 ms measured), kept off `edgebench VERB --help`
    from edgebench.bench.compare import compare_stored
    from edgebench.bench.conditions import condition_differences, refused_differences, short_value
    from edgebench.results.store import resolve_run

    lat = [(d, r) for d, r in pairs if kind_of(r).repeats and r.stage(stage).median_s]
    if baseline is not None:
        ref = resolve_run(baseline, runs_dir).resolve()
        base = next(((d, r) for d, r in lat if d.resolve() == ref), None)
        if base is None:
            raise UsageError(f"--baseline-run {baseline} is not a run with {stage} latency among the runs checked",
                             "name one of the runs given (id, folder name prefix or folder)")
    elif lat:
        base = lat[0]
    else:
        raise UsageError(f"--max-slowdown: no run with {stage} latency among the runs checked",
                         "check bench, soak, energy or mlperf-tiny runs")
    cands = [(d, r) for d, r in lat if r.run_id != base[1].run_id and r.label == base[1].label]
    if not cands:
        raise UsageError("--max-slowdown needs a second latency run of the same label to compare with the baseline",
                         "give the baseline and the candidate runs")
    out = []
    for d, r in cands:
        refused = refused_differences(condition_differences(base[1], r))
        if refused and not allow_different:
            listed = "; ".join(f"{x['condition']} {short_value(x['baseline'])} vs {short_value(x['candidate'])}"
                               for x in refused)
            raise UsageError(f"refusing to gate {r.run_id} against {base[1].run_id}: measured under different "
                             f"{listed}", "pass --allow-different to gate anyway")
        comp = compare_stored(base[0], base[1], d, r, stage=stage, only_these=only_these)
        comp.apply_gate(max_slowdown, stage)
        out.append(comp)
    return out


def check(
    runs: List[str] = typer.Argument(..., help="Runs to check together: ids, folder name prefixes or folders."),
    runs_dir: Path = opt.runs_dir(writes=False),
    strict: bool = typer.Option(False, "--strict", help="Exit 2 when any rule fails (a failed gate of a run "
                                                        "included; warnings, such as a default threshold "
                                                        "exceeded, never)."),
    max_slowdown: Optional[float] = typer.Option(
        None, "--max-slowdown", callback=opt.within(R.MAX_SLOWDOWN),
        help="Gate every latency run against the baseline as `compare` does: exit 2 when one is slower than X "
             "times the baseline beyond the interval's doubt, exit 3 when the gate cannot decide (X below the "
             "smallest slowdown detected with 80% power)."),
    baseline: Optional[str] = typer.Option(None, "--baseline-run",
                                           help="The run the others are gated against (default: the first "
                                                "latency run given)."),
    stage: str = typer.Option("e2e", help="The stage the --max-slowdown gate is on (e2e, prep, set, invoke, get)."),
    only_these: bool = typer.Option(False, "--only-these",
                                    help="Gate on these runs alone (by default every session on record of each "
                                         "side in the runs folder is combined, as in compare)."),
    allow_different: bool = typer.Option(False, "--allow-different",
                                         help="Gate even runs on another board, CPU, scenario or batch."),
    json_out: bool = opt.json_flag("the verdicts"),
) -> None:
    """Check runs against the twelve ways to fool the masses and the edge reality check (n/a: not applicable).

    With --max-slowdown, every latency run is also compared with the baseline as `compare` does
    (sessions on record of each side combined, MDE printed). Exit 2: a gate failed; exit 3: it
    cannot decide."""
    # lazy: numpy, pydantic, rich (import numpy 460 ms, pydantic 199 ms, rich 52 ms), kept off `edgebench VERB --help`
    from edgebench.bench.sessions import check_on_record
    from edgebench.cli.output import emit_json, get_console
    from edgebench.report.check import slowdown_gate
    from edgebench.results.model import STAGES
    from edgebench.results.store import read_results

    if stage not in STAGES:
        raise UsageError(f"unknown stage {stage!r}", f"use one of {', '.join(STAGES)}")
    pairs = read_results(runs, runs_dir)
    comps = (gated_comparisons(pairs, max_slowdown, baseline, stage, only_these, allow_different, runs_dir)
             if max_slowdown is not None else [])
    report = check_on_record(pairs)
    if comps:
        report.verdicts.append(slowdown_gate(comps))
    if json_out:
        emit_json({**report.to_dict(), "comparisons": [c.to_dict() for c in comps]})
    else:
        out = get_console()
        out.print(verdict_table(report))
        for c in comps:
            out.print(c.sentence(stage), markup=False, soft_wrap=True)
            out.print(c.case_sentence(), markup=False, soft_wrap=True)
            out.print(c.mde_advice(max_slowdown, stage), markup=False, soft_wrap=True)
            out.print(c.gate_line(), markup=False, soft_wrap=True)
    for c in comps:
        if c.gate["failed"]:
            c.raise_for_gate()
    for c in comps:
        c.raise_for_gate()
    if strict and report.failed:
        failed = [v.rule for v in report.verdicts if v.verdict == "fail"]
        raise GateFailed(f"check --strict: {len(failed)} rule{'s' if len(failed) != 1 else ''} failed "
                         f"({', '.join(failed)})")
