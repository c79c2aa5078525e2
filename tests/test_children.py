"""Children die with edgebench: no kill of edgebench, even SIGKILL, leaves a QEMU, a posix
firmware or a local agent behind, and `flash` stops what it started on every exit.

Children are tracked by pid and start time (/proc/<pid>/stat), found as descendants of the
edgebench process under test, never by name across the machine: other people run QEMU here
at the same time. A zombie (state Z) counts as gone: it has stopped, only its exit status is
left for a parent (init in a container may be slow to reap it).
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import DIGITS_INT8, require_tool

from edgebench.transport.child import descendants, proc_stat, still_alive

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads /proc; the parent-death signal is Linux's")


# ---- processes by pid ---------------------------------------------------------------

def wait_gone(procs: dict, timeout_s: float = 5.0) -> dict:
    deadline = time.monotonic() + timeout_s
    while still_alive(procs) and time.monotonic() < deadline:
        time.sleep(0.05)
    return still_alive(procs)


def _kill_leftovers(procs: dict) -> None:
    for pid in still_alive(procs):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _start(args: list, ready, timeout_s: float = 240.0):
    """Start edgebench with ``args``; return (process, its descendants, stderr so far) once
    ``ready(descendant names, output so far)`` holds."""
    env = {**os.environ, "FORCE_COLOR": "1", "COLUMNS": "200"}  # live progress lines on stderr
    p = subprocess.Popen([sys.executable, "-m", "edgebench", *map(str, args)], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, env=env)
    os.set_blocking(p.stdout.fileno(), False)
    seen, deadline = b"", time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            seen += os.read(p.stdout.fileno(), 65536) or b""
        except BlockingIOError:
            pass
        kids = descendants(p.pid)
        if ready({name for _, name in kids.values()}, seen.decode(errors="replace")):
            return p, kids, seen
        if p.poll() is not None:
            break
        time.sleep(0.1)
    p.kill()
    p.wait()
    pytest.fail(f"edgebench {' '.join(map(str, args[:3]))} never got ready (status {p.returncode}): "
                f"{seen.decode(errors='replace')[-1500:]}", pytrace=False)


def _finish(p, timeout_s: float = 60.0) -> str:
    os.set_blocking(p.stdout.fileno(), True)
    try:
        rest = p.communicate(timeout=timeout_s)[0] or b""
    except subprocess.TimeoutExpired:
        p.kill()
        rest = p.communicate()[0] or b""
    return re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", rest.decode(errors="replace"))


# ---- the tie itself -------------------------------------------------------------------

def _parent_killed(script: str, name: str) -> None:
    """Run ``script`` (it starts a tied child and prints its pid), check the child leads its own
    process group, SIGKILL the script, and check the kernel ended the child."""
    parent = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)], stdout=subprocess.PIPE,
                              text=True)
    try:
        line = parent.stdout.readline()
        assert line.strip().isdigit(), line
        pid = int(line)
        st = proc_stat(pid)
        assert st is not None and st[3].startswith(name) and os.getpgid(pid) == pid   # its own group
        kid = {pid: (st[2], st[3])}
        parent.kill()
        parent.wait()
        assert wait_gone(kid) == {}
    finally:
        parent.kill()
        parent.wait()


def test_a_tied_child_dies_when_its_parent_is_killed():
    """spawn_tied: a child whose parent is SIGKILLed (no handler, no cleanup) is ended by the kernel."""
    _parent_killed("""
        import sys, time
        from edgebench.transport.child import spawn_tied
        p = spawn_tied([sys.executable, "-c", "import time; time.sleep(120)"])
        print(p.pid, flush=True)
        time.sleep(120)
    """, "python")


@pytest.mark.qemu
def test_qemu_dies_with_a_sigkilled_parent():
    """QemuBoard.start() runs QEMU tied to the Python process that started it."""
    require_tool("qemu-system-arm")
    require_tool("arm-none-eabi-gcc")
    from fw_util import build_firmware

    elf = build_firmware("mps2-an386")
    _parent_killed(f"""
        import time
        from edgebench.mcu.qemu import QemuBoard
        b = QemuBoard("mps2-an386", {str(elf)!r})
        b.start()
        print(b.pid, flush=True)
        time.sleep(120)
    """, "qemu-system-arm")


# ---- edgebench killed mid-run -----------------------------------------------------------

_CHILD = {"host": "python", "qemu-m4": "qemu-system-arm", "posix-sim": "eb-firmware"}


def _measuring(board: str):
    want = _CHILD[board]

    def ready(names: set, out: str) -> bool:
        # the child is up and the run has started measuring (a live "n=..." progress line)
        return any(n.startswith(want) for n in names) and "n=" in out
    return ready


@pytest.mark.slow
@pytest.mark.parametrize("board", [
    "host",
    pytest.param("qemu-m4", marks=pytest.mark.qemu),
    pytest.param("posix-sim", marks=pytest.mark.qemu),
])
def test_sigkill_of_bench_leaves_no_child_behind(tmp_path, board):
    if board == "qemu-m4":
        require_tool("qemu-system-arm")
    if board != "host":
        require_tool("make")
    p, kids, _ = _start(["bench", DIGITS_INT8, "--board", board, "--runs-dir", tmp_path,
                         "--min-time", "120", "--max-time", "300", "--repeat", "1"], _measuring(board))
    try:
        assert kids, "bench started no child process"
        p.kill()                                                   # no handler runs: only the kernel's tie
        p.wait(timeout=30)
        left = wait_gone(kids)
        assert left == {}, f"still running after edgebench was SIGKILLed: {left}"
    finally:
        p.kill()
        p.wait()
        _kill_leftovers(kids)


@pytest.mark.slow
@pytest.mark.qemu
@pytest.mark.parametrize("board", ["qemu-m4", "posix-sim"])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_flash_stops_its_emulator_however_it_ends(board, sig):
    if board == "qemu-m4":
        require_tool("qemu-system-arm")
    require_tool("make")
    want = _CHILD[board]
    p, kids, _ = _start(["flash", "--board", board],
                        lambda names, out: "serial on" in out and any(n.startswith(want) for n in names))
    try:
        assert any(name.startswith(want) for _, name in kids.values())
        p.send_signal(sig)
        out = _finish(p)
        left = wait_gone(kids)
        assert left == {}, f"still running after flash got {signal.Signals(sig).name}: {left}"
        if sig != signal.SIGKILL:                                   # a clean stop: one line, no traceback
            assert "Traceback" not in out and f"{board}: stopped" in out, out
            assert p.returncode in (0, 128 + sig), (p.returncode, out)
    finally:
        p.kill()
        p.wait()
        _kill_leftovers(kids)
