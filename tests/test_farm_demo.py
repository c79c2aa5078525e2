"""`edgebench farm demo`: a labgrid farm on this computer (coordinator, exporter, posix board on
127.0.0.1), the `--board labgrid:...` line to try, and every process stopped on Ctrl-C or gone when
edgebench is killed outright (real labgrid, real ser2net, the real posix firmware)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import DIGITS_INT8, require_module, require_tool, stop_process

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _descendants(pid: int) -> set:
    """Every process below ``pid`` (from /proc)."""
    from labgrid_fixture import children_of

    found, parents = set(), {pid}
    while parents:
        parents = set(children_of(parents)) - found
        found |= parents
    return found


def _alive(pids: set) -> set:
    out = set()
    for p in pids:
        try:
            state = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            out.add(p)
    return out


def _start(posix_firmware_bin):
    require_module("labgrid")
    require_tool("ser2net")
    proc = subprocess.Popen([sys.executable, "-m", "edgebench", "farm", "demo", "--image", str(posix_firmware_bin)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    lines = []
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if line.startswith("Ctrl-C here"):
            return proc, "".join(lines)
    stop_process(proc)
    raise AssertionError(f"farm demo did not come up: {''.join(lines)} {proc.stderr.read()}")


def test_farm_demo_serves_a_place_to_try_and_ctrl_c_stops_every_process(posix_firmware_bin, tmp_path):
    proc, out = _start(posix_firmware_bin)
    try:
        address = next(ln.split("=", 1)[1].strip() for ln in out.splitlines() if "export LG_COORDINATOR=" in ln)
        assert address.startswith("127.0.0.1:") and "--board labgrid:board=posix" in out
        children = _descendants(proc.pid)
        assert len(children) >= 3          # coordinator, exporter, posix firmware
        env = dict(os.environ, LG_COORDINATOR=address, PYTHONPATH=str(ROOT))
        listed = subprocess.run([sys.executable, "-m", "edgebench", "farm", "--json"], capture_output=True,
                                text=True, env=env, timeout=60)
        places = json.loads(listed.stdout)["places"]
        assert [(p["name"], p["profile"]) for p in places] == [("posix-1", "posix-sim")], listed.stdout
        checked = subprocess.run([sys.executable, "-m", "edgebench", "verify", str(DIGITS_INT8), "--board",
                                  "labgrid:board=posix", "--count", "4", "--json", "--runs-dir", str(tmp_path)],
                                 capture_output=True, text=True, env=env, timeout=120)
        assert checked.returncode == 0 and json.loads(checked.stdout)["bit_exact"] is True, checked.stderr
        children |= _descendants(proc.pid)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
        assert "farm stopped" in proc.stdout.read()
        time.sleep(0.5)
        assert not _alive(children), f"left running: {_alive(children)}"
    finally:
        if proc.poll() is None:
            stop_process(proc)


def test_a_killed_farm_demo_leaves_no_process(posix_firmware_bin):
    proc, _ = _start(posix_firmware_bin)
    children = _descendants(proc.pid)
    proc.kill()                            # SIGKILL: no handler runs; the kernel ends the tied children
    proc.wait(timeout=10)
    deadline = time.monotonic() + 10
    while _alive(children) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(children), f"left running: {_alive(children)}"
