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

4. **Issue 29** (``issue29``): links planted for the farm fan-out's outputs (in-process: no
   coordinator here), the firmware's model blob (``flash --model``) and acknowledged.json; a
   400 kB nested acknowledged.json; 20 concurrent ``ack``s; terminal escapes in an ack reason;
   a NaN median in one run; bench on a full 64 kB tmpfs (root only); /proc/self/mem, a FIFO and
   /dev/zero as a model; SIGKILLed profile, layer-error and quantize, and a damaged run.json,
   then ``--recover`` / the next run's clean-up.

Usage:  python benchmarks/bad_input_sweep.py [--families numeric,tampered,links,issue29] [--timeout 120] [--json FILE]
Goal (issues 22, 29): 0 unexpected, 0 tracebacks, 0 files written outside the runs folder, 0 victims
changed, 0 runs left running, 0 commands over 60 s.
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


# ----------------------------------------------------------------------------- issue 29, second round

def _victim(scratch: Scratch) -> Path:
    v = scratch.root / "victim.txt"
    v.write_text("precious\n")
    return v


def _row(scratch: Scratch, argv: list, timeout_s: float, case: str, victim: Path | None = None,
         before: bytes | None = None) -> dict:
    row = run(scratch, argv, timeout_s)
    row["case"] = case
    if victim is not None:
        row["victim_changed"] = victim.read_bytes() != before
    row["written_outside"] = [p for p in scratch.written_outside() if victim is None or p != str(victim)]
    row["left_running"] = _running(scratch.runs)
    print(f"{case}: {argv[0]} {row['outcome']} ({row['elapsed_s']} s) {(row['error'] or '')[:100]}"
          f"{' VICTIM CHANGED' if row.get('victim_changed') else ''}", flush=True)
    return row


def _bench_argv(scratch: Scratch, model=INT8) -> list:
    return ["bench", model, *SHORT["bench"], "--runs-dir", scratch.runs]


def _farm_case(base: Path) -> dict:
    """The fan-out's own step that opens each place's outputs (a labgrid coordinator cannot run here):
    a link planted as PLACE/stdout.json and a place folder that is a link; in-process, the real code."""
    from edgebench.cli.farm_fanout import _run_children
    from edgebench.farm.fanout import FanoutSummary, PlaceOutcome

    scratch = Scratch(base)
    victim = _victim(scratch)
    before = victim.read_bytes()
    session = scratch.runs / "farm-bench-20260101T000000Z"
    (session / "p1").mkdir(parents=True)
    os.symlink(victim, session / "p1" / "stdout.json")
    os.symlink(victim, session / "p2")
    summary = FanoutSummary("bench", {"x": "1"}, "127.0.0.1:1", str(session), "now",
                            [PlaceOutcome(n, "sim-pi5") for n in ("p1", "p2", "p3")])

    class Quiet:
        def print(self, *a, **k):
            pass

    t0 = time.monotonic()
    _run_children(summary, [["--version"]] * 3, session, Quiet())
    code = summary.exit_code()
    row = {"argv": ["farm fan-out (in-process)"], "case": "farm: planted links", "rc": code,
           "outcome": "one line" if code == 1 else f"exit {code}", "error": summary.places[0].message,
           "elapsed_s": round(time.monotonic() - t0, 2), "victim_changed": victim.read_bytes() != before,
           "written_outside": [p for p in scratch.written_outside() if p != str(victim)]}
    print(f"farm: planted links: exit {code}, statuses {[o.status for o in summary.places]}"
          f"{' VICTIM CHANGED' if row['victim_changed'] else ''}", flush=True)
    return row


def _full_disk(base: Path, timeout_s: float) -> list:
    """bench into a 64 kB tmpfs, filled to 0, 20, 40 and 56 kB free (needs root to mount; else skipped)."""
    if os.geteuid() != 0:
        print("full disk: skipped (mounting a tmpfs needs root)", flush=True)
        return []
    rows = []
    for free_kb in (0, 20, 40, 56):
        scratch = Scratch(base)
        mnt = scratch.root / "full"
        mnt.mkdir()
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)]).returncode:
            print("full disk: skipped (mount refused)", flush=True)
            return rows
        try:
            (mnt / "fill").write_bytes(b"\0" * ((64 - free_kb) * 1024 - 1)) if free_kb < 64 else None
        except OSError:
            pass
        try:
            scratch.before = scratch.snapshot()
            argv = ["bench", INT8, *SHORT["bench"], "--repeat", "2", "--max-repeats", "2", "--runs-dir", mnt / "runs"]
            row = _row(scratch, argv, timeout_s, f"full disk, {free_kb} kB free")
            row["left_running"] = _running(mnt / "runs") if (mnt / "runs").exists() else []
            row["written_outside"] = [p for p in row["written_outside"] if not p.startswith(str(mnt))]
            rows.append(row)
        finally:
            subprocess.run(["umount", str(mnt)])
    return rows


KILL = {   # a child that stores part of a run and is SIGKILLed at a chosen point (the real kill)
    "profile": """
import os, signal, sys
from edgebench.bench import profile as P
from edgebench.boards.registry import get_profile
orig = P.ProfileRun._summarise
def summarise(self, status, reason):
    orig(self, status, reason)
    if len(self.repeats) == 1:
        os.kill(os.getpid(), signal.SIGKILL)
P.ProfileRun._summarise = summarise
P.run_profile(sys.argv[1], get_profile("host"), P.ProfileOptions(repeat=3, op_time_s=0.05, whole_time_s=0.2),
              runs_root=sys.argv[2])
""",
    "layer-error": """
import os, signal, sys
from edgebench.bench import layer_error as L
from edgebench.bench.record import RunFolder
RunFolder.save = lambda self, *a, **k: os.kill(os.getpid(), signal.SIGKILL)
L.run_layer_error(sys.argv[1], sys.argv[3], L.LayerErrorOptions(count=8), runs_root=sys.argv[2])
""",
    "quantize": """
import os, signal, sys
from pathlib import Path
from edgebench.quantize import sidecar
sidecar.write_temp(Path(sys.argv[1]), b"half a model")
os.kill(os.getpid(), signal.SIGKILL)
""",
}


def _kill(scratch: Scratch, verb: str, *args) -> int:
    return subprocess.run([sys.executable, "-c", KILL[verb], *map(str, args)], env=scratch.env, cwd=scratch.root,
                          capture_output=True, timeout=600).returncode


def family_issue29(base: Path, timeout_s: float) -> list:
    rows = [_farm_case(base)]
    from edgebench.mcu.blob import convert
    from edgebench.modelfile import read_model

    # flash --model: the blob's folder name is computable from a public model
    crc = convert(read_model(INT8)).crc32
    for how in ("file", "folder"):
        scratch = Scratch(base)
        victim = _victim(scratch)
        build = scratch.root / "build"
        where = build / "posix" / f"model-{crc:08x}"
        if how == "file":
            where.mkdir(parents=True)
            os.symlink(victim, where / "model.ebm")
        else:
            where.parent.mkdir(parents=True)
            os.symlink(scratch.root, where)
        scratch.env["EDGEBENCH_FIRMWARE_BUILD"] = str(build)
        scratch.before = scratch.snapshot()
        rows.append(_row(scratch, ["flash", "--board", "posix-sim", "--model", INT8, "--build-only"], timeout_s,
                         f"flash: link as the blob {how}", victim, victim.read_bytes()))
        rows[-1]["written_outside"] = [p for p in rows[-1]["written_outside"] if not p.startswith(str(build))]

    # acknowledged.json: a link out of the folder, 400 kB of nested brackets
    for how in ("link", "nested"):
        scratch = Scratch(base)
        victim = _victim(scratch)
        victim.write_text(json.dumps({"format": "edgebench-acks", "version": 1,
                                      "acknowledged": [{"code": "single-session", "reason": "planted"}]}))
        before = victim.read_bytes()
        subprocess.run([sys.executable, "-m", "edgebench", *map(str, _bench_argv(scratch))], env=scratch.env,
                       capture_output=True, timeout=timeout_s)
        acks = scratch.runs / "acknowledged.json"
        if how == "link":
            os.symlink(victim, acks)
        else:
            acks.write_text("[" * 200_000 + "]" * 200_000)
        scratch.before = scratch.snapshot()
        for argv in (["runs", "latest", "--runs-dir", scratch.runs],
                     ["report", "latest", "--runs-dir", scratch.runs, "-o", scratch.runs / "r.html"],
                     ["ack", "cpufreq-unknown", "--reason", "x", "--runs-dir", scratch.runs],
                     ["ack", "--list", "--runs-dir", scratch.runs], _bench_argv(scratch)):
            rows.append(_row(scratch, argv, timeout_s, f"acknowledged.json as a {how}", victim, before))

    # 20 concurrent acks: all kept
    scratch = Scratch(base)
    procs = [subprocess.Popen([sys.executable, "-m", "edgebench", "ack", f"code-{i:02d}", "--reason", "r",
                               "--runs-dir", str(scratch.runs)], env=scratch.env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True) for i in range(20)]
    said = sum(p.wait(timeout=timeout_s) == 0 for p in procs)
    kept = len(json.loads((scratch.runs / "acknowledged.json").read_text())["acknowledged"])
    print(f"20 concurrent acks: {said} said acknowledged, {kept} kept", flush=True)
    rows.append({"argv": ["ack x20"], "case": "20 concurrent acks", "rc": 0 if kept == said == 20 else 1,
                 "outcome": "ok" if kept == said == 20 else f"lost {said - kept}", "error": None, "elapsed_s": 0,
                 "concurrent": {"said": said, "kept": kept}})

    # terminal escapes in an ack reason
    scratch = Scratch(base)
    esc = "\x1b]0;owned\x07\x1b[2J\x9b31m"
    rows.append(_row(scratch, ["ack", "single-session", "--reason", esc, "--runs-dir", scratch.runs], timeout_s,
                     "escape sequences in an ack reason"))
    p = subprocess.run([sys.executable, "-m", "edgebench", "ack", "--list", "--runs-dir", str(scratch.runs)],
                       env=scratch.env, capture_output=True, text=True, timeout=timeout_s)
    raw = any(c in p.stdout + p.stderr for c in "\x1b\x07\x9b")
    print(f"escape sequences in an ack reason: ack --list {'RAW ESCAPES' if raw else 'escaped'}", flush=True)
    rows.append({"argv": ["ack", "--list"], "case": "escape sequences printed", "rc": p.returncode,
                 "outcome": "raw escapes" if raw else ("ok" if p.returncode == 0 else f"exit {p.returncode}"),
                 "error": None, "elapsed_s": 0})

    # a NaN median in one of two runs
    scratch = Scratch(base)
    for _ in range(2):
        subprocess.run([sys.executable, "-m", "edgebench", *map(str, _bench_argv(scratch))], env=scratch.env,
                       capture_output=True, timeout=timeout_s)
    first = sorted(d for d in scratch.runs.iterdir() if d.is_dir())[0]
    doc = json.loads((first / "run.json").read_text())
    doc["latency"]["e2e"]["median_s"] = float("nan")
    (first / "run.json").write_text(json.dumps(doc))
    for argv in (["runs", "--runs-dir", scratch.runs], ["runs", first.name, "--runs-dir", scratch.runs],
                 ["report", first.name, "--runs-dir", scratch.runs, "-o", scratch.runs / "r.html"]):
        rows.append(_row(scratch, argv, timeout_s, "a NaN median in one run"))

    rows += _full_disk(base, timeout_s)

    # non-regular files as a model
    scratch = Scratch(base)
    fifo = scratch.root / "fifo.tflite"
    os.mkfifo(fifo)
    for model in ("/proc/self/mem", fifo, "/dev/zero"):
        for argv in (_bench_argv(scratch, model), ["inspect", model],
                     ["quantize", model, "--calib", "digits", "-o", scratch.runs / "q"]):
            rows.append(_row(scratch, argv, timeout_s, f"{model} as a model"))

    # runs killed mid-way, then --recover
    scratch = Scratch(base)
    _kill(scratch, "profile", INT8, scratch.runs / "p")
    _kill(scratch, "layer-error", INT8, scratch.runs / "l", FP32)
    for verb, folder in (("profile", "p"), ("layer-error", "l")):
        for d in sorted((scratch.runs / folder).iterdir()):
            rows.append(_row(scratch, [verb, "--recover", d], timeout_s, f"SIGKILLed {verb}"))
    d = killed_bench(scratch.runs)
    (d / "run.json").write_text('{"format": "edgebench-run", "run_id": ')
    rows.append(_row(scratch, ["bench", "--recover", d], timeout_s, "damaged run.json, journal copy"))
    recovered = [r for r in rows if r["case"].startswith(("SIGKILLed", "damaged run.json"))]
    for r in recovered:              # judged once every recovery has run (one run counted at another's turn)
        r["left_running"] = []
    recovered[-1]["left_running"] = _running(scratch.runs)
    out = scratch.runs / "q"
    _kill(scratch, "quantize", out / "m.tflite")
    from edgebench.quantize.sidecar import remove_stale

    left = len(list(out.glob(".m.tflite.*.partial")))
    removed = len(remove_stale([out / "m.tflite"]))
    print(f"SIGKILLed quantize: {left} partial file(s) left, {removed} removed by the next run's clean-up", flush=True)
    rows.append({"argv": ["quantize (killed, then the next run's clean-up)"], "case": "quantize .partial",
                 "rc": 0, "outcome": "ok" if removed == left and not list(out.glob("*.partial")) else "left",
                 "error": None, "elapsed_s": 0})
    return rows


def summary(rows: list) -> dict:
    out = {"commands": len(rows)}
    for row in rows:
        out[row["outcome"]] = out.get(row["outcome"], 0) + 1
    out["written_outside"] = sum(bool(r.get("written_outside")) for r in rows)
    out["victims_changed"] = sum(bool(r.get("victim_changed")) for r in rows)
    out["left_running"] = sum(bool(r.get("left_running")) for r in rows)
    out["over_60_s"] = sum((r.get("elapsed_s") or 0) > 60 or r.get("outcome") == "stalled" for r in rows)
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
    if "issue29" in families:
        report["issue29"] = family_issue29(base, args.timeout)
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
