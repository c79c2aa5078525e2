"""The LPM01A driver against tests/fakes/lpm01a.py over a real pseudo-terminal, with pyserial."""
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from edgebench.power import open_meter
from edgebench.power.base import MeterError
from edgebench.power.lpm01a import Lpm01aMeter, decode_sample, encode_sample
from edgebench.stats.energy import event_energies, idle_power

FAKE = Path(__file__).parent / "fakes" / "lpm01a.py"
IDLE_A, ACTIVE_A, VOLT = 1e-3, 5e-3, 3.3


class FakeInstrument:
    def __init__(self, *args):
        self.proc = subprocess.Popen([sys.executable, str(FAKE), "--max-life-s", "60", *map(str, args)],
                                     stdout=subprocess.PIPE, text=True)
        self.port = self.proc.stdout.readline().strip()
        assert self.port.startswith("/dev/"), self.port

    def close(self):
        self.proc.terminate()
        self.proc.wait(timeout=5)


@pytest.fixture
def fake():
    inst = FakeInstrument("--idle-a", IDLE_A, "--active-a", ACTIVE_A, "--lead-s", 0.2, "--period-s", 0.1,
                          "--window-s", 0.02, "--windows", 5)
    yield inst
    inst.close()


def test_sample_format():
    assert decode_sample("6409-07") == pytest.approx(640.9e-6)
    assert decode_sample("1234+00") == pytest.approx(1234.0)
    for v in (640.9e-6, 3.3e-6, 1.65e-5, 0.1234, 7.0):
        assert decode_sample(encode_sample(v)) == pytest.approx(v, rel=5e-4)


def test_acquires_energy_and_marker_windows_match_the_known_profile(fake):
    m = open_meter("lpm01a", fake.port)
    m.start()
    time.sleep(1.1)
    part = m.read()
    assert len(part) > 500 and part.clock == "meter"
    s = m.stop()
    m.close()
    assert s.complete and s.problem is None, s.problem
    assert s.meta["instrument_version"] == "1.0.7-fake" and s.meta["timestamps"] >= 1
    assert 0 < s.meta["anchor_uncertainty_s"] < 0.5
    n = len(s)
    t_acq = n / 1000.0
    # 1 kHz energy output: sample energy = I x V / f; total = idle everywhere + 5 windows above idle
    expected = IDLE_A * VOLT * t_acq + 5 * (ACTIVE_A - IDLE_A) * VOLT * 0.02
    assert s.energy_j() == pytest.approx(expected, rel=2e-3)
    # marker edges: a pulse at the start and at the end of every window, on the meter clock
    ev = s.events_t_s - s.t_s[0]
    assert len(ev) == 10
    starts, ends = ev[0::2], ev[1::2]
    assert starts == pytest.approx([0.2, 0.3, 0.4, 0.5, 0.6]) and ends - starts == pytest.approx([0.02] * 5)
    idle = idle_power(s.t_s, s.dt_s, s.power_w, [(s.t_s[0] + 0.75, s.t_s[0] + 1.0)])
    assert idle["power_w"] == pytest.approx(IDLE_A * VOLT, rel=1e-3)
    ee = event_energies(s.t_s, s.dt_s, s.power_w, starts + s.t_s[0], ends + s.t_s[0], idle["power_w"], 0.04)
    assert ee.window_j == pytest.approx([ACTIVE_A * VOLT * 0.02] * 5, rel=1e-3)        # 330 µJ
    assert ee.inference_above_idle_j == pytest.approx([(ACTIVE_A - IDLE_A) * VOLT * 0.02] * 5, rel=1e-3)
    assert ee.wake_j == pytest.approx([0] * 5, abs=1e-7)
    info = m.describe()
    assert info.tested_against == "fake of its interface" and info.clock == "meter"
    assert info.boundary == "target-supply" and info.sample_rate_hz == 1000


def test_current_output_mode(fake):
    m = Lpm01aMeter(fake.port, output="current", freq_hz=500, voltage_v=1.8, eventsrc=None)
    m.start()
    time.sleep(0.5)
    s = m.stop()
    m.close()
    assert s.complete and len(s) >= 200 and len(s.events_t_s) == 0
    assert np.unique(np.round(s.current_a, 9)).tolist() == [IDLE_A, ACTIVE_A]
    assert s.power_w.max() == pytest.approx(ACTIVE_A * 1.8)
    assert s.dt_s[0] == pytest.approx(1 / 500)


def test_error_replies_from_the_instrument(fake):
    m = Lpm01aMeter(fake.port)
    m._open()
    m._running.set()
    import threading

    m._thread = threading.Thread(target=m._reader, daemon=True)
    m._thread.start()
    try:
        with pytest.raises(MeterError, match="refused 'volt 3300m': host has not taken control"):
            m.command("volt 3300m")
        assert m.command("htc") == ""
        with pytest.raises(MeterError, match="refused 'freq 3k': frequency not in list"):
            m.command("freq 3k")
        with pytest.raises(MeterError, match="refused 'volt 5000m': voltage out of range"):
            m.command("volt 5000m")
        with pytest.raises(MeterError, match="refused 'warp 9': unknown command"):
            m.command("warp 9")
        m.command("format ascii_dec")
        with pytest.raises(MeterError, match="ascii_dec format limited to 10kHz"):
            m.command("freq 20k")
        assert m.command("volt get") == "get 3300m"
    finally:
        m._shutdown()


def test_arguments_checked_before_talking_to_the_instrument():
    with pytest.raises(MeterError, match="needs its serial port"):
        open_meter("lpm01a")
    with pytest.raises(MeterError, match="not one it offers"):
        Lpm01aMeter("/dev/null", freq_hz=3000)
    with pytest.raises(MeterError, match="above the 10 kHz limit"):
        Lpm01aMeter("/dev/null", freq_hz=50000)
    with pytest.raises(MeterError, match="outside 1.8 V to 3.3 V"):
        Lpm01aMeter("/dev/null", voltage_v=5.0)


def test_stream_stopping_mid_run_is_detected_and_partial_data_kept():
    inst = FakeInstrument("--stall-after-s", 0.5)
    try:
        m = Lpm01aMeter(inst.port, stall_timeout_s=0.5)
        m.start()
        time.sleep(1.3)
        problem = m.health()
        assert problem and "stopped streaming" in problem
        s = m.stop()
        m.close()
    finally:
        inst.close()
    assert not s.complete and "stopped streaming" in s.problem
    assert 300 <= len(s) <= 560  # what arrived in the first half second is kept
    assert np.all(s.power_w > 0)


def test_nothing_answering_on_the_port_is_one_clear_line():
    master, slave = os.openpty()
    try:
        m = Lpm01aMeter(os.ttyname(slave), command_timeout_s=0.5)
        with pytest.raises(MeterError) as e:
            m.start()
        assert "did not answer 'htc' within 0.5 s" in e.value.one_line()
        assert "\n" not in e.value.one_line()
    finally:
        os.close(master)
        os.close(slave)
    with pytest.raises(MeterError, match="cannot open the LPM01A at /dev/nonexistent-tty"):
        Lpm01aMeter("/dev/nonexistent-tty").start()
