"""Write the run folders of schema versions 1 and 3 again (tests/data/runs-v1/, tests/data/runs-v3/).

    /work/main/.venv/bin/python tests/data/make_old_runs.py            # both versions, about seven minutes
    /work/main/.venv/bin/python tests/data/make_old_runs.py runs-v1    # one of them

(needs git, make, arm-none-eabi-gcc and qemu-system-arm, as tests/data/runs/make_runs.py does)

Each run is made by the edgebench of its version, not by today's: the commit below is exported
with ``git archive`` into a temporary folder and ``python -m edgebench ARGS --runs-dir TMP`` runs
there, with that folder first on PYTHONPATH (so the old package is imported, not the editable
install) and the interpreter and dependencies of today's venv. No file of the old code was patched:
every command below ran as it is. The run folder the verb wrote is copied to
``tests/data/<version>/<name>/`` as it is, but for this: a samples.parquet of more than ``KEEP``
rows per (repeat, phase) keeps its first ``KEEP`` of each (``KEEP_BENCH`` for a bench run: with 40,
compare found a one-run bench of edgebench 0.1 "too short for an interval of its median"; a host
bench measures for at least a quarter of a second per chunk, ~20,000 inferences, 2 MB per run),
and the PNG plots of accuracy and sweep are left out (230 KB; the report embeds a sweep's plots
only when the file is there); run.json, the figures in it and every other file are the verb's
bytes. ``README.md`` beside the folders lists the commands, the commits and the sizes (written by
this script). A reader run on these folders in place (report, check) writes the runs folder's
index (.edgebench-index.duckdb, 3 MB) beside them: the test copies them to a temporary folder
first, and this script removes a stale one.

Version 2's examples are tests/data/runs/*.json (tests/data/runs/make_runs.py). Version 1 was
written by two shapes of the code: edgebench 0.1 as first published (2eb33bd: one run per bench,
no repeat column) and the commit just before schema 2 (3fcfd8f = 01e4273~1: K repeats, still
labelled 1); both are kept. tests/test_old_runs.py reads, reports and compares every folder.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
KEEP = 40                   # samples kept per (repeat, phase)
KEEP_BENCH = 500            # of a bench run: compare needs an interval of each run's median from them

FIRST = "2eb33bd2fe3daeec492ac5a216dbeaeca4babe96"      # edgebench 0.1 as first published: one run per bench
BEFORE_2 = "3fcfd8f8cfae8a56d2f145b572a74d9942539813"   # 01e4273~1: the last commit of schema 1 (repeats)
V3 = "2f91245a69483da48f141653740635234967ebde"         # main on 2026-11-29, SCHEMA_VERSION 3

INT8 = "models/digits/digits_int8.tflite"
FP32 = "models/digits/digits_fp32.tflite"
SHORT = ["--min-samples", "50", "--min-time", "0.01", "--max-time", "3", "--target", "0.5"]
REPEATS = ["--repeat", "2", "--max-repeats", "2"]
QEMU = ["--min-samples", "20", "--max-time", "3", "--repeat", "1", "--max-repeats", "1"]
BOARDS = "{boards}"         # replaced by a folder holding HOST_DATASHEET as host-datasheet.yaml
HOST_DATASHEET = """schema: 1
name: host-datasheet
title: host with datasheet figures
kind: linux
transport: {type: local}
runtimes: [ai_edge_litert]
kernels: [xnnpack, builtin, reference]
default_threads: 1
datasheet: {source: a test datasheet, idle_power_w: 1.0, typical_load_power_w: 3.0}
"""

BOTH = [   # (name, arguments): the runs both versions make with the same command
    ("bench-host-int8", ["bench", INT8, "--board", "host", *SHORT, *REPEATS]),
    ("bench-host-fp32", ["bench", FP32, "--board", "host", *SHORT, *REPEATS]),
    ("bench-sim-fixed-rate", ["bench", INT8, "--board", "sim-pi5", "--scenario", "fixed-rate", "--rate", "50",
                              *SHORT, *REPEATS]),
    ("bench-qemu-m4", ["bench", INT8, "--board", "qemu-m4", *QEMU]),
    ("accuracy-host", ["accuracy", INT8, "--baseline", FP32, "--data", "digits"]),
    ("soak-sim", ["soak", INT8, "--board", "sim-pi5", "--max-duration", "120"]),
    ("sweep-sim", ["sweep", INT8, "--board", "sim-pi5", "--duty", "0.5,1", "--window", "20",
                   "--max-duration-per-point", "60"]),
]


def at(commit: str, runs: list) -> list:
    """``runs`` ((name, arguments)) as made by the edgebench of ``commit``: (name, commit, arguments)."""
    return [(name, commit, args) for name, args in runs]


RUNS = {   # version folder -> [(name, commit, arguments)]
    "runs-v1": [
        ("first-bench-host-int8", FIRST, ["bench", INT8, "--board", "host", *SHORT]),
        ("first-bench-host-fp32", FIRST, ["bench", FP32, "--board", "host", *SHORT]),
        *at(BEFORE_2, BOTH),
        # version 1's sim-pi5 had no datasheet power (and this machine no RAPL): the datasheet estimate
        # on a host profile with figures, the profile of version 1's own test (tests/test_energy.py)
        ("energy-host-datasheet", BEFORE_2, ["energy", INT8, "--board", "host-datasheet", "--boards-dir", BOARDS,
                                             "--rate", "20", "--min-samples", "20", "--min-time", "0.5",
                                             "--max-time", "2"]),
        ("mlperf-posix", BEFORE_2, ["bench", INT8, "--board", "posix-sim", "--mlperf"]),
    ],
    "runs-v3": [
        *at(V3, BOTH),
        ("energy-sim", V3, ["energy", INT8, "--board", "sim-pi5", "--rate", "20", "--idle-s", "1",
                            "--min-samples", "20", "--min-time", "1", "--max-time", "3"]),
        ("verify-posix", V3, ["verify", INT8, "--board", "posix-sim"]),
        ("mlperf-posix", V3, ["bench", INT8, "--board", "posix-sim", "--mlperf"]),
    ],
}


def full_commit(commit: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", commit], check=True, capture_output=True,
                          text=True).stdout.strip()


def export(commit: str, into: Path) -> Path:
    """The tree of ``commit`` written into ``into`` (git archive: no checkout, no worktree)."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def trim(run_dir: Path) -> str:
    """Keep the first KEEP samples (KEEP_BENCH of a bench run) of each (repeat, phase) of every
    samples.parquet in the folder (a sweep's points have their own) and drop the PNG plots; what was
    done, for the README."""
    keep = KEEP_BENCH if json.loads((run_dir / "run.json").read_text())["kind"] == "bench" else KEEP
    notes = []
    for path in sorted(run_dir.rglob("samples.parquet")):
        s = pd.read_parquet(path)
        keys = [k for k in ("repeat", "phase") if k in s.columns]
        small = s.groupby(keys, sort=False).head(keep).reset_index(drop=True) if keys else s.head(keep)
        if len(small) < len(s):
            small.to_parquet(path, index=False)
            notes.append(f"{path.relative_to(run_dir)} {len(s):,} -> {len(small):,} rows")
    pngs = sorted(run_dir.rglob("*.png"))
    for path in pngs:
        path.unlink()
    if pngs:
        notes.append("dropped " + ", ".join(p.name for p in pngs))
    return "; ".join(notes)


def size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def make(version: str, work: Path) -> list:
    """Write every run of ``version``; README rows."""
    dest = HERE / version
    (dest / ".edgebench-index.duckdb").unlink(missing_ok=True)
    trees: dict = {}
    rows = []
    for name, commit, args in RUNS[version]:
        if commit not in trees:
            trees[commit] = export(commit, work / commit)
        tree = trees[commit]
        runs = Path(tempfile.mkdtemp(dir=work))
        boards = work / "boards"
        boards.mkdir(exist_ok=True)
        (boards / "host-datasheet.yaml").write_text(HOST_DATASHEET)
        cmd = [sys.executable, "-m", "edgebench", *[str(boards) if a == BOARDS else a for a in args],
               "--runs-dir", str(runs)]
        print(f"{version}/{name}: {' '.join(cmd[1:])} (at {commit})", file=sys.stderr)
        subprocess.run(cmd, cwd=tree, env={"PATH": "/usr/bin:/bin", "HOME": str(work), "PYTHONPATH": str(tree),
                                           "COLUMNS": "120"}, check=True, stdout=subprocess.DEVNULL)
        (made,) = [p.parent for p in runs.glob("*/run.json")]
        target = dest / name
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(made, target)
        note = trim(target)
        rows.append((name, full_commit(commit)[:12], " ".join(["edgebench", *args]).replace(BOARDS, "BOARDS"),
                     size(target), note))
    return rows


BOARDS_NOTE = ("BOARDS: a folder holding `host-datasheet.yaml`, the profile `HOST_DATASHEET` of the script "
               "(version 1's sim-pi5 had no datasheet power figures, and this machine has no RAPL).")


def readme(version: str, rows: list) -> None:
    lines = [f"# {version}: run folders written by the edgebench of schema version {version[-1]}", "",
             "Made by `tests/data/make_old_runs.py` (see its docstring: each commit exported with `git archive`,",
             "run with today's venv, nothing patched; each folder as the verb wrote it but for samples.parquet",
             f"trimmed to the first {KEEP} rows per (repeat, phase), {KEEP_BENCH} for a bench run, and the PNG plots",
             "left out). Every command also had `--runs-dir TMP`.", "",
             "| folder | commit | command | bytes | note |", "|---|---|---|---:|---|"]
    lines += [f"| {name} | {commit} | `{cmd}` | {n:,} | {note} |" for name, commit, cmd, n, note in rows]
    lines += ["", f"Total: {sum(r[3] for r in rows):,} bytes.", ""]
    if any("BOARDS" in r[2] for r in rows):
        lines += [BOARDS_NOTE, ""]
    (HERE / version / "README.md").write_text("\n".join(lines))


def main(argv: list) -> None:
    versions = argv or list(RUNS)
    with tempfile.TemporaryDirectory() as tmp:
        for version in versions:
            rows = make(version, Path(tmp) / version)
            readme(version, rows)


if __name__ == "__main__":
    main(sys.argv[1:])
