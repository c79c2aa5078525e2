"""The timed inference loops and the input/output conversions they time.

Each loop stores five raw ``time.perf_counter_ns()`` stamps per invoke into
preallocated int64 arrays and derives the stage durations after the loop, so
that the work between two stamps is exactly the stage it names (the ``invoke``
stage is ``interpreter.invoke()`` and nothing else). Names used inside the loops
are bound to locals beforehand.

Quantization of a float input: ``q = clip(round(x / scale) + zero_point)`` with
numpy's ``np.round`` (round half to even), then cast to the tensor's integer
type. Dequantization of an output: ``(q - zero_point) * scale`` in float32.
"""
from __future__ import annotations

import time
from typing import Callable, Dict, List, Optional

import numpy as np

from .protocol import DataFailure, UsageFailure

MAX_RUN_COUNT = 1_000_000
SPIN_NS = 200_000  # fixed-rate: sleep until this close to the deadline, then spin
MODES = ("single-stream", "offline", "fixed-rate")


def make_quantizer(detail: dict, batch_shape: List[int]) -> Callable[[np.ndarray], np.ndarray]:
    """A function float32 array (batch_shape) -> tensor-typed array (reuses one buffer)."""
    dtype = np.dtype(detail["dtype"])
    quant = detail["quant"]
    if quant is None or dtype.kind == "f":
        if dtype == np.float32:
            return lambda x: x
        return lambda x: x.astype(dtype)
    if dtype.kind not in "iu":
        raise DataFailure(f"input tensor type {dtype.name} is not supported")
    scale, zp = np.float32(quant["scale"]), np.float32(quant["zero_point"])
    info = np.iinfo(dtype)
    lo, hi = np.float32(info.min), np.float32(info.max)
    tmp = np.empty(batch_shape, np.float32)
    out = np.empty(batch_shape, dtype)
    # Plain ufuncs only: np.round and np.clip are Python-level wrappers that cost
    # microseconds per call, as much as a small model's invoke. np.rint rounds half
    # to even, exactly like np.round with 0 decimals.
    divide, rint, add, maximum, minimum, copyto = (np.divide, np.rint, np.add, np.maximum,
                                                   np.minimum, np.copyto)

    def quantize(x: np.ndarray) -> np.ndarray:
        divide(x, scale, out=tmp)
        rint(tmp, out=tmp)
        add(tmp, zp, out=tmp)
        maximum(tmp, lo, out=tmp)
        minimum(tmp, hi, out=tmp)
        copyto(out, tmp, casting="unsafe")
        return out

    return quantize


def dequantize(detail: dict, y: np.ndarray) -> np.ndarray:
    quant = detail["quant"]
    if quant is None or y.dtype.kind == "f":
        return y.astype(np.float32)
    return ((y.astype(np.float32) - np.float32(quant["zero_point"])) * np.float32(quant["scale"]))


def make_getter(interpreter, outputs: List[dict]) -> Callable[[], None]:
    """A function that fetches every output and dequantizes it into float32 buffers."""
    get_tensor = interpreter.get_tensor
    plans = []
    for d in outputs:
        buf = np.empty(d["shape"], np.float32)
        q = d["quant"]
        zp = np.float32(q["zero_point"]) if q else np.float32(0)
        scale = np.float32(q["scale"]) if q else np.float32(1)
        plans.append((d["index"], buf, zp, scale, q is not None))
    if len(plans) == 1 and plans[0][4]:
        index, buf, zp, scale, _ = plans[0]
        copyto, subtract, multiply = np.copyto, np.subtract, np.multiply

        def get_one() -> None:
            copyto(buf, get_tensor(index), casting="unsafe")
            subtract(buf, zp, out=buf)
            multiply(buf, scale, out=buf)

        return get_one

    def get_all() -> None:
        for index, buf, zp, scale, quantized in plans:
            np.copyto(buf, get_tensor(index), casting="unsafe")
            if quantized:
                buf -= zp
                buf *= scale

    return get_all


class Runner:
    """Runs the timed loops and ``infer`` for one loaded model and one input pool."""

    def __init__(self, model, pool: np.ndarray):
        self.model = model
        self.pool = pool
        self.batch = model.batch
        detail = model.inputs[0]
        self.in_index = detail["index"]
        self.quantize = make_quantizer(detail, [self.batch] + model.sample_shape())
        self.get = make_getter(model.interpreter, model.outputs)

    def _source(self, j: int) -> np.ndarray:
        """Samples j, j+1, ... (wrapping) as one batch, float32, still unquantized."""
        b, n = self.batch, len(self.pool)
        if j + b <= n:
            return self.pool[j:j + b]
        return self.pool.take(np.arange(j, j + b) % n, axis=0)

    def run(self, mode: str, count: int, max_time_s: float, rate_hz: Optional[float] = None,
            start_index: int = 0) -> Dict[str, np.ndarray]:
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
        stamps = [np.empty(count, np.int64) for _ in range(5)]
        max_ns = int(max_time_s * 1e9)
        if mode == "offline":
            done, t_begin = self._loop_offline(stamps, count, max_ns, start)
        else:
            done, t_begin = self._loop_stream(stamps, count, max_ns, start, sched)
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

    def _loop_stream(self, stamps, count, max_ns, start, sched):
        a0, a1, a2, a3, a4 = stamps
        pc = time.perf_counter_ns
        sleep = time.sleep
        source, quantize, get = self._source, self.quantize, self.get
        set_tensor = self.model.interpreter.set_tensor
        invoke = self.model.interpreter.invoke
        in_index, b, n_pool = self.in_index, self.batch, len(self.pool)
        j = start
        k = 0
        if sched is None:
            t_begin = pc()
            t_stop = t_begin + max_ns
            while k < count:
                t0 = pc()
                x = quantize(source(j))
                t1 = pc()
                set_tensor(in_index, x)
                t2 = pc()
                invoke()
                t3 = pc()
                get()
                t4 = pc()
                a0[k] = t0; a1[k] = t1; a2[k] = t2; a3[k] = t3; a4[k] = t4
                k += 1
                j = (j + b) % n_pool
                if t4 >= t_stop:
                    break
            return k, t_begin
        t_begin = pc() + SPIN_NS  # first request a little ahead: its start is then on time
        t_stop = t_begin + max_ns
        due_list = (sched + t_begin).tolist()
        while k < count:
            due = due_list[k]
            if due > t_stop:
                break
            wait = due - pc()
            if wait > SPIN_NS:
                sleep((wait - SPIN_NS) * 1e-9)
            while pc() < due:
                pass
            t0 = pc()
            x = quantize(source(j))
            t1 = pc()
            set_tensor(in_index, x)
            t2 = pc()
            invoke()
            t3 = pc()
            get()
            t4 = pc()
            a0[k] = t0; a1[k] = t1; a2[k] = t2; a3[k] = t3; a4[k] = t4
            k += 1
            j = (j + b) % n_pool
        return k, t_begin

    def _loop_offline(self, stamps, count, max_ns, start):
        a0, a1, a2, a3, a4 = stamps
        b, n_pool = self.batch, len(self.pool)
        prepared = {}
        order = []
        j = start
        for _ in range(count):  # every distinct batch quantized once, before timing
            if j in prepared:  # j -> j+b (mod n) is a bijection: back at the start
                break
            prepared[j] = self.quantize(self._source(j)).copy()
            order.append(prepared[j])
            j = (j + b) % n_pool
        period = len(order)
        pc = time.perf_counter_ns
        get = self.get
        set_tensor = self.model.interpreter.set_tensor
        invoke = self.model.interpreter.invoke
        in_index = self.in_index
        k = 0
        t_begin = pc()
        t_stop = t_begin + max_ns
        while k < count:
            x = order[k % period]
            t0 = pc()
            set_tensor(in_index, x)
            t2 = pc()
            invoke()
            t3 = pc()
            get()
            t4 = pc()
            a0[k] = t0; a1[k] = t0; a2[k] = t2; a3[k] = t3; a4[k] = t4
            k += 1
            if t4 >= t_stop:
                break
        return k, t_begin

    def infer(self, x: np.ndarray) -> Dict[str, np.ndarray]:
        """Outputs for every sample of x: ``y``/``y_float`` (output 0), ``y1``/``y1_float``..."""
        interp = self.model.interpreter
        b, n = self.batch, len(x)
        raw = [[] for _ in self.model.outputs]
        for j in range(0, n, b):
            chunk = x[j:j + b]
            if len(chunk) < b:  # pad the last batch, drop the padding's outputs
                chunk = np.concatenate([chunk, np.zeros((b - len(chunk),) + chunk.shape[1:], chunk.dtype)])
            interp.set_tensor(self.in_index, self.quantize(chunk))
            interp.invoke()
            for k, d in enumerate(self.model.outputs):
                raw[k].append(interp.get_tensor(d["index"])[: min(b, n - j)])
        result = {}
        for k, d in enumerate(self.model.outputs):
            y = np.concatenate(raw[k]) if raw[k] else np.empty([0] + d["shape"][1:], d["dtype"])
            name = "y" if k == 0 else f"y{k}"
            result[name] = y
            result[name + "_float"] = dequantize(d, y)
        return result
