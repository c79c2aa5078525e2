/*
 * eb_dsp.c - the DSP kernel set (kernels/dsp/): CONV_2D (eb_conv_dsp.c),
 * DEPTHWISE_CONV_2D (eb_depthwise_conv_dsp.c), FULLY_CONNECTED (eb_fc_dsp.c) and
 * AVERAGE_POOL_2D (eb_pool_dsp.c) for cores with the Armv7E-M DSP
 * extension (Cortex-M4, M7, M33 ...): dual 16-bit multiply-accumulate (SMLAD) on
 * operands widened from int8 by SXTB16. The build compiles this directory instead
 * of kernels/portable/ when the compiler targets such a core (core.mk,
 * EB_KERNELS=auto; EB_KERNELS=portable leaves it out). The portable kernels of
 * ops/eb_op_conv.c stay the reference (posix port, fuzzing, cores without DSP)
 * and these give the same integers: every sum is exact in int32 (modulo 2^32, as the
 * portable eb_acc), and the requantisation of eb_dsp.h is an exact rewrite of
 * eb_requant (proof in its comment; tests/test_firmware_dsp.py
 * checks it, and the kernels, against LiteRT's reference).
 *
 * RAM: one static buffer of EB_DSP_SCRATCH_BYTES (default 4 KiB, a port may
 * override it with -D) in .bss, shared by all layers (one layer runs at a time).
 * A layer whose working set does not fit runs the portable kernel, so the
 * buffer bounds RAM use and never refuses a model. Working sets:
 *   CONV_2D: 4*K + 8*OC + max(K, OC) + 4 bytes, K = KH*KW*IC (two
 *            receptive fields widened to int16, the int32 sums of the two
 *            pixels, one gathered int8 field).
 *   DEPTHWISE_CONV_2D (depth multiplier 1, a 3-tap axis with stride 1 and
 *            dilation 1, or 3x3 with stride 2 along W), for a band of B output
 *            lines: 4*Wp*rows + 4*Lp2*B bytes (two channels' planes, B lines of
 *            int32 sums), Lp2 = the output length along that axis rounded up to
 *            even, Wp = that length + 4 rounded down to even (stride 1) or
 *            2*Lp2 + 2 (stride 2), rows = the input lines (padding included) of
 *            the band; B as large as fits, at least 1.
 *   FULLY_CONNECTED (eb_fc_dsp.c): 2 * depth bytes (the input vector widened),
 *            depth rounded down to a multiple of four.
 *   AVERAGE_POOL_2D (eb_pool_dsp.c): none (sums in registers).
 */
#include "eb_dsp.h"
#include "eb_kernels_opt.h"

uint32_t eb_dsp_buf[EB_DSP_SCRATCH_BYTES / 4u];

size_t eb_kernels_ram_bytes(void)
{
    return sizeof eb_dsp_buf;
}
