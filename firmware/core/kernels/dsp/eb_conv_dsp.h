/*
 * eb_conv_dsp.h - shared by the CONV_2D files of the DSP kernel set: the
 * per-layer requantisation tables (eb_conv_requant_dsp.c), the field widening and
 * pixel walk of the two-pixel loops, the short-field path (eb_conv_small_dsp.c), the
 * channel loops (eb_conv_mm_dsp.c), the stems (eb_conv_stem_dsp.c) and the pointwise
 * kernel (eb_pointwise_dsp.c, eb_pointwise_rq_dsp.c). Not part of the engine's
 * interface.
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

/* Weight k (im2col order) of output channel oc of a filter of OC rows of K in the
 * blob's blocked order (firmware/BLOB.md); for the per-layer tables of
 * eb_conv_small_dsp.c and eb_conv_stem_dsp.c */
static inline int8_t eb_conv_filter_at(const int8_t *w, int32_t K, int32_t OC, int32_t oc, int32_t k)
{
    const int32_t G = K >> 2, R = K & 3, j = oc & 3;
    const int8_t *b = w + (size_t)(oc & ~3) * K;
    if (oc >= (OC & ~3)) {
        return w[(size_t)oc * K + k];
    }
    return k < 4 * G ? b[16 * (k >> 2) + 4 * j + (k & 3)] : b[16 * G + R * j + (k - 4 * G)];
}

/* The next output pixel in NHWC order (ox across OW, then oy across OH, then the
 * batch b; all lvalues): the pixel walk of the two-pixel loops (eb_conv_dsp.c,
 * eb_pointwise_dsp.c). A macro, not an inline function taking &b, &oy, &ox: with the
 * counters' addresses taken GCC laid out eb_conv_s8_opt and eb_conv_wide differently. */
#define EB_NEXT_PIXEL(b, oy, ox, OH, OW) \
    do {                                 \
        if (++(ox) == (OW)) {            \
            (ox) = 0;                    \
            if (++(oy) == (OH)) {        \
                (oy) = 0;                \
                (b)++;                   \
            }                            \
        }                                \
    } while (0)

/* Four int8 (the word v) widened into slot words d[0], d[1] */
static EB_ALWAYS_INLINE void eb_widen_word(uint32_t v, uint32_t *d)
{
    d[0] = (uint32_t)eb_sx02(v);
    d[1] = (uint32_t)eb_sx13(v);
}

/* The field by rows of a 3x3 three-channel window inside the input (eb_field_order's
 * r = 9: gr = 2, lft = 1, three rows), widened straight from its three input rows (s0:
 * the first, rs bytes apart) into slot words d[0], d[1], d += 4 a group (eb_widen_run's
 * layout): two words a row, the rows' ninth values as bytes 0-2 of the seventh group
 * (byte 3 meets a zero weight), no im2col copy. eb_conv_dsp.c's eb_widen_stem3 and
 * eb_conv_stem_dsp.c's stem3 path. */
static EB_ALWAYS_INLINE void eb_stem3_inside(const int8_t *s0, int32_t rs, uint32_t *d)
{
    const int8_t *const s1 = s0 + rs, *const s2 = s1 + rs;
    eb_widen_word(eb_ldw(s0), d);
    eb_widen_word(eb_ldw(s0 + 4), d + 4);
    eb_widen_word(eb_ldw(s1), d + 8);
    eb_widen_word(eb_ldw(s1 + 4), d + 12);
    eb_widen_word(eb_ldw(s2), d + 16);
    eb_widen_word(eb_ldw(s2 + 4), d + 20);
    eb_widen_word((uint32_t)(uint8_t)s0[8] | ((uint32_t)(uint8_t)s1[8] << 8) | ((uint32_t)(uint8_t)s2[8] << 16),
                  d + 24);
}

/* One group of four elements of the blocked filter against two widened fields (the
 * register plan of eb_mm2x2_blocked / EB_MM_REGISTERS: x the fields, w the filter, the
 * four sums a00/a01 (row 0, px0/px1) and a10/a11 (row 1), x0e..x1o the fields' words,
 * v/t a weight word and its halves): 15 instructions for 16 MACs. The inner loop of
 * eb_mm2x2_blocked and eb_mm_blocks (eb_conv_mm_dsp.c), and of eb_stem10_pairs. */
#define EB_MM_GROUP                                       \
    "ldmia  %[x]!, {%[x0e], %[x0o], %[x1e], %[x1o]}\n\t"  \
    "ldr    %[v], [%[w], #4]\n\t"                         \
    "sxtb16 %[t], %[v]\n\t"                               \
    "sxtb16 %[v], %[v], ror #8\n\t"                       \
    "smlad  %[a10], %[t], %[x0e], %[a10]\n\t"             \
    "smlad  %[a11], %[t], %[x1e], %[a11]\n\t"             \
    "smlad  %[a10], %[v], %[x0o], %[a10]\n\t"             \
    "smlad  %[a11], %[v], %[x1o], %[a11]\n\t"             \
    "ldr    %[v], [%[w]], #16\n\t"                        \
    "sxtb16 %[t], %[v]\n\t"                               \
    "sxtb16 %[v], %[v], ror #8\n\t"                       \
    "smlad  %[a00], %[t], %[x0e], %[a00]\n\t"             \
    "smlad  %[a01], %[t], %[x1e], %[a01]\n\t"             \
    "smlad  %[a00], %[v], %[x0o], %[a00]\n\t"             \
    "smlad  %[a01], %[v], %[x1o], %[a01]\n\t"

/* Fields of at most 16 elements (K <= 16) with one pixel's field in registers:
 * 1 when done, 0 when another path must run. */
int eb_conv_small(const eb_conv_params *p, const int8_t *in, int8_t *out);

/* The channel loops (eb_conv_mm_dsp.c) that eb_conv_dsp.c and the stem paths
 * (eb_conv_stem_dsp.c) share, on two fields widened as eb_conv_dsp.c describes (xq:
 * G groups of four words):
 * eb_mm_blocks: acc[2u], acc[2u+1] = bias[u] + row u . px0, px1 for every channel of
 * nblocks blocks of the blob's blocked filter (15 instructions per 16 MACs);
 * eb_widen_filter / eb_mm_pairs_wide: the same on the filter widened into RAM
 * (channels c0 .. c0+n, 2*G*4 words a pair; 11 per 16 MACs);
 * eb_conv_requant_tbl2: both pixels' outputs from the doubled-sum table. */
void eb_mm_blocks(const uint32_t *xq, int32_t G, const int8_t *w, const uint8_t *bias, int32_t nblocks,
                  int32_t *acc);
void eb_widen_filter(const int8_t *w, int32_t G, int32_t c0, int32_t n, uint32_t *wt);
void eb_mm_pairs_wide(const uint32_t *xq, int32_t G, const uint32_t *wt, const uint8_t *bias, int32_t npairs,
                      int32_t *acc);
void eb_conv_requant_tbl2(const int32_t *acc, int32_t OC, const int32_t *tbl, int8_t *o0, int8_t *o1);

/* One-channel-row stems (KW*C % 4 == 0, dilation 1) whose windows reach the padding
 * along W: the input copied once per band of output rows into a plane padded with the
 * zero point, every field widened straight from it (eb_conv_stem_dsp.c). 1 when done,
 * 0 when another path must run. */
int eb_conv_stem_rows(const eb_conv_params *p, const int8_t *in, int8_t *out);

/* 3x3 three-channel stems (dilation 1 along W, an even channel count): a per-layer
 * table of doubled widened weights and requantisation constants, two pixels against
 * one channel pair per pass with the requantisation in the same asm loop
 * (eb_conv_stem_dsp.c). 1 when done, 0 when another path must run. */
int eb_conv_stem3(const eb_conv_params *p, const int8_t *in, int8_t *out);

/* 1x1 CONV_2D on the biased filter of blob format 3 (eb_conv_biased; where
 * eb_conv_small does not run; eb_pointwise_dsp.c): 1 when done, 0 when the
 * portable kernel must run. */
int eb_pointwise_s8(const eb_conv_params *p, const int8_t *in, int8_t *out);
/* its outputs (eb_pointwise_rq_dsp.c): the live channels' requantisation from the plan's
 * entries {m, hc, e, u} on doubled sums and {m, 2^(e-1), e | off << 8, u} exactly on plain
 * sums, the test for the exact form, the copy of the dead channels' template */
void eb_pw_requant(const uint32_t *rq, const uint32_t *end, const int32_t *acc, int8_t *o0, int8_t *o1);
void eb_pw_requant_exact(const uint32_t *rq, const uint32_t *end, const int32_t *acc, int8_t *o0, int8_t *o1);
int eb_pw_exact_ok(int32_t bias, int32_t m, int32_t sft, int32_t C);
void eb_pw_fill(const uint32_t *t, int32_t n, int8_t *o);

#endif /* EB_CONV_DSP_H */
