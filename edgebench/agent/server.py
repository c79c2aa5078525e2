"""The agent's request loop (protocol: docs/agent-protocol.md).

``python -m edgebench.agent [--cache-dir DIR] [--tty /dev/ttyS0 --baud 115200]``

Serves requests on stdin/stdout (or on a serial device) until ``shutdown`` or
end of input. Before serving, the real stdout is moved to a private descriptor
and fd 1 is pointed at stderr, so that whatever a native runtime prints cannot
corrupt the protocol stream.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
import termios
import time
import tty
from typing import Optional, Tuple

import numpy as np

from . import __version__, channels, protocol, sysinfo, telemetry, tools
from .loop import Runner
from .protocol import AgentFailure, DataFailure, ModelFailure, TransferFailure, UsageFailure
from .runtime import LoadedModel, runtime_summary

DEFAULT_CACHE = os.path.join("~", ".cache", "edgebench", "agent")
#: what this agent offers beyond protocol 1's first ops (hello's "features"; docs/agent-protocol.md)
FEATURES = ("telemetry", "tensors", "benchmark-model")
_BAUD_NAMES = ("B9600", "B19200", "B38400", "B57600", "B115200", "B230400", "B460800",
               "B500000", "B576000", "B921600", "B1000000", "B1500000", "B2000000", "B3000000")


class FdStream:
    """Blocking reads and writes on raw file descriptors, with a read buffer."""

    def __init__(self, in_fd: int, out_fd: int):
        self.in_fd, self.out_fd = in_fd, out_fd
        self.buf = bytearray()
        self.eof = False

    def _more(self) -> bool:
        if self.eof:
            return False
        chunk = os.read(self.in_fd, 1 << 16)
        if not chunk:
            self.eof = True
            return False
        self.buf += chunk
        return True

    def read_line(self, max_bytes: int) -> bytes:
        start = 0
        while True:
            idx = self.buf.find(b"\n", start)
            if idx >= 0 or len(self.buf) >= max_bytes:
                end = idx + 1 if idx >= 0 else max_bytes
                line = bytes(self.buf[:end])
                del self.buf[:end]
                return line
            start = len(self.buf)
            if not self._more():
                line = bytes(self.buf)
                self.buf.clear()
                return line

    def read_exact(self, n: int) -> bytes:
        while len(self.buf) < n:
            if not self._more():
                raise protocol.EndOfStream()
        data = bytes(self.buf[:n])
        del self.buf[:n]
        return data

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.out_fd, view):]


class Agent:
    """Request handlers; state: model cache, loaded model, input pool."""

    def __init__(self, cache_dir: str):
        self.cache_dir = os.path.abspath(os.path.expanduser(cache_dir))
        self.model: Optional[LoadedModel] = None
        self.runner: Optional[Runner] = None
        self.running = True
        self.sampler: Optional[telemetry.Sampler] = None
        self._sampler_key: Optional[tuple] = None

    def handle(self, header: dict, payload: bytes) -> Tuple[dict, bytes]:
        op = header.get("op")
        fn = getattr(self, "op_" + str(op).replace("-", "_"), None)
        if fn is None:
            raise AgentFailure(f"unknown op {op!r}", hint="host and agent versions differ; update the agent")
        args = {k: v for k, v in header.items() if k not in ("id", "op", "payload_bytes")}
        try:
            return fn(payload, **args)
        except TypeError as exc:
            if "argument" in str(exc) and f"op_{op}" in str(exc):
                raise UsageFailure(f"bad arguments for {op}: {exc}") from exc
            raise

    # -- information ----------------------------------------------------------------
    def op_hello(self, payload):
        runtime, error = runtime_summary()
        return {"protocol": protocol.PROTOCOL_VERSION, "agent_version": __version__,
                "python": sys.version.split()[0], "numpy": np.__version__, "runtime": runtime,
                "runtime_error": error, "pid": os.getpid(), "cache_dir": self.cache_dir,
                "features": list(FEATURES), "telemetry_sources": list(channels.SOURCES),
                "telemetry_max_hz": 1 / channels.MIN_INTERVAL_S,
                "clock": "time.perf_counter_ns",
                "clock_resolution_s": time.get_clock_info("perf_counter").resolution}, b""

    def op_sysinfo(self, payload):
        return sysinfo.collect(), b""

    def op_thermal(self, payload):
        return sysinfo.thermal_snapshot(), b""

    def op_status(self, payload):
        rss = None
        try:
            with open("/proc/self/statm") as f:
                rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            pass
        maxrss = None
        try:
            import resource  # Unix only: absent elsewhere

            ru = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            maxrss = ru if sys.platform == "darwin" else ru * 1024
        except ImportError:
            pass
        hwm = None   # VmHWM: this process's peak resident memory (ru_maxrss survives exec: the parent's peak)
        try:
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        hwm = int(line.split()[1]) * 1024
                        break
        except (OSError, ValueError, IndexError):
            pass
        return {"rss_bytes": rss if rss is not None else maxrss, "maxrss_bytes": maxrss, "hwm_bytes": hwm,
                "model_loaded": self.model is not None,
                "pool": len(self.runner.pool) if self.runner else 0}, b""

    # -- models ---------------------------------------------------------------------
    def _model_path(self, sha256) -> str:
        if not isinstance(sha256, str) or len(sha256) != 64 or not all(c in "0123456789abcdef" for c in sha256):
            raise UsageFailure(f"sha256 must be 64 lowercase hex digits, got {sha256!r}")
        return os.path.join(self.cache_dir, sha256 + ".tflite")

    def op_has_model(self, payload, sha256):
        return {"present": os.path.isfile(self._model_path(sha256))}, b""

    def op_put_model(self, payload, sha256):
        path = self._model_path(sha256)
        digest = hashlib.sha256(payload).hexdigest()
        if digest != sha256:
            raise TransferFailure(f"model bytes arrived with sha256 {digest[:12]}..., expected {sha256[:12]}...",
                                  hint="the link corrupted the transfer; retry")
        os.makedirs(self.cache_dir, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(payload)
        os.replace(tmp, path)
        return {"stored": True, "bytes": len(payload)}, b""

    def _cached(self, sha256) -> str:
        path = self._model_path(sha256)
        if not os.path.isfile(path):
            raise ModelFailure(f"model {sha256[:12]}... is not on the agent", hint="put_model first")
        return path

    def op_load(self, payload, sha256, kernels="xnnpack", threads=1, delegate=None, batch=1,
                preserve_all_tensors=False):
        path = self._cached(sha256)
        self.model = self.runner = None
        self.model = LoadedModel(path, kernels=kernels, threads=threads, delegate=delegate, batch=batch,
                                 preserve_all_tensors=bool(preserve_all_tensors))
        return self.model.describe(), b""

    # -- inputs and inference -------------------------------------------------------
    def _need_model(self) -> LoadedModel:
        if self.model is None:
            raise UsageFailure("no model is loaded", hint="load a model first")
        return self.model

    def _samples(self, payload: bytes) -> np.ndarray:
        model = self._need_model()
        arrays = protocol.decode_arrays(payload)
        if "x" not in arrays:
            raise DataFailure(f"the payload must hold an array 'x' (got {sorted(arrays)})")
        x = arrays["x"]
        want = model.sample_shape()
        if x.ndim != len(want) + 1 or list(x.shape[1:]) != want:
            raise DataFailure(f"input shape {list(x.shape)} does not fit the model: expected "
                              f"[N, {', '.join(str(s) for s in want)}]")
        if x.dtype.kind not in "fiub":
            raise DataFailure(f"input dtype {x.dtype} is not numeric")
        if len(x) == 0:
            raise DataFailure("no input samples (N = 0)")
        return np.ascontiguousarray(x, dtype=np.float32)

    def op_set_inputs(self, payload):
        pool = self._samples(payload)
        self.runner = Runner(self.model, pool)
        return {"count": len(pool)}, b""

    def op_run(self, payload, mode, count, max_time_s, rate_hz=None, start_index=0, telemetry=None,
               start_ns=None):
        if self.runner is None:
            raise UsageFailure("no inputs are set", hint="set_inputs first")
        sampler = self._telemetry(telemetry) if telemetry is not None else None
        t0 = time.perf_counter()
        arrays = self.runner.run(mode, count, max_time_s, rate_hz=rate_hz, start_index=start_index,
                                 sampler=sampler, start_ns=start_ns)
        elapsed = time.perf_counter() - t0
        header = {"n": int(len(arrays["e2e_ns"])), "clock": "perf_counter_ns", "elapsed_s": elapsed,
                  "batch": self.runner.batch, "mode": mode, "prep": self.runner.last_prep}
        if sampler is not None:
            header["telemetry"], tm = sampler.take()
            arrays.update(tm)
        return header, protocol.encode_arrays(arrays)

    # -- telemetry ------------------------------------------------------------------
    def _telemetry(self, spec) -> "telemetry.Sampler":
        """The sampler for ``spec`` ({sources, interval_s, vcgencmd_interval_s}), kept between requests
        so that its schedule runs on across chunks."""
        if not isinstance(spec, dict):
            raise UsageFailure(f"telemetry must be an object {{sources, interval_s}}, got {spec!r}")
        unknown = set(spec) - {"sources", "interval_s", "vcgencmd_interval_s"}
        if unknown:
            raise UsageFailure(f"unknown telemetry option(s) {sorted(unknown)}")
        sources = spec.get("sources")
        key = (tuple(sources) if isinstance(sources, list) else sources, spec.get("interval_s"),
               spec.get("vcgencmd_interval_s"))
        if self.sampler is None or key != self._sampler_key:
            if self.sampler is not None:
                self.sampler.close()
            self.sampler = None
            self.sampler = telemetry.Sampler(sources=sources, interval_s=spec.get("interval_s"),
                                             vcgencmd_interval_s=spec.get("vcgencmd_interval_s"))
            self._sampler_key = key
        self.sampler.take()  # a response holds only the samples taken while answering it
        return self.sampler

    def op_telemetry(self, payload, sources=None, interval_s=None, vcgencmd_interval_s=None, duration_s=0.0):
        """One sample now (duration_s 0), or samples at the interval while idle for duration_s."""
        sampler = self._telemetry({"sources": sources, "interval_s": interval_s,
                                   "vcgencmd_interval_s": vcgencmd_interval_s})
        if isinstance(duration_s, bool) or not isinstance(duration_s, (int, float)) \
                or not 0 <= duration_s <= channels.MAX_IDLE_S:
            raise UsageFailure(f"duration_s must be in [0, {channels.MAX_IDLE_S:g}] seconds, got {duration_s!r}")
        if duration_s:
            sampler.idle(float(duration_s))
        else:
            sampler.sample()
        summary, arrays = sampler.take()
        return {**sampler.describe(), "n": summary["n"], "cost_ns": summary["cost_ns"]}, \
            protocol.encode_arrays(arrays)

    def op_infer(self, payload):
        x = self._samples(payload)
        runner = self.runner if self.runner is not None else Runner(self.model, x[:1])
        out = runner.infer(x)
        return {"n": len(x)}, protocol.encode_arrays(out)

    def op_tensors(self, payload, indices):
        """Each sample's listed tensors after its invoke (feature ``tensors``)."""
        x = self._samples(payload)
        return {"n": len(x)}, protocol.encode_arrays(tools.capture_tensors(self._need_model(), x, indices))

    def op_benchmark_model(self, payload, sha256, binary=None, threads=1, kernels="xnnpack", runs=50,
                           warmup_runs=5, delegate=None, max_time_s=600.0):
        """LiteRT's benchmark_model on a cached model, operator profiling as a protocol buffer
        (feature ``benchmark-model``)."""
        return tools.run_benchmark_model(self._cached(sha256), binary, threads=threads, kernels=kernels,
                                         runs=runs, warmup_runs=warmup_runs, delegate=delegate,
                                         timeout_s=float(max_time_s))

    def op_shutdown(self, payload):
        self.running = False
        return {}, b""


def serve(stream: FdStream, agent: Agent) -> int:
    while agent.running:
        try:
            header, payload = protocol.read_message(stream.read_line, stream.read_exact)
        except protocol.EndOfStream:
            return 0
        except AgentFailure as exc:  # framing broken: answer once, keep reading
            stream.write(protocol.encode_message({"id": None, "ok": False, "error": exc.to_dict()}))
            continue
        rid = header.get("id")
        try:
            result, out = agent.handle(header, payload)
            response = {"id": rid, "ok": True}
            response.update(result)
        except AgentFailure as exc:
            response, out = {"id": rid, "ok": False, "error": exc.to_dict()}, b""
        except MemoryError:
            response, out = {"id": rid, "ok": False, "error": AgentFailure(
                "the agent ran out of memory", hint="use fewer input samples or a smaller model").to_dict()}, b""
        except Exception as exc:  # never let one request kill the agent
            response, out = {"id": rid, "ok": False, "error": AgentFailure(
                f"{header.get('op')} failed: {type(exc).__name__}: {exc}").to_dict()}, b""
        stream.write(protocol.encode_message(response, out))
    return 0


def open_tty(path: str, baud: int) -> int:
    fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
    tty.setraw(fd, termios.TCSANOW)  # TCSAFLUSH would drop a request already waiting
    attrs = termios.tcgetattr(fd)
    speed = getattr(termios, f"B{baud}", None)
    if speed is None:
        raise SystemExit(f"edgebench agent: unsupported baud rate {baud} "
                         f"(use one of {', '.join(b[1:] for b in _BAUD_NAMES if hasattr(termios, b))})")
    attrs[4] = attrs[5] = speed
    termios.tcsetattr(fd, termios.TCSANOW, attrs)
    return fd


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="edgebench-agent", description=__doc__.splitlines()[0])
    parser.add_argument("--tty", help="serve on this serial device instead of stdin/stdout")
    parser.add_argument("--baud", type=int, default=115200, help="baud rate with --tty")
    parser.add_argument("--cache-dir", default=os.environ.get("EDGEBENCH_AGENT_CACHE", DEFAULT_CACHE),
                        help="model cache (by sha256); default %(default)s")
    parser.add_argument("--cpus", help="pin the agent to these CPUs, e.g. 0 or 2,3 (Linux; the "
                        "affinity is reported by sysinfo)")
    parser.add_argument("--version", action="version", version=f"edgebench agent {__version__} "
                        f"(protocol {protocol.PROTOCOL_VERSION})")
    args = parser.parse_args(argv)
    if args.cpus:
        pin_cpus(args.cpus)
    sys.stdout.flush()
    restore = None
    if args.tty:
        fd = open_tty(args.tty, args.baud)
        stream = FdStream(fd, fd)
    else:
        stream = FdStream(0, os.dup(1))  # the protocol's private stdout
        restore = raw_stdin()
    os.dup2(2, 1)  # anything printed to fd 1 from now on lands on stderr
    try:
        return serve(stream, Agent(args.cache_dir))
    except (BrokenPipeError, ConnectionResetError):
        return 0
    except KeyboardInterrupt:
        return 130
    finally:
        if restore is not None:
            restore()


def pin_cpus(text: str) -> None:
    """Restrict this process (and the runtime's threads) to the CPUs in ``text`` ("0", "2,3")."""
    try:
        cpus = {int(c) for c in text.split(",") if c.strip()}
        os.sched_setaffinity(0, cpus)
    except (ValueError, OSError, AttributeError) as exc:
        print(f"edgebench agent: cannot pin to CPUs {text!r}: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def raw_stdin():
    """On a console (stdin is a terminal), switch it to raw mode: no echo, no CR/LF mangling."""
    if not os.isatty(0):
        return None

    saved = termios.tcgetattr(0)
    tty.setraw(0, termios.TCSANOW)
    return lambda: termios.tcsetattr(0, termios.TCSADRAIN, saved)


if __name__ == "__main__":
    sys.exit(main())
