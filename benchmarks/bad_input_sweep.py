"""Bad input a user (or a shared runs folder) can bring, as real command lines (issue 22).

Three families, each command a real ``edgebench`` process in a scratch folder with its own
HOME and XDG folders, so anything written outside the runs folder shows:

1. **Numeric options**: every int/float option of every verb (found by walking the CLI), each
   with 0, -1, nan, inf, -inf, 1e-320, 1e308 and 1e20, on top of a short run of that verb on
   the simulated board (sim-pi5) or the host.
2. **Tampered run folders**: killed bench runs (run.json ``running``, journals on disk) with a
   byte flipped in a journal segment or in run.json, or run.json cut short; then ``bench
   --recover``, ``runs``, ``report``, ``check``.
3. **Planted symbolic links**: a link to a file outside (the "victim") as run.json,
   samples.parquet, a journal segment, a temporary name of the old writer, or as the run
   folder itself; then ``runs``, ``report``, ``check``, ``compare``, ``bench --recover``.

Counted per family: commands, finished ok, refused with one ``error:`` line (exit 1),
"unexpected" errors, tracebacks, commands that did not end within ``--timeout``, runs left
``running`` that recovery was asked to finish, victim files changed and files written outside
the runs folder.

Usage:  python benchmarks/bad_input_sweep.py [--families numeric,tampered,links] [--timeout 120] [--json FILE]
Goal (issue 22): 0 unexpected, 0 tracebacks, 0 files written outside the runs folder.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import typing
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
INT8 = ROOT / "models" / "digits" / "digits_int8.tflite"
FP32 = ROOT / "models" / "digits" / "digits_fp32.tflite"
VALUES = ["0", "-1", "nan", "inf", "-inf", "1e-320", "1e308", "100000000000000000000"]

SHORT = {   # a short run of each verb; the option under test comes last (the last one counts)
    "bench": ["--board", "sim-pi5", "--max-time", "2", "--min-time", "0.2", "--repeat", "1", "--max-repeats", "1",
              "--sessions", "1", "--min-samples", "20"],
    "demo": ["--board", "sim-pi5", "--max-time", "2", "--min-time", "0.2", "--repeat", "1"],
    "energy": ["--board", "sim-pi5", "--rate", "20", "--max-time", "2", "--min-time", "0.5", "--idle-s", "0.5",
               "--min-samples", "5"],
    "soak": ["--board", "sim-pi5", "--max-duration", "8", "--window", "2", "--burst", "1"],
    "sweep": ["--board", "sim-pi5", "--duty", "1.0", "--max-duration-per-point", "6", "--window", "2", "--burst", "1"],
    "verify": ["--board", "host", "--count", "2"],
    "accuracy": ["--baseline", str(FP32), "--data", "digits"],
    "battery": ["--idle-w", "0.001", "--event-above-idle-j", "0.001", "--rate", "1"],
    "quantize": ["--calib", "digits"],
}
POSITIONAL = {"bench": [INT8], "energy": [INT8], "soak": [INT8], "sweep": [INT8], "verify": [INT8],
              "accuracy": [INT8], "quantize": [INT8], "compile": [INT8], "deploy": [INT8], "inspect": [INT8]}
CONFLICTS = {("energy", "--duty"): ["--rate", "20"], ("battery", "--duty"): ["--rate", "1"],
             ("battery", "--active-w"): ["--event-above-idle-j", "0.001"],
             ("battery", "--event-j"): ["--event-above-idle-j", "0.001"]}


class Scratch:
    """A folder with its own HOME/XDG folders and a runs folder; what changed outside the runs folder."""

    def __init__(self, base: Path):
        self.root = Path(tempfile.mkdtemp(dir=base))
        self.runs = self.root / "runs"
        self.runs.mkdir()
        self.env = dict(os.environ, HOME=str(self.root / "home"), XDG_STATE_HOME=str(self.root / "home/state"),
                        XDG_CACHE_HOME=str(self.root / "home/cache"), XDG_CONFIG_HOME=str(self.root / "home/config"),
                        MPLCONFIGDIR=str(self.root / "home/mpl"), COLUMNS="160",
                        PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        (self.root / "home").mkdir()
        self.before = self.snapshot()

    def snapshot(self) -> dict:
        out = {}
        for path in self.root.rglob("*"):
            if path.is_relative_to(self.runs) or path.is_relative_to(self.root / "home"):
                continue
            if path.is_file() and not path.is_symlink():
                out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
        return out

    def written_outside(self) -> list:
        now = self.snapshot()
        return sorted(p for p, h in now.items() if self.before.get(p) != h)


def run(scratch: Scratch, argv: list, timeout_s: float) -> dict:
    t0 = time.monotonic()
    try:
        p = subprocess.run([sys.executable, "-m", "edgebench", *map(str, argv)], capture_output=True, text=True,
                           cwd=scratch.root, env=scratch.env, timeout=timeout_s, stdin=subprocess.DEVNULL)
        rc, err = p.returncode, p.stderr
    except subprocess.TimeoutExpired as exc:
        rc, err = None, (exc.stderr or b"").decode("utf-8", "replace") if isinstance(exc.stderr, bytes) else ""
    errors = [ln for ln in err.splitlines() if ln.startswith("error:")]
    if rc is None:
        outcome = "stalled"
    elif "Traceback" in err:
        outcome = "traceback"
    elif any("unexpected" in ln for ln in errors):
        outcome = "unexpected"
    elif rc == 0:
        outcome = "ok"
    elif rc in (1, 2) and len(errors) == 1:
        outcome = "one line"
    else:
        outcome = f"exit {rc}, {len(errors)} error lines"
    return {"argv": [str(a) for a in argv], "rc": rc, "outcome": outcome, "error": errors[0] if errors else None,
            "elapsed_s": round(time.monotonic() - t0, 2)}


def numeric_options() -> list:
    import typer.main

    from edgebench.cli.app import app

    out = []
    for verb, cmd in sorted(typer.main.get_command(app).commands.items()):
        for p in cmd.params:
            td = getattr(p, "type_descriptor", None)
            args = typing.get_args(td.annotation) or (td.annotation,) if td is not None else ()
            if any(a in (int, float) for a in args) and bool not in args and p.opts[0].startswith("--"):
                out.append((verb, p.opts[0]))
    return out


def family_numeric(base: Path, timeout_s: float, only: str | None) -> list:
    rows = []
    for verb, flag in numeric_options():
        if only and verb != only:
            continue
        for value in VALUES:
            scratch = Scratch(base)
            short = list(SHORT.get(verb, []))
            drop = CONFLICTS.get((verb, flag))
            if drop:
                i = short.index(drop[0])
                del short[i:i + len(drop)]
            argv = [verb, *POSITIONAL.get(verb, []), *short, flag, value]
            if verb not in ("inspect", "compile", "quantize", "battery", "demo", "check"):
                argv += ["--runs-dir", scratch.runs]
            row = run(scratch, argv, timeout_s)
            row["written_outside"] = scratch.written_outside()
            row["left_running"] = _running(scratch.runs)
            rows.append(row)
            print(f"{verb} {flag} {value}: {row['outcome']} ({row['elapsed_s']} s) {(row['error'] or '')[:110]}",
                  flush=True)
    return rows


def _running(runs: Path) -> list:
    out = []
    for rj in runs.rglob("run.json"):
        try:
            if json.loads(rj.read_text()).get("status") == "running":
                out.append(str(rj.parent))
        except (OSError, ValueError):
            pass
    return out


def killed_bench(runs: Path) -> Path:
    """A sim-pi5 bench whose process 'died' right before finishing (run.json running, journals on disk)."""
    from edgebench.bench.latency import BenchOptions, BenchSession
    from edgebench.boards.registry import get_profile

    finish = BenchSession.finish
    BenchSession.finish = lambda self, status, reason: None
    try:
        s = BenchSession(INT8, get_profile("sim-pi5"),
                         BenchOptions(min_samples=30, min_time_s=0.2, max_time_s=3, repeat=2, max_repeats=2,
                                      sessions=1), runs_root=runs)
        s.run()
    finally:
        BenchSession.finish = finish
    return s.run_dir


def family_tampered(base: Path, timeout_s: float, cases: int, seed: int) -> list:
    rng = random.Random(seed)
    rows = []
    for _ in range(cases):
        scratch = Scratch(base)
        d = killed_bench(scratch.runs)
        scratch.before = scratch.snapshot()
        files = sorted(d.glob("*.journal.*")) + [d / "run.json"]
        target = files[rng.randrange(len(files))]
        data = bytearray(target.read_bytes())
        how = rng.choice(["flip", "flip", "flip", "cut"])
        if how == "flip":
            pos = rng.randrange(len(data))
            data[pos] ^= 1 << rng.randrange(8)
        else:
            data = data[:rng.randrange(len(data))]
        target.write_bytes(bytes(data))
        what = f"{target.name}: {how}"
        for argv in (["bench", "--recover", d], ["runs", "--runs-dir", scratch.runs],
                     ["report", "latest", "--runs-dir", scratch.runs, "-o", scratch.runs / "r.html"],
                     ["check", "latest", "--runs-dir", scratch.runs]):
            row = run(scratch, argv, timeout_s)
            row["case"] = what
            row["written_outside"] = scratch.written_outside()
            rows.append(row)
        status = None
        try:
            status = json.loads((d / "run.json").read_text()).get("status")
        except (OSError, ValueError):
            pass
        rows[-4]["left_running"] = [str(d)] if status == "running" and rows[-4]["outcome"] == "ok" else []
        print(f"tampered {what}: recover {rows[-4]['outcome']} (status {status}), runs {rows[-3]['outcome']}, "
              f"report {rows[-2]['outcome']}, check {rows[-1]['outcome']}", flush=True)
    return rows


def family_links(base: Path, timeout_s: float) -> list:
    from edgebench.results import store
    from edgebench.results.model import RunResult

    rows = []
    for plant in ("run.json", "samples.parquet", "samples.journal.0000.arrows", ".run.json.PID.tmp", "folder"):
        scratch = Scratch(base)
        victim = scratch.root / "victim.txt"
        victim.write_text("precious\n")
        a = scratch.runs / "20260101-000000-a-sim-pi5"
        b = scratch.runs / "20260101-000001-b-sim-pi5"
        for d, rid in ((a, "aaaaaaaaaaaa"), (b, "bbbbbbbbbbbb")):
            d.mkdir()
            store.write_result(d, RunResult(run_id=rid, created_utc="2026-01-01T00:00:00+00:00", kind="bench",
                                            status="running"))
        if plant == "run.json":
            (b / "run.json").unlink()
            os.symlink(victim, b / "run.json")
        elif plant == "folder":
            outside = scratch.root / "elsewhere"
            os.rename(b, outside)
            os.symlink(outside, b)
        else:
            name = plant.replace("PID", "*")
            if "*" in name:                    # the old writer's temp names, for the pids a command may get
                for pid in range(os.getpid(), os.getpid() + 2000):
                    os.symlink(victim, b / f".run.json.{pid}.tmp")
            else:
                os.symlink(victim, b / plant)
        scratch.before = scratch.snapshot()
        before = victim.read_bytes()
        for argv in (["bench", "--recover", b], ["runs", "--runs-dir", scratch.runs],
                     ["report", b.name, "--runs-dir", scratch.runs, "-o", scratch.runs / "r.html"],
                     ["check", b.name, "--runs-dir", scratch.runs],
                     ["compare", a.name, b.name, "--runs-dir", scratch.runs]):
            row = run(scratch, argv, timeout_s)
            row["case"] = f"link as {plant}"
            row["victim_changed"] = victim.read_bytes() != before
            row["written_outside"] = [p for p in scratch.written_outside() if p != str(victim)]
            rows.append(row)
            print(f"link as {plant}: {argv[0]} {row['outcome']} {(row['error'] or '')[:100]}"
                  f"{' VICTIM CHANGED' if row['victim_changed'] else ''}", flush=True)
    return rows


def summary(rows: list) -> dict:
    out = {"commands": len(rows)}
    for row in rows:
        out[row["outcome"]] = out.get(row["outcome"], 0) + 1
    out["written_outside"] = sum(bool(r.get("written_outside")) for r in rows)
    out["victims_changed"] = sum(bool(r.get("victim_changed")) for r in rows)
    out["left_running"] = sum(bool(r.get("left_running")) for r in rows)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", default="numeric,tampered,links")
    ap.add_argument("--verb", help="numeric family: only this verb")
    ap.add_argument("--tampered", type=int, default=20, help="tampered run folders")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--json", help="write every command and the summary to this file")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="eb-bad-input-"))
    report = {}
    families = args.families.split(",")
    if "numeric" in families:
        report["numeric"] = family_numeric(base, args.timeout, args.verb)
    if "tampered" in families:
        report["tampered"] = family_tampered(base, args.timeout, args.tampered, seed=22)
    if "links" in families:
        report["links"] = family_links(base, args.timeout)
    totals = {name: summary(rows) for name, rows in report.items()}
    for name, s in totals.items():
        print(f"{name}: {json.dumps(s)}")
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": totals, "commands": report}, indent=2, default=str))
    bad = sum(s.get("unexpected", 0) + s.get("traceback", 0) + s["written_outside"] + s["victims_changed"]
              for s in totals.values())
    return 0 if bad == 0 else 2


if __name__ == "__main__":
    sys.exit(main())
