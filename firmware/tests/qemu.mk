# firmware/tests/qemu.mk - test_kernels built for an MPS2 port, to run the
# kernel unit tests on the emulated Cortex-M (DSP inner loops, soft double):
#   make -C firmware/tests -f qemu.mk PORT=mps2-an386 BUILD=<dir>
#   qemu-system-arm -M mps2-an386 -nographic -kernel <dir>/test_kernels.elf
# prints the same `N passed, M failed` line as the host build on UART0.
PORT  ?= mps2-an386
BUILD ?= build/$(PORT)
HERE  := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
CORE  := $(abspath $(HERE)/../core)

include $(HERE)/../ports/$(PORT)/port.mk

CFLAGS := -std=c99 -Wall -Wextra -Werror $(PORT_CFLAGS) -I$(CORE) -DEB_TEST_PORT
EB_CORE_DIR   := $(CORE)
EB_KERNELS_CC := $(CC) $(PORT_CFLAGS)
include $(CORE)/core.mk
SRCS   := $(HERE)/test_kernels.c $(EB_ENGINE_SRCS) $(PORT_SRCS)
OBJS   := $(addprefix $(BUILD)/,$(notdir $(SRCS:.c=.o)))

vpath %.c $(HERE) $(sort $(dir $(EB_ENGINE_SRCS))) $(MPS2_COMMON)

.PHONY: all clean
all: $(BUILD)/test_kernels.elf

$(BUILD)/%.o: %.c $(wildcard $(CORE)/*.h $(CORE)/*.def $(CORE)/*/*/*.h) | $(BUILD)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/test_kernels.elf: $(OBJS) $(PORT_LDSCRIPT)
	$(CC) $(PORT_LDFLAGS) $(OBJS) $(PORT_LDLIBS) -o $@

$(BUILD):
	mkdir -p $@

clean:
	rm -rf $(BUILD)
