"""USB power analysers driven through their vendors' Python packages (level 2):
Nordic PPK2 (``ppk2-api``) and Joulescope (``joulescope``).

Both packages are imported only when the meter starts; without them the error
says which package to install. Neither instrument was attached here: both
classes were tested only against fakes of the package calls they make (listed
in each class), so a change in those packages can break them unnoticed.

Times are on the instrument's sample clock (``clock="meter"``), anchored to
the host clock when streaming starts; the number of samples received is
compared with the host time elapsed, and a difference above 1% (dropped
samples, or a sample clock other than nominal) makes the record incomplete.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable, Optional

import numpy as np

from edgebench.power.base import MeterError, MeterInfo, Samples, check_boundary, require_module

TESTED = "fake of its interface"


class _Streamer:
    """Shared thread/buffer logic of the two instruments."""

    sample_rate_hz = 1.0
    name: str                         # the instrument's, set by each subclass

    def __init__(self, stall_timeout_s: Optional[float], clock: Callable[[], float]):
        self._clock = clock
        self.stall_timeout_s = stall_timeout_s or 1.0
        self._chunks: list = []          # (current_a, voltage_v or None, digital or None, host_end)
        self._lock = threading.Lock()
        self._running = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._anchor: Optional[float] = None
        self._last_rx: Optional[float] = None
        self._cursor = 0
        self._problem: Optional[str] = None

    def _begin(self) -> None:
        self._anchor = self._last_rx = self._clock()
        self._running.set()
        self._thread = threading.Thread(target=self._loop, daemon=True, name=f"{type(self).__name__}-reader")
        self._thread.start()

    def _loop(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _put(self, current_a, voltage_v=None, digital=None, at: Optional[float] = None) -> None:
        """Keep one chunk; ``at``: host time its last sample was read (default: now). Decoding a
        chunk takes time that is not the instrument's: stamp it when the data left the device."""
        now = self._clock() if at is None else at
        with self._lock:
            self._chunks.append((np.asarray(current_a, dtype=np.float64),
                                 None if voltage_v is None else np.asarray(voltage_v, dtype=np.float64),
                                 None if digital is None else np.asarray(digital), now))
            self._last_rx = now

    def health(self) -> Optional[str]:
        if self._problem:
            return self._problem
        if self._running.is_set() and self._last_rx is not None:
            gap = self._clock() - self._last_rx
            if gap > self.stall_timeout_s:
                return f"{self.name} stopped streaming: no data for {gap:.1f} s"
        return None

    def _voltage(self, n: int) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _build(self, chunks: list, first_index: int) -> Samples:
        cur = np.concatenate([c[0] for c in chunks]) if chunks else np.zeros(0)
        if chunks and all(c[1] is not None for c in chunks):
            volt = np.concatenate([c[1] for c in chunks])
        else:
            volt = self._voltage(cur.size)
        idx = first_index + np.arange(cur.size, dtype=np.float64)
        anchor = self._anchor or 0.0
        t = anchor + idx / self.sample_rate_hz
        events_t, kinds = self._edges(chunks, first_index, anchor)
        return Samples(t, np.full(cur.size, 1.0 / self.sample_rate_hz), cur * volt, cur, volt, clock="meter",
                       events_t_s=events_t, events_kind=kinds)

    def _edges(self, chunks, first_index, anchor):
        return np.zeros(0), []

    def read(self) -> Samples:
        with self._lock:
            chunks = self._chunks[self._cursor:]
            first = sum(c[0].size for c in self._chunks[:self._cursor])
            self._cursor = len(self._chunks)
        return self._build(chunks, first)

    def _finish(self) -> Samples:
        problem = self.health()
        self._running.clear()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        with self._lock:
            chunks = list(self._chunks)
        out = self._build(chunks, 0)
        if chunks and self._anchor is not None:
            elapsed = chunks[-1][3] - self._anchor
            expected = elapsed * self.sample_rate_hz
            if expected > 10 * self.sample_rate_hz * 0.01 and abs(len(out) - expected) > 0.01 * expected:
                problem = problem or (f"{self.name}: {len(out):,} samples in {elapsed:.2f} s, "
                                      f"{expected:,.0f} expected at {self.sample_rate_hz:g} Hz (dropped samples?)")
        out.complete, out.problem = problem is None, problem
        out.meta.update({"anchor_host_s": self._anchor, "anchor_uncertainty_s": None,
                         "anchor": "host time when streaming was started; USB latency not measured"})
        return out


class Ppk2Meter(_Streamer):
    """Nordic Power Profiler Kit II through ``ppk2_api.ppk2_api.PPK2_API``.

    Package calls used (and faked in the tests): ``PPK2_API.list_devices()``,
    ``PPK2_API(port, ...)``, ``get_modifiers()``, ``set_source_voltage(mV)``,
    ``use_source_meter()`` / ``use_ampere_meter()``, ``toggle_DUT_power("ON")``,
    ``start_measuring()``, ``get_data()``, ``get_samples(data)`` (a list of µA,
    or in newer versions ``(list of µA, list of logic-port bytes)``),
    ``stop_measuring()``. Sample rate: 100 kHz.
    """

    name = "PPK2"
    sample_rate_hz = 100_000.0

    def __init__(self, port: Optional[str] = None, voltage_v: float = 3.3, mode: str = "source",
                 marker_bit: Optional[int] = None, boundary: str = "target-supply",
                 stall_timeout_s: Optional[float] = None, api_class=None,
                 clock: Callable[[], float] = time.perf_counter):
        super().__init__(stall_timeout_s, clock)
        if mode not in ("source", "ampere"):
            raise MeterError(f"PPK2 mode {mode!r}: use source (the PPK2 supplies the target) or ampere")
        if not 0.8 <= float(voltage_v) <= 5.0:
            raise MeterError(f"PPK2 voltage {voltage_v} V is outside 0.8 V to 5 V")
        self.port, self.voltage_v, self.mode = port, float(voltage_v), mode
        self.marker_bit = None if marker_bit is None else int(marker_bit)
        self.boundary = check_boundary(boundary)
        self._api_class = api_class
        self.api: Any = None          # the ppk2-api package's PPK2_API once started (no types)

    def start(self) -> None:
        cls = self._api_class or require_module("ppk2_api.ppk2_api", "ppk2-api", "PPK2").PPK2_API
        port = self.port
        if not port:
            found = cls.list_devices()
            if not found:
                raise MeterError("no PPK2 found on USB", "connect it, or pass --meter-port /dev/ttyACM0")
            port = found[0][0] if isinstance(found[0], (tuple, list)) else found[0]
            self.port = port
        try:
            try:
                self.api = cls(port, timeout=1, write_timeout=1, exclusive=True)
            except TypeError:  # older ppk2-api: PPK2_API(port)
                self.api = cls(port)
            self.api.get_modifiers()
            self.api.set_source_voltage(int(round(self.voltage_v * 1000)))
            if self.mode == "source":
                self.api.use_source_meter()
                self.api.toggle_DUT_power("ON")
            else:
                self.api.use_ampere_meter()
            self.api.start_measuring()
        except MeterError:
            raise
        except Exception as exc:
            raise MeterError(f"the PPK2 at {port} failed to start: {exc}",
                             "check the port and that no other program (nRF Connect) holds it") from None
        self._begin()

    def _loop(self) -> None:
        while self._running.is_set():
            try:
                data = self.api.get_data()
                read_at = self._clock()          # everything buffered up to now; decoding comes after
                if data:
                    got = self.api.get_samples(data)
                    samples, digital = got if isinstance(got, tuple) else (got, None)
                    self._put(np.asarray(samples, dtype=np.float64) * 1e-6, None, digital, at=read_at)
            except Exception as exc:
                self._problem = f"PPK2 read failed: {exc}"
                break
            time.sleep(0.005)

    def _voltage(self, n: int) -> np.ndarray:
        return np.full(n, self.voltage_v)

    def _edges(self, chunks, first_index, anchor):
        if self.marker_bit is None:
            return np.zeros(0), []
        bits = [c[2] for c in chunks]
        if not bits or any(b is None for b in bits):
            return np.zeros(0), []
        level = (np.concatenate(bits).astype(np.int64) >> self.marker_bit) & 1
        change = np.flatnonzero(np.diff(level)) + 1
        kinds = ["ris" if level[i] else "fal" for i in change]
        return anchor + (first_index + change) / self.sample_rate_hz, kinds

    def stop(self) -> Samples:
        out = self._finish()
        try:
            self.api.stop_measuring()
        except Exception:
            pass
        out.meta.update({"mode": self.mode, "voltage_v": self.voltage_v,
                         "voltage": "set by the PPK2 (source mode)" if self.mode == "source"
                         else "declared, not measured (ampere mode)"})
        return out

    def close(self) -> None:
        self._running.clear()
        if self.api is not None and self.mode == "source":
            try:
                self.api.toggle_DUT_power("OFF")
            except Exception:
                pass
        ser = getattr(self.api, "ser", None)
        if ser is not None:
            try:
                ser.close()
            except Exception:
                pass

    def describe(self) -> MeterInfo:
        return MeterInfo(instrument=f"Nordic PPK2 ({self.mode} mode) at {self.port or 'auto'}",
                         sample_rate_hz=self.sample_rate_hz, boundary=self.boundary, tested_against=TESTED,
                         clock="meter", reads="USB instrument",
                         quantity=("current x the voltage it supplies" if self.mode == "source"
                                   else "current x a declared voltage (not measured)"),
                         details={"voltage_v": self.voltage_v, "marker_bit": self.marker_bit,
                                  "package": "ppk2-api"})


class JoulescopeMeter(_Streamer):
    """Joulescope through the ``joulescope`` package.

    Package calls used (and faked in the tests): ``joulescope.scan_require_one(config="auto")``,
    ``open()``, ``read(contiguous_duration=s)`` (an N x 2 array of current A and
    voltage V), ``sampling_frequency``, ``close()``. Successive ``read`` calls
    leave gaps the instrument does not measure: the samples of each block are
    placed back from the host time the block arrived, and the time between
    blocks is reported as uncovered.
    """

    name = "Joulescope"
    sample_rate_hz = 1_000_000.0

    def __init__(self, device: Optional[str] = None, chunk_s: float = 0.1, boundary: str = "target-supply",
                 stall_timeout_s: Optional[float] = None, module=None, clock: Callable[[], float] = time.perf_counter):
        super().__init__(stall_timeout_s or max(2.0, 5 * chunk_s), clock)
        self.device, self.chunk_s = device, float(chunk_s)
        self.boundary = check_boundary(boundary)
        self._module = module
        self.js: Any = None           # the joulescope package's device once started (no types)

    def start(self) -> None:
        mod = self._module or require_module("joulescope", "joulescope", "Joulescope")
        try:
            self.js = mod.scan_require_one(config="auto")
            self.js.open()
        except Exception as exc:
            raise MeterError(f"no usable Joulescope: {exc}",
                             "connect one (and close the Joulescope UI, which holds it)") from None
        fs = getattr(self.js, "sampling_frequency", None)
        if fs:
            self.sample_rate_hz = float(fs)
        self._begin()

    def _loop(self) -> None:
        while self._running.is_set():
            try:
                data = np.asarray(self.js.read(contiguous_duration=self.chunk_s), dtype=np.float64)
            except Exception as exc:
                self._problem = f"Joulescope read failed: {exc}"
                break
            if data.ndim == 2 and data.shape[0]:
                self._put(data[:, 0], data[:, 1])

    def _build(self, chunks: list, first_index: int) -> Samples:
        # blocks are contiguous inside, not between: time each block back from its arrival
        ts, cur, volt = [], [], []
        for c, v, _, arrived in chunks:
            ts.append(arrived - (c.size - np.arange(c.size)) / self.sample_rate_hz)
            cur.append(c)
            volt.append(v)
        if not chunks:
            z = np.zeros(0)
            return Samples(z, z, z, clock="host")
        t, i, u = np.concatenate(ts), np.concatenate(cur), np.concatenate(volt)
        return Samples(t, np.full(t.size, 1.0 / self.sample_rate_hz), i * u, i, u, clock="host")

    def _finish(self) -> Samples:
        problem = self.health()
        self._running.clear()
        if self._thread is not None:
            self._thread.join(timeout=max(2.0, 3 * self.chunk_s))
        with self._lock:
            chunks = list(self._chunks)
        out = self._build(chunks, 0)
        out.complete, out.problem = problem is None, problem
        out.meta.update({"block_s": self.chunk_s,
                         "timing": "each block placed back from its arrival time on the host; gaps between "
                                   "blocks are not measured"})
        return out

    def stop(self) -> Samples:
        return self._finish()

    def close(self) -> None:
        self._running.clear()
        if self.js is not None:
            try:
                self.js.close()
            except Exception:
                pass

    def describe(self) -> MeterInfo:
        return MeterInfo(instrument="Joulescope (joulescope package)", sample_rate_hz=self.sample_rate_hz,
                         boundary=self.boundary, tested_against=TESTED, clock="host", reads="USB instrument",
                         quantity="current x voltage, both measured",
                         details={"block_s": self.chunk_s, "package": "joulescope",
                                  "coverage": "blocks of contiguous samples with unmeasured gaps between them"})


__all__ = ["Ppk2Meter", "JoulescopeMeter"]
