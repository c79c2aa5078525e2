/*
 * eb_dot.h - the int8 multiply-accumulate helpers of the convolution-shaped
 * kernels (ops/eb_op_conv.c, ops/eb_op_fully_connected.c and the DSP kernels of
 * kernels/dsp/): modulo-2^32 accumulation, four-byte loads, the SXTB16 lane
 * split, dot products over the blob's blocked filter layout (firmware/BLOB.md),
 * and the matrix-vector products with their requantisation (the biased one out of
 * line, in eb_matvec.c). Static inline: each includer gets the code inlined where it
 * is used.
 */
#ifndef EB_DOT_H
#define EB_DOT_H

#include "eb_kernels.h"

#if defined(__ARM_FEATURE_DSP) && (__ARM_FEATURE_DSP == 1)
#include <arm_acle.h>
#define EB_DSP 1
#else
#define EB_DSP 0
#endif

/* Integer overflow (firmware/BLOB.md): every accumulation below is modulo 2^32
 * (two's complement) and goes through eb_acc or eb_mac, never a plain signed +=.
 * A blob whose bias is near the int32 limits makes the sum overflow; TFLite's
 * reference kernels overflow there too, which is undefined in C. Here the sum
 * wraps, as the DSP path's SMLAD/SMLABB do in hardware, so UBSan is clean and the
 * result is defined; wherever the true sum fits in int32 it is exactly that sum,
 * whatever the order of the additions (so the engine stays bit-exact with
 * TFLite). The int8 products and four-product sums themselves cannot overflow.
 * (uint32 -> int32 above INT32_MAX is modulo 2^32 on GCC and Clang.) */

/* acc + v modulo 2^32 */
static inline int32_t eb_acc(int32_t acc, int32_t v)
{
    return (int32_t)((uint32_t)acc + (uint32_t)v);
}

/* acc + x * w modulo 2^32 for int8 x and w (SMLABB on DSP cores: what GCC emitted
 * for the signed += before, so the emulated instruction counts barely move) */
static inline int32_t eb_mac(int32_t acc, int32_t x, int32_t w)
{
#if EB_DSP
    return __smlabb(x, w, acc);
#else
    return eb_acc(acc, x * w);
#endif
}

static inline uint32_t eb_ldw(const int8_t *p)
{
    uint32_t v;
    EB_COPY4(&v, p);
    return v;
}

#if EB_DSP
/* bytes 0 and 2 of v sign-extended into two int16 lanes */
static inline int32_t eb_sx02(uint32_t v)
{
    return __sxtb16((int8x4_t)v);
}

/* bytes 1 and 3: SXTB16 with its rotate operand (ACLE has no form for it) */
static inline int32_t eb_sx13(uint32_t v)
{
    int32_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
    return r;
}
#endif

/* acc + x . w over one group of four elements (modulo 2^32): on DSP cores two
 * SMLAD of the filter word wv's lanes against x's, xe = eb_sx02 and xo = eb_sx13 of
 * x's word (split once, shared by the rows); else the four products of x0..x3
 * (loaded once, shared by the rows) and w[0..3]. The group step of eb_dot4,
 * eb_dot2 and eb_dot1. */
#if EB_DSP
static inline int32_t eb_dot_group(int32_t acc, int32_t xe, int32_t xo, uint32_t wv)
{
    acc = __smlad(eb_sx02(wv), xe, acc);
    return __smlad(eb_sx13(wv), xo, acc);
}
#else
static inline int32_t eb_dot_group(int32_t acc, int32_t x0, int32_t x1, int32_t x2, int32_t x3, const int8_t *w)
{
    return eb_acc(acc, x0 * w[0] + x1 * w[1] + x2 * w[2] + x3 * w[3]);
}
#endif

/* acc[j] += x . w_j, j < 4, over n elements, with the four filter rows
 * stored interleaved (the blob's blocked layout, firmware/BLOB.md): for each
 * group of four elements, four bytes of row 0, of row 1, of row 2, of row 3;
 * then the n % 4 last elements of row 0, 1, 2, 3. One pointer walks all four
 * rows and every load of x feeds four channels. */
static inline void eb_dot4(const int8_t *x, const int8_t *w, int32_t n, int32_t *acc)
{
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    const int32_t r = n & 3;
    const int8_t *const xend = x + (n - r);
    int32_t j;
#if EB_DSP && defined(__OPTIMIZE__)
    /* 23 instructions per 16 MACs: post-indexed loads (LDR for x, two LDRD for the four
     * rows' words), so the pointers cost nothing; the same sums as the C loop below.
     * Unaligned LDR/LDRD: x and w are read in place (blob and arena, any alignment);
     * LDRD needs word alignment, so the asm runs only when w is aligned. */
    if (x < xend && ((uintptr_t)w & 3u) == 0) {
        uint32_t xe, xo, wa, wb, t;
        __asm__ volatile(
            "1:\n\t"
            "ldr    %[xe], [%[x]], #4\n\t"
            "ldrd   %[wa], %[wb], [%[w]], #8\n\t"
            "sxtb16 %[xo], %[xe], ror #8\n\t"
            "sxtb16 %[xe], %[xe]\n\t"
            "sxtb16 %[t], %[wa]\n\t"
            "sxtb16 %[wa], %[wa], ror #8\n\t"
            "smlad  %[a0], %[t], %[xe], %[a0]\n\t"
            "smlad  %[a0], %[wa], %[xo], %[a0]\n\t"
            "sxtb16 %[t], %[wb]\n\t"
            "sxtb16 %[wb], %[wb], ror #8\n\t"
            "smlad  %[a1], %[t], %[xe], %[a1]\n\t"
            "smlad  %[a1], %[wb], %[xo], %[a1]\n\t"
            "ldrd   %[wa], %[wb], [%[w]], #8\n\t"
            "sxtb16 %[t], %[wa]\n\t"
            "sxtb16 %[wa], %[wa], ror #8\n\t"
            "smlad  %[a2], %[t], %[xe], %[a2]\n\t"
            "smlad  %[a2], %[wa], %[xo], %[a2]\n\t"
            "sxtb16 %[t], %[wb]\n\t"
            "sxtb16 %[wb], %[wb], ror #8\n\t"
            "smlad  %[a3], %[t], %[xe], %[a3]\n\t"
            "smlad  %[a3], %[wb], %[xo], %[a3]\n\t"
            "cmp    %[x], %[end]\n\t"
            "bne    1b\n\t"
            : [x] "+r"(x), [w] "+r"(w), [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3),
              [xe] "=&r"(xe), [xo] "=&r"(xo), [wa] "=&r"(wa), [wb] "=&r"(wb), [t] "=&r"(t)
            : [end] "r"(xend)
            : "cc", "memory");
    }
#endif
#if EB_DSP
    while (x < xend) {
        const uint32_t xv = eb_ldw(x);
        const int32_t xe = eb_sx02(xv), xo = eb_sx13(xv);
        a0 = eb_dot_group(a0, xe, xo, eb_ldw(w));
        a1 = eb_dot_group(a1, xe, xo, eb_ldw(w + 4));
        a2 = eb_dot_group(a2, xe, xo, eb_ldw(w + 8));
        a3 = eb_dot_group(a3, xe, xo, eb_ldw(w + 12));
        x += 4;
        w += 16;
    }
#else
    while (x < xend) {
        const int32_t x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];
        a0 = eb_dot_group(a0, x0, x1, x2, x3, w);
        a1 = eb_dot_group(a1, x0, x1, x2, x3, w + 4);
        a2 = eb_dot_group(a2, x0, x1, x2, x3, w + 8);
        a3 = eb_dot_group(a3, x0, x1, x2, x3, w + 12);
        x += 4;
        w += 16;
    }
#endif
    for (j = 0; j < r; j++) {
        const int32_t xv = x[j];
        a0 = eb_mac(a0, xv, w[j]);
        a1 = eb_mac(a1, xv, w[r + j]);
        a2 = eb_mac(a2, xv, w[2 * r + j]);
        a3 = eb_mac(a3, xv, w[3 * r + j]);
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
}

/* *a0 += x . w0 and *a1 += x . w1 over n elements (plain rows). */
static inline void eb_dot2(const int8_t *x, const int8_t *w0, const int8_t *w1, int32_t n,
                           int32_t *pa0, int32_t *pa1)
{
    int32_t a0 = *pa0, a1 = *pa1;
    const int8_t *const xend = x + (n & ~3);
#if EB_DSP
    while (x < xend) {
        const uint32_t xv = eb_ldw(x);
        const int32_t xe = eb_sx02(xv), xo = eb_sx13(xv);
        a0 = eb_dot_group(a0, xe, xo, eb_ldw(w0));
        a1 = eb_dot_group(a1, xe, xo, eb_ldw(w1));
        x += 4;
        w0 += 4;
        w1 += 4;
    }
#else
    while (x < xend) {
        const int32_t x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];
        a0 = eb_dot_group(a0, x0, x1, x2, x3, w0);
        a1 = eb_dot_group(a1, x0, x1, x2, x3, w1);
        x += 4;
        w0 += 4;
        w1 += 4;
    }
#endif
    for (n &= 3; n > 0; n--) {
        const int32_t xv = *x++;
        a0 = eb_mac(a0, xv, *w0++);
        a1 = eb_mac(a1, xv, *w1++);
    }
    *pa0 = a0;
    *pa1 = a1;
}

/* *a0 += x . w0 over n elements. */
static inline void eb_dot1(const int8_t *x, const int8_t *w0, int32_t n, int32_t *pa0)
{
    int32_t a0 = *pa0;
#if EB_DSP
    for (; n >= 4; n -= 4) {
        const uint32_t xv = eb_ldw(x);
        a0 = eb_dot_group(a0, eb_sx02(xv), eb_sx13(xv), eb_ldw(w0));
        x += 4;
        w0 += 4;
    }
#else
    for (; n >= 4; n -= 4) {
        a0 = eb_dot_group(a0, x[0], x[1], x[2], x[3], w0);
        x += 4;
        w0 += 4;
    }
#endif
    for (; n > 0; n--) {
        a0 = eb_mac(a0, *x++, *w0++);
    }
    *pa0 = a0;
}

/* the rescaled sum v of FULLY_CONNECTED plus the output offset, clamped to the
 * activation's range (a saturating add: v may be near the int32 limits) */
static inline int8_t eb_fc_clamp(int32_t v, int32_t out_offset, int32_t act_min, int32_t act_max)
{
    v = v > act_max - out_offset ? act_max - out_offset : v;
    v = v < act_min - out_offset ? act_min - out_offset : v;
    return (int8_t)(v + out_offset);
}

/* Requantize the accumulator of channel u: fixed-point multiplier and shift
 * (convolutions), or the binary64 rescale factor (fully connected). */
static inline int8_t eb_requant_chan(int32_t acc, const uint8_t *arr1, const uint8_t *arr2,
                                     int32_t u, int fc, int32_t out_offset, int32_t act_min,
                                     int32_t act_max)
{
    int32_t v;
    if (!fc) {
        return eb_requant(acc, eb_ld32(arr1 + 4 * u), eb_ld32(arr2 + 4 * u), out_offset,
                          act_min, act_max);
    }
    v = eb_mul_round_f64(acc, (uint32_t)eb_ld32(arr1 + 4 * u), (uint32_t)eb_ld32(arr2 + 4 * u));
    return eb_fc_clamp(v, out_offset, act_min, act_max);
}

/* eb_matvec's units % 4 last rows (plain, from unit u, whose row starts at w):
 * in a pair, then one */
static EB_ALWAYS_INLINE void eb_matvec_last_rows(const int8_t *x, const int8_t *w, int32_t depth, int32_t u,
                                                 int32_t units, const uint8_t *chan, int32_t out_offset,
                                                 int32_t act_min, int32_t act_max, int8_t *out)
{
    const uint8_t *bias = chan;
    const uint8_t *arr1 = chan + 4 * (size_t)units;
    const uint8_t *arr2 = chan + 8 * (size_t)units;
    if (u + 1 < units) {
        int32_t a0 = eb_ld32(bias + 4 * u), a1 = eb_ld32(bias + 4 * u + 4);
        eb_dot2(x, w, w + depth, depth, &a0, &a1);
        out[u] = eb_requant_chan(a0, arr1, arr2, u, 0, out_offset, act_min, act_max);
        out[u + 1] = eb_requant_chan(a1, arr1, arr2, u + 1, 0, out_offset, act_min, act_max);
        w += 2 * (size_t)depth;
        u += 2;
    }
    if (u < units) {
        int32_t a0 = eb_ld32(bias + 4 * u);
        eb_dot1(x, w, depth, &a0);
        out[u] = eb_requant_chan(a0, arr1, arr2, u, 0, out_offset, act_min, act_max);
    }
}

/* out[0..units) for one input vector x of length depth: filter rows of
 * length depth, one per output channel, in the blocked layout (groups of four
 * rows interleaved, see eb_dot4; the units % 4 last rows plain), requantized
 * with the convolutions' fixed-point multiplier and shift (its one caller is
 * CONV_2D's portable kernel; FULLY_CONNECTED's filter is biased:
 * eb_matvec_biased). */
static EB_ALWAYS_INLINE void eb_matvec(const int8_t *x, const int8_t *filter, int32_t depth,
                                       int32_t units, const uint8_t *chan, int32_t out_offset,
                                       int32_t act_min, int32_t act_max, int8_t *out)
{
    const uint8_t *bias = chan;
    const uint8_t *arr1 = chan + 4 * (size_t)units;
    const uint8_t *arr2 = chan + 8 * (size_t)units;
    const int8_t *w = filter;
    int32_t u = 0, j;
    for (; u + 3 < units; u += 4) {
        int32_t a[4];
        for (j = 0; j < 4; j++) {
            a[j] = eb_ld32(bias + 4 * (u + j));
        }
        eb_dot4(x, w, depth, a);
        for (j = 0; j < 4; j++) {
            out[u + j] = eb_requant_chan(a[j], arr1, arr2, u + j, 0, out_offset, act_min, act_max);
        }
        w += 4 * (size_t)depth;
    }
    eb_matvec_last_rows(x, w, depth, u, units, chan, out_offset, act_min, act_max, out);
}

/* eb_matvec over a BIASED blocked filter (even depth positions stored w ^ 0x80,
 * chan's bias'' + 128 * sum(odd w): firmware/BLOB.md): FULLY_CONNECTED's
 * portable kernel (fc = 1) and 1x1 CONV_2D's when eb_conv_biased() (fc = 0).
 * eb_matvec.c, out of line. */
void eb_matvec_biased(const int8_t *x, const int8_t *filter, int32_t depth, int32_t units, const uint8_t *chan,
                      int fc, int32_t out_offset, int32_t act_min, int32_t act_max, int8_t *out);

#endif /* EB_DOT_H */
