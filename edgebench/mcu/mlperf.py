"""The device half of MLPerf Tiny mode (level 2): measuring a DUT with only the MLPerf Tiny dialect.

Reached through :class:`~edgebench.mcu.board.McuClient`'s ``mlperf-mode`` capability
(``mlperf_profile``, ``mlperf_performance``, ``mlperf_scores``); the host half (options, the
model's MLPerf Tiny id, the stored run) is :mod:`edgebench.bench.mlperf_mode`.

* :func:`performance`: for each window a different input is loaded with ``db load N`` +
  ``db <hex>`` chunks, then ``infer N W`` runs W warm-ups and N timed inferences between two
  ``m-lap-us`` timestamps; N is calibrated so each window lasts at least ``window_s`` (a window
  that falls short is rerun with a larger N). The figure is the median of the windows'
  throughputs.
* :func:`accuracy_scores`: ``infer 1 0`` per input and the scores of ``m-results-[...]``.
* :func:`encode`: the bytes a reference firmware expects in its ``db`` buffer.

Only dialect commands reach the device here (``db``, ``infer``).
"""
from __future__ import annotations

import math
import time
from typing import Callable, Optional

import numpy as np

from edgebench.errors import AgentError, UsageError
from edgebench.mcu.dialect import WindowCheck

Progress = Callable[[dict], None]


def encode(q: np.ndarray, encoding: str, x: np.ndarray | None = None) -> bytes:
    """int8 input tensor ``q`` (float32: the real values ``x``) -> the bytes a reference firmware
    expects in its db buffer: int8 as is, uint8-offset q+128, float32 little-endian floats."""
    if encoding == "float32":
        if x is None:
            raise UsageError("the float32 input encoding sends the real-valued input: give x")
        return np.asarray(x, dtype="<f4").reshape(-1).tobytes()
    q = np.asarray(q, dtype=np.int8).reshape(-1)
    return q.tobytes() if encoding == "int8" else (q.astype(np.int16) + 128).astype(np.uint8).tobytes()


def performance(dut, inputs: list, windows: int = 5, window_s: float = 10.0, warmup: int = 10,
                chunk_bytes: int = 32, max_reruns: int = 3, emit: Optional[Progress] = None,
                timing: str = "real") -> dict:
    """``windows`` windows of ``infer N W`` of at least ``window_s`` each; the median throughput.
    Each finished window is also told to ``emit`` (``window-done``), so a stopped run keeps it.
    Every window is bounded by the host's clock (``timing`` ``real``) and the run's other windows
    (:class:`edgebench.mcu.dialect.WindowCheck`): the dialect's timestamps carry no checksum."""
    emit = emit or (lambda event: None)
    check = WindowCheck(timing=timing)
    dut.db_load(inputs[0], chunk_bytes)
    n, calib = 1, list[dict]()
    while True:                                       # calibrate N: grow until a run is measurable
        el = dut.checked_infer(n, 0, check, timeout_s=_timeout(n, calib, dut)).elapsed_us / 1e6
        calib.append({"n": n, "elapsed_s": el})
        if el >= 0.2 * window_s or el >= 1.0 or n >= 10 ** 9:
            break
        n = n * 10 if el < 1e-3 else max(n + 1, int(math.ceil(n * 1.0 / max(el, 1e-6))))
    per_inf = el / n
    n = max(1, int(math.ceil(window_s * 1.05 / max(per_inf, 1e-9))))
    done = []
    for w in range(windows):
        idx = w % len(inputs)
        dut.db_load(inputs[idx], chunk_bytes)
        runs = 0
        while True:
            emit({"event": "window", "window": w + 1, "of": windows, "n": n, "window_s": window_s})
            t_wall = time.monotonic()
            rep = dut.checked_infer(n, warmup, check, timeout_s=dut.timeout_s + 3 * (n + warmup) * per_inf + 5)
            wall = time.monotonic() - t_wall
            el = rep.elapsed_us / 1e6
            runs += 1
            if el >= window_s or runs > max_reruns:
                break
            n = int(math.ceil(n * window_s * 1.05 / max(el, 1e-9)))   # too short: rerun longer
        done.append({"window": w + 1, "input_index": idx, "n": n, "warmup": warmup,
                     "elapsed_s": el, "per_s": n / el if el > 0 else None, "host_wall_s": wall,
                     "meets_min_window": el >= window_s, "runs": runs, "results": rep.results})
        emit({"event": "window-done", "window": done[-1], "calibration": calib})
        per_inf = el / n if n else per_inf
    return summary(done, calib, window_s)


def summary(windows: list, calibration: list, window_s: float) -> dict:
    """The performance record of the windows measured (all of them, or those before a stop)."""
    rates = [w["per_s"] for w in windows if w["per_s"]]
    return {"windows": windows, "median_per_s": float(np.median(rates)) if rates else None,
            "calibration": calibration, "window_s": window_s,
            "all_windows_long_enough": all(w["meets_min_window"] for w in windows)}


def _timeout(n: int, calib: list, dut) -> float:
    if not calib:
        return max(dut.timeout_s, 60.0)
    last = calib[-1]
    return dut.timeout_s + 3 * n * last["elapsed_s"] / max(last["n"], 1) + 5


def accuracy_scores(dut, inputs: list, chunk_bytes: int = 32, emit: Optional[Progress] = None) -> np.ndarray:
    """``infer 1 0`` per input: the scores of ``m-results-[...]`` (N, classes)."""
    emit = emit or (lambda event: None)
    rows = []
    for i, data in enumerate(inputs):
        dut.db_load(data, chunk_bytes)
        rows.append(dut.checked_results(dut.infer(1, 0).results))   # no checksum: read until two reads agree
        emit({"event": "infer", "done": i + 1, "total": len(inputs)})
    widths = {len(r) for r in rows}
    if len(widths) > 1:
        raise AgentError(f"m-results had different lengths: {sorted(widths)}")
    return np.asarray(rows, dtype=np.float32)


__all__ = ["encode", "performance", "summary", "accuracy_scores"]
