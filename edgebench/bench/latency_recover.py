"""A bench run left ``running`` by a crash or a kill, finished from what it stored (level 4):
``edgebench bench --recover RUN``.

A bench run journals every chunk of samples (fsync'd before the next request) and each repeat's
cold start as it goes, and writes run.json and samples.parquet after every repeat; recovery
summarises the repeats those hold (:func:`edgebench.bench.latency_summary.summarise`) and marks
the run incomplete with the reason.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from edgebench.bench.latency_summary import summarise
from edgebench.bench.mac_rate import attach
from edgebench.bench.options import BenchOptions
from edgebench.bench.sessions import read_history
from edgebench.boards.registry import get_profile
from edgebench.errors import EdgebenchError, ResultError
from edgebench.results import kinds as rk
from edgebench.results import store
from edgebench.results.figures.device import MacRate
from edgebench.results.model import RunResult

#: what the repeats journal keeps of each repeat's start
REPEAT_COLUMNS = ("repeat", "load_s", "first_inference_s", "first_invoke_s")


def _options(r: RunResult) -> BenchOptions:
    """The options a stored bench run ran with, as far as it recorded them (defaults otherwise)."""
    stop = r.settings.stop_rule or {}

    def given(value, default):
        return default if value is None else value

    return BenchOptions(scenario=given(r.scenario.name, "single-stream"), rate_hz=r.scenario.rate_hz,
                        target_rel_ci=given(stop.get("target_rel_ci"), 0.01),
                        min_samples=int(stop.get("min_samples") or 200),
                        min_time_s=given(stop.get("min_time_s"), 1.0), max_time_s=given(stop.get("max_time_s"), 20.0),
                        min_warmup=given(r.settings.min_warmup, 10), repeat=given(r.settings.repeat, 1),
                        max_repeats=given(r.settings.max_repeats, 1), sessions=given(r.settings.sessions, 10))


def recover_bench(run_dir) -> RunResult:
    """Finish a bench run folder left ``running`` by a crash or a kill: summarise the repeats
    it had written (samples are written after every repeat) and mark it incomplete."""
    d = Path(run_dir)
    r = store.read_unfinished(d)
    if r.kind != rk.BENCH.name or r.status != "running":
        raise ResultError(f"{d} is not an unfinished bench run (kind {r.kind}, status {r.status})",
                          "nothing to recover")
    opts = _options(r)
    frame = journalled_samples(d)
    if frame is None:
        try:
            frame = store.read_samples(d)
        except ResultError:
            frame = None
    if frame is None or not len(frame) or not (frame["phase"] != "cold").any():
        r.status, r.status_reason = "incomplete", "the bench process stopped before it measured a sample"
        store.write_result(d, r)
        return r
    per = {p.get("repeat"): p for p in r.stopping.per_repeat or []}
    colds: dict = {int(c["repeat"] or 0): c for c in r.cold_start.per_repeat or [] if c.get("repeat") is not None}
    journalled = store.read_journal(d, "repeats")
    for row in journalled.to_dict("records"):
        colds.setdefault(int(row["repeat"]), row)
    written = sorted(int(k) for k in frame["repeat"].unique())
    info = [{**{key: colds[k].get(key) for key in REPEAT_COLUMNS},
             "decision": {x: per[k][x] for x in ("reason", "target_reached")} if k in per else None}
            for k in written if k in colds]
    reason = (f"the bench process stopped without finishing (crash or kill); recovered the samples of the "
              f"{len(written)} repeat(s) it had started (the last one possibly cut short; a repeat with no "
              f"sample past its warm-up adds no run to the figures)")
    frame = summarise(r, frame, opts, info, r.timing.clock_resolution_reported_s or 0.0,
                      final=True, status="incomplete", reason=reason, history=read_history(r, d.parent, exclude=d))
    _recovered_mac_rate(r)
    store.write_samples(d, frame)
    store.write_result(d, r)
    store.remove_journal(d)
    store.remove_journal(d, "repeats")
    return r


def _recovered_mac_rate(r: RunResult) -> None:
    """Instructions/cycles per MAC of a recovered MCU run, when its board profile and model file
    are still where the run says (else the figure is left out, with the reason)."""
    if r.board.kind != "mcu":
        return
    try:
        profile = get_profile(r.board.name or "")
    except EdgebenchError as e:
        r.extra.mac_rate = MacRate(available=False, reason=f"board profile not found on recovery: {e.one_line()}")
        return
    path: Optional[str] = r.model.path
    if not path or not Path(path).is_file():
        r.extra.mac_rate = MacRate(available=False, reason=f"model file {path} not found on recovery")
        return
    attach(r, profile, path)


def journalled_samples(run_dir):
    """The samples a killed bench journalled (every chunk up to the kill), or None without a journal."""
    if not store.journal_paths(run_dir):
        return None
    frame = store.read_journal(run_dir)
    if not len(frame):
        return None
    if "scheduled_ns" in frame:  # cold chunks carry no schedule: -1 as in a finished run
        frame["scheduled_ns"] = frame["scheduled_ns"].fillna(-1).astype("int64")
    frame["repeat"] = frame["repeat"].astype("int64")
    return frame.reset_index(drop=True)


__all__ = ["recover_bench", "journalled_samples", "REPEAT_COLUMNS"]
