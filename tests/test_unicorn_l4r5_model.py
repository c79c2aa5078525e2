"""The unicorn L4R5 board's register model (edgebench.mcu.l4r5_model) catches the port defects issue 31
item 5 names, and the fixed sequences pass.

The first tests replay the port's register sequences through the model, with the instructions between
accesses as the compiled port spends them (a poll of a register is a few instructions); the OLD
sequences (main 3bb8176's eb_port_l4r5.c) are the fixtures ``old_*``. The last ones boot the images
themselves under unicorn: the new one from this tree, the old one built from git.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import load_script, require_module, require_tool

from edgebench.mcu import l4r5_model as m
from edgebench.mcu.unicorn_board import thumb_instructions

ROOT = Path(__file__).resolve().parents[1]
RESETS = {m.RCC_CR: 0x63, m.RCC_CFGR: 0, m.PWR_CR1: 0x200, m.ADC1_CR: 0x2000_0000}   # SVD STM32L4x5 resets


class Bus:
    """The core's side: each access after ``gap`` instructions (HCLK cycles in the model)."""

    def __init__(self, **options):
        self.model = m.L4R5Model(dict(RESETS), **options)
        self.regs = self.model.regs

    def w(self, addr, value, gap=3):
        self.model.advance(gap)
        self.regs[addr] = self.model.write(addr, self.regs.get(addr, 0), value)

    def r(self, addr, gap=3):
        self.model.advance(gap)
        return self.model.read(addr)

    def set(self, addr, bits, gap=3):
        self.w(addr, self.r(addr, gap) | bits, 1)

    def wait(self, addr, mask, want, tries=500_000, per=5):
        return any(self.r(addr, per) & mask == want for _ in range(tries))

    def spin_us(self, us):                  # the port's spin_us: ~5 instructions per iteration
        self.model.advance(int(us * (self.model.sysclk_hz() / 4e6 + 1)) * 5)


def _pll_ready(bus, src):
    """PLL from MSI 4 MHz (M 1, N 60) or HSI16 (M 2, N 30), R 2: 120 MHz, as the ports configure it."""
    m_n = (0 << 4) | (60 << 8) if src == 1 else (1 << 4) | (30 << 8)
    bus.w(m.RCC_PLLCFGR, src | m_n | (1 << 24))
    bus.set(m.RCC_CR, m.PLLON)
    assert not bus.r(m.RCC_CR) & m.PLLRDY                    # the PLL takes its lock time
    assert bus.wait(m.RCC_CR, m.PLLRDY, m.PLLRDY)


def old_switch(bus):
    """3bb8176: HPRE /2 and SW = PLL in one write."""
    bus.w(m.RCC_CFGR, (bus.r(m.RCC_CFGR) & ~0xFF3) | (0x8 << 4) | 3)
    return bus.wait(m.RCC_CFGR, 0xC, 0xC)


def new_switch(bus):
    """ST's sequence: HPRE /2, then SW = PLL, then HPRE /1 after 1 µs."""
    bus.w(m.RCC_CFGR, (bus.r(m.RCC_CFGR) & ~0xFF0) | (0x8 << 4))
    bus.w(m.RCC_CFGR, (bus.r(m.RCC_CFGR) & ~0x3) | 3)
    ok = bus.wait(m.RCC_CFGR, 0xC, 0xC)
    bus.spin_us(1)
    bus.w(m.RCC_CFGR, bus.r(m.RCC_CFGR) & ~0xF0)
    return ok


def _adc_calibrated(bus):
    bus.set(m.ADC_CCR, (3 << 16) | m.TSEN)
    bus.w(m.ADC1_CR, bus.r(m.ADC1_CR) & ~m.DEEPPWD)
    bus.set(m.ADC1_CR, m.ADVREGEN)
    bus.spin_us(25)
    bus.set(m.ADC1_CR, m.ADCAL)
    assert bus.wait(m.ADC1_CR, m.ADCAL, 0)


def old_adc_enable(bus):
    """3bb8176: ADEN set once, a few instructions after ADCAL cleared."""
    _adc_calibrated(bus)
    bus.w(m.ADC1_ISR, m.ADRDY)
    bus.set(m.ADC1_CR, m.ADEN)
    return bus.wait(m.ADC1_ISR, m.ADRDY, m.ADRDY, tries=50_000)


def new_adc_enable(bus):
    """ST's ADC_Enable: set ADEN again until ADRDY."""
    _adc_calibrated(bus)
    bus.w(m.ADC1_ISR, m.ADRDY)
    for _ in range(50_000):
        if bus.r(m.ADC1_ISR) & m.ADRDY:
            return True
        if not bus.r(m.ADC1_CR) & m.ADEN:
            bus.set(m.ADC1_CR, m.ADEN)
    return False


def _temperature_raw(bus, wait_after_ready_us):
    bus.spin_us(wait_after_ready_us)
    bus.set(m.ADC1_SMPR2, 7 << 21)
    bus.w(m.ADC1_SQR1, 17 << 6)
    bus.set(m.ADC1_CR, m.ADSTART)
    assert bus.wait(m.ADC1_ISR, m.EOC, m.EOC)
    return bus.r(m.ADC1_DR)


def _at_120mhz(**options):
    bus = Bus(**options)
    bus.set(m.RCC_CR, m.HSION)
    assert bus.wait(m.RCC_CR, m.HSIRDY, m.HSIRDY)
    _pll_ready(bus, 1)
    return bus


def test_the_old_one_write_switch_is_refused_and_st_sequence_passes():
    old = _at_120mhz()
    assert not old_switch(old)                               # SWS never shows the PLL: the port falls back
    assert old.model.sysclk_hz() == 4e6 and "switch refused" in old.model.violations[0]
    new = _at_120mhz()
    assert new_switch(new) and not new.model.violations
    assert new.model.hclk_hz() == 120e6 and new.model.clock_source() == "pll(msi)"


def test_hpre_back_to_one_before_a_microsecond_is_a_violation():
    bus = _at_120mhz()
    bus.w(m.RCC_CFGR, 0x8 << 4)
    bus.w(m.RCC_CFGR, (0x8 << 4) | 3)
    bus.w(m.RCC_CFGR, bus.r(m.RCC_CFGR) & ~0xF0)             # no wait: a few cycles after the switch
    assert any("not 1 µs" in v for v in bus.model.violations)


def test_aden_right_after_calibration_is_ignored_and_the_hal_loop_gets_adrdy():
    old = _at_120mhz()
    new_switch(old)
    assert not old_adc_enable(old)                           # the old port: no temperature sensor, ever
    assert any(w == "aden-ignored" for _, w in old.model.trace)
    new = _at_120mhz()
    new_switch(new)
    assert new_adc_enable(new) and not new.model.violations


def test_the_sensor_sampled_before_its_start_up_reads_nothing():
    early = _at_120mhz()
    new_switch(early)
    assert new_adc_enable(early)
    assert _temperature_raw(early, 0) == 0                    # ~30 µs after TSEN, as the old port sampled
    assert "sampled" in early.model.violations[-1] and "120" in early.model.violations[-1]
    settled = _at_120mhz()
    new_switch(settled)
    assert new_adc_enable(settled)
    raw = _temperature_raw(settled, 120)
    (_, cal1), (_, cal2) = m.TS_CAL
    celsius = 30 + (130 - 30) * (raw * 33 / 30 - cal1) / (cal2 - cal1)    # the port's formula
    assert abs(celsius - 25.0) < 0.5 and not settled.model.violations


def test_ready_bits_wait_for_their_sources():
    bus = Bus(lse_startup_us=None)
    bus.set(m.RCC_CR, m.HSEON)
    assert not bus.wait(m.RCC_CR, m.HSERDY, m.HSERDY, tries=20_000)   # the board has no HSE by default
    bus.set(m.RCC_BDCR, m.LSEON)
    assert not bus.r(m.RCC_BDCR) & m.LSEON and "DBP" in bus.model.violations[-1]   # backup domain locked
    bus.set(m.PWR_CR1, m.DBP)
    bus.set(m.RCC_BDCR, m.LSEON)
    assert not bus.wait(m.RCC_BDCR, m.LSERDY, m.LSERDY, tries=20_000)   # no crystal
    bus.set(m.RCC_CR, m.MSIPLLEN)
    assert "MSIPLLEN set before LSERDY" in bus.model.violations[-1]
    bus.w(m.RCC_PLLCFGR, 3)                                  # PLL from the absent HSE never locks
    bus.set(m.RCC_CR, m.PLLON)
    assert not bus.wait(m.RCC_CR, m.PLLRDY, m.PLLRDY, tries=20_000)
    lse = Bus()
    lse.set(m.PWR_CR1, m.DBP)
    lse.set(m.RCC_BDCR, m.LSEON)
    assert lse.wait(m.RCC_BDCR, m.LSERDY, m.LSERDY)
    lse.set(m.RCC_CR, m.MSIPLLEN)
    assert lse.model.clock_source() == "msi-lse" and not lse.model.violations


def test_thumb_instruction_count():
    # movs r0,#1 (16-bit); ldr.w r1,[r2] (32-bit, 0xF8D2 first); bx lr (16-bit)
    assert thumb_instructions(bytes.fromhex("0120" "d2f80010" "7047")) == 3


# ------------------------------------------------------------------ the images under unicorn

@pytest.fixture(scope="module")
def images(tmp_path_factory):
    """{"new": this tree's image, "old": 3bb8176's port (plus the eb_port_clock the core now calls)}."""
    require_tool("arm-none-eabi-gcc")
    require_module("unicorn")
    require_module("pyocd")
    return load_script("benchmarks/port_registers.py").build_l4r5_images(tmp_path_factory.mktemp("l4r5"))


def _boot(elf, **options):
    info, model, _ = load_script("benchmarks/port_registers.py").boot_info(elf, **options)
    return info, model


@pytest.mark.slow
def test_the_new_image_trims_its_clock_and_reads_its_sensor(images):
    info, model = _boot(images["new"])
    assert (info["clock"], info["clock-ppm"], info["clock-fallback"]) == ("msi-lse", 2500, "none")
    assert info["counter-hz"] == 120_000_000 and info["temp"] == "yes"
    assert not model.violations and model.clock_source() == "pll(msi-lse)"
    info, model = _boot(images["new"], lse_startup_us=None)     # a board without the crystal: reported
    assert (info["clock"], info["clock-fallback"]) == ("msi", "msi-lse") and info["counter-hz"] == 120_000_000


@pytest.mark.slow
def test_the_old_image_fails_in_the_model(images):
    info, model = _boot(images["old"])
    assert info["counter-hz"] == 16_000_000                     # the switch was refused: it fell back to HSI
    assert info["temp"] == "no"                                 # ADEN was ignored: no sensor
    assert any("switch refused" in v for v in model.violations)
    assert any(w == "aden-ignored" for _, w in model.trace)


@pytest.mark.slow
def test_an_emulated_board_records_no_die_temperature(tmp_path, monkeypatch):
    """The image reads its (modelled) sensor, but a run on the emulator stores no temperature from it."""
    require_tool("arm-none-eabi-gcc")
    monkeypatch.setenv("EDGEBENCH_FIRMWARE_BUILD", str(tmp_path))
    require_module("unicorn")
    require_module("pyocd")
    from edgebench.boards.connect import open_client
    from edgebench.boards.registry import get_profile

    client = open_client(get_profile("unicorn-l4r5zi"), timeout_s=30.0)
    try:
        assert client.info["temp"] == "yes" and 20_000 < client.dut.temp_mc() < 30_000   # the model's 25 °C
        thermal = client.thermal()
        assert thermal["available"] is False and thermal["temps_c"] == {}
    finally:
        client.close()
