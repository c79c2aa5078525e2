/*
 * eb_depthwise_rq_dsp.c - the requantisation of eb_depthwise_conv_dsp.c (DSP kernel
 * set): a band's lines of 32-bit sums to int8 outputs, in one asm call per channel
 * and band. The fast case works on doubled sums t = 2 * (acc + bias): eb_rq_mul's
 * numerator doubled, 2P + 2C - [t < 0] * 2^32, has the constant 2^31 low word (SMMLAR's
 * rounding) and the sign correction in the high word only, so per output
 *   hi = SMMLAR(t, m, hc + (t >> 31)), hc = 2^(e-1) + off * 2^e, v = SSAT8(hi >> e)
 * (the output offset folded into hc; e = -shift <= 22 keeps |hi| < 2^31). The channels
 * outside that case take the C loop (eb_dw_requant_lines).
 */
#include "eb_depthwise_dsp.h"

/* d[j * ls] = SSAT8(eb_rq_mul2(t[j], ...)), j < 2, for a pair of sums t: with ADD
 * "add t, b2, t, lsl #1" they are made from accumulators a (t = 2 * a + b2: 16
 * instructions per pair); empty, the accumulators are already the doubled sums with
 * the bias (eb_dw_lines3 on doubled weights from b2: 14). (Unrolled by two it saves
 * one a pair, but the cycle model estimates more cycles for the small depthwise
 * layers: the larger code misses the STM32L4's 1 KiB instruction cache.) */
/* one output: the doubled sum in T requantised (eb_rq_mul2's SMMLAR form) and stored by STORE */
#define EB_DW_RQ_ONE(T, STORE)                            \
    "add    %[h], %[hc], %[" T "], asr #31\n\t"          \
    "smmlar %[h], %[" T "], %[m], %[h]\n\t"              \
    "asr    %[h], %[h], %[e]\n\t"                         \
    "ssat   %[h], #8, %[h]\n\t"                           \
    STORE
#define EB_DW_RQ_PAIR(ADD0, ADD1)                         \
    "ldrd   %[t0], %[t1], [%[a]], #8\n\t"                 \
    ADD0                                                  \
    EB_DW_RQ_ONE("t0", "strb   %[h], [%[d]]\n\t")        \
    ADD1                                                  \
    EB_DW_RQ_ONE("t1", "strb   %[h], [%[d], %[ls]]\n\t") \
    "add    %[d], %[d], %[ls], lsl #1\n\t"
#define EB_DW_ADD0 "add    %[t0], %[b2], %[t0], lsl #1\n\t"
#define EB_DW_ADD1 "add    %[t1], %[b2], %[t1], lsl #1\n\t"

/* the loops' line steps (eb_depthwise_dsp.h); its address goes into the asm as an
 * immediate, so no register holds it */
eb_dw_rqctl_t eb_dw_rqctl;

/* The line walk both families of requantisation loops below share: a line's end from
 * eb_dw_rqctl (pair bytes at +0), the pairs (the caller's), the odd last output when
 * eb_dw_rqctl says so (+8: its accumulator loaded into t0, then the caller's one
 * output), the step to the next line's output (+4), until last; and their locals and
 * asm outputs. */
#define EB_DW_LINES_LOCALS \
    int32_t t0, t1, h;     \
    const int32_t *end;    \
    uint32_t X
#define EB_DW_LINES_HEAD                          \
    "movw   %[X], #:lower16:%c[ctl]\n\t"          \
    "movt   %[X], #:upper16:%c[ctl]\n\t"          \
    "2:\n\t"                                       \
    "ldr    %[t0], [%[X]]\n\t"                    \
    "add    %[end], %[a], %[t0]\n\t"              \
    "1:\n\t"
#define EB_DW_LINES_ODD                           \
    "cmp    %[a], %[end]\n\t"                     \
    "bne    1b\n\t"                                \
    "ldr    %[t0], [%[X], #8]\n\t"                \
    "cmp    %[t0], #0\n\t"                        \
    "beq    3f\n\t"                                \
    "ldr    %[t0], [%[a]], #8\n\t"
#define EB_DW_LINES_TAIL                                                                            \
    "3:\n\t"                                                                                       \
    "ldr    %[t0], [%[X], #4]\n\t"                                                                \
    "add    %[d], %[d], %[t0]\n\t"                                                                \
    "cmp    %[a], %[last]\n\t"                                                                    \
    "bne    2b\n\t"                                                                                \
    : [a] "+r"(a), [d] "+r"(d), [t0] "=&r"(t0), [t1] "=&r"(t1), [h] "=&r"(h), [end] "=&r"(end), \
      [X] "=&r"(X)

/* Requantises lines of accumulators from a up to last: per line, pair_bytes / 8
 * pairs (EB_DW_RQ_PAIR, at least one), the odd last output when odd, then d steps
 * by dstep. All lines of a band in one call: 9 instructions from one line to the
 * next (16 more for an odd last output), instead of a C loop around a call per line.
 * Two variants (ADD0/ADD1 as in EB_DW_RQ_PAIR): only one runs in a layer. */
#define EB_DW_RQ_LINES(NAME, ADD0, ADD1)                                                                     \
    EB_NOINLINE void NAME(const int32_t *a, const int32_t *last, int8_t *d, int32_t ls, int32_t m, int32_t hc, \
                          int32_t e, int32_t b2)                                                             \
    {                                                                                                        \
        EB_DW_LINES_LOCALS;                                                                                  \
        __asm__ volatile(                                                                                    \
            EB_DW_LINES_HEAD                                                                                 \
            EB_DW_RQ_PAIR(ADD0, ADD1)                                                                        \
            EB_DW_LINES_ODD                                                                                  \
            ADD0                                                                                             \
            EB_DW_RQ_ONE("t0", "strb   %[h], [%[d]]\n\t")                                                 \
            EB_DW_LINES_TAIL                                                                                 \
            : [last] "r"(last), [ls] "r"(ls), [m] "r"(m), [hc] "r"(hc), [e] "r"(e), [b2] "r"(b2),           \
              [ctl] "i"(&eb_dw_rqctl)                                                                        \
            : "cc", "memory");                                                                               \
    }
EB_DW_RQ_LINES(eb_dw_rq_lines, EB_DW_ADD0, EB_DW_ADD1)
EB_DW_RQ_LINES(eb_dw_rq_lines_t, "", "")
#undef EB_DW_RQ_LINES

/* eb_dw_rq_lines_t for one shift e = E, an immediate: SSAT's own shift does the
 * final v = hi >> e (SSAT h, #8, h, ASR #E saturates hi >> E), so an output costs
 * 4 instructions (ADD, SMMLAR, SSAT, STRB), a pair 12. Per-channel shifts vary
 * within a layer, so a table of these for e = 3..9 (nearly all of the MLPerf Tiny
 * models' depthwise channels; the others take eb_dw_rq_lines_t). */
#define EB_DW_RQE_ONE(T, STORE, E)                                                                           \
    "add    %[h], %[hc], %[" T "], asr #31\n\t"                                                            \
    "smmlar %[h], %[" T "], %[m], %[h]\n\t"                                                                \
    "ssat   %[h], #8, %[h], asr #" #E "\n\t"                                                               \
    STORE
#define EB_DW_RQ_LINES_E(E)                                                                                  \
    static EB_NOINLINE void eb_dw_rq_lines_e##E(const int32_t *a, const int32_t *last, int8_t *d, int32_t ls, \
                                               int32_t m, int32_t hc)                                        \
    {                                                                                                        \
        EB_DW_LINES_LOCALS;                                                                                  \
        __asm__ volatile(                                                                                    \
            EB_DW_LINES_HEAD                                                                                 \
            "ldrd   %[t0], %[t1], [%[a]], #8\n\t"                                                           \
            EB_DW_RQE_ONE("t0", "strb   %[h], [%[d]]\n\t", E)                                               \
            EB_DW_RQE_ONE("t1", "strb   %[h], [%[d], %[ls]]\n\t", E)                                        \
            "add    %[d], %[d], %[ls], lsl #1\n\t"                                                          \
            EB_DW_LINES_ODD                                                                                  \
            EB_DW_RQE_ONE("t0", "strb   %[h], [%[d]]\n\t", E)                                               \
            EB_DW_LINES_TAIL                                                                                 \
            : [last] "r"(last), [ls] "r"(ls), [m] "r"(m), [hc] "r"(hc), [ctl] "i"(&eb_dw_rqctl)             \
            : "cc", "memory");                                                                               \
    }
EB_DW_RQ_LINES_E(3)
EB_DW_RQ_LINES_E(4)
EB_DW_RQ_LINES_E(5)
EB_DW_RQ_LINES_E(6)
EB_DW_RQ_LINES_E(7)
EB_DW_RQ_LINES_E(8)
EB_DW_RQ_LINES_E(9)
#undef EB_DW_RQ_LINES_E
#undef EB_DW_LINES_LOCALS
#undef EB_DW_LINES_HEAD
#undef EB_DW_LINES_ODD
#undef EB_DW_LINES_TAIL
#undef EB_DW_RQE_ONE
const eb_dw_rqe_fn eb_dw_rq_e[EB_DW_RQE_MAX - EB_DW_RQE_MIN + 1] = {
    eb_dw_rq_lines_e3, eb_dw_rq_lines_e4, eb_dw_rq_lines_e5, eb_dw_rq_lines_e6,
    eb_dw_rq_lines_e7, eb_dw_rq_lines_e8, eb_dw_rq_lines_e9,
};
#undef EB_DW_RQ_PAIR
#undef EB_DW_RQ_ONE
#undef EB_DW_ADD0
#undef EB_DW_ADD1

/* requantise one output line: dst[j * ls] from acc[j] + bias, j < n. With
 * sh <= 21 the output offset rides in the constant: (hi + off * 2^sh) >> sh =
 * (hi >> sh) + off exactly, and |hi + off * 2^sh| < 2^31 (|hi| <= 2^30 + 2^29 + 1,
 * |off| <= 128). */
static EB_ALWAYS_INLINE void eb_dw_requant(const int32_t *acc, int32_t n, int32_t bias, const eb_rq *q,
                                           int32_t off, int32_t lo, int32_t hi, int8_t *dst, int32_t ls)
{
    int32_t j;
    if (!q->fast) {
        for (j = 0; j < n; j++) {
            dst[(size_t)j * ls] = eb_requant(eb_acc(acc[j], bias), q->m, q->shift, off, lo, hi);
        }
        return;
    }
    {
        const int32_t m = q->m, sh = q->sh;
        if (lo == -128 && hi == 127 && sh <= 21) {
            const int32_t chi = (int32_t)((uint32_t)q->chi + ((uint32_t)off << sh));
            const int32_t *const end = acc + (n & ~1);
            while (acc < end) {
                const int32_t v0 = eb_rq_mul(eb_acc(acc[0], bias), m, chi, sh);
                const int32_t v1 = eb_rq_mul(eb_acc(acc[1], bias), m, chi, sh);
                dst[0] = (int8_t)__ssat(v0, 8);
                dst[ls] = (int8_t)__ssat(v1, 8);
                dst += 2 * ls;
                acc += 2;
            }
            if (n & 1) {
                *dst = (int8_t)__ssat(eb_rq_mul(eb_acc(acc[0], bias), m, chi, sh), 8);
            }
        } else {
            const int32_t chi = q->chi;
            for (j = 0; j < n; j++) {
                int32_t v = eb_rq_mul(eb_acc(acc[j], bias), m, chi, sh) + off;
                v = v < lo ? lo : v;
                *dst = (int8_t)(v > hi ? hi : v);
                dst += ls;
            }
        }
    }
}

/* eb_dw_requant for n_out lines (the channels outside eb_dw_rq_lines' case): line
 * o's accumulators at acc + o * lp2, its outputs from dst + o * ocs */
EB_NOINLINE void eb_dw_requant_lines(const int32_t *acc, int32_t n_out, int32_t Lo, int32_t bias,
                                            const eb_rq *q, int32_t off, int32_t lo, int32_t hi, int8_t *dst,
                                            int32_t ls, int32_t ocs)
{
    const int32_t lp2 = (Lo + 1) & ~1;
    int32_t o;
    for (o = 0; o < n_out; o++) {
        eb_dw_requant(acc, Lo, bias, q, off, lo, hi, dst, ls);
        acc += lp2;
        dst += ocs;
    }
}

