# nucleo-l4r5zi: ST NUCLEO-L4R5ZI, STM32L4R5ZI (Cortex-M4F, 120 MHz, 2 MiB flash,
# 640 KiB SRAM), the MLPerf Tiny reference board. See eb_port_l4r5.c and
# docs/firmware-ports.md. Under no QEMU model: edgebench runs this very image on
# the unicorn instruction-set emulator (edgebench/mcu/unicorn_board.py).
STM32_BOARD_DIR := $(PORT_DIR)
STM32_DEFS      := -DSTM32_N_IRQ=95
STM32_SRCS      := $(PORT_DIR)/eb_port_l4r5.c
STM32_INCLUDES  := -I$(PORT_DIR)
# 640 KiB SRAM: 320 KiB model upload buffer, 240 KiB arena, 32 KiB input (an
# MLPerf Tiny vww01 input is 27,648 bytes) + 16 KiB stack. A model larger than
# the buffer goes into flash: edgebench flash --board nucleo-l4r5zi --model M.
STM32_SIZES ?= -DEB_MODEL_MAX_BYTES=327680u -DEB_ARENA_BYTES=245760u -DEB_INPUT_MAX_BYTES=32768u
PORT_LDFLAGS_EXTRA := -Wl,--defsym=__stack_size=0x4000
include $(PORT_DIR)/../stm32-common/stm32.mk
PORT_LDFLAGS += $(PORT_LDFLAGS_EXTRA)
