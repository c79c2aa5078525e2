"""The timed inference loops and the input/output conversions they time.

Each loop stores five raw ``time.perf_counter_ns()`` stamps per invoke into
preallocated int64 arrays and derives the stage durations after the loop, so
that the work between two stamps is exactly the stage it names (the ``invoke``
stage is ``interpreter.invoke()`` and nothing else). Names used inside the loops
are bound to locals beforehand.

With telemetry on (a ``sampler``, see :mod:`.telemetry`), the same loops run in
slices that end at the first inference finishing after the next sample is due;
the sample is read there, between two inferences, and its cost recorded. With
telemetry off each loop runs once over the whole request, as before.

The input quantization and output dequantization are :mod:`.quant` (shared with the host); the
inputs are prepared before the timed loop and 8-bit outputs dequantized by a table of the 256 codes
(:func:`dequantize_table`, the same float32 arithmetic).
"""
from __future__ import annotations

import bisect
import math
import time
from typing import Callable, Dict, List, Optional

import numpy as np

from .protocol import PREP_PER_INFERENCE, PREP_PRECOMPUTED, UsageFailure
from .quant import dequantize, make_quantizer

MAX_RUN_COUNT = 1_000_000
SPIN_NS = 200_000  # fixed-rate: sleep until this close to the deadline, then spin
MAX_START_AHEAD_NS = 10 * 10**9  # fixed-rate start_ns: at most this far in the future
MODES = ("single-stream", "offline", "fixed-rate")
#: the prepared inputs of one run at most this large; beyond, each inference quantizes its own
PREPARED_LIMIT_BYTES = 256 * 2**20
NEVER_NS = 2**63 - 1  # a stop time no perf_counter_ns stamp reaches


def dequantize_table(detail: dict) -> Optional[np.ndarray]:
    """For an 8-bit quantized tensor, the float32 value of every code, laid out so that
    ``table.take(q, mode="wrap")`` maps a code ``q`` (int8 -128..127 or uint8 0..255) to
    ``(float32(q) - zero_point) * scale``: the same float32 arithmetic as :func:`.quant.dequantize`,
    done once per code instead of once per inference (one numpy call in the timed loop)."""
    q = detail["quant"]
    dtype = np.dtype(detail["dtype"])
    if q is None or dtype not in (np.dtype(np.int8), np.dtype(np.uint8)):
        return None
    codes = np.arange(256, dtype=np.uint8).view(dtype)   # table position i holds code int8/uint8(i)
    return ((codes.astype(np.float32) - np.float32(q["zero_point"])) * np.float32(q["scale"])).astype(np.float32)


def make_getter(interpreter, outputs: List[dict]) -> Callable[[], None]:
    """A function that fetches every output and dequantizes it into float32 buffers.

    One 8-bit quantized output (the common classifier): one ``get_tensor`` and one table
    look-up. A float32 output is read (``get_tensor`` returns a copy) and needs no conversion."""
    get_tensor = interpreter.get_tensor
    plans = []
    for d in outputs:
        buf = np.empty(d["shape"], np.float32)
        q = d["quant"]
        zp = np.float32(q["zero_point"]) if q else np.float32(0)
        scale = np.float32(q["scale"]) if q else np.float32(1)
        plans.append((d["index"], buf, zp, scale, q is not None, dequantize_table(d)))
    one_table = plans[0][5] if len(plans) == 1 else None
    if one_table is not None:
        index, buf = plans[0][0], plans[0][1]
        take = one_table.take

        def get_one() -> None:
            take(get_tensor(index), out=buf, mode="wrap")

        return get_one
    if all(not quantized and np.dtype(d["dtype"]) == np.float32 for (_, _, _, _, quantized, _), d
           in zip(plans, outputs)):
        indices = [p[0] for p in plans]

        def get_floats() -> None:
            for index in indices:
                get_tensor(index)

        return get_floats

    def get_all() -> None:
        for index, buf, zp, scale, quantized, table in plans:
            if table is not None:
                table.take(get_tensor(index), out=buf, mode="wrap")
                continue
            np.copyto(buf, get_tensor(index), casting="unsafe")
            if quantized:
                buf -= zp
                buf *= scale

    return get_all


class Runner:
    """Runs the timed loops and ``infer`` for one loaded model and one input pool.

    The input of every inference is prepared before the timed loop: the batches the run
    cycles through (``j, j+b, ...`` mod the pool size) are quantized (or cast) once, so the
    ``prep`` stage is picking the prepared batch and the timed path is transfer, invoke and
    output read. Where the prepared batches would exceed :data:`PREPARED_LIMIT_BYTES` (a huge
    pool), each inference quantizes its own batch in the ``prep`` stage instead, as before;
    ``last_prep`` says which (the run header carries it)."""

    def __init__(self, model, pool: np.ndarray):
        self.model = model
        self.pool = pool
        self.batch = model.batch
        detail = model.inputs[0]
        self.in_index = detail["index"]
        self.quantize = make_quantizer(detail, [self.batch] + model.sample_shape())
        self.get = make_getter(model.interpreter, model.outputs)
        self._itemsize = np.dtype(detail["dtype"]).itemsize
        self._prepared: Dict[int, tuple] = {}   # start mod gcd -> (pick, positions, prep kind)
        self.last_prep = PREP_PRECOMPUTED

    def _source(self, j: int) -> np.ndarray:
        """Samples j, j+1, ... (wrapping) as one batch, float32, still unquantized."""
        b, n = self.batch, len(self.pool)
        if j + b <= n:
            return self.pool[j:j + b]
        return self.pool.take(np.arange(j, j + b) % n, axis=0)

    def inputs_from(self, start: int):
        """``(pick, period, p0, kind)``: ``pick((p0 + i) % period)`` is the input of the i-th inference
        from ``start``; the run cycles through ``j, j + b, ...`` mod the pool size, a cycle of
        ``period`` batches. Cycles are prepared once per residue of ``start`` mod gcd(pool, batch)
        (one cycle for batch 1), so a run continuing at another start index reuses them."""
        b, n = self.batch, len(self.pool)
        g = math.gcd(n, b)
        period = n // g
        r = start % g
        cached = self._prepared.get(r)
        if cached is None:
            sample_bytes = int(np.prod(self.pool.shape[1:], dtype=np.int64)) * self._itemsize
            position = {(r + p * b) % n: p for p in range(period)}
            if period * b * sample_bytes <= PREPARED_LIMIT_BYTES:
                batches = [self.quantize(self._source((r + p * b) % n)).copy() for p in range(period)]
                cached = (batches.__getitem__, position, PREP_PRECOMPUTED)
            else:
                source, quantize = self._source, self.quantize
                cached = ((lambda p: quantize(source((r + p * b) % n))), position, PREP_PER_INFERENCE)
            self._prepared[r] = cached
        pick, position, kind = cached
        return pick, period, position[start], kind

    def run(self, mode: str, count: int, max_time_s: float, rate_hz: Optional[float] = None,
            start_index: int = 0, sampler=None, start_ns: Optional[int] = None) -> Dict[str, np.ndarray]:
        """Timed inferences; with a telemetry ``sampler``, it samples between inferences
        whenever its interval has elapsed (the loops themselves are the same code).
        ``start_ns`` (fixed-rate only): the device time the first request is due, so that
        a schedule continues across requests."""
        if mode not in MODES:
            raise UsageFailure(f"unknown run mode {mode!r}; choose one of {', '.join(MODES)}")
        if not isinstance(count, int) or not 1 <= count <= MAX_RUN_COUNT:
            raise UsageFailure(f"count must be an integer in 1..{MAX_RUN_COUNT}, got {count!r}")
        if not max_time_s or max_time_s <= 0:
            raise UsageFailure(f"max_time_s must be positive, got {max_time_s!r}")
        n_pool = len(self.pool)
        start = int(start_index) % n_pool
        sched = None
        if mode == "fixed-rate":
            if not rate_hz or rate_hz <= 0:
                raise UsageFailure(f"fixed-rate needs a positive rate_hz, got {rate_hz!r}")
            sched = np.round(np.arange(count) * (1e9 / float(rate_hz))).astype(np.int64)
        if start_ns is not None:
            if mode != "fixed-rate":
                raise UsageFailure("start_ns applies to the fixed-rate mode only")
            if isinstance(start_ns, bool) or not isinstance(start_ns, int) \
                    or start_ns > time.perf_counter_ns() + MAX_START_AHEAD_NS:
                raise UsageFailure(f"start_ns must be a device time (perf_counter_ns) at most "
                                   f"{MAX_START_AHEAD_NS // 10**9} s ahead, got {start_ns!r}")
        pick, period, p0, self.last_prep = self.inputs_from(start)
        stamps = [np.empty(count, np.int64) for _ in range(5)]
        max_ns = int(max_time_s * 1e9)
        if sched is not None:
            done, t_begin = self._loop_fixed_rate(stamps, count, max_ns, (pick, period, p0), sched, sampler, start_ns)
        else:
            done, t_begin = self._loop_back_to_back(stamps, count, max_ns, (pick, period, p0), sampler,
                                                    prep_stage=mode != "offline")
        t0, t1, t2, t3, t4 = (s[:done] for s in stamps)
        out = {
            "t_start_ns": t0.copy(),
            "prep_ns": t1 - t0,
            "set_ns": t2 - t1,
            "invoke_ns": t3 - t2,
            "get_ns": t4 - t3,
            "e2e_ns": t4 - t0,
            "input_index": (start + np.arange(done, dtype=np.int64) * self.batch) % n_pool,
        }
        if sched is not None:
            out["scheduled_ns"] = sched[:done] + t_begin
        return out

    def _loop_fixed_rate(self, stamps, count, max_ns, cycle, sched, sampler=None, start_ns=None):
        """Fixed-rate: request ``k`` due at ``sched[k]`` from the start; with a ``sampler``, in slices
        that end before the first request due after the sample time."""
        if sampler is not None:
            sampler.sample_if_due()
        # first request a little ahead (its start is then on time), or where the caller's schedule is
        t_begin = time.perf_counter_ns() + SPIN_NS if start_ns is None else start_ns
        t_stop = t_begin + max_ns
        due_list = (sched + t_begin).tolist()
        if sampler is None:
            return self._timed(stamps, 0, count, t_stop, cycle, due_list), t_begin
        k = 0
        while k < count:  # slices end before the first request due after the sample time
            k_end = min(max(bisect.bisect_left(due_list, sampler.t_next, k), k + 1), count)
            k_new = self._timed(stamps, k, k_end, t_stop, cycle, due_list)
            if k_new < k_end:  # the next request is due after the stop time
                return k_new, t_begin
            k = k_new
            sampler.sample_if_due()  # in the slack before the next request
        return k, t_begin

    def _loop_back_to_back(self, stamps, count, max_ns, cycle, sampler, prep_stage):
        """Single-stream (``prep_stage``) or offline: inferences back to back until ``count`` or
        ``max_ns``; with a ``sampler``, in slices that end at the first inference ending past the
        sample time."""
        if sampler is None:
            t_begin = time.perf_counter_ns()
            return self._timed(stamps, 0, count, t_begin + max_ns, cycle, None, prep_stage), t_begin
        sampler.sample_if_due()
        t_begin = time.perf_counter_ns()
        t_stop = t_begin + max_ns
        k, a4 = 0, stamps[4]
        while k < count:
            k = self._timed(stamps, k, count, min(sampler.t_next, t_stop), cycle, None, prep_stage)
            if a4[k - 1] >= t_stop:
                break
            sampler.sample_if_due()
        return k, t_begin

    def _timed(self, stamps, k, k_end, t_stop, cycle, due_list=None, prep_stage=True):
        """Inferences ``k``..``k_end - 1`` with their five stamps; returns the next ``k``.

        Back to back (``due_list`` None): stops after the first that ends at/after ``t_stop``.
        Fixed-rate: each request starts at its due time ``due_list[k]`` (or late); stops before the
        first due after ``t_stop``. Without ``prep_stage`` (offline) the batch is picked before the
        clock starts, so the prep stage is zero. One loop serves every mode: its mode tests stand
        outside the stamps (each stage times the same work as a loop written out per mode), and
        they are a few branches, not a Python call, per inference."""
        a0, a1, a2, a3, a4 = stamps
        pc = time.perf_counter_ns
        sleep = time.sleep
        get = self.get
        set_tensor = self.model.interpreter.set_tensor
        invoke = self.model.interpreter.invoke
        in_index = self.in_index
        pick, period, p0 = cycle
        p = (p0 + k) % period
        paced = due_list is not None
        t_end = NEVER_NS if paced else t_stop  # fixed-rate stops on the due time, not the end
        while k < k_end:
            if paced:
                due = due_list[k]
                if due > t_stop:
                    break
                wait = due - pc()
                if wait > SPIN_NS:
                    sleep((wait - SPIN_NS) * 1e-9)
                while pc() < due:
                    pass
            if prep_stage:
                t0 = pc()
                x = pick(p)
                t1 = pc()
            else:
                x = pick(p)
                t0 = t1 = pc()
            set_tensor(in_index, x)
            t2 = pc()
            invoke()
            t3 = pc()
            get()
            t4 = pc()
            a0[k] = t0
            a1[k] = t1
            a2[k] = t2
            a3[k] = t3
            a4[k] = t4
            k += 1
            p += 1
            if p == period:
                p = 0
            if t4 >= t_end:
                break
        return k

    def infer(self, x: np.ndarray) -> Dict[str, np.ndarray]:
        """Outputs for every sample of x: ``y``/``y_float`` (output 0), ``y1``/``y1_float``...

        The whole request is quantized at once (vectorised) and outputs land in
        preallocated arrays, so the per-sample work is set_tensor, invoke, get_tensor.
        """
        interp = self.model.interpreter
        b, n = self.batch, len(x)
        n_pad = -(-n // b) * b
        if n_pad != n:  # pad the last batch; the padding's outputs are dropped
            x = np.concatenate([x, np.zeros((n_pad - n,) + x.shape[1:], x.dtype)])
        detail = self.model.inputs[0]
        xq = make_quantizer(detail, list(x.shape))(x)
        xq = xq.reshape((n_pad // b, b) + tuple(x.shape[1:]))
        outs = [np.empty((n_pad,) + tuple(d["shape"][1:]), d["dtype"]) for d in self.model.outputs]
        plan = [(d["index"], outs[k]) for k, d in enumerate(self.model.outputs)]
        set_tensor, invoke, get_tensor, in_index = interp.set_tensor, interp.invoke, interp.get_tensor, self.in_index
        for i in range(n_pad // b):
            set_tensor(in_index, xq[i])
            invoke()
            for index, out in plan:
                out[i * b:(i + 1) * b] = get_tensor(index)
        result = {}
        for k, d in enumerate(self.model.outputs):
            y = outs[k][:n]
            name = "y" if k == 0 else f"y{k}"
            result[name] = y
            result[name + "_float"] = dequantize(d, y)
        return result
