"""Issue 29, hardening second round: each attack or mistake reproduced first, then refused.

Links planted in predictable folders (farm fan-out, the firmware's model blob, acknowledged.json),
a hostile acknowledged.json, concurrent acks, terminal escapes in untrusted text, one bad run in
a folder, a full disk, a non-regular model path, and runs killed mid-way that must be recoverable.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import DIGITS_FP32, DIGITS_INT8

from edgebench.errors import ResultError, UsageError

ROOT = Path(__file__).resolve().parents[1]


def run_cli(*args, cwd=None, env=None):
    return subprocess.run([sys.executable, "-m", "edgebench", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=300, stdin=subprocess.DEVNULL,
                          env=dict(os.environ, COLUMNS="200", **(env or {})))


def _victim(tmp_path: Path) -> Path:
    v = tmp_path / "victim.txt"
    v.write_text("precious\n")
    return v


# ---------------------------------------------------------------- the one writer: streams and blobs

def test_open_stream_refuses_a_planted_link_and_a_linked_folder(tmp_path):
    from edgebench.results.files import open_stream

    victim = _victim(tmp_path)
    (tmp_path / "s").mkdir()
    os.symlink(victim, tmp_path / "s" / "out.json")
    with pytest.raises(ResultError, match="symbolic link"):
        open_stream(tmp_path / "s" / "out.json")
    os.symlink(tmp_path / "elsewhere", tmp_path / "s" / "linked")
    (tmp_path / "elsewhere").mkdir()
    with pytest.raises(ResultError, match="symbolic link"):
        open_stream(tmp_path / "s" / "linked" / "out.json")
    assert victim.read_text() == "precious\n" and not (tmp_path / "elsewhere" / "out.json").exists()
    with open_stream(tmp_path / "s" / "new" / "out.json") as f:
        f.write(b"ok")
    assert (tmp_path / "s" / "new" / "out.json").read_bytes() == b"ok"


def test_farm_fan_out_never_writes_through_a_planted_link_and_fails(tmp_path):
    from edgebench.cli.farm_fanout import _run_children
    from edgebench.farm.fanout import FanoutSummary, PlaceOutcome

    victim = _victim(tmp_path)
    session = tmp_path / "farm-bench-20260101T000000Z"
    (session / "p1").mkdir(parents=True)
    os.symlink(victim, session / "p1" / "stdout.json")        # the race the issue describes, won in advance
    os.symlink(victim, session / "p2")                        # a place folder that is a link
    summary = FanoutSummary("bench", {"x": "1"}, "127.0.0.1:1", str(session), "now",
                            [PlaceOutcome("p1", "sim-pi5"), PlaceOutcome("p2", "sim-pi5"),
                             PlaceOutcome("p3", "sim-pi5")])
    lines = []

    class Err:
        def print(self, text, **kw):
            lines.append(text)

    _run_children(summary, [["--version"]] * 3, session, Err())
    assert victim.read_text() == "precious\n"
    by = {o.place: o for o in summary.places}
    assert by["p1"].status == "failed" and "symbolic link" in by["p1"].message
    assert by["p2"].status == "failed"
    assert by["p3"].status == "ok" and (session / "p3" / "stdout.json").read_text().startswith("edgebench")
    assert summary.exit_code() == 1
    assert any("p1" in ln and "not run" in ln for ln in lines)


def test_session_folder_is_always_a_new_one(tmp_path):
    import datetime as dt

    from edgebench.farm.fanout import session_dir

    now = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    os.symlink(tmp_path / "victim-folder", tmp_path / "farm-bench-20260101T000000Z")   # planted, dangling
    got = session_dir(tmp_path, "bench", now)
    assert got.name == "farm-bench-20260101T000000Z-2" and got.is_dir() and not got.is_symlink()


def test_flash_model_blob_is_not_written_through_a_link(tmp_path):
    from edgebench.mcu.blob import convert
    from edgebench.mcu.firmware import _stage_blob
    from edgebench.modelfile import read_model

    victim = _victim(tmp_path)
    crc = convert(read_model(DIGITS_INT8)).crc32
    where = tmp_path / "build" / f"model-{crc:08x}"
    where.mkdir(parents=True)
    os.symlink(victim, where / "model.ebm")
    with pytest.raises(UsageError, match="symbolic link"):
        _stage_blob(DIGITS_INT8, tmp_path / "build")
    assert victim.read_text() == "precious\n"
    os.unlink(where / "model.ebm")
    os.rmdir(where)
    os.symlink(tmp_path, where)                     # the folder itself a link out of the build folder
    with pytest.raises(UsageError, match="symbolic link"):
        _stage_blob(DIGITS_INT8, tmp_path / "build")
    assert not (tmp_path / "model.ebm").exists()
    os.unlink(where)
    _, path = _stage_blob(DIGITS_INT8, tmp_path / "build")
    assert path.read_bytes() == convert(read_model(DIGITS_INT8)).data
    mtime = path.stat().st_mtime_ns
    _stage_blob(DIGITS_INT8, tmp_path / "build")            # same bytes: not rewritten (make relinks only on change)
    assert path.stat().st_mtime_ns == mtime


# ------------------------------------------------------------------------------- acknowledged.json

def test_acks_are_not_read_through_a_link(tmp_path):
    from edgebench.results import acks

    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"format": "edgebench-acks", "version": 1,
                                   "acknowledged": [{"code": "single-session", "reason": "planted"}]}))
    runs = tmp_path / "runs"
    runs.mkdir()
    os.symlink(outside, runs / acks.ACKS_FILE)
    with pytest.raises(ResultError, match="symbolic link"):
        acks.read_acks(runs)
    problems: list = []
    assert acks.acks_for([runs / "some-run"], problems) == {} and len(problems) == 1


def test_a_hostile_acks_file_is_one_warning_and_ack_refuses_it(tmp_path):
    from edgebench.results import acks

    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / acks.ACKS_FILE).write_text("[" * 200_000 + "]" * 200_000)       # 400 kB of nested brackets
    with pytest.raises(ResultError, match="nests deeper"):
        acks.read_acks(runs)
    problems: list = []
    assert acks.acks_for([runs / "r"], problems) == {} and problems[0].startswith("acknowledgements ignored")
    p = run_cli("ack", "single-session", "--runs-dir", runs)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert [ln for ln in p.stderr.splitlines() if ln.strip()][0].startswith("error:") and "nests deeper" in p.stderr
    assert (runs / acks.ACKS_FILE).read_text().startswith("[[[")           # not overwritten


@pytest.mark.slow
def test_bench_with_a_hostile_acks_file_stores_its_run_and_exits_0(tmp_path):
    from edgebench.results import acks

    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / acks.ACKS_FILE).write_text("[" * 200_000 + "]" * 200_000)
    p = run_cli("bench", DIGITS_INT8, "--board", "sim-pi5", "--max-time", "1", "--min-time", "0.2", "--repeat", "1",
                "--max-repeats", "1", "--sessions", "1", "--min-samples", "20", "--runs-dir", runs)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr and "unexpected" not in p.stderr
    assert sum("acknowledgements ignored" in ln for ln in (p.stdout + p.stderr).splitlines()) >= 1
    (run,) = [d for d in runs.iterdir() if d.is_dir()]
    for argv in (["runs", run.name, "--runs-dir", runs],
                 ["report", run.name, "--runs-dir", runs, "-o", tmp_path / "r.html"]):
        q = run_cli(*argv)
        assert q.returncode == 0 and "Traceback" not in q.stderr, q.stderr


def test_twenty_concurrent_acks_are_all_kept(tmp_path):
    from edgebench.results import acks

    runs = tmp_path / "runs"
    runs.mkdir()
    codes = [f"code-{i:02d}" for i in range(20)]
    with ThreadPoolExecutor(20) as pool:     # threads: flock locks are per open file, so this contends
        list(pool.map(lambda c: acks.acknowledge(runs, c, "why"), codes))
    assert sorted(acks.read_acks(runs)) == codes
    assert not (runs / acks.LOCK_FILE).is_symlink()


def test_the_ack_lock_is_not_made_through_a_link(tmp_path):
    from edgebench.results import acks

    victim = _victim(tmp_path)
    runs = tmp_path / "runs"
    runs.mkdir()
    os.symlink(victim, runs / acks.LOCK_FILE)
    with pytest.raises(ResultError, match="cannot lock"):
        acks.acknowledge(runs, "single-session", "x")
    assert victim.read_text() == "precious\n"


# ----------------------------------------------------------------------- terminal escape sequences

ESC = "\x1b]0;owned\x07\x1b[2J\x9b31m\rhidden"


def test_safe_text_makes_controls_visible_and_keeps_lines():
    from edgebench.cli.output import safe_text

    got = safe_text(f"a\tb\n{ESC}")
    assert "\x1b" not in got and "\x07" not in got and "\x9b" not in got and "\r" not in got
    assert got.startswith("a\tb\n") and "\\x1b]0;owned\\x07" in got and "\\x9b31m" in got


def test_an_ack_reason_with_escapes_reaches_the_terminal_escaped(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    p = run_cli("ack", "single-session", "--reason", ESC, "--runs-dir", runs)
    assert p.returncode == 0, p.stderr
    listed = run_cli("ack", "--list", "--runs-dir", runs)
    assert listed.returncode == 0 and "\\x1b]0;owned" in listed.stdout
    assert not any(c in listed.stdout + listed.stderr for c in "\x1b\x07\x9b\r")


def test_tables_and_plain_lines_are_escaped(capsys):
    from rich.table import Table

    from edgebench.cli.output import get_console

    t = Table()
    t.add_column("class")
    t.add_row(f"cat{ESC}")                         # a class name read from a labels file
    get_console().print(t)
    get_console().print(f"label {ESC}", markup=False)
    out = capsys.readouterr().out
    assert "\x1b]0;owned" not in out and "\x9b" not in out and "\x07" not in out


def test_onnx_input_names_with_escapes_print_escaped(tmp_path):
    pytest.importorskip("onnx")
    import onnx

    sys.path.insert(0, str(Path(__file__).parent))
    from onnx_graphs import H, model

    name = "in\x1b]0;owned\x07put"
    m = model([H("Relu", [name], ["y"])], {name: [1, 4]}, {"y": [1, 4]})
    onnx.save(m, str(tmp_path / "m.onnx"))
    p = run_cli("inspect", tmp_path / "m.onnx")
    assert "Traceback" not in p.stderr
    assert "\x1b]0;owned" not in p.stdout + p.stderr and "\x07" not in p.stdout + p.stderr
    assert p.returncode != 0 or "\\x1b]0;owned" in p.stdout


# ------------------------------------------------------------------- one bad run, a full disk, /proc

def _bench(runs: Path, repeat: int = 1):
    from edgebench.bench.latency import BenchOptions, BenchSession
    from edgebench.boards.registry import get_profile

    opts = BenchOptions(min_samples=30, min_time_s=0.2, max_time_s=2, repeat=repeat, max_repeats=repeat, sessions=1)
    return BenchSession(DIGITS_INT8, get_profile("sim-pi5"), opts, runs_root=runs)


@pytest.mark.slow
def test_a_nan_median_skips_that_run_only(tmp_path):
    runs = tmp_path / "runs"
    for _ in range(2):
        _bench(runs).run()
    first, second = sorted(d for d in runs.iterdir() if d.is_dir())
    doc = json.loads((first / "run.json").read_text())
    doc["latency"]["e2e"]["median_s"] = float("nan")
    (first / "run.json").write_text(json.dumps(doc))
    p = run_cli("runs", "--runs-dir", runs)
    assert p.returncode == 0, p.stderr
    assert "unexpected" not in p.stderr and "Traceback" not in p.stderr
    assert sum("skipped" in ln and first.name in ln for ln in p.stderr.splitlines()) == 1
    assert json.loads((second / "run.json").read_text())["run_id"][:6] in p.stdout
    shown = run_cli("runs", str(first), "--runs-dir", runs)
    assert shown.returncode == 0 and "nan" in shown.stdout, shown.stderr


def _fail_fsync_of(monkeypatch, marker: str):
    """os.fsync raises ENOSPC for a file whose name holds ``marker`` (the device full at that write)."""
    import errno

    real = os.fsync

    def fsync(fd):
        try:
            name = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            name = ""
        if marker in os.path.basename(name):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)


def test_a_full_disk_is_a_typed_error_and_no_run_is_left_running(tmp_path, monkeypatch):
    """ENOSPC simulated by an os.fsync that fails for samples.parquet's temporary file (the write
    at the end of a repeat); on a real full tmpfs the same error comes from write() instead."""
    from edgebench.errors import DiskFullError

    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc/self/fd to tell which file is synced")
    _fail_fsync_of(monkeypatch, ".samples.parquet.")
    runs = tmp_path / "runs"
    with pytest.raises(DiskFullError, match="no space left.*removed"):
        _bench(runs).run()
    assert not any((d / "run.json").exists() for d in runs.iterdir()) if runs.exists() else True


def test_a_full_disk_in_a_journal_or_run_json_is_a_typed_error(tmp_path, monkeypatch):
    import errno

    from edgebench.errors import DiskFullError
    from edgebench.results.files import atomic_write

    def full(f):
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(DiskFullError, match="no space left on the device holding"):
        atomic_write(tmp_path / "run.json", full)
    assert list(tmp_path.iterdir()) == []                     # its temporary file removed
    _fail_fsync_of(monkeypatch, "samples.journal.")
    import pandas as pd

    from edgebench.results import store

    with pytest.raises(DiskFullError):
        store.open_journal(tmp_path).append(pd.DataFrame({"e2e_s": [1.0]}))


@pytest.mark.slow
@pytest.mark.parametrize("verb", ["bench", "inspect", "quantize"])
def test_proc_self_mem_and_a_fifo_as_a_model_are_one_line(tmp_path, verb):
    fifo = tmp_path / "m.tflite"
    os.mkfifo(fifo)
    extra = {"bench": ["--board", "sim-pi5", "--runs-dir", tmp_path / "runs"], "inspect": [],
             "quantize": ["--calib", "digits", "-o", tmp_path / "q"]}[verb]
    for model in ("/proc/self/mem", fifo):
        p = run_cli(verb, model, *extra)
        errors = [ln for ln in p.stderr.splitlines() if ln.startswith("error:")]
        assert p.returncode == 1 and len(errors) == 1 and "unexpected" not in p.stderr, p.stderr


# ------------------------------------------------------------------------------- recovery of runs

KILL_PROFILE = """
import os, signal, sys
from edgebench.bench import profile as P
from edgebench.boards.registry import get_profile
orig = P.ProfileRun._summarise
def summarise(self, status, reason):
    orig(self, status, reason)
    if len(self.repeats) == 1:
        os.kill(os.getpid(), signal.SIGKILL)      # killed right after its first repeat was stored
P.ProfileRun._summarise = summarise
P.run_profile(sys.argv[1], get_profile("host"), P.ProfileOptions(repeat=3, op_time_s=0.05, whole_time_s=0.2),
              runs_root=sys.argv[2])
"""

KILL_LAYER_ERROR = """
import os, signal, sys
from edgebench.bench import layer_error as L
from edgebench.bench.record import RunFolder
RunFolder.save = lambda self, *a, **k: os.kill(os.getpid(), signal.SIGKILL)   # killed between start and save
L.run_layer_error(sys.argv[1], sys.argv[3], L.LayerErrorOptions(count=8), runs_root=sys.argv[2])
"""


def _killed(script: str, *args) -> int:
    p = subprocess.run([sys.executable, "-c", script, *map(str, args)], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")))
    return p.returncode


@pytest.mark.slow
def test_a_sigkilled_profile_is_recovered(tmp_path):
    runs = tmp_path / "runs"
    assert _killed(KILL_PROFILE, DIGITS_INT8, runs) == -9
    (d,) = [x for x in runs.iterdir() if x.is_dir()]
    assert json.loads((d / "run.json").read_text())["status"] == "running"
    p = run_cli("profile", "--recover", d)
    assert p.returncode == 0, p.stderr
    stored = json.loads((d / "run.json").read_text())
    assert stored["status"] == "incomplete" and "repeats it had finished" in stored["status_reason"]
    assert (d / "samples.parquet").exists() and not list(d.glob("*.journal.*"))
    again = run_cli("profile", "--recover", d)
    assert again.returncode == 1 and "not an unfinished profile run" in again.stderr


@pytest.mark.slow
def test_a_sigkilled_layer_error_is_recovered_and_the_wrong_verb_named(tmp_path):
    runs = tmp_path / "runs"
    assert _killed(KILL_LAYER_ERROR, DIGITS_INT8, runs, DIGITS_FP32) == -9
    (d,) = [x for x in runs.iterdir() if x.is_dir()]
    wrong = run_cli("profile", "--recover", d)
    assert wrong.returncode == 1 and "edgebench layer-error --recover" in wrong.stderr
    p = run_cli("layer-error", "--recover", d, "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["status"] == "incomplete"
    assert json.loads((d / "run.json").read_text())["status"] == "incomplete"


@pytest.mark.slow
def test_a_selftest_left_running_is_recovered(tmp_path):
    from edgebench.bench.record import RunFolder, new_result

    folder = RunFolder(tmp_path / "runs", "selftest", "qemu-m4")
    r = new_result("selftest", "emulated")
    r.board = {"name": "qemu-m4", "kind": "mcu"}
    d = folder.start(r)
    p = run_cli("selftest", "--recover", d)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert json.loads((d / "run.json").read_text())["status"] == "incomplete"


@pytest.mark.slow
def test_bench_recover_on_the_command_line_uses_the_journal_copy_of_a_damaged_run_json(tmp_path, monkeypatch):
    from edgebench.bench.latency import BenchSession

    monkeypatch.setattr(BenchSession, "finish", lambda self, status, reason: None)
    s = _bench(tmp_path / "runs", repeat=2)
    s.run()
    monkeypatch.undo()
    d = s.run_dir
    (d / "run.json").write_text('{"format": "edgebench-run", "run_id": ')          # torn by the kill
    p = run_cli("bench", "--recover", d)
    assert p.returncode == 0, p.stderr
    stored = json.loads((d / "run.json").read_text())
    assert stored["status"] == "incomplete" and stored["extra"]["recovery"]["run_json"]


KILL_QUANTIZE_WRITE = """
import os, signal, sys
from pathlib import Path
from edgebench.quantize import sidecar
sidecar.write_temp(Path(sys.argv[1]), b"half a model")
os.kill(os.getpid(), signal.SIGKILL)            # killed before commit: the temporary file stays
"""


def test_partial_files_of_a_killed_quantize_are_removed_by_the_next(tmp_path):
    from edgebench.quantize import sidecar

    target = tmp_path / "out" / "m_int8.tflite"
    assert _killed(KILL_QUANTIZE_WRITE, target) == -9
    (left,) = list(target.parent.glob(".m_int8.tflite.*.partial"))
    old = target.parent / ".m_int8.tflite.ab_cdefg.partial"             # an older edgebench's name, no pid
    old.write_bytes(b"x")
    live = sidecar.write_temp(target, b"mine")                         # this process's own: kept
    other = target.parent / ".other.tflite.1.partial"                  # another file's: not touched
    other.write_bytes(b"y")
    removed = sidecar.remove_stale([target])
    assert sorted(removed) == sorted([left, old])
    assert live.exists() and other.exists() and not left.exists()
    assert not any(p.name == "m_int8.tflite" for p in target.parent.iterdir())   # never taken for output
