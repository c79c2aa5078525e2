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
SRCS   := $(HERE)/test_kernels.c $(CORE)/eb_engine.c $(CORE)/eb_engine_ops.c $(CORE)/eb_kernels.c \
          $(CORE)/eb_kernels_conv.c $(CORE)/eb_kernels_elem.c $(CORE)/eb_kernels_shape.c \
          $(CORE)/eb_kernels_tconv.c \
          $(CORE)/eb_crc32.c $(PORT_SRCS)
OBJS   := $(addprefix $(BUILD)/,$(notdir $(SRCS:.c=.o)))

vpath %.c $(HERE) $(CORE) $(MPS2_COMMON)

.PHONY: all clean
all: $(BUILD)/test_kernels.elf

$(BUILD)/%.o: %.c $(wildcard $(CORE)/*.h) | $(BUILD)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/test_kernels.elf: $(OBJS) $(PORT_LDSCRIPT)
	$(CC) $(PORT_LDFLAGS) $(OBJS) $(PORT_LDLIBS) -o $@

$(BUILD):
	mkdir -p $@

clean:
	rm -rf $(BUILD)
