"""Progress in logs: when stderr is not a terminal, one plain line per finished step, off with --quiet."""
import io
from pathlib import Path

import pytest
from conftest import DIGITS_INT8
from rich.console import Console

from edgebench.cli import progress as pr
from edgebench.cli.progress import HEARTBEAT_S, Reporter


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def _log(**kw):
    buf = io.StringIO()
    clock = Clock()
    console = Console(file=buf, force_terminal=False, width=80)
    rep = Reporter("m", console=console, clock=clock, **kw)
    return rep, buf, clock


def test_a_log_gets_one_line_per_finished_repeat_with_its_figure_and_the_time_left():
    rep, buf, clock = _log(max_time_s=20.0)
    rep({"event": "connect", "board": "host"})
    clock.t += 7
    rep({"event": "repeat-done", "repeat": 1, "of": 3, "max": 10, "median_s": 29.7e-6, "n": 70416,
         "overall_median_s": 29.7e-6, "rel_ci": 0.07, "target": 0.01})
    lines = buf.getvalue().splitlines()
    assert lines[0] == "m: connecting to host [0 s, 20 s left of --max-time 20 s]"
    assert lines[1].startswith("m: run 1/3 finished: median 29.7 µs (70,416 inferences)")
    assert "interval ±7.00% (target ±1.0%)" in lines[1] and lines[1].endswith("[7 s, 13 s left of --max-time 20 s]")
    assert "\r" not in buf.getvalue()


def test_running_steps_get_a_heartbeat_at_most_every_few_seconds():
    rep, buf, clock = _log()
    chunk = {"event": "chunk", "n": 100, "n_warmup": 10, "repeat": 1, "of": 3, "median_s": 1e-3, "rel_ci": 0.1}
    for _ in range(40):                      # a chunk every half second for 20 s
        rep(chunk)
        clock.t += 0.5
    lines = buf.getvalue().splitlines()
    assert 20 / HEARTBEAT_S <= len(lines) <= 20 / HEARTBEAT_S + 1
    assert all(line.startswith("m: run 1/3: n=100 (warm-up 10), median 1.00 ms, CI ±10.00%") for line in lines)


def test_connect_and_load_are_said_once_not_per_repeat():
    rep, buf, _ = _log()
    for _ in range(3):
        rep({"event": "connect", "board": "host"})
        rep({"event": "load", "model": "m"})
    assert len(buf.getvalue().splitlines()) == 2


def test_quiet_prints_nothing_and_a_terminal_gets_the_live_view():
    rep, buf, _ = _log(quiet=True)
    rep({"event": "connect", "board": "host"})
    assert buf.getvalue() == ""
    seen = []
    term = Console(file=io.StringIO(), force_terminal=True)
    live = Reporter("m", live=seen.append, console=term)
    live({"event": "connect", "board": "host"})
    assert seen == [{"event": "connect", "board": "host"}] and term.file.getvalue() == ""


@pytest.mark.parametrize("event", sorted(pr.LINES))
def test_every_event_with_a_line_is_one_line(event):
    """Each line builder takes the event its library emits (the keys below are those the emitters send)."""
    samples = {
        "connect": {"board": "b"}, "load": {"model": "m", "role": "candidate", "kernels": "reference"},
        "deploy": {"model": "m"}, "repeat-done": {"repeat": 4, "of": 3, "max": 10, "median_s": 1e-3, "n": 5,
                                                  "overall_median_s": 1e-3, "rel_ci": None, "target": 0.01},
        "chunk": {"elapsed_s": 30.0, "max_duration_s": 600, "n": 5, "temp_c": None, "latency_s": 1e-3,
                  "steady": False, "point": 2, "of": 4, "name": "duty=0.5"},
        "window": {"window": 1, "of": 5, "window_s": 10.0}, "meter": {"instrument": "rapl"},
        "idle": {"which": "before", "seconds": 3.0}, "infer": {"where": "host", "n": 4},
        "slice-done": {"slice": "clean", "index": 1, "of": 2, "n": 540, "top1": {"candidate": 0.98}},
        "analyse": {}, "tensors": {"done": 1, "of": 2}, "layer": {"repeat": 1, "n": 1, "of": 2, "op": "CONV_2D"},
        "layer-call": {"repeat": 1, "call": 1, "of": 2}, "whole": {"repeat": 1},
        "benchmark-model": {"repeat": 1, "runs": 50}, "clock": {"elapsed_s": 2.0, "of_s": 10.0},
        "verify": {"model": "m"}, "timed": {"n": 5, "model": "m"},
        "sweep-start": {"points": 4, "axis": "duty", "label": "measured", "run_dir": "runs/x"},
        "point-start": {"index": 1, "of": 4, "name": "p"},
        "point-done": {"index": 1, "of": 4, "name": "p", "point": {"steady": True, "duration_s": 60,
                                                                   "throughput_per_s": 100.0}},
        "point-failed": {"index": 1, "of": 4, "name": "p", "error": "boom"},
        "cool": {"elapsed_s": 3.0, "temp_c": 40.0}, "no-thermal": {"message": "no sensor"},
        "message": {"message": "converting"},
    }
    rep, buf, _ = _log()
    rep({"event": event, **samples[event]})
    assert len(buf.getvalue().splitlines()) == 1


def _bench_log(tmp_path, *extra):
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    err = tmp_path / "stderr.log"
    with open(err, "w") as f:              # stderr a file, as in a CI log
        p = subprocess.run([sys.executable, "-m", "edgebench", "bench", str(DIGITS_INT8), "--runs-dir", str(tmp_path / "r"),
                            "--max-time", "4", "--min-time", "0.3", "--repeat", "2", "--max-repeats", "2", *extra],
                           stdout=subprocess.PIPE, stderr=f, text=True, timeout=120,
                           env=dict(os.environ, PYTHONPATH=str(root)))
    return p, err.read_text()


@pytest.mark.slow
def test_a_bench_with_stderr_in_a_file_says_each_repeat_and_quiet_says_nothing(tmp_path):
    p, log = _bench_log(tmp_path)
    assert p.returncode == 0, log
    assert "run 1/2 finished: median" in log and "run 2/2 finished: median" in log, log
    assert "left of --max-time 4 s]" in log and "\r" not in log
    p, log = _bench_log(tmp_path, "--quiet")
    assert p.returncode == 0 and log == "", log


def test_the_line_view_redraws_a_running_step_in_place_and_keeps_the_rest():
    """profile's and layer-error's live view: the plain lines, a running step on one line drawn in place."""
    term = Console(file=io.StringIO(), force_terminal=True, color_system=None, width=200)
    show = pr.line_view(term)
    show({"event": "connect", "board": "host"})
    show({"event": "layer", "repeat": 1, "n": 1, "of": 9, "op": "CONV_2D"})
    show({"event": "layer", "repeat": 1, "n": 2, "of": 9, "op": "DEPTHWISE_CONV_2D"})
    show({"event": "whole", "repeat": 1})
    show({"event": "repeat", "repeat": 2, "of": 3})         # no line of its own: the next ones say the repeat
    out = term.file.getvalue()
    assert out.startswith("connecting to host…\n")
    assert "repeat 1: operator 1/9 (CONV_2D)…\rrepeat 1: operator 2/9 (DEPTHWISE_CONV_2D)…\r" in out
    drawn = len("repeat 1: operator 2/9 (DEPTHWISE_CONV_2D)…")
    assert out.endswith("\rrepeat 1: timing the whole model…".ljust(drawn + 1) + "\n")   # the rest blanked
