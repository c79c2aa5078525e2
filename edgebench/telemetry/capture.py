"""Host side of on-device telemetry (level 2): ask for it, decode it into frames.

Works with any board client (:class:`edgebench.board_protocol.BoardClient`: ``AgentClient``,
the simulated board's ``SimClient``, a microcontroller's ``McuClient``) without importing one:

* a client that declares :data:`~edgebench.board_protocol.TELEMETRY` in its ``capabilities``
  speaks the protocol additions (``run`` with a ``telemetry`` argument, the ``telemetry``
  op, both through ``request_arrays``): samples are taken on the device between
  inferences, on its clock;
* any other client (older agents, microcontroller firmware) gets a fallback:
  one ``thermal()`` snapshot after each chunk, stamped with the end of that
  chunk's last inference on the device clock and marked ``between-chunks``.

A telemetry frame is a pandas DataFrame with ``t_ns`` (device clock),
``cost_ns`` (time the sample took on the device), one float column per numeric
channel (``thermal_zone0.temp_c``, ``policy0.cur_freq_hz``, ``vcgencmd.throttled``...)
and one text column per text channel (``policy0.governor``).
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from edgebench import board_protocol as bp
from edgebench.agent import protocol
from edgebench.errors import UsageError

DEFAULT_RATE_HZ = 2.0
MAX_RATE_HZ = 10.0
IDLE_CHUNK_S = 5.0


@dataclass(frozen=True)
class TelemetrySpec:
    """What to sample and how often (``rate_hz`` at most 10)."""

    rate_hz: float = DEFAULT_RATE_HZ
    sources: Optional[tuple] = None  # None: every source the device has
    vcgencmd_interval_s: Optional[float] = None

    def __post_init__(self):
        if isinstance(self.rate_hz, bool) or not isinstance(self.rate_hz, (int, float)) \
                or not 0 < self.rate_hz <= MAX_RATE_HZ:
            raise UsageError(f"telemetry rate must be in (0, {MAX_RATE_HZ:g}] samples/s, got {self.rate_hz!r}",
                             "sampling faster disturbs the workload; e.g. --telemetry-hz 2")

    def to_request(self) -> dict:
        spec = {"interval_s": 1.0 / self.rate_hz,
                "sources": list(self.sources) if self.sources is not None else None}
        if self.vcgencmd_interval_s is not None:
            spec["vcgencmd_interval_s"] = self.vcgencmd_interval_s
        return spec


@dataclass
class Capture:
    """How telemetry reaches the host for one client, and what it found."""

    mode: str                      # "on-device" | "between-chunks" | "none"
    description: dict = field(default_factory=dict)  # channels, static (trip points), sources

    @property
    def channels(self) -> list:
        return list(self.description.get("channels") or [])

    def to_dict(self) -> dict:
        return {"mode": self.mode, **self.description}


def describe(client, spec: TelemetrySpec) -> tuple[Capture, "object"]:
    """Discover the device's channels (one sample now); returns the capture and that sample's frame."""
    if bp.TELEMETRY in client.capabilities:
        header, arrays = client.request_arrays("telemetry", doing="reading telemetry", **spec.to_request())
        frame = frame_from_arrays(header, arrays)
        desc = {k: header.get(k) for k in ("clock", "interval_s", "vcgencmd_interval_s", "sources", "found",
                                            "channels", "text_channels", "static")}
        mode = "on-device" if header.get("channels") or header.get("text_channels") else "none"
        return Capture(mode, desc), frame
    snap = client.thermal()
    frame = frame_from_snapshot(snap, snap.get("clock_ns"))
    chans = [{"name": c, "source": "thermal()", "quantity": _quantity(c), "unit": _unit(c), "label": c}
             for c in frame.columns if c not in ("t_ns", "cost_ns")]
    mode = "between-chunks" if chans else "none"
    return Capture(mode, {"clock": "host: thermal() after each chunk", "channels": chans, "text_channels": [],
                          "static": {}, "sources": ["thermal()"]}), frame


def run_chunk(client, capture: Capture, spec: TelemetrySpec, mode: str, count: int, max_time_s: float,
              rate_hz: Optional[float] = None, start_index: int = 0, start_ns: Optional[int] = None):
    """One timed run with telemetry: ``(header, arrays, telemetry frame)``. ``start_ns``
    continues a fixed-rate schedule (agents with the telemetry feature only)."""
    # lazy: pandas, numpy, pyarrow (import pandas 1.3 s, numpy 460 ms, pyarrow 390 ms measured), loaded only where used
    import pandas as pd

    if capture.mode == "on-device":
        header, arrays = client.request_arrays(
            "run", mode=mode, count=int(count), max_time_s=float(max_time_s), rate_hz=rate_hz,
            start_index=int(start_index), telemetry=spec.to_request(),
            **({"start_ns": int(start_ns)} if start_ns is not None else {}),
            timeout_s=float(max_time_s) + client.timeout_s,
            doing=f"running {count} {mode} inferences with telemetry")
        tm = header.pop("telemetry", None) or {}
        frame = frame_from_arrays(tm, arrays)
        for key in ("tm_t_ns", "tm_cost_ns", "tm_values", "tm_text"):
            arrays.pop(key, None)
        return _strip(header), arrays, frame
    header, arrays = client.run(mode, count, max_time_s, rate_hz=rate_hz, start_index=start_index)
    if capture.mode == "between-chunks" and len(arrays.get("t_start_ns", ())):
        end_ns = int(arrays["t_start_ns"][-1] + arrays["e2e_ns"][-1])
        return header, arrays, frame_from_snapshot(client.thermal(), end_ns)
    return header, arrays, pd.DataFrame()


def idle(client, capture: Capture, spec: TelemetrySpec, duration_s: float, sleep=None):
    """Sample for ``duration_s`` with no inference running (cool-down): a frame."""
    if capture.mode == "on-device":
        header, arrays = client.request_arrays("telemetry", duration_s=float(duration_s),
                                               doing="sampling while idle",
                                               timeout_s=float(duration_s) + client.timeout_s, **spec.to_request())
        return frame_from_arrays(header, arrays)
    (sleep or time.sleep)(duration_s)
    snap = client.thermal()
    return frame_from_snapshot(snap, snap.get("clock_ns"))


# -- decoding -------------------------------------------------------------------------
def _decode(body: bytes) -> dict:
    return protocol.decode_arrays(body)


def _strip(header: dict) -> dict:
    return {k: v for k, v in header.items() if k not in ("id", "ok", "payload_bytes")}


def frame_from_arrays(summary: dict, arrays: dict):
    """The telemetry frame of one response (``tm_*`` arrays named by the header's channel lists)."""
    # lazy: pandas, numpy, pyarrow (import pandas 1.3 s, numpy 460 ms, pyarrow 390 ms measured), loaded only where used
    import pandas as pd

    t = np.asarray(arrays.get("tm_t_ns", np.zeros(0, np.int64)), dtype=np.int64)
    cols: dict[str, np.ndarray] = {"t_ns": t, "cost_ns": np.asarray(arrays.get("tm_cost_ns", np.zeros(len(t), np.int64)), np.int64)}
    names, text_names = summary.get("channels") or [], summary.get("text_channels") or []
    values = np.asarray(arrays.get("tm_values", np.zeros((len(t), 0))), dtype=np.float64)
    values = values.reshape(len(t), -1) if len(t) else np.zeros((0, len(names)))
    for i, name in enumerate(names):
        cols[_name(name)] = values[:, i] if i < values.shape[1] else np.full(len(t), np.nan)
    text = np.asarray(arrays.get("tm_text", np.zeros((len(t), 0), "<U1")))
    text = text.reshape(len(t), -1) if len(t) else np.zeros((0, len(text_names)), "<U1")
    for i, name in enumerate(text_names):
        cols[_name(name)] = text[:, i].astype(object) if i < text.shape[1] else np.full(len(t), None, object)
    return pd.DataFrame(cols)


def _name(channel) -> str:
    return channel["name"] if isinstance(channel, dict) else str(channel)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "_", str(text)).strip("_") or "x"


def frame_from_snapshot(snap: dict, t_ns: Optional[int]):
    """One row from a ``thermal()`` snapshot: ``thermal.<name>.temp_c``, ``thermal.<name>.freq_hz``,
    ``vcgencmd.throttled`` (raw bits) when the snapshot has throttle flags."""
    # lazy: pandas, numpy, pyarrow (import pandas 1.3 s, numpy 460 ms, pyarrow 390 ms measured), loaded only where used
    import pandas as pd

    row: dict = {"t_ns": [int(t_ns) if t_ns is not None else 0], "cost_ns": [0]}
    if snap and snap.get("available"):
        for name, v in (snap.get("temps_c") or {}).items():
            row[f"thermal.{_slug(name)}.temp_c"] = [float(v) if v is not None else np.nan]
        for name, v in (snap.get("freqs_hz") or {}).items():
            row[f"thermal.{_slug(name)}.freq_hz"] = [float(v) if v is not None else np.nan]
        thr = snap.get("throttled")
        if isinstance(thr, dict) and thr.get("raw"):
            row["vcgencmd.throttled"] = [float(int(str(thr["raw"]), 0))]
    return pd.DataFrame(row)


def _quantity(name: str) -> str:
    return "temp" if name.endswith("temp_c") else "freq" if name.endswith("freq_hz") else \
        "flags" if name.endswith("throttled") else "value"


def _unit(name: str) -> Optional[str]:
    return {"temp": "°C", "freq": "Hz", "flags": "bits"}.get(_quantity(name))
