"""Every register address and bit the STM32 ports use is checked against the vendor SVD (issue 19).

benchmarks/port_registers.py reads the ports' register headers; each define names its source:
an SVD of pyOCD's wheel (checked here: address = peripheral base + register offset, mask = the
field's bits) or a manual section (L4+/F446-only bits, Armv7-M core registers).
"""
from __future__ import annotations

import pytest
from conftest import load_script, require_module


@pytest.mark.slow
def test_every_register_of_the_stm32_ports_is_checked():
    require_module("pyocd")
    mod = load_script("benchmarks/port_registers.py")
    rows = list(mod.rows())
    assert not mod.check(), mod.check()
    names = {r[0].split("/")[0] for r in rows}
    assert {"stm32f4", "nucleo-l4r5zi", "cortex-m"} <= names
    checked = [r for r in rows if r[4] == "ok"]
    assert len(checked) >= 100                      # the SVD-checked ones, not only manual references
    # the bits the issue names: VDDIO2, range-1 boost, the F4's USART2 and the L4's LPUART1
    by_name = {r[1]: r for r in rows}
    assert by_name["PWR_CR2_IOSV"][4] == "ok" and by_name["PWR_CR5_R1MODE"][3].startswith("rm RM0432")
    assert by_name["USART2_SR"][4] == "ok" and by_name["LPUART1_ISR"][4] == "ok"


def test_a_wrong_bit_is_caught(tmp_path, monkeypatch):
    """The check can fail: a header with USART SR.RXNE at bit 6 (it is 5) is reported."""
    require_module("pyocd")
    mod = load_script("benchmarks/port_registers.py")
    bad = tmp_path / "bad" / "bad_regs.h"
    bad.parent.mkdir()
    bad.write_text("#define USART_SR_RXNE (1u << 6) /* svd STM32F41x USART2.SR.RXNE */\n"
                   "#define GPIOA_ODR REG32(0x40020010u) /* svd STM32F41x GPIOA.ODR */\n"
                   "#define SOME_BIT (1u << 3)\n")
    monkeypatch.setattr(mod, "PORTS", tmp_path)
    verdicts = {r[1]: r[4] for r in mod.rows()}
    assert verdicts["USART_SR_RXNE"].startswith("MISMATCH: SVD mask 0x00000020")
    assert verdicts["GPIOA_ODR"].startswith("MISMATCH: SVD address 0x40020014")
    assert verdicts["SOME_BIT"] == "NO SOURCE"
