"""Rich rendering of stored results for the terminal (level 5)."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from edgebench.report import format as fmt
from edgebench.results.model import STAGES


def latency_table(result, title: str | None = None) -> Table:
    lat = result.latency
    t = Table(title=title or f"{result.model.get('name')} on {result.board.get('name')} "
                             f"[{result.label}]", title_justify="left")
    for col in ("stage", "median", "95% CI of median", "p90", "p99", "p99.9", "mean", "std", "MAD", "min", "n"):
        t.add_column(col, justify="left" if col == "stage" else "right")
    for stage in STAGES:
        s = lat.get(stage)
        if not s:
            continue
        t.add_row(stage, fmt.duration(s["median_s"]), fmt.duration_range(s["ci_low_s"], s["ci_high_s"]),
                  fmt.duration(s["p90_s"]), fmt.duration(s["p99_s"]), fmt.duration(s["p999_s"]),
                  fmt.duration(s["mean_s"]), fmt.duration(s["std_s"]), fmt.duration(s["mad_s"]),
                  fmt.duration(s["min_s"]), fmt.count(s["n"]))
    return t


def print_run(console: Console, result, run_dir=None) -> None:
    console.print(latency_table(result))
    cs, wu, tp, st = result.cold_start, result.warmup, result.throughput, result.stopping
    if cs:
        console.print(f"cold start: model load {fmt.duration(cs.get('load_s'))}, "
                      f"first inference {fmt.duration(cs.get('first_inference_s'))}")
    if wu:
        console.print(f"warm-up: {wu.get('n_warmup')} inferences ({fmt.duration(wu.get('duration_s'))}), "
                      f"end detected by {wu.get('method')}")
    if tp:
        console.print(f"throughput: {fmt.rate(tp.get('per_s'))} inferences/s ({tp.get('definition')})")
    if result.extra.get("achieved_rate_hz") is not None:
        console.print(f"rate: requested {result.extra['requested_rate_hz']:g}/s, "
                      f"achieved {result.extra['achieved_rate_hz']:.2f}/s")
    if st:
        mark = "reached" if st.get("target_reached") else "NOT reached"
        console.print(f"precision target {mark}: {st.get('reason')}")
    for w in result.warnings:
        console.print(f"[yellow]warning ({w.get('code')}):[/] {w.get('message')} — {w.get('remedy')}")
    claim = result.extra.get("claim")
    if claim:
        console.print(f"[bold]claim:[/] {claim}")
    if run_dir is not None:
        console.print(f"run stored in {run_dir} ({result.status})")
