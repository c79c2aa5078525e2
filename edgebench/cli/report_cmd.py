"""`edgebench report RUN...`: one self-contained HTML file (or Markdown) with the claim, the
conditions, the check verdicts and the figures of each run.

The reading of each run folder (samples, telemetry, power trace, battery curve, sweep
plots) happens here, in :func:`gather`; :mod:`edgebench.report.html` only renders.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, List, Optional

import typer

from edgebench.cli import options as opt
from edgebench.errors import EdgebenchError, ResultError

if TYPE_CHECKING:
    from edgebench.report.sections.base import RunData

# The readers and renderers are imported inside the functions: importing edgebench.report.html
# (pydantic run record, numpy) costs ~0.28 s (python -X importtime), which `edgebench report --help`
# and the verb table need not pay.

BATTERY_CELL = "2xAA"


def _soak_series(result, run_dir: Path, samples) -> Optional[dict]:
    import numpy as np

    from edgebench.bench.soak import read_telemetry
    from edgebench.telemetry import analysis

    if samples is None or not len(samples) or "t_start_ns" not in samples:
        return None
    rows = samples[samples["phase"] != "cold"]
    if not len(rows):
        return None
    t0 = int(rows["t_start_ns"].min())
    tel = read_telemetry(run_dir)
    series = {"t_lat_s": (rows["t_start_ns"].to_numpy(np.int64) - t0) / 1e9, "latency_s": rows["e2e_s"].to_numpy(),
              "t_temp_s": [], "temp_c": [], "t_freq_s": [], "freq_hz": [], "throttle": []}
    if len(tel) and "t_ns" in tel:
        tel = tel[tel["t_ns"] >= t0]
        t = (tel["t_ns"].to_numpy(np.int64) - t0) / 1e9
        series.update(t_temp_s=t, temp_c=analysis.primary_temp(tel), t_freq_s=t, freq_hz=analysis.cpu_freq(tel)[1])
    s = result.extra.soak
    for cause, ev in (s.thermal.throttle_events or {}).items():
        if ev.events and ev.first_s is not None:
            series["throttle"].append((ev.first_s, cause))
    for key, w in (("burst", s.burst), ("window", s.sustained)):
        if w.t_from_s is not None:
            series[key] = (w.t_from_s, w.t_to_s)
    return series


def _battery(result) -> Optional[dict]:
    import numpy as np

    from edgebench.bench.battery import estimate, figures_from_run, load_from_figures, make_cell

    try:
        f = figures_from_run(result)
    except EdgebenchError:
        return None
    if not f.get("event_s"):
        return None
    cell = make_cell(BATTERY_CELL)
    duties = np.logspace(-5, 0, 41)
    life, lo, hi = [], [], []
    for d in duties:
        est = estimate(cell, load_from_figures(f["idle_w"], f["event_j"], f["label"], duty=float(d),
                                               event_s=f["event_s"], idle_ci=f["idle_ci"], event_ci=f["event_ci"]))
        life.append(est.life_h)
        lo.append(est.life_low_h)
        hi.append(est.life_high_h)
    run_duty = result.power.duty_cycle.duty
    run_life = None
    if run_duty:
        run_life = estimate(cell, load_from_figures(f["idle_w"], f["event_j"], f["label"], duty=float(run_duty),
                                                    event_s=f["event_s"])).life_h
    return {"duty": duties.tolist(), "life_h": life, "life_low_h": lo, "life_high_h": hi, "cell": cell.name,
            "run_duty": run_duty, "run_life_h": run_life, "label": f"estimated from {f['label']} power",
            "assumptions": "80% usable, regulator 85% efficient"}


def _samples(data: "RunData", d: Path) -> None:
    from edgebench.results.store import read_samples

    if data.samples is None:
        try:
            data.samples = read_samples(d)
        except (ResultError, OSError):
            data.samples = None


def _soak(data: "RunData", d: Path) -> None:
    _samples(data, d)
    data.soak_series = _soak_series(data.result, d, data.samples)


def _energy(data: "RunData", d: Path) -> None:
    import pandas as pd

    if (d / "power.parquet").exists():
        data.power = pd.read_parquet(d / "power.parquet")
    if (d / "energy_events.parquet").exists():
        data.events = pd.read_parquet(d / "energy_events.parquet")
    data.battery = _battery(data.result)


def _plots(data: "RunData", d: Path) -> None:
    for name in data.result.extra.plots or []:
        if (d / name).exists() and str(name).endswith(".png"):
            data.images[f"sweep plot {name} (written by edgebench sweep)"] = (d / name).read_bytes()


#: What each report section (edgebench.report.html.SECTIONS) needs read from the run's folder.
READERS = {"latency": _samples, "soak": _soak, "energy": _energy, "points": _plots}


def gather(run_dir, result=None) -> "RunData":
    """A :class:`edgebench.report.html.RunData` with what the run's folder holds for the report
    sections of its kind (:attr:`edgebench.results.kinds.RunKind.sections`; ``result``: its run.json,
    if already read)."""
    from edgebench.report.sections.base import RunData
    from edgebench.results.kinds import kind_of
    from edgebench.results.store import read_result

    d = Path(run_dir)
    result = result if result is not None else read_result(d)
    data = RunData(result=result, path=str(d))
    for section in kind_of(result).sections:
        reader = READERS.get(section)
        if reader is not None:
            reader(data, d)
    return data


def _comparisons(datas: List["RunData"]) -> list:
    """Each latency run against the first of the same label and kind (all stages, conditions listed),
    as ``compare`` compares them: every session on record of each side in the baseline's runs folder
    combined (:func:`edgebench.bench.compare.compare_stored`)."""
    from edgebench.bench.compare import compare_stored
    from edgebench.results.kinds import kind_of

    lat = [x for x in datas if kind_of(x.result).repeats and x.samples is not None and x.result.stage("e2e").median_s]
    out: list = []
    if len(lat) < 2:
        return out
    base = lat[0]
    for cand in lat[1:]:
        if cand.result.label != base.result.label:
            continue
        stages = tuple(s for s in ("e2e", "invoke") if base.result.latency.get(s) and cand.result.latency.get(s))
        try:
            out.append(compare_stored(Path(base.path), base.result, Path(cand.path), cand.result, stage="e2e",
                                      stages=stages, samples=(base.samples, cand.samples)))
        except EdgebenchError:
            continue
    return out


def _histories(pairs: list) -> list:
    """The e2e series of the reported runs in their runs folders' indexes (6 runs or more), as
    ``edgebench history --json`` gives them with a title; none where an index cannot be opened."""
    from edgebench.store.embedded import EmbeddedStore
    from edgebench.store.history import history
    from edgebench.store.rows import series_key

    out, seen = [], set()
    for d, result in pairs:
        key = series_key(result)
        if (Path(d).parent, key) in seen:
            continue
        seen.add((Path(d).parent, key))
        try:
            with EmbeddedStore(Path(d).parent, wait_s=1.0) as store:
                store.refresh()
                h = history(store, key, "e2e")
        except EdgebenchError:
            continue
        if len(h.points) >= 6:
            out.append({**h.to_dict(), "title": key.describe()})
    return out


def report(
    runs: List[str] = typer.Argument(..., help="Runs to report: ids, folder name prefixes, folders, or 'latest'."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="File to write (default: report.html, or "
                                                                        "report.md with --md)."),
    md: bool = typer.Option(False, "--md", help="Write Markdown (for a pull-request comment) instead of HTML."),
    runs_dir: Path = opt.runs_dir(writes=False),
    title: Optional[str] = typer.Option(None, help="Title of the report."),
) -> None:
    """Write one self-contained HTML report (or Markdown) of runs: claim, conditions, checks, plots."""
    from edgebench import __version__
    from edgebench.bench.sessions import check_on_record
    from edgebench.cli.output import get_console
    from edgebench.report import html
    from edgebench.results.store import read_results

    pairs = read_results(runs, runs_dir)
    datas = [gather(d, result) for d, result in pairs]
    verdicts = check_on_record(pairs)
    comps = _comparisons(datas)
    from edgebench.results.acks import acks_for

    problems: list = []
    acks = acks_for([d for d, _ in pairs], problems)
    for problem in problems:
        from edgebench.cli.output import get_err_console

        get_err_console().print(f"warning: {problem}", markup=False, soft_wrap=True)
    if md:
        text = html.render_markdown(datas, verdicts, comps, title=title, acks=acks)
        target = output or Path("report.md")
    else:
        text = html.render_html(datas, verdicts, comps, title=title, version=__version__, acks=acks,
                                histories=_histories(pairs))
        target = output or Path("report.html")
    path = html.write_text(target, text)
    counts = verdicts.counts
    get_console().print(f"report written to {path} ({len(datas)} run{'s' if len(datas) != 1 else ''}; check: "
                        f"{counts['fail']} fail, {counts['warn']} warn, {counts['pass']} pass)", markup=False)
