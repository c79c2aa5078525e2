# posix: the firmware core built for the host; the serial link is a
# pseudo-terminal (see eb_port_posix.c). Included by firmware/Makefile.
ifeq ($(origin CC),default)
CC := gcc
endif
SIZE ?= size

# Host RAM is plentiful: room for models far larger than a microcontroller's.
PORT_CFLAGS  := -O2 -g -DEB_PORT_OWNS_MAIN \
                -DEB_MODEL_MAX_BYTES=1048576u -DEB_ARENA_BYTES=1048576u \
                -DEB_INPUT_MAX_BYTES=65536u
PORT_INCLUDES := -I$(PORT_DIR)
PORT_LDFLAGS :=
PORT_LDLIBS  :=
PORT_SRCS    := $(PORT_DIR)/eb_port_posix.c $(PORT_DIR)/main_posix.c
PORT_ELF_SUFFIX :=
