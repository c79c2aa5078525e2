"""Does a model fit a microcontroller board? The check before any upload (level 2).

:func:`check_fit` reads a .tflite model and a board profile (any object with the
``name``, ``kind``, ``firmware`` and ``datasheet`` attributes of
:class:`edgebench.boards.profile.BoardProfile`; this module does not import the
boards layer) and says, without touching the board:

* which operators of the model the board's firmware engine lacks (by engine
  version: :data:`edgebench.mcu.ops.ENGINE_OPS`, from the firmware's operator table), each
  with its first layer
  and output tensor;
* the model blob's size against the firmware's model buffer
  (``firmware.model_buffer_bytes``, from the firmware build) and against the
  flash of the datasheet (``datasheet.flash_bytes``, estimated);
* the model's int8 input tensor against the firmware's input buffer
  (``firmware.input_buffer_bytes``, EB_INPUT_MAX_BYTES of the build: the firmware refuses a
  larger input at ``eb-model``, after the upload); the output has no buffer of its own (it
  stays in the arena and is streamed out through the reply writer);
* the planned arena against the firmware's arena (``firmware.arena_bytes``)
  and against the datasheet RAM (``datasheet.ram_bytes``, estimated), plus the DSP
  kernels' static scratch (:data:`DSP_SCRATCH_BYTES`) on a core with the DSP
  extension (the profile's ``soc`` names a Cortex-M4, M7, M33, M35P, M55 or M85).
  The datasheet comparison leaves out the firmware's code, stack and I/O
  buffers: it can show that a model cannot fit, never promise that it does.

Two placements of the blob are checked apart (:data:`PLACEMENTS`): ``ram``, uploaded
over the serial link into the firmware's model buffer (``deploy``: quick iteration;
the blob counts against the model buffer and the RAM), and ``flash``, linked into the
firmware image (``edgebench flash --board B --model M``; read in place, so it counts
against the flash and only the arena needs RAM; boards with a firmware port only).
The model fits when one placement fits; :meth:`FitReport.raise_if_unfit` takes the
placement a command needs (``deploy``: ``ram``).

A model the converter refuses for another reason (float, uint8, an operator
variant the engine cannot run bit-exactly) is reported with that reason.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union

from edgebench.errors import ModelError
from edgebench.mcu.blob import convert
from edgebench.mcu.ops import ENGINE_VERSION, describe_unsupported, engine_supports, graph_operators, unsupported_layers
from edgebench.modelfile import parse_model

FIRMWARE_BUILD = "firmware build"
RAM_PLACEMENT, FLASH_PLACEMENT = "ram", "flash"
#: where the blob can live, and what each placement means (inspect prints these)
PLACEMENTS = {RAM_PLACEMENT: "uploaded into the firmware's RAM model buffer (edgebench deploy)",
              FLASH_PLACEMENT: "linked into the firmware image, read in place (edgebench flash --model)"}
DATASHEET = "estimated (datasheet)"
INPUT_BUFFER = "input buffer"
#: the static scratch of the DSP kernels (EB_DSP_SCRATCH_BYTES in firmware/core/kernels/dsp/eb_dsp.h),
#: in .bss of builds for cores with the DSP extension; a layer whose working set exceeds it
#: runs the portable kernel, so the RAM it takes never depends on the model
DSP_SCRATCH_BYTES = 4096
_DSP_CORES = ("cortex-m4", "cortex-m7", "cortex-m33", "cortex-m35p", "cortex-m55", "cortex-m85")


def dsp_scratch_bytes(profile) -> int:
    """The DSP kernels' scratch on ``profile``'s core: :data:`DSP_SCRATCH_BYTES` when its
    ``soc`` names a core with the DSP extension, else 0."""
    soc = str(getattr(profile, "soc", "") or "").lower().replace(" ", "-")
    return DSP_SCRATCH_BYTES if any(core in soc for core in _DSP_CORES) else 0


@dataclass(frozen=True)
class FitCheck:
    """One size comparison: ``need`` bytes against ``have`` bytes."""

    what: str            # "model buffer", "arena", "input buffer", "flash", "RAM"
    need_bytes: int
    have_bytes: int
    basis: str           # FIRMWARE_BUILD or DATASHEET
    note: str = ""
    placement: str = ""  # RAM_PLACEMENT, FLASH_PLACEMENT, or "" for both

    @property
    def fits(self) -> bool:
        return self.need_bytes <= self.have_bytes

    def to_dict(self) -> dict:
        return {"what": self.what, "need_bytes": self.need_bytes, "have_bytes": self.have_bytes,
                "fits": self.fits, "basis": self.basis, "note": self.note, "placement": self.placement or "both"}


@dataclass(frozen=True)
class FitReport:
    model: str
    board: str
    engine_version: int
    engine_version_basis: str           # "board profile" or "this edgebench's firmware"
    operators: dict                     # TFLite operator -> count
    missing: tuple = ()                 # (operator, count, first layer, its output tensor)
    blob_bytes: Optional[int] = None
    arena_bytes: Optional[int] = None
    input_bytes: Optional[int] = None   # the int8 input tensor the firmware's input buffer holds
    refused: Optional[str] = None       # the converter's reason, when it refuses the model
    refused_hint: Optional[str] = None
    checks: tuple = field(default_factory=tuple)
    unknown: tuple = ()                 # sizes the profile does not give

    placements: tuple = (RAM_PLACEMENT,)  # the placements the board offers

    def fits_in(self, placement: str) -> bool:
        """The model runs with its blob in ``placement`` (RAM_PLACEMENT or FLASH_PLACEMENT)."""
        return (placement in self.placements and not self.missing and self.refused is None
                and all(c.fits for c in self.checks if c.placement in ("", placement)))

    @property
    def ok(self) -> bool:
        """It fits in at least one placement."""
        return any(self.fits_in(p) for p in self.placements)

    def problems(self, placement: Optional[str] = None) -> list:
        """One short sentence per reason the model does not fit (in ``placement``, or in any)."""
        out = []
        if self.missing:
            out.append(f"the firmware (engine version {self.engine_version}) lacks "
                       f"{describe_unsupported(list(self.missing))}")
        if self.refused:
            out.append(self.refused)
        for c in self.checks:
            if not c.fits and (placement is None or c.placement in ("", placement)):
                where = f" with the blob in {c.placement}" if c.placement and placement is None else ""
                out.append(f"{c.what}{where}: needs {c.need_bytes:,} bytes, the board has {c.have_bytes:,} "
                           f"[{c.basis}]")
        return out

    def to_dict(self) -> dict:
        return {"model": self.model, "board": self.board, "fits": self.ok,
                "engine_version": self.engine_version, "engine_version_basis": self.engine_version_basis,
                "operators": dict(self.operators),
                "missing_operators": [{"op": op, "count": n, "first_layer": k, "tensor": t}
                                      for op, n, k, t in self.missing],
                "blob_bytes": self.blob_bytes, "arena_bytes": self.arena_bytes, "input_bytes": self.input_bytes,
                "refused": self.refused,
                "checks": [c.to_dict() for c in self.checks], "unknown": list(self.unknown),
                "placements": {p: self.fits_in(p) for p in self.placements}, "problems": self.problems()}

    def need_have(self) -> str:
        """One clause with the sizes in KiB: ``model needs 63.0 KiB RAM (arena) + 240.6 KiB flash (blob)
        + 9.0 KiB input; board qemu-f405 has 48.0 KiB upload buffer, 52.0 KiB arena, 8.0 KiB input buffer,
        1024.0 KiB flash, 128.0 KiB RAM``
        ("" when the model could not be sized)."""
        if self.blob_bytes is None or self.arena_bytes is None:
            return ""
        have: dict = {}
        for c in self.checks:
            have.setdefault({"model buffer": "upload buffer"}.get(c.what, c.what), c.have_bytes)
        figures = ", ".join(f"{_kib(n)} {what}" for what, n in have.items()) or "no memory figures in its profile"
        inp = f" + {_kib(self.input_bytes)} input" if self.input_bytes is not None else ""
        return (f"model needs {_kib(self.arena_bytes)} RAM (arena) + {_kib(self.blob_bytes)} flash (blob){inp}; "
                f"board {self.board} has {figures}")

    def hint(self, placement: Optional[str] = None) -> str:
        if placement == RAM_PLACEMENT and self.fits_in(FLASH_PLACEMENT):
            model = self.model if self.model != "<bytes>" else "MODEL"
            return (f"its blob fits in flash: link it into the firmware image with "
                    f"edgebench flash --board {self.board} --model {model}")
        if self.missing:
            return ("the engine does not run these operators: replace them in the model, or use a board "
                    "whose firmware runs them")
        if self.refused:
            return self.refused_hint or "see firmware/BLOB.md for what the engine runs bit-exactly"
        if [c.what for c in self.checks if not c.fits] == [INPUT_BUFFER]:
            return ("give the model a smaller input (fewer pixels, channels or frames), or build the firmware "
                    "with a larger EB_INPUT_MAX_BYTES and set the profile's firmware.input_buffer_bytes to it")
        return "choose a board with more memory, a smaller model, or a firmware built with larger buffers"

    def raise_if_unfit(self, placement: Optional[str] = None) -> None:
        """ModelError (one line) naming every reason, for deploy/verify/bench to stop before upload;
        ``placement`` is the one the command needs (None: any)."""
        fits = self.ok if placement is None else self.fits_in(placement)
        if not fits:
            where = f" with its blob in {placement}" if placement else ""
            sizes = self.need_have()
            raise ModelError(f"{self.model} does not fit {self.board}{where}: " + (f"{sizes}; " if sizes else "")
                             + "; ".join(self.problems(placement)) + "; nothing was built or uploaded",
                             self.hint(placement))


def _kib(n: int) -> str:
    return f"{n / 1024:.1f} KiB"


def model_operators(data: bytes, path: str = "<bytes>") -> tuple:
    """(operator names, output tensor names) of the main subgraph, in execution order."""
    # lazy: flatbuffers, ai_edge_litert (optional; import flatbuffers 230 ms, ai_edge_litert 12 ms), loaded only where used
    from ai_edge_litert import schema_py_generated as s

    parse_model(data, path)     # ModelError for a file that is not a TFLite model
    m = s.ModelT.InitFromPackedBuf(bytearray(data), 0)
    return graph_operators(m, m.subgraphs[0])


def check_fit(model: Union[str, Path, bytes], profile) -> FitReport:
    """The fit of ``model`` on the microcontroller board ``profile`` (see the module doc)."""
    if isinstance(model, (bytes, bytearray)):
        data, label = bytes(model), "<bytes>"
    else:
        p = Path(model)
        if not p.is_file():
            raise ModelError(f"model file {p} does not exist", "check the path")
        data, label = p.read_bytes(), str(p)
    if profile.client_kind != "mcu":
        raise ModelError(f"board {profile.name} is a Linux board: the fit check is for microcontrollers",
                         "leave out --board, or name a microcontroller board")
    fw, ds = getattr(profile, "firmware", None), getattr(profile, "datasheet", None)
    version = getattr(fw, "engine_version", None)
    basis = "board profile" if version else "this edgebench's firmware"
    version = version or ENGINE_VERSION
    supported = engine_supports(version)
    ops, outs = model_operators(data, label)
    missing = tuple(unsupported_layers(ops, outs, supported))
    report = dict(model=label, board=profile.name, engine_version=version, engine_version_basis=basis,
                  operators=dict(sorted(Counter(ops).items())), missing=missing)
    host_missing = unsupported_layers(ops, outs, engine_supports(ENGINE_VERSION))
    if host_missing:        # the converter cannot size it either
        return FitReport(**report, unknown=("sizes: the model cannot be converted to a blob "
                                            "while it has operators the engine lacks",))
    try:
        blob = convert(data, name=Path(label).stem if label != "<bytes>" else None)
    except ModelError as exc:
        return FitReport(**report, refused=exc.message.rstrip("."), refused_hint=exc.hint)
    checks: list[FitCheck] = []
    unknown: list[str] = []

    def compare(what, need, have, basis_, note="", placement=""):
        if have is None:
            if f"{what}: " not in "".join(unknown):
                unknown.append(f"{what}: the board profile does not give it ({basis_})")
        else:
            checks.append(FitCheck(what, int(need), int(have), basis_, note, placement))

    placements = (RAM_PLACEMENT, FLASH_PLACEMENT) if getattr(fw, "port", None) else (RAM_PLACEMENT,)
    compare("model buffer", blob.flash_bytes, getattr(fw, "model_buffer_bytes", None), FIRMWARE_BUILD,
            placement=RAM_PLACEMENT)
    compare("arena", blob.peak_arena_bytes, getattr(fw, "arena_bytes", None), FIRMWARE_BUILD)
    compare(INPUT_BUFFER, blob.input["bytes"], getattr(fw, "input_buffer_bytes", None), FIRMWARE_BUILD,
            "the model's int8 input tensor; the firmware refuses a larger one when it loads the model")
    if ds is not None:
        dsp = dsp_scratch_bytes(profile)
        scratch = f" + {dsp} bytes of DSP kernel scratch" if dsp else ""
        if FLASH_PLACEMENT in placements:
            compare("flash", blob.flash_bytes, getattr(ds, "flash_bytes", None), DATASHEET,
                    "the blob only; the firmware's code is not counted", placement=FLASH_PLACEMENT)
            compare("RAM", blob.peak_arena_bytes + dsp, getattr(ds, "ram_bytes", None), DATASHEET,
                    f"arena{scratch} (the blob is read in place from flash); code, stack and I/O buffers "
                    "not counted", placement=FLASH_PLACEMENT)
        compare("RAM", blob.peak_arena_bytes + blob.flash_bytes + dsp, getattr(ds, "ram_bytes", None), DATASHEET,
                f"arena + blob (the firmware holds the uploaded model in RAM){scratch}; code, stack and "
                "I/O buffers not counted", placement=RAM_PLACEMENT)
    return FitReport(**report, blob_bytes=blob.flash_bytes, arena_bytes=blob.peak_arena_bytes,
                     input_bytes=blob.input["bytes"],
                     checks=tuple(checks), unknown=tuple(unknown), placements=placements)
