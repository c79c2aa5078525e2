"""PNG plots of sweeps (level 1): pure functions of the data given, writing only the path given.

matplotlib is imported inside the functions (``edgebench --help`` stays fast) and
drawn with the Agg canvas on a bare ``Figure``: no pyplot state, no display needed.

Every figure states the label of its figures (``note``: "all figures simulated", or
which panel is measured and which estimated); ``warning`` is drawn in red across
the top (e.g. mixed labels that must not be compared).
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np

MAX_BINS = 300
PER_PAGE = 8


def _figure(width_in: float, height_in: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def _header(fig, title: str, note: str, warning: Optional[str]) -> None:
    fig.suptitle(f"{title}\n{note}", fontsize=11)
    if warning:
        fig.text(0.5, 0.995, warning, color="red", ha="center", va="top", fontsize=10, weight="bold")


def binned(t, y, max_bins: int = MAX_BINS):
    """``(bin centre, median, p10, p90)`` of ``y`` in equal-time bins (all points when few)."""
    t, y = np.asarray(t, np.float64), np.asarray(y, np.float64)
    ok = np.isfinite(t) & np.isfinite(y)
    t, y = t[ok], y[ok]
    if t.size <= max_bins:
        return t, y, y, y
    edges = np.linspace(t.min(), t.max(), max_bins + 1)
    idx = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, max_bins - 1)
    order = np.argsort(idx, kind="stable")
    groups = np.split(y[order], np.searchsorted(idx[order], np.arange(1, max_bins)))
    centre = (edges[:-1] + edges[1:]) / 2
    keep = np.array([g.size > 0 for g in groups])
    q = np.array([np.percentile(g, [50, 10, 90]) if g.size else [np.nan] * 3 for g in groups])
    return centre[keep], q[keep, 0], q[keep, 1], q[keep, 2]


def point_timeseries(panels: list, path, title: str, note: str, warning: Optional[str] = None,
                     per_page: int = PER_PAGE) -> list:
    """Small multiples: one row per point, columns temperature, clock and latency against time.

    ``panels``: dicts with ``title``, ``t_temp_s``/``temp_c``, ``t_freq_s``/``freq_hz``,
    ``t_lat_s``/``latency_s`` (every inference; drawn as binned median and 10–90% band) and
    ``window`` (start, end) of the final window (shaded), or None. More than ``per_page``
    points go to further files ``<stem>-2.png``, ... Returns the paths written.
    """
    path = Path(path)
    pages = [panels[i:i + per_page] for i in range(0, len(panels), per_page)] or [[]]
    out = []
    for k, page in enumerate(pages, 1):
        target = path if k == 1 else path.with_name(f"{path.stem}-{k}{path.suffix}")
        height = 1.0 + 2.0 * max(1, len(page))
        fig = _figure(13.0, height)
        axes = fig.subplots(max(1, len(page)), 3, sharex=True, sharey="col", squeeze=False)
        for row, p in zip(axes, page):
            t_temp, temp = np.asarray(p["t_temp_s"], float), np.asarray(p["temp_c"], float)
            t_freq, freq = np.asarray(p["t_freq_s"], float), np.asarray(p["freq_hz"], float)
            if temp.size and np.isfinite(temp).any():
                row[0].plot(t_temp, temp, lw=1.0, color="tab:red")
            else:
                row[0].text(0.5, 0.5, "no thermal source", transform=row[0].transAxes, ha="center")
            if freq.size and np.isfinite(freq).any():
                row[1].plot(t_freq, freq / 1e9, lw=1.0, color="tab:blue", drawstyle="steps-post")
            else:
                row[1].text(0.5, 0.5, "no clock reading", transform=row[1].transAxes, ha="center")
            c, med, lo, hi = binned(p["t_lat_s"], p["latency_s"])
            row[2].fill_between(c, lo * 1e3, hi * 1e3, color="tab:green", alpha=0.25, lw=0)
            row[2].plot(c, med * 1e3, lw=1.0, color="tab:green")
            for ax in row:
                if p.get("window"):
                    ax.axvspan(*p["window"], color="0.85", zorder=0)
                ax.grid(alpha=0.3)
            row[0].set_title(p["title"], loc="left", fontsize=9)
        for ax, what in zip(axes[0], ("temperature (°C)", "CPU clock (GHz)", "latency (ms): median, 10–90%")):
            ax.set_ylabel(what, fontsize=8)
        for ax in axes[-1]:
            ax.set_xlabel("time since load start (s)")
        suffix = f" (page {k} of {len(pages)})" if len(pages) > 1 else ""
        _header(fig, f"{title}: temperature, clock and latency per point{suffix}",
                f"{note}; grey: final window (sustained figures)", warning)
        fig.tight_layout()
        fig.savefig(target)
        out.append(target)
    return out


def load_curves(series: list, path, x_label: str, title: str, note: str, warning: Optional[str] = None,
                requested_line: bool = False, energy_label: Optional[str] = None) -> Path:
    """Sustained throughput and energy per inference against the load (duty cycle or rate).

    ``series``: dicts with ``name``, ``x``, ``throughput_per_s``, ``energy_j`` (None where
    absent) and ``steady`` (hollow markers where steady state was not reached).
    ``requested_line``: draw throughput = requested rate (a rate axis).
    """
    fig = _figure(12.0, 5.0)
    ax_t, ax_e = fig.subplots(1, 2, squeeze=True)
    xs = [x for s in series for x in s["x"] if x]
    for i, s in enumerate(series):
        color = f"C{i % 10}"
        x = np.asarray(s["x"], float)
        tp = np.asarray([np.nan if v is None else v for v in s["throughput_per_s"]], float)
        en = np.asarray([np.nan if v is None else v for v in s["energy_j"]], float)
        steady = np.asarray(s["steady"], bool)
        for ax, y in ((ax_t, tp), (ax_e, en)):
            if np.isfinite(y).any():
                ax.plot(x, y, "-", color=color, lw=1.2, label=s["name"])
                ax.plot(x[steady], y[steady], "o", color=color)
                ax.plot(x[~steady], y[~steady], "o", mfc="white", color=color)
    if requested_line and xs:
        lim = np.array([min(xs), max(xs)])
        ax_t.plot(lim, lim, "--", color="0.5", lw=1, label="requested rate")
    for ax in (ax_t, ax_e):
        ax.set_xlabel(x_label)
        if xs and max(xs) / min(xs) > 10:
            ax.set_xscale("log")
        ax.grid(alpha=0.3, which="both")
    ax_t.set_ylabel("sustained throughput (inferences/s)")
    ax_t.set_title("sustained throughput (final window)", fontsize=10)
    energies = [v for s in series for v in s["energy_j"] if v]
    if energies:
        if max(energies) / min(energies) > 10:
            ax_e.set_yscale("log")
        ax_e.set_ylabel(f"energy per inference (J, {energy_label})")
        ax_e.set_title(f"energy per inference, idle included ({energy_label})", fontsize=10)
    else:
        ax_e.text(0.5, 0.5, "no energy figures\n(no meter, no datasheet power)", transform=ax_e.transAxes,
                  ha="center", va="center")
        ax_e.set_title("energy per inference", fontsize=10)
    handles, labels = ax_t.get_legend_handles_labels()
    if handles:
        ax_t.legend(fontsize=7, loc="best", title="hollow: not steady", title_fontsize=7)
    _header(fig, f"{title}: sustained throughput and energy per inference", note, warning)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path)
    return path


__all__ = ["point_timeseries", "load_curves", "binned"]
