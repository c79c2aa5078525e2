"""Renderers of the command line (level 5): how results look on a terminal, in one home.

A verb measures and stores; what it prints comes from here, so that ``edgebench runs ID``
shows a stored run exactly as the verb that made it did, and no verb imports another.

* this module: the latency table and run summary (bench, demo), the runs listing,
  :func:`show_run` (any stored run, by the printer of the verb that wrote it), the live progress
  line of a latency run,
  and :func:`print_warnings` (each warning with its remedy);
* :mod:`.accuracy`, :mod:`.thermal` (soak, sweep), :mod:`.energy`, :mod:`.verify`: one per
  kind of result; :mod:`.mac_rate`: the per-MAC line under a microcontroller's latency table.

Verbs import this module at their top, so ``edgebench VERB --help`` loads it: rich (which typer's
help loads anyway) and the text formats are imported here; the run record, the acks and the
report's modules inside the functions that use them (0.07-0.13 s each, ``python -X importtime``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from rich.markup import escape
from rich.table import Table

from edgebench.cli.verbs import for_kind, printer
from edgebench.report import format as fmt

if TYPE_CHECKING:     # the run record costs 0.11 s at `edgebench VERB --help` (-X importtime)
    from edgebench.results.model import RunResult


def print_warnings(console, result: RunResult, skip: tuple = (), run_dir=None) -> None:
    """Each warning of a result on one line (code, message, remedy), the ones that change a conclusion
    first (:mod:`edgebench.report.warnings`); codes acknowledged for the run's runs folder
    (``edgebench ack``) folded into one line; codes in ``skip`` left out."""
    # inside: 0.13 s and 0.07 s at `edgebench VERB --help` (-X importtime)
    from edgebench.report.warnings import acknowledged_line, foldable, rank
    from edgebench.results.acks import acks_for

    problems: list = []
    acks = foldable(acks_for([run_dir], problems)) if run_dir is not None else {}
    for text in problems:
        console.print(f"warning: {text}", style="yellow", markup=False, soft_wrap=True)
    mine = sorted((w for w in result.warnings if str(w.code) not in skip),
                  key=lambda w: rank(str(w.code)))          # stable: a run's own order within a rank
    for w in mine:
        if str(w.code) not in acks:
            console.print(f"[yellow]warning ({escape(str(w.code))}):[/] {escape(str(w.message))} — "
                          f"{escape(str(w.remedy))}")
    line = acknowledged_line({c: acks[c] for c in dict.fromkeys(str(w.code) for w in mine) if c in acks})
    if line:
        console.print(line, style="dim", markup=False, soft_wrap=True)


def memory_line(result: RunResult) -> Optional[str]:
    """``memory: peak RSS 47.3 MiB (the agent process's peak resident memory (VmHWM))`` or a microcontroller's
    arena, scratch and model with the fit against the board's (``extra.memory``); None without figures."""
    from edgebench.report.summary import fit_text, memory_text  # inside: 0.12 s at `VERB --help`

    mem = result.extra.memory
    text = memory_text(mem)
    if not text:
        return None
    fit = fit_text(mem)
    return f"memory: {text} ({mem.basis})" + (f"; {fit}" if fit else "")


def _unit(seconds: float) -> tuple[str, float]:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return unit, scale
    return "µs", 1e-6


def latency_table(result: RunResult, title: str | None = None) -> Table:
    """Stage latencies in one unit (chosen from the end-to-end median) so columns stay narrow."""
    from edgebench.results.model import STAGES  # inside: the run record costs 0.11 s at `VERB --help`

    lat = result.latency
    unit, scale = _unit(result.stage("e2e").median_s or 1e-6)
    heading = title or (f"{result.model.name} on {result.board.name}, "
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
        ci = "–" if s.ci_low_s is None else f"{v(s.ci_low_s)}–{v(s.ci_high_s)}"
        t.add_row(stage, v(s.median_s), ci, v(s.p90_s), v(s.p99_s), v(s.p999_s),
                  v(s.mean_s), v(s.mad_s), v(s.min_s), fmt.count(s.n))
    return t


def print_run(console, result: RunResult, run_dir=None, warnings: bool = True) -> None:
    """A latency run (bench, demo): the stage table, then one line per finding (``warnings=False``: its
    warnings left to a summary of several runs, which groups them)."""
    if result.latency:
        console.print(latency_table(result))
    from edgebench.cli.render.mac_rate import estimate_lines, mac_rate_line  # inside: it imports the run record

    per_mac = mac_rate_line(result)   # microcontrollers: instructions (or cycles) per MAC
    if per_mac:
        console.print(per_mac, markup=False)
    for line in estimate_lines(result):   # MLPerf Tiny on QEMU: the cycle model beside the published figures
        console.print(line, markup=False, soft_wrap=True)
    cs, wu, tp, st = result.cold_start, result.warmup, result.throughput, result.stopping
    if cs:
        console.print(f"cold start: model load {fmt.duration(cs.load_s)}, "
                      f"first inference {fmt.duration(cs.first_inference_s)}")
    if wu:
        console.print(f"warm-up: {fmt.count(wu.n_warmup)} inferences ({fmt.duration(wu.duration_s)}), "
                      f"end detected by {wu.method}")
    e2e = result.stage("e2e")
    if e2e.ci_method:
        runs = e2e.per_run or []
        medians = ", ".join(fmt.duration(r.median_s) for r in runs) if len(runs) > 1 else None
        console.print(f"interval: {e2e.ci_method}" + (f"; run medians {medians}" if medians else "")
                      + (f"; lag-1 autocorrelation {e2e.lag1_autocorr:.2f}, effective samples "
                         f"{fmt.count(round(e2e.n_eff))} of {fmt.count(e2e.n)}"
                         if e2e.n_eff is not None and e2e.lag1_autocorr is not None else ""))
        if (e2e.sessions or 1) > 1:
            meds = ", ".join(fmt.duration(m) for m in e2e.session_medians_s or [])
            console.print(f"sessions: {e2e.sessions} (this invocation first: {meds}); a re-run's median is "
                          f"expected in {fmt.duration_range(e2e.rerun_low_s, e2e.rerun_high_s)}")
    if tp:
        host, lo, hi = tp.host_limited_per_s, tp.ci_low_per_s, tp.ci_high_per_s
        what = "of emulated device time" if host is not None else "achieved"
        ci = f", 95% CI {fmt.rate(lo)}–{fmt.rate(hi)}/s" if lo is not None else ""
        console.print(f"throughput: {fmt.rate(tp.per_s)} inferences/s {what}{ci} ({tp.definition})"
                      + (f"; host-limited {fmt.rate(host)}/s (the emulator and the serial link)"
                         if host is not None else "")
                      + (f"; 1/median would say {fmt.rate(tp.inverse_median_per_s)}/s"
                         if tp.inverse_median_per_s else ""))
    if result.extra.achieved_rate_hz is not None:
        console.print(f"rate: requested {fmt.rate(result.extra.requested_rate_hz)}/s, "
                      f"achieved {result.extra.achieved_rate_hz:.2f}/s")
    if st:
        mark = "reached" if st.target_reached else "NOT reached"
        console.print(f"precision target {mark}: {st.reason}")
    memory = memory_line(result)
    if memory:
        console.print(memory, markup=False, soft_wrap=True)
    if warnings:
        print_warnings(console, result, run_dir=run_dir)
    claim = result.extra.claim
    if claim:
        console.print(f"[bold]claim:[/] {escape(claim)}")
    if run_dir is not None:
        console.print(f"run stored in {run_dir} ({result.status})")


def show_run(console, result: RunResult, run_dir) -> None:
    """Print a stored run the way the verb that made it does: the printer its verb declares
    (:data:`edgebench.cli.verbs.VERBS`); a kind no verb here writes gets the plain run summary."""
    printer(for_kind(result.kind))(console, result, run_dir)


def runs_table(rows: list, title: str):
    """The listing: short id, kind, model, board, label, headline figure, status (fits 80 columns;
    the unit of the interval is the median's unless the interval says otherwise)."""
    from edgebench.results.table import short_ids  # inside: 0.13 s at `VERB --help`

    ids = short_ids([r["run_id"] for r in rows])
    t = Table(title=title, title_justify="left", box=None, pad_edge=False, padding=(0, 1, 0, 0),
              header_style="bold underline")
    t.add_column("id", no_wrap=True)
    t.add_column("kind", no_wrap=True)
    t.add_column("model", overflow="fold")
    t.add_column("board", overflow="fold")
    t.add_column("label", no_wrap=True)
    t.add_column("median e2e [95% CI]", justify="right", no_wrap=True)
    t.add_column("status", no_wrap=True)
    t.add_column("warn", justify="right", no_wrap=True)
    for r in rows:
        if r["e2e_median_s"] is not None:
            median = fmt.duration(r["e2e_median_s"])
            ci = fmt.duration_range(r["e2e_ci_low_s"], r["e2e_ci_high_s"])
            if ci.rsplit(" ", 1)[-1] == median.rsplit(" ", 1)[-1]:
                ci = ci.rsplit(" ", 1)[0]
            figure = f"{median} [{ci}]"
        elif r["top1"] is not None:
            figure = f"top-1 {fmt.percent(r['top1'])}"
        elif r["temp_max_c"] is not None:
            figure = f"max {r['temp_max_c']:.1f} °C"
        else:
            figure = "–"
        model = str(r["model"])
        if r["precision"] and str(r["precision"]).lower() not in model.lower():
            model += f" {r['precision']}"
        t.add_row(ids[r["run_id"]], r["kind"], model, str(r["board"]), r["label"], figure,
                  "gate failed" if r.get("gate_failed") else "ok" if r["status"] == "complete" else r["status"],
                  str(r["warnings"] or ""))
    return t


def progress_printer(console, label: str):
    """A progress callback that shows the precision reached so far on one live line."""
    def show(ev: dict) -> None:
        if ev["event"] == "connect":
            console.print(f"[dim]{label}: connecting to {ev['board']}…[/]")
        elif ev["event"] == "load":
            console.print(f"[dim]{label}: loading {ev['model']}…[/]")
        elif ev["event"] == "window":
            console.print(f"[dim]{label}: MLPerf window {ev['window']}/{ev['of']} ({ev['window_s']:g} s)…[/]")
        elif ev["event"] == "deploy":
            console.print(f"[dim]{label}: uploading {ev['model']}…[/]")
        elif ev["event"] == "repeat" and ev["repeat"] > 1:
            console.print()
        elif ev["event"] == "chunk" and console.is_terminal:  # a live line; logs get no carriage returns
            rel = ev.get("rel_ci")
            ci = f"±{100 * rel:.2f}%" if rel is not None else "n/a"
            run = f"run {ev['repeat']}/{ev['of']}: " if ev.get("repeat") else ""
            console.print(f"[dim]{label}: {run}n={ev['n']:,} (warm-up {ev['n_warmup']}), median "
                          f"{fmt.duration(ev.get('median_s'))}, CI {ci} (target ±{100 * ev['target']:.1f}%), "
                          f"{ev['elapsed_s']:.1f} s[/]", end="\r")

    return show
