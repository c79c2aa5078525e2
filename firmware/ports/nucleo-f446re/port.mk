# nucleo-f446re: ST NUCLEO-F446RE, STM32F446RE (Cortex-M4F, 180 MHz, 512 KiB
# flash, 128 KiB SRAM). The stm32f4 port's silicon configuration: PLL from the
# HSI to 180 MHz (M 8, N 180, P 2: 2 MHz in, 360 MHz VCO) with over-drive,
# 5 wait states (RM0390 table 5, 2.7-3.6 V), APB1 45 MHz, APB2 90 MHz; the rest
# as every Nucleo-64 F4 board (stm32f4/nucleo-f4.mk). See docs/firmware-ports.md.
NUCLEO_F4_NAME   := nucleo-f446re
NUCLEO_F4_CLOCKS := -DSTM32F4_PLL_N=180 -DSTM32F4_PLL_Q=8 -DSTM32F4_FLASH_WS=5 -DSTM32F4_OVERDRIVE=1 \
    -DSTM32F4_PPRE1=4 -DSTM32F4_PPRE2=2
include $(PORT_DIR)/../stm32f4/nucleo-f4.mk
