"""A Cortex-M4 cycle estimate from the instruction stream of an emulated run (label: ``estimated``).

Unicorn executes the image; a ``UC_HOOK_BLOCK`` hook counts every executed basic block, and
capstone classifies each block's instructions once. The estimate is the sum over executed
blocks of each block's cost in a timing model built from two published sources:

* the Cortex-M4 instruction timings (Arm Cortex-M4 Technical Reference Manual, table 3-1,
  reproduced for the Cortex-M4F in TI SWCU192 table 3-25 with its pairing rules): ALU,
  MUL/MLA/MLS, the long multiplies and the DSP/SIMD multiplies (SMLAD ...) 1 cycle; SDIV/UDIV
  2 to 12; LDR 2, but 1 when it follows another load or store (pipelined), +1 when its
  address register was written by the instruction before (no forwarding to the address
  generator); STR 1 (write buffer); LDRD/STRD 3; LDM/STM/PUSH/POP 1 + N; a taken branch
  1 + P with P, the pipeline refill, from 1 to 3; TBB/TBH 2 + P; FPU VMLA/VFMA 3,
  VDIV/VSQRT 14, other FPU operations 1;
* the STM32L4R5 flash (RM0432 3.3.3-3.3.5 and table 12): 5 wait states at 120 MHz (range 1
  boost), behind the ART accelerator whose instruction cache (32 lines of 256 bits) the
  port enables: a fetch from a cached line waits for nothing, a missed line costs the
  wait states. The model keeps an LRU copy of the cache's tags (full associativity,
  an assumption: RM0432 gives no way count).

What is not modelled, and so bounds the error: P per branch (estimate 2, bounds 1 and 3),
the divide's early termination (estimate 7, bounds 2 and 12), the prefetch buffer that can
hide a sequential line miss (bounds: no miss cost and 6 cycles per miss), the data cache
for literal-pool loads from flash (charged nothing; bound: the wait states each), bus
contention between the fetch and data ports. :class:`CycleModel` keeps the counts that
carry these choices, so :meth:`CycleModel.bounds` gives the low and high ends of the same
run. A figure from here is never a measurement: the DWT cycle counter of a real board
(``selftest`` stores it) is the check this model still waits for.

Library code: raises edgebench errors, never prints.
"""
from __future__ import annotations

import threading
from collections import OrderedDict, deque
from dataclasses import dataclass, field

import numpy as np

from edgebench.errors import AgentError, UsageError
from edgebench.mcu.blob import convert
from edgebench.mcu.firmware import build_firmware
from edgebench.mcu.protocol import DutClient
from edgebench.mcu.unicorn_board import UnicornBoard
from edgebench.modelfile import read_model
from edgebench.runtime.inspect import inspect_model

#: the board whose timing this models
BOARD = "NUCLEO-L4R5ZI"
CLOCK_HZ = 120_000_000
FLASH_WAIT_STATES = 5                    # RM0432 table 12: 120 MHz, range 1 boost
ICACHE_LINES, ICACHE_LINE_BYTES = 32, 32  # RM0432 3.3.5: 32 lines of 4 x 64 bits
FLASH_WINDOWS = ((0x0000_0000, 0x0020_0000), (0x0800_0000, 0x0820_0000))   # aliased at 0 at boot
REFILL = {"low": 1, "estimate": 2, "high": 3}            # P of the TRM
DIVIDE = {"low": 2, "estimate": 7, "high": 12}
MISS = {"low": 0, "estimate": FLASH_WAIT_STATES, "high": FLASH_WAIT_STATES + 1}
LITERAL = {"low": 0, "estimate": 0, "high": FLASH_WAIT_STATES}
LABEL = "estimated"
KEPT_READS = 4096

_LOAD = ("ldr", "ldm", "pop", "vldr", "vldm", "vpop", "lda")
_STORE = ("str", "stm", "push", "vstr", "vstm", "vpush", "stl")
_FP_MAC = ("vmla", "vmls", "vnmla", "vnmls", "vfma", "vfms", "vfnma", "vfnms")
_FP_LONG = ("vdiv", "vsqrt")


@dataclass
class BasicBlock:
    """One basic block's static cost: cycles fixed by the TRM, and the counts of the variable parts."""
    base: int                    # cycles with P, divide and wait states left out
    instructions: int
    refills: int                 # branches that always refill (B, BL, BX, POP {pc} ...)
    divides: int
    literals: int                # pc-relative loads (literal pool, from flash)
    conditional_branch: bool     # the block ends in a conditional branch: a refill only when taken
    fallthrough: int
    lines: tuple                 # flash lines (cache tags) its fetch touches; () when not in flash


def _base_mnemonic(mnemonic: str) -> str:
    return mnemonic.split(".")[0]


def _is(m: str, prefixes) -> bool:
    return any(m.startswith(p) for p in prefixes)


def instruction_cost(insn, prev) -> tuple:
    """(fixed cycles, refills, divides, literal loads) of one capstone instruction after ``prev``."""
    # lazy: capstone (optional; import capstone 252 ms measured), loaded only where used
    from capstone import CS_GRP_JUMP
    from capstone.arm import ARM_CC_AL, ARM_CC_INVALID, ARM_OP_MEM, ARM_REG_PC

    m = _base_mnemonic(insn.mnemonic)
    reads, writes = insn.regs_access()
    writes_pc = ARM_REG_PC in writes or CS_GRP_JUMP in insn.groups
    mems = [op.mem for op in insn.operands if op.type == ARM_OP_MEM]
    literal = int(bool(mems) and mems[0].base == ARM_REG_PC and _is(m, _LOAD))
    # a conditional instruction is counted as executed (IT blocks): one cycle either way for ALU work
    refill = int(writes_pc and insn.cc in (ARM_CC_AL, ARM_CC_INVALID))
    cycles, divides = 1, 0
    if m in ("sdiv", "udiv"):
        cycles, divides = 0, 1
    elif m in ("tbb", "tbh"):
        cycles = 2
    elif _is(m, ("ldm", "stm", "pop", "push", "vldm", "vstm", "vpop", "vpush")):
        regs = len(insn.operands) - (0 if m in ("pop", "push", "vpop", "vpush") else 1)
        cycles = 1 + regs
    elif m in ("ldrd", "strd"):
        cycles = 3
    elif _is(m, _LOAD):
        pipelined = prev is not None and _is(_base_mnemonic(prev.mnemonic), _LOAD + _STORE)
        cycles = 1 if pipelined else 2
        if mems and prev is not None and mems[0].base in prev.regs_access()[1]:
            cycles += 1          # the address register was written by the instruction before
    elif _is(m, _STORE):
        cycles = 1
        if mems and prev is not None and mems[0].base in prev.regs_access()[1]:
            cycles += 1
    elif _is(m, _FP_MAC):
        cycles = 3
    elif _is(m, _FP_LONG):
        cycles = 14
    return cycles, refill, divides, literal


def decode_block(code: bytes, address: int) -> BasicBlock:
    """The static cost of the block of ``code`` at ``address`` (Thumb, M profile)."""
    # lazy: capstone (optional; import capstone 252 ms measured), loaded only where used
    import capstone
    from capstone.arm import ARM_CC_AL, ARM_CC_INVALID, ARM_REG_PC

    md = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
    md.detail = True
    base = n = refills = divides = literals = 0
    prev = None
    conditional = False
    for insn in md.disasm(code, address):
        cycles, refill, div, lit = instruction_cost(insn, prev)
        base, refills, divides, literals = base + cycles, refills + refill, divides + div, literals + lit
        n += 1
        writes_pc = ARM_REG_PC in insn.regs_access()[1] or capstone.CS_GRP_JUMP in insn.groups
        conditional = writes_pc and insn.cc not in (ARM_CC_AL, ARM_CC_INVALID)
        prev = insn
    lines: tuple = ()
    for lo, hi in FLASH_WINDOWS:
        if lo <= address < hi:
            off = address - lo
            lines = tuple(range(off // ICACHE_LINE_BYTES, (off + max(len(code), 1) - 1) // ICACHE_LINE_BYTES + 1))
    return BasicBlock(base, n, refills, divides, literals, conditional, address + len(code), lines)


@dataclass
class CycleModel:
    """Counts of an emulated run's executed blocks, priced by the Cortex-M4 / STM32L4R5 model.

    :meth:`attach` hooks a unicorn engine; :attr:`cycles` is the running estimate (what a DWT
    cycle counter would read if the model were exact), :meth:`snapshot` the counts behind it."""
    counts: dict = field(default_factory=lambda: {"base": 0, "instructions": 0, "refills": 0, "taken": 0,
                                                  "not_taken": 0, "divides": 0, "literals": 0, "misses": 0,
                                                  "blocks": 0})
    _blocks: dict = field(default_factory=dict)
    _cache: OrderedDict = field(default_factory=OrderedDict)
    _pending: int | None = None          # fall-through address of a conditional branch just executed
    reads: deque = field(default_factory=lambda: deque(maxlen=KEPT_READS))
    _asked: threading.Event = field(default_factory=threading.Event)
    _attached: threading.Event = field(default_factory=threading.Event)

    def attach(self, uc) -> None:
        # lazy: unicorn (optional; import unicorn 231 ms measured), loaded only where used
        from unicorn import UC_HOOK_BLOCK

        uc.hook_add(UC_HOOK_BLOCK, self._hook)

    def arm(self, timeout_s: float = 60.0) -> None:
        """Ask the emulation thread to attach the hook, and wait until it has (it does so between
        two runs of the engine, so nothing already under way is half counted). Uploads before it
        run at full speed: the block hook costs a Python call per block."""
        self._asked.set()
        if not self._attached.wait(timeout_s):
            raise AgentError(f"the emulator did not attach the cycle model within {timeout_s:g} s")

    def attach_when_asked(self, uc) -> None:
        """Called by the emulation thread between two runs (:class:`edgebench.mcu.unicorn_board.UnicornBoard`)."""
        if self._asked.is_set() and not self._attached.is_set():
            self.attach(uc)
            uc.ctl_flush_tb()       # blocks translated before the hook would run uncounted
            self._attached.set()

    def block(self, uc, address: int, size: int) -> BasicBlock:
        key = (address, size)
        b = self._blocks.get(key)
        if b is None:
            b = self._blocks[key] = decode_block(bytes(uc.mem_read(address, size)), address)
        return b

    def _hook(self, uc, address, size, _user) -> None:
        self.execute(self.block(uc, address, size), address)

    def execute(self, b: BasicBlock, address: int) -> None:
        c = self.counts
        if self._pending is not None:
            c["not_taken" if address == self._pending else "taken"] += 1
        self._pending = b.fallthrough if b.conditional_branch else None
        c["base"] += b.base
        c["instructions"] += b.instructions
        c["refills"] += b.refills
        c["divides"] += b.divides
        c["literals"] += b.literals
        c["blocks"] += 1
        cache = self._cache
        for line in b.lines:
            if line in cache:
                cache.move_to_end(line)
            else:
                c["misses"] += 1
                cache[line] = None
                if len(cache) > ICACHE_LINES:
                    cache.popitem(last=False)

    def snapshot(self) -> dict:
        return dict(self.counts)

    def read_counter(self) -> int:
        """The estimate as a DWT_CYCCNT read returns it; the counts at the read are kept (the last
        :data:`KEPT_READS`) so that an interval the firmware timed can be found again."""
        self.reads.append(self.snapshot())
        return self.cycles

    @property
    def cycles(self) -> int:
        return price(self.counts, "estimate")

    def bounds(self, counts: dict | None = None) -> dict:
        counts = self.counts if counts is None else counts
        return {k: price(counts, k) for k in ("low", "estimate", "high")}


def price(counts: dict, which: str = "estimate") -> int:
    """Cycles of ``counts`` (a :meth:`CycleModel.snapshot` or a difference of two) at one end of the model."""
    return (counts["base"] + REFILL[which] * (counts["refills"] + counts["taken"]) + DIVIDE[which] * counts["divides"]
            + MISS[which] * counts["misses"] + LITERAL[which] * counts["literals"])


def difference(after: dict, before: dict) -> dict:
    return {k: after[k] - before.get(k, 0) for k in after}


def describe(counts: dict, macs: int | None = None) -> dict:
    """The estimate of ``counts`` (one inference) as stored and printed: cycles, ms at 120 MHz, bounds."""
    cyc = {k: price(counts, k) for k in ("low", "estimate", "high")}
    out = {"label": LABEL, "board": BOARD, "clock_hz": CLOCK_HZ, "model": "Cortex-M4 TRM timings + STM32L4R5 "
           "flash (5 wait states, ART instruction cache)", "cycles": cyc["estimate"],
           "cycles_low": cyc["low"], "cycles_high": cyc["high"], "ms": cyc["estimate"] * 1e3 / CLOCK_HZ,
           "ms_low": cyc["low"] * 1e3 / CLOCK_HZ, "ms_high": cyc["high"] * 1e3 / CLOCK_HZ,
           "instructions": counts["instructions"], "counts": dict(counts),
           "cycles_per_instruction": cyc["estimate"] / counts["instructions"] if counts["instructions"] else None}
    if macs:
        out["macs"] = macs
        out["cycles_per_mac"] = cyc["estimate"] / macs
    return out


def timed_interval(reads, ticks: int) -> dict:
    """The counts between the two counter reads (the latest such pair) whose estimates differ by
    ``ticks``: the interval the firmware timed, as the firmware reported it."""
    reads = list(reads)
    prices = [price(r) for r in reads]            # never decreasing: a dict finds each start at once
    first: dict[int, int] = {}
    for i, p in enumerate(prices):
        first.setdefault(p, i)
    for j in range(len(reads) - 1, 0, -1):
        k = first.get(prices[j] - ticks)
        if k is not None and k < j:
            return difference(reads[j], reads[k])

    raise AgentError(f"no two reads of the emulated cycle counter are {ticks} cycles apart",
                     "the firmware timed something other than one inference")


def sentence(est: dict) -> str:
    """``estimated N ms on NUCLEO-L4R5ZI at 120 MHz (cycle model)`` with its bounds and instruction count."""
    return (f"estimated {est['ms']:.2f} ms on {est['board']} at {est['clock_hz'] / 1e6:g} MHz (cycle model; "
            f"bounds {est['ms_low']:.2f}-{est['ms_high']:.2f} ms), {est['instructions']:,} emulated instructions")


PORT = "nucleo-l4r5zi"


def estimate_model(model_path, image=None, seed: int = 1, warmup: int = 1, timeout_s: float = 1800.0) -> dict:
    """One inference of ``model_path`` on the NUCLEO-L4R5ZI image under unicorn, priced by the model.

    ``image``: the port's ELF (default: built with ``make``, :func:`edgebench.mcu.firmware.build_firmware`).
    The model is uploaded into RAM as ``deploy`` does, with a seeded random int8 input; ``warmup``
    inferences fill the instruction cache first (MLPerf Tiny's steady state). The firmware times
    the inference with DWT_CYCCNT, which here reads the estimate: its ticks are estimated cycles.
    The block hook is attached only after the uploads (:meth:`CycleModel.arm`): a Python call per
    block slowed the firmware's end-of-upload CRC past the host's patience on a loaded machine."""
    for module in ("unicorn", "capstone"):
        try:
            __import__(module)
        except ImportError:
            raise UsageError(f"the cycle estimate needs {module}, which is not installed",
                             "pip install 'edgebench[emulate]'") from None
    model = read_model(model_path)
    blob = convert(model)
    elf = image or build_firmware(PORT)
    cm = CycleModel()
    with UnicornBoard(elf, cycle_model=cm) as board:
        client = DutClient(board.pty_path, timeout_s=timeout_s, name="unicorn-l4r5zi")
        try:
            client.sync(timeout_s=30.0)
            limit = int(client.info()["model-max-bytes"])
            if len(blob.data) > limit:
                raise UsageError(f"{model.name}: blob of {len(blob.data):,} bytes is larger than the "
                                 f"{PORT} upload buffer of {limit:,}")
            client.upload("model", blob.data)
            client.load_model()
            x = np.random.default_rng(seed).integers(-128, 128, blob.input["bytes"], dtype=np.int8)
            client.upload("input", x.tobytes())
            cm.arm()
            run = client.eb_infer(1, warmup, layers=True, timeout_s=timeout_s)
        finally:
            client.close()
    counts = timed_interval(cm.reads, run["ticks"][0])
    out = describe(counts, int(inspect_model(str(model_path)).macs or 0) or None)
    out["model_name"] = model.name
    out["firmware_ticks"] = run["ticks"][0]
    out["layers"] = run["layers"]
    out["how"] = (f"one inference after {warmup} warm-up on the {PORT} image under unicorn; executed blocks "
                  "priced by edgebench.mcu.cycles (estimated, not measured)")
    return out


__all__ = ["estimate_model", "CycleModel", "BasicBlock", "decode_block", "instruction_cost", "price", "difference", "describe", "sentence",
           "BOARD", "CLOCK_HZ", "LABEL"]
