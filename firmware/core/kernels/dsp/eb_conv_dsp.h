/*
 * eb_conv_dsp.h - shared by the CONV_2D files of the DSP kernel set: the
 * per-layer requantisation tables (eb_conv_dsp.c) and the short-field path
 * (eb_conv_small_dsp.c). Not part of the engine's interface.
 */
#ifndef EB_CONV_DSP_H
#define EB_CONV_DSP_H

#include "eb_dsp.h"
#include "eb_kernels_opt.h"

/* The fix-up list of the layer that runs (one at a time), set by eb_requant_table2:
 * n entries, none when the table covers every channel (eb_conv_requant_dsp.c). */
typedef struct {
    const uint32_t *list;
    int32_t n;
    const eb_conv_params *p;
} eb_conv_fix_list;
extern eb_conv_fix_list eb_conv_fix;

/* {m, chi, sh} per channel for eb_rq_mul (3 * OC words); 1 when every channel is
 * in the common case (no clamp inside int8, m > 0, 2 <= e <= 21), else 0. */
int eb_requant_table(int32_t OC, const uint8_t *mult, const uint8_t *shift, int32_t off, int32_t lo,
                     int32_t hi, int32_t *tbl);

/* {m, hc, e} per channel for eb_rq_mul2 on doubled sums (3 * OC words), for
 * fields of K elements; 1 when every channel qualifies (with fix == NULL). */
int eb_requant_table2(int32_t OC, const uint8_t *chan, int32_t K, int32_t off, int32_t lo, int32_t hi,
                      int32_t *tbl, const eb_conv_params *p, uint32_t *fix, int32_t maxfix);

/* Fields of at most 16 elements (K <= 16) with one pixel's field in registers:
 * 1 when done, 0 when another path must run. */
int eb_conv_small(const eb_conv_params *p, const int8_t *in, int8_t *out);

/* The requantisation of the two-pixel kernels (eb_conv_requant_dsp.c): acc[2u], acc[2u+1]
 * (pixels 0, 1) of every output channel u into o0[u], o1[u]. eb_conv_requant: from
 * the per-channel arrays (any case); _tbl: eb_requant_table's table; _tbl2:
 * eb_requant_table2's (|acc| < 2^30), then _fix for the channels of its fix-up list. */
void eb_conv_requant(const int32_t *acc, int32_t OC, const uint8_t *mult, const uint8_t *shift, int32_t off,
                     int32_t lo, int32_t hi, int8_t *o0, int8_t *o1);
void eb_conv_requant_tbl(const int32_t *acc, int32_t OC, const int32_t *tbl, int8_t *o0, int8_t *o1);
void eb_conv_requant_tbl2(const int32_t *acc, int32_t OC, const int32_t *tbl, int8_t *o0, int8_t *o1);
void eb_conv_requant_fix(const int32_t *acc, int8_t *o0, int8_t *o1);

/* 1x1 CONV_2D on the biased filter of blob format 3 (eb_conv_biased, C > 16 or
 * wherever eb_conv_small does not run; eb_pointwise_dsp.c): 1 when done, 0 when
 * the portable kernel must run. */
int eb_pointwise_s8(const eb_conv_params *p, const int8_t *in, int8_t *out);

#endif /* EB_CONV_DSP_H */
