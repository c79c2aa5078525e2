"""Power meters (level 2) behind one interface, :class:`~edgebench.power.base.PowerMeter`.

:func:`open_meter` builds a meter by name; the concrete modules are imported
only then, and vendor packages (smbus2, ppk2-api, joulescope) only when the
meter starts. ``port`` means, per meter:

=============  ==============================================================
rapl           powercap zone name or folder (default ``intel-rapl:0``)
hwmon          hwmon device name (``ina226``) or folder (default: the first
               with a power or current input)
ina219/226/260 ``BUS:ADDRESS`` (default ``1:0x40``)
vcgencmd       the vcgencmd program (default ``vcgencmd``)
ppk2           serial port (default: the first PPK2 found)
joulescope     unused (the first Joulescope found)
lpm01a         serial port (required)
=============  ==============================================================

Options (``--meter-opt key=value``) are the meter class's keyword arguments,
e.g. ``shunt_ohm=0.1 max_current_a=3.2`` for the INA219/INA226, ``rate_hz=200``
for polled meters, ``voltage_v=1.8 freq_hz=1000`` for the LPM01A.
"""
from __future__ import annotations

import importlib
import inspect
from typing import Optional

from edgebench.errors import UsageError
from edgebench.power.base import (
    BOUNDARIES,
    MeterError,
    MeterInfo,
    PowerMeter,
    Samples,
    check_boundary,
)

METERS = {
    "rapl": ("edgebench.power.sysfs", "RaplMeter", "zone", "Intel RAPL powercap energy counter (this computer)"),
    "hwmon": ("edgebench.power.sysfs", "HwmonMeter", "device", "Linux hwmon power/current/voltage (this computer)"),
    "ina219": ("edgebench.power.ina", "InaMeter", "port", "TI INA219 over I2C (smbus2)"),
    "ina226": ("edgebench.power.ina", "InaMeter", "port", "TI INA226 over I2C (smbus2)"),
    "ina260": ("edgebench.power.ina", "InaMeter", "port", "TI INA260 over I2C (smbus2)"),
    "vcgencmd": ("edgebench.power.vcgencmd", "VcgencmdPmicMeter", "binary", "Raspberry Pi 5 PMIC rails"),
    "ppk2": ("edgebench.power.usb_meters", "Ppk2Meter", "port", "Nordic PPK2 (ppk2-api)"),
    "joulescope": ("edgebench.power.usb_meters", "JoulescopeMeter", "device", "Joulescope (joulescope)"),
    "lpm01a": ("edgebench.power.lpm01a", "Lpm01aMeter", "port", "ST X-NUCLEO-LPM01A (serial)"),
}


def _value(text: str):
    low = text.strip().lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    if low in ("none", "null"):
        return None
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def parse_options(items) -> dict:
    """``["shunt_ohm=0.1", "rate_hz=200"]`` -> ``{"shunt_ohm": 0.1, "rate_hz": 200}``."""
    out = {}
    for item in items or ():
        key, sep, val = str(item).partition("=")
        if not sep or not key.strip():
            raise UsageError(f"meter option {item!r} is not KEY=VALUE", "e.g. --meter-opt shunt_ohm=0.1")
        out[key.strip()] = _value(val)
    return out


def open_meter(name: str, port: Optional[str] = None, options: Optional[dict] = None,
               boundary: Optional[str] = None):
    """A meter by name (see the table above); raises UsageError/MeterError with the fix."""
    if name not in METERS:
        raise UsageError(f"unknown power meter {name!r}", f"use one of {', '.join(METERS)}")
    module, cls_name, port_arg, _ = METERS[name]
    cls = getattr(importlib.import_module(module), cls_name)
    kwargs = dict(options or {})
    if name.startswith("ina"):
        kwargs["chip"] = name
    if port is not None:
        kwargs[port_arg] = port
    if boundary is not None:
        kwargs["boundary"] = check_boundary(boundary)
    accepted = set(inspect.signature(cls.__init__).parameters) | set(
        inspect.signature(cls.__mro__[1].__init__).parameters)
    unknown = sorted(k for k in kwargs if k not in accepted)
    if unknown:
        raise UsageError(f"meter {name} has no option {', '.join(unknown)}",
                         f"options: {', '.join(sorted(a for a in accepted if a not in ('self', 'kw', 'clock')))}")
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise UsageError(f"bad options for meter {name}: {exc}") from None


__all__ = ["METERS", "open_meter", "parse_options", "BOUNDARIES", "MeterError", "MeterInfo", "PowerMeter",
           "Samples", "check_boundary"]
