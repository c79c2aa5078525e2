"""Run a microcontroller's firmware image on the ``unicorn`` instruction-set emulator, its UART on a pty.

For a chip QEMU has no model of (the STM32L4R5 of the NUCLEO-L4R5ZI), the very image a user
flashes runs here: unicorn executes its Cortex-M4 instructions, and this module models the
peripherals the port touches, with their addresses and reset values read from the vendor SVD
pyOCD ships (``pyocd/debug/svd/svd_data.zip``) and the bits the port waits for from the
reference manual (RM0432):

* RCC, PWR and ADC: the documented behaviour of the bits a port waits for or must sequence —
  ready bits after their start-up times, the range 1 boost rule for ``HPRE`` and ``SW``, ADC
  calibration and enable, the temperature sensor's start-up — in
  :class:`edgebench.mcu.l4r5_model.L4R5Model`, whose time is the instructions the core executed
  (counted with a block hook while a delay is pending); what it refuses is listed in
  ``board.model.violations``. FLASH ``ACR`` and GPIO registers keep what is written;
* LPUART1: ``TXE`` and ``TC`` always set, a ``TDR`` write goes to the pty, ``RXNE`` is set while
  host bytes wait and an ``RDR`` read takes one (RM0432 53.7);
* the temperature sensor's factory calibration (TS_CAL1/TS_CAL2) holds plausible values and the
  die sits at 25 °C;
* the Armv7-M system space (SCB, DWT) keeps what is written; ``DWT_CYCCNT`` advances with the
  host's clock at the port's 120 MHz so that the firmware's timing code runs — it is **not** the
  image's speed: the board is labelled emulated and edgebench never reports a latency from it.
  With a ``cycle_model`` (:mod:`edgebench.mcu.cycles`) it reads the model's cycle estimate of
  the blocks executed so far instead: the firmware's own timing then yields estimated cycles.

:class:`UnicornBoard` has the life cycle of :class:`edgebench.mcu.qemu.QemuBoard`: ``start()``
returns the pty path for pyserial (the ordinary ``McuClient`` talks to it), ``stop()`` ends the
emulation thread. Library code: raises edgebench errors, never prints.
"""
from __future__ import annotations

import os
import select
import threading
import time
import tty
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path
from typing import Any

from edgebench.errors import UsageError
from edgebench.mcu.l4r5_model import MODELLED, TS_CAL, L4R5Model

#: chip -> what the emulator maps: memories (base, size), peripheral windows, the SVD and the
#: peripherals whose reset values come from it, registers the SVD lacks (RM0432), the UART.
CHIPS: dict[str, dict[str, Any]] = {   # each chip: its memory map, UART registers, SVD and resets
    "stm32l4r5": {
        "flash": (0x0800_0000, 2 << 20), "ram": (0x2000_0000, 640 << 10), "sysmem": (0x1FFF_0000, 0x10000),
        "mmio": ((0x4000_0000, 0x3_0000), (0x4800_0000, 0x2000), (0x5004_0000, 0x1000), (0xE000_0000, 0x10_0000)),
        "svd": "STM32L4x5.svd",
        "peripherals": ("RCC", "PWR", "FLASH", "GPIOF", "GPIOG", "LPUART1", "ADC1", "ADC123_Common"),
        "extra_resets": {0x4000_7080: 0x0000_0100},     # PWR_CR5 (L4+ only): R1MODE = 1 (RM0432 6.4.20)
        "uart": {"isr": 0x4000_801C, "rdr": 0x4000_8024, "tdr": 0x4000_8028, "rxne": 1 << 5, "txe": 1 << 7,
                 "tc": 1 << 6},
        "cycle_hz": 120_000_000,
    },
}
DWT_CYCCNT = 0xE000_1004
_IDLE_POLLS = 200            # empty RX polls before the emulation pauses to wait for the host
INSTALL_HINT = "pip install 'edgebench[emulate]' (unicorn and pyocd, whose SVD files give the register models)"


def svd_resets(svd_name: str, peripherals) -> dict:
    """{address: reset value} of every register of ``peripherals`` in pyOCD's copy of the vendor SVD."""
    try:
        import pyocd  # optional dependency: its absence is handled here
    except ImportError:
        raise UsageError("the emulator's register models come from pyOCD's SVD files: pyocd is not installed",
                         INSTALL_HINT) from None
    archive = Path(pyocd.__file__).parent / "debug" / "svd" / "svd_data.zip"
    with zipfile.ZipFile(archive) as z:
        root = ET.fromstring(z.read(svd_name))
    by_name = {p.findtext("name"): p for p in root.iter("peripheral")}
    out = {}
    for name in peripherals:
        p = by_name[name]
        src = by_name[p.get("derivedFrom")] if p.get("derivedFrom") else p
        base = int(p.findtext("baseAddress", "0"), 0)
        for reg in src.iter("register"):
            reset = reg.findtext("resetValue")
            out[base + int(reg.findtext("addressOffset", "0"), 0)] = int(reset, 0) if reset else 0
    return out


def load_elf(path: Path) -> list:
    """[(load address, bytes)] of the image's loadable segments (their LMA: what a flasher writes)."""
    # lazy: pyelftools (optional, it comes with pyocd), loaded only where used
    from elftools.elf.elffile import ELFFile

    with open(path, "rb") as f:
        elf = ELFFile(f)
        return [(seg["p_paddr"], seg.data()) for seg in elf.iter_segments()
                if seg["p_type"] == "PT_LOAD" and seg["p_filesz"] > 0]


class UnicornBoard:
    """One firmware image running on unicorn in a thread of this process, its UART on a pty."""

    def __init__(self, elf, chip: str = "stm32l4r5", model_options: dict | None = None, cycle_model=None):
        if chip not in CHIPS:
            raise UsageError(f"the unicorn emulator has no model of chip {chip!r}", f"known: {', '.join(CHIPS)}")
        self.elf, self.chip = Path(elf), CHIPS[chip]
        self.pty_path: str | None = None
        self.error: str | None = None
        self._master: int | None = None     # the pty's two ends while it runs
        self._slave: int | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._rx = bytearray()
        self._tx = bytearray()
        self._regs: dict = {}
        self._model_options = dict(model_options or {})
        self.model: L4R5Model | None = None
        self._time_hook = None
        self._block_insns: dict = {}
        self._idle = 0
        self._t0 = time.monotonic_ns()
        #: an :class:`edgebench.mcu.cycles.CycleModel`: counts the executed blocks, and DWT_CYCCNT reads
        #: its estimate (label estimated) instead of the host's clock
        self.cycle_model = cycle_model

    # -- life cycle -----------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def pid(self) -> None:
        return None                 # a thread of this process, not a child process

    @property
    def returncode(self) -> int | None:
        """None while it runs; 0 after stop(), 1 when the emulated core stopped on an error."""
        return None if self.running else (1 if self.error else 0)

    def output(self) -> str:
        return self.error or ""

    def start(self) -> str:
        try:
            import unicorn  # noqa: F401
        except ImportError:
            raise UsageError("the unicorn emulator is not installed", INSTALL_HINT) from None
        if not self.elf.is_file():
            raise UsageError(f"firmware image {self.elf} does not exist")

        uc = self._machine()
        self._master, slave = os.openpty()
        self._slave = slave
        tty.setraw(slave)
        os.set_blocking(self._master, False)
        self.pty_path = os.ttyname(slave)
        self._thread = threading.Thread(target=self._run, args=(uc,), name="unicorn-board", daemon=True)
        self._thread.start()
        return self.pty_path

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        for fd in (self._master, self._slave):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._master = self._slave = None

    def __enter__(self) -> "UnicornBoard":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- the machine ----------------------------------------------------------------
    def _machine(self):
        # lazy: unicorn (optional; import unicorn 231 ms measured), loaded only where used
        from unicorn import UC_ARCH_ARM, UC_MODE_MCLASS, UC_MODE_THUMB, Uc
        from unicorn.arm_const import UC_ARM_REG_MSP, UC_ARM_REG_SP, UC_CPU_ARM_CORTEX_M4

        chip = self.chip
        uc = Uc(UC_ARCH_ARM, UC_MODE_THUMB | UC_MODE_MCLASS)
        uc.ctl_set_cpu_model(UC_CPU_ARM_CORTEX_M4)
        (fbase, fsize), (rbase, rsize), (sbase, ssize) = chip["flash"], chip["ram"], chip["sysmem"]
        for base, size in ((fbase, fsize), (0, fsize), (rbase, rsize), (sbase, ssize)):
            uc.mem_map(base, size)
        image = bytearray(fsize)
        for addr, data in load_elf(self.elf):
            if not (fbase <= addr and addr + len(data) <= fbase + fsize):
                raise UsageError(f"{self.elf}: a segment at {addr:#x} lies outside the chip's flash",
                                 "is this the image of this board's port?")
            image[addr - fbase:addr - fbase + len(data)] = data
        uc.mem_write(fbase, bytes(image))
        uc.mem_write(0, bytes(image))                     # boot from flash: aliased at 0
        self._regs = svd_resets(chip["svd"], chip["peripherals"])
        self._regs.update(chip["extra_resets"])
        self.model = L4R5Model(self._regs, **self._model_options)
        for addr, value in TS_CAL:                        # the factory calibration ROM
            uc.mem_write(addr, value.to_bytes(2, "little"))
        for base, size in chip["mmio"]:
            uc.mmio_map(base, size, self._read, base, self._write, base)
        sp = int.from_bytes(image[0:4], "little")
        self._pc = int.from_bytes(image[4:8], "little")
        uc.reg_write(UC_ARM_REG_MSP, sp)
        uc.reg_write(UC_ARM_REG_SP, sp)
        return uc

    def _run(self, uc) -> None:
        # lazy: unicorn (optional; import unicorn 231 ms measured), loaded only where used
        from unicorn import UcError
        from unicorn.arm_const import UC_ARM_REG_PC

        pc = self._pc | 1
        try:
            while not self._stop.is_set():
                if self.cycle_model is not None:
                    self.cycle_model.attach_when_asked(uc)     # between runs: never in the middle of one
                uc.emu_start(pc, 0xFFFF_FFFF, count=2_000_000)
                pc = uc.reg_read(UC_ARM_REG_PC) | 1
                self._count_time(uc)
                self._flush()
                if self._idle >= _IDLE_POLLS:       # the firmware waits for input: so do we
                    if self._master is None:
                        break                       # the pty was closed by stop()
                    select.select([self._master], [], [], 0.05)
                    self._idle = 0
        except UcError as exc:
            pc = uc.reg_read(UC_ARM_REG_PC)
            self.error = f"the emulated core stopped at pc={pc:#010x}: {exc}"
            self._tx += f"\r\ne-[eb-fault emulator: {self.error}]\r\n".encode()
            self._flush()
        except OSError:
            pass                                    # the pty was closed by stop()

    def _count_time(self, uc) -> None:
        """Count executed instructions (the model's time) while a modelled delay is pending."""
        # lazy: unicorn (optional; import unicorn 231 ms measured), loaded only where used
        from unicorn import UC_HOOK_BLOCK

        busy = self.model is not None and self.model.busy
        if busy and self._time_hook is None:
            self._time_hook = uc.hook_add(UC_HOOK_BLOCK, self._on_block)
        elif not busy and self._time_hook is not None:
            uc.hook_del(self._time_hook)
            self._time_hook = None

    def _on_block(self, uc, address, size, user_data) -> None:
        n = self._block_insns.get((address, size))
        if n is None:
            n = self._block_insns[(address, size)] = thumb_instructions(bytes(uc.mem_read(address, size)))
        assert self.model is not None   # the hook is added only while the model is busy
        self.model.advance(n)

    def _flush(self) -> None:
        while self._tx and self._master is not None:
            try:
                n = os.write(self._master, self._tx)
            except BlockingIOError:
                select.select([], [self._master], [], 0.05)
                if self._stop.is_set():
                    return
                continue
            del self._tx[:n]

    def _pull(self) -> None:
        if self._master is None:
            return
        try:
            self._rx += os.read(self._master, 4096)
        except (BlockingIOError, OSError):
            pass

    # -- register models ------------------------------------------------------------
    def _read(self, uc, offset, size, base) -> int:
        addr = base + offset
        uart = self.chip["uart"]
        if addr == uart["isr"]:
            if not self._rx:
                self._pull()
            if not self._rx:
                self._idle += 1
                if self._idle >= _IDLE_POLLS:
                    uc.emu_stop()
            else:
                self._idle = 0
            return uart["txe"] | uart["tc"] | (uart["rxne"] if self._rx else 0)
        if addr == uart["rdr"]:
            return self._rx.pop(0) if self._rx else 0
        if addr == DWT_CYCCNT and self.cycle_model is not None:
            return self.cycle_model.read_counter() & 0xFFFF_FFFF
        if addr == DWT_CYCCNT:
            return ((time.monotonic_ns() - self._t0) * self.chip["cycle_hz"] // 1_000_000_000) & 0xFFFF_FFFF
        word = addr - addr % 4
        value = self.model.read(word) if word in MODELLED and self.model is not None else self._regs.get(word, 0)
        return (value >> (8 * (addr % 4))) & ((1 << (8 * size)) - 1)

    def _write(self, uc, offset, size, value, base) -> None:
        addr = base + offset
        if addr == self.chip["uart"]["tdr"]:
            self._tx.append(value & 0xFF)
            if len(self._tx) >= 512:
                self._flush()
            return
        word = addr - addr % 4
        shift, mask = 8 * (addr % 4), (1 << (8 * size)) - 1
        value = (self._regs.get(word, 0) & ~(mask << shift)) | ((value & mask) << shift)
        if word in MODELLED and self.model is not None:
            value = self.model.write(word, self._regs.get(word, 0), value)
            if self.model.busy and self._time_hook is None:
                uc.emu_stop()       # a delay started: _run counts instructions from here
        self._regs[word] = value


def thumb_instructions(code: bytes) -> int:
    """How many Thumb instructions ``code`` holds (a halfword whose top five bits are 0b11101, 0b11110
    or 0b11111 starts a 32-bit one, Armv7-M ARM A5.1)."""
    n = i = 0
    while i + 1 < len(code):
        i += 4 if code[i + 1] >> 3 in (0b11101, 0b11110, 0b11111) else 2
        n += 1
    return max(n, 1)


__all__ = ["UnicornBoard", "CHIPS", "svd_resets", "load_elf", "thumb_instructions", "INSTALL_HINT"]
