"""Figures of `edgebench report` (level 1): pure functions of the data given, returning PNG bytes.

Nothing here reads or writes files: :mod:`edgebench.report.html` embeds the bytes inline
(base64) so a report is one self-contained file. matplotlib is imported inside the
functions and drawn on a bare Agg ``Figure`` (no pyplot state, no display). Every figure
says the label of its figures in its title (measured, emulated, simulated, estimated).
"""
from __future__ import annotations

import io
from typing import Any, List, Mapping, Optional, Union

import numpy as np

from edgebench.report.plots import binned
from edgebench.results.figures.accuracy import CalibrationSection, EdgeCases, SliceRow, SliceSide
from edgebench.results.figures.latency import LatencyFigure
from edgebench.results.figures.layer_error import LayerErrorFigure, LayerErrorRow
from edgebench.results.figures.profile import ProfileFigure, ProfileRow

DPI = 100
STAGE_COLOURS = {"prep": "tab:orange", "set": "tab:purple", "invoke": "tab:blue", "get": "tab:green"}


def _figure(width_in: float, height_in: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


def _unit(seconds: Optional[float]) -> tuple:
    s = abs(seconds or 0.0)
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if s >= scale:
            return unit, scale
    return "µs", 1e-6


def latency_distribution(e2e_s: Any, summary: LatencyFigure, title: str, label: str) -> bytes:
    """Histogram, empirical CDF and the repeat runs of the end-to-end latencies after warm-up.

    ``summary``: the run's ``latency.e2e`` block (median, headline interval, ``per_run``).
    Histogram: p0.5 to p99 (the tail beyond is counted, not drawn); CDF: every sample on a
    log axis, so the tail shows; third panel: each repeat's median with its own interval
    beside the headline interval (shaded), so a spread between runs is visible.
    """
    x = np.asarray(e2e_s, dtype=np.float64)
    x = x[np.isfinite(x)]
    med = summary.median_s or (float(np.median(x)) if x.size else None)
    unit, scale = _unit(med)
    fig = _figure(11.0, 3.6)
    ax_h, ax_c, ax_r = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1.4, 1.4, 0.8]})
    lo_ci, hi_ci = summary.ci_low_s, summary.ci_high_s
    runs = [r for r in summary.per_run or [] if r.median_s is not None]
    band = f"95% CI of the median ({int(summary.runs or 1)} run{'s' if (summary.runs or 1) > 1 else ''})"
    if x.size:
        lo, hi = np.percentile(x, [0.5, 99.0])
        shown = x[(x >= lo) & (x <= hi)]
        ax_h.hist(shown / scale, bins=min(80, max(10, int(np.sqrt(shown.size)))), color="0.55")
        ax_h.set_xlabel(f"latency ({unit}), p0.5–p99 drawn;\n{x.size - shown.size:,} samples outside")
        xs = np.sort(x)
        ys = np.arange(1, xs.size + 1) / xs.size
        if xs.size > 4000:  # the CDF line needs no more points than pixels
            idx = np.unique(np.r_[np.linspace(0, xs.size - 1, 4000).astype(int), np.arange(max(0, xs.size - 200),
                                                                                            xs.size)])
            xs, ys = xs[idx], ys[idx]
        ax_c.plot(xs / scale, ys, color="0.2", lw=1.2, label="all samples")
        if xs[-1] / max(xs[0], 1e-12) > 3:
            ax_c.set_xscale("log")
        for q, name, known in ((0.99, "p99", summary.p99_s), (0.999, "p99.9", summary.p999_s)):
            v = known or (float(np.quantile(x, q)) if x.size >= 1 / (1 - q) else None)
            if v:
                ax_c.axvline(v / scale, color="tab:orange", ls=":", lw=1)
                ax_c.text(v / scale, 0.05, f" {name}", color="tab:orange", fontsize=7)
    for ax in (ax_h, ax_c):
        if lo_ci is not None and hi_ci is not None:
            ax.axvspan(lo_ci / scale, hi_ci / scale, color="tab:blue", alpha=0.25, lw=0, label=band)
        if med:
            ax.axvline(med / scale, color="tab:blue", lw=1.2, label="median")
        ax.grid(alpha=0.3)
    if lo_ci is not None and hi_ci is not None:
        ax_r.axhspan(lo_ci / scale, hi_ci / scale, color="tab:blue", alpha=0.25, lw=0)
    if med:
        ax_r.axhline(med / scale, color="tab:blue", lw=1.2)
    for k, r in enumerate(runs):
        m = r.median_s or 0.0
        lo_r, hi_r = r.ci_low_s, r.ci_high_s
        err = None if lo_r is None or hi_r is None else [[(m - lo_r) / scale], [(hi_r - m) / scale]]
        ax_r.errorbar([k + 1], [m / scale], yerr=err, fmt="o", color="tab:red", ms=5, capsize=3)
    if runs:
        ax_r.set_xticks(range(1, len(runs) + 1))
        ax_r.set_xlim(0.4, len(runs) + 0.6)
    else:
        ax_r.text(0.5, 0.5, "no per-run figures", transform=ax_r.transAxes, ha="center")
    ax_r.set_xlabel("repeat (fresh process)")
    ax_r.set_ylabel(f"median ({unit}) and its CI")
    ax_r.set_title("each run", fontsize=10)
    ax_r.grid(alpha=0.3)
    ax_h.set_ylabel("inferences")
    ax_h.set_title("histogram", fontsize=10)
    ax_c.set_xlabel(f"latency ({unit}), every sample" + (", log scale" if ax_c.get_xscale() == "log" else ""))
    ax_c.set_ylabel("fraction ≤ x")
    ax_c.set_title("cumulative distribution", fontsize=10)
    ax_c.legend(fontsize=7, loc="lower right")
    fig.suptitle(f"{title} [{label}]", fontsize=11)
    return _png(fig)


def _median(latency: Mapping[str, LatencyFigure], stage: str) -> Optional[float]:
    fig = latency.get(stage)
    return fig.median_s if fig is not None else None


def stage_breakdown(latency: Mapping[str, LatencyFigure], title: str, label: str) -> bytes:
    """Median of each stage stacked (prep, set, invoke, get) beside the end-to-end median:
    how much of end to end is the model (invoke) and how much the harness around it."""
    e2e = _median(latency, "e2e")
    parts = [(s, v) for s in ("prep", "set", "invoke", "get") for v in [_median(latency, s)] if v is not None]
    unit, scale = _unit(e2e or (sum(v for _, v in parts) if parts else None))
    fig = _figure(11.0, 2.2)
    ax = fig.subplots(1, 1)
    left = 0.0
    for s, v in parts:
        share = f" {100 * v / e2e:.0f}%" if e2e else ""
        ax.barh([1], [v / scale], left=[left], color=STAGE_COLOURS[s], label=f"{s}{share}")
        if e2e and v / e2e > 0.08:
            ax.text(left + v / scale / 2, 1, f"{s}\n{100 * v / e2e:.0f}%", ha="center", va="center", fontsize=8,
                    color="white")
        left += v / scale
    if e2e:
        ax.barh([0], [e2e / scale], color="0.4", label="end to end")
        ax.text(e2e / scale, 0, f" {e2e / scale:.3g} {unit}", va="center", fontsize=8)
    ax.set_yticks([0, 1], ["end to end", "sum of stage medians"])
    ax.set_xlabel(f"median latency ({unit})")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    ax.grid(alpha=0.3, axis="x")
    inv = _median(latency, "invoke")
    share = f": the model (invoke) is {100 * inv / e2e:.0f}% of end to end" if inv and e2e else ""
    fig.suptitle(f"{title}{share} [{label}]", fontsize=10)
    return _png(fig)


def soak_series(series: dict, title: str, label: str) -> bytes:
    """Temperature, CPU clock and latency against device time, throttle onsets marked.

    ``series``: ``t_temp_s``/``temp_c``, ``t_freq_s``/``freq_hz``, ``t_lat_s``/``latency_s``,
    ``throttle`` (list of ``(t_s, cause)``), ``burst`` and ``window`` ((start, end) or None).
    """
    fig = _figure(11.0, 6.5)
    axes = fig.subplots(3, 1, sharex=True)
    t_temp, temp = np.asarray(series.get("t_temp_s", []), float), np.asarray(series.get("temp_c", []), float)
    t_freq, freq = np.asarray(series.get("t_freq_s", []), float), np.asarray(series.get("freq_hz", []), float)
    if temp.size and np.isfinite(temp).any():
        axes[0].plot(t_temp, temp, color="tab:red", lw=1.2)
    else:
        axes[0].text(0.5, 0.5, "no thermal source", transform=axes[0].transAxes, ha="center")
    if freq.size and np.isfinite(freq).any():
        axes[1].plot(t_freq, freq / 1e9, color="tab:blue", lw=1.2, drawstyle="steps-post")
    else:
        axes[1].text(0.5, 0.5, "no clock reading", transform=axes[1].transAxes, ha="center")
    c, med, lo, hi = binned(series.get("t_lat_s", []), series.get("latency_s", []))
    med_all = float(np.nanmedian(med)) if np.size(med) else None
    unit, scale = _unit(med_all)
    axes[2].fill_between(c, lo / scale, hi / scale, color="tab:green", alpha=0.25, lw=0, label="10–90%")
    axes[2].plot(c, med / scale, color="tab:green", lw=1.2, label="median")
    causes: dict = {}
    for t, cause in series.get("throttle") or []:
        for ax in axes:
            ax.axvline(t, color="black", ls="--", lw=0.8)
        causes.setdefault(t, []).append(cause)
    for t, names in causes.items():
        axes[0].text(t, 1.0, " throttle: " + ", ".join(names), transform=axes[0].get_xaxis_transform(),
                     fontsize=7, va="top")
    for ax in axes:
        if series.get("burst"):
            ax.axvspan(*series["burst"], color="tab:orange", alpha=0.12, lw=0)
        if series.get("window"):
            ax.axvspan(*series["window"], color="0.8", alpha=0.6, lw=0)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("temperature (°C)")
    axes[1].set_ylabel("CPU clock (GHz)")
    axes[2].set_ylabel(f"latency ({unit})")
    axes[2].legend(fontsize=7, loc="upper left")
    axes[2].set_xlabel("device time since load start (s); orange: burst, grey: sustained window, dashed: throttle")
    fig.suptitle(f"{title} [{label}]", fontsize=11)
    return _png(fig)


def reliability(calibration: CalibrationSection, title: str, label: str) -> bytes:
    """Reliability diagram: accuracy against confidence per bin, baseline and candidate, with
    the diagonal (perfect calibration) and each bin's sample count as marker area."""
    fig = _figure(5.5, 5.0)
    ax = fig.subplots(1, 1)
    ax.plot([0, 1], [0, 1], ls="--", color="0.5", lw=1, label="perfectly calibrated")
    for key, block, colour, marker in (("baseline", calibration.baseline, "tab:gray", "s"),
                                       ("candidate", calibration.candidate, "tab:blue", "o")):
        bins = [b for b in block.bins or [] if b.count]
        if not bins:
            continue
        conf = np.array([b.confidence for b in bins], float)
        acc = np.array([b.accuracy for b in bins], float)
        n = np.array([b.count for b in bins], float)
        ece = block.ece_debiased if block.ece_debiased is not None else block.ece
        ax.plot(conf, acc, "-", color=colour, lw=1)
        ax.scatter(conf, acc, s=12 + 200 * n / n.max(), color=colour, marker=marker, alpha=0.8,
                   label=f"{key}: ECE {ece if ece is not None else float('nan'):.3f}")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("confidence (top-class probability)")
    ax.set_ylabel("accuracy in the bin")
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(alpha=0.3)
    ax.set_title(f"{title} [{label}]\nmarker area: samples in the bin", fontsize=10)
    return _png(fig)


def _side(row: SliceRow, key: str) -> SliceSide:
    return row.baseline if key == "baseline" else row.candidate


def edge_slices(edge: EdgeCases, title: str, label: str) -> bytes:
    """Top-1 accuracy per perturbation family against severity, baseline and candidate, with
    Wilson intervals; the clean accuracy as a dotted line."""
    slices = edge.slices or []
    families = list(dict.fromkeys(s.family for s in slices))
    cols = min(4, max(1, len(families)))
    rows = max(1, -(-len(families) // cols))
    fig = _figure(11.0, 1.0 + 2.3 * rows)
    axes = np.atleast_1d(fig.subplots(rows, cols, sharey=True, squeeze=False)).ravel()
    for ax, fam in zip(axes, families):
        rows_f = sorted((s for s in slices if s.family == fam), key=lambda s: s.severity or 0)
        sev = np.array([s.severity or 0 for s in rows_f], float)
        for key, colour, dx in (("baseline", "tab:gray", -0.08), ("candidate", "tab:blue", 0.08)):
            sides = [_side(s, key) for s in rows_f]
            acc = np.array([x.accuracy for x in sides], float) * 100
            lo = acc - np.array([x.ci_low for x in sides], float) * 100
            hi = np.array([x.ci_high for x in sides], float) * 100 - acc
            ax.errorbar(sev + dx, acc, yerr=[lo, hi], fmt="o-", color=colour, ms=3, lw=1, capsize=2, label=key)
            clean = _side(edge.clean, key)
            if clean.accuracy is not None:
                ax.axhline(100 * clean.accuracy, color=colour, ls=":", lw=1)
        worst = [s for s in rows_f if s.slice == edge.worst]
        ax.set_title(f"{fam}" + ("  (worst slice)" if worst else ""), fontsize=9,
                     color="tab:red" if worst else "black")
        ax.grid(alpha=0.3)
        ax.set_xlabel("severity", fontsize=8)
    for ax in axes[len(families):]:
        ax.set_visible(False)
    axes[0].set_ylabel("top-1 accuracy (%)")
    axes[0].legend(fontsize=7, loc="lower left")
    fig.suptitle(f"{title}: per-slice accuracy, 95% Wilson CIs; dotted: clean test set [{label}]", fontsize=11)
    return _png(fig)


def energy_trace(power, events, title: str, label: str, max_s: float = 3.0) -> bytes:
    """The meter's power samples over a stretch of the run (at most ``max_s`` seconds, from the
    first measured inference), inference windows shaded, idle power as a line; and the
    distribution of energy per event."""
    fig = _figure(11.0, 3.8)
    ax_t, ax_e = fig.subplots(1, 2, gridspec_kw={"width_ratios": [2.2, 1]})
    t = np.asarray(power["t_s"], float)
    p = np.asarray(power["power_w"], float)
    ev = events[events["phase"] == "measure"] if events is not None and len(events) else None
    t0 = float(ev["t_start_s"].iloc[0]) - 0.2 if ev is not None and len(ev) else (float(t[0]) if t.size else 0.0)
    sel = (t >= t0) & (t <= t0 + max_s)
    ax_t.plot(t[sel] - t0, p[sel], color="tab:red", lw=1, drawstyle="steps-mid", label="meter samples")
    if ev is not None:
        near = ev[(ev["t_start_s"] >= t0) & (ev["t_start_s"] <= t0 + max_s)]
        for k, (s, d) in enumerate(zip(near["t_start_s"], near["duration_s"])):
            ax_t.axvspan(s - t0, s - t0 + max(d, 0.002), color="tab:blue", alpha=0.35, lw=0,
                         label="inference windows" if k == 0 else None)
        used = ev[ev["used"]] if "used" in ev else ev
        if len(used):
            ax_e.hist(np.asarray(used["event_j"], float) * 1e3, bins=30, color="0.55")
            ax_e.axvline(float(np.mean(used["event_j"])) * 1e3, color="tab:blue", lw=1.2, label="mean")
            ax_e.legend(fontsize=7)
    ax_t.set_xlabel(f"time (s) from the first measured inference (first {max_s:g} s shown)")
    ax_t.set_ylabel("power (W)")
    ax_t.legend(fontsize=7, loc="upper right")
    ax_t.grid(alpha=0.3)
    ax_e.set_xlabel("energy per event above idle (mJ)")
    ax_e.set_ylabel("events")
    ax_e.grid(alpha=0.3)
    fig.suptitle(f"{title} [{label}]", fontsize=11)
    return _png(fig)


def battery_curve(curve: dict, title: str, label: str) -> bytes:
    """Battery life against duty cycle (log-log), the run's own duty cycle marked.

    ``curve``: ``duty`` and ``life_h`` (lists), optional ``life_low_h``/``life_high_h``,
    ``cell`` (name), ``run_duty``/``run_life_h``.
    """
    fig = _figure(7.5, 4.2)
    ax = fig.subplots(1, 1)
    d = np.asarray(curve["duty"], float)
    life = np.asarray(curve["life_h"], float) / 24.0
    ax.plot(d, life, color="tab:blue", lw=1.5, label=f"{curve.get('cell', 'cell')}")
    lo, hi = curve.get("life_low_h"), curve.get("life_high_h")
    if lo is not None and hi is not None and None not in lo and None not in hi:
        ax.fill_between(d, np.asarray(lo, float) / 24.0, np.asarray(hi, float) / 24.0, color="tab:blue", alpha=0.2,
                        lw=0, label="from the CI bounds of idle and event energy")
    if curve.get("run_duty") and curve.get("run_life_h"):
        ax.plot([curve["run_duty"]], [curve["run_life_h"] / 24.0], "o", color="tab:red",
                label=f"this run's duty cycle ({curve['run_duty']:.2g})")
    ax.set_xscale("log")
    finite = life[np.isfinite(life) & (life > 0)]
    if finite.size and finite.max() / finite.min() > 10:
        ax.set_yscale("log")
    ax.set_xlabel("duty cycle (fraction of time inferring)")
    ax.set_ylabel("battery life (days)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    ax.set_title(f"{title} [{label}]", fontsize=10)
    return _png(fig)


def pareto(points: list, title: str) -> bytes:
    """Accuracy (or energy) against latency for several models: each point one model,
    its label in brackets; the Pareto front (faster and more accurate) connected.

    ``points``: dicts with ``name``, ``latency_s`` and optional ``latency_ci`` (lo, hi),
    ``accuracy`` (fraction) with ``accuracy_ci``, ``energy_j``, ``label``.
    """
    have_acc = any(p.get("accuracy") is not None for p in points)
    y_key = "accuracy" if have_acc else "energy_j"
    pts = [p for p in points if p.get("latency_s") and p.get(y_key) is not None]
    fig = _figure(7.5, 4.8)
    ax = fig.subplots(1, 1)
    lat = np.array([p["latency_s"] for p in pts], float) if pts else np.zeros(0)
    unit, scale = _unit(float(np.median(lat)) if lat.size else None)
    for i, p in enumerate(pts):
        y = p[y_key] * (100 if y_key == "accuracy" else 1e3)
        xerr = yerr = None
        if p.get("latency_ci") and None not in p["latency_ci"]:
            xerr = [[(p["latency_s"] - p["latency_ci"][0]) / scale], [(p["latency_ci"][1] - p["latency_s"]) / scale]]
        ci = p.get(f"{y_key}_ci")
        if ci and None not in ci:
            f = 100 if y_key == "accuracy" else 1e3
            yerr = [[y - ci[0] * f], [ci[1] * f - y]]
        size = 40 + (120 if p.get("energy_j") and y_key == "accuracy" else 0)
        ax.errorbar([p["latency_s"] / scale], [y], xerr=xerr, yerr=yerr, fmt="o", ms=np.sqrt(size), capsize=3,
                    color=f"C{i % 10}", label=f"{p['name']} [{p.get('label', 'measured')}]"
                    + (f", {p['energy_j'] * 1e3:.3g} mJ/inference" if p.get("energy_j") and y_key == "accuracy"
                       else ""))
    if len(pts) > 1:
        order = sorted(pts, key=lambda p: p["latency_s"])
        front, best = [], None
        for p in order:
            v = p[y_key] if y_key == "accuracy" else -p[y_key]
            if best is None or v > best:
                front.append(p)
                best = v
        f = 100 if y_key == "accuracy" else 1e3
        ax.plot([p["latency_s"] / scale for p in front], [p[y_key] * f for p in front], "--", color="0.5", lw=1,
                label="Pareto front")
    ax.set_xlabel(f"median end-to-end latency ({unit})")
    ax.set_ylabel("top-1 accuracy (%)" if y_key == "accuracy" else "energy per inference (mJ)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    ax.set_title(title, fontsize=10)
    return _png(fig)


# ---------------------------------------------------------------- layer runs (report/layers.py)

def _layer_label(r: Union[ProfileRow, LayerErrorRow]) -> str:
    idx = "" if r.index is None else f"{r.index} "
    return f"{idx}{r.op}"


def layer_times(p: ProfileFigure, title: str, label: str) -> bytes:
    """Horizontal bars: each timed layer's time with its 95% interval, in execution order, the share
    of the whole written beside; grey: rows outside the sum."""
    rows = [r for r in p.layers or [] if r.median_s is not None]
    unit, scale = _unit(max((r.median_s or 0.0 for r in rows), default=1e-6))
    fig = _figure(9.0, 1.2 + 0.32 * max(1, len(rows)))
    ax = fig.subplots()
    y = np.arange(len(rows))[::-1]
    med = np.array([r.median_s for r in rows], float) / scale
    bare = [r.ci_low_s is None or r.ci_high_s is None for r in rows]
    lo = np.array([r.median_s if b else r.ci_low_s for r, b in zip(rows, bare)], float) / scale
    hi = np.array([r.median_s if b else r.ci_high_s for r, b in zip(rows, bare)], float) / scale
    colours = ["tab:blue" if r.in_sum else "tab:gray" for r in rows]
    # a layer without an interval is hatched and named so, never drawn like an exact figure
    bars = ax.barh(y, med, color=colours, xerr=[med - lo, hi - med], capsize=2, ecolor="black")
    for patch, b in zip(bars.patches, bare):
        if b:
            patch.set_hatch("//")
    ax.set_yticks(y, [_layer_label(r) + (" (no interval)" if b else "") for r, b in zip(rows, bare)], fontsize=8)
    for yy, m, r in zip(y, hi, rows):
        if r.share is not None:
            ax.text(m, yy, f"  {100 * r.share:.1f}%", va="center", fontsize=7)
    ax.set_xlabel(f"{p.statistic or 'median'} time per inference ({unit}), 95% CI")
    ax.set_title(f"{title} — {label}, {p.method}", fontsize=10)
    if p.method == "isolated":
        ax.text(0.99, 0.01, "isolated timings omit cache and fusion effects", transform=ax.transAxes,
                ha="right", va="bottom", fontsize=7, color="tab:red")
    return _png(fig)


def layer_sqnr(s: LayerErrorFigure, title: str, label: str) -> bytes:
    """SQNR of every layer with its interval (INT8 against FP32), the output quantization's own
    SQNR, the local SQNR, and the first jump marked."""
    rows = ([s.input] if s.input else []) + list(s.layers or [])
    x = np.arange(len(rows))
    fig = _figure(9.0, 3.6)
    ax = fig.subplots()

    def series(values: List[Optional[float]]) -> Any:
        return np.array([np.nan if v is None else v for v in values], dtype=float)

    sq = series([r.sqnr_db for r in rows])
    lo = series([r.sqnr_ci[0] if r.sqnr_ci else None for r in rows])
    hi = series([r.sqnr_ci[1] if r.sqnr_ci else None for r in rows])
    ax.fill_between(x, lo, hi, color="tab:blue", alpha=0.2, linewidth=0)
    ax.plot(x, sq, "o-", color="tab:blue", label="SQNR, INT8 vs FP32 (95% CI)")
    ax.plot(x, series([r.output_sqnr_db for r in rows]), "s--", color="tab:green", label="output quantization alone")
    ax.plot(x, series([r.best_sqnr_db for r in rows]), "_", color="black", markersize=12,
            label="over its own observed range")
    local = series([r.local.local_sqnr_db for r in rows])
    ax.plot(x, local, "^:", color="tab:orange", label="local (noise the layer adds)")
    fj = s.first_jump
    jump = next((k for k, r in enumerate(rows) if fj and r.index == fj.index and r.op == fj.op), None)
    if jump is not None:
        ax.axvline(jump, color="tab:red", linestyle="-", alpha=0.5)
        ax.text(jump, ax.get_ylim()[1], " first jump", color="tab:red", va="top", fontsize=8)
    ax.set_xticks(x, ["input" if r.index is None else _layer_label(r) for r in rows], rotation=45,
                  ha="right", fontsize=7)
    ax.set_ylabel("dB")
    ax.set_title(f"{title} — {label}", fontsize=10)
    ax.legend(fontsize=7, loc="lower left")
    return _png(fig)


__all__ = ["latency_distribution", "stage_breakdown", "soak_series", "reliability", "edge_slices",
           "energy_trace", "battery_curve", "pareto", "layer_times", "layer_sqnr"]


def trend(history: dict) -> bytes:
    """A series over time (``edgebench history``'s ``to_dict()``): each run's figure with its interval,
    the levels between change points drawn flat, each change point a dashed line with its size; a
    point where the model's file or the conditions changed is ringed."""
    pts = history["points"]
    unit = history.get("unit", "")
    shown, div = _unit(max(p["value"] for p in pts)) if unit == "s" else (unit, 1.0)
    scale = 1.0 / div
    x = np.arange(len(pts))
    y = np.array([p["value"] for p in pts]) * scale
    lo = np.array([p["ci_low"] if p.get("ci_low") is not None else p["value"] for p in pts]) * scale
    hi = np.array([p["ci_high"] if p.get("ci_high") is not None else p["value"] for p in pts]) * scale
    fig = _figure(11.0, 3.4)
    ax = fig.add_subplot(1, 1, 1)
    ax.errorbar(x, y, yerr=[y - lo, hi - y], fmt="o", ms=4, capsize=2, color="#1f77b4", label="run (95% CI)")
    marked = [i for i, p in enumerate(pts) if p.get("changed")]
    if marked:
        ax.scatter(x[marked], y[marked], s=90, facecolors="none", edgecolors="#ff7f0e",
                   label="model or conditions changed")
    cuts = [c["index"] for c in history.get("changes", [])]
    bounds = [0, *cuts, len(pts)]
    for a, b in zip(bounds[:-1], bounds[1:]):
        level = float(np.exp(np.mean(np.log(y[a:b]))))
        ax.hlines(level, a - 0.4, b - 0.6, colors="#2ca02c", linewidth=2)
    for c in history.get("changes", []):
        colour = "#d62728" if c.get("regression") else "#7f7f7f"
        ax.axvline(c["index"] - 0.5, color=colour, linestyle="--", linewidth=1.2)
        ax.annotate(f"×{c['ratio']:.3f}", (c["index"] - 0.5, float(hi.max())), color=colour, fontsize=9,
                    ha="left", va="top", xytext=(3, 0), textcoords="offset points")
    ax.set_xlabel("run (oldest first)" if history.get("by") != "commit" else "commit (in the order measured)")
    ax.set_ylabel(f"{history['metric']} ({shown})")
    ax.legend(loc="best", fontsize=8)
    labels = sorted({p.get("figure_label") or "" for p in pts} - {""})
    ax.set_title(f"{history.get('title', '')}: {len(pts)} runs, {len(cuts)} change point(s) "
                 f"[{', '.join(labels) or 'unlabelled'}]", fontsize=10)
    return _png(fig)
