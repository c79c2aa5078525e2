"""Board profiles (level 3): what a board is, how to reach it, what it can measure.

A profile is one YAML file (schema 1, documented in ``docs/boards.md``) whose file stem is
the board's name. It is described once, below, as pydantic dataclasses: :func:`load_profile`
validates a file against them strictly (an unknown key, a missing key, a wrong type or a bad
value is a :class:`~edgebench.errors.ProfileError` whose message is one line naming the file,
the key path and what was expected), ``edgebench schema board`` prints their JSON Schema and
``scripts/schema_docs.py`` writes the key tables of docs/boards.md from them::

    boards/pi.yaml: transport.type: expected one of local, ssh, serial, sim, got 'sshh'

Figures under ``datasheet`` are published by the vendor, never measured by
edgebench; wherever they are shown they carry :data:`ESTIMATED_LABEL`.
"""
from __future__ import annotations

import dataclasses
import os
import re
import string
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal, Optional, Tuple, Union

import yaml
from pydantic import Field, WithJsonSchema, field_validator, model_validator
from pydantic.dataclasses import dataclass
from typing_extensions import Annotated

from edgebench.errors import EdgebenchError, ProfileError
from edgebench.schema import CLOSED, Bool, FieldProblem, Int, Num, Str, close_matches, expects, got, validate
from edgebench.sim.params import SimParams
from edgebench.transport.url import transport_kind

SCHEMA_VERSION = 1
ESTIMATED_LABEL: Final = "estimated (datasheet)"

KINDS = ("linux", "mcu")
TRANSPORT_TYPES = ("local", "ssh", "serial")
SIM_TRANSPORT = "sim"   # a simulated board (edgebench.sim, the profile's `simulated` block): no hardware
# Which board client reaches a board (BoardProfile.client_kind): the Python agent on a Linux board,
# a microcontroller's firmware, or a simulated board.
AGENT_CLIENT, MCU_CLIENT, SIM_CLIENT = "agent", "mcu", "sim"
RUNTIMES = ("ai_edge_litert", "tflite_runtime", "tensorflow", "edgebench_firmware", "mlperf_tiny")
KERNELS = ("xnnpack", "builtin", "reference", "cmsis_nn")
DELEGATES = ("edgetpu",)
TELEMETRY = ("thermal_zone", "cpufreq", "hwmon", "vcgencmd", "apex", "mcu_temp")
FLASHER_PLACEHOLDERS = ("image", "url", "name")
COUNTERS = ("cycles", "timer")   # firmware.counter: the core's cycle counter (ticks are core cycles), or a timer


@dataclasses.dataclass(frozen=True)
class EmulatorKind:
    """What edgebench knows of an emulator it starts itself (``firmware.emulator``): the firmware keys
    it needs (and no other emulator takes), whether its figures are emulated, whether its counter
    may become a latency, and the timing a run records for it. Every question about an emulator is
    asked here, not of its name."""

    name: str
    keys: Tuple[str, ...]        # of machine, icount_shift: required; the others refused
    emulated: bool               # its figures are the emulated chip's, not this computer's real time
    keeps_time: bool             # False: its counter is not the image's speed, no latency comes from it
    timing: str                  # the run's firmware timing
    machine_means: str = ""      # what `machine` names, for the message when it is missing


EMULATORS = {e.name: e for e in (
    EmulatorKind("posix", (), emulated=False, keeps_time=True, timing="real (host CPU)"),
    EmulatorKind("qemu", ("machine", "icount_shift"), emulated=True, keeps_time=True, timing="emulated",
                 machine_means="the -M machine"),
    # the instruction-set emulator (edgebench.mcu.unicorn_board)
    EmulatorKind("unicorn", ("machine",), emulated=True, keeps_time=False, timing="emulated (untimed)",
                 machine_means="the chip"),
)}
EMULATOR_URL = "emulator"   # transport.url of a board whose emulator edgebench starts itself
# transport.url of a board whose serial port is found by its USB ids (transport.usb); the same word as
# edgebench.mcu.serial_ports.AUTO, not imported from there (edgebench.mcu loads numpy; tests/test_boards.py)
AUTO_URL = "auto"
DEFAULT_BAUD = 115200
DEFAULT_SSH_PYTHON = "python3"

_NAME = r"^[a-z0-9][a-z0-9._-]*$"
_HOST = r"(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])"
_USER = r"[A-Za-z0-9._][A-Za-z0-9._-]*"
_SSH_URL_RE = re.compile(rf"^ssh://(?:{_USER}@)?{_HOST}(?::(?P<port>[0-9]{{1,5}}))?/?$")
_SSH_USERHOST_RE = re.compile(rf"^{_USER}@{_HOST}$")


Name = Annotated[Str, Field(pattern=_NAME, json_schema_extra=expects(
    "lowercase letters, digits, '.', '_' or '-' (starting with a letter or digit)"))]
Line = Annotated[Str, Field(pattern=r"^[^\n]*\S[^\n]*\n?$", json_schema_extra=expects("a non-empty single-line string"))]
Text = Annotated[Str, Field(description="free text; may span lines")]
SshUrl = Annotated[Str, Field(json_schema_extra=expects("ssh://[user@]host[:port] or user@host"))]
SerialUrl = Annotated[Str, Field(pattern=r"^\S+$", json_schema_extra=expects(
    "a serial port or pyserial URL without spaces"))]
Positive = Annotated[Num, Field(gt=0)]


def _unique(values: tuple) -> tuple:
    for i, item in enumerate(values):
        if item in values[:i]:
            raise FieldProblem(f"[{i}]", f"expected each entry once, got {item!r} twice")
    return values


def _names(choices: tuple, text: str, *, non_empty: bool):
    """A list of names out of ``choices``, each once."""
    item = Literal[choices]  # type: ignore[valid-type]
    return Annotated[Tuple[item, ...], Field(min_length=1 if non_empty else 0, description=text,
                                             json_schema_extra={"uniqueItems": True})]


def _check_ssh_url(url: str) -> str:
    m = _SSH_URL_RE.match(url)
    if m:
        port = m.group("port")
        if port is not None and not 1 <= int(port) <= 65535:
            raise FieldProblem("", f"expected a port between 1 and 65535, got {got(url)}")
        return url
    if _SSH_USERHOST_RE.match(url):
        return url
    raise FieldProblem("", f"expected ssh://[user@]host[:port] or user@host, got {got(url)}")


# ---------------------------------------------------------------------------
# transport: one of four kinds, told apart by `type`


class TransportSpec:
    """How edgebench reaches the board: ``local``, ``ssh``, ``serial`` or ``sim`` (no hardware).

    ``url`` is ``ssh://[user@]host[:port]`` or ``user@host`` for ssh, a serial port or pyserial
    URL for serial, and absent (None) otherwise. ``python`` is the agent's interpreter (local:
    default the one running edgebench; ssh: default ``python3``); ``baud`` applies to serial
    only (default 115200). The four kinds are the dataclasses below; this base gives them one
    interface (a key a kind does not have reads as None).
    """

    _ABSENT = ("url", "python", "baud", "usb")   # the keys a kind may not have: None there
    if TYPE_CHECKING:   # every kind below is a dataclass (dataclasses.fields reads it)
        __dataclass_fields__: ClassVar[dict[str, Any]]

    def __getattr__(self, name: str):
        if name in TransportSpec._ABSENT:
            return None
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def to_dict(self) -> dict:
        return {f.name: list(v) if isinstance(v, tuple) else v
                for f in dataclasses.fields(self) if (v := getattr(self, f.name)) is not None}

    @classmethod
    def from_dict(cls, data: Any, where: str = "<dict>", prefix: str = "transport") -> "TransportSpec":
        return validate(Transport, data, where, ProfileError, key=prefix)

    @classmethod
    def from_url(cls, url: str, base: "TransportSpec | None" = None) -> "LocalTransportSpec | SshTransportSpec | SerialTransportSpec":
        """A transport for a user-given URL (the CLI's ``--url``), classified like
        :func:`edgebench.transport.url.transport_kind`: ``local``, ssh
        (``ssh://…``, ``user@host``) or serial (``/dev/…``, ``COM3``, ``socket://…``).
        Keeps ``python`` / ``baud`` of ``base`` where they still apply."""
        text = url.strip() if isinstance(url, str) else ""
        try:
            kind = transport_kind(text)
        except EdgebenchError:
            raise ProfileError(
                f"transport URL {got(url)}: expected ssh://[user@]host[:port], user@host, a "
                "serial port (/dev/ttyUSB0, COM3, socket://host:port) or 'local'") from None
        same = base if base is not None and base.type == kind else None
        if kind == "local":
            return LocalTransportSpec(type="local", python=same.python if same else None)
        if kind == "ssh":
            try:
                _check_ssh_url(text)
            except FieldProblem as exc:
                raise ProfileError(f"transport URL: {exc.what}") from None
            return SshTransportSpec(type="ssh", url=text, python=(same.python if same else None) or DEFAULT_SSH_PYTHON)
        return SerialTransportSpec(type="serial", url=text, baud=(same.baud if same else None) or DEFAULT_BAUD)

    @property
    def address(self) -> str:
        """The URL for :func:`edgebench.transport.url.transport_from_url` (``local`` if none)."""
        return self.url or "local"

    def options(self) -> dict:
        """Keyword options for the transport's constructor (``python`` or ``baud``)."""
        return {k: v for k, v in self.to_dict().items() if k not in ("type", "url", "usb")}

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


@dataclass(frozen=True, config=CLOSED)
class LocalTransportSpec(TransportSpec):
    """The agent runs as a child process on this computer."""

    type: Literal["local"]
    python: Annotated[Optional[Line], Field(description="the agent's interpreter; default: the one running "
                                                        "edgebench")] = None


@dataclass(frozen=True, config=CLOSED)
class SshTransportSpec(TransportSpec):
    """The agent runs on the board through the system OpenSSH client (host keys checked)."""

    type: Literal["ssh"]
    url: Annotated[SshUrl, Field(description="ssh://[user@]host[:port] or user@host")]
    python: Annotated[Line, Field(description="the agent's interpreter on the board")] = DEFAULT_SSH_PYTHON

    @field_validator("url")
    @classmethod
    def _url(cls, url: str) -> str:
        return _check_ssh_url(url)


@dataclass(frozen=True, config=CLOSED)
class SerialTransportSpec(TransportSpec):
    """A serial port (/dev/ttyUSB0, COM3) or a pyserial URL (socket://host:port, rfc2217://..., loop://);
    `url: emulator`: the pseudo-terminal of the emulator edgebench starts (needs `firmware.emulator`)."""

    type: Literal["serial"]
    url: Annotated[SerialUrl, Field(description="the port or URL; `emulator` for an emulated board; `auto`: the "
                                                "port whose USB ids are in `usb` (`edgebench boards --connected`)")]
    baud: Annotated[Int, Field(ge=1, description="line speed")] = DEFAULT_BAUD
    usb: Annotated[Optional[Tuple[UsbId, ...]], Field(
        min_length=1, description="the USB `vid:pid` pairs of the board's serial port (e.g. an ST-LINK's "
                                  "virtual COM port, 0483:374b): how `url: auto` finds it")] = None

    @model_validator(mode="after")
    def _auto(self) -> "SerialTransportSpec":
        if self.url == AUTO_URL and not self.usb:
            raise FieldProblem("usb", f"missing: url {AUTO_URL!r} finds the port by its USB ids")
        return self


@dataclass(frozen=True, config=CLOSED)
class SimTransportSpec(TransportSpec):
    """A simulated board (edgebench.sim), modelled by the profile's `simulated` block: nothing is reached,
    `--url` is refused."""

    type: Literal["sim"]


Transport = Annotated[Union[LocalTransportSpec, SshTransportSpec, SerialTransportSpec, SimTransportSpec],
                      Field(discriminator="type", description="how to reach the board")]
TRANSPORTS = (LocalTransportSpec, SshTransportSpec, SerialTransportSpec, SimTransportSpec)


# ---------------------------------------------------------------------------
# datasheet, flasher, firmware


UsbId = Annotated[Str, Field(pattern=r"^[0-9a-f]{4}:[0-9a-f]{4}$", json_schema_extra=expects(
    "a USB id vid:pid in hex, e.g. 0483:374b"))]


def _figure(unit: str, title: str, text: str):
    """A published figure: a positive number, its unit and its label (``edgebench boards NAME``)."""
    return Field(title=title, description=text, json_schema_extra={"x-unit": unit})


@dataclass(frozen=True, config=CLOSED)
class Datasheet:
    """Vendor-published figures: estimates for this board, never measurements.

    Only ``source`` is required; a figure that is not published is absent (None).
    """

    source: Annotated[Str, Field(min_length=1, description="where the figures are published (product brief, "
                                                           "datasheet, documentation page)")]
    basis: Annotated[Literal["estimated (datasheet)"], Field(
        description="optional; if present must be `estimated (datasheet)` (always emitted in JSON)")] = ESTIMATED_LABEL
    idle_power_w: Annotated[Optional[Positive], _figure("W", "idle power", "published idle power")] = None
    typical_load_power_w: Annotated[Optional[Positive], _figure(
        "W", "typical load power", "published typical power under load")] = None
    max_power_w: Annotated[Optional[Positive], _figure("W", "max power", "published maximum power draw")] = None
    typical_current_a: Annotated[Optional[Positive], _figure(
        "A", "typical current", "published typical current (Raspberry Pi: \"typical bare-board active current "
        "consumption\")")] = None
    supply_voltage_v: Annotated[Optional[Positive], _figure("V", "supply voltage", "nominal supply voltage")] = None
    supply_current_a: Annotated[Optional[Positive], _figure(
        "A", "recommended supply current", "recommended supply current rating (what the PSU must deliver, not "
        "what the board draws)")] = None
    cpu_max_freq_hz: Annotated[Optional[Positive], _figure("Hz", "CPU max clock", "maximum CPU clock")] = None
    throttle_temp_c: Annotated[Optional[Positive], _figure(
        "°C", "throttling starts at", "temperature at which the firmware starts to reduce clocks (soft limit)")] = None
    temp_limit_c: Annotated[Optional[Positive], _figure("°C", "temperature limit", "hard temperature limit")] = None
    accel_tops: Annotated[Optional[Positive], _figure(
        "TOPS", "accelerator peak", "accelerator peak throughput (int8)")] = None
    accel_tops_per_w: Annotated[Optional[Positive], _figure(
        "TOPS/W", "accelerator efficiency", "accelerator efficiency as published")] = None
    accel_power_w: Annotated[Optional[Positive], _figure(
        "W", "accelerator power at peak", "accelerator power at its published peak (not the board's)")] = None
    ram_bytes: Annotated[Optional[Positive], _figure(
        "bytes", "RAM", "a microcontroller's on-chip RAM: `inspect --board` and the fit check before "
        "deploy/verify/bench compare the model's arena with it")] = None
    flash_bytes: Annotated[Optional[Positive], _figure(
        "bytes", "flash", "its flash: the fit check compares the model blob with it")] = None

    def figures(self) -> dict:
        """The published figures only, in schema order."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.name not in ("source", "basis") and getattr(self, f.name) is not None}

    def to_dict(self) -> dict:
        return {"basis": self.basis, "source": self.source, **self.figures()}

    @classmethod
    def from_dict(cls, data: Any, where: str = "<dict>", prefix: str = "datasheet") -> "Datasheet":
        return validate(cls, data, where, ProfileError, key=prefix)


def figure_info(name: str) -> tuple:
    """``(label, unit)`` of a datasheet figure, as the schema declares them."""
    # ignore's cause: pydantic sets __pydantic_fields__ on its dataclasses; its mypy plugin does not declare it
    info = Datasheet.__pydantic_fields__[name]  # type: ignore[attr-defined]
    return info.title or name, (info.json_schema_extra or {}).get("x-unit", "")


@dataclass(frozen=True, config=CLOSED)
class FlasherSpec:
    """How firmware is put on the board: a tool and its argv with ``{placeholders}``, run as a list (no shell)."""

    tool: Annotated[Line, Field(description="the program (for messages: what to install)")]
    argv: Annotated[Tuple[Line, ...], Field(min_length=1, description="the command as a list; `{image}` (the "
                                                                      "firmware file), `{url}` (the transport URL), "
                                                                      "`{name}` (the board name) are filled in")]
    targets: Annotated[Tuple[Tuple[Line, Line], ...], WithJsonSchema(
        {"type": "object", "additionalProperties": {"type": "string", "pattern": r"^[^\n]*\S[^\n]*\n?$"}}), Field(
        description="a mapping of flasher back-end (`openocd`, `pyocd`, `st-flash`, `stlink-drive`) to its name "
                    "of this chip or drive (edgebench/mcu/flashers.py): `edgebench flash --flasher NAME`")] = ()

    @field_validator("argv")
    @classmethod
    def _placeholders(cls, argv: tuple) -> tuple:
        allowed = ", ".join("{%s}" % p for p in FLASHER_PLACEHOLDERS)
        for i, arg in enumerate(argv):
            try:
                names = [f for _, f, _, _ in string.Formatter().parse(arg) if f is not None]
            except ValueError:
                raise FieldProblem(f"[{i}]", f"expected balanced braces around a placeholder ({allowed}), "
                                             f"got {got(arg)}") from None
            if any(name not in FLASHER_PLACEHOLDERS for name in names):
                raise FieldProblem(f"[{i}]", f"expected placeholders among {allowed}, got {got(arg)}")
        return argv

    @field_validator("targets", mode="before")
    @classmethod
    def _targets(cls, targets: Any) -> Any:
        if isinstance(targets, dict):    # YAML: a mapping back-end -> its name of the chip; kept as sorted pairs
            return tuple(sorted(targets.items()))
        return targets

    def to_dict(self) -> dict:
        out: dict[str, Any] = {"tool": self.tool, "argv": list(self.argv)}
        if self.targets:
            out["targets"] = dict(self.targets)
        return out

    def command(self, **values: str) -> list:
        """The argv with ``{image}``, ``{url}``, ``{name}`` filled in."""
        return [arg.format(**values) for arg in self.argv]

    @classmethod
    def from_dict(cls, data: Any, where: str = "<dict>", prefix: str = "flasher") -> "FlasherSpec":
        return validate(cls, data, where, ProfileError, key=prefix)


@dataclass(frozen=True, config=CLOSED)
class FirmwareSpec:
    """The firmware of an ``mcu`` board (optional section ``firmware``).

    ``port`` is the ``firmware/ports/<port>`` that ``edgebench flash`` builds with make
    (None: the user supplies a prebuilt image). ``emulator`` is ``posix`` (the host
    build on a pseudo-terminal) or ``qemu`` (``qemu-system-arm -M machine -icount
    shift=icount_shift``) for boards edgebench starts itself, None for real boards.
    ``bit_exact``: the board promises outputs bit-exact with the reference kernels, so
    ``edgebench verify`` fails (exit 2) on any difference.
    ``model_buffer_bytes`` / ``arena_bytes`` / ``input_buffer_bytes``: the firmware build's model
    upload buffer, tensor arena and input buffer (EB_MODEL_MAX_BYTES / EB_ARENA_BYTES /
    EB_INPUT_MAX_BYTES), ``engine_version`` its INT8 engine
    (EB_ENGINE_VERSION, which sets the operators it runs); None when not known. The fit
    check (``edgebench inspect MODEL --board B``) compares a model with them.
    """

    port: Annotated[Optional[Annotated[Str, Field(pattern=_NAME, json_schema_extra=expects(
        "a firmware/ports/ directory name"))]], Field(
        description="the `firmware/ports/<port>` that `edgebench flash` builds with `make -C firmware "
                    "PORT=<port>`; null: no port for this board in edgebench yet, `edgebench flash` needs "
                    "`--image`")] = None
    emulator: Annotated[Optional[Literal["posix", "qemu", "unicorn"]], Field(
        description="edgebench starts the firmware itself: the posix build on a pseudo-terminal, "
                    "`qemu-system-arm`, or `unicorn` (an instruction-set emulator with register models of the "
                    "chip: it keeps no time); null for real boards")] = None
    machine: Annotated[Optional[Line], Field(description="`qemu` and `unicorn` only, required: the `-M` machine, "
                                                         "or the chip whose registers unicorn models")] = None
    icount_shift: Annotated[Optional[Annotated[Int, Field(ge=0, le=10)]], Field(
        description="`qemu` only, required: `-icount shift=N` (timings are then labelled `emulated`)")] = None
    bit_exact: Annotated[Bool, Field(
        description="running edgebench firmware, the board promises outputs bit-exact with the reference "
                    "kernels: `edgebench verify` exits 2 on any difference")] = False
    model_buffer_bytes: Annotated[Optional[Annotated[Int, Field(ge=1)]], Field(
        description="the firmware build's model upload buffer (`EB_MODEL_MAX_BYTES`): the fit check refuses "
                    "a larger blob before uploading it")] = None
    arena_bytes: Annotated[Optional[Annotated[Int, Field(ge=1)]], Field(
        description="the build's tensor arena (`EB_ARENA_BYTES`): the fit check refuses a model whose arena "
                    "plan is larger")] = None
    input_buffer_bytes: Annotated[Optional[Annotated[Int, Field(ge=1)]], Field(
        description="the build's input buffer (`EB_INPUT_MAX_BYTES`): the fit check refuses a model whose int8 "
                    "input tensor is larger (the firmware would refuse it at `eb-model`)")] = None
    engine_version: Annotated[Optional[Annotated[Int, Field(ge=1)]], Field(
        description="the INT8 engine version of that firmware (`eb-info`'s `engine`): which operators the "
                    "fit check accepts (firmware/BLOB.md lists them per version)")] = None
    counter: Annotated[Optional[Literal["cycles", "timer"]], Field(
        description="what the port times with: `cycles` (the core's cycle counter, e.g. the DWT: a tick is a "
                    "core cycle, so `bench` reports measured cycles per MAC) or `timer`; null when not known")] = None

    @model_validator(mode="after")
    def _emulator(self) -> "FirmwareSpec":
        if self.emulator is not None and self.port is None:
            raise FieldProblem("port", f"missing: an emulator ({self.emulator}) runs a firmware port")
        needs = self.emulator_kind.keys if self.emulator_kind else ()
        for key in ("machine", "icount_shift"):
            if key in needs and getattr(self, key) is None:
                means = self.emulator_kind.machine_means if key == "machine" and self.emulator_kind else ""
                raise FieldProblem(key, f"missing required key for emulator {self.emulator}"
                                        + (f" ({means})" if means else ""))
            if key not in needs and getattr(self, key) is not None:
                raise FieldProblem(key, "only allowed with emulator: "
                                        + " or ".join(e.name for e in EMULATORS.values() if key in e.keys))
        return self

    @property
    def emulator_kind(self) -> Optional[EmulatorKind]:
        """The emulator edgebench starts for this firmware (None: a real board)."""
        return EMULATORS.get(self.emulator) if self.emulator else None

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Any, where: str = "<dict>", prefix: str = "firmware") -> "FirmwareSpec":
        return validate(cls, data, where, ProfileError, key=prefix)


# ---------------------------------------------------------------------------
# the profile


if TYPE_CHECKING:   # mypy reads each as a tuple of names; at run time each is the checked type _names builds
    Runtimes = Tuple[str, ...]
    Kernels = Tuple[str, ...]
    Delegates = Tuple[str, ...]
    Telemetry = Tuple[str, ...]
else:
    Runtimes = _names(RUNTIMES, "TFLite runtimes to try, in order of preference: `ai_edge_litert`, `tflite_runtime`, "
                      "`tensorflow` (linux); `edgebench_firmware`, `mlperf_tiny` (mcu)", non_empty=True)
    Kernels = _names(KERNELS, "kernel sets the board can run: `xnnpack`, `builtin`, `reference` (the INT8 oracle), "
                     "`cmsis_nn`", non_empty=True)
    Delegates = _names(DELEGATES, "accelerator delegates: `edgetpu`", non_empty=False)
    Telemetry = _names(TELEMETRY, "sources of temperature, clocks and throttle flags: `thermal_zone` "
                       "(`/sys/class/thermal`), `cpufreq` (`/sys/devices/system/cpu/*/cpufreq`), `hwmon` (`/sys/class/hwmon`), `vcgencmd` "
                       "(Raspberry Pi firmware: clocks, throttle flags), `apex` (Edge TPU PCIe driver temperature), "
                       "`mcu_temp` (firmware die-temperature command)", non_empty=False)


@dataclass(frozen=True, config=CLOSED)
class BoardProfile:
    """One board: identity, transport, runtimes, telemetry, datasheet, flasher.

    ``origin`` is the file the profile was loaded from (None if built in code).
    """

    schema: Annotated[Literal[1], Field(description="the profile schema version", json_schema_extra=expects(
        f"{SCHEMA_VERSION} (the board profile schema this edgebench reads)"))]
    name: Annotated[Name, Field(description="the board's name; must equal the file stem")]
    title: Annotated[Line, Field(description="human name of the board")]
    kind: Annotated[Literal["linux", "mcu"], Field(
        description="`linux`: runs the Python agent; `mcu`: runs edgebench/MLPerf Tiny firmware over a "
                    "serial port")]
    transport: Transport
    runtimes: Runtimes
    kernels: Kernels
    default_threads: Annotated[Int, Field(ge=1, description="interpreter threads used unless `--threads` is given")]
    delegates: Delegates = ()
    telemetry: Telemetry = ()
    soc: Annotated[Str, Field(description="SoC and cores, free text")] = ""
    datasheet: Annotated[Optional[Datasheet], Field(description="vendor-published figures, below")] = None
    flasher: Annotated[Optional[FlasherSpec], Field(description="how firmware is put on an `mcu` board, below")] = None
    firmware: Annotated[Optional[FirmwareSpec], Field(
        description="`mcu` only: the firmware port, emulator and bit-exactness promise, below")] = None
    simulated: Annotated[Optional[SimParams], Field(
        description="transport `sim` only: the model of the simulated board, below (absent: its defaults)")] = None
    notes: Annotated[Optional[Text], Field(description="anything a user should know; may span lines")] = ""
    origin: Annotated[Optional[Str], Field(description="set by edgebench, never in a file: the file the profile "
                                                       "was loaded from")] = dataclasses.field(
        default=None, compare=False)

    @field_validator("runtimes", "kernels", "delegates", "telemetry")
    @classmethod
    def _each_once(cls, values: tuple) -> tuple:
        return _unique(values)

    @field_validator("notes")
    @classmethod
    def _notes(cls, notes: Optional[str]) -> str:
        return notes or ""

    @model_validator(mode="after")
    def _consistent(self) -> "BoardProfile":
        kind, transport = self.kind, self.transport
        if kind == "mcu" and transport.type != "serial":
            raise FieldProblem("transport.type", f"expected serial for kind mcu, got {got(transport.type)}")
        if self.simulated is not None and transport.type != SIM_TRANSPORT:
            raise FieldProblem("simulated", "only allowed with transport type sim")
        if transport.type == SIM_TRANSPORT:
            if kind != "linux":
                raise FieldProblem("kind", f"expected linux for transport type sim, got {got(kind)}")
            if self.simulated is None:
                object.__setattr__(self, "simulated", SimParams())
        if self.firmware is not None and kind != "mcu":
            raise FieldProblem("firmware", "only allowed for kind mcu")
        if transport.url == EMULATOR_URL and not (self.firmware and self.firmware.emulator):
            raise FieldProblem("transport.url", f"{EMULATOR_URL!r} needs firmware.emulator (posix, qemu or unicorn)")
        return self

    @property
    def client_kind(self) -> str:
        """Which board client reaches this board, decided here once: :data:`SIM_CLIENT` (transport type
        ``sim``), :data:`MCU_CLIENT` (``kind: mcu``) or :data:`AGENT_CLIENT` (the Python agent)."""
        if self.transport.type == SIM_TRANSPORT:
            return SIM_CLIENT
        return MCU_CLIENT if self.kind == "mcu" else AGENT_CLIENT

    @property
    def mlperf_only(self) -> bool:
        """The board runs an MLPerf Tiny reference firmware (its first runtime ``mlperf_tiny``): it speaks
        only that dialect, never edgebench's extensions."""
        return bool(self.runtimes) and self.runtimes[0] == "mlperf_tiny"

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
        if not allow_origin and isinstance(data, dict) and "origin" in data:
            raise ProfileError(f"{where}: origin: unknown key (edgebench records where a profile came from)")
        return validate(cls, data, where, ProfileError)


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
    return dataclasses.replace(profile, origin=str(path.absolute()))


__all__ = [
    "BoardProfile", "Datasheet", "FirmwareSpec", "FlasherSpec", "TransportSpec", "load_profile", "display_path",
    "LocalTransportSpec", "SshTransportSpec", "SerialTransportSpec", "SimTransportSpec", "TRANSPORTS", "close_matches",
    "figure_info",
    "ESTIMATED_LABEL", "SCHEMA_VERSION", "AUTO_URL", "COUNTERS", "KINDS", "AGENT_CLIENT", "MCU_CLIENT", "SIM_CLIENT", "TRANSPORT_TYPES",
    "RUNTIMES", "KERNELS",
    "DELEGATES", "TELEMETRY", "FLASHER_PLACEHOLDERS", "EMULATORS", "EmulatorKind", "EMULATOR_URL",
]
