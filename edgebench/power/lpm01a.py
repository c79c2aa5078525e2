"""ST X-NUCLEO-LPM01A (PowerShield) over its ASCII serial protocol (level 2).

The protocol, as documented in ST's UM2269 (PowerShield firmware) and used by
the MLPerf Tiny energy runner (``benchmark/runner/power_manager*.py``):

* a USB virtual COM port at 3 686 400 baud; commands are ASCII lines;
* ``htc`` (host takes control) / ``hrc`` (host releases control);
* configuration: ``volt <V>`` (1.8 V to 3.3 V, e.g. ``volt 3300m``),
  ``freq <Hz>`` (100k, 50k, 20k, 10k, 5k, 2k, 1k, 500, 200, 100, 50, 20, 10, 5,
  2, 1), ``acqtime <s>`` (``0`` or ``inf``: until ``stop``), ``output energy``
  (each sample is the energy integrated over one sample period, in J; at most
  10 kHz) or ``output current`` (instantaneous current, A), ``format ascii_dec``
  (at most 10 kHz), ``trigsrc sw|d7`` (start at once, or on an edge on
  Arduino D7), ``eventsrc d7 <edge>`` (report edges on D7 in the stream),
  ``pwr on|off|auto``, ``start``, ``stop``;
* replies are lines ``ack <command> [value]`` or ``error <command>`` followed
  by ``Error detail: <reason>``, often preceded by the prompt ``PowerShield > ``;
* while acquiring, each sample is one line ``DDDDsEE`` meaning
  ``DDDD x 10^(sEE)`` (``6409-07`` = 640.9 µA, or J in energy output), with
  metadata lines in between: ``TimeStamp: 001s 000ms, buff 00%`` (acquisition
  time and buffer fill), ``event <n> <edge>`` (a D7 edge, at the position of
  the next sample), and at the end a summary and ``Acquisition completed``.

Times: sample ``k`` covers ``[k / f, (k + 1) / f)`` on the meter's clock; the
host anchor is the host time of the ``ack start`` (its uncertainty is the
command's round trip; with ``trigsrc d7`` the start is the trigger edge and
there is no host anchor). Marker events are on the meter clock, so
inference windows from the GPIO marker need no clock alignment.

Which parts were tested how: every line of this module ran only against
``tests/fakes/lpm01a.py``, a process on a pseudo-terminal that answers as the
protocol above describes (``MeterInfo.tested_against``). The content of the
end-of-acquisition summary and the exact wording of ``event`` lines and error
details were not available from a primary source: the summary is kept
verbatim, not parsed, and any ``event <n> <word>`` line counts as an edge.
"""
from __future__ import annotations

import queue
import re
import threading
import time
from typing import Any, Callable, Optional

import numpy as np

from edgebench.power.base import MeterError, MeterInfo, Samples, check_boundary, require_module

TESTED = "fake of its interface"
BAUD = 3686400
PROMPT = "PowerShield >"
FREQS = {100000: "100k", 50000: "50k", 20000: "20k", 10000: "10k", 5000: "5k", 2000: "2k", 1000: "1k",
         500: "500", 200: "200", 100: "100", 50: "50", 20: "20", 10: "10", 5: "5", 2: "2", 1: "1"}
_SAMPLE = re.compile(r"\d{4}[+-]\d{2}")
_SAMPLES_LINE = re.compile(r"^(?:\d{4}[+-]\d{2})+$")
_TIMESTAMP = re.compile(r"^TimeStamp:\s*[ ><]?\s*(\d+)s\s+(\d+)ms,\s*buff\s+(\d+)%")
_EVENT = re.compile(r"^event\s+(\d+)\s+(\w+)")


def decode_sample(text: str) -> float:
    """``'6409-07'`` -> 6.409e-4."""
    return int(text[:4]) * 10.0 ** int(text[4:7])


def encode_sample(value: float) -> str:
    """The inverse: four significant digits, signed two-digit exponent (used by the fake)."""
    if value <= 0:
        return "0000+00"
    e = int(np.floor(np.log10(value))) - 3
    m = int(round(value / 10.0 ** e))
    if m >= 10000:
        m, e = m // 10, e + 1
    return f"{m:04d}{'-' if e < 0 else '+'}{abs(e):02d}"


class Lpm01aMeter:
    """X-NUCLEO-LPM01A PowerShield: supplies the target and measures its current."""

    def __init__(self, port: Optional[str] = None, voltage_v: float = 3.3, freq_hz: int = 1000,
                 output: str = "energy", trigsrc: str = "sw", eventsrc: Optional[str] = "d7 fal",
                 acq_time_s: float = 0, power_on: bool = True, boundary: str = "target-supply",
                 stall_timeout_s: Optional[float] = None, command_timeout_s: float = 2.0,
                 serial_factory: Optional[Callable] = None, clock: Callable[[], float] = time.perf_counter):
        if not port:
            raise MeterError("the lpm01a meter needs its serial port",
                             "pass --meter-port, e.g. /dev/ttyACM0 (ls /dev/serial/by-id/ shows STMicroelectronics)")
        freq_hz = int(float(freq_hz))
        if freq_hz not in FREQS:
            raise MeterError(f"LPM01A sampling frequency {freq_hz} Hz is not one it offers",
                             f"use one of {', '.join(FREQS.values())}")
        if freq_hz > 10000:
            raise MeterError(f"LPM01A: {freq_hz} Hz is above the 10 kHz limit of ascii_dec output",
                             "use --meter-opt freq_hz=10000 or lower")
        if not 1.8 <= float(voltage_v) <= 3.3:
            raise MeterError(f"LPM01A supply voltage {voltage_v} V is outside 1.8 V to 3.3 V")
        if output not in ("energy", "current"):
            raise MeterError(f"LPM01A output {output!r}: use energy or current")
        if trigsrc not in ("sw", "d7"):
            raise MeterError(f"LPM01A trigger source {trigsrc!r}: use sw or d7")
        self.port, self.voltage_v, self.freq_hz = port, float(voltage_v), freq_hz
        self.output, self.trigsrc, self.eventsrc = output, trigsrc, eventsrc
        self.acq_time_s, self.power_on = float(acq_time_s), bool(power_on)
        self.boundary = check_boundary(boundary)
        self.stall_timeout_s = stall_timeout_s or max(1.0, 50.0 / freq_hz)
        self.command_timeout_s = command_timeout_s
        self._serial_factory = serial_factory
        self._clock = clock
        self._ser: Any = None            # the serial port (pyserial, or the test's factory) once started
        self._thread: Optional[threading.Thread] = None
        self._running = threading.Event()
        self._replies: "queue.Queue[str]" = queue.Queue()
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self._values: list = []
        self._events: list = []          # (number, sample index, edge word)
        self._timestamps: list = []      # (acquisition time s, buffer %, sample count)
        self._messages: list = []        # other lines (summary, asynchronous errors)
        self._acquiring = False
        self._completed = threading.Event()
        self._last_rx: Optional[float] = None
        self._anchor: Optional[float] = None
        self._anchor_unc: Optional[float] = None
        self._cursor = 0
        self._stalled_at: Optional[float] = None
        self.version: Optional[str] = None

    # -- link ----------------------------------------------------------------------
    def _open(self) -> None:
        if self._serial_factory is not None:
            self._ser = self._serial_factory(self.port)
            return
        serial = require_module("serial", "pyserial", "LPM01A")
        try:
            self._ser = serial.serial_for_url(self.port, baudrate=BAUD, timeout=0.05)
        except (serial.SerialException, OSError, ValueError) as exc:
            raise MeterError(f"cannot open the LPM01A at {self.port}: {exc}",
                             "check the USB cable and the port (ls /dev/serial/by-id/), and that no other "
                             "program holds it") from None

    def _reader(self) -> None:
        buf = b""
        while self._running.is_set():
            try:
                waiting = getattr(self._ser, "in_waiting", 0) or 1  # read(n) would wait for n bytes
                chunk = self._ser.read(min(waiting, 65536))
            except Exception as exc:  # pyserial raises SerialException/OSError when the device goes away
                self._messages.append(f"link error: {exc}")
                break
            if not chunk:
                continue
            self._last_rx = self._clock()
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for raw in lines:
                self._dispatch(raw.decode("ascii", "replace").replace("\r", "").replace("\x00", "").strip())

    def _dispatch(self, line: str) -> None:
        while line.startswith(PROMPT):
            line = line[len(PROMPT):].strip()
        if not line:
            return
        if _SAMPLES_LINE.match(line):
            with self._lock:
                self._values.extend(decode_sample(s) for s in _SAMPLE.findall(line))
            return
        m = _TIMESTAMP.match(line)
        if m:
            with self._lock:
                self._timestamps.append((int(m.group(1)) + int(m.group(2)) / 1000.0, int(m.group(3)),
                                         len(self._values)))
            return
        m = _EVENT.match(line)
        if m:
            with self._lock:
                self._events.append((int(m.group(1)), len(self._values), m.group(2)))
            return
        if line.startswith(("ack", "error", "Error detail")):
            self._replies.put(line)
            return
        if "Acquisition completed" in line:
            self._completed.set()
            self._acquiring = False
        self._messages.append(line)

    def command(self, cmd: str, timeout_s: Optional[float] = None) -> str:
        """Send one command; return the text after ``ack <cmd>``; raise MeterError on ``error``."""
        while not self._replies.empty():
            self._replies.get_nowait()
        self._ser.write((cmd + "\r\n").encode("ascii"))
        word = cmd.split()[0]
        deadline = self._clock() + (timeout_s or self.command_timeout_s)
        while True:
            left = deadline - self._clock()
            if left <= 0:
                raise MeterError(f"the LPM01A at {self.port} did not answer '{cmd}' within "
                                 f"{timeout_s or self.command_timeout_s:g} s",
                                 "is it an X-NUCLEO-LPM01A on that port, powered, and not held by another program?")
            try:
                line = self._replies.get(timeout=min(left, 0.1))
            except queue.Empty:
                continue
            if line.startswith("ack") and (line[3:].strip().split() or [""])[0] == word:
                return line[3:].strip()[len(word):].strip()
            if line.startswith("error"):
                detail = line
                try:
                    more = self._replies.get(timeout=0.5)
                    if more.startswith("Error detail"):
                        detail = more.split(":", 1)[1].strip()
                except queue.Empty:
                    pass
                raise MeterError(f"the LPM01A refused '{cmd}': {detail}")

    # -- the PowerMeter interface ----------------------------------------------------
    def start(self) -> None:
        self._reset()
        self._open()
        self._running.set()
        self._thread = threading.Thread(target=self._reader, name="lpm01a-reader", daemon=True)
        self._thread.start()
        try:
            self.command("htc")
            try:
                self.version = self.command("version") or None
            except MeterError:
                self.version = None
            self.command(f"volt {int(round(self.voltage_v * 1000))}m")
            self.command(f"freq {FREQS[self.freq_hz]}")
            self.command(f"acqtime {'0' if not self.acq_time_s else self._seconds(self.acq_time_s)}")
            self.command(f"output {self.output}")
            self.command("format ascii_dec")
            self.command(f"trigsrc {self.trigsrc}")
            if self.eventsrc:
                self.command(f"eventsrc {self.eventsrc}")
            if self.power_on:
                self.command("pwr on")
            h0 = self._clock()
            self.command("start")
            h1 = self._clock()
        except MeterError:
            self._shutdown()
            raise
        self._acquiring = True
        self._last_rx = h1
        if self.trigsrc == "sw":
            self._anchor, self._anchor_unc = h1, h1 - h0

    @staticmethod
    def _seconds(s: float) -> str:
        return f"{int(round(s * 1000))}m" if s < 1 else f"{s:g}"

    def health(self) -> Optional[str]:
        if self._acquiring and self._last_rx is not None:
            gap = self._clock() - self._last_rx
            if gap > self.stall_timeout_s:
                if self._stalled_at is None:
                    self._stalled_at = self._last_rx
                return (f"the LPM01A stopped streaming: no data for {gap:.1f} s after "
                        f"{len(self._values):,} samples ({len(self._values) / self.freq_hz:.2f} s of acquisition)")
        return None

    def _power(self, values: np.ndarray) -> np.ndarray:
        return values * self.freq_hz if self.output == "energy" else values * self.voltage_v

    def _samples(self, first: int, last: int, final: bool = False) -> Samples:
        with self._lock:
            vals = np.array(self._values[first:last], dtype=np.float64)
            events = [e for e in self._events if first <= e[1] < last or (final and e[1] >= first)]
        anchor = self._anchor if self._anchor is not None else 0.0
        idx = np.arange(first, first + vals.size, dtype=np.float64)
        t = anchor + idx / self.freq_hz
        dt = np.full(vals.size, 1.0 / self.freq_hz)
        power = self._power(vals)
        current = vals * self.freq_hz / self.voltage_v if self.output == "energy" else vals
        return Samples(t, dt, power, current, np.full(vals.size, self.voltage_v), clock="meter",
                       events_t_s=np.array([anchor + e[1] / self.freq_hz for e in events]),
                       events_kind=[e[2] for e in events])

    def read(self) -> Samples:
        with self._lock:
            n = len(self._values)
        out = self._samples(self._cursor, n)
        self._cursor = n
        return out

    def stop(self) -> Samples:
        problem = self.health()
        if self._ser is not None and problem is None:
            try:
                self._ser.write(b"stop\r\n")  # no ack: the acquisition ends with 'Acquisition completed'
            except Exception as exc:  # the link may be gone
                problem = f"cannot send stop to the LPM01A: {exc}"
            if not self._completed.wait(self.stall_timeout_s + 1.0) and problem is None:
                problem = self.health() or "the LPM01A did not confirm the end of the acquisition"
        self._acquiring = False
        with self._lock:
            n = len(self._values)
        out = self._samples(0, n, final=True)
        lost = self._lost_samples()
        if lost:
            problem = problem or lost
        out.complete, out.problem = problem is None, problem
        out.meta.update({
            "instrument_version": self.version, "n_samples": n, "freq_hz": self.freq_hz, "output": self.output,
            "supply_voltage_v": self.voltage_v, "trigsrc": self.trigsrc, "eventsrc": self.eventsrc,
            "anchor_host_s": self._anchor, "anchor_uncertainty_s": self._anchor_unc,
            "anchor": ("host time of 'ack start' (round trip as uncertainty)" if self._anchor is not None
                       else "none: acquisition started on a D7 trigger"),
            "timestamps": len(self._timestamps), "events": len(self._events),
            "summary": [m for m in self._messages if m][-20:]})
        return out

    def _lost_samples(self) -> Optional[str]:
        """Compare the instrument's TimeStamp lines with the number of samples received before each."""
        for t, _, count in self._timestamps:
            expected = int(round(t * self.freq_hz))
            if abs(count - expected) > max(2, 0.001 * expected):
                return (f"LPM01A samples lost: {count:,} received by its timestamp {t:.3f} s, "
                        f"{expected:,} expected at {self.freq_hz} Hz")
        return None

    def _shutdown(self) -> None:
        self._running.clear()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
            self._thread = None
        if self._ser is not None:
            try:
                self._ser.close()
            except Exception:
                pass
            self._ser = None

    def close(self) -> None:
        if self._ser is not None and self.health() is None:
            try:
                self.command("hrc", timeout_s=1.0)
            except MeterError:
                pass
        self._shutdown()

    def describe(self) -> MeterInfo:
        return MeterInfo(instrument=f"ST X-NUCLEO-LPM01A PowerShield at {self.port}",
                         sample_rate_hz=float(self.freq_hz), boundary=self.boundary, tested_against=TESTED,
                         clock="meter", reads="USB instrument",
                         quantity=("energy per sample period (output energy)" if self.output == "energy"
                                   else "current (output current) x the supply voltage it sets"),
                         details={"port": self.port, "supply_voltage_v": self.voltage_v, "output": self.output,
                                  "trigsrc": self.trigsrc, "eventsrc": self.eventsrc,
                                  "range": "the target draws through the LPM01A's own supply (1.8-3.3 V)"})


__all__ = ["Lpm01aMeter", "decode_sample", "encode_sample", "BAUD", "FREQS"]
