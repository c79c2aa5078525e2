# stm32.mk - build settings shared by the STM32 ports (Cortex-M4F); included
# by a family's .mk after the board's port.mk set:
#   STM32_BOARD_DIR   the board's port directory (its memory.ld)
#   STM32_DEFS        -D flags: the board configuration and STM32_N_IRQ
#   STM32_SIZES       -D overrides of core/eb_config.h (buffer sizes)
#   STM32_SRCS        the family's C sources
#   STM32_INCLUDES    the family's -I flags
# Exports to firmware/Makefile what docs/firmware-ports.md lists (CC, PORT_*; the
# tools and the flags every Cortex-M port shares come from ports/cortex-m/cortexm.mk).
STM32_COMMON := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
include $(STM32_COMMON)/../cortex-m/cortexm.mk

STM32_CPU_FLAGS := -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16

PORT_ELF_SUFFIX := .elf
PORT_LDSCRIPT   := $(STM32_BOARD_DIR)/memory.ld
PORT_INCLUDES   := -I$(STM32_COMMON) -I$(CORTEXM_DIR) $(STM32_INCLUDES)
PORT_SRCS       := $(STM32_COMMON)/startup_stm32.c $(CORTEXM_SRCS) $(STM32_SRCS)
PORT_CFLAGS     := $(STM32_CPU_FLAGS) $(STM32_DEFS) $(STM32_SIZES) $(CORTEXM_CFLAGS)
PORT_LDFLAGS    := $(STM32_CPU_FLAGS) $(CORTEXM_LDFLAGS) -L$(STM32_COMMON) -T$(PORT_LDSCRIPT)
