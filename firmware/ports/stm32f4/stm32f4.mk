# stm32f4.mk - the STM32F4 port, shared by its board configurations
# (ports/nucleo-f446re, ports/nucleo-f411re, ports/netduinoplus2): each board's
# port.mk sets STM32F4_CONFIG (the -D flags listed in eb_port_stm32f4.c) and
# STM32_SIZES, then includes this file.
STM32F4_DIR     := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
STM32_BOARD_DIR := $(PORT_DIR)
STM32_DEFS      := $(STM32F4_CONFIG) -DSTM32_N_IRQ=97
STM32_SRCS      := $(STM32F4_DIR)/eb_port_stm32f4.c
STM32_INCLUDES  := -I$(STM32F4_DIR)
include $(STM32F4_DIR)/../stm32-common/stm32.mk
