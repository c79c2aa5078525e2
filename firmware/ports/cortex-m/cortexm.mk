# cortexm.mk - what every bare-metal Cortex-M port family builds with; included by
# mps2-common/mps2.mk and stm32-common/stm32.mk. Sets:
#   CC, OBJCOPY, SIZE    the gcc-arm-none-eabi tools (CROSS= another prefix)
#   CORTEXM_DIR          this directory (its headers: -I$(CORTEXM_DIR))
#   CORTEXM_SRCS         the code every Cortex-M port shares (the newlib layer, the
#                        reset path and the fault line)
#   CORTEXM_CFLAGS       -O2 and section GC as the project asks (after the family's
#                        -mcpu/-D flags in PORT_CFLAGS)
#   CORTEXM_LDFLAGS      newlib-nano, no start files (the port's startup code), no
#                        heap (syscalls.c _sbrk fails), section GC (after -mcpu)
#   PORT_LDLIBS          the libraries, for firmware/Makefile
CORTEXM_DIR := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))

CROSS   ?= arm-none-eabi-
CC      := $(CROSS)gcc
OBJCOPY := $(CROSS)objcopy
SIZE    := $(CROSS)size

CORTEXM_SRCS    := $(CORTEXM_DIR)/syscalls.c $(CORTEXM_DIR)/reset.c $(CORTEXM_DIR)/fault.c
CORTEXM_CFLAGS  := -O2 -g -ffunction-sections -fdata-sections -fno-common
CORTEXM_LDFLAGS := --specs=nano.specs -nostartfiles -Wl,--gc-sections -Wl,--no-warn-rwx-segments
PORT_LDLIBS     := -Wl,--start-group -lc_nano -lm -lgcc -Wl,--end-group
