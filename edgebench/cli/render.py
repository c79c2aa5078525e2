"""Rich rendering of stored results for the terminal (level 5)."""
from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from edgebench.report import format as fmt
from edgebench.results.model import STAGES


def _unit(seconds: float) -> tuple[str, float]:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return unit, scale
    return "µs", 1e-6


def latency_table(result, title: str | None = None) -> Table:
    """Stage latencies in one unit (chosen from the end-to-end median) so columns stay narrow."""
    lat = result.latency
    unit, scale = _unit((lat.get("e2e") or {}).get("median_s") or 1e-6)
    heading = title or (f"{result.model.get('name')} on {result.board.get('name')}, "
                        f"{result.label}, times in {unit}")
    # no borders, one space between columns: ten columns fit 80 characters without cutting a header
    t = Table(title=escape(heading), title_justify="left", box=None, pad_edge=False, padding=(0, 1, 0, 0),
              header_style="bold underline")
    for col in ("stage", "median", "95% CI", "p90", "p99", "p99.9", "mean", "MAD", "min", "n"):
        t.add_column(col, justify="left" if col == "stage" else "right", no_wrap=True)

    def v(x):
        if x is None:
            return "–"
        val = x / scale
        return f"{val:,.0f}" if val >= 1000 else f"{val:.3g}"

    for stage in STAGES:
        s = lat.get(stage)
        if not s:
            continue
        ci = "–" if s["ci_low_s"] is None else f"{v(s['ci_low_s'])}–{v(s['ci_high_s'])}"
        t.add_row(stage, v(s["median_s"]), ci, v(s["p90_s"]), v(s["p99_s"]), v(s["p999_s"]),
                  v(s["mean_s"]), v(s["mad_s"]), v(s["min_s"]), fmt.count(s["n"]))
    return t


def print_run(console: Console, result, run_dir=None) -> None:
    if result.latency:
        console.print(latency_table(result))
    cs, wu, tp, st = result.cold_start, result.warmup, result.throughput, result.stopping
    if cs:
        console.print(f"cold start: model load {fmt.duration(cs.get('load_s'))}, "
                      f"first inference {fmt.duration(cs.get('first_inference_s'))}")
    if wu:
        console.print(f"warm-up: {fmt.count(wu.get('n_warmup'))} inferences ({fmt.duration(wu.get('duration_s'))}), "
                      f"end detected by {wu.get('method')}")
    e2e = result.latency.get("e2e") or {}
    if e2e.get("ci_method"):
        runs = e2e.get("per_run") or []
        medians = ", ".join(fmt.duration(r["median_s"]) for r in runs) if len(runs) > 1 else None
        console.print(f"interval: {e2e['ci_method']}" + (f"; run medians {medians}" if medians else "")
                      + (f"; lag-1 autocorrelation {e2e['lag1_autocorr']:.2f}, effective samples "
                         f"{fmt.count(round(e2e['n_eff']))} of {fmt.count(e2e['n'])}"
                         if e2e.get("n_eff") is not None else ""))
    if tp:
        console.print(f"throughput: {fmt.rate(tp.get('per_s'))} inferences/s achieved ({tp.get('definition')})"
                      + (f"; 1/median would say {fmt.rate(tp['inverse_median_per_s'])}/s"
                         if tp.get("inverse_median_per_s") else ""))
    if result.extra.get("achieved_rate_hz") is not None:
        console.print(f"rate: requested {result.extra['requested_rate_hz']:g}/s, "
                      f"achieved {result.extra['achieved_rate_hz']:.2f}/s")
    if st:
        mark = "reached" if st.get("target_reached") else "NOT reached"
        console.print(f"precision target {mark}: {st.get('reason')}")
    for w in result.warnings:
        console.print(f"[yellow]warning ({w.get('code')}):[/] {escape(str(w.get('message')))} — "
                      f"{escape(str(w.get('remedy')))}")
    claim = result.extra.get("claim")
    if claim:
        console.print(f"[bold]claim:[/] {escape(claim)}")
    if run_dir is not None:
        console.print(f"run stored in {run_dir} ({result.status})")
