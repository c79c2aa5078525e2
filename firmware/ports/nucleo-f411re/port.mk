# nucleo-f411re: ST NUCLEO-F411RE, STM32F411RE (Cortex-M4F, 100 MHz, 512 KiB
# flash, 128 KiB SRAM). The stm32f4 port's silicon configuration: PLL from the
# HSI to 100 MHz (M 8, N 100, P 2: 2 MHz in, 200 MHz VCO), 3 wait states
# (RM0383 table 6, 2.7-3.6 V), APB1 50 MHz, APB2 100 MHz; the rest as every
# Nucleo-64 F4 board (stm32f4/nucleo-f4.mk). See docs/firmware-ports.md.
NUCLEO_F4_NAME   := nucleo-f411re
NUCLEO_F4_CLOCKS := -DSTM32F4_PLL_N=100 -DSTM32F4_PLL_Q=4 -DSTM32F4_FLASH_WS=3 -DSTM32F4_OVERDRIVE=0 \
    -DSTM32F4_PPRE1=2 -DSTM32F4_PPRE2=1
include $(PORT_DIR)/../stm32f4/nucleo-f4.mk
