"""``edgebench selftest --board B``: the first run on a newly flashed microcontroller (level 4).

Checks, in order, what a wrong port or a wrong clock tree would break first, and stores them as
one run (kind ``selftest``) a user can attach to a bug report:

1. **protocol**: the firmware answers ``name``/``eb-sync``/``eb-info`` (framed, CRC-checked),
   speaks this host's protocol, and its counter claims a frequency; the core clock it reports
   is compared with the profile's datasheet clock (a port that could not confirm its PLL runs
   on its reset clock and says so in ``counter-hz``);
2. **clock**: the device's ``timestamp`` (µs from its counter) against the host's monotonic
   clock over at least ``clock_s`` (10 s): each reading is bracketed by the host times the
   request was sent and its answer read, so the rate's interval is a bound, not a statistical
   estimate (``clock_rate``); a wrong clock tree shows up as a rate error of percents;
   **clock source**: the oscillator the port runs from (``eb-info`` clock, clock-ppm,
   clock-fallback) against the MLPerf dialect's 0.1 % (:data:`edgebench.mcu.dialect.CLOCK_TOLERANCE`):
   a crystal (HSE bypass) passes, an internal RC oscillator (HSI, MSI, even LSE-trimmed MSI at
   ±0.25 %) warns and fails when the measured rate is outside 0.1 %, a fallback (the crystal did
   not start) is named;
3. **bit-exact**: the bundled models through the board and through LiteRT's reference kernels
   on this computer (:func:`edgebench.bench.verify.run_verify`);
4. **cycles per MAC**: the device-timed median of the bundled model (``edgebench.bench.mac_rate``),
   not on a board whose emulator keeps no time.

The run's label is the board's (``measured``, or ``emulated`` under an emulator); on an emulated
board the clock figure is the emulator's virtual clock and carries no verdict.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Optional

import numpy as np

from edgebench.bench.mac_rate import mac_rate
from edgebench.bench.record import Label, RunFolder, new_result
from edgebench.bench.verify import VerifyOptions, run_verify
from edgebench.boards.connect import open_client
from edgebench.boards.profile import MCU_CLIENT
from edgebench.data.bundled import bundled_model
from edgebench.data.inputs import random_inputs
from edgebench.errors import UsageError
from edgebench.mcu.board import FIRMWARE_NAME
from edgebench.mcu.dialect import CLOCK_TOLERANCE as MLPERF_TOLERANCE
from edgebench.mcu.protocol import clock_of
from edgebench.modelfile import read_model
from edgebench.results.conditions import BoardSection, ModelSection, RuntimeSection
from edgebench.results.figures.selftest import SelftestFigure
from edgebench.results.model import RunResult, RunWarning

Progress = Callable[[dict], None]
#: the device clock's rate may differ from the host's by this much before the check fails: an
#: STM32's internal RC oscillator is trimmed to +-1 % at 25 C (datasheets), a crystal to 50 ppm
CLOCK_TOLERANCE = 0.02
MIN_CLOCK_S = 10.0
BUNDLED = ("digits_int8",)
PASS, FAIL, WARN, SKIP = "pass", "fail", "warn", "skip"


@dataclass
class SelftestOptions:
    clock_s: float = MIN_CLOCK_S
    count: int = 8              # inputs per bundled model in the bit-exact check
    timed: int = 64             # device-timed inferences for cycles per MAC

    def validate(self) -> None:
        if self.clock_s < MIN_CLOCK_S:
            raise UsageError(f"--clock-seconds must be at least {MIN_CLOCK_S:g} (a shorter window cannot show a "
                             f"clock error), got {self.clock_s:g}")
        if self.count < 1 or self.timed < 1:
            raise UsageError("--count must be at least 1")


@dataclass
class SelftestResult:
    board: dict
    label: Label
    checks: list                     # {"name", "status", "summary", ...}
    clock: dict
    firmware: dict
    run_id: Optional[str] = None
    run_dir: Optional[str] = None
    notes: list = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(c["status"] == FAIL for c in self.checks)

    def to_dict(self) -> dict:
        return {**asdict(self), "failed": self.failed}

    @classmethod
    def from_run(cls, result: RunResult, run_dir=None) -> "SelftestResult":
        """The result a stored ``selftest`` run holds (``edgebench runs ID`` shows it again), its
        sections as the plain dicts ``selftest --json`` prints."""
        st = result.extra.selftest
        return cls(board=result.board.to_dict(), label=result.label,
                   checks=[c.to_dict() for c in st.checks or []], clock=dict(st.clock or {}),
                   firmware=dict(st.firmware or {}), run_id=result.run_id,
                   run_dir=None if run_dir is None else str(run_dir), notes=list(st.notes or []))


def clock_rate(readings) -> dict:
    """The device clock's rate against the host's from ``readings`` of (host send ns, host
    receive ns, device µs): the device read its counter somewhere between send and receive, so
    between the earliest and the latest reading the device advanced Δd while the host advanced
    between (recv_first → send_last) and (send_first → recv_last). Of the first and of the last three
    readings the one with the shortest round trip is used. ``rate_error`` is device/host − 1; ``interval`` bounds it."""
    if len(readings) < 4:
        raise UsageError("the clock check needs at least 4 timestamps")
    k = min(3, len(readings) // 2)
    first = min(readings[:k], key=lambda r: r[1] - r[0])
    last = min(readings[-k:], key=lambda r: r[1] - r[0])
    dev_s = (last[2] - first[2]) / 1e6
    wide_s, narrow_s = (last[1] - first[0]) / 1e9, (last[0] - first[1]) / 1e9
    if dev_s <= 0 or narrow_s <= 0:
        raise UsageError("the device's timestamps did not advance over the clock check",
                         "is the counter running? (eb-info counter-hz)")
    resolution_s = 2e-6            # one µs of the device's figure at each end
    lo, hi = (dev_s - resolution_s) / wide_s - 1, (dev_s + resolution_s) / narrow_s - 1
    mid = (first[0] + first[1]) / 2, (last[0] + last[1]) / 2
    return {"rate_error": dev_s / ((mid[1] - mid[0]) / 1e9) - 1, "interval": [lo, hi], "device_s": dev_s,
            "host_s": (mid[1] - mid[0]) / 1e9, "readings": len(readings),
            "round_trip_ms": [(first[1] - first[0]) / 1e6, (last[1] - last[0]) / 1e6],
            "method": "device timestamps bracketed by the host's send and receive times (a bound, not a "
                      "statistical interval); the fastest round trip of the first and of the last three readings"}


def read_clock(dut, seconds: float, progress: Progress, every_s: float = 0.25) -> list:
    """(host send ns, host receive ns, device µs) every ``every_s`` for ``seconds`` (``timestamp%``,
    framed so a damaged answer is never read as a time)."""
    readings = []
    while True:
        t0 = time.monotonic_ns()
        reply = dut.request("timestamp", end=("m-lap-us-",))
        t1 = time.monotonic_ns()
        lap = reply.first("m-lap-us-")
        if lap is None:
            raise UsageError(f"{dut.description}: timestamp gave no m-lap-us line",
                             "is the firmware built for energy mode? selftest needs performance mode")
        readings.append((t0, t1, int(lap[len("m-lap-us-"):])))
        # done when any reading clock_rate may pick at the end lies >= seconds after any it may pick
        # at the start (the first and the last three)
        span_s = (readings[-3][0] - readings[2][1]) / 1e9 if len(readings) >= 6 else 0.0
        if span_s >= seconds:
            return readings
        progress({"event": "clock", "elapsed_s": (t1 - readings[0][0]) / 1e9, "of_s": seconds})
        time.sleep(every_s)


def run_selftest(profile, opts: SelftestOptions, url: Optional[str] = None, runs_root=None,
                 progress: Optional[Progress] = None, image=None) -> SelftestResult:
    """Run the checks on ``profile``'s board (an emulated one started with firmware ``image`` if
    given); with ``runs_root``, store them as one ``selftest`` run there."""
    opts.validate()
    emit = progress or (lambda event: None)
    if profile.client_kind != MCU_CLIENT:
        raise UsageError(f"selftest checks a microcontroller's firmware; board {profile.name} is a "
                         f"{profile.kind} board", "pick an MCU board (edgebench boards)")
    emit({"event": "connect", "board": profile.name})
    client = open_client(profile, url, image=image)
    checks: list = []
    clock: dict = {}
    readings: list = []
    try:
        hello = client.hello()
        if hello.get("dialect") != "edgebench":
            raise UsageError(f"board {profile.name} runs firmware without the edgebench extensions",
                             f"flash edgebench's: edgebench flash --board {profile.name}")
        info = dict(client.info)
        label: Label = "emulated" if hello.get("timing") == "emulated" else "measured"
        checks.append(_protocol_check(info, client))
        checks.append(_core_clock_check(profile, info, label))
        emit({"event": "clock", "elapsed_s": 0.0, "of_s": opts.clock_s})
        readings = read_clock(client.dut, opts.clock_s, emit)
        clock = clock_rate(readings)
        checks.append(_clock_check(clock, label))
        checks.append(_clock_source_check(info, clock, label))
        for name in BUNDLED:
            checks.append(_bit_exact_check(name, profile, client, opts, emit))
        checks.append(_mac_check(profile, client, opts, emit))
        link = client.link_report()
    finally:
        client.close()
    result = SelftestResult(board={"name": profile.name, "title": profile.title, "transport": client.description},
                            label=label, checks=checks, clock=clock, firmware=info,
                            notes=[] if label == "measured" else [
                                "emulated board: the clock figure is the emulator's virtual clock against the "
                                "host's, and instruction counts are not a real core's cycles"])
    if runs_root is not None:
        _store(result, runs_root, readings, link)
    return result


def _protocol_check(info: dict, client) -> dict:
    return {"name": "protocol", "status": PASS,
            "summary": f"{info.get('port')} firmware, engine {info.get('engine')}, protocol {info.get('proto')}, "
                       f"framed replies CRC-checked ({client.link_report().get('requests', 0)} requests)"}


def _core_clock_check(profile, info: dict, label: str) -> dict:
    hz = int(info["counter-hz"])
    want = getattr(getattr(profile, "datasheet", None), "cpu_max_freq_hz", None)
    if label != "measured" or not want:
        return {"name": "core clock", "status": SKIP, "counter_hz": hz,
                "summary": f"counter at {hz:,} Hz; " + ("emulated board" if label != "measured"
                                                        else "the profile gives no datasheet clock")}
    if hz == int(want):
        return {"name": "core clock", "status": PASS, "counter_hz": hz,
                "summary": f"the counter runs at the datasheet's {hz / 1e6:g} MHz"}
    return {"name": "core clock", "status": WARN, "counter_hz": hz,
            "summary": f"the counter runs at {hz / 1e6:g} MHz, the datasheet clock is {want / 1e6:g} MHz: a port "
                       "that could not confirm its PLL stays on its reset clock (or the port times with "
                       "another counter)"}


def _clock_check(clock: dict, label: str) -> dict:
    lo, hi = clock["interval"]
    text = (f"device clock {clock['rate_error'] * 1e6:+,.0f} ppm against the host's "
            f"[bound {lo * 1e6:+,.0f} … {hi * 1e6:+,.0f} ppm] over {clock['host_s']:.1f} s")
    if label != "measured":
        return {"name": "clock", "status": SKIP, "summary": text + " (emulated: no verdict)"}
    if -CLOCK_TOLERANCE <= lo and hi <= CLOCK_TOLERANCE:
        return {"name": "clock", "status": PASS, "summary": text + f", within ±{CLOCK_TOLERANCE:.0%}"}
    if hi < -CLOCK_TOLERANCE or lo > CLOCK_TOLERANCE:
        return {"name": "clock", "status": FAIL, "summary": text + f": outside ±{CLOCK_TOLERANCE:.0%} — the "
                "clock tree is not what the port's counter-hz says"}
    return {"name": "clock", "status": WARN, "summary": text + ": the bound is too wide to decide (a slow link?)"}


def _clock_source_check(info: dict, clock: dict, label: str) -> dict:
    src = clock_of(info)
    if src is None:
        return {"name": "clock source", "status": WARN if label == "measured" else SKIP, "clock": None,
                "summary": "the firmware does not report its clock source (eb-info clock): rebuild it "
                           "(edgebench flash) to know what every seconds figure rests on"}
    text = f"{src['source']}" + (f", ±{src['ppm']:,} ppm documented" if src["ppm"] else "")
    if src["fallback"]:
        text += f" (the port wanted {src['fallback']}: it did not start)"
    if label != "measured" or src["virtual"]:
        return {"name": "clock source", "status": SKIP, "clock": src, "summary": text + " (no oscillator: no verdict)"}
    limit = MLPERF_TOLERANCE * 1e6
    lo, hi = clock.get("interval") or (None, None)
    measured_in = lo is not None and hi is not None and -MLPERF_TOLERANCE <= lo and hi <= MLPERF_TOLERANCE
    measured_out = lo is not None and hi is not None and (hi < -MLPERF_TOLERANCE or lo > MLPERF_TOLERANCE)
    if src["ppm"] and src["ppm"] <= limit and not src["fallback"] and not measured_out:
        return {"name": "clock source", "status": PASS, "clock": src,
                "summary": text + f": within the MLPerf dialect's ±{MLPERF_TOLERANCE:.1%}"}
    if measured_out:
        return {"name": "clock source", "status": FAIL, "clock": src,
                "summary": text + f": the measured rate is outside the MLPerf dialect's ±{MLPERF_TOLERANCE:.1%}"}
    return {"name": "clock source", "status": WARN, "clock": src,
            "summary": text + f": this oscillator's bound exceeds the MLPerf dialect's ±{MLPERF_TOLERANCE:.1%}, "
                              "which it cannot hold over a soak" + (
                                  " (this measurement was within it)" if measured_in else "")}


def _bit_exact_check(name, profile, client, opts, emit) -> dict:
    emit({"event": "verify", "model": name})
    v = run_verify(bundled_model(name), profile, VerifyOptions(count=opts.count), client=client)
    diff = sum(o["differing_bytes"] for o in v.outputs)
    return {"name": f"bit-exact {name}", "status": PASS if v.bit_exact else FAIL, "differing_bytes": diff,
            "summary": f"{v.inputs.get('count', opts.count)} inputs: " + (
                "bit-exact with LiteRT's reference kernels" if v.bit_exact else
                f"{diff} output bytes differ from LiteRT's reference kernels")}


def _mac_check(profile, client, opts, emit) -> dict:
    session = getattr(client, "session", None)
    if session is not None and not session.keeps_time:
        return {"name": "cycles per MAC", "status": SKIP, "summary": f"{session.describe()} keeps no time"}
    path = bundled_model(BUNDLED[0])
    model = read_model(path)
    emit({"event": "timed", "model": model.name, "n": opts.timed})
    sha = client.ensure_model(model)
    client.load(sha, kernels="reference", threads=1, name=model.name)
    client.set_inputs(random_inputs(model.inputs[0].to_dict(), count=8, seed=0).x)
    _, arrays = client.run("single-stream", count=opts.timed, max_time_s=60.0)
    e2e = np.asarray(arrays["e2e_ns"], dtype=np.float64) / 1e9
    rate = mac_rate({"e2e": {"median_s": float(np.median(e2e))}}, profile, path,
                    counter_hz=int(client.info["counter-hz"]))
    if not rate.get("available"):
        return {"name": "cycles per MAC", "status": SKIP, "summary": rate.get("reason", "not available")}
    per = rate["per_inference"] / float(np.median(e2e))
    span = [float(e2e.min()) * per / rate["macs"], float(e2e.max()) * per / rate["macs"]]
    return {"name": f"{rate['unit']} per MAC", "status": PASS, "mac_rate": {**rate, "per_mac_range": span},
            "summary": f"{rate['per_mac']:.3f} {rate['unit']} per MAC ({rate['label']}), {model.name}, median of "
                       f"{len(e2e)} inferences (range {span[0]:.3f}–{span[1]:.3f})"}


def _store(result: SelftestResult, runs_root, readings, link) -> None:
    import pandas as pd  # ~1 s to import (measured): only when a selftest run is stored

    run = new_result("selftest", result.label)
    run.status = "complete"
    run.board = BoardSection.model_validate(result.board)
    run.model = ModelSection.model_validate({**read_model(bundled_model(BUNDLED[0])).to_dict(),
                                             "selftest_models": list(BUNDLED)})
    run.runtime = RuntimeSection(name=FIRMWARE_NAME, version=str(result.firmware.get("engine")), kernels="reference",
                                 threads=1, delegate=None)
    run.extra.selftest = SelftestFigure(checks=result.checks, clock=result.clock, firmware=result.firmware,
                                        failed=result.failed, notes=result.notes)
    run.extra.link = link
    for c in result.checks:
        if c["status"] in (FAIL, WARN):
            run.warnings.append(RunWarning(code=f"selftest-{c['name'].replace(' ', '-')}", message=c["summary"],
                                           remedy="see docs/firmware-ports.md (bring-up) and attach this run folder "
                                                  "to a bug report"))
    frame = pd.DataFrame(readings, columns=["host_send_ns", "host_recv_ns", "device_us"]).astype("int64")
    folder = RunFolder(runs_root, "selftest", result.board["name"])
    run.status = "running"                # until its readings are stored too: a kill in between is recoverable
    folder.start(run)
    run.status = "complete"
    folder.save(run, frame)
    result.run_id, result.run_dir = run.run_id, str(folder.path)


__all__ = ["SelftestOptions", "SelftestResult", "run_selftest", "clock_rate", "read_clock", "CLOCK_TOLERANCE"]
