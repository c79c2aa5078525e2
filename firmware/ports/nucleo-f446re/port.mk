# nucleo-f446re: ST NUCLEO-F446RE, STM32F446RE (Cortex-M4F, 180 MHz, 512 KiB
# flash, 128 KiB SRAM). The stm32f4 port's silicon configuration: PLL from the
# HSI to 180 MHz (M 8, N 180, P 2: 2 MHz in, 360 MHz VCO) with over-drive,
# 5 wait states (RM0390 table 5, 2.7-3.6 V), APB1 45 MHz, APB2 90 MHz; the DWT
# cycle counter; the temperature sensor; the PA8 marker. See docs/firmware-ports.md.
STM32F4_CONFIG := -DSTM32F4_BOARD_NAME='"nucleo-f446re"' \
    -DSTM32F4_PLL_M=8 -DSTM32F4_PLL_N=180 -DSTM32F4_PLL_P=2 -DSTM32F4_PLL_Q=8 \
    -DSTM32F4_FLASH_WS=5 -DSTM32F4_OVERDRIVE=1 -DSTM32F4_PPRE1=4 -DSTM32F4_PPRE2=2 \
    -DSTM32F4_COUNTER_TIM2=0 -DSTM32F4_RX_WFI=0 -DSTM32F4_TEMP=1 -DSTM32F4_MARKER_PA8=1 \
    -DSTM32F4_TIMING_REAL=1
# 128 KiB SRAM: 40 KiB model upload buffer, 56 KiB arena, 12 KiB input (+ 8 KiB stack).
# A larger model goes into flash: edgebench flash --board nucleo-f446re --model M.tflite.
STM32_SIZES ?= -DEB_MODEL_MAX_BYTES=40960u -DEB_ARENA_BYTES=57344u -DEB_INPUT_MAX_BYTES=12288u
include $(PORT_DIR)/../stm32f4/stm32f4.mk
