"""Progress of the long verbs on stderr, one mechanism for all of them (level 5).

A measuring verb's library function reports what it does as events (``{"event": "repeat-done", ...}``);
the verb's command hands them to :func:`reporter`, which decides how they are shown:

* stderr is a terminal: the verb's own live view (a line redrawn in place, a rich panel), if it has one;
* stderr is a file or a pipe (a CI log): one plain line per finished step — a repeat, a window, a
  slice, a point — saying what finished, its figure, and the time spent (and left against
  ``--max-time``), plus a heartbeat at most every :data:`HEARTBEAT_S` seconds while a step runs, so a
  stuck job and a slow one look different;
* ``--quiet``: nothing (warnings and errors still go to stderr).

The plain lines come from one table, :data:`LINES` (event name -> its line), shared by every verb.
"""
from __future__ import annotations

import time
from typing import Callable, Optional

from edgebench.report import format as fmt

#: Seconds between two heartbeat lines of an event that repeats while a step runs (chunks, clocks).
HEARTBEAT_S = 5.0


def _dur(seconds) -> str:
    return fmt.duration(seconds)


def _rel(rel) -> str:
    return "n/a" if rel is None else f"±{100 * rel:.2f}%"


def _repeat_done(ev: dict) -> str:
    of = f"/{ev['of']}" if ev["repeat"] <= ev["of"] else f" (of up to {ev.get('max')})"
    return (f"run {ev['repeat']}{of} finished: median {_dur(ev.get('median_s'))} ({ev.get('n') or 0:,} inferences); "
            f"so far {_dur(ev.get('overall_median_s'))}, interval {_rel(ev.get('rel_ci'))} "
            f"(target ±{100 * ev['target']:.1f}%)")


def _chunk(ev: dict) -> str:
    if "max_duration_s" in ev:          # soak (and each point of a sweep): device-clock time, thermal verdict
        temp = ev.get("temp_c")
        where = f"point {ev['point']}/{ev['of']} {ev.get('name')}: " if ev.get("point") else ""
        return (f"{where}{ev['elapsed_s']:.0f} s of max {ev['max_duration_s']:.0f} s, n={ev['n']:,}, "
                f"{'no sensor' if temp is None else f'{temp:.1f} °C'}, latency {_dur(ev.get('latency_s'))}, "
                f"{'STEADY' if ev.get('steady') else 'not yet steady'}")
    run = f"run {ev['repeat']}/{ev['of']}: " if ev.get("repeat") else ""
    return (f"{run}n={ev['n']:,} (warm-up {ev.get('n_warmup', 0):,}), median {_dur(ev.get('median_s'))}, "
            f"CI {_rel(ev.get('rel_ci'))}")


def _infer(ev: dict) -> Optional[str]:
    if "where" in ev:                   # verify: one request per side
        return f"running {ev['n']} inputs on {ev['where']}"
    return None                         # accuracy: its slices say it (slice-done)


def _slice_done(ev: dict) -> str:
    top1 = ", ".join(f"{role} top-1 {fmt.percent(v)}" for role, v in (ev.get("top1") or {}).items())
    return f"slice {ev['index']}/{ev['of']} {ev['slice']} ({ev['n']:,} samples) done" + (f": {top1}" if top1 else "")


def _point_done(ev: dict) -> str:
    p = ev["point"]
    temp = p.get("steady_temp_c")
    return (f"point {ev['index']}/{ev['of']} {ev['name']}: {'steady' if p.get('steady') else 'NOT steady'} after "
            f"{p.get('duration_s') or 0:.0f} s, {fmt.rate(p.get('throughput_per_s'))}/s"
            + ("" if temp is None else f", {temp:.1f} °C") + (f" ({p['rate_message']})" if p.get("rate_message") else ""))


def _cool(ev: dict) -> str:
    if ev.get("message"):
        return f"cool-down: {ev['message']}"
    temp = ev.get("temp_c")
    return f"cooling down: {ev.get('elapsed_s', 0):.0f} s, {'n/a' if temp is None else f'{temp:.1f} °C'}"


#: event name -> its plain line (None: no line for this event). Events in :data:`THROTTLED` repeat while a
#: step runs and are shown at most every :data:`HEARTBEAT_S` seconds.
LINES: dict = {
    "connect": lambda ev: f"connecting to {ev['board']}",
    "load": lambda ev: (f"{ev['role']}: " if ev.get("role") else "") + f"loading {ev['model']}"
                       + (f" ({ev['kernels']} kernels)" if ev.get("kernels") else ""),
    "deploy": lambda ev: f"uploading {ev['model']}",
    "repeat-done": _repeat_done,
    "chunk": _chunk,
    "window": lambda ev: f"MLPerf window {ev['window']}/{ev['of']} ({ev['window_s']:g} s)",
    "meter": lambda ev: f"{ev['instrument']} started",
    "idle": lambda ev: f"idle window {ev['which']} the run ({ev['seconds']:g} s)",
    "infer": _infer,
    "slice-done": _slice_done,
    "analyse": lambda ev: "computing statistics",
    "tensors": lambda ev: f"{ev['done']}/{ev['of']} inputs compared layer by layer",
    "layer": lambda ev: f"repeat {ev['repeat']}: operator {ev['n']}/{ev['of']} ({ev['op']})",
    "layer-call": lambda ev: f"repeat {ev['repeat']}: layer timing call {ev['call']}/{ev['of']}",
    "whole": lambda ev: f"repeat {ev['repeat']}: timing the whole model",
    "benchmark-model": lambda ev: f"repeat {ev['repeat']}: benchmark_model, {ev['runs']} runs",
    "clock": lambda ev: f"comparing the device clock with this computer's: {ev['elapsed_s']:.0f} of {ev['of_s']:.0f} s",
    "verify": lambda ev: f"bit-exact check of {ev['model']}",
    "timed": lambda ev: f"timing {ev['n']} inferences of {ev['model']}",
    "sweep-start": lambda ev: f"sweep: {ev['points']} points by {ev['axis']}, {ev['label']}, into {ev['run_dir']}",
    "point-start": lambda ev: f"point {ev['index']}/{ev['of']} {ev['name']}: starting",
    "point-done": _point_done,
    "point-failed": lambda ev: f"point {ev['index']}/{ev['of']} {ev['name']} FAILED: {ev['error']}",
    "cool": _cool,
    "no-thermal": lambda ev: ev["message"],
    "message": lambda ev: ev["message"],
}
THROTTLED = frozenset({"chunk", "clock", "tensors", "layer", "layer-call", "cool"})
#: Events said once per verb (every repeat reconnects and reloads: the log says it the first time).
ONCE = frozenset({"connect", "load", "deploy"})


class Reporter:
    """A progress callback (``reporter(event)``) for one verb; :meth:`close` ends a live view."""

    def __init__(self, label: str = "", live: Optional[Callable] = None, stop: Optional[Callable] = None,
                 max_time_s: Optional[float] = None, quiet: bool = False, console=None,
                 started: Optional[float] = None, clock: Callable[[], float] = time.monotonic):
        if console is None:
            # lazy: rich (import rich 52 ms measured), kept off `edgebench VERB --help`
            from edgebench.cli.output import get_err_console

            console = get_err_console()
        self.label, self.max_time_s, self.quiet, self.console, self.clock = label, max_time_s, quiet, console, clock
        self.live = live if console.is_terminal else None
        self.stop = stop
        self.started = clock() if started is None else started
        self.last: dict = {}      # throttled event -> when its last line was printed
        self.said: set = set()    # the lines of ONCE events already printed
        self.lines = 0

    def __call__(self, ev: dict) -> None:
        if self.quiet:
            return
        if self.live is not None:
            self.live(ev)
            return
        self.log(ev)

    def log(self, ev: dict) -> None:
        """One plain line for ``ev`` (or none: an event without a line, a heartbeat too soon)."""
        kind = ev.get("event")
        make = LINES.get(kind)
        if make is None:
            return
        now = self.clock()
        if kind in THROTTLED:
            if now - self.last.get(kind, -HEARTBEAT_S) < HEARTBEAT_S:
                return
        text = make(ev)
        if not text or (kind in ONCE and text in self.said):
            return
        if kind in ONCE:
            self.said.add(text)
        for k in THROTTLED:           # any line is a sign of life: the next heartbeat waits
            self.last[k] = now
        spent = now - self.started
        clock = f"{spent:.0f} s"
        if self.max_time_s is not None:
            clock += f", {max(0.0, self.max_time_s - spent):.0f} s left of --max-time {self.max_time_s:g} s"
        head = f"{self.label}: " if self.label else ""
        self.console.print(f"{head}{text} [{clock}]", markup=False, highlight=False, soft_wrap=True)
        self.lines += 1

    def close(self) -> None:
        if self.stop is not None:
            self.stop()


def line_view(console) -> Callable[[dict], None]:
    """A live view made of the plain lines (:data:`LINES`), for a verb with nothing richer to show on a
    terminal: an event of :data:`THROTTLED` (a running step) redrawn in place on one line, any other kept."""
    drawn = [0]   # width of the line drawn in place, to blank its rest

    def show(ev: dict) -> None:
        kind = ev.get("event")
        make = LINES.get(kind)
        text = make(ev) if make is not None else None
        if not text:
            return
        text += "…"
        pad = " " * max(0, drawn[0] - len(text))
        inplace = kind in THROTTLED
        console.print(text + pad, style="dim", markup=False, highlight=False, end="\r" if inplace else "\n")
        drawn[0] = len(text) if inplace else 0

    return show


def end_live_line(console) -> None:
    """End a live progress line (drawn with a carriage return) on a terminal; a log has none to end."""
    if console.is_terminal:
        console.print()


def reporter(label: str = "", live: Optional[Callable] = None, stop: Optional[Callable] = None,
             max_time_s: Optional[float] = None, quiet: bool = False, started: Optional[float] = None) -> Reporter:
    """The progress callback of a long verb (module doc): ``live`` on a terminal (``stop`` ends it), plain
    lines in a log, nothing with ``--quiet``; ``max_time_s``: the verb's ``--max-time``, for the time left."""
    return Reporter(label, live, stop, max_time_s, quiet, started=started)


__all__ = ["HEARTBEAT_S", "LINES", "THROTTLED", "ONCE", "Reporter", "line_view", "end_live_line", "reporter"]
