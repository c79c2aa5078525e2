"""INA219/INA226/INA260 register arithmetic against a fake SMBus holding the real register files.

The fake chip computes its registers from a true current and bus voltage the
way the datasheets define them (INA226: Current = Shunt x CAL / 2048, Power =
Current x Bus / 20000; INA219: Current = Shunt x CAL / 4096, Power = Current x
Bus / 5000; INA260: fixed 1.25 mA, 1.25 mV, 10 mW LSBs) and serves 16-bit
words most significant byte first, as the chips do on the wire.
"""
import sys
import time

import numpy as np
import pytest

from edgebench.power import open_meter
from edgebench.power.base import MeterError
from edgebench.power.ina import CHIPS, InaMeter, calibration, conversion_period_s, parse_port, signed16


def to_u16(v: int) -> int:
    return v & 0xFFFF


class FakeIna:
    """One chip's register file, recomputed from the true current/voltage when read."""

    def __init__(self, chip: str, current_a: float, bus_v: float, shunt_ohm: float = 0.0):
        self.chip, self.current_a, self.bus_v, self.shunt_ohm = chip, current_a, bus_v, shunt_ohm
        self.regs = {0x00: CHIPS[chip].por_config, 0x05: 0}
        if chip != "ina219":
            self.regs.update({0xFE: 0x5449, 0xFF: CHIPS[chip].die_id})

    def word(self, reg: int) -> int:
        if self.chip == "ina260":
            cur = int(round(self.current_a / 1.25e-3))
            bus = int(round(self.bus_v / 1.25e-3))
            table = {0x01: to_u16(cur), 0x02: bus, 0x03: int(round(self.current_a * self.bus_v / 10e-3))}
            return table.get(reg, self.regs.get(reg, 0))
        lsb = 10e-6 if self.chip == "ina219" else 2.5e-6
        shunt = int(round(self.current_a * self.shunt_ohm / lsb))
        cal = self.regs[0x05]
        div, pdiv = (4096, 5000) if self.chip == "ina219" else (2048, 20000)
        current = int(shunt * cal / div)
        if self.chip == "ina219":
            bus_raw = int(round(self.bus_v / 4e-3))
            bus_reg = (bus_raw << 3) | 0b10  # CNVR set, OVF clear
        else:
            bus_raw = bus_reg = int(round(self.bus_v / 1.25e-3))
        table = {0x01: to_u16(shunt), 0x02: bus_reg, 0x03: int(abs(current) * bus_raw / pdiv), 0x04: to_u16(current)}
        return table.get(reg, self.regs.get(reg, 0))


class FakeSMBus:
    """smbus2.SMBus look-alike: devices by address; block reads/writes big-endian; word calls SMBus-order."""

    def __init__(self, devices):
        self.devices = devices
        self.writes = []

    def _dev(self, addr):
        if addr not in self.devices:
            raise OSError(121, "Remote I/O error")
        return self.devices[addr]

    def read_i2c_block_data(self, addr, reg, length):
        w = self._dev(addr).word(reg)
        return [w >> 8, w & 0xFF][:length]

    def write_i2c_block_data(self, addr, reg, data):
        self.writes.append((addr, reg, list(data)))
        self._dev(addr).regs[reg] = (data[0] << 8) | data[1]

    def read_word_data(self, addr, reg):  # SMBus words are little-endian: wrong for these chips
        w = self._dev(addr).word(reg)
        return ((w & 0xFF) << 8) | (w >> 8)

    def close(self):
        pass


def meter(chip, dev, **kw):
    bus = FakeSMBus({0x40: dev})
    return InaMeter(chip, port="1:0x40", bus=bus, **kw), bus


def test_ina226_calibration_and_register_arithmetic():
    # 10 mOhm shunt, 3.2768 A full scale: current LSB 100 µA, CAL = 0.00512 / (1e-4 x 0.01) = 5120
    assert calibration(CHIPS["ina226"], 0.01, 3.2768) == (5120, pytest.approx(1e-4), pytest.approx(2.5e-3))
    dev = FakeIna("ina226", current_a=2.0, bus_v=12.0, shunt_ohm=0.01)
    m, bus = meter("ina226", dev, shunt_ohm=0.01, max_current_a=3.2768)
    m._open()
    assert (0x40, 0x05, [0x14, 0x00]) in bus.writes  # 5120 = 0x1400, MSB first
    power, current, bus_v, shunt_v, overflow = m.read_values()
    # shunt 20 mV = 8000 LSB; current = 8000 x 5120 / 2048 = 20000 x 100 µA; bus 9600 x 1.25 mV
    assert shunt_v == pytest.approx(0.020) and current == pytest.approx(2.0) and bus_v == pytest.approx(12.0)
    assert power == pytest.approx(24.0)  # 9600 x 25 x 100 µW
    assert not overflow
    dev.current_a = -0.5
    assert m.read_values()[1] == pytest.approx(-0.5)  # signed current register


def test_ina226_non_round_calibration_uses_the_integer_cal():
    cal, lsb, plsb = calibration(CHIPS["ina226"], 0.1, 0.8)
    assert cal == 2097  # trunc(0.00512 / (0.8 / 32768 x 0.1)) = trunc(2097.152)
    assert lsb == pytest.approx(0.00512 / (2097 * 0.1)) and plsb == pytest.approx(25 * lsb)
    dev = FakeIna("ina226", current_a=0.5, bus_v=5.0, shunt_ohm=0.1)
    m, _ = meter("ina226", dev, shunt_ohm=0.1, max_current_a=0.8)
    m._open()
    power, current, bus_v, _, _ = m.read_values()
    # current register = trunc(20000 x 2097 / 2048) = 20478; power = trunc(20478 x 4000 / 20000) = 4095
    assert current == pytest.approx(20478 * lsb) and power == pytest.approx(4095 * plsb)
    assert current == pytest.approx(0.5, abs=2 * lsb) and power == pytest.approx(2.5, abs=2 * plsb)


def test_ina219_bus_register_shift_and_calibration():
    assert calibration(CHIPS["ina219"], 0.1, 3.2768) == (4096, pytest.approx(1e-4), pytest.approx(2e-3))
    dev = FakeIna("ina219", current_a=1.0, bus_v=5.0, shunt_ohm=0.1)
    m, _ = meter("ina219", dev, shunt_ohm=0.1, max_current_a=3.2768)
    m._open()
    power, current, bus_v, shunt_v, overflow = m.read_values()
    assert bus_v == pytest.approx(5.0)  # (word >> 3) x 4 mV, CNVR/OVF bits dropped
    assert shunt_v == pytest.approx(0.1) and current == pytest.approx(1.0)
    assert power == pytest.approx(5.0)  # 2500 x 20 x 100 µW
    assert calibration(CHIPS["ina219"], 0.1, 3.2)[0] % 2 == 0  # bit 0 of CAL is unused


def test_ina260_fixed_lsbs_and_identity_check():
    dev = FakeIna("ina260", current_a=1.5, bus_v=3.3)
    m, bus = meter("ina260", dev)
    m._open()
    assert not any(reg == 0x05 for _, reg, _ in bus.writes)  # no calibration register
    power, current, bus_v, shunt_v, _ = m.read_values()
    assert (current, bus_v, power, shunt_v) == (pytest.approx(1.5), pytest.approx(3.3), pytest.approx(4.95), None)
    dev.regs[0xFE] = 0x1234
    with pytest.raises(MeterError, match="not a TI INA260 \\(manufacturer id 0x1234"):
        meter("ina260", dev)[0].start()


def test_word_byte_order_matters():
    dev = FakeIna("ina226", current_a=2.0, bus_v=12.0, shunt_ohm=0.01)
    bus = FakeSMBus({0x40: dev})
    assert bus.read_i2c_block_data(0x40, 0x02, 2) == [0x25, 0x80]  # 9600 = 0x2580 on the wire
    assert bus.read_word_data(0x40, 0x02) == 0x8025  # what a naive SMBus word read would give


def test_conversion_period_from_the_power_on_config():
    assert conversion_period_s(CHIPS["ina226"], 0x4127) == pytest.approx(2.2e-3)   # 1.1 ms + 1.1 ms, 1 average
    assert conversion_period_s(CHIPS["ina226"], 0x4527) == pytest.approx(2.2e-3 * 16)  # AVG=16
    assert conversion_period_s(CHIPS["ina219"], 0x399F) == pytest.approx(1.064e-3)  # 532 µs + 532 µs


def test_live_polling_and_describe():
    dev = FakeIna("ina226", current_a=2.0, bus_v=12.0, shunt_ohm=0.01)
    m, _ = meter("ina226", dev, shunt_ohm=0.01, max_current_a=3.2768, rate_hz=200)
    m.start()
    time.sleep(0.15)
    s = m.stop()
    assert len(s) >= 10 and np.allclose(s.power_w, 24.0) and np.allclose(s.current_a, 2.0)
    info = m.describe()
    assert info.tested_against == "fake of its interface" and info.boundary == "board"
    assert info.sample_rate_hz == pytest.approx(200)  # below 1 / 2.2 ms
    assert "INA226" in info.instrument and "0x40" in info.instrument


def test_bad_configuration_and_absent_chip():
    with pytest.raises(MeterError, match="needs the shunt resistance"):
        meter("ina226", FakeIna("ina226", 1, 5))[0].start()
    with pytest.raises(MeterError, match="outside 1..32767"):
        calibration(CHIPS["ina226"], 1e-6, 1e-6)
    m = InaMeter("ina226", port="1:0x41", bus=FakeSMBus({}), shunt_ohm=0.1, max_current_a=1)
    with pytest.raises(MeterError) as e:
        m.start()
    assert "no answer from I2C address 0x41" in e.value.one_line() and "i2cdetect" in e.value.one_line()
    with pytest.raises(MeterError, match="BUS:ADDRESS"):
        parse_port("i2c-one")
    assert parse_port("3:0x45") == (3, 0x45) and parse_port(None) == (1, 0x40)
    assert signed16(0xFFFF) == -1


def test_missing_smbus2_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "smbus2", None)
    m = open_meter("ina226", "1:0x40", {"shunt_ohm": 0.1, "max_current_a": 1.0})
    with pytest.raises(MeterError) as e:
        m.start()
    assert "pip install smbus2" in e.value.one_line()
