# netduinoplus2: the stm32f4 port's configuration for QEMU's netduinoplus2
# machine (qemu-system-arm -M netduinoplus2: an STM32F405, 1 MiB flash, 128 KiB
# SRAM, 64 KiB CCM RAM). It differs from the Nucleo configurations exactly where
# QEMU 7.2 differs from silicon (docs/firmware-ports.md lists the lines):
#   - no PLL: QEMU does not model the RCC (its ready bits read 0); the core runs
#     on the reset clock, which is all QEMU has;
#   - TIM2 is the counter (QEMU has no DWT cycle counter): its CNT follows QEMU's
#     virtual clock, prescaled to 25 MHz (40 ns per tick, as on qemu-m4);
#   - input is awaited in WFI, which lets QEMU's main loop run (the Nucleo
#     configurations poll: the DWT cycle counter stops while the core sleeps);
#   - no temperature sensor (QEMU's ADC returns synthetic values and the
#     factory calibration ROM is not mapped), no marker pin.
# QEMU 7.2 does not map the F405's 64 KiB CCM RAM (0x10000000: a bus fault), so
# only the 128 KiB SRAM is used, as on the Nucleo-64 boards.
# Timings are emulated (eb-info timing: emulated).
STM32F4_CONFIG := -DSTM32F4_BOARD_NAME='"netduinoplus2"' \
    -DSTM32F4_PLL_N=0 -DSTM32F4_PPRE1=1 -DSTM32F4_PPRE2=1 \
    -DSTM32F4_COUNTER_TIM2=1 -DSTM32F4_TIM2_PSC=39 -DSTM32F4_TIM2_HZ=25000000u \
    -DSTM32F4_RX_WFI=1 -DSTM32F4_TEMP=0 -DSTM32F4_MARKER_PA8=0 -DSTM32F4_TIMING_REAL=0
# 128 KiB SRAM: 48 KiB model upload buffer, 52 KiB arena, 8 KiB input (+ 8 KiB stack).
# ResNet-8 (84 KiB blob) runs from flash: edgebench flash --board qemu-f405 --model M.
STM32_SIZES ?= -DEB_MODEL_MAX_BYTES=49152u -DEB_ARENA_BYTES=53248u -DEB_INPUT_MAX_BYTES=8192u
include $(PORT_DIR)/../stm32f4/stm32f4.mk
