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

# The port's sources and -I flags come from its port.mk (PORT_SRCS, PORT_INCLUDES),
# as in the firmware build: the shared Cortex-M code (ports/cortex-m/) included.
CFLAGS := -std=c99 -Wall -Wextra -Werror $(PORT_CFLAGS) -I$(CORE) $(PORT_INCLUDES) -DEB_TEST_PORT
EB_CORE_DIR   := $(CORE)
EB_KERNELS_CC := $(CC) $(PORT_CFLAGS)
include $(CORE)/core.mk
SRCS   := $(abspath $(HERE)/test_kernels.c $(EB_ENGINE_SRCS) $(PORT_SRCS))
# Objects mirror the sources' absolute paths (as firmware/Makefile's obj/ tree):
# no search path to keep in step with the port's directories, no two sources
# of one name in different directories sharing an object.
OBJDIR := $(BUILD)/obj
OBJS   := $(patsubst /%,$(OBJDIR)/%.o,$(SRCS))

.PHONY: all clean
all: $(BUILD)/test_kernels.elf

$(OBJDIR)/%.c.o: /%.c $(HERE)/qemu.mk
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/test_kernels.elf: $(OBJS) $(PORT_LDSCRIPT)
	$(CC) $(PORT_LDFLAGS) $(OBJS) $(PORT_LDLIBS) -o $@

-include $(OBJS:.o=.d)

clean:
	rm -rf $(BUILD)
