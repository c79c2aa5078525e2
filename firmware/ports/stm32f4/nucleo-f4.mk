# nucleo-f4.mk - what the Nucleo-64 STM32F4 boards (ports/nucleo-f411re,
# ports/nucleo-f446re) share: PLL from the ST-LINK's 8 MHz MCO in HSE bypass
# (M 4: 2 MHz in, P 2; from the HSI, M 8, when the HSE does not start), the DWT
# cycle counter, input polled (the DWT counter stops in WFI), the temperature
# sensor, the PA8 marker, real timing, and the 128 KiB SRAM split. Each board's
# port.mk sets its clock tree, then includes this file:
#   NUCLEO_F4_NAME    the board name eb-info reports
#   NUCLEO_F4_CLOCKS  -DSTM32F4_PLL_N, _PLL_Q, _FLASH_WS, _OVERDRIVE, _PPRE1, _PPRE2
NUCLEO_F4_DIR := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
STM32F4_CONFIG := -DSTM32F4_BOARD_NAME='"$(NUCLEO_F4_NAME)"' \
    -DSTM32F4_PLL_M=8 -DSTM32F4_PLL_P=2 -DSTM32F4_HSE_BYPASS=1 $(NUCLEO_F4_CLOCKS) \
    -DSTM32F4_COUNTER_TIM2=0 -DSTM32F4_RX_WFI=0 -DSTM32F4_TEMP=1 -DSTM32F4_MARKER_PA8=1 \
    -DSTM32F4_TIMING_REAL=1
# 128 KiB SRAM: 40 KiB model upload buffer, 56 KiB arena, 12 KiB input (+ 8 KiB stack).
# A larger model goes into flash: edgebench flash --board nucleo-f4xxre --model M.tflite.
STM32_SIZES ?= -DEB_MODEL_MAX_BYTES=40960u -DEB_ARENA_BYTES=57344u -DEB_INPUT_MAX_BYTES=12288u
include $(NUCLEO_F4_DIR)/stm32f4.mk
