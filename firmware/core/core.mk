# core/core.mk - the firmware core's sources, in one place for every build that
# compiles them (firmware/Makefile and its fuzz targets, firmware/tests/Makefile,
# firmware/tests/qemu.mk). Include it after setting:
#   EB_CORE_DIR      absolute path of firmware/core
#   EB_KERNELS_CC    the compiler and flags the engine is built with (for EB_KERNELS=auto)
# and optionally
#   EB_KERNELS       the optimised kernel set, core/kernels/<set>/ (as TFLite Micro's
#                    OPTIMIZED_KERNEL_DIR): auto (default) picks dsp when EB_KERNELS_CC
#                    targets a core with the Armv7E-M DSP extension (__ARM_FEATURE_DSP),
#                    else portable; dsp or portable force one.
# Sets:
#   EB_ENGINE_SRCS   the INT8 engine: loader and dispatch, the operator table (eb_ops.def,
#                    eb_ops.c), one source per operator family (ops/), the kernel set
#   EB_PROTO_SRCS    the protocol side: parser, commands, reply writer, timing, uploads
#   EB_MAIN_SRCS     the run loop (eb_main.c)
#   eb_engine_srcs   $(call eb_engine_srcs,SET): the engine with kernel set SET
EB_KERNELS ?= auto
ifeq ($(EB_KERNELS),auto)
EB_KERNELS := $(if $(findstring __ARM_FEATURE_DSP 1,$(shell $(EB_KERNELS_CC) -dM -E -x c /dev/null 2>/dev/null)),dsp,portable)
endif
ifeq ($(wildcard $(EB_CORE_DIR)/kernels/$(EB_KERNELS)/*.c),)
$(error unknown EB_KERNELS=$(EB_KERNELS): no sources in core/kernels/$(EB_KERNELS)/ (sets: $(notdir $(wildcard $(EB_CORE_DIR)/kernels/*))))
endif

EB_ENGINE_COMMON := $(addprefix $(EB_CORE_DIR)/,eb_engine.c eb_layer.c eb_ops.c eb_conv_util.c eb_matvec.c eb_rescale.c eb_crc32.c) \
                    $(sort $(wildcard $(EB_CORE_DIR)/ops/*.c))
eb_engine_srcs    = $(EB_ENGINE_COMMON) $(sort $(wildcard $(EB_CORE_DIR)/kernels/$(1)/*.c))
EB_ENGINE_SRCS   := $(call eb_engine_srcs,$(EB_KERNELS))
EB_PROTO_SRCS    := $(addprefix $(EB_CORE_DIR)/,eb_proto.c eb_parse.c eb_commands.c eb_cmd_mlperf.c \
                      eb_cmd_edgebench.c eb_session.c eb_reply.c eb_timing.c eb_upload.c)
EB_MAIN_SRCS     := $(EB_CORE_DIR)/eb_main.c
