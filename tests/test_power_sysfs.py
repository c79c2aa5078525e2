"""RAPL powercap and hwmon readers against fake sysfs trees with the real file names and units."""
import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from edgebench.power import open_meter
from edgebench.power.base import MeterError, Samples
from edgebench.power.sysfs import HwmonMeter, RaplMeter, find_hwmon


def write(path, value):
    """Replace a sysfs-like file atomically (sysfs reads never see a half-written value)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(f"{value}\n")
    os.replace(tmp, path)


@pytest.fixture
def rapl(tmp_path):
    zone = tmp_path / "intel-rapl:0"
    zone.mkdir()
    (zone / "name").write_text("package-0\n")
    write(zone / "max_energy_range_uj", 10_000)
    write(zone / "energy_uj", 1_000)
    return zone


def test_rapl_unwraps_the_counter_with_max_energy_range(rapl):
    m = RaplMeter(zone=str(rapl))
    m._open()
    readings = []
    for value in (1_000, 5_000, 2_000, 9_000, 500):  # wraps after 5_000 and after 9_000
        write(rapl / "energy_uj", value)
        readings.append(m._poll()[1])
    # deltas: 4000, 2000+10000-5000=7000, 7000, 500+10000-9000=1500  (µJ)
    assert readings == pytest.approx([0.0, 0.004, 0.011, 0.018, 0.0195])
    assert m._wraps == 2
    rows = [(float(i), ("energy", e)) for i, e in enumerate(readings)]
    s = m._build(rows, first=True)
    assert s.t_s.tolist() == [0.0, 1.0, 2.0, 3.0] and s.dt_s.tolist() == [1.0] * 4
    assert s.power_w == pytest.approx([0.004, 0.007, 0.007, 0.0015])
    assert s.energy_j() == pytest.approx(0.0195)


def test_rapl_live_polling_integrates_a_known_power(rapl):
    stop = threading.Event()
    t0 = time.perf_counter()

    write(rapl / "max_energy_range_uj", 100_000)

    def counter():  # a 2.5 W package: the counter wraps every 40 ms, four times the 10 ms poll period
        while not stop.is_set():
            uj = int((time.perf_counter() - t0) * 2.5e6)
            write(rapl / "energy_uj", uj % 100_000)
            time.sleep(0.0005)

    th = threading.Thread(target=counter, daemon=True)
    th.start()
    m = RaplMeter(zone=str(rapl), rate_hz=100)
    try:
        m.start()
        time.sleep(0.6)
        part = m.read()
        assert isinstance(part, Samples) and len(part) > 10
        time.sleep(0.3)
        s = m.stop()
    finally:
        stop.set()
        th.join()
        m.close()
    assert s.complete and s.problem is None and s.clock == "host"
    a, b = s.span
    assert m._wraps >= 15  # ~0.9 s / 40 ms
    assert s.energy_j() / (b - a) == pytest.approx(2.5, rel=0.05)
    info = m.describe()
    assert info.boundary == "soc" and info.tested_against == "fake of its interface"
    assert info.label == "measured" and info.reads == "this computer's own power"


def test_rapl_zone_name_sets_the_boundary(tmp_path):
    zone = tmp_path / "intel-rapl:0:2"
    zone.mkdir()
    (zone / "name").write_text("dram\n")
    assert RaplMeter(zone=str(zone)).describe().boundary == "dram"


def test_absent_rapl_is_one_clear_line(tmp_path):
    m = open_meter("rapl", str(tmp_path / "intel-rapl:7"))
    with pytest.raises(MeterError) as e:
        m.start()
    line = e.value.one_line()
    assert "no RAPL powercap zone" in line and "modprobe intel_rapl_msr" in line and "\n" not in line


def test_unreadable_energy_counter_names_the_fix(rapl, monkeypatch):
    # Linux >= 5.10 makes energy_uj root-only; tests run as root (which reads any mode),
    # so the kernel's EACCES is raised where the reader opens the counter.
    real = Path.read_text

    def read_text(self, *a, **k):
        if self.name == "energy_uj":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *a, **k)

    monkeypatch.setattr(Path, "read_text", read_text)
    with pytest.raises(MeterError) as e:
        RaplMeter(zone=str(rapl)).start()
    assert "not readable by this user" in e.value.one_line() and "sudo chmod o+r" in e.value.one_line()


@pytest.fixture
def hwmon(tmp_path):
    root = tmp_path / "hwmon"
    other = root / "hwmon0"
    other.mkdir(parents=True)
    (other / "name").write_text("coretemp\n")
    (other / "temp1_input").write_text("45000\n")
    d = root / "hwmon3"
    d.mkdir()
    (d / "name").write_text("ina226\n")
    write(d / "in0_input", 15)           # shunt voltage, mV
    write(d / "in1_input", 5_000)        # bus voltage, mV
    write(d / "curr1_input", 1_500)      # mA
    write(d / "power1_input", 7_500_000)  # µW
    write(d / "update_interval", 2)      # ms
    return root


def test_hwmon_units_and_ina2xx_channels(hwmon):
    assert find_hwmon("ina226", str(hwmon)).name == "hwmon3"
    assert find_hwmon(None, str(hwmon)).name == "hwmon3"  # first with a power/current input
    m = HwmonMeter("ina226", root=str(hwmon))
    m._open()
    kind, power, current, volt = m._poll()
    assert (kind, power, current, volt) == ("power", pytest.approx(7.5), pytest.approx(1.5), pytest.approx(5.0))
    info = m.describe()
    assert info.sample_rate_hz == pytest.approx(min(HwmonMeter.rate_hz, 500.0))
    assert info.details["update_interval_s"] == pytest.approx(0.002)
    assert info.boundary == "board" and info.tested_against == "fake of its interface"


def test_hwmon_without_power_input_multiplies_current_and_voltage(hwmon):
    (hwmon / "hwmon3" / "power1_input").unlink()
    m = HwmonMeter(str(hwmon / "hwmon3"), boundary="board+accelerator")
    m._open()
    assert m._poll()[1] == pytest.approx(1.5 * 5.0)
    assert "current x voltage" in m.describe().quantity
    assert m.describe().boundary == "board+accelerator"


def test_hwmon_live_polling(hwmon):
    m = HwmonMeter("ina226", root=str(hwmon), rate_hz=200)
    m.start()
    time.sleep(0.2)
    s = m.stop()
    assert len(s) >= 10 and np.all(s.power_w == 7.5)
    assert np.allclose(s.current_a, 1.5) and np.allclose(s.voltage_v, 5.0)
    assert s.complete


def test_hwmon_absent_or_without_inputs(hwmon, tmp_path):
    with pytest.raises(MeterError, match="no hwmon device named 'ina219'.*found: hwmon0=coretemp, hwmon3=ina226"):
        HwmonMeter("ina219", root=str(hwmon)).start()
    with pytest.raises(MeterError, match="has neither power1_input nor curr1_input"):
        HwmonMeter("coretemp", root=str(hwmon)).start()
    with pytest.raises(MeterError, match="no hwmon device"):
        HwmonMeter(root=str(tmp_path / "nothing")).start()


def test_a_meter_that_stops_answering_is_incomplete_with_partial_data(hwmon):
    m = HwmonMeter("ina226", root=str(hwmon), rate_hz=100)
    m.start()
    time.sleep(0.15)
    (hwmon / "hwmon3" / "power1_input").unlink()  # the device vanished (driver unbound)
    time.sleep(0.1)
    assert "does not exist" in (m.health() or "")
    s = m.stop()
    assert not s.complete and "power1_input does not exist" in s.problem
    assert len(s) >= 5  # what was read before is kept
