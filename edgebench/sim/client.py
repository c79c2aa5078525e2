"""A simulated board behind the same client interface as ``AgentClient`` (level 2).

:class:`SimClient` answers the agent protocol's requests (``request(op, payload,
**args)`` returning ``(header, payload bytes)``, and the same convenience methods:
``hello``, ``sysinfo``, ``thermal``, ``status``, ``ensure_model``, ``load``,
``set_inputs``, ``run``, ``close``...) from :class:`~edgebench.sim.physics.SimBoard`
instead of a device. Differences a caller can see:

* ``hello()["timing"] == "simulated"``: every figure of a run on it is labelled
  ``simulated`` (``edgebench.bench.describe.figure_label``), never ``measured``;
* the clock is simulated: ``run`` returns per-inference arrays whose stamps
  advance deterministically, without sleeping (``max_time_s`` is simulated time);
* ``load`` describes the model's tensors from the file but runs nothing; the
  latency comes from the board's model (``SimParams``), not from the model's
  cost; ``infer`` is refused (there are no outputs to give).

Telemetry (``run(..., telemetry={...})`` and the ``telemetry`` op) follows the
agent protocol: samples between inferences once the interval has elapsed,
channels named like a Raspberry Pi's (``thermal_zone0.temp_c``,
``policy0.cur_freq_hz``, ``vcgencmd.throttled``...) plus a simulated power sensor.
"""
from __future__ import annotations

import hashlib
import sys
from typing import Any, Optional

import numpy as np

from edgebench import __version__, errors
from edgebench import board_protocol as bp
from edgebench.agent import protocol
from edgebench.agent.channels import (
    DEFAULT_INTERVAL_S,
    MAX_IDLE_S,
    MAX_INTERVAL_S,
    MIN_INTERVAL_S,
    SOURCES,
    governor_channel,
)
from edgebench.modelfile import parse_model
from edgebench.sim.params import SimParams
from edgebench.sim.physics import SimBoard

_MODES = ("single-stream", "offline", "fixed-rate")
_STAGE_SHARE = (0.04, 0.01, 0.02)  # prep, set, get as fractions of an inference; invoke is the rest


class _SimSampler:
    """Telemetry schedule and buffers of the simulated agent."""

    def __init__(self, board: SimBoard, sources, interval_s: float):
        self.board = board
        self.interval_ns = int(interval_s * 1e9)
        self.interval_s = interval_s
        self.sources = tuple(s for s in SOURCES if sources is None or s in sources)
        chans = board.channels()
        self.keep = [i for i, c in enumerate(chans) if c["source"] in self.sources]
        self.channels = [chans[i] for i in self.keep]
        self.text = ["policy0.governor"] if "cpufreq" in self.sources else []
        self.cost_ns = max(0, int(round(board.p.sample_cost_s * 1e9)))
        self.t_next = 0
        self.t: list = []
        self.cost: list = []
        self.rows: list = []

    def sample(self, busy: bool) -> None:
        b = self.board
        t0 = b.now_ns
        row = b.sample_row(busy)
        self.rows.append([row[i] for i in self.keep])
        b.advance(self.cost_ns, 1.0)
        self.t.append(t0)
        self.cost.append(self.cost_ns)
        self.t_next = t0 + self.interval_ns

    def take(self) -> tuple[dict, dict]:
        n, c = len(self.t), len(self.channels)
        gov = self.board.p.governor
        arrays = {"tm_t_ns": np.array(self.t, np.int64), "tm_cost_ns": np.array(self.cost, np.int64),
                  "tm_values": np.array(self.rows, np.float64).reshape(n, c),
                  "tm_text": np.full((n, len(self.text)), gov, dtype=f"<U{max(len(gov), 1)}")}
        summary = {"n": n, "cost_ns": int(sum(self.cost)), "interval_s": self.interval_s,
                   "channels": [ch["name"] for ch in self.channels], "text_channels": list(self.text)}
        self.t, self.cost, self.rows = [], [], []
        return summary, arrays

    def describe(self) -> dict:
        text = [governor_channel("policy0")] if self.text else []
        static = {k: v for k, v in self.board.static().items() if v["source"] in self.sources}
        return {"clock": "perf_counter_ns (simulated)", "interval_s": self.interval_s,
                "vcgencmd_interval_s": self.interval_s if "vcgencmd" in self.sources else None,
                "sources": list(self.sources),
                "found": {s: sum(c["source"] == s for c in self.channels) + (s == "cpufreq" and bool(self.text))
                          for s in self.sources},
                "channels": list(self.channels), "text_channels": text, "static": static}


class SimClient:
    """Requests to a simulated board (a :class:`~edgebench.board_protocol.BoardClient`); see the
    module docstring. It models time, heat and power, not outputs: no :data:`~bp.OUTPUTS`."""

    capabilities = frozenset({bp.FIXED_RATE, bp.SCHEDULE_CONTINUATION, bp.TELEMETRY, bp.ENERGY_COUNTER})

    def __init__(self, params: Optional[SimParams] = None, description: Optional[str] = None,
                 seed: Optional[int] = None, timeout_s: float = 60.0):
        self.params = params or SimParams()
        self.board = SimBoard(self.params, seed=seed)
        self.description = description or f"simulated board ({self.params.title})"
        self.timeout_s = timeout_s
        self.noise: list = []
        self.models: dict[str, bytes] = {}
        self._files: dict = {}     # sha256 -> the ModelFile ensure_model was given (parsed once)
        self.model: Any = None     # edgebench ModelFile of the loaded model
        self.batch = 1
        self.pool: Optional[np.ndarray] = None
        self.sampler: Optional[_SimSampler] = None
        self._sampler_key: Optional[tuple] = None
        self._closed = False

    # -- the request/response cycle ----------------------------------------------------
    def request(self, op: str, payload: bytes = b"", *, doing: Optional[str] = None,
                timeout_s: Optional[float] = None, **args: Any) -> tuple[dict, bytes]:
        """One request, answered as the agent would: ``(header, npz payload bytes)``."""
        header, arrays = self.request_arrays(op, payload, **args)
        return header, (protocol.encode_arrays(arrays) if arrays else b"")

    def request_arrays(self, op: str, payload: bytes = b"", *, doing: Optional[str] = None,
                       timeout_s: Optional[float] = None, **args: Any) -> tuple[dict, dict]:
        """Like :meth:`request`, with the payload's arrays not packed into npz bytes (faster)."""
        if self._closed:
            raise errors.AgentError(f"{self.description} cannot be used any more (closed)")
        fn = getattr(self, "_op_" + op.replace("-", "_"), None)
        if fn is None:
            raise errors.AgentError(f"unknown op {op!r}", hint="host and agent versions differ")
        try:
            header, arrays = fn(payload, **args)
        except TypeError as exc:
            if "argument" in str(exc):
                raise errors.UsageError(f"bad arguments for {op}: {exc}") from None
            raise
        return dict(header), dict(arrays or {})

    # -- ops ---------------------------------------------------------------------------
    def _op_hello(self, payload):
        return {"protocol": protocol.PROTOCOL_VERSION, "agent_version": f"sim {__version__}",
                "python": sys.version.split()[0], "numpy": np.__version__,
                "runtime": {"name": "simulated", "version": __version__}, "runtime_error": None,
                "pid": None, "cache_dir": None, "timing": "simulated", "features": ["telemetry"],
                "telemetry_sources": list(SOURCES), "telemetry_max_hz": 1 / MIN_INTERVAL_S,
                "simulated": self.params.to_dict()}, None

    def _op_sysinfo(self, payload):
        p, b = self.params, self.board
        system = {
            "os": {"system": "simulated", "kernel": None, "machine": "sim"},
            "cpu": {"model_name": f"simulated CPU ({p.title})", "logical_cpus": p.cpus},
            "board": {"model": f"{p.title} (simulated)"},
            "cpufreq": {"policies": {"policy0": {
                "scaling_cur_freq_hz": int(b.freq_hz), "scaling_min_freq_hz": int(p.freqs_hz[0]),
                "scaling_max_freq_hz": int(b.freq_hz), "cpuinfo_min_freq_hz": int(p.freqs_hz[0]),
                "cpuinfo_max_freq_hz": int(p.f_max), "governor": p.governor, "cpus": list(range(p.cpus))}}},
            "thermal": {"zones": {"thermal_zone0": {"type": "cpu-thermal", "temp_c": b.read_sensor()}}},
            "simulated": {**p.to_dict(), "tau_s": p.tau_s},
        }
        return {"system": system, "collector_errors": {}}, None

    def _op_thermal(self, payload):
        return self.board.snapshot(), None

    def _op_status(self, payload):
        return {"rss_bytes": None, "maxrss_bytes": None, "model_loaded": self.model is not None,
                "pool": 0 if self.pool is None else len(self.pool), "simulated_energy_j": self.board.energy_j,
                "clock_ns": self.board.now_ns}, None

    def _op_has_model(self, payload, sha256):
        return {"present": sha256 in self.models}, None

    def _op_put_model(self, payload, sha256):
        digest = hashlib.sha256(payload).hexdigest()
        if digest != sha256:
            raise errors.TransportError(f"model bytes arrived with sha256 {digest[:12]}..., expected {sha256[:12]}...")
        self.models[sha256] = bytes(payload)
        return {"stored": True, "bytes": len(payload)}, None

    def _op_load(self, payload, sha256, kernels="xnnpack", threads=1, delegate=None, batch=1):
        if sha256 not in self.models:
            raise errors.ModelError(f"model {sha256[:12]}... is not on the agent", hint="put_model first")
        self.model = self._files.get(sha256) or parse_model(self.models[sha256], path=f"<simulated {sha256[:12]}>")
        self.batch = int(batch)
        self.pool = None

        def detail(i, t):
            d = t.to_dict()
            d.update(index=i, shape_signature=list(t.shape))
            if self.batch > 1 and d["shape"]:
                d["shape"] = [self.batch] + list(d["shape"][1:])
            return d

        load_ns = int(0.05e9)
        self.board.advance(load_ns, 0.5)
        return {"load_s": load_ns / 1e9, "inputs": [detail(i, t) for i, t in enumerate(self.model.inputs)],
                "outputs": [detail(i, t) for i, t in enumerate(self.model.outputs)],
                "runtime": {"name": "simulated", "version": self._op_hello(b"")[0]["runtime"]["version"]},
                "kernels": kernels, "op_resolver": None, "threads": threads, "delegate": delegate,
                "batch": self.batch, "batch_resizable": True}, None

    def _op_set_inputs(self, payload):
        if self.model is None:
            raise errors.UsageError("no model is loaded", hint="load a model first")
        x = protocol.decode_arrays(payload).get("x")
        if x is None or len(x) == 0:
            raise errors.DataError("the payload must hold a non-empty array 'x'")
        want = list(self.model.inputs[0].shape[1:])
        if list(x.shape[1:]) != want:
            raise errors.DataError(f"input shape {list(x.shape)} does not fit the model: expected "
                                   f"[N, {', '.join(str(s) for s in want)}]")
        self.pool = np.asarray(x, np.float32)
        return {"count": len(self.pool)}, None

    def _op_infer(self, payload):
        raise errors.UsageError("the simulated board computes no outputs (it models time, heat and power)",
                                hint="run accuracy on a real board or on host")

    def _op_shutdown(self, payload):
        return {}, None

    def _op_telemetry(self, payload, sources=None, interval_s=None, vcgencmd_interval_s=None, duration_s=0.0):
        s = self._sampler({"sources": sources, "interval_s": interval_s})
        if isinstance(duration_s, bool) or not isinstance(duration_s, (int, float)) \
                or not 0 <= duration_s <= MAX_IDLE_S:
            raise errors.UsageError(f"duration_s must be in [0, {MAX_IDLE_S:g}] seconds, got {duration_s!r}")
        b = self.board
        if duration_s:
            end = b.now_ns + int(duration_s * 1e9)
            while True:
                if b.now_ns >= s.t_next:
                    s.sample(busy=False)
                if s.t_next > end:
                    b.advance_to(end, 0.0)
                    break
                b.advance_to(s.t_next, 0.0)
        else:
            s.sample(busy=False)
        summary, arrays = s.take()
        return {**s.describe(), "n": summary["n"], "cost_ns": summary["cost_ns"]}, arrays

    def _sampler(self, spec) -> _SimSampler:
        if not isinstance(spec, dict):
            raise errors.UsageError(f"telemetry must be an object {{sources, interval_s}}, got {spec!r}")
        sources = spec.get("sources")
        if sources is not None and (not isinstance(sources, (list, tuple)) or set(sources) - set(SOURCES)):
            raise errors.UsageError(f"unknown telemetry source(s) in {sources!r}; known: {', '.join(SOURCES)}")
        interval = spec.get("interval_s")
        interval = DEFAULT_INTERVAL_S if interval is None else interval
        if isinstance(interval, bool) or not isinstance(interval, (int, float)) \
                or not MIN_INTERVAL_S <= interval <= MAX_INTERVAL_S:
            raise errors.UsageError(f"telemetry interval_s must be in [{MIN_INTERVAL_S:g}, {MAX_INTERVAL_S:g}], "
                                    f"got {interval!r}", hint="at most 10 samples per second")
        key = (tuple(sources) if sources is not None else None, float(interval))
        if self.sampler is None or key != self._sampler_key:
            self.sampler, self._sampler_key = _SimSampler(self.board, sources, float(interval)), key
        return self.sampler

    def _op_run(self, payload, mode, count, max_time_s, rate_hz=None, start_index=0, telemetry=None,
                start_ns=None):
        if self.pool is None:
            raise errors.UsageError("no inputs are set", hint="set_inputs first")
        if mode not in _MODES:
            raise errors.UsageError(f"unknown run mode {mode!r}; choose one of {', '.join(_MODES)}")
        if not isinstance(count, int) or not 1 <= count <= 1_000_000:
            raise errors.UsageError(f"count must be an integer in 1..1000000, got {count!r}")
        if not max_time_s or max_time_s <= 0:
            raise errors.UsageError(f"max_time_s must be positive, got {max_time_s!r}")
        if mode == "fixed-rate" and not (rate_hz and rate_hz > 0):
            raise errors.UsageError(f"fixed-rate needs a positive rate_hz, got {rate_hz!r}")
        # a simulated board idles through any gap (its clock is simulated): no limit on how far ahead
        if start_ns is not None and (mode != "fixed-rate" or isinstance(start_ns, bool)
                                     or not isinstance(start_ns, int)):
            raise errors.UsageError(f"start_ns must be a device time, for fixed-rate only; got {start_ns!r}")
        sampler = self._sampler(telemetry) if telemetry is not None else None
        b = self.board
        if sampler is not None and b.now_ns >= sampler.t_next:
            sampler.sample(busy=True)
        batch = self.batch if mode == "offline" else 1
        t_begin = b.now_ns
        t_stop = t_begin + int(max_time_s * 1e9)
        starts, lats, sched = [], [], []
        k = 0
        if mode == "fixed-rate":
            period = 1e9 / float(rate_hz)
            t_begin = b.now_ns + 200_000 if start_ns is None else int(start_ns)
            t_stop = t_begin + int(max_time_s * 1e9)
        while k < count:
            seg_end = b.next_poll_ns if sampler is None else min(b.next_poll_ns, sampler.t_next)
            if mode == "fixed-rate":
                due0 = t_begin + int(round(k * period))
                m = 1 if seg_end <= due0 else int(np.ceil((seg_end - due0) / period))
                m = min(max(m, 1), count - k)
                due = t_begin + np.round((k + np.arange(m)) * period).astype(np.int64)
                keep = int(np.searchsorted(due, t_stop, side="right"))  # a request due after the stop is not run
                stop = keep < m
                if keep == 0:
                    break
                due = due[:keep]
                lat = b.latencies_ns(keep)
                # start_i = max(due_i, end_(i-1)): a running maximum over due_j - (work before j)
                cum = np.concatenate([[0], np.cumsum(lat)[:-1]])
                st = np.maximum(np.maximum.accumulate(due - cum), b.now_ns) + cum
                if b.trace is None:  # the busy fraction of the span is all thermal integration needs
                    b.advance_to(int(st[0]), 0.0)
                    span = int(st[-1] + lat[-1]) - b.now_ns
                    b.advance(span, min(1.0, float(lat.sum()) / span))
                else:  # a meter records: busy during each inference, idle between them
                    for s_i, l_i in zip(st.tolist(), lat.tolist()):
                        b.advance_to(int(s_i), 0.0)
                        b.advance(int(l_i), 1.0)
                sched.append(due)
            else:
                mean = b.p.latency_at(b.freq_hz) * batch * 1e9
                m = min(max(1, int((seg_end - b.now_ns) / mean) + 1), count - k)
                lat = b.latencies_ns(m, batch)
                st = b.now_ns + np.concatenate([[0], np.cumsum(lat)[:-1]])
                ends = st + lat
                keep = max(1, int(np.searchsorted(st, seg_end, side="left")))
                first_stop = int(np.searchsorted(ends, t_stop, side="left"))
                stop = first_stop < keep
                if stop:
                    keep = first_stop + 1
                st, lat = st[:keep], lat[:keep]
                b.advance(int(st[-1] + lat[-1]) - b.now_ns, 1.0)
            starts.append(st)
            lats.append(lat)
            k += len(st)
            if stop:
                break
            if sampler is not None and b.now_ns >= sampler.t_next:
                sampler.sample(busy=True)
        t0 = np.concatenate(starts).astype(np.int64) if starts else np.zeros(0, np.int64)
        e2e = np.concatenate(lats).astype(np.int64) if lats else np.zeros(0, np.int64)
        prep = np.round(e2e * _STAGE_SHARE[0]).astype(np.int64) if mode != "offline" else np.zeros_like(e2e)
        set_ = np.round(e2e * _STAGE_SHARE[1]).astype(np.int64)
        get = np.round(e2e * _STAGE_SHARE[2]).astype(np.int64)
        n_pool = len(self.pool)
        arrays = {"t_start_ns": t0, "prep_ns": prep, "set_ns": set_, "invoke_ns": e2e - prep - set_ - get,
                  "get_ns": get, "e2e_ns": e2e,
                  "input_index": (int(start_index) + np.arange(len(t0), dtype=np.int64) * batch) % n_pool}
        if sched:
            arrays["scheduled_ns"] = np.concatenate(sched).astype(np.int64)
        header = {"n": int(len(t0)), "clock": "perf_counter_ns (simulated)",
                  "elapsed_s": (b.now_ns - t_begin) / 1e9, "batch": batch, "mode": mode}
        if sampler is not None:
            header["telemetry"], tm = sampler.take()
            arrays.update(tm)
        return header, arrays

    # -- the AgentClient methods -------------------------------------------------------
    def hello(self) -> dict:
        return self.request("hello")[0]

    def sysinfo(self) -> dict:
        return self.request("sysinfo")[0]

    def thermal(self) -> dict:
        return self.request("thermal")[0]

    def status(self) -> dict:
        return self.request("status")[0]

    def has_model(self, sha256: str) -> bool:
        return bool(self.request("has_model", sha256=sha256)[0]["present"])

    def put_model(self, sha256: str, model_bytes: bytes) -> dict:
        return self.request("put_model", model_bytes, sha256=sha256)[0]

    def ensure_model(self, model) -> str:
        """Keep ``model`` (a ModelFile, hashed when it was read): nothing travels, nothing is rehashed."""
        if not self.has_model(model.sha256):
            self.models[model.sha256] = model.content
            self._files[model.sha256] = model
        return model.sha256

    def load(self, sha256: str, kernels: str = "xnnpack", threads: int = 1, delegate: Optional[str] = None,
             batch: int = 1, name: Optional[str] = None, preserve_all_tensors: bool = False) -> dict:
        if preserve_all_tensors:
            bp.require(self, bp.TENSORS, "keeping intermediate tensors")
        return self.request("load", sha256=sha256, kernels=kernels, threads=threads, delegate=delegate,
                            batch=batch)[0]

    def set_inputs(self, x: np.ndarray) -> int:
        payload = protocol.encode_arrays({"x": np.asarray(x, dtype=np.float32)})
        return int(self.request("set_inputs", payload)[0]["count"])

    def run(self, mode: str, count: int, max_time_s: float, rate_hz: Optional[float] = None,
            start_index: int = 0, start_ns: Optional[int] = None) -> tuple[dict, dict]:
        """As the agent's: ``start_ns`` continues a fixed-rate schedule on the device clock."""
        more: dict[str, Any] = {"start_ns": int(start_ns)} if start_ns is not None else {}
        header, body = self.request("run", mode=mode, count=int(count), max_time_s=float(max_time_s),
                                    rate_hz=rate_hz, start_index=int(start_index), **more)
        return header, protocol.decode_arrays(body)

    def infer(self, x):
        out = self.infer_all(x)
        return out["y"], out["y_float"]

    def infer_all(self, x):
        self.request("infer")
        return {}  # pragma: no cover - request raises

    def shutdown(self) -> None:
        pass

    def close(self) -> None:
        self._closed = True

    def __enter__(self) -> "SimClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
