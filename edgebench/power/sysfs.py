"""Linux sysfs power meters (level 2): Intel RAPL powercap and hwmon.

Both read files of the computer edgebench runs on, so they measure a board
only when edgebench runs on it (board ``host``, or a board reached with
``--url local``).

RAPL (``/sys/class/powercap/intel-rapl:N[:M]/``)
    ``energy_uj`` is a cumulative energy counter in microjoules that wraps to 0
    after ``max_energy_range_uj``; a reading smaller than the previous one is
    one wrap (``delta = now + max_energy_range_uj - previous``). The zone's
    ``name`` sets the boundary: ``package-N`` is the processor package
    (``soc``), ``dram`` the memory, ``core`` the cores, ``psys`` the platform.
    Since Linux 5.10 ``energy_uj`` is readable by root only.

hwmon (``/sys/class/hwmon/hwmonN/``)
    ``power<n>_input`` in microwatts, ``curr<n>_input`` in milliamperes,
    ``in<n>_input`` in millivolts (Documentation/hwmon/sysfs-interface). The
    INA2xx driver (``name`` = ``ina219``, ``ina226``, ``ina260``...) gives
    ``in0`` = shunt voltage, ``in1`` = bus voltage, ``curr1``, ``power1`` and
    ``update_interval`` (ms, how often the chip produces a new value). Where
    ``power<n>_input`` is missing, power is current x voltage.

Tested against fake sysfs trees with the real file names and units only
(``MeterInfo.tested_against``): no RAPL or hwmon power sensor was available.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from edgebench.power.base import OWN_POWER, MeterError, MeterInfo, PolledMeter, check_boundary

RAPL_ROOT = "/sys/class/powercap"
HWMON_ROOT = "/sys/class/hwmon"
TESTED = "fake of its interface"

_RAPL_BOUNDARY = {"package": "soc", "dram": "dram", "core": "cpu-cores", "uncore": "soc", "psys": "platform"}


def _read_int(path: Path, what: str) -> int:
    try:
        return int(path.read_text().strip())
    except PermissionError:
        raise MeterError(f"{path} is not readable by this user ({what})",
                         f"run as root, or: sudo chmod o+r {path}") from None
    except FileNotFoundError:
        raise MeterError(f"{path} does not exist ({what})") from None
    except (OSError, ValueError) as exc:
        raise MeterError(f"cannot read {path} ({what}): {exc}") from None


class RaplMeter(PolledMeter):
    """Intel RAPL energy counter of one powercap zone, polled on the host."""

    rate_hz = 100.0

    def __init__(self, zone: Optional[str] = None, rate_hz: Optional[float] = None,
                 boundary: Optional[str] = None, root: str = RAPL_ROOT, **kw):
        super().__init__(rate_hz, **kw)
        z = Path(zone) if zone and os.sep in str(zone) else Path(root) / (zone or "intel-rapl:0")
        self.zone = z
        self._boundary = check_boundary(boundary) if boundary else None
        self._max_uj: Optional[int] = None
        self._last_uj: Optional[int] = None
        self._total_uj = 0
        self._wraps = 0
        self._name: str | None = None

    def _open(self) -> None:
        if not self.zone.is_dir():
            raise MeterError(f"no RAPL powercap zone {self.zone}",
                             "this computer exposes no Intel RAPL zone (needs an Intel or AMD CPU with "
                             "the intel_rapl_common driver: sudo modprobe intel_rapl_msr), or pick "
                             "another --meter")
        self._name = (self.zone / "name").read_text().strip() if (self.zone / "name").exists() else "?"
        self._max_uj = _read_int(self.zone / "max_energy_range_uj", "RAPL counter range")
        if self._max_uj <= 0:
            raise MeterError(f"{self.zone}/max_energy_range_uj is {self._max_uj}: cannot unwrap the counter")
        _read_int(self.zone / "energy_uj", "RAPL energy counter")
        self._last_uj, self._total_uj, self._wraps = None, 0, 0

    def _poll(self):
        now = _read_int(self.zone / "energy_uj", "RAPL energy counter")
        if self._last_uj is not None:
            delta = now - self._last_uj
            if delta < 0:  # the counter wrapped past max_energy_range_uj
                assert self._max_uj is not None   # read by _open
                delta += self._max_uj
                self._wraps += 1
            self._total_uj += delta
        self._last_uj = now
        return ("energy", self._total_uj * 1e-6)

    def describe(self) -> MeterInfo:
        name = self._name or ((self.zone / "name").read_text().strip() if (self.zone / "name").exists() else "?")
        base = name.split("-")[0]
        boundary = self._boundary or _RAPL_BOUNDARY.get(base, "soc")
        return MeterInfo(instrument=f"Intel RAPL powercap zone {self.zone.name} ({name})",
                         sample_rate_hz=self.rate_hz, boundary=boundary, tested_against=TESTED,
                         quantity="energy counter (energy_uj), differenced per interval", reads=OWN_POWER,
                         details={"zone": str(self.zone), "zone_name": name, "max_energy_range_uj": self._max_uj,
                                  "wraps_seen": self._wraps,
                                  "note": "RAPL energy is a model-based estimate by the CPU on many parts; "
                                          "the package domain excludes the rest of the board"})


def find_hwmon(name_or_path: Optional[str], root: str = HWMON_ROOT) -> Path:
    """The hwmon folder for a path, or the first whose ``name`` matches (default: first with power or current)."""
    if name_or_path and os.sep in name_or_path:
        p = Path(name_or_path)
        if not p.is_dir():
            raise MeterError(f"no hwmon device at {p}")
        return p
    r = Path(root)
    devices = sorted(r.glob("hwmon*")) if r.is_dir() else []
    names = []
    for d in devices:
        nm = (d / "name").read_text().strip() if (d / "name").exists() else ""
        names.append(nm)
        if name_or_path and nm == name_or_path:
            return d
        if not name_or_path and (any(d.glob("power*_input")) or any(d.glob("curr*_input"))):
            return d
    known = ", ".join(f"{d.name}={n}" for d, n in zip(devices, names)) or "none"
    want = f"named {name_or_path!r}" if name_or_path else "with power or current inputs"
    raise MeterError(f"no hwmon device {want} under {root} (found: {known})",
                     "load the sensor's driver (e.g. ina2xx) or pass --meter-port with its name or folder")


class HwmonMeter(PolledMeter):
    """A Linux hwmon power/current/voltage sensor (e.g. the ina2xx driver), polled on the host."""

    rate_hz = 50.0

    def __init__(self, device: Optional[str] = None, channel: int = 1, voltage_channel: Optional[int] = None,
                 rate_hz: Optional[float] = None, boundary: str = "board", root: str = HWMON_ROOT, **kw):
        super().__init__(rate_hz, **kw)
        self.device, self.root = device, root
        self.channel = int(channel)
        self.voltage_channel = voltage_channel
        self.boundary = check_boundary(boundary)
        self.path: Optional[Path] = None
        self.name = ""
        self.update_interval_s: Optional[float] = None
        self._files: dict = {}

    def _open(self) -> None:
        self.path = find_hwmon(self.device, self.root)
        self.name = (self.path / "name").read_text().strip() if (self.path / "name").exists() else ""
        ch = self.channel
        vch = self.voltage_channel
        if vch is None:  # ina2xx: in0 is the shunt voltage, in1 the bus voltage
            vch = 1 if self.name.startswith("ina") else ch
        files = {"power": self.path / f"power{ch}_input", "current": self.path / f"curr{ch}_input",
                 "voltage": self.path / f"in{vch}_input"}
        self._files = {k: f for k, f in files.items() if f.exists()}
        if "power" not in self._files and not ("current" in self._files and "voltage" in self._files):
            raise MeterError(f"hwmon device {self.path} ({self.name or 'unnamed'}) has neither power{ch}_input "
                             f"nor curr{ch}_input with in{vch}_input",
                             "pick the channel with --meter-opt channel=N")
        ui = self.path / "update_interval"
        self.update_interval_s = _read_int(ui, "update interval") / 1000.0 if ui.exists() else None

    def _poll(self):
        f = self._files
        cur = _read_int(f["current"], "current, mA") * 1e-3 if "current" in f else None
        volt = _read_int(f["voltage"], "voltage, mV") * 1e-3 if "voltage" in f else None
        if "power" in f:
            power = _read_int(f["power"], "power, uW") * 1e-6
        else:
            assert cur is not None and volt is not None   # _open refused a device with neither
            power = cur * volt
        return ("power", power, cur, volt)

    def describe(self) -> MeterInfo:
        rate = self.rate_hz
        if self.update_interval_s:
            rate = min(rate, 1.0 / self.update_interval_s)
        quantity = ("power (power_input, uW)" if "power" in self._files or not self._files
                    else "current x voltage (curr_input mA x in_input mV)")
        return MeterInfo(instrument=f"Linux hwmon {self.name or '?'} ({self.path or self.device or 'auto'})",
                         sample_rate_hz=rate, boundary=self.boundary, tested_against=TESTED, quantity=quantity,
                         details={"path": str(self.path) if self.path else None, "channel": self.channel,
                                  "poll_rate_hz": self.rate_hz, "update_interval_s": self.update_interval_s,
                                  "boundary_note": "set by how the sensor is wired; pass --boundary"})


__all__ = ["RaplMeter", "HwmonMeter", "find_hwmon", "RAPL_ROOT", "HWMON_ROOT"]
