"""Board profiles (level 3): what a board is, how to reach it, what it can measure.

A profile is one YAML file (schema 1, documented in ``docs/boards.md``) whose
file stem is the board's name. :func:`load_profile` validates it strictly: an
unknown key, a missing key, a wrong type or a bad value is a
:class:`~edgebench.errors.ProfileError` whose message is one line naming the
file, the key path and what was expected, e.g.::

    boards/pi.yaml: transport.type: expected one of local, ssh, serial, got 'sshh'

Figures under ``datasheet`` are published by the vendor, never measured by
edgebench; wherever they are shown they carry :data:`ESTIMATED_LABEL`.
"""
from __future__ import annotations

import os
import re
import string
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Mapping

from edgebench.errors import EdgebenchError, ProfileError
from edgebench.sim.params import SimParamError, SimParams
from edgebench.transport.url import transport_kind

SCHEMA_VERSION = 1
ESTIMATED_LABEL = "estimated (datasheet)"

KINDS = ("linux", "mcu")
TRANSPORT_TYPES = ("local", "ssh", "serial")
SIM_TRANSPORT = "sim"   # a simulated board (edgebench.sim, the profile's `simulated` block): no hardware
RUNTIMES = ("ai_edge_litert", "tflite_runtime", "tensorflow", "edgebench_firmware", "mlperf_tiny")
KERNELS = ("xnnpack", "builtin", "reference", "cmsis_nn")
DELEGATES = ("edgetpu",)
TELEMETRY = ("thermal_zone", "cpufreq", "hwmon", "vcgencmd", "apex", "mcu_temp")
FLASHER_PLACEHOLDERS = ("image", "url", "name")
COUNTERS = ("cycles", "timer")   # firmware.counter: the core's cycle counter (ticks are core cycles), or a timer
EMULATORS = ("posix", "qemu", "unicorn")   # unicorn: the instruction-set emulator (edgebench.mcu.unicorn_board)
EMULATOR_URL = "emulator"   # transport.url of a board whose emulator edgebench starts itself
# transport.url of a board whose serial port is found by its USB ids (transport.usb); the same word as
# edgebench.mcu.serial_ports.AUTO, not imported from there (edgebench.mcu loads numpy; tests/test_boards.py)
AUTO_URL = "auto"
DEFAULT_BAUD = 115200
DEFAULT_SSH_PYTHON = "python3"

_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_USB_ID_RE = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{4}$")
_HOST = r"(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])"
_USER = r"[A-Za-z0-9._][A-Za-z0-9._-]*"
_SSH_URL_RE = re.compile(rf"^ssh://(?:{_USER}@)?{_HOST}(?::(?P<port>[0-9]{{1,5}}))?/?$")
_SSH_USERHOST_RE = re.compile(rf"^{_USER}@{_HOST}$")


# ---------------------------------------------------------------------------
# validation helpers: every failure is one line "<file>: <key>: <what>"


def close_matches(word: str, possibilities, n: int = 1, cutoff: float = 0.6) -> list:
    """The ``n`` names of ``possibilities`` closest to ``word`` (difflib), for "did you mean" hints."""
    import difflib  # only needed on the error path

    return difflib.get_close_matches(word, list(possibilities), n=n, cutoff=cutoff)


def _got(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean (%s)" % ("true" if value else "false")
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "...'"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return "a " + type(value).__name__


class _Check:
    """Raises ProfileError for one source (a file name or '<dict>')."""

    def __init__(self, where: str):
        self.where = where

    def fail(self, key: str, what: str) -> ProfileError:
        return ProfileError(f"{self.where}: {key}: {what}" if key else f"{self.where}: {what}")

    def expected(self, key: str, expected: str, value: Any) -> ProfileError:
        return self.fail(key, f"expected {expected}, got {_got(value)}")

    def keys(self, data: Any, prefix: str, allowed: tuple, required: tuple) -> None:
        if not isinstance(data, Mapping):
            raise self.expected(prefix or "(top level)", "a mapping of keys", data)
        for key in data:
            if not isinstance(key, str) or key not in allowed:
                path = f"{prefix}.{key}" if prefix else str(key)
                close = close_matches(str(key), allowed, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                raise self.fail(path, f"unknown key{hint}; expected one of {', '.join(allowed)}")
        for key in required:
            if key not in data:
                path = f"{prefix}.{key}" if prefix else key
                raise self.fail(path, "missing required key")

    def string(self, key: str, value: Any, *, empty_ok: bool = False) -> str:
        if not isinstance(value, str):
            raise self.expected(key, "a string", value)
        if not empty_ok and not value.strip():
            raise self.expected(key, "a non-empty string", value)
        if "\n" in value.strip() and key != "notes":
            raise self.expected(key, "a single-line string", value)
        return value

    def choice(self, key: str, value: Any, allowed: tuple) -> str:
        if not isinstance(value, str) or value not in allowed:
            raise self.expected(key, "one of " + ", ".join(allowed), value)
        return value

    def choices(self, key: str, value: Any, allowed: tuple, *, empty_ok: bool) -> tuple:
        if not isinstance(value, list):
            raise self.expected(key, "a list of " + ", ".join(allowed), value)
        if not value and not empty_ok:
            raise self.expected(key, "a non-empty list of " + ", ".join(allowed), value)
        seen: list = []
        for i, item in enumerate(value):
            self.choice(f"{key}[{i}]", item, allowed)
            if item in seen:
                raise self.fail(f"{key}[{i}]", f"expected each entry once, got {item!r} twice")
            seen.append(item)
        return tuple(value)

    def integer(self, key: str, value: Any, minimum: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.expected(key, f"an integer >= {minimum}", value)
        return value

    def number(self, key: str, value: Any) -> float:
        if (isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0
                or value == float("inf")):
            extra = ""
            if isinstance(value, str) and re.match(r"^[0-9.]+[eE][0-9]+$", value.strip()):
                extra = " (YAML reads 2.4e9 as text: write 2.4e+9 or 2400000000)"
            raise self.fail(key, f"expected a positive number, got {_got(value)}{extra}")
        return value


def _check_name(check: _Check, value: Any) -> str:
    name = check.string("name", value)
    if not _NAME_RE.match(name):
        raise check.expected("name", "lowercase letters, digits, '.', '_' or '-' "
                             "(starting with a letter or digit)", name)
    return name


def _check_ssh_url(check: _Check, key: str, url: Any) -> str:
    url = check.string(key, url)
    m = _SSH_URL_RE.match(url)
    if m:
        port = m.group("port")
        if port is not None and not 1 <= int(port) <= 65535:
            raise check.expected(key, "a port between 1 and 65535", url)
        return url
    if _SSH_USERHOST_RE.match(url):
        return url
    raise check.expected(key, "ssh://[user@]host[:port] or user@host", url)


def _check_serial_url(check: _Check, key: str, url: Any) -> str:
    url = check.string(key, url)
    if any(ch.isspace() for ch in url):
        raise check.expected(key, "a serial port or pyserial URL without spaces", url)
    return url


def _check_simulated(check: _Check, value: Any):
    """The ``simulated`` block: parameters of edgebench.sim's board model (defaults for absent keys)."""
    if value is None:
        return None
    try:
        return SimParams.from_dict(value)
    except SimParamError as exc:
        raise check.fail("simulated" + (f".{exc.key}" if exc.key else ""), exc.text) from None


# ---------------------------------------------------------------------------
# the data model


@dataclass(frozen=True)
class TransportSpec:
    """How edgebench reaches the board: ``local``, ``ssh`` or ``serial``.

    ``url`` is ``ssh://[user@]host[:port]`` or ``user@host`` for ssh, a serial
    port or pyserial URL for serial, and absent for local. ``python`` is the
    agent's interpreter (local: default the one running edgebench; ssh:
    default ``python3``); ``baud`` applies to serial only (default 115200).
    """

    type: str
    url: str | None = None
    python: str | None = None
    baud: int | None = None
    usb: tuple | None = None    # serial: the USB "vid:pid" pairs of the board's serial port (url: auto)

    def to_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}
        if self.usb is not None:
            out["usb"] = list(self.usb)
        return out

    @classmethod
    def from_dict(cls, data: Any, where: str = "<dict>", prefix: str = "transport") -> "TransportSpec":
        check = _Check(where)
        check.keys(data, prefix, ("type", "url", "python", "baud", "usb"), ("type",))
        if data["type"] == SIM_TRANSPORT:  # a simulated board (edgebench.sim): nothing to reach
            for key in ("url", "python", "baud"):
                if key in data:
                    raise check.fail(f"{prefix}.{key}", "not allowed for transport type sim (expected only: type)")
            return cls(type=SIM_TRANSPORT)
        kind = check.choice(f"{prefix}.type", data["type"], TRANSPORT_TYPES)
        allowed = {"local": ("python",), "ssh": ("url", "python"), "serial": ("url", "baud", "usb")}[kind]
        for key in ("url", "python", "baud", "usb"):
            if key in data and key not in allowed:
                raise check.fail(f"{prefix}.{key}", f"not allowed for transport type {kind} "
                                 f"(expected only: type{''.join(', ' + a for a in allowed)})")
        if kind != "local" and "url" not in data:
            raise check.fail(f"{prefix}.url", f"missing required key for transport type {kind}")
        python = None
        if "python" in data:
            python = check.string(f"{prefix}.python", data["python"])
        if kind == "local":
            return cls(type="local", python=python)
        if kind == "ssh":
            url = _check_ssh_url(check, f"{prefix}.url", data["url"])
            return cls(type="ssh", url=url, python=python or DEFAULT_SSH_PYTHON)
        url = _check_serial_url(check, f"{prefix}.url", data["url"])
        baud = DEFAULT_BAUD
        if "baud" in data:
            baud = check.integer(f"{prefix}.baud", data["baud"], 1)
        usb = None
        if "usb" in data:
            if not isinstance(data["usb"], list) or not data["usb"]:
                raise check.expected(f"{prefix}.usb", "a non-empty list of USB ids vid:pid", data["usb"])
            usb = tuple(data["usb"])
            for i, pair in enumerate(usb):
                if not isinstance(pair, str) or not _USB_ID_RE.match(pair):
                    raise check.expected(f"{prefix}.usb[{i}]", "a USB id vid:pid in hex, e.g. 0483:374b", pair)
        if url == AUTO_URL and not usb:
            raise check.fail(f"{prefix}.usb", f"missing: url {AUTO_URL!r} finds the port by its USB ids")
        return cls(type="serial", url=url, baud=baud, usb=usb)

    @classmethod
    def from_url(cls, url: str, base: "TransportSpec | None" = None) -> "TransportSpec":
        """A transport for a user-given URL (the CLI's ``--url``), classified like
        :func:`edgebench.transport.url.transport_kind`: ``local``, ssh
        (``ssh://…``, ``user@host``) or serial (``/dev/…``, ``COM3``, ``socket://…``).
        Keeps ``python`` / ``baud`` of ``base`` where they still apply."""
        text = url.strip() if isinstance(url, str) else ""
        try:
            kind = transport_kind(text)
        except EdgebenchError:
            raise ProfileError(
                f"transport URL {_got(url)}: expected ssh://[user@]host[:port], user@host, a "
                "serial port (/dev/ttyUSB0, COM3, socket://host:port) or 'local'") from None
        same = base is not None and base.type == kind
        if kind == "local":
            return cls(type="local", python=base.python if same else None)
        if kind == "ssh":
            _check_ssh_url(_Check("transport URL"), "", text)
            return cls(type="ssh", url=text, python=(base.python if same else None) or DEFAULT_SSH_PYTHON)
        return cls(type="serial", url=text, baud=(base.baud if same else None) or DEFAULT_BAUD)

    @property
    def address(self) -> str:
        """The URL for :func:`edgebench.transport.url.transport_from_url` (``local`` if none)."""
        return self.url or "local"

    def options(self) -> dict:
        """Keyword options for the transport's constructor (``python`` or ``baud``)."""
        return {k: v for k, v in self.to_dict().items() if k not in ("type", "url")}

    def describe(self) -> str:
        if self.type == SIM_TRANSPORT:
            return "simulated (no hardware)"
        if self.type == "local":
            return "local"
        if self.url == EMULATOR_URL:
            return f"serial: the pty of the emulator edgebench starts, {self.baud} baud"
        if self.type == "ssh":
            return f"ssh {self.url}"
        return f"serial {self.url} @ {self.baud} baud"


_DATASHEET_FIGURES = (
    "idle_power_w", "typical_load_power_w", "max_power_w",
    "typical_current_a", "supply_voltage_v", "supply_current_a",
    "cpu_max_freq_hz", "throttle_temp_c", "temp_limit_c",
    "accel_tops", "accel_tops_per_w", "accel_power_w",
    "ram_bytes", "flash_bytes",
)


@dataclass(frozen=True)
class Datasheet:
    """Vendor-published figures: estimates for this board, never measurements.

    Only ``source`` is required; a figure that is not published is absent (None).
    """

    source: str
    idle_power_w: float | None = None
    typical_load_power_w: float | None = None
    max_power_w: float | None = None
    typical_current_a: float | None = None
    supply_voltage_v: float | None = None
    supply_current_a: float | None = None
    cpu_max_freq_hz: float | None = None
    throttle_temp_c: float | None = None
    temp_limit_c: float | None = None
    accel_tops: float | None = None
    accel_tops_per_w: float | None = None
    accel_power_w: float | None = None
    ram_bytes: float | None = None        # on-chip RAM of a microcontroller (the fit check)
    flash_bytes: float | None = None      # its flash (on the board, for external flash)

    basis = ESTIMATED_LABEL  # class constant: how every figure here must be labelled

    def figures(self) -> dict:
        """The published figures only, in schema order."""
        return {k: getattr(self, k) for k in _DATASHEET_FIGURES if getattr(self, k) is not None}

    def to_dict(self) -> dict:
        return {"basis": self.basis, "source": self.source, **self.figures()}

    @classmethod
    def from_dict(cls, data: Any, where: str = "<dict>", prefix: str = "datasheet") -> "Datasheet":
        check = _Check(where)
        check.keys(data, prefix, ("basis", "source") + _DATASHEET_FIGURES, ("source",))
        if "basis" in data and data["basis"] != ESTIMATED_LABEL:
            raise check.expected(f"{prefix}.basis", repr(ESTIMATED_LABEL) + " (or leave it out)",
                                 data["basis"])
        values = {k: check.number(f"{prefix}.{k}", data[k]) for k in _DATASHEET_FIGURES if k in data}
        return cls(source=check.string(f"{prefix}.source", data["source"]), **values)


@dataclass(frozen=True)
class FlasherSpec:
    """How firmware is put on the board: a tool and its argv with ``{placeholders}``."""

    tool: str
    argv: tuple
    targets: tuple = ()    # (back-end, its name of this chip or drive) for edgebench.mcu.flashers

    def to_dict(self) -> dict:
        out = {"tool": self.tool, "argv": list(self.argv)}
        if self.targets:
            out["targets"] = dict(self.targets)
        return out

    def command(self, **values: str) -> list:
        """The argv with ``{image}``, ``{url}``, ``{name}`` filled in."""
        return [arg.format(**values) for arg in self.argv]

    @classmethod
    def from_dict(cls, data: Any, where: str = "<dict>", prefix: str = "flasher") -> "FlasherSpec":
        check = _Check(where)
        check.keys(data, prefix, ("tool", "argv", "targets"), ("tool", "argv"))
        targets = data.get("targets") or {}
        if not isinstance(targets, Mapping):
            raise check.expected(f"{prefix}.targets", "a mapping of flasher back-end to its target name", targets)
        for key, value in targets.items():
            check.string(f"{prefix}.targets.{key}", value)
        tool = check.string(f"{prefix}.tool", data["tool"])
        argv = data["argv"]
        if not isinstance(argv, list) or not argv:
            raise check.expected(f"{prefix}.argv", "a non-empty list of strings", argv)
        allowed = ", ".join("{%s}" % p for p in FLASHER_PLACEHOLDERS)
        for i, arg in enumerate(argv):
            key = f"{prefix}.argv[{i}]"
            check.string(key, arg)
            try:
                names = [f for _, f, _, _ in string.Formatter().parse(arg) if f is not None]
            except ValueError:
                raise check.expected(key, f"balanced braces around a placeholder ({allowed})", arg) from None
            for name in names:
                if name not in FLASHER_PLACEHOLDERS:
                    raise check.expected(key, f"placeholders among {allowed}", arg)
        return cls(tool=tool, argv=tuple(argv), targets=tuple(sorted(targets.items())))


@dataclass(frozen=True)
class FirmwareSpec:
    """The firmware of an ``mcu`` board (optional section ``firmware``).

    ``port`` is the ``firmware/ports/<port>`` that ``edgebench flash`` builds with make
    (None: the user supplies a prebuilt image). ``emulator`` is ``posix`` (the host
    build on a pseudo-terminal), ``qemu`` (``qemu-system-arm -M machine -icount
    shift=icount_shift``) or ``unicorn`` (the instruction-set emulator with register
    models of the chip ``machine``: it keeps no time) for boards edgebench starts itself,
    None for real boards.
    ``bit_exact``: the board promises outputs bit-exact with the reference kernels, so
    ``edgebench verify`` fails (exit 2) on any difference.
    ``counter``: what the port times with, ``cycles`` (the core's cycle counter, e.g. the DWT:
    a tick is a core cycle, so ``bench`` reports measured cycles per MAC) or ``timer``; None
    when not known.
    ``model_buffer_bytes`` / ``arena_bytes``: the firmware build's model upload buffer and
    tensor arena (EB_MODEL_MAX_BYTES / EB_ARENA_BYTES), ``engine_version`` its INT8 engine
    (EB_ENGINE_VERSION, which sets the operators it runs); None when not known. The fit
    check (``edgebench inspect MODEL --board B``) compares a model with them.
    """

    port: str | None = None
    emulator: str | None = None
    machine: str | None = None
    icount_shift: int | None = None
    bit_exact: bool = False
    model_buffer_bytes: int | None = None
    arena_bytes: int | None = None
    engine_version: int | None = None
    counter: str | None = None

    def to_dict(self) -> dict:
        return {"port": self.port, "emulator": self.emulator, "machine": self.machine,
                "icount_shift": self.icount_shift, "bit_exact": self.bit_exact,
                "model_buffer_bytes": self.model_buffer_bytes, "arena_bytes": self.arena_bytes,
                "engine_version": self.engine_version, "counter": self.counter}

    @classmethod
    def from_dict(cls, data: Any, where: str = "<dict>", prefix: str = "firmware") -> "FirmwareSpec":
        check = _Check(where)
        check.keys(data, prefix, ("port", "emulator", "machine", "icount_shift", "bit_exact",
                                  "model_buffer_bytes", "arena_bytes", "engine_version", "counter"), ())
        port = None if data.get("port") is None else check.string(f"{prefix}.port", data["port"])
        if port is not None and not _NAME_RE.match(port):
            raise check.expected(f"{prefix}.port", "a firmware/ports/ directory name", port)
        emulator = None
        if data.get("emulator") is not None:
            emulator = check.choice(f"{prefix}.emulator", data["emulator"], EMULATORS)
            if port is None:
                raise check.fail(f"{prefix}.port", f"missing: an emulator ({emulator}) runs a firmware port")
        machine = shift = None
        if emulator == "qemu":
            for key in ("machine", "icount_shift"):
                if data.get(key) is None:
                    raise check.fail(f"{prefix}.{key}", "missing required key for emulator qemu")
            machine = check.string(f"{prefix}.machine", data["machine"])
            shift = check.integer(f"{prefix}.icount_shift", data["icount_shift"], 0)
            if shift > 10:
                raise check.expected(f"{prefix}.icount_shift", "an integer in 0..10", shift)
        elif emulator == "unicorn":
            if data.get("machine") is None:
                raise check.fail(f"{prefix}.machine", "missing required key for emulator unicorn (the chip)")
            machine = check.string(f"{prefix}.machine", data["machine"])
            if data.get("icount_shift") is not None:
                raise check.fail(f"{prefix}.icount_shift", "only allowed with emulator: qemu")
        else:
            for key in ("machine", "icount_shift"):
                if data.get(key) is not None:
                    raise check.fail(f"{prefix}.{key}", "only allowed with emulator: qemu or unicorn")
        bit_exact = data.get("bit_exact", False)
        if not isinstance(bit_exact, bool):
            raise check.expected(f"{prefix}.bit_exact", "true or false", bit_exact)
        sizes = {k: None if data.get(k) is None else check.integer(f"{prefix}.{k}", data[k], 1)
                 for k in ("model_buffer_bytes", "arena_bytes", "engine_version")}
        counter = None if data.get("counter") is None else check.choice(f"{prefix}.counter", data["counter"],
                                                                         COUNTERS)
        return cls(port=port, emulator=emulator, machine=machine, icount_shift=shift, bit_exact=bit_exact,
                   counter=counter, **sizes)


_TOP_KEYS = ("schema", "name", "title", "kind", "soc", "transport", "runtimes", "kernels",
             "delegates", "default_threads", "telemetry", "datasheet", "flasher", "firmware", "simulated", "notes")
_REQUIRED = ("schema", "name", "title", "kind", "transport", "runtimes", "kernels", "default_threads")


@dataclass(frozen=True)
class BoardProfile:
    """One board: identity, transport, runtimes, telemetry, datasheet, flasher.

    ``origin`` is the file the profile was loaded from (None if built in code).
    """

    name: str
    title: str
    kind: str
    transport: TransportSpec
    runtimes: tuple
    kernels: tuple
    default_threads: int
    delegates: tuple = ()
    telemetry: tuple = ()
    soc: str = ""
    datasheet: Datasheet | None = None
    flasher: FlasherSpec | None = None
    firmware: FirmwareSpec | None = None
    simulated: Any = None          # edgebench.sim.SimParams for transport type sim
    notes: str = ""
    schema: int = SCHEMA_VERSION
    origin: str | None = field(default=None, compare=False)

    def to_dict(self) -> dict:
        return {
            "schema": self.schema,
            "name": self.name,
            "title": self.title,
            "kind": self.kind,
            "soc": self.soc,
            "transport": self.transport.to_dict(),
            "runtimes": list(self.runtimes),
            "kernels": list(self.kernels),
            "delegates": list(self.delegates),
            "default_threads": self.default_threads,
            "telemetry": list(self.telemetry),
            "datasheet": self.datasheet.to_dict() if self.datasheet else None,
            "flasher": self.flasher.to_dict() if self.flasher else None,
            "firmware": self.firmware.to_dict() if self.firmware else None,
            "simulated": self.simulated.to_dict() if self.simulated is not None else None,
            "notes": self.notes,
            "origin": self.origin,
        }

    @classmethod
    def from_dict(cls, data: Any, where: str = "<dict>", *, allow_origin: bool = True) -> "BoardProfile":
        """Validate a mapping (as read from YAML, or from :meth:`to_dict`)."""
        check = _Check(where)
        allowed = _TOP_KEYS + (("origin",) if allow_origin else ())
        check.keys(data, "", allowed, ())
        if "schema" not in data:
            raise check.fail("schema", f"missing required key (expected {SCHEMA_VERSION})")
        schema = data["schema"]
        if isinstance(schema, bool) or schema != SCHEMA_VERSION:
            raise check.expected("schema", f"{SCHEMA_VERSION} (the board profile schema this "
                                 "edgebench reads)", schema)
        # Check keys in the file's order, so the first problem in the file is the one reported.
        validators = {
            "name": lambda v: _check_name(check, v),
            "title": lambda v: check.string("title", v),
            "kind": lambda v: check.choice("kind", v, KINDS),
            "soc": lambda v: check.string("soc", v, empty_ok=True),
            "transport": lambda v: TransportSpec.from_dict(v, where),
            "runtimes": lambda v: check.choices("runtimes", v, RUNTIMES, empty_ok=False),
            "kernels": lambda v: check.choices("kernels", v, KERNELS, empty_ok=False),
            "delegates": lambda v: check.choices("delegates", v, DELEGATES, empty_ok=True),
            "default_threads": lambda v: check.integer("default_threads", v, 1),
            "telemetry": lambda v: check.choices("telemetry", v, TELEMETRY, empty_ok=True),
            "datasheet": lambda v: None if v is None else Datasheet.from_dict(v, where),
            "flasher": lambda v: None if v is None else FlasherSpec.from_dict(v, where),
            "firmware": lambda v: None if v is None else FirmwareSpec.from_dict(v, where),
            "simulated": lambda v: _check_simulated(check, v),
            "notes": lambda v: "" if v is None else check.string("notes", v, empty_ok=True),
            "origin": lambda v: None if v is None else check.string("origin", v),
        }
        values: dict = {}
        for key, value in data.items():
            if key != "schema":
                values[key] = validators[key](value)
        for key in _REQUIRED:
            if key not in data:
                raise check.fail(key, "missing required key")
        kind, transport = values["kind"], values["transport"]
        if kind == "mcu" and transport.type != "serial":
            raise check.expected("transport.type", "serial for kind mcu", transport.type)
        if values.get("simulated") is not None and transport.type != SIM_TRANSPORT:
            raise check.fail("simulated", "only allowed with transport type sim")
        if transport.type == SIM_TRANSPORT:
            if kind != "linux":
                raise check.expected("kind", "linux for transport type sim", kind)
            if values.get("simulated") is None:
                values["simulated"] = _check_simulated(check, {})
        firmware = values.get("firmware")
        if firmware is not None and kind != "mcu":
            raise check.fail("firmware", "only allowed for kind mcu")
        if transport.url == EMULATOR_URL and not (firmware and firmware.emulator):
            raise check.fail("transport.url", f"{EMULATOR_URL!r} needs firmware.emulator (posix or qemu)")
        return cls(schema=schema, **values)


# ---------------------------------------------------------------------------
# loading


def display_path(path: "str | os.PathLike") -> str:
    """``path`` relative to the working directory when it lies below it."""
    p = Path(path)
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(p)


def _yaml_loader():
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class StrictLoader(base):  # type: ignore[misc, valid-type]
        """SafeLoader that rejects duplicate keys instead of keeping the last one."""

    def construct_mapping(loader, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=deep)
            if isinstance(key, str) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key '{key}'", key_node.start_mark)
            seen.add(key)
        return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)

    StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    return yaml, StrictLoader


def load_profile(path: "str | os.PathLike") -> BoardProfile:
    """Read and strictly validate one profile file (its stem must be its name)."""
    path = Path(path)
    where = display_path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ProfileError(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ProfileError(f"{where}: cannot read the profile ({exc.strerror or exc})") from None
    yaml, loader = _yaml_loader()
    try:
        data = yaml.load(text, Loader=loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        problem = " ".join(str(exc.problem or exc.context or "syntax error").split())
        raise ProfileError(f"{where}: {line}invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise ProfileError(f"{where}: invalid YAML: {' '.join(str(exc).split())}") from None
    if data is None:
        raise ProfileError(f"{where}: empty file (expected a board profile mapping)")
    profile = BoardProfile.from_dict(data, where, allow_origin=False)
    if profile.name != path.stem:
        raise ProfileError(f"{where}: name: expected {path.stem!r} (the file name without "
                           f".yaml), got {profile.name!r}")
    return replace(profile, origin=str(path.absolute()))


__all__ = [
    "BoardProfile", "Datasheet", "FirmwareSpec", "FlasherSpec", "TransportSpec", "load_profile", "display_path",
    "ESTIMATED_LABEL", "SCHEMA_VERSION", "KINDS", "TRANSPORT_TYPES", "RUNTIMES", "KERNELS",
    "DELEGATES", "TELEMETRY", "FLASHER_PLACEHOLDERS", "EMULATORS", "EMULATOR_URL", "AUTO_URL",
]
