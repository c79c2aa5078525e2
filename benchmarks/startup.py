"""Start-up time of the CLI: `edgebench --help` (goal <= 0.15 s), a verb's help and `edgebench boards`.

Runs each command as a whole process, pinned to one CPU (as `taskset -c N` would), several times,
and prints min / median / max wall time, the median CPU time (user + system: what the command
needs, whatever else the machine is doing), which heavy modules (tensorflow, matplotlib, pandas, scipy, numpy)
and how many verb modules got imported, and the load average (the machine may be shared: quote it
with the figure).

    .venv/bin/python benchmarks/startup.py [--runs 10] [--cpu 0] [--against OLD_TREE]

``--against DIR`` times the same commands with ``PYTHONPATH=DIR`` too (e.g. an older commit's
tree from ``git archive COMMIT edgebench | tar -x -C DIR``), interleaved run by run with this one,
so both see the same load.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HEAVY = ("tensorflow", "matplotlib", "pandas", "scipy", "numpy", "ai_edge_litert")
GOALS = {"--help": 0.15}
COMMANDS = (["--help"], ["bench", "--help"], ["boards"])
ROOT = Path(__file__).resolve().parents[1]
NEUTRAL = "/"      # the working directory of the timed processes: `-m`/`-c` put it first on sys.path


def _env(tree: str | None) -> dict:
    env = dict(os.environ, COLUMNS="100")
    if tree:
        env["PYTHONPATH"] = tree
    return env


def _pin(cpu: int):
    return lambda: os.sched_setaffinity(0, {cpu})


def time_once(argv: list, cpu: int, tree: str | None = None) -> tuple:
    """(wall s, CPU s) of one run: CPU (user + system) is what the run needs, wall what it took on
    this machine's load (waiting for its CPU included)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "edgebench", *argv], capture_output=True, env=_env(tree),
                   preexec_fn=_pin(cpu), check=False, cwd=NEUTRAL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def imported(argv: list, tree: str | None = None) -> tuple:
    code = ("import sys\nfrom edgebench.cli.app import main\ntry:\n    main(%r)\nexcept SystemExit:\n    pass\n"
            "print('HEAVY:' + ','.join(m for m in %r if m in sys.modules))\n"
            "print('VERBS:%%d' %% sum(1 for m in sys.modules if m.endswith('_cmd')))" % (argv, HEAVY))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(tree),
                         cwd=NEUTRAL).stdout
    heavy = next((ln[6:] for ln in out.splitlines() if ln.startswith("HEAVY:")), "?")
    verbs = next((ln[6:] for ln in out.splitlines() if ln.startswith("VERBS:")), "?")
    return heavy or "none", verbs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--cpu", type=int, default=min(os.sched_getaffinity(0)), help="the CPU to pin to")
    ap.add_argument("--against", help="an older tree to time too (PYTHONPATH), interleaved")
    args = ap.parse_args()
    trees = [("this tree", str(ROOT))] + ([("against", args.against)] if args.against else [])
    print(f"pinned to CPU {args.cpu}, {args.runs} runs each; load average {os.getloadavg()[0]:.2f} "
          f"{os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} ({os.cpu_count()} CPUs)")
    failed = False
    for argv in COMMANDS:
        times: dict = {name: [] for name, _ in trees}
        for _ in range(args.runs):
            for name, tree in trees:                 # interleaved: both trees see the same load
                times[name].append(time_once(argv, args.cpu, tree))
        for name, tree in trees:
            t = [wall for wall, _ in times[name]]
            cpu = statistics.median(c for _, c in times[name])
            heavy, verbs = imported(argv, tree)
            goal = GOALS.get(" ".join(argv))
            verdict = "" if goal is None else (f"goal <= {goal} s: " + ("met" if statistics.median(t) <= goal
                                                                           else "NOT met"))
            failed |= name == "this tree" and verdict.endswith("NOT met")
            print(f"{name:10s} edgebench {' '.join(argv):14s} min {min(t):.3f} s  median {statistics.median(t):.3f} s"
                  f"  max {max(t):.3f} s  CPU median {cpu:.3f} s  (heavy imports: {heavy}; verb modules: {verbs})"
                  f" {verdict}")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
