"""Number formatting shared by claims, tables and reports (level 1, pure)."""
from __future__ import annotations


def duration(seconds, digits: int = 3) -> str:
    """A duration with a unit that keeps ``digits`` significant figures: 654 µs, 1.23 ms, 2.50 s."""
    if seconds is None:
        return "n/a"
    s = float(seconds)
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if abs(s) >= scale or unit == "µs":
            return f"{_sig(s / scale, digits)} {unit}"
    return f"{s} s"  # pragma: no cover


def duration_range(lo, hi, digits: int = 3) -> str:
    """Two durations in the unit of the lower one: '0.64–0.66 ms'."""
    if lo is None or hi is None:
        return "n/a"
    unit_text = duration(lo, digits).split(" ")[1]
    scale = {"s": 1.0, "ms": 1e-3, "µs": 1e-6}[unit_text]
    return f"{_sig(lo / scale, digits)}–{_sig(hi / scale, digits)} {unit_text}"


def _sig(x: float, digits: int) -> str:
    if x == 0:
        return "0"
    from math import floor, isfinite, log10

    if not isfinite(x):     # a damaged run.json: shown as what it is, never a crash
        return str(x)

    decimals = max(0, digits - 1 - int(floor(log10(abs(x)))))
    return f"{x:,.{decimals}f}"


def count(n) -> str:
    return "n/a" if n is None else f"{int(n):,}"


def rate(per_s) -> str:
    if per_s is None:
        return "n/a"
    return f"{per_s:,.0f}" if per_s >= 100 else _sig(per_s, 3)


def percent(fraction, decimals: int = 1) -> str:
    return "n/a" if fraction is None else f"{100 * fraction:.{decimals}f}%"


def p_value(p) -> str:
    """A p-value as text that never reads 'p=0': 'p=0.031', 'p=2.1e-05', 'p<1e-16'.

    scipy returns 0.0 when the true value underflows double precision (or is below what
    its algorithm resolves); anything under 1e-16 is printed as a bound, not a number.
    """
    if p is None:
        return "p=n/a"
    p = float(p)
    if p != p:  # NaN
        return "p=n/a"
    if p < 1e-16:
        return "p<1e-16"
    if p < 0.001:
        return f"p={p:.1e}"
    return f"p={p:.2g}" if p < 0.1 else f"p={p:.2f}"
