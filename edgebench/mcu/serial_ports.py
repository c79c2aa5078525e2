"""Finding a board's serial port by its USB ids (level 2): pyserial's ``list_ports``.

A profile whose ``transport.url`` is ``auto`` lists the USB ``vid:pid`` pairs of its serial port
(``transport.usb``; an ST-LINK's virtual COM port is 0483:374b on the ST-LINK/V2-1 of the
Nucleo boards, 0483:374e/374f/3753/3754 on an ST-LINK/V3). :func:`find_port` picks the one
port that matches; none or several is one clear line listing what is there.
:func:`connected` is what ``edgebench boards --connected`` shows: each USB serial port and the
profiles whose ids it matches (several Nucleo boards share one ST-LINK id: the USB ids tell the
probe, not the board on it).
"""
from __future__ import annotations

from edgebench.errors import TransportError

AUTO = "auto"


def _usb_id(port) -> str | None:
    if port.vid is None or port.pid is None:
        return None
    return f"{port.vid:04x}:{port.pid:04x}"


def list_usb_ports(comports=None) -> list:
    """The serial ports that sit on USB: dicts of device, usb id, description, serial number."""
    if comports is None:
        from serial.tools.list_ports import comports as system_ports  # pyserial: only when ports are listed

        comports = system_ports
    out = []
    for port in sorted(comports(), key=lambda p: p.device):
        usb = _usb_id(port)
        if usb is not None:
            out.append({"device": port.device, "usb": usb, "description": port.description or "",
                        "serial_number": port.serial_number, "manufacturer": port.manufacturer,
                        "product": port.product})
    return out


def find_port(profile, comports=None) -> str:
    """The serial port of ``profile``'s board, found by ``transport.usb``."""
    wanted = set(profile.transport.usb or ())
    ports = list_usb_ports(comports)
    hits = [p for p in ports if p["usb"] in wanted]
    if len(hits) == 1:
        return hits[0]["device"]
    listing = "; ".join(f"{p['device']} ({p['usb']} {p['description']})" for p in (hits or ports)) or "none"
    if not hits:
        raise TransportError(f"no serial port of board {profile.name} is plugged in (USB ids "
                             f"{', '.join(sorted(wanted))}; USB serial ports here: {listing})",
                             "plug the board in by its ST-LINK USB port, or give the port with --url")
    raise TransportError(f"{len(hits)} serial ports could be board {profile.name}'s: {listing}",
                         "pick one with --url (edgebench boards --connected lists them)")


def connected(profiles, comports=None) -> list:
    """Each USB serial port with the names of the profiles whose USB ids it matches."""
    out = []
    for port in list_usb_ports(comports):
        matches = [p.name for p in profiles
                   if p.transport.type == "serial" and port["usb"] in (p.transport.usb or ())]
        out.append({**port, "profiles": matches})
    return out


def resolve_url(profile, url: str | None = None, comports=None) -> str:
    """``url`` when given, else the profile's address, found by USB ids when it is ``auto``."""
    address = url or profile.transport.url
    return find_port(profile, comports) if address == AUTO else address


__all__ = ["AUTO", "list_usb_ports", "find_port", "connected", "resolve_url"]
