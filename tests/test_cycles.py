"""The Cortex-M4 / STM32L4R5 cycle model (edgebench.mcu.cycles, label estimated).

Instruction-level costs against the published timings (Arm Cortex-M4 TRM table 3-1, TI SWCU192
table 3-25 and its pairing rules), two published loop timings run through unicorn, the flash
cache model, and one inference of the NUCLEO-L4R5ZI image (slow: needs arm-none-eabi-gcc).
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import DIGITS_INT8, require_module, require_tool

from edgebench.mcu import cycles
from edgebench.mcu.cycles import CycleModel, decode_block, difference, price, timed_interval

ROOT = Path(__file__).resolve().parents[1]
RAM = 0x2000_0000

# arm-none-eabi-as, .thumb, cortex-m4 (objdump in the comments)
LOOP_SUBS_BNE = bytes.fromhex("0138" "fdd1")                 # 0: subs r0,#1 ; bne 0
LOOP_SUBS_NOP_BNE = bytes.fromhex("0138" "00bf" "fcd1")      # 0: subs r0,#1 ; nop ; bne 0
STRAIGHT = bytes.fromhex(
    "2268"          # ldr r2,[r4]            2
    "2b68"          # ldr r3,[r5]            1 (pipelined after a load: TI SWCU192 "LDR R0,[R1]; LDR R1,[R2]" = 3)
    "3260"          # str r2,[r6]            1 (write buffer)
    "0434"          # adds r4,#4             1
    "2368"          # ldr r3,[r4]            2 + 1 (its address register was written just before)
    "22fb0377"      # smlad r7,r2,r3,r7      1
    "92fbf3f1"      # sdiv r1,r2,r3          2..12
    "70b5"          # push {r4,r5,r6,lr}     1 + 4
    "70bd")         # pop {r4,r5,r6,pc}      1 + 4 + P


def test_straight_line_costs_follow_the_trm_and_its_pairing_rules():
    b = decode_block(STRAIGHT, RAM)
    assert b.instructions == 9
    assert b.base == 2 + 1 + 1 + 1 + 3 + 1 + 0 + 5 + 5
    assert (b.refills, b.divides, b.literals, b.conditional_branch) == (1, 1, 0, False)
    assert b.lines == ()                                   # RAM: no flash fetch to model
    counts = {**{k: 0 for k in CycleModel().counts}, "base": b.base, "refills": 1, "divides": 1}
    assert price(counts, "low") == b.base + 1 + 2
    assert price(counts, "high") == b.base + 3 + 12


def _run_loop(code: bytes, n: int) -> CycleModel:
    require_module("unicorn")
    require_module("capstone")
    from unicorn import UC_ARCH_ARM, UC_MODE_MCLASS, UC_MODE_THUMB, Uc
    from unicorn.arm_const import UC_ARM_REG_R0

    uc = Uc(UC_ARCH_ARM, UC_MODE_THUMB | UC_MODE_MCLASS)
    uc.mem_map(RAM, 0x1000)
    uc.mem_write(RAM, code + b"\x00\xbf")
    uc.reg_write(UC_ARM_REG_R0, n)
    model = CycleModel()
    model.attach(uc)
    uc.emu_start(RAM | 1, RAM + len(code))
    model.execute(decode_block(b"\x00\xbf", RAM + len(code)), RAM + len(code))  # the exit is not taken
    return model


@pytest.mark.parametrize("code, per_iteration, source", [
    # 4 cycles per iteration of subs+bhi from RAM (P = 2), measured with a timer on an STM32F103, whose
    # Cortex-M3 has the M4's 1 + P branch rule: blaatschaap.be, "Wait a microsecond"
    (LOOP_SUBS_BNE, 4, "blaatschaap.be"),
    # 4 cycles per iteration of subs+nop+bne (P = 1): gcc-arm-embedded blueprint "delay-cycles"
    (LOOP_SUBS_NOP_BNE, 4, "launchpad gcc-arm-embedded delay-cycles"),
])
def test_published_loop_timings_lie_in_the_model_bounds(code, per_iteration, source):
    n = 1000
    model = _run_loop(code, n)
    c = model.counts
    assert c["taken"] == n - 1 and c["not_taken"] == 1          # the branch's outcome came from the block order
    assert c["instructions"] == n * (len(code) // 2) + 1
    b = model.bounds()
    published = n * per_iteration
    assert b["low"] <= published <= b["high"], source
    assert abs(b["estimate"] - published) <= n                  # within one cycle per taken branch (P is 1 to 3)


def test_a_model_armed_after_code_ran_still_counts_every_block():
    """Armed late (after the uploads, as estimate_model does), the blocks unicorn translated before
    the hook must still be counted: the translation cache is flushed when the hook is attached."""
    require_module("unicorn")
    require_module("capstone")
    from unicorn import UC_ARCH_ARM, UC_MODE_MCLASS, UC_MODE_THUMB, Uc
    from unicorn.arm_const import UC_ARM_REG_R0

    flash = 0x0800_0000
    uc = Uc(UC_ARCH_ARM, UC_MODE_THUMB | UC_MODE_MCLASS)
    uc.mem_map(flash, 0x1000)
    uc.mem_write(flash, LOOP_SUBS_BNE + bytes.fromhex("fee7"))     # the loop, then b .
    uc.reg_write(UC_ARM_REG_R0, 10)
    uc.emu_start(flash | 1, 0xFFFF_FFFF, count=15)     # translated and run without the hook
    model = CycleModel()
    model._asked.set()
    model.attach_when_asked(uc)
    uc.reg_write(UC_ARM_REG_R0, 10)
    uc.emu_start(flash | 1, 0xFFFF_FFFF, count=25)     # 10 x (subs, bne), then 5 x b .
    assert model.counts["taken"] == 9 and model.counts["not_taken"] == 1
    assert model.counts["instructions"] >= 25


def test_the_flash_cache_misses_once_per_line_and_evicts_beyond_its_32_lines():
    model = CycleModel()
    block = decode_block(bytes(64), 0x0800_0000)                # 32 movs r0,r0: two 32-byte lines
    assert block.lines == (0, 1)
    model.execute(block, 0x0800_0000)
    model.execute(block, 0x0800_0000)
    assert model.counts["misses"] == 2
    for k in range(cycles.ICACHE_LINES):                        # 32 other lines push the first two out
        model.execute(decode_block(bytes(32), 0x0800_1000 + 32 * k), 0x0800_1000 + 32 * k)
    model.execute(block, 0x0800_0000)
    assert model.counts["misses"] == 2 + cycles.ICACHE_LINES + 2
    ram = CycleModel()
    ram.execute(decode_block(bytes(64), RAM), RAM)
    assert ram.counts["misses"] == 0


def test_the_timed_interval_is_found_between_the_counter_reads():
    zero = {k: 0 for k in CycleModel().counts}
    reads = [dict(zero, base=10), dict(zero, base=110, instructions=90), dict(zero, base=130, instructions=100),
             dict(zero, base=1130, instructions=900, taken=5)]
    got = timed_interval(reads, price(reads[3]) - price(reads[1]))
    assert got == difference(reads[3], reads[1])
    from edgebench.errors import AgentError

    with pytest.raises(AgentError, match="cycles apart"):
        timed_interval(reads, 7)


def test_sentence_labels_the_figure_estimated():
    counts = {**{k: 0 for k in CycleModel().counts}, "base": 1_200_000, "instructions": 1_000_000}
    est = cycles.describe(counts, macs=500_000)
    assert est["label"] == "estimated" and est["ms"] == pytest.approx(10.0)
    assert est["cycles_per_mac"] == pytest.approx(2.4)
    assert cycles.sentence(est).startswith("estimated 10.00 ms on NUCLEO-L4R5ZI at 120 MHz (cycle model")


@pytest.mark.slow
def test_one_inference_of_the_l4r5_image_is_priced_and_timed_by_its_own_counter(tmp_path):
    require_tool("arm-none-eabi-gcc")
    require_module("unicorn")
    require_module("capstone")
    require_module("pyocd")
    from edgebench.mcu.firmware import build_firmware

    shared = os.environ.get("EDGEBENCH_FIRMWARE_BUILD")          # else a build of its own
    image = build_firmware("nucleo-l4r5zi", None if shared else tmp_path / "l4r5")
    est = cycles.estimate_model(DIGITS_INT8, image=image)
    assert est["firmware_ticks"] == est["cycles"]      # the firmware's DWT interval is the model's count
    assert est["label"] == "estimated" and est["board"] == "NUCLEO-L4R5ZI"
    assert est["cycles_low"] <= est["cycles"] <= est["cycles_high"]
    assert est["instructions"] <= est["cycles_low"]    # one instruction per cycle at best
    assert 1.0 < est["instructions"] / est["macs"] < 3.0
    assert len(est["layers"]) > 0
