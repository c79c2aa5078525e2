"""Raspberry Pi 5 PMIC rails via ``vcgencmd pmic_read_adc`` (level 2).

The Pi 5's PMIC reports, for each of its output rails, a current and a
voltage, one per line::

     VDD_CORE_A current(7)=2.34567000A
     VDD_CORE_V volt(15)=0.82345000V

Lines are paired per rail (``VDD_CORE_A`` with ``VDD_CORE_V``) into power;
rails with only a voltage (``EXT5V_V``, ``BATT_V``) carry no power. The sum
over rails is the ``pmic-rails`` boundary: SoC core, memory and I/O rails, not
the 5 V input stage, USB peripherals or the fan. These are the PMIC's own ADC
readings; edgebench does not know their accuracy, so compare them with a meter
on the 5 V input before trusting absolute watts.

Each reading runs the ``vcgencmd`` program (tens of milliseconds), so the poll
rate is low (default 5 Hz) and each reading is stamped at the middle of the
call. Tested against recorded-format fake outputs only (``tested_against``).
"""
from __future__ import annotations

import re
import shutil
import subprocess
from typing import Callable, Optional

from edgebench.power.base import OWN_POWER, MeterError, MeterInfo, PolledMeter, check_boundary

TESTED = "fake of its interface"
_LINE = re.compile(r"^\s*(?P<name>[A-Za-z0-9_]+?)_(?P<kind>[AV])\s+(?P<q>current|volt)\((?P<ch>\d+)\)="
                   r"(?P<val>[-+0-9.eE]+)(?P<unit>[AV])\s*$")


def parse_pmic_adc(text: str) -> dict:
    """``{rail: {"current_a", "voltage_v", "power_w"}}`` from ``vcgencmd pmic_read_adc`` output."""
    rails: dict = {}
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        kind, q, unit = m.group("kind"), m.group("q"), m.group("unit")
        if (kind, q, unit) not in (("A", "current", "A"), ("V", "volt", "V")):
            continue
        r = rails.setdefault(m.group("name"), {"current_a": None, "voltage_v": None, "power_w": None})
        r["current_a" if kind == "A" else "voltage_v"] = float(m.group("val"))
    for r in rails.values():
        if r["current_a"] is not None and r["voltage_v"] is not None:
            r["power_w"] = r["current_a"] * r["voltage_v"]
    return rails


def total_power(rails: dict) -> float:
    return float(sum(r["power_w"] for r in rails.values() if r["power_w"] is not None))


def _run_vcgencmd(binary: str) -> str:
    try:
        p = subprocess.run([binary, "pmic_read_adc"], capture_output=True, text=True, timeout=5.0)
    except FileNotFoundError:
        raise MeterError(f"{binary} not found: the vcgencmd meter needs Raspberry Pi OS on a Raspberry Pi 5",
                         "install it (apt install libraspberrypi-bin) or pick another --meter") from None
    except subprocess.TimeoutExpired:
        raise MeterError("vcgencmd pmic_read_adc did not answer within 5 s") from None
    if p.returncode != 0:
        raise MeterError(f"vcgencmd pmic_read_adc failed: {(p.stderr or p.stdout).strip()[:200]}",
                         "pmic_read_adc needs a Raspberry Pi 5 with current firmware; on another Pi use an "
                         "external meter")
    return p.stdout


class VcgencmdPmicMeter(PolledMeter):
    """Sum of the Pi 5 PMIC rails, polled with ``vcgencmd pmic_read_adc``."""

    rate_hz = 5.0

    def __init__(self, binary: Optional[str] = None, rate_hz: Optional[float] = None,
                 boundary: str = "pmic-rails", runner: Optional[Callable[[], str]] = None, **kw):
        super().__init__(rate_hz, **kw)
        self.binary = binary or "vcgencmd"
        self.boundary = check_boundary(boundary)
        self._runner = runner
        self.last_rails: dict = {}

    def _open(self) -> None:
        if self._runner is None and shutil.which(self.binary) is None:
            raise MeterError(f"{self.binary} not found: the vcgencmd meter needs Raspberry Pi OS on a Raspberry Pi 5",
                             "run edgebench on the Pi itself (--board host), or pick another --meter")

    def _poll(self):
        text = self._runner() if self._runner else _run_vcgencmd(self.binary)
        rails = parse_pmic_adc(text)
        if not any(r["power_w"] is not None for r in rails.values()):
            raise MeterError("vcgencmd pmic_read_adc gave no rail with both current and voltage",
                             "pmic_read_adc needs a Raspberry Pi 5")
        self.last_rails = rails
        return ("power", total_power(rails), None, None)

    def describe(self) -> MeterInfo:
        return MeterInfo(instrument="Raspberry Pi 5 PMIC ADC (vcgencmd pmic_read_adc), sum of rails",
                         sample_rate_hz=self.rate_hz, boundary=self.boundary, tested_against=TESTED,
                         quantity="sum over rails of current x voltage", reads=OWN_POWER,
                         details={"rails": sorted(r for r, v in self.last_rails.items() if v["power_w"] is not None),
                                  "accuracy": "the PMIC's own ADC; not characterised by edgebench"})


__all__ = ["parse_pmic_adc", "total_power", "VcgencmdPmicMeter"]
