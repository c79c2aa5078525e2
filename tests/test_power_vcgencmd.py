"""Raspberry Pi 5 `vcgencmd pmic_read_adc` parsing on a realistic multi-rail output."""
import time

import pytest

from edgebench.power import open_meter
from edgebench.power.base import MeterError
from edgebench.power.vcgencmd import VcgencmdPmicMeter, parse_pmic_adc, total_power

# The layout of `vcgencmd pmic_read_adc` on a Raspberry Pi 5: right-aligned rail names,
# currents on channels 0-7/16-18/22, voltages on 8-15/19-21/23-25, rails without a current.
PI5_OUTPUT = """\
   3V7_WL_SW_A current(0)=0.00000000A
     3V3_SYS_A current(1)=0.05172900A
     1V8_SYS_A current(2)=0.16197100A
    DDR_VDD2_A current(3)=0.02049600A
    DDR_VDDQ_A current(4)=0.00000000A
     1V1_SYS_A current(5)=0.18446100A
      0V8_SW_A current(6)=0.36021300A
    VDD_CORE_A current(7)=2.34567000A
     3V3_DAC_A current(17)=0.00009760A
     3V3_ADC_A current(18)=0.00024400A
     0V8_AON_A current(16)=0.00463600A
        HDMI_A current(22)=0.02040000A
   3V7_WL_SW_V volt(8)=3.71179800V
     3V3_SYS_V volt(9)=3.30746400V
     1V8_SYS_V volt(10)=1.79795400V
    DDR_VDD2_V volt(11)=1.11098400V
    DDR_VDDQ_V volt(12)=0.60561100V
     1V1_SYS_V volt(13)=1.10512800V
      0V8_SW_V volt(14)=0.80268600V
    VDD_CORE_V volt(15)=0.82345000V
     3V3_DAC_V volt(20)=3.30403700V
     3V3_ADC_V volt(21)=3.30586800V
     0V8_AON_V volt(19)=0.80280800V
        HDMI_V volt(23)=5.14764000V
       EXT5V_V volt(24)=5.14764000V
        BATT_V volt(25)=0.00000000V
"""


def test_parses_and_pairs_every_rail():
    rails = parse_pmic_adc(PI5_OUTPUT)
    assert len(rails) == 14
    core = rails["VDD_CORE"]
    assert core["current_a"] == pytest.approx(2.34567) and core["voltage_v"] == pytest.approx(0.82345)
    assert core["power_w"] == pytest.approx(2.34567 * 0.82345)
    assert rails["EXT5V"] == {"current_a": None, "voltage_v": pytest.approx(5.14764), "power_w": None}
    assert rails["BATT"]["power_w"] is None
    expected = sum(i * v for i, v in [
        (0.0, 3.711798), (0.051729, 3.307464), (0.161971, 1.797954), (0.020496, 1.110984), (0.0, 0.605611),
        (0.184461, 1.105128), (0.360213, 0.802686), (2.34567, 0.82345), (0.0000976, 3.304037),
        (0.000244, 3.305868), (0.004636, 0.802808), (0.0204, 5.14764)])
    assert total_power(rails) == pytest.approx(expected)


def test_ignores_noise_and_other_lines():
    text = "garbage\n VDD_CORE_A current(7)=1.0A\n VDD_CORE_V volt(15)=0.8V\n VDD_CORE_V temp(3)=40C\n"
    assert total_power(parse_pmic_adc(text)) == pytest.approx(0.8)


def test_meter_polls_the_command_and_sums_rails():
    calls = []

    def runner():
        calls.append(time.perf_counter())
        return PI5_OUTPUT

    m = VcgencmdPmicMeter(runner=runner, rate_hz=50)
    m.start()
    time.sleep(0.15)
    s = m.stop()
    assert len(calls) >= 5 and len(s) >= 5
    assert s.power_w == pytest.approx([total_power(parse_pmic_adc(PI5_OUTPUT))] * len(s))
    info = m.describe()
    assert info.boundary == "pmic-rails" and "VDD_CORE" in info.details["rails"]
    assert info.tested_against == "fake of its interface" and info.reads == "this computer's own power"


def test_not_a_pi5_is_one_clear_line():
    m = VcgencmdPmicMeter(runner=lambda: "error=1 error_msg=\"Command not registered\"\n")
    with pytest.raises(MeterError, match="no rail with both current and voltage"):
        m.start()
    with pytest.raises(MeterError) as e:
        open_meter("vcgencmd", "/nonexistent/vcgencmd").start()
    assert "needs Raspberry Pi OS on a Raspberry Pi 5" in e.value.one_line()
