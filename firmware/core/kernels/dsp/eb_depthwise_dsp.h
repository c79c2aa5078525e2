/*
 * eb_depthwise_dsp.h - between the DSP depthwise kernel (eb_depthwise_conv_dsp.c) and
 * its requantisation (eb_depthwise_rq_dsp.c); private to kernels/dsp/.
 */
#ifndef EB_DEPTHWISE_DSP_H
#define EB_DEPTHWISE_DSP_H

#include "eb_dsp.h"

/* Line-to-line steps of the eb_dw_rq_lines* loops, set once per band (one layer runs
 * at a time): bytes of a line's pairs of sums, bytes from the end of a line's outputs
 * to the next line's first, whether a line has an odd last output (its sum followed by
 * one unused: lines of Lp2 sums). */
typedef struct {
    int32_t pair_bytes, dstep, odd;
} eb_dw_rqctl_t;
extern eb_dw_rqctl_t eb_dw_rqctl;

/* out[j * ls] for the lines of sums from a up to last (eb_dw_rqctl's steps), shift e,
 * multiplier m, hc = 2^(e-1) + out_offset * 2^e: eb_dw_rq_lines from sums a with
 * t = 2 * a + b2, eb_dw_rq_lines_t from doubled sums with the bias (b2 unused) */
void eb_dw_rq_lines(const int32_t *a, const int32_t *last, int8_t *d, int32_t ls, int32_t m, int32_t hc, int32_t e,
                    int32_t b2);
void eb_dw_rq_lines_t(const int32_t *a, const int32_t *last, int8_t *d, int32_t ls, int32_t m, int32_t hc,
                      int32_t e, int32_t b2);

/* eb_dw_rq_lines_t for one shift e in [EB_DW_RQE_MIN, EB_DW_RQE_MAX]: eb_dw_rq_e[e - MIN] */
#define EB_DW_RQE_MIN 3
#define EB_DW_RQE_MAX 9
typedef void (*eb_dw_rqe_fn)(const int32_t *a, const int32_t *last, int8_t *d, int32_t ls, int32_t m, int32_t hc);
extern const eb_dw_rqe_fn eb_dw_rq_e[EB_DW_RQE_MAX - EB_DW_RQE_MIN + 1];

/* the C requantisation of n_out lines (channels outside the fast case): line o's
 * sums at acc + o * Lp2, its outputs from dst + o * ocs */
void eb_dw_requant_lines(const int32_t *acc, int32_t n_out, int32_t Lo, int32_t bias, const eb_rq *q, int32_t off,
                         int32_t lo, int32_t hi, int8_t *dst, int32_t ls, int32_t ocs);

/* One cross tap of two adjacent outputs on widened lines, the row's four int16 from one
 * LDRD at x + OFS (an immediate, "#..."): a0 = SMLAD(X, P) + Y.lo * Q.hi from A0IN,
 * a1 = X.hi * P.lo + SMLAD(Y, Q) from A1IN (P = (w0, w1), Q = (w1, w2) of the tap's row).
 * The rows of eb_dw_lines3_w32 (eb_depthwise_conv_dsp.c) and of the stride-1 tiles
 * (eb_depthwise_small_dsp.c). */
#define EB_DW_ROW_LDRD(OFS, P, Q, A0IN, A1IN)                 \
    "ldrd   %[X], %[Y], [%[x], " OFS "]\n\t"                  \
    "smlad  %[a0], %[X], %[" P "], %[" A0IN "]\n\t"          \
    "smlatb %[a1], %[X], %[" P "], %[" A1IN "]\n\t"          \
    "smlabt %[a0], %[Y], %[" Q "], %[a0]\n\t"                \
    "smlad  %[a1], %[Y], %[" Q "], %[a1]\n\t"

/* DEPTHWISE_CONV_2D in tiles of fixed geometry (eb_depthwise_small_dsp.c): 1 when it
 * ran the layer, 0 when the layer is not one it takes (3x3, dilation 1, no clamp inside
 * int8; stride 1 on planes of 3..6 outputs across and at most 8 lines or tiles of 12
 * across and a last one of 3..6, or stride 2) */
int eb_dw_small(const eb_conv_params *p, const int8_t *in, int8_t *out);

#endif /* EB_DEPTHWISE_DSP_H */
