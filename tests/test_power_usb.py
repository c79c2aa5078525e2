"""PPK2 and Joulescope against fakes of the package calls they make; the meter registry."""
import sys
import time

import numpy as np
import pytest

from edgebench.errors import UsageError
from edgebench.power import METERS, open_meter, parse_options
from edgebench.power.base import MeterError, PowerMeter
from edgebench.power.usb_meters import JoulescopeMeter, Ppk2Meter


class FakePPK2:
    """The ppk2_api.ppk2_api.PPK2_API calls Ppk2Meter makes; 100 kS/s of a known current."""

    opened = []

    def __init__(self, port, timeout=1, write_timeout=1, exclusive=True):
        self.port, self.calls, self.t0 = port, [], None
        self.sent = 0
        FakePPK2.opened.append(self)

    @staticmethod
    def list_devices():
        return [("/dev/ttyACM7", "C0FFEE")]

    def get_modifiers(self):
        self.calls.append("get_modifiers")

    def set_source_voltage(self, mv):
        self.calls.append(("set_source_voltage", mv))

    def use_source_meter(self):
        self.calls.append("use_source_meter")

    def use_ampere_meter(self):
        self.calls.append("use_ampere_meter")

    def toggle_DUT_power(self, state):
        self.calls.append(("toggle_DUT_power", state))

    def start_measuring(self):
        self.t0 = time.perf_counter()

    def stop_measuring(self):
        self.calls.append("stop_measuring")

    def get_data(self):
        due = int((time.perf_counter() - self.t0) * 100_000)
        n, self.sent = due - self.sent, due
        return bytes(4 * n)

    def get_samples(self, data):
        n = len(data) // 4
        k = self.sent - n + np.arange(n)
        ua = np.where((k // 1000) % 2 == 1, 2000.0, 500.0)   # 10 ms at 500 µA, 10 ms at 2 mA, ...
        digital = ((k // 1000) % 2 == 1).astype(int) << 3      # marker on logic bit 3 while active
        return list(ua), list(digital)


def test_ppk2_streams_current_times_voltage_and_marker_edges():
    m = Ppk2Meter(voltage_v=3.0, marker_bit=3, api_class=FakePPK2)
    m.start()
    time.sleep(0.25)
    s = m.stop()
    m.close()
    api = FakePPK2.opened[-1]
    assert api.port == "/dev/ttyACM7"
    assert api.calls[:4] == ["get_modifiers", ("set_source_voltage", 3000), "use_source_meter",
                             ("toggle_DUT_power", "ON")]
    assert "stop_measuring" in api.calls and ("toggle_DUT_power", "OFF") in api.calls
    assert s.complete, s.problem
    assert set(np.round(s.power_w, 9)) == {0.0015, 0.006}
    assert s.dt_s[0] == pytest.approx(1e-5)
    first = s.t_s[0]
    edges = s.events_t_s - first
    assert edges[:4] == pytest.approx([0.01, 0.02, 0.03, 0.04], abs=2e-5)
    assert s.events_kind[:2] == ["ris", "fal"]
    info = m.describe()
    assert info.tested_against == "fake of its interface" and info.sample_rate_hz == 100_000


def test_ppk2_slow_decoding_is_not_taken_for_dropped_samples():
    """Decoding a chunk on a busy host takes time that is not the instrument's: each chunk is
    stamped when it was read from the device, so a slow decode does not look like lost samples."""
    class SlowDecode(FakePPK2):
        def get_samples(self, data):
            out = super().get_samples(data)
            time.sleep(0.15)                 # a starved reader thread
            return out

    m = Ppk2Meter(voltage_v=3.0, api_class=SlowDecode)
    m.start()
    time.sleep(0.4)
    s = m.stop()
    m.close()
    assert s.complete, s.problem
    assert len(s) > 0.1 * 100_000


def test_ppk2_ampere_mode_says_the_voltage_is_declared():
    m = Ppk2Meter("/dev/ttyACM0", mode="ampere", voltage_v=1.8, api_class=FakePPK2)
    m.start()
    time.sleep(0.05)
    s = m.stop()
    assert "use_ampere_meter" in FakePPK2.opened[-1].calls
    assert s.meta["voltage"].startswith("declared") and "declared" in m.describe().quantity


def test_ppk2_stalled_stream_is_incomplete():
    class Stalling(FakePPK2):
        def get_data(self):
            if time.perf_counter() - self.t0 > 0.1:
                return b""
            return super().get_data()

    m = Ppk2Meter(api_class=Stalling, stall_timeout_s=0.2)
    m.start()
    time.sleep(0.5)
    assert "stopped streaming" in m.health()
    s = m.stop()
    assert not s.complete and len(s) > 1000


class FakeJoulescope:
    """The joulescope calls JoulescopeMeter makes: scan_require_one(), open(), read(), close()."""

    sampling_frequency = 10_000

    def __init__(self):
        self.opened = self.closed = False

    def open(self):
        self.opened = True

    def read(self, contiguous_duration):
        n = int(contiguous_duration * self.sampling_frequency)
        time.sleep(contiguous_duration)
        return np.column_stack([np.full(n, 0.25), np.full(n, 5.0)])

    def close(self):
        self.closed = True


class FakeJoulescopeModule:
    def __init__(self):
        self.device = FakeJoulescope()

    def scan_require_one(self, config):
        assert config == "auto"
        return self.device


def test_joulescope_blocks_and_coverage():
    mod = FakeJoulescopeModule()
    m = JoulescopeMeter(chunk_s=0.05, module=mod)
    m.start()
    time.sleep(0.3)
    s = m.stop()
    m.close()
    assert mod.device.opened and mod.device.closed
    assert s.complete and np.allclose(s.power_w, 1.25) and s.dt_s[0] == pytest.approx(1e-4)
    lo, hi = s.span
    e, covered = s.energy_j(), np.sum(s.dt_s)
    assert e == pytest.approx(1.25 * covered)
    assert covered <= (hi - lo) + 1e-9  # gaps between blocks are not filled in


def test_missing_vendor_packages_name_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ppk2_api", None)
    monkeypatch.setitem(sys.modules, "ppk2_api.ppk2_api", None)
    monkeypatch.setitem(sys.modules, "joulescope", None)
    for name, pkg in (("ppk2", "ppk2-api"), ("joulescope", "joulescope")):
        with pytest.raises(MeterError) as e:
            open_meter(name).start()
        assert f"pip install {pkg}" in e.value.one_line()


def test_registry_and_options():
    assert set(METERS) == {"rapl", "hwmon", "ina219", "ina226", "ina260", "vcgencmd", "ppk2", "joulescope", "lpm01a"}
    with pytest.raises(UsageError, match="unknown power meter 'ina999'") as e:
        open_meter("ina999")
    assert "lpm01a" in e.value.one_line()
    with pytest.raises(UsageError, match="has no option shunt_mohm"):
        open_meter("ina226", "1:0x40", {"shunt_mohm": 100})
    with pytest.raises(UsageError, match="unknown measurement boundary"):
        open_meter("rapl", boundary="everything")
    assert parse_options(["shunt_ohm=0.1", "rate_hz=200", "power_on=false", "eventsrc=d7 fal"]) == \
        {"shunt_ohm": 0.1, "rate_hz": 200, "power_on": False, "eventsrc": "d7 fal"}
    with pytest.raises(UsageError, match="not KEY=VALUE"):
        parse_options(["shunt"])
    m = open_meter("ina226", "1:0x40", {"shunt_ohm": 0.1, "max_current_a": 1.0}, boundary="board+accelerator")
    assert isinstance(m, PowerMeter) and m.describe().boundary == "board+accelerator"
