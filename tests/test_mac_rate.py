"""Instructions / cycles per MAC beside a microcontroller's latency (edgebench.bench.mac_rate)."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import DIGITS_INT8

from edgebench.bench.mac_rate import attach, mac_rate
from edgebench.bench.record import new_result
from edgebench.boards.registry import get_profile
from edgebench.cli.render.mac_rate import mac_rate_line
from edgebench.runtime.inspect import inspect_model

ROOT = Path(__file__).resolve().parents[1]


def _latency(median, lo=None, hi=None):
    return {"e2e": {"median_s": median, "ci_low_s": lo, "ci_high_s": hi}}


def _run(median=None, counter_hz=None, mlperf=None):
    """A bench run with an e2e median (and the device's counter-hz, or an MLPerf Tiny figure)."""
    r = new_result("bench")
    if median is not None:
        r.latency = _latency(median)
    if counter_hz is not None:
        r.board.system.firmware = {"counter-hz": counter_hz}
    if mlperf is not None:
        r.extra.mlperf = mlperf
    return r


def test_emulated_board_counts_instructions_from_the_icount_shift():
    macs = inspect_model(DIGITS_INT8).macs
    assert macs == 177_984
    f = mac_rate(_latency(0.001, 0.00099, 0.00101), get_profile("qemu-m4"), DIGITS_INT8)
    assert f["available"] and f["unit"] == "instructions" and f["label"] == "emulated"
    assert f["per_inference"] == pytest.approx(1_000_000)            # 1 ms at 1 instruction per ns
    assert f["per_mac"] == pytest.approx(1e6 / macs)
    assert f["per_mac_ci"] == pytest.approx([990_000 / macs, 1_010_000 / macs])
    # shift 2: each instruction is 4 ns of virtual time
    board = SimpleNamespace(name="q", kind="mcu", client_kind="mcu", datasheet=None,
                            firmware=SimpleNamespace(emulator="qemu", icount_shift=2))
    assert mac_rate(_latency(0.001), board, DIGITS_INT8)["per_mac"] == pytest.approx(250_000 / macs)


def test_real_board_gives_estimated_cycles_from_the_datasheet_clock():
    nucleo = get_profile("nucleo-l4r5zi")            # Cortex-M4F, 120 MHz; counter-hz not recorded
    f = mac_rate(_latency(0.002), nucleo, DIGITS_INT8)
    assert f["unit"] == "cycles" and f["label"] == "estimated"
    assert f["per_inference"] == pytest.approx(240_000)
    assert f["per_mac_ci"] is None
    assert "120 MHz" in f["basis"]


def test_a_cycle_counter_gives_measured_cycles():
    """The STM32 ports time with the DWT: median x the device's counter-hz is the cycles it counted
    (a port whose PLL did not lock reports 16 MHz, and the figure follows the device, not the datasheet)."""
    nucleo = get_profile("nucleo-f446re")            # firmware.counter: cycles; datasheet 180 MHz
    f = mac_rate(_latency(0.002), nucleo, DIGITS_INT8, counter_hz=180_000_000)
    assert f["unit"] == "cycles" and f["label"] == "measured"
    assert f["per_inference"] == pytest.approx(360_000) and "cycle counter" in f["basis"]
    slow = mac_rate(_latency(0.002), nucleo, DIGITS_INT8, counter_hz=16_000_000)
    assert slow["per_inference"] == pytest.approx(32_000) and slow["label"] == "measured"
    assert mac_rate(_latency(0.002), nucleo, DIGITS_INT8)["label"] == "estimated"     # counter-hz not recorded
    result = _run(0.002, counter_hz=180_000_000)
    assert attach(result, nucleo, DIGITS_INT8).label == "measured"


def test_no_figure_without_a_meaningful_clock():
    assert not mac_rate(_latency(0.001), get_profile("posix-sim"), DIGITS_INT8)["available"]
    no_clock = SimpleNamespace(name="x", kind="mcu", client_kind="mcu", datasheet=None,
                               firmware=SimpleNamespace(emulator=None))
    f = mac_rate(_latency(0.001), no_clock, DIGITS_INT8)
    assert not f["available"] and "cpu_max_freq_hz" in f["reason"]
    assert not mac_rate({}, get_profile("qemu-m4"), DIGITS_INT8)["available"]
    # a Linux board gets no figure at all
    result = _run(0.001)
    assert attach(result, get_profile("host"), DIGITS_INT8) is None and not result.extra.mac_rate


def test_attach_keeps_the_figure_and_the_line_shows_it(tmp_path):
    result = _run(0.001)
    f = attach(result, get_profile("qemu-m7"), DIGITS_INT8)
    assert result.extra.mac_rate is f and f.available
    line = mac_rate_line(result)
    assert line.startswith(f"instructions per MAC: {f.per_mac:.3f}") and "emulated" in line
    bad = _run(0.001)
    attach(bad, get_profile("qemu-m4"), tmp_path / "missing.tflite")
    assert not bad.extra.mac_rate.available and "not counted" in bad.extra.mac_rate.reason
    assert mac_rate_line(bad).startswith("per MAC: not reported")
    assert mac_rate_line(new_result("bench")) is None


@pytest.mark.slow
def test_bench_on_qemu_reports_instructions_per_mac(tmp_path, capsys):
    """`bench --board qemu-m4`: run.json, --json and the human output carry the figure."""
    from conftest import require_tool
    from fw_util import run_main

    from edgebench.results import store

    require_tool("arm-none-eabi-gcc")
    require_tool("qemu-system-arm")
    args = ("bench", DIGITS_INT8, "--board", "qemu-m4", "--runs-dir", tmp_path, "--min-samples", "20",
            "--min-time", "0.2", "--max-time", "2", "--repeat", "1", "--max-repeats", "1", "--sessions", "1")
    code, out, err = run_main(capsys, *args, "--json")
    assert code == 0, err
    f = json.loads(out)["extra"]["mac_rate"]
    assert f["available"] and f["label"] == "emulated" and f["unit"] == "instructions"
    assert 0.5 < f["per_mac"] < 10 and f["macs"] == 177_984
    stored = json.loads((store.find_runs(tmp_path)[0] / "run.json").read_text())
    assert stored["extra"]["mac_rate"]["per_mac"] == pytest.approx(f["per_mac"])
    code, out, err = run_main(capsys, *args)
    assert code == 0, err
    assert "instructions per MAC:" in out and "emulated" in out


def test_the_library_bench_attaches_the_figure(fw, tmp_path):
    """run_bench itself (not only the command line) keeps extra.mac_rate on an MCU board: the posix
    build's host time is no core's clock, and the run says so."""
    from edgebench.bench.latency import BenchOptions, run_bench

    result, run_dir = run_bench(DIGITS_INT8, get_profile("posix-sim"),
                                BenchOptions(min_samples=20, min_time_s=0.1, max_time_s=1.0, repeat=1,
                                             max_repeats=1, sessions=1), runs_root=tmp_path, url=fw)
    f = result.extra.mac_rate
    assert f.available is False and "posix build runs on this computer" in f.reason
    assert json.loads((run_dir / "run.json").read_text())["extra"]["mac_rate"] == f.to_dict()


def test_mlperf_run_gets_the_figure_from_its_mean_latency():
    from edgebench.bench.mac_rate import attach_mlperf

    result = _run(mlperf={"latency_s": 0.002})
    f = attach_mlperf(result, get_profile("qemu-m4"), DIGITS_INT8)
    assert f.available and f.per_inference == pytest.approx(2_000_000) and f.stage.startswith("mlperf")
    assert attach_mlperf(_run(), get_profile("qemu-m4"), DIGITS_INT8) is None
    assert "(mean: 1 / median throughput)" in mac_rate_line(result)
