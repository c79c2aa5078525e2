"""TI INA219 / INA226 / INA260 current-power monitors over I2C (level 2).

Registers are 16-bit words sent most significant byte first (big-endian),
unlike the SMBus word convention (least significant byte first): the reader
uses ``read_i2c_block_data(addr, reg, 2)`` / ``write_i2c_block_data`` and
assembles the bytes itself. ``smbus2`` is imported only when a real bus is
opened.

Register maps and LSBs, from the TI datasheets (SBOS448 INA219, SBOS547
INA226, SBOS656 INA260):

=====  ===========  =====================  =====================  ======================
reg    INA219       INA226                 INA260                 notes
=====  ===========  =====================  =====================  ======================
00h    config       config                 config
01h    shunt 10 µV  shunt 2.5 µV           current 1.25 mA        signed
02h    bus: bits    bus 1.25 mV            bus 1.25 mV            INA219: CNVR bit 1, OVF
       15..3, 4 mV                                                 bit 0
03h    power        power                  power 10 mW
       20 x I_LSB   25 x I_LSB
04h    current      current                --                     signed, I_LSB
05h    calibration  calibration            --
FEh    --           manufacturer 0x5449    manufacturer 0x5449
FFh    --           die id 0x2260          die id 0x2270
=====  ===========  =====================  =====================  ======================

Calibration (INA219/INA226): ``I_LSB = max_current_a / 2**15``, then
``CAL = trunc(k / (I_LSB x R_shunt))`` with ``k = 0.04096`` (INA219, bit 0 of
CAL unused) or ``0.00512`` (INA226); the current LSB actually in force is
recomputed from the integer ``CAL``. The INA260 has its own 2 mΩ shunt and
fixed LSBs. The power register is the chip's own bus voltage x current
product, reported as ``power_w``.

Tested against a fake SMBus holding a register file with the real addresses
and byte order only (``MeterInfo.tested_against``): no INA chip was attached.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from edgebench.power.base import MeterError, MeterInfo, PolledMeter, check_boundary, require_module

TESTED = "fake of its interface"
TI_MANUFACTURER_ID = 0x5449


@dataclass(frozen=True)
class InaChip:
    name: str
    reg_current: int
    reg_bus: int
    reg_power: int
    reg_shunt: Optional[int]
    reg_cal: Optional[int]
    shunt_lsb_v: Optional[float]
    bus_lsb_v: float
    bus_shift: int
    power_lsb_per_current_lsb: Optional[float]  # power LSB = this x current LSB
    cal_k: Optional[float]
    cal_mask: int
    fixed_current_lsb_a: Optional[float] = None
    fixed_power_lsb_w: Optional[float] = None
    die_id: Optional[int] = None
    por_config: int = 0


CHIPS = {
    "ina219": InaChip("INA219", reg_current=0x04, reg_bus=0x02, reg_power=0x03, reg_shunt=0x01, reg_cal=0x05,
                      shunt_lsb_v=10e-6, bus_lsb_v=4e-3, bus_shift=3, power_lsb_per_current_lsb=20.0,
                      cal_k=0.04096, cal_mask=0xFFFE, por_config=0x399F),
    "ina226": InaChip("INA226", reg_current=0x04, reg_bus=0x02, reg_power=0x03, reg_shunt=0x01, reg_cal=0x05,
                      shunt_lsb_v=2.5e-6, bus_lsb_v=1.25e-3, bus_shift=0, power_lsb_per_current_lsb=25.0,
                      cal_k=0.00512, cal_mask=0x7FFF, die_id=0x2260, por_config=0x4127),
    "ina260": InaChip("INA260", reg_current=0x01, reg_bus=0x02, reg_power=0x03, reg_shunt=None, reg_cal=None,
                      shunt_lsb_v=None, bus_lsb_v=1.25e-3, bus_shift=0, power_lsb_per_current_lsb=None,
                      cal_k=None, cal_mask=0, fixed_current_lsb_a=1.25e-3, fixed_power_lsb_w=10e-3,
                      die_id=0x2270, por_config=0x6127),
}

# Conversion times (s) of the INA226/INA260 config fields VBUSCT/VSHCT (ISHCT), and AVG counts.
_CT_226 = (140e-6, 204e-6, 332e-6, 588e-6, 1.1e-3, 2.116e-3, 4.156e-3, 8.244e-3)
_AVG_226 = (1, 4, 16, 64, 128, 256, 512, 1024)
# INA219 BADC/SADC (4 bits): 0..3 (and 8) single conversions of 9..12 bits, 9..15: averages of 2..128.
_ADC_219 = {0: 84e-6, 1: 148e-6, 2: 276e-6, 3: 532e-6, 8: 532e-6, 9: 1.06e-3, 10: 2.13e-3, 11: 4.26e-3,
            12: 8.51e-3, 13: 17.02e-3, 14: 34.05e-3, 15: 68.10e-3}


def signed16(word: int) -> int:
    return word - 0x10000 if word & 0x8000 else word


def calibration(chip: InaChip, shunt_ohm: float | None, max_current_a: float | None) -> tuple:
    """``(CAL register value, current LSB in A, power LSB in W)`` for a shunt and a full-scale current."""
    if chip.cal_k is None or chip.power_lsb_per_current_lsb is None:   # fixed LSBs (INA260)
        return None, chip.fixed_current_lsb_a, chip.fixed_power_lsb_w
    if not (shunt_ohm and shunt_ohm > 0 and max_current_a and max_current_a > 0):
        raise MeterError(f"{chip.name} needs the shunt resistance and the maximum expected current",
                         "e.g. --meter-opt shunt_ohm=0.1 --meter-opt max_current_a=3.2")
    current_lsb = max_current_a / 2 ** 15
    cal = int(chip.cal_k / (current_lsb * shunt_ohm)) & chip.cal_mask
    if not 1 <= cal <= chip.cal_mask:
        raise MeterError(f"{chip.name}: shunt {shunt_ohm} ohm with {max_current_a} A full scale gives "
                         f"calibration {cal}, outside 1..{chip.cal_mask}",
                         "check shunt_ohm and max_current_a")
    current_lsb = chip.cal_k / (cal * shunt_ohm)  # the LSB the integer CAL really sets
    return cal, current_lsb, chip.power_lsb_per_current_lsb * current_lsb


def conversion_period_s(chip: InaChip, config: int) -> Optional[float]:
    """How often the chip produces a new reading with this config (shunt + bus conversion x averages)."""
    if chip.name in ("INA226", "INA260"):
        avg = _AVG_226[(config >> 9) & 7]
        return (_CT_226[(config >> 6) & 7] + _CT_226[(config >> 3) & 7]) * avg
    badc, sadc = (config >> 7) & 0xF, (config >> 3) & 0xF
    t_bus = _ADC_219.get(badc if badc >= 8 or badc <= 3 else badc & 3)
    t_sh = _ADC_219.get(sadc if sadc >= 8 or sadc <= 3 else sadc & 3)
    return (t_bus or 0) + (t_sh or 0) or None


class InaRegisters:
    """Big-endian 16-bit register access on an SMBus-like object."""

    def __init__(self, bus, address: int):
        self.bus, self.address = bus, address

    def read(self, reg: int) -> int:
        try:
            hi, lo = self.bus.read_i2c_block_data(self.address, reg, 2)
        except OSError as exc:
            raise MeterError(f"no answer from I2C address {self.address:#04x} (register {reg:#04x}): {exc}",
                             "check wiring, the address (i2cdetect -y BUS) and --meter-port BUS:ADDR") from None
        return (hi << 8) | lo

    def write(self, reg: int, value: int) -> None:
        try:
            self.bus.write_i2c_block_data(self.address, reg, [(value >> 8) & 0xFF, value & 0xFF])
        except OSError as exc:
            raise MeterError(f"cannot write register {reg:#04x} at I2C address {self.address:#04x}: {exc}") from None


def parse_port(port: Optional[str]) -> tuple:
    """'1:0x40' -> (1, 0x40); default bus 1, address 0x40."""
    if not port:
        return 1, 0x40
    bus, _, addr = str(port).partition(":")
    try:
        return int(bus, 0), int(addr or "0x40", 0)
    except ValueError:
        raise MeterError(f"I2C port {port!r} is not BUS:ADDRESS", "e.g. --meter-port 1:0x40") from None


class InaMeter(PolledMeter):
    """An INA219/INA226/INA260 read over I2C (smbus2) on the host."""

    rate_hz = 100.0

    def __init__(self, chip: str = "ina226", port: Optional[str] = None, shunt_ohm: Optional[float] = None,
                 max_current_a: Optional[float] = None, config: Optional[int] = None,
                 rate_hz: Optional[float] = None, boundary: str = "board", bus=None, **kw):
        super().__init__(rate_hz, **kw)
        if chip not in CHIPS:
            raise MeterError(f"unknown INA chip {chip!r}", f"use one of {', '.join(CHIPS)}")
        self.chip = CHIPS[chip]
        self.bus_number, self.address = parse_port(port)
        self.shunt_ohm = None if shunt_ohm is None else float(shunt_ohm)
        self.max_current_a = None if max_current_a is None else float(max_current_a)
        self.config = None if config is None else int(config, 0) if isinstance(config, str) else int(config)
        self.boundary = check_boundary(boundary)
        self._bus = bus
        self._own_bus = bus is None
        self.regs: Optional[InaRegisters] = None
        self.cal: int | None = None             # the CAL register (None: a chip with fixed LSBs)
        self.current_lsb_a: float | None = None
        self.power_lsb_w: float | None = None
        self.period_s: Optional[float] = None
        self.overflows = 0

    def _open(self) -> None:
        if self._bus is None:
            smbus2 = require_module("smbus2", "smbus2", self.chip.name)
            try:
                self._bus = smbus2.SMBus(self.bus_number)
            except (OSError, FileNotFoundError) as exc:
                raise MeterError(f"cannot open I2C bus {self.bus_number}: {exc}",
                                 "enable I2C (raspi-config) and check /dev/i2c-*; add the user to group i2c") from None
        self.regs = InaRegisters(self._bus, self.address)
        if self.chip.die_id is not None:
            man = self.regs.read(0xFE)
            if man != TI_MANUFACTURER_ID:
                raise MeterError(f"the device at I2C {self.bus_number}:{self.address:#04x} is not a TI "
                                 f"{self.chip.name} (manufacturer id {man:#06x}, expected {TI_MANUFACTURER_ID:#06x})")
        if self.config is not None:
            self.regs.write(0x00, self.config)
        config = self.regs.read(0x00)
        self.period_s = conversion_period_s(self.chip, config)
        self.cal, self.current_lsb_a, self.power_lsb_w = calibration(self.chip, self.shunt_ohm, self.max_current_a)
        if self.cal is not None and self.chip.reg_cal is not None:
            self.regs.write(self.chip.reg_cal, self.cal)
            back = self.regs.read(self.chip.reg_cal)
            if back != self.cal:
                raise MeterError(f"{self.chip.name} calibration register reads back {back}, wrote {self.cal}")

    def read_values(self) -> tuple:
        """(power_w, current_a, bus_voltage_v, shunt_voltage_v or None, overflow) from the registers."""
        c, regs, current_lsb_a, power_lsb_w = self.chip, self.regs, self.current_lsb_a, self.power_lsb_w
        assert regs is not None and current_lsb_a is not None and power_lsb_w is not None   # set by _open
        raw_bus = regs.read(c.reg_bus)
        overflow = bool(c.name == "INA219" and raw_bus & 1)
        bus_v = (raw_bus >> c.bus_shift) * c.bus_lsb_v
        current = signed16(regs.read(c.reg_current)) * current_lsb_a
        power = regs.read(c.reg_power) * power_lsb_w
        shunt = (signed16(regs.read(c.reg_shunt)) * c.shunt_lsb_v
                 if c.reg_shunt is not None and c.shunt_lsb_v is not None else None)
        return power, current, bus_v, shunt, overflow

    def _poll(self):
        power, current, bus_v, _, overflow = self.read_values()
        if overflow:
            self.overflows += 1
        return ("power", power, current, bus_v)

    def close(self) -> None:
        super().close()
        if self._own_bus and self._bus is not None and hasattr(self._bus, "close"):
            self._bus.close()
            self._bus = None

    def describe(self) -> MeterInfo:
        rate = self.rate_hz if not self.period_s else min(self.rate_hz, 1.0 / self.period_s)
        where = f"bus {self.bus_number}, address {self.address:#04x}"
        return MeterInfo(instrument=f"TI {self.chip.name} over I2C ({where})",
                         sample_rate_hz=rate, boundary=self.boundary, tested_against=TESTED,
                         quantity="power register (the chip's bus voltage x current)",
                         details={"shunt_ohm": self.shunt_ohm if self.chip.cal_k else 0.002,
                                  "max_current_a": self.max_current_a, "calibration": self.cal,
                                  "current_lsb_a": self.current_lsb_a, "power_lsb_w": self.power_lsb_w,
                                  "conversion_period_s": self.period_s, "poll_rate_hz": self.rate_hz,
                                  "overflows": self.overflows,
                                  "boundary_note": "set by where the shunt is wired; pass --boundary"})


__all__ = ["InaMeter", "InaChip", "InaRegisters", "CHIPS", "calibration", "conversion_period_s",
           "parse_port", "signed16"]
