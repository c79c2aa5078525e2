"""Battery-life estimates (level 4): a cell, an average power, and the model between them.

Model
-----
::

    E_nominal  = capacity_Ah x nominal_V                         (Wh)
    E_usable   = E_nominal x usable_fraction x temperature_derate  (Wh, down to the cut-off)
    P_battery  = P_load / regulator_efficiency                    (W drawn from the cell)
    P_self     = self_discharge_per_month x E_nominal / 730.485 h (W: linear self-discharge)
    life_h     = E_usable / (P_battery + P_self)

``P_load`` is the duty-cycle model's average power (idle power + energy per
event above idle x rate, :mod:`edgebench.stats.energy`), from a stored energy run
or from given figures (the event as energy above idle, or as the power while
active for the event's duration: ``(active - idle) x event_s``); or, from a soak or
sweep run, the average power over the window it names, at that run's own load. ``usable_fraction`` (default 0.8) stands for what the cell
delivers above the device's cut-off voltage at its load; ``regulator_efficiency``
(default 0.85) for the converter between cell and board. Both are assumptions
the user should replace with their own figures. Self-discharge is linear in
time (a fixed fraction of the nominal energy per month). Temperature derating
is a factor the user gives (``temp_derate``): no preset carries a sourced
capacity-versus-temperature curve, so a temperature alone only checks the
cell's rated range and says the figure is not derated.

Presets state where each number comes from (``source``); a figure without a
source is not in a preset.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Dict, Optional

from edgebench.errors import ResultError, UsageError
from edgebench.results.figures.points import Point
from edgebench.results.kinds import kind_of
from edgebench.results.model import RunResult
from edgebench.stats.energy import duty_point

HOURS_PER_MONTH = 365.2425 * 24 / 12  # 730.485


@dataclass(frozen=True)
class Cell:
    name: str
    description: str
    capacity_mah: float
    voltage_v: float
    source: str
    cutoff_v: Optional[float] = None
    chemistry: Optional[str] = None
    temp_range_c: Optional[tuple] = None
    self_discharge_pct_per_month: Optional[float] = None
    notes: str = ""

    def to_dict(self) -> dict:
        d = asdict(self)
        d["temp_range_c"] = list(self.temp_range_c) if self.temp_range_c else None
        return d


PRESETS = {
    "2xAA": Cell(
        "2xAA", "two Energizer L91 Ultimate Lithium AA cells in series", 3000.0, 3.0,
        chemistry="Li/FeS2", temp_range_c=(-40.0, 60.0),
        self_discharge_pct_per_month=10.0 / 180.0,
        source="Energizer L91 datasheet (data.energizer.com/pdfs/l91.pdf): 3000 mAh, 1.5 V nominal per cell, "
               "operating -40 to 60 °C; self-discharge derived from the earlier datasheet's shelf life "
               "'15 years at 21 °C (90% of rated capacity)' = 10% over 180 months",
        notes="for this chemistry the rated capacity changes little with load current"),
    "CR2032": Cell(
        "CR2032", "one CR2032 lithium coin cell", 225.0, 3.0, cutoff_v=2.0, chemistry="Li/MnO2",
        temp_range_c=(-20.0, 70.0),
        source="IEC 60086 CR2032 typical figures as tabulated in Wikipedia 'CR2032 battery': 225 mAh, "
               "3.0 V nominal, 2.0 V cut-off, -20 to 70 °C",
        notes="rated at light loads (about 0.2 mA); pulses of several mA lower the usable capacity, "
              "so lower --usable for radios and inference bursts"),
    "18650": Cell(
        "18650", "one Panasonic NCR18650B lithium-ion cell", 3350.0, 3.6, cutoff_v=2.5, chemistry="Li-ion (NCA)",
        source="Panasonic NCR18650B: nominal capacity 3350 mAh (manufacturer datasheet, as listed by Batemo), "
               "nominal 3.6 V (Panasonic product safety data sheet)",
        notes="18650 cells range from about 2500 to 3500 mAh: use --capacity-mah for yours"),
    "lipo-1000": Cell(
        "lipo-1000", "one 1000 mAh single-cell lithium-polymer pouch", 1000.0, 3.7, chemistry="LiPo",
        source="the ratings printed on generic 1000 mAh single-cell LiPo pouches (1000 mAh, 3.7 V nominal); "
               "no manufacturer datasheet: check your cell's",
        notes="no sourced temperature range or self-discharge"),
}


def preset(name: str) -> Cell:
    if name not in PRESETS:
        raise UsageError(f"unknown battery preset {name!r}",
                         f"presets: {', '.join(PRESETS)}; or --cell custom with --capacity-mah and --voltage")
    return PRESETS[name]


def make_cell(name: Optional[str], capacity_mah: Optional[float] = None, voltage_v: Optional[float] = None) -> Cell:
    """A preset (optionally with capacity/voltage overridden) or a custom cell."""
    if name in (None, "custom"):
        if capacity_mah is None or voltage_v is None:
            raise UsageError("a custom cell needs --capacity-mah and --voltage",
                             f"or pick a preset: {', '.join(PRESETS)}")
        cell = Cell("custom", "a cell given on the command line", float(capacity_mah), float(voltage_v),
                    source="given by the user")
    else:
        cell = preset(name)
        changes: Dict[str, float] = {}
        if capacity_mah is not None:
            changes["capacity_mah"] = float(capacity_mah)
        if voltage_v is not None:
            changes["voltage_v"] = float(voltage_v)
        if changes:
            cell = replace(cell, source=cell.source + "; " + ", ".join(f"{k} given by the user" for k in changes),
                           capacity_mah=changes.get("capacity_mah", cell.capacity_mah),
                           voltage_v=changes.get("voltage_v", cell.voltage_v))
    for label, v in (("capacity", cell.capacity_mah), ("voltage", cell.voltage_v)):
        if not (math.isfinite(v) and v > 0):
            raise UsageError(f"battery {label} must be positive, got {v}")
    return cell


@dataclass
class Load:
    """The average power the board draws, and where it comes from."""

    avg_power_w: float
    label: str                      # measured | estimated (datasheet) | given
    ci_low_w: Optional[float] = None
    ci_high_w: Optional[float] = None
    detail: dict = field(default_factory=dict)


@dataclass
class BatteryEstimate:
    cell: dict
    load: dict
    assumptions: dict
    energy_nominal_wh: float
    energy_usable_wh: float
    battery_power_w: float
    self_discharge_w: float
    life_h: float
    life_low_h: Optional[float]
    life_high_h: Optional[float]
    label: str
    model: str
    notes: list

    @property
    def life_days(self) -> float:
        return self.life_h / 24.0

    def to_dict(self) -> dict:
        d = asdict(self)
        d["format"] = "edgebench-battery-estimate"
        d["life_days"] = self.life_days
        d["life_years"] = self.life_h / (24.0 * 365.2425)
        return d


def _fraction(name: str, value: float, allow_zero: bool = False) -> float:
    ok = math.isfinite(value) and (0 <= value <= 1 if allow_zero else 0 < value <= 1)
    if not ok:
        raise UsageError(f"{name} {value!r} is outside {'[0, 1]' if allow_zero else '(0, 1]'}")
    return float(value)


def estimate(cell: Cell, load: Load, usable: float = 0.8, regulator_eff: float = 0.85,
             self_discharge_pct_per_month: Optional[float] = None, temp_c: Optional[float] = None,
             temp_derate: Optional[float] = None) -> BatteryEstimate:
    """Battery life for ``load`` on ``cell`` (see the module doc for the model)."""
    usable = _fraction("usable fraction", usable)
    regulator_eff = _fraction("regulator efficiency", regulator_eff)
    if not (math.isfinite(load.avg_power_w) and load.avg_power_w > 0):
        raise UsageError(f"average power must be positive, got {load.avg_power_w} W")
    notes = []
    sd = self_discharge_pct_per_month
    sd_source = "given"
    if sd is None:
        sd, sd_source = cell.self_discharge_pct_per_month, "preset"
    if sd is None:
        sd, sd_source = 0.0, "none"
        notes.append("self-discharge not included: no sourced figure for this cell "
                     "(pass --self-discharge-pct-per-month)")
    if not (math.isfinite(sd) and 0 <= sd < 100):
        raise UsageError(f"self-discharge {sd}%/month is outside [0, 100)")
    derate = 1.0
    if temp_derate is not None:
        derate = _fraction("temperature derating", temp_derate)
    if temp_c is not None:
        lo, hi = cell.temp_range_c or (None, None)
        if lo is not None and not lo <= temp_c <= hi:
            raise UsageError(f"{temp_c:g} °C is outside the {cell.name} cell's rated range {lo:g} to {hi:g} °C")
        if temp_derate is None:
            notes.append(f"capacity not derated for {temp_c:g} °C: no sourced capacity-temperature curve for "
                         f"this cell (pass --temp-derate F, the fraction left at that temperature)")
    boundary = ((load.detail or {}).get("source") or {}).get("boundary")
    if boundary in ("soc", "cpu-cores", "dram", "platform", "pmic-rails", "rail"):
        notes.append(f"the run measured only '{boundary}', not everything the battery feeds: the real load is "
                     "higher and the life shorter than this figure")
    e_nom = cell.capacity_mah / 1000.0 * cell.voltage_v
    e_use = e_nom * usable * derate
    p_batt = load.avg_power_w / regulator_eff
    p_self = sd / 100.0 * e_nom / HOURS_PER_MONTH
    life = e_use / (p_batt + p_self)

    def life_at(p):
        return None if p is None or p <= 0 else e_use / (p / regulator_eff + p_self)

    label = f"estimated from {load.label} power" if load.label != "given" else "estimated from given figures"
    return BatteryEstimate(
        cell=cell.to_dict(), load=asdict(load),
        assumptions={"usable_fraction": usable, "regulator_efficiency": regulator_eff,
                     "self_discharge_pct_per_month": sd, "self_discharge_source": sd_source,
                     "temp_c": temp_c, "temp_derate": derate if temp_derate is not None else None,
                     "label": "assumed (defaults unless given)"},
        energy_nominal_wh=e_nom, energy_usable_wh=e_use, battery_power_w=p_batt, self_discharge_w=p_self,
        life_h=life, life_low_h=life_at(load.ci_high_w), life_high_h=life_at(load.ci_low_w),
        label=label,
        model="life = capacity x voltage x usable x derate / (average power / regulator efficiency + "
              "self-discharge power)",
        notes=notes + ([cell.notes] if cell.notes else []))


# ---------------------------------------------------------------------------
# figures from a stored energy run


def figures_from_run(result: RunResult, rate_hz: Optional[float] = None, duty: Optional[float] = None) -> dict:
    """The figures a battery estimate takes from a stored run.

    An energy run: idle power, energy per event above idle, event duration and rate (a
    ``rate_hz``/``duty`` given by the caller replaces the run's). A soak or a sweep: the average
    power over a window at the run's own load (``avg_power_w``), and which window that is: a soak's
    sustained (or final) window; one sweep point's, picked by ``duty`` or ``rate_hz`` when the sweep
    has several.
    """
    kind = kind_of(result)
    if kind.sustained:                 # a soak: the average power of its sustained window
        return _soak_figures(result, rate_hz, duty)
    if kind.points:                    # a sweep: one point's window
        return _sweep_figures(result, rate_hz, duty)
    p = result.power
    idle, event, inf = p.idle, p.event, p.inference
    if not kind.energy or idle.power_w is None or event.energy_j is None:
        raise ResultError(f"run {result.run_id} has no energy figures (kind {result.kind!r})",
                          "give a run written by `edgebench energy`, soak or sweep, or --idle-w and "
                          "--event-above-idle-j")
    return {"run_id": result.run_id, "kind": "energy", "label": p.label or "measured",
            "idle_w": idle.power_w, "idle_ci": (idle.ci_low_w, idle.ci_high_w),
            "event_j": event.energy_j, "event_ci": (event.ci_low_j, event.ci_high_j),
            "event_s": inf.duration_s,
            "rate_hz": p.average.rate_hz or result.scenario.rate_hz,
            "boundary": p.boundary, "instrument": p.instrument, "method": p.method,
            "board": result.board.name, "model": result.model.name}


def _own_load_only(result: RunResult, rate_hz, duty, load: str) -> None:
    if rate_hz is not None or duty is not None:
        raise UsageError(f"run {result.run_id} is a soak: its power is the average at its own load ({load}); "
                         "--rate and --duty do not apply to it",
                         "drop --rate/--duty, or run `edgebench energy` at the load you want")


def _soak_figures(result: RunResult, rate_hz, duty) -> dict:
    p = result.power
    w = p.window
    if w.avg_power_w is None:
        raise ResultError(f"soak run {result.run_id} has no average power for its window: "
                          f"{p.note or 'no energy figure was recorded'}",
                          "soak a simulated board, add datasheet power figures (idle and active) to the profile, "
                          "or measure with `edgebench energy --meter ...`")
    load = f"{w.rate_hz:.4g}/s" if w.rate_hz else "its load"
    _own_load_only(result, rate_hz, duty, load)
    return {"run_id": result.run_id, "kind": "soak", "label": w.label or p.label,
            "avg_power_w": w.avg_power_w, "rate_hz": w.rate_hz,
            "window": f"the soak's {w.window or 'final'} window ({w.t_from_s or 0:.0f}-"
                      f"{w.t_to_s or 0:.0f} s after the load started)",
            "boundary": p.boundary, "instrument": p.instrument, "method": p.method,
            "board": result.board.name, "model": result.model.name}


def _sweep_figures(result: RunResult, rate_hz, duty) -> dict:
    axis = result.extra.axis
    every = result.extra.points or []
    pts = [e for e in every if e.energy.avg_power_w is not None]
    if not pts:
        raise ResultError(f"sweep run {result.run_id} has no point with an average power",
                          result.power.note or "sweep a simulated board or one with datasheet figures")
    if duty is not None or rate_hz is not None:
        if (duty is not None) != (axis == "duty"):
            raise UsageError(f"sweep {result.run_id} varies the {axis}: pick a point with --{axis}",
                             "values: " + ", ".join(_point_value(e, axis) for e in pts))
        want = duty if duty is not None else rate_hz
        pts = [e for e in pts if _load(e, axis) is not None and math.isclose(float(_load(e, axis) or 0.0), want,
                                                                             rel_tol=1e-6)]
        if not pts:
            raise UsageError(f"sweep {result.run_id} has no point with energy at {axis} {want:g}",
                             "values: " + ", ".join(_point_value(e, axis) for e in every))
    if len(pts) > 1:
        raise UsageError(f"sweep {result.run_id} has {len(pts)} points with energy: say which",
                         f"give --{axis} ({', '.join(_point_value(e, axis) for e in pts)}), or the point's "
                         "folder (RUN/points/pNN-...)")
    e = pts[0]
    en = e.energy
    return {"run_id": result.run_id, "kind": "sweep", "label": en.label, "avg_power_w": en.avg_power_w,
            "rate_hz": en.rate_hz or e.throughput_per_s, "duty": e.realized_duty,
            "point": e.id,
            "window": f"sweep point {e.id} ({e.name}), its {'sustained' if e.steady else 'final'} "
                      "window",
            "boundary": result.power.boundary, "instrument": result.power.instrument, "method": result.power.method,
            "board": result.board.name, "model": e.model.name}


def _load(e: Point, axis: Optional[str]) -> Optional[float]:
    """A sweep point's value on the sweep's load axis (duty cycle or requested rate)."""
    return e.duty if axis == "duty" else e.requested_rate_hz


def _point_value(e: Point, axis: Optional[str]) -> str:
    value = _load(e, axis)
    return f"{e.id}: {axis} {value:g}" if value is not None else f"{e.id}: {axis} ?"


#: what a :class:`Load` names of the run its figures come from: ``instrument`` is the meter
#: (``power.instrument``, None without one), ``method`` how the power is known (``power.method``)
SOURCE_KEYS = ("run_id", "kind", "board", "model", "boundary", "instrument", "method", "point")


def load_from_window(figs: dict) -> "Load":
    """A soak's or sweep's average power over the window :func:`figures_from_run` named, as a :class:`Load`."""
    return Load(figs["avg_power_w"], figs["label"],
                detail={"avg_power_w": figs["avg_power_w"], "rate_hz": figs.get("rate_hz"), "duty": figs.get("duty"),
                        "window": figs.get("window"),
                        "source": {k: figs.get(k) for k in SOURCE_KEYS}})


def above_idle_from_active(idle_w: float, active_w: float, event_s: Optional[float]) -> float:
    """Energy of one event above idle (J) from the power while active: ``(active - idle) x event_s``."""
    if event_s is None:
        raise UsageError("--active-w needs --event-s, the duration of one event at that power",
                         "e.g. --active-w 2 --event-s 1")
    if not (math.isfinite(active_w) and active_w > 0):
        raise UsageError(f"active power must be positive, got {active_w} W")
    if not (math.isfinite(event_s) and event_s > 0):
        raise UsageError(f"event duration must be positive, got {event_s!r} s")
    if active_w < idle_w:
        raise UsageError(f"active power {active_w:g} W is below the idle power {idle_w:g} W",
                         "--active-w is the whole board's power while it infers, idle included")
    return (active_w - idle_w) * event_s


def load_from_figures(idle_w: float, event_j: float, label: str, *, rate_hz: Optional[float] = None,
                      duty: Optional[float] = None, event_s: Optional[float] = None,
                      idle_ci: tuple = (None, None), event_ci: tuple = (None, None),
                      source: Optional[dict] = None) -> Load:
    """The duty-cycle model's average power as a :class:`Load`, with bounds where both CIs exist."""
    point = duty_point(idle_w, event_j, rate_hz=rate_hz, duty=duty, event_s=event_s)
    lo = hi = None
    if None not in idle_ci and None not in event_ci:
        lo = max(0.0, idle_ci[0] + max(event_ci[0], 0.0) * point.rate_hz)
        hi = idle_ci[1] + event_ci[1] * point.rate_hz
    return Load(point.avg_power_w, label, lo, hi,
                detail={**point.to_dict(), "bounds": "idle and event CI bounds combined (conservative)",
                        "source": source or {}})


__all__ = ["Cell", "PRESETS", "preset", "make_cell", "Load", "BatteryEstimate", "estimate",
           "figures_from_run", "load_from_figures", "SOURCE_KEYS", "load_from_window", "above_idle_from_active", "HOURS_PER_MONTH"]
