"""The host side of the agent protocol (level 2), spoken over any Channel.

:class:`AgentClient` sends one request at a time and waits for its answer with
a deadline, so it never hangs: a dead or silent agent becomes an
:class:`~edgebench.errors.AgentError` that says what was being done and why it
failed (exit status, stderr tail). An ``ok: false`` answer becomes the
edgebench error class the agent named, with its message and hint.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from edgebench import board_protocol as bp
from edgebench import errors
from edgebench.agent import protocol
from edgebench.transport.base import Channel

if TYPE_CHECKING:
    from edgebench.modelfile import ModelFile

_ERROR_TYPES = {
    "ModelError": errors.ModelError,
    "DataError": errors.DataError,
    "UsageError": errors.UsageError,
    "RuntimeMissingError": errors.RuntimeMissingError,
    "TransportError": errors.TransportError,
    "AgentError": errors.AgentError,
}


class AgentClient:
    """Requests to one agent (a :class:`~edgebench.board_protocol.BoardClient`). ``timeout_s``
    bounds every wait for an answer (a ``run`` may take its ``max_time_s`` on top)."""

    def __init__(self, channel: Channel, description: str, timeout_s: float = 60.0):
        self.channel = channel
        self.description = description
        self.timeout_s = timeout_s
        self.noise: list[bytes] = []  # non-protocol lines the agent's side printed
        self._next_id = 1
        self._broken: str | None = None
        self._names: dict[str, str] = {}
        self._features: list | None = None  # hello's "features", once asked

    # -- the request/response cycle ---------------------------------------------------
    def request(self, op: str, payload: bytes = b"", *, doing: str | None = None,
                timeout_s: float | None = None, **args: Any) -> tuple[dict, bytes]:
        """Send one request; return ``(header, payload)`` of an ``ok`` answer."""
        doing = doing or f"answering {op}"
        if self._broken:
            raise errors.AgentError(
                f"{self.description} cannot be used any more (earlier: {self._broken})",
                hint="reconnect to the agent")
        rid = self._next_id
        self._next_id += 1
        frame = protocol.encode_message({"id": rid, "op": op, **args}, payload)
        wait_s = self.timeout_s if timeout_s is None else timeout_s
        try:
            self.channel.write(frame)
            header, body = self._read(wait_s)
        except errors.TransportError as exc:
            raise self._fail(doing, exc) from exc
        except protocol.AgentFailure as exc:  # framing broken
            raise self._fail(doing, exc) from exc
        if header.get("id") != rid:
            self._broken = f"answer id {header.get('id')!r} to request {rid}"
            raise errors.AgentError(
                f"{self.description} is out of step while {doing}: {self._broken}",
                hint="reconnect to the agent")
        if not header.get("ok"):
            err = header.get("error") or {}
            cls = _ERROR_TYPES.get(str(err.get("type")), errors.AgentError)
            raise cls(err.get("message") or f"{op} failed on {self.description}", hint=err.get("hint"))
        return header, body

    def _read(self, wait_s: float) -> tuple[dict, bytes]:
        deadline = time.monotonic() + wait_s
        ch = self.channel

        def left() -> float:
            return max(deadline - time.monotonic(), 0.001)

        return protocol.read_message(lambda m: ch.read_line(left(), m),
                                     lambda n: ch.read_exact(n, left()), noise=self.noise)

    def _fail(self, doing: str, exc: Exception) -> errors.AgentError:
        self._broken = f"failed while {doing}"
        diag = ""
        try:
            diag = self.channel.diagnostics()
        except Exception:  # diagnostics are best effort
            pass
        dead = not self.channel.alive()
        what = "died" if dead else "stopped answering"
        text = exc.message if isinstance(exc, (errors.EdgebenchError, protocol.AgentFailure)) else str(exc)
        if dead and diag:
            message = f"{self.description} {what} while {doing}: {diag}"
        else:
            message = f"{self.description} {what} while {doing}: {text}" + (f"; {diag}" if diag else "")
        if self.noise:
            message += f"; last non-protocol output: {self.noise[-1][:200].decode('utf-8', 'replace').strip()}"
        hint = None if dead else "the agent may be stuck; it will be stopped when the connection closes"
        return errors.AgentError(message, hint=hint)

    # -- operations -------------------------------------------------------------------
    def hello(self) -> dict:
        header, _ = self.request("hello", doing="starting up")
        if header.get("protocol") != protocol.PROTOCOL_VERSION:
            raise errors.AgentError(
                f"{self.description} speaks agent protocol {header.get('protocol')}, this edgebench "
                f"speaks {protocol.PROTOCOL_VERSION}", hint="install the same edgebench version on both sides")
        self._features = list(header.get("features") or [])
        return _strip(header)

    @property
    def capabilities(self) -> frozenset:
        """Every scenario and outputs; telemetry and schedule continuation (``start_ns``) when the
        agent's ``hello`` lists the ``telemetry`` feature (docs/agent-protocol.md, Versions)."""
        if self._features is None:
            self.hello()
        more = {bp.TELEMETRY, bp.SCHEDULE_CONTINUATION} if "telemetry" in (self._features or ()) else set()
        more |= {cap for feature, cap in _FEATURE_CAPS.items() if feature in (self._features or ())}
        return frozenset({bp.OUTPUTS, bp.FIXED_RATE, *more})

    def sysinfo(self) -> dict:
        return _strip(self.request("sysinfo", doing="describing the system")[0])

    def thermal(self) -> dict:
        return _strip(self.request("thermal", doing="reading temperatures")[0])

    def status(self) -> dict:
        return _strip(self.request("status", doing="reporting its status")[0])

    def has_model(self, sha256: str) -> bool:
        return bool(self.request("has_model", sha256=sha256, doing="looking up a model")[0]["present"])

    def put_model(self, sha256: str, model_bytes: bytes) -> dict:
        name = self._names.get(sha256, sha256[:12])
        header, _ = self.request("put_model", model_bytes, sha256=sha256,
                                 doing=f"receiving model {name} ({len(model_bytes)} bytes)")
        return _strip(header)

    def ensure_model(self, model: ModelFile) -> str:
        """Upload the model unless the agent has it cached; return its sha256 (the file's, not rehashed)."""
        self._names[model.sha256] = model.name
        if not self.has_model(model.sha256):
            self.put_model(model.sha256, model.content)
        return model.sha256

    def load(self, sha256: str, kernels: str = "xnnpack", threads: int = 1,
             delegate: str | None = None, batch: int = 1, name: str | None = None,
             preserve_all_tensors: bool = False) -> dict:
        """Load a cached model; ``preserve_all_tensors`` keeps every intermediate tensor's value
        for :meth:`tensors` (capability ``tensors``; an older agent would refuse the argument)."""
        if name:
            self._names[sha256] = name
        label = self._names.get(sha256, sha256[:12])
        extra: dict = {"preserve_all_tensors": True} if preserve_all_tensors else {}
        if extra:
            bp.require(self, bp.TENSORS, "keeping intermediate tensors")
        try:
            header, _ = self.request("load", sha256=sha256, kernels=kernels, threads=threads,
                                     delegate=delegate, batch=batch, doing=f"loading model {label}", **extra)
        except errors.ModelError as exc:
            raise errors.ModelError(f"model {label}: {exc.message}", hint=exc.hint) from None
        return _strip(header)

    def set_inputs(self, x: np.ndarray) -> int:
        payload = protocol.encode_arrays({"x": np.asarray(x, dtype=np.float32)})
        header, _ = self.request("set_inputs", payload, doing=f"receiving {len(x)} input samples")
        return int(header["count"])

    def request_arrays(self, op: str, payload: bytes = b"", **args: Any) -> tuple[dict, dict[str, np.ndarray]]:
        """:meth:`request` with the answer's payload decoded into arrays."""
        header, body = self.request(op, payload, **args)
        return header, self._arrays(body, op)

    def run(self, mode: str, count: int, max_time_s: float, rate_hz: float | None = None,
            start_index: int = 0, start_ns: int | None = None) -> tuple[dict, dict[str, np.ndarray]]:
        """One timed run; returns the header and the per-invoke int64 arrays.

        ``start_ns`` (fixed-rate): the device time request 0 of this run is due, to
        continue a schedule across runs."""
        extra: dict[str, Any] = {} if start_ns is None else {"start_ns": int(start_ns)}
        wait_s = 0.0 if start_ns is None else 10.0  # the agent may wait up to 10 s for start_ns
        header, body = self.request(
            "run", mode=mode, count=int(count), max_time_s=float(max_time_s), rate_hz=rate_hz,
            start_index=int(start_index), timeout_s=float(max_time_s) + wait_s + self.timeout_s,
            doing=f"running {count} {mode} inferences", **extra)
        return _strip(header), self._arrays(body, "run")

    def infer(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Outputs of output 0 for every sample: raw (tensor dtype) and dequantized float32."""
        out = self.infer_all(x)
        return out["y"], out["y_float"]

    def infer_all(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """Every output: ``y``/``y_float`` for output 0, ``y1``/``y1_float``... for the rest."""
        payload = protocol.encode_arrays({"x": np.asarray(x, dtype=np.float32)})
        _, body = self.request("infer", payload, doing=f"running inference on {len(x)} samples")
        return self._arrays(body, "infer")

    def tensors(self, x: np.ndarray, indices: list) -> dict[str, np.ndarray]:
        """``t<index>`` (N, *shape): the listed tensors after each sample's invoke, raw dtype
        (capability ``tensors``; the model loaded with ``preserve_all_tensors``)."""
        bp.require(self, bp.TENSORS, "reading intermediate tensors")
        payload = protocol.encode_arrays({"x": np.asarray(x, dtype=np.float32)})
        _, body = self.request("tensors", payload, indices=[int(i) for i in indices],
                               doing=f"keeping {len(indices)} tensors of {len(x)} samples")
        return self._arrays(body, "tensors")

    def benchmark_model(self, sha256: str, binary: str | None = None, threads: int = 1, kernels: str = "xnnpack",
                        runs: int = 50, warmup_runs: int = 5, delegate: str | None = None,
                        max_time_s: float = 600.0) -> tuple[dict, bytes]:
        """LiteRT's benchmark_model run by the agent on a model it holds (capability
        ``benchmark-model``): the header (argv, log) and the operator profile's protocol-buffer bytes."""
        bp.require(self, bp.BENCHMARK_MODEL, "running benchmark_model on the board")
        header, body = self.request(
            "benchmark_model", sha256=sha256, binary=binary, threads=int(threads), kernels=kernels, runs=int(runs),
            warmup_runs=int(warmup_runs), delegate=delegate, max_time_s=float(max_time_s),
            timeout_s=float(max_time_s) + self.timeout_s, doing=f"running benchmark_model ({runs} runs)")
        return _strip(header), body

    def shutdown(self) -> None:
        if self._broken or not self.channel.alive():
            return
        try:
            self.request("shutdown", doing="shutting down", timeout_s=min(self.timeout_s, 10.0))
        except errors.AgentError:
            pass

    def close(self) -> None:
        try:
            self.shutdown()
        finally:
            self.channel.close()

    def __enter__(self) -> AgentClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _arrays(self, body: bytes, op: str) -> dict[str, np.ndarray]:
        try:
            return protocol.decode_arrays(body)
        except protocol.AgentFailure as exc:
            raise errors.AgentError(f"{self.description} sent an unreadable {op} payload: {exc.message}") from exc


#: hello "features" -> the capability each gives (docs/agent-protocol.md, Versions)
_FEATURE_CAPS = {"tensors": bp.TENSORS, "benchmark-model": bp.BENCHMARK_MODEL}


def _strip(header: dict) -> dict:
    return {k: v for k, v in header.items() if k not in ("id", "ok", "payload_bytes")}
