"""System description of the board: one small best-effort function per source.

Every collector takes the filesystem root (default: ``$EDGEBENCH_SYSFS_ROOT`` or
``/``, so tests can point it at a fake tree with the real layout) and returns a
dict; :func:`collect` runs them all and gathers their errors instead of raising.
Units: frequencies in Hz (sysfs reports kHz), temperatures in °C (sysfs reports
millidegrees), memory in bytes.
"""
from __future__ import annotations

import glob
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from typing import Any, Callable, Dict, List, Optional

import numpy

from .runtime import runtime_summary

THROTTLE_BITS = {
    0: "under_voltage_now",
    1: "freq_capped_now",
    2: "throttled_now",
    3: "soft_temp_limit_now",
    16: "under_voltage_occurred",
    17: "freq_capped_occurred",
    18: "throttled_occurred",
    19: "soft_temp_limit_occurred",
}
VCGENCMD_TIMEOUT_S = 2.0


def fs_root(root: Optional[str] = None) -> str:
    return root if root is not None else os.environ.get("EDGEBENCH_SYSFS_ROOT", "/")


def under_root(root: Optional[str], rel: str) -> str:
    """``rel`` (an absolute system path such as /sys/...) under the file-system root ``root``."""
    return os.path.join(fs_root(root), rel.lstrip("/"))


def read_text(path: str) -> Optional[str]:
    """A small text file's stripped contents (NULs removed), or None if it cannot be read."""
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace").replace("\x00", "").strip()
    except OSError:
        return None


def read_int(path: str) -> Optional[int]:
    """The integer in a small text file (sysfs), or None if unreadable or not an integer."""
    text = read_text(path)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def natural_key(path: str) -> List:
    """Sort key that orders numbered names naturally (cpu2 before cpu10)."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", path)]


def os_info(root: Optional[str] = None) -> dict:
    u = platform.uname()
    info = {"system": u.system, "node": u.node, "kernel": u.release,
            "kernel_version": u.version, "machine": u.machine}
    text = read_text(under_root(root, "etc/os-release")) or read_text(under_root(root, "usr/lib/os-release"))
    if text:
        fields = dict(re.findall(r'^([A-Z_]+)="?(.*?)"?$', text, re.M))
        for key in ("PRETTY_NAME", "ID", "VERSION_ID", "VERSION_CODENAME"):
            if key in fields:
                info["os_" + key.lower()] = fields[key]
    return info


def cpu_info(root: Optional[str] = None) -> dict:
    info: Dict[str, Any] = {"machine": platform.machine(), "logical_cpus": os.cpu_count()}
    if hasattr(os, "sched_getaffinity"):
        info["affinity"] = sorted(os.sched_getaffinity(0))
    text = read_text(under_root(root, "proc/cpuinfo"))
    if text:
        wanted = {"model name": "model_name", "Hardware": "hardware", "Revision": "revision",
                  "Model": "model", "Serial": None, "CPU implementer": "cpu_implementer",
                  "CPU part": "cpu_part", "Features": "features", "flags": None}
        for line in text.splitlines():
            key, _, value = line.partition(":")
            key = key.strip()
            name = wanted.get(key)
            if name and name not in info:
                info[name] = value.strip()
    return info


def board_info(root: Optional[str] = None) -> dict:
    info = {}
    for rel in ("proc/device-tree/model", "sys/firmware/devicetree/base/model"):
        model = read_text(under_root(root, rel))
        if model:
            info["model"] = model
            break
    compatible = read_text(under_root(root, "proc/device-tree/compatible"))
    if compatible:
        info["compatible"] = compatible
    for key in ("sys_vendor", "product_name", "board_name"):  # x86: DMI
        value = read_text(under_root(root, f"sys/class/dmi/id/{key}"))
        if value:
            info["dmi_" + key] = value
    return info


def cpufreq_info(root: Optional[str] = None) -> dict:
    policies: Dict[str, Dict[str, Any]] = {}
    base = under_root(root, "sys/devices/system/cpu/cpufreq")
    for pdir in sorted(glob.glob(os.path.join(base, "policy*")), key=natural_key):
        p: Dict[str, Any] = {}
        for key in ("scaling_cur_freq", "scaling_min_freq", "scaling_max_freq",
                    "cpuinfo_min_freq", "cpuinfo_max_freq"):
            khz = read_int(os.path.join(pdir, key))
            if khz is not None:
                p[key.replace("_freq", "_freq_hz")] = khz * 1000
        governor = read_text(os.path.join(pdir, "scaling_governor"))
        if governor:
            p["governor"] = governor
        cpus = read_text(os.path.join(pdir, "affected_cpus"))
        if cpus:
            p["cpus"] = [int(c) for c in cpus.split()]
        policies[os.path.basename(pdir)] = p
    return {"policies": policies}


def thermal_info(root: Optional[str] = None) -> dict:
    zones = {}
    base = under_root(root, "sys/class/thermal")
    for zdir in sorted(glob.glob(os.path.join(base, "thermal_zone*")), key=natural_key):
        milli = read_int(os.path.join(zdir, "temp"))
        zones[os.path.basename(zdir)] = {
            "type": read_text(os.path.join(zdir, "type")),
            "temp_c": milli / 1000.0 if milli is not None else None,
        }
    return {"zones": zones}


def apex_info(root: Optional[str] = None) -> dict:
    devices = {}
    for ddir in sorted(glob.glob(under_root(root, "sys/class/apex/apex_*")), key=natural_key):
        milli = read_int(os.path.join(ddir, "temp"))
        devices[os.path.basename(ddir)] = {"temp_c": milli / 1000.0 if milli is not None else None}
    return {"devices": devices}


def hwmon_info(root: Optional[str] = None) -> dict:
    """``sys/class/hwmon/hwmon*``: driver name and the current value of every sensor (°C, V, A, W)."""
    units = {"temp": ("temp_c", 1e-3), "in": ("volt_v", 1e-3), "curr": ("curr_a", 1e-3), "power": ("power_w", 1e-6)}
    devices = {}
    for hdir in sorted(glob.glob(under_root(root, "sys/class/hwmon/hwmon*")), key=natural_key):
        sensors = {}
        for adir in (hdir, os.path.join(hdir, "device")):
            for path in sorted(glob.glob(os.path.join(adir, "*_input")), key=natural_key):
                m = re.match(r"^(temp|in|curr|power)(\d+)_input$", os.path.basename(path))
                if not m:
                    continue
                key, scale = units[m.group(1)]
                raw = read_int(path)
                sensors[m.group(1) + m.group(2)] = {
                    "label": read_text(os.path.join(adir, f"{m.group(1)}{m.group(2)}_label")),
                    key: raw * scale if raw is not None else None}
        devices[os.path.basename(hdir)] = {"name": read_text(os.path.join(hdir, "name")), "sensors": sensors}
    return {"devices": devices}


def run_vcgencmd(exe: str, *args: str) -> str:
    """The output of the Raspberry Pi ``vcgencmd`` tool; OSError when it fails."""
    out = subprocess.run([exe, *args], capture_output=True, timeout=VCGENCMD_TIMEOUT_S)
    text = (out.stdout or b"").decode("utf-8", "replace").strip()
    if out.returncode != 0:
        err = (out.stderr or b"").decode("utf-8", "replace").strip() or text
        raise OSError(f"vcgencmd {' '.join(args)} exited with status {out.returncode}: {err[:200]}")
    return text


def decode_throttled(value: int) -> dict:
    flags = {name: bool(value >> bit & 1) for bit, name in THROTTLE_BITS.items()}
    return {"raw": hex(value), **flags}


def vcgencmd_info(root: Optional[str] = None) -> dict:
    """Raspberry Pi firmware view: SoC temperature, ARM clock, throttle flags."""
    exe = shutil.which("vcgencmd")
    if exe is None:
        return {"available": False}
    info: dict = {"available": True}
    errors = {}
    for key, args, pattern, convert in (
        ("temp_c", ("measure_temp",), r"temp=([-\d.]+)", float),
        ("arm_freq_hz", ("measure_clock", "arm"), r"=(\d+)", int),
        ("throttled", ("get_throttled",), r"throttled=(0x[0-9a-fA-F]+|\d+)",
         lambda v: decode_throttled(int(v, 0))),
    ):
        try:
            m = re.search(pattern, run_vcgencmd(exe, *args))
            if m:
                info[key] = convert(m.group(1))
        except (OSError, subprocess.SubprocessError) as exc:  # e.g. not in the 'video' group
            errors[" ".join(args)] = str(exc)
    if errors:
        info["errors"] = errors
    return info


def memory_info(root: Optional[str] = None) -> dict:
    info = {}
    text = read_text(under_root(root, "proc/meminfo")) or ""
    for key, name in (("MemTotal", "total_bytes"), ("MemAvailable", "available_bytes")):
        m = re.search(rf"^{key}:\s+(\d+)\s*kB", text, re.M)
        if m:
            info[name] = int(m.group(1)) * 1024
    return info


def load_info(root: Optional[str] = None) -> dict:
    one, five, fifteen = os.getloadavg()
    return {"load_1m": one, "load_5m": five, "load_15m": fifteen}


def software_info(root: Optional[str] = None) -> dict:
    runtime, error = runtime_summary()
    return {"python": platform.python_version(), "python_implementation": platform.python_implementation(),
            "python_executable": sys.executable, "numpy": numpy.__version__,
            "runtime": runtime, "runtime_error": error}


COLLECTORS: Dict[str, Callable[[Optional[str]], dict]] = {
    "os": os_info, "cpu": cpu_info, "board": board_info, "cpufreq": cpufreq_info,
    "thermal": thermal_info, "hwmon": hwmon_info, "apex": apex_info, "vcgencmd": vcgencmd_info,
    "memory": memory_info, "load": load_info, "software": software_info,
}


def collect(root: Optional[str] = None) -> dict:
    """``{"system": {collector: dict}, "collector_errors": {collector: text}}``."""
    system, errors = {}, {}
    for name, fn in COLLECTORS.items():
        try:
            system[name] = fn(root)
        except Exception as exc:  # best effort: one broken source must not hide the rest
            errors[name] = f"{type(exc).__name__}: {exc}"
    return {"system": system, "collector_errors": errors}


def thermal_snapshot(root: Optional[str] = None) -> dict:
    """Temperatures, current clocks and throttle flags now, cheaply."""
    temps, freqs, throttled = {}, {}, None
    errors = {}
    try:
        for zone, z in thermal_info(root)["zones"].items():
            if z["temp_c"] is not None:
                name = z["type"] or zone
                temps[name if name not in temps else f"{name}@{zone}"] = z["temp_c"]
        for dev, d in apex_info(root)["devices"].items():
            if d["temp_c"] is not None:
                temps[dev] = d["temp_c"]
        for policy, p in cpufreq_info(root)["policies"].items():
            if "scaling_cur_freq_hz" in p:
                freqs[policy] = p["scaling_cur_freq_hz"]
    except Exception as exc:
        errors["sysfs"] = f"{type(exc).__name__}: {exc}"
    try:
        vc = vcgencmd_info(root)
        if vc.get("available"):
            throttled = vc.get("throttled")
            if "temp_c" in vc:
                temps.setdefault("vcgencmd", vc["temp_c"])
            if "arm_freq_hz" in vc:
                freqs.setdefault("arm (vcgencmd)", vc["arm_freq_hz"])
    except Exception as exc:
        errors["vcgencmd"] = f"{type(exc).__name__}: {exc}"
    return {"available": bool(temps or freqs), "temps_c": temps, "freqs_hz": freqs,
            "throttled": throttled, "clock_ns": time.perf_counter_ns(), "errors": errors}
