"""What a telemetry frame says (level 2, no I/O): temperature, clocks, throttling.

* :func:`primary_temp` — the temperature a verdict is made on: per sample, the
  hottest of the SoC-level sources (thermal zones, ``vcgencmd``, Coral ``apex``,
  ``thermal()`` snapshots); hwmon temperatures (disks, boards, PSUs) only when
  there is nothing else.
* :func:`cpu_freq` — the clock that matters: the firmware's ARM clock
  (``vcgencmd measure_clock arm``) when present, since the Raspberry Pi firmware
  throttles below what cpufreq reports, else the fastest cpufreq policy.
* :func:`time_at_frequency` — sample-and-hold: each sample's value holds until
  the next sample (the last one until the end of the run).
* :func:`throttle_events` — onsets (rising edges) and time active per cause:
  ``vcgencmd`` flags (``under_voltage``, ``freq_capped``, ``throttled``,
  ``soft_temp_limit``), ``cpufreq_cap`` (a policy's ``scaling_max_freq`` lowered
  below the highest it had in the run, as a cpufreq cooling device does),
  ``firmware_clock`` (ARM clock more than 5% below cpufreq's current value) and
  ``apex_trip`` (Edge TPU above its first trip point, where its driver slows it).
  Passive trip points of thermal zones being reached are reported apart
  (``trips``): reaching one is a trigger, not yet evidence of throttling.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

_PRIMARY = ("thermal_zone", "vcgencmd.", "apex_", "thermal.", "mcu")
FIRMWARE_CLOCK_TOLERANCE = 0.05
VCGENCMD_CAUSES = ("under_voltage", "freq_capped", "throttled", "soft_temp_limit")  # bits 0..3


def _ffill(x) -> np.ndarray:
    """Carry the last reading forward over NaN (a source read less often, e.g. vcgencmd)."""
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return x
    idx = np.where(np.isfinite(x), np.arange(x.size), -1)
    np.maximum.accumulate(idx, out=idx)
    return np.where(idx >= 0, x[np.maximum(idx, 0)], np.nan)


def temp_columns(frame) -> list:
    cols = [c for c in frame.columns if str(c).endswith("temp_c")]
    primary = [c for c in cols if str(c).startswith(_PRIMARY)]
    return primary or cols


def primary_temp(frame) -> np.ndarray:
    """Hottest SoC-level temperature per sample (NaN where none was read)."""
    cols = temp_columns(frame)
    if not cols or len(frame) == 0:
        return np.full(len(frame), np.nan)
    values = frame[cols].to_numpy(dtype=np.float64)
    with np.errstate(all="ignore"):
        out = np.where(np.isfinite(values).any(axis=1), np.nanmax(np.where(np.isfinite(values), values, -np.inf),
                                                                   axis=1), np.nan)
    return out


def cpu_freq(frame) -> tuple[Optional[str], np.ndarray]:
    """``(what, Hz per sample)``: the firmware ARM clock if present, else the fastest cpufreq policy."""
    if len(frame) == 0:
        return None, np.zeros(0)
    if "vcgencmd.arm_freq_hz" in frame and np.isfinite(frame["vcgencmd.arm_freq_hz"].to_numpy(float)).any():
        return "vcgencmd measure_clock arm", _ffill(frame["vcgencmd.arm_freq_hz"].to_numpy(float))
    cols = [c for c in frame.columns if str(c).endswith("cur_freq_hz")] or \
           [c for c in frame.columns if str(c).startswith("thermal.") and str(c).endswith("freq_hz")]
    if not cols:
        return None, np.full(len(frame), np.nan)
    values = frame[cols].to_numpy(dtype=np.float64)
    with np.errstate(all="ignore"):
        return ("cpufreq scaling_cur_freq (fastest policy)" if cols[0].endswith("cur_freq_hz") else cols[0],
                np.nanmax(np.where(np.isfinite(values), values, -np.inf), axis=1))


def time_at_frequency(t_ns, freq_hz, t_end_ns: Optional[int] = None, t_start_ns: Optional[int] = None) -> list:
    """``[{freq_hz, time_s, fraction}]``, fastest first (values rounded to 1 MHz)."""
    t = np.asarray(t_ns, dtype=np.int64)
    f = _ffill(np.asarray(freq_hz, dtype=np.float64))
    keep = np.isfinite(f)
    if t_start_ns is not None:
        keep &= t >= t_start_ns
    t, f = t[keep], f[keep]
    if t.size == 0:
        return []
    end = int(t_end_ns) if t_end_ns is not None and t_end_ns > t[-1] else int(t[-1])
    dt = np.diff(np.append(t, end)).astype(np.float64) / 1e9
    rounded = np.round(f / 1e6) * 1e6
    total = float(dt.sum())
    out = []
    for value in sorted(set(rounded.tolist()), reverse=True):
        s = float(dt[rounded == value].sum())
        out.append({"freq_hz": float(value), "time_s": s, "fraction": s / total if total > 0 else None})
    return out


def _edges(t: np.ndarray, active: np.ndarray, t0_ns: int, t_end_ns: int) -> dict:
    active = np.asarray(active, dtype=bool)
    if not active.any():
        return {"events": 0, "first_s": None, "time_s": 0.0}
    prev = np.concatenate([[False], active[:-1]])
    onsets = np.flatnonzero(active & ~prev)
    dt = np.diff(np.append(t, max(int(t_end_ns), int(t[-1])))).astype(np.float64) / 1e9
    return {"events": int(onsets.size), "first_s": (int(t[onsets[0]]) - t0_ns) / 1e9,
            "time_s": float(dt[active].sum())}


def throttle_events(frame, static: Optional[dict], t0_ns: int, t_end_ns: int) -> dict:
    """``{"causes": {cause: {events, first_s, time_s}}, "trips": {...}, "first_throttle_s",
    "occurred_unseen": [...]}``; times relative to ``t0_ns`` (load start)."""
    static = static or {}
    causes, trips = {}, {}
    if len(frame) == 0:
        return {"causes": {}, "trips": {}, "first_throttle_s": None, "occurred_unseen": []}
    t = frame["t_ns"].to_numpy(dtype=np.int64)
    unseen = []
    if "vcgencmd.throttled" in frame:
        raw = _ffill(frame["vcgencmd.throttled"].to_numpy(float))
        ok = np.isfinite(raw)
        bits = np.where(ok, raw, 0).astype(np.int64)
        for i, name in enumerate(VCGENCMD_CAUSES):
            active = ok & ((bits >> i) & 1).astype(bool)
            causes[name] = _edges(t, active, t0_ns, t_end_ns)
            if ok.any() and (bits[ok][-1] >> (16 + i)) & 1 and not active.any():
                unseen.append(name)  # the firmware says it happened, between or before our samples
    for col in [c for c in frame.columns if str(c).endswith(".max_freq_hz") and str(c).startswith("policy")]:
        cap = _ffill(frame[col].to_numpy(float))
        if np.isfinite(cap).any():
            active = np.isfinite(cap) & (cap < np.nanmax(cap))
            causes[f"cpufreq_cap:{col.split('.')[0]}"] = _edges(t, active, t0_ns, t_end_ns)
    if "vcgencmd.arm_freq_hz" in frame:
        arm = _ffill(frame["vcgencmd.arm_freq_hz"].to_numpy(float))
        curs = [c for c in frame.columns if str(c).endswith("cur_freq_hz")]
        if curs:
            with np.errstate(all="ignore"):
                cur = np.nanmax(frame[curs].to_numpy(float), axis=1)
            active = np.isfinite(arm) & np.isfinite(cur) & (arm < (1 - FIRMWARE_CLOCK_TOLERANCE) * cur)
            causes["firmware_clock"] = _edges(t, active, t0_ns, t_end_ns)
    for dev, info in static.items():
        if info.get("source") == "apex" and info.get("trip_point0_temp_c") is not None and f"{dev}.temp_c" in frame:
            temp = frame[f"{dev}.temp_c"].to_numpy(float)
            causes[f"apex_trip:{dev}"] = _edges(t, np.isfinite(temp) & (temp >= info["trip_point0_temp_c"]),
                                                t0_ns, t_end_ns)
        if info.get("source") == "thermal_zone" and f"{dev}.temp_c" in frame:
            temp = frame[f"{dev}.temp_c"].to_numpy(float)
            for trip in info.get("trips") or []:
                if trip.get("type") in ("passive", "hot") and trip.get("temp_c") is not None:
                    trips[f"{dev}:{trip['type']}@{trip['temp_c']:g}°C"] = _edges(
                        t, np.isfinite(temp) & (temp >= trip["temp_c"]), t0_ns, t_end_ns)
    firsts = [c["first_s"] for name, c in causes.items() if c["first_s"] is not None]
    return {"causes": causes, "trips": trips, "first_throttle_s": min(firsts) if firsts else None,
            "occurred_unseen": unseen}
