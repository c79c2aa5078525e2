"""SIGTERM and SIGHUP stop every verb the way Ctrl-C does: samples kept, run marked with the signal."""
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import DIGITS_INT8

from edgebench.results import store

ROOT = Path(__file__).resolve().parents[1]


def _sighup_default() -> None:
    """The child's SIGHUP at its default, whatever the suite was started under (`nohup make test`
    ignores it, and an ignored signal rightly stays ignored: test_an_ignored_signal_stays_ignored)."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def test_install_turns_sigterm_into_an_interrupted_keyboardinterrupt():
    script = textwrap.dedent("""
        import os, signal, time
        from edgebench.cli import signals
        from edgebench.errors import Interrupted, interrupt_reason
        print(signals.install())
        try:
            os.kill(os.getpid(), signal.SIGHUP)
            time.sleep(30)
        except KeyboardInterrupt as exc:
            print(type(exc).__name__, isinstance(exc, Interrupted), exc.signal_name, interrupt_reason(exc),
                  signals.received())
        print(interrupt_reason(KeyboardInterrupt()))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                         preexec_fn=_sighup_default)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "['SIGTERM', 'SIGHUP']"
    assert lines[1] == "Interrupted True SIGHUP stopped by SIGHUP ('SIGHUP', 1)"
    assert lines[2] == "interrupted by the user (Ctrl-C)"


def test_an_ignored_signal_stays_ignored():
    script = ("import signal\nsignal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
              "from edgebench.cli import signals\nprint(signals.install())")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "['SIGTERM']"


def _bench_until_measuring(runs_dir):
    """Start a long bench and return it once it reports measured samples (its live progress line,
    shown because FORCE_COLOR makes stderr count as a terminal); the stderr read so far."""
    env = {**os.environ, "FORCE_COLOR": "1", "COLUMNS": "200"}
    p = subprocess.Popen([sys.executable, "-m", "edgebench", "bench", str(DIGITS_INT8), "--runs-dir", str(runs_dir),
                          "--min-time", "120", "--max-time", "300", "--repeat", "1"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, preexec_fn=_sighup_default)
    seen = b""
    while b"n=" not in seen:
        chunk = os.read(p.stderr.fileno(), 4096)
        if not chunk:
            p.wait()
            raise AssertionError(f"bench ended before measuring: {seen.decode(errors='replace')}")
        seen += chunk
    return p, seen


def _stop(p, sig, seen: bytes) -> str:
    try:
        p.send_signal(sig)
        rest = p.stderr.read()
        p.wait(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", (seen + rest).decode(errors="replace"))
    return text


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_stops_bench_like_ctrl_c(tmp_path, sig):
    p, seen = _bench_until_measuring(tmp_path)
    err = _stop(p, sig, seen)
    name = signal.Signals(sig).name
    assert p.returncode == 128 + sig, err
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert lines[-1] == f"stopped by {name}"
    assert sum("stopped by" in ln for ln in lines) == 1
    (run_dir,) = store.find_runs(tmp_path)
    data = json.loads((run_dir / store.RUN_JSON).read_text())
    assert data["status"] == "incomplete" and data["status_reason"] == f"stopped by {name}"
    assert "writer" not in data["extra"]
    assert len(store.read_samples(run_dir)) > 0           # what was measured is kept


@pytest.mark.slow
def test_ctrl_c_still_exits_130_with_one_line(tmp_path):
    p, seen = _bench_until_measuring(tmp_path)
    err = _stop(p, signal.SIGINT, seen)
    assert p.returncode == 130, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert lines[-1] == "interrupted" and "Traceback" not in err
    (run_dir,) = store.find_runs(tmp_path)
    data = json.loads((run_dir / store.RUN_JSON).read_text())
    assert data["status"] == "incomplete" and data["status_reason"] == "interrupted by the user (Ctrl-C)"
