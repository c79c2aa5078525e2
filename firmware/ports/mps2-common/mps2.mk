# mps2.mk - build settings shared by the MPS2 ports; included by
# firmware/ports/mps2-an386/port.mk and firmware/ports/mps2-an500/port.mk after
# they set MPS2_MACHINE, MPS2_CPU_FLAGS and MPS2_DEFS.
#
# Exports to the firmware Makefile:
#   CC, OBJCOPY, SIZE        the gcc-arm-none-eabi tools (ports/cortex-m/cortexm.mk)
#   PORT_CFLAGS, PORT_LDFLAGS, PORT_LDLIBS (the last from cortexm.mk)
#   PORT_SRCS                the port's C sources
#   PORT_INCLUDES            -I flags (the core's directory is added by the caller)
#   PORT_LDSCRIPT            the machine's linker script
#   PORT_ELF_SUFFIX          .elf ; the firmware image is <name>.elf, plus <name>.bin
#   PORT_QEMU_MACHINE        the qemu-system-arm -M value
MPS2_COMMON   := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
MPS2_PORT_DIR := $(abspath $(MPS2_COMMON)/../$(MPS2_MACHINE))
include $(MPS2_COMMON)/../cortex-m/cortexm.mk

PORT_QEMU_MACHINE := $(MPS2_MACHINE)
PORT_ELF_SUFFIX   := .elf
PORT_LDSCRIPT     := $(MPS2_PORT_DIR)/memory.ld
PORT_INCLUDES     := -I$(MPS2_COMMON) -I$(CORTEXM_DIR)
PORT_SRCS         := $(MPS2_COMMON)/startup.c $(MPS2_COMMON)/eb_port_mps2.c $(CORTEXM_SRCS)

# Buffer sizes of the core (core/eb_config.h): 1 MiB model blob, 1 MiB arena,
# 64 KiB input = 2.06 MiB of the 4 MiB data RAM (+ 64 KiB stack). All in .bss
# in data RAM; see mps2_sections.ld for moving a buffer to PSRAM.
MPS2_SIZES   ?= -DEB_MODEL_MAX_BYTES=1048576u -DEB_ARENA_BYTES=1048576u \
                -DEB_INPUT_MAX_BYTES=65536u

PORT_CFLAGS  := $(MPS2_CPU_FLAGS) $(MPS2_DEFS) $(MPS2_SIZES) $(CORTEXM_CFLAGS)
PORT_LDFLAGS := $(MPS2_CPU_FLAGS) $(CORTEXM_LDFLAGS) -L$(MPS2_COMMON) -T$(PORT_LDSCRIPT)

# Stand-alone helper: make the flat binary (for a real board's SD card / a
# debugger load) from an ELF. Usage: $(call mps2_bin,in.elf,out.bin)
mps2_bin = $(OBJCOPY) -O binary $(1) $(2)
