"""``--farm TAGS`` on bench, verify, soak and sweep: the same command on every matching place.

Each place runs as a child ``edgebench`` process (``--board labgrid:PLACE --json``, its run under
``SESSION/PLACE/``), all in parallel; each child reserves, acquires and releases its own place,
so a busy place is waited for up to ``$EDGEBENCH_FARM_WAIT`` s and then skipped with a line
saying so. A stop signal reaches every child (each keeps its samples and releases its place).
At the end: one table comparing the boards (bench: the median with its 95% interval, as each
run computed it), and ``SESSION/farm.json`` (:class:`edgebench.farm.fanout.FanoutSummary`).
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from edgebench.bench.compare import compare
from edgebench.cli.invocation import STATE
from edgebench.cli.output import emit_json, get_console, get_err_console
from edgebench.errors import EdgebenchError, ResultError, UsageError
from edgebench.farm.coordinator import list_places
from edgebench.farm.fanout import BUSY_EXIT, FanoutSummary, PlaceOutcome, child_args, session_dir
from edgebench.farm.spec import PROFILE_TAG, parse_tags
from edgebench.report import format as fmt
from edgebench.report.format import p_value
from edgebench.results.files import open_stream, read_regular
from edgebench.results.store import read_result, read_samples, write_text_atomic
from edgebench.stats.compare import holm
from edgebench.transport.child import spawn_tied

_STOP_GRACE_S = 30.0


def fan_out(verb: str, tags_text: str, board: str | None, runs_dir: Path, json_out: bool,
            stores_runs: bool = True) -> None:
    """Run ``edgebench VERB ...`` (this command line) on every place tagged ``tags_text``; the session
    folder goes under ``runs_dir`` (a verb that ``stores_runs`` gets its runs there too)."""
    err = get_err_console()
    if board not in (None, "host") and board:
        raise UsageError(f"--farm picks the boards; --board {board} does not apply", "drop --board")
    tags = parse_tags(tags_text)
    listing = list_places(None, tags)
    places = [p for p in listing.places if p.profile]
    for p in listing.places:
        if not p.profile:
            err.print(f"skipping place {p.name}: no {PROFILE_TAG} tag")
    if not places:
        raise UsageError(f"no labgrid place on {listing.coordinator} is tagged {tags_text}"
                         + (f" with a {PROFILE_TAG} tag" if listing.places else ""), "list them: edgebench farm")
    argv = list(STATE.get("argv") or sys.argv[1:])
    session = session_dir(runs_dir, verb)
    summary = FanoutSummary(verb, tags, listing.coordinator, str(session),
                            _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                            [PlaceOutcome(p.name, p.profile) for p in places])
    err.print(f"{verb} on {len(places)} place(s) tagged {tags_text}: {', '.join(p.name for p in places)} "
              f"(session {session})")
    started = time.monotonic()
    try:
        _run_children(summary, [child_args(argv, p.place, session / p.place if stores_runs else None)
                                for p in summary.places], session, err)
        summary.comparisons = compare_places(summary)
    finally:   # a stopped fan-out still says what each place did
        summary.elapsed_s = round(time.monotonic() - started, 3)
        write_text_atomic(session / "farm.json", json.dumps(summary.to_dict(), indent=2, default=str) + "\n")
    if json_out:
        emit_json(summary)
    else:
        print_summary(get_console(), summary)
    code = summary.exit_code()
    if code:
        raise SystemExit(code)


def _run_children(summary, argvs: list, session: Path, err) -> None:
    procs = []
    for outcome, args in zip(summary.places, argvs):
        folder = session / outcome.place
        try:   # new files only, never through a link planted in the (predictably named) session folder
            out = open_stream(folder / "stdout.json", f"place {outcome.place}'s output")
        except ResultError as exc:
            _unwritable(outcome, exc, err)
            continue
        try:
            log = open_stream(folder / "stderr.log", f"place {outcome.place}'s log")
        except ResultError as exc:
            out.close()
            _unwritable(outcome, exc, err)
            continue
        try:
            proc = spawn_tied([sys.executable, "-m", "edgebench", *args], stdout=out, stderr=log,
                              stdin=subprocess.DEVNULL)
        finally:
            out.close()
            log.close()
        procs.append((outcome, proc, time.monotonic()))
    try:
        for outcome, proc, t0 in procs:
            code = proc.wait()
            _collect(outcome, code, time.monotonic() - t0, session / outcome.place, BUSY_EXIT)
            err.print(_progress_line(outcome))
    except BaseException:   # Ctrl-C / SIGTERM: every child stops the same way (samples kept, place released)
        _stop_all([p for _, p, _ in procs])
        for outcome, proc, t0 in procs:
            if outcome.status == "pending":
                _collect(outcome, proc.poll(), time.monotonic() - t0, session / outcome.place, BUSY_EXIT)
                if outcome.status in ("failed", "pending"):
                    outcome.status = "interrupted"
        raise


def _unwritable(outcome, exc, err) -> None:
    """A place whose output cannot be written where it belongs is not run: it failed."""
    outcome.status, outcome.exit_code = "failed", None
    outcome.message = f"not run: {exc.one_line()}"
    err.print(_progress_line(outcome), markup=False)


def _stop_all(procs) -> None:
    for proc in procs:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + _STOP_GRACE_S
    for proc in procs:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except Exception:  # noqa: BLE001 - still running after the grace period: kill it
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _collect(outcome, code, elapsed_s: float, folder: Path, busy_exit: int) -> None:
    outcome.exit_code = code
    outcome.elapsed_s = round(elapsed_s, 3)
    text = _read_own(folder / "stdout.json").strip()
    try:
        outcome.result = json.loads(text) if text else None
    except ValueError:
        outcome.result = None
    runs = sorted(d for d in folder.iterdir() if d.is_dir() and (d / "run.json").exists()) if folder.exists() else []
    outcome.run_dir = str(runs[-1]) if runs else None
    log = _read_own(folder / "stderr.log")
    errors = [ln[len("error: "):] for ln in log.splitlines() if ln.startswith("error: ")]
    outcome.message = errors[-1] if errors else None
    if code == 0:
        outcome.status = "ok"
    elif code == busy_exit:
        outcome.status = "busy"
    elif code == 2:
        outcome.status = "gate-failed"
    elif code is not None and code >= 128:
        outcome.status = "interrupted"
    else:
        outcome.status = "failed"


def _read_own(path: Path) -> str:
    """A file this fan-out made (never read through a link put in its place); "" when there is none."""
    try:
        raw = read_regular(path, 64 * 2 ** 20, "farm output")
    except ResultError:
        return ""
    return (raw or b"").decode("utf-8", "replace")


def _progress_line(o) -> str:
    if o.status == "ok":
        return f"place {o.place}: done in {o.elapsed_s:.1f} s"
    if o.status == "busy":
        return f"place {o.place}: skipped, {o.message or 'taken by someone else'}"
    return f"place {o.place}: {o.status} (exit {o.exit_code}){': ' + o.message if o.message else ''}"


def compare_places(summary, stage: str = "e2e") -> list:
    """Each place's run against the first place's: the ratio of medians with its run- and
    dependence-aware 95% interval (``edgebench compare``'s), Holm-adjusted across the places; a
    difference is called only when the interval excludes 1 and the adjusted p is below 0.05."""
    done = [o for o in summary.places if o.status == "ok" and o.run_dir and o.figure()]
    if len(done) < 2:
        return []
    base = done[0]
    rows = []
    try:
        ra, sa = read_result(base.run_dir), read_samples(base.run_dir)
        for other in done[1:]:
            comp = compare(ra, sa, read_result(other.run_dir), read_samples(other.run_dir), stage=stage)
            s = comp.speedup
            rows.append({"baseline": base.place, "candidate": other.place, "stage": stage,
                         "ratio": s["ratio"], "ci_low": s["ci_low"], "ci_high": s["ci_high"],
                         "ci_level": s["ci_level"], "p_value": s["p_value"], "runs": [s["runs_a"], s["runs_b"]],
                         "definition": f"median {stage} latency of {base.place} / of {other.place} "
                                       f"(>1: {other.place} faster)"})
    except EdgebenchError as exc:   # a run without samples: the table still stands
        return [{"error": exc.one_line()}]
    for row, p_adj in zip(rows, holm([r["p_value"] for r in rows])):
        row["p_holm"] = p_adj
        shown = p_adj < 0.05 and not (row["ci_low"] <= 1.0 <= row["ci_high"])
        row["verdict"] = ("faster" if row["ratio"] > 1 else "slower") if shown else "no difference shown"
    return rows


def print_summary(console, summary) -> None:
    """One row per place: status, and for latency runs the median with its 95% interval."""
    t = Table(title=escape(f"{summary.verb} on the farm ({summary.coordinator}, tags "
                           + ",".join(f"{k}={v}" for k, v in summary.tags.items()) + ")"),
              title_justify="left", box=None, pad_edge=False, padding=(0, 1, 0, 0), header_style="bold underline")
    latency = any(o.figure() for o in summary.places)
    cols = ("place", "profile", "status") + (("median", "95% CI", "runs", "n", "throughput/s") if latency
                                             else ("result",)) + ("label",)
    for col in cols:
        t.add_column(col, justify="left" if col in ("place", "profile", "status", "result", "label") else "right",
                     no_wrap=True)
    for o in summary.places:
        f = o.figure()
        label = f.get("label") or (o.result or {}).get("label") or ""
        if not latency:
            t.add_row(o.place, o.profile or "", o.status, o.verdict() or "", label)
            continue
        ci = (fmt.duration_range(f["ci_low_s"], f["ci_high_s"]) if f.get("ci_low_s") is not None else "–") if f else ""
        t.add_row(o.place, o.profile or "", o.status, fmt.duration(f["median_s"]) if f.get("median_s") else "",
                  ci, str(f.get("runs") or "") if f else "", fmt.count(f["n"]) if f.get("n") else "",
                  fmt.rate(f["throughput_per_s"]) if f.get("throughput_per_s") else "", label)
    console.print(t)
    for o in summary.places:
        if o.status != "ok" and o.message:
            console.print(f"{o.place}: {escape(o.message)}")

    for c in summary.comparisons:
        if "error" in c:
            console.print(f"no comparison: {escape(c['error'])}")
            continue
        runs = "one run each: run-to-run variation not measured" if max(c["runs"]) < 2 else \
            f"{c['runs'][0]} vs {c['runs'][1]} runs"
        console.print(f"{c['candidate']} vs {c['baseline']}: {c['ratio']:.3f}x the speed ({c['stage']} median ratio, "
                      f"{round(100 * c['ci_level'])}% CI {c['ci_low']:.3f}–{c['ci_high']:.3f}; {c['verdict']}; "
                      f"Holm over {len(summary.comparisons)}: {p_value(c['p_holm'])}; {runs})")
    console.print(f"session stored in {summary.session_dir} ({summary.elapsed_s:.1f} s)")


__all__ = ["fan_out", "print_summary"]
