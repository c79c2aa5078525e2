"""System description collectors against fake sysfs/procfs trees with the real layouts."""
from __future__ import annotations

import ast
import os
import shutil
import subprocess
from glob import glob
from pathlib import Path

import pytest
from conftest import missing
from fakes.sysfs import VCGENCMD_FAILING, fake_vcgencmd, write

from edgebench.agent import sysinfo

AGENT_DIR = Path(__file__).resolve().parents[1] / "edgebench" / "agent"


@pytest.fixture
def pi5(tmp_path):
    root = tmp_path / "root"
    write(root, "sys/class/thermal/thermal_zone0/type", "cpu-thermal\n")
    write(root, "sys/class/thermal/thermal_zone0/temp", "48312\n")
    policy = "sys/devices/system/cpu/cpufreq/policy0/"
    for name, value in [("scaling_cur_freq", "1500000"), ("scaling_min_freq", "1500000"),
                        ("scaling_max_freq", "2400000"), ("cpuinfo_max_freq", "2400000"),
                        ("cpuinfo_min_freq", "1500000"), ("scaling_governor", "ondemand"),
                        ("affected_cpus", "0 1 2 3")]:
        write(root, policy + name, value + "\n")
    write(root, "proc/device-tree/model", b"Raspberry Pi 5 Model B Rev 1.0\x00")
    write(root, "proc/cpuinfo", "processor\t: 0\nBogoMIPS\t: 108.00\nCPU implementer\t: 0x41\n"
                                "CPU part\t: 0xd0b\n\nRevision\t: d04170\nModel\t\t: Raspberry Pi 5 Model B Rev 1.0\n")
    write(root, "proc/meminfo", "MemTotal:        8245328 kB\nMemFree:         7000000 kB\n"
                                "MemAvailable:    7654321 kB\n")
    write(root, "etc/os-release", 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\nVERSION_ID="12"\n')
    write(root, "sys/class/apex/apex_0/temp", "41250\n")
    return root


@pytest.fixture
def vcgencmd(tmp_path, monkeypatch):
    return fake_vcgencmd(monkeypatch, tmp_path / "bin",
                         'case "$1" in\n'
                         "  measure_temp) echo \"temp=48.3'C\" ;;\n"
                         "  measure_clock) echo 'frequency(0)=1500004352' ;;\n"
                         "  get_throttled) echo 'throttled=0x50005' ;;\n"
                         "  *) exit 1 ;;\nesac\n")


def test_thermal_zone_in_celsius(pi5):
    zones = sysinfo.thermal_info(str(pi5))["zones"]
    assert zones == {"thermal_zone0": {"type": "cpu-thermal", "temp_c": 48.312}}


def test_cpufreq_in_hz(pi5):
    p = sysinfo.cpufreq_info(str(pi5))["policies"]["policy0"]
    assert p["scaling_cur_freq_hz"] == 1.5e9 and p["cpuinfo_max_freq_hz"] == 2.4e9
    assert p["governor"] == "ondemand" and p["cpus"] == [0, 1, 2, 3]


def test_board_cpu_memory_os(pi5):
    assert sysinfo.board_info(str(pi5))["model"] == "Raspberry Pi 5 Model B Rev 1.0"
    cpu = sysinfo.cpu_info(str(pi5))
    assert cpu["revision"] == "d04170" and cpu["cpu_part"] == "0xd0b"
    assert sysinfo.memory_info(str(pi5)) == {"total_bytes": 8245328 * 1024, "available_bytes": 7654321 * 1024}
    assert sysinfo.os_info(str(pi5))["os_pretty_name"] == "Debian GNU/Linux 12 (bookworm)"
    assert sysinfo.apex_info(str(pi5)) == {"devices": {"apex_0": {"temp_c": 41.25}}}


def test_vcgencmd_throttle_bits(vcgencmd):
    info = sysinfo.vcgencmd_info()
    assert info["temp_c"] == 48.3 and info["arm_freq_hz"] == 1500004352
    t = info["throttled"]
    assert t["raw"] == "0x50005"
    assert t["under_voltage_now"] and t["throttled_now"]
    assert t["under_voltage_occurred"] and t["throttled_occurred"]
    assert not t["freq_capped_now"] and not t["soft_temp_limit_occurred"]


def test_thermal_snapshot(pi5, vcgencmd):
    snap = sysinfo.thermal_snapshot(str(pi5))
    assert snap["available"]
    assert snap["temps_c"]["cpu-thermal"] == 48.312 and snap["temps_c"]["apex_0"] == 41.25
    assert snap["freqs_hz"]["policy0"] == 1.5e9
    assert snap["throttled"]["throttled_now"]


def test_empty_tree_is_not_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no vcgencmd
    out = sysinfo.collect(str(tmp_path))
    assert out["collector_errors"] == {}
    assert out["system"]["cpufreq"] == {"policies": {}} and out["system"]["vcgencmd"] == {"available": False}
    assert sysinfo.thermal_snapshot(str(tmp_path))["available"] is False


def test_a_broken_collector_is_collected_not_raised(pi5, monkeypatch):
    def broken(root=None):
        raise PermissionError("denied")

    monkeypatch.setitem(sysinfo.COLLECTORS, "memory", broken)
    out = sysinfo.collect(str(pi5))
    assert out["collector_errors"] == {"memory": "PermissionError: denied"}
    assert out["system"]["board"]["model"].startswith("Raspberry Pi 5")


def test_env_var_root_reaches_the_agent_process(pi5, vcgencmd, tmp_path):
    from edgebench.transport.client import AgentClient
    from edgebench.transport.local import LocalTransport

    transport = LocalTransport(cache_dir=str(tmp_path / "cache"),
                               env={"EDGEBENCH_SYSFS_ROOT": str(pi5), "PATH": os.environ["PATH"]})
    with AgentClient(transport.open(), transport.describe(), timeout_s=30) as client:
        thermal = client.thermal()
        assert thermal["temps_c"]["cpu-thermal"] == 48.312 and thermal["throttled"]["raw"] == "0x50005"
        system = client.sysinfo()["system"]
        assert system["board"]["model"] == "Raspberry Pi 5 Model B Rev 1.0"


# -- the agent island -----------------------------------------------------------------
def find_python39() -> str | None:
    candidates = [shutil.which("python3.9")]
    candidates += sorted(glob(os.path.expanduser("~/.pyenv/versions/3.9*/bin/python3.9")))
    for exe in filter(None, candidates):
        try:
            subprocess.run([exe, "-c", "import sys; assert sys.version_info[:2] == (3, 9)"],
                           capture_output=True, timeout=30, check=True)
            return exe
        except (OSError, subprocess.SubprocessError):
            continue
    return None


@pytest.mark.slow
def test_agent_compiles_with_python39(tmp_path):
    exe = find_python39()
    if exe is None:
        missing("python3.9 not found (it checks the agent's compatibility)")
    files = sorted(str(p) for p in AGENT_DIR.glob("*.py"))
    env = dict(os.environ, PYTHONPYCACHEPREFIX=str(tmp_path))
    proc = subprocess.run([exe, "-m", "py_compile", *files], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_agent_imports_nothing_from_edgebench_outside_itself():
    for path in AGENT_DIR.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            for name in names:
                assert not name.startswith("edgebench") or name.startswith("edgebench.agent"), (path.name, name)
                assert name.split(".")[0] not in {"pandas", "scipy", "typer", "rich", "yaml", "serial"}, (path.name, name)


def test_failing_vcgencmd_is_recorded(tmp_path, monkeypatch):
    fake_vcgencmd(monkeypatch, tmp_path / "bin", VCGENCMD_FAILING, keep_path=False)
    info = sysinfo.vcgencmd_info()
    assert info["available"] and "throttled" not in info
    assert "VCHI initialization failed" in info["errors"]["get_throttled"]
