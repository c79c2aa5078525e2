/*
 * eb_conv_requant_dsp.c - the per-layer requantisation tables of the CONV_2D
 * kernels of the DSP set (eb_conv_dsp.c, eb_conv_small_dsp.c, eb_pointwise_dsp.c): the
 * constants of eb_rq_mul (plain sums) or eb_rq_mul2 (doubled sums) per output channel,
 * the list of channels outside the doubled-sum case, and the requantisation of the
 * two-pixel kernels' sums (eb_conv_dsp.c, eb_pointwise_dsp.c) with them.
 */
#include "eb_conv_dsp.h"

/* The per-channel constants of eb_conv_requant's common case, once per layer:
 * {m, chi (output offset folded in), sh} of every channel into tbl (3 * OC words).
 * 1 when every channel is in that case (no clamp inside int8, m > 0,
 * 2 <= e <= 21), else 0 and eb_conv_requant runs. */
int eb_requant_table(int32_t OC, const uint8_t *mult, const uint8_t *shift, int32_t off, int32_t lo,
                      int32_t hi, int32_t *tbl)
{
    int32_t u;
    if (lo != -128 || hi != 127) {
        return 0;
    }
    for (u = 0; u < OC; u++) {
        const int32_t m = eb_ld32(mult + 4 * u), s = eb_ld32(shift + 4 * u);
        int32_t sh;
        if (!(m > 0 && (uint32_t)(-s - 2) <= 19u)) {
            return 0;
        }
        sh = -s - 1;
        tbl[3 * u] = m;
        tbl[3 * u + 1] = (int32_t)((1u << (uint32_t)(sh - 1)) + ((uint32_t)off << sh));
        tbl[3 * u + 2] = sh;
    }
    return 1;
}

/* The fix-up list of the layer that runs (one at a time), set by eb_requant_table2:
 * n entries, none when the table covers every channel. */
eb_conv_fix_list eb_conv_fix;

/* 1 when every weight of output channel u is zero (blocked filter order of
 * firmware/BLOB.md): its sum is its bias whatever the input. A biased filter (blob
 * format 3, eb_conv_biased: K % 4 == 0) stores a zero weight at an even position as
 * 0x80 (and -128 as 0x00). */
static int eb_row_zero(const int8_t *w, int32_t K, int32_t OC, int32_t u, int biased)
{
    const int32_t G = K >> 2, R = K & 3, j = u & 3;
    const uint32_t zw = biased ? 0x00800080u : 0u;
    uint32_t any = 0;
    int32_t g, i;
    if (u >= (OC & ~3)) {
        const int8_t *const row = w + (size_t)u * K;
        for (i = 0; i < K; i++) {
            any |= (uint32_t)(uint8_t)row[i] ^ ((i & 1) ? 0u : (zw & 0xFFu));
        }
        return any == 0;
    }
    w += (size_t)(u & ~3) * K;
    for (g = 0; g < G; g++) {
        any |= eb_ldw(w + 16 * (size_t)g + 4 * j) ^ zw;
    }
    for (i = 0; i < R; i++) {
        any |= (uint32_t)(uint8_t)w[16 * (size_t)G + (size_t)R * j + i];
    }
    return any == 0;
}

/* The table of eb_conv_requant_tbl2: {m, hc, e} per channel for eb_rq_mul2 on the
 * doubled sums, e = -shift, hc = 2^(e-1) + off * 2^e (the output offset folded in,
 * as eb_dw_requant_lines does). Needs eb_requant_table's case and |acc| < 2^30, so
 * that 2 * acc fits int32: |bias| < 2^29 and K * 2^14 < 2^29 (an int8 product is at
 * most 2^14 in magnitude). 1 when every channel qualifies, else 0; or, with a fix
 * list (fix != NULL, room for maxfix entries), 1 with the channels that do not
 * qualify listed in fix[0..eb_conv_fix.n) for eb_conv_requant_fix (their table entries
 * are zeros: the asm loop writes a byte that the fix-up overwrites): u, and when
 * channel u's weights are all zero (MobileNet's dead channels: a tiny scale, bias
 * near 2^30) bit 24 and its constant output byte in bits 16..23. */
int eb_requant_table2(int32_t OC, const uint8_t *chan, int32_t K, int32_t off, int32_t lo, int32_t hi,
                      int32_t *tbl, const eb_conv_params *p, uint32_t *fix, int32_t maxfix)
{
    int32_t u, n = 0;
    eb_conv_fix.n = 0;
    if (lo != -128 || hi != 127 || K >= (1 << 15)) {
        return 0;
    }
    for (u = 0; u < OC; u++) {
        const int32_t bias = eb_ld32(chan + 4 * (size_t)u);
        const int32_t m = eb_ld32(chan + 4 * ((size_t)OC + u)), s = eb_ld32(chan + 4 * (2 * (size_t)OC + u));
        int32_t e;
        if (!(m > 0 && (uint32_t)(-s - 2) <= 19u) || bias >= (1 << 29) || bias <= -(1 << 29)) {
            if (!fix || n >= maxfix || u > 0xFFFF) {
                return 0;
            }
            fix[n] = (uint32_t)u;
            if (eb_row_zero(p->filter, K, OC, u, eb_conv_biased(p))) {
                fix[n] |= (1u << 24) | ((uint32_t)(uint8_t)eb_requant(bias, m, s, off, lo, hi) << 16);
            }
            n++;
            tbl[3 * u] = tbl[3 * u + 1] = tbl[3 * u + 2] = 0;
            continue;
        }
        e = -s;
        tbl[3 * u] = m;
        tbl[3 * u + 1] = (int32_t)((1u << (uint32_t)(e - 1)) + ((uint32_t)off << e));
        tbl[3 * u + 2] = e;
    }
    eb_conv_fix.list = fix;
    eb_conv_fix.n = n;
    eb_conv_fix.p = p;
    return 1;
}

/* requantise acc[2*u] (px0) and acc[2*u+1] (px1) of every channel u into o0
 * and o1. The common case (no fused clamp inside int8, 2 <= e <= 21) folds the
 * output offset into the SMLAL constant as eb_dw_requant does. */
EB_NOINLINE void eb_conv_requant(const int32_t *acc, int32_t OC, const uint8_t *mult,
                                        const uint8_t *shift, int32_t off, int32_t lo, int32_t hi,
                                        int8_t *o0, int8_t *o1)
{
    const int full = lo == -128 && hi == 127;
    int32_t u;
    for (u = 0; u < OC; u++) {
        const int32_t m = eb_ld32(mult + 4 * u), s = eb_ld32(shift + 4 * u);
        int32_t v0, v1;
        if (full && m > 0 && (uint32_t)(-s - 2) <= 19u) {
            const int32_t sh = -s - 1;
            const int32_t chi = (int32_t)((1u << (uint32_t)(sh - 1)) + ((uint32_t)off << sh));
            v0 = __ssat(eb_rq_mul(acc[0], m, chi, sh), 8);
            v1 = __ssat(eb_rq_mul(acc[1], m, chi, sh), 8);
        } else if (m > 0 && s <= -2 && s >= -31) {
            const int32_t chi = (int32_t)(1u << (uint32_t)(-s - 2)), sh = -s - 1;
            v0 = eb_rq_mul(acc[0], m, chi, sh) + off;
            v1 = eb_rq_mul(acc[1], m, chi, sh) + off;
            v0 = v0 < lo ? lo : (v0 > hi ? hi : v0);
            v1 = v1 < lo ? lo : (v1 > hi ? hi : v1);
        } else {
            v0 = eb_requant(acc[0], m, s, off, lo, hi);
            v1 = eb_requant(acc[1], m, s, off, lo, hi);
        }
        o0[u] = (int8_t)v0;
        o1[u] = (int8_t)v1;
        acc += 2;
    }
}

/* eb_conv_requant's common case from the table of eb_requant_table: the same
 * integers, the per-channel constants loaded instead of derived per pixel pair. */
EB_NOINLINE void eb_conv_requant_tbl(const int32_t *acc, int32_t OC, const int32_t *tbl, int8_t *o0,
                                            int8_t *o1)
{
    const int32_t *const end = tbl + 3 * OC;
    while (tbl < end) {
        const int32_t m = tbl[0], chi = tbl[1], sh = tbl[2];
        *o0++ = (int8_t)__ssat(eb_rq_mul(acc[0], m, chi, sh), 8);
        *o1++ = (int8_t)__ssat(eb_rq_mul(acc[1], m, chi, sh), 8);
        acc += 2;
        tbl += 3;
    }
}

/* The outputs of the channels listed by eb_requant_table2 (after eb_conv_requant_tbl2
 * wrote the others): a dead channel's constant, else eb_requant of its sums. */
EB_NOINLINE void eb_conv_requant_fix(const int32_t *acc, int8_t *o0, int8_t *o1)
{
    const eb_conv_params *const p = eb_conv_fix.p;
    const uint32_t *const fix = eb_conv_fix.list;
    const int32_t OC = p->out.c, nfix = eb_conv_fix.n;
    int32_t i;
    for (i = 0; i < nfix; i++) {
        const uint32_t f = fix[i];
        const int32_t u = (int32_t)(f & 0xFFFFu);
        if (f & (1u << 24)) {
            o0[u] = o1[u] = (int8_t)(uint8_t)(f >> 16);
        } else {
            const int32_t m = eb_ld32(p->chan + 4 * ((size_t)OC + u));
            const int32_t s = eb_ld32(p->chan + 4 * (2 * (size_t)OC + u));
            o0[u] = eb_requant(acc[2 * u], m, s, p->out_offset, p->act_min, p->act_max);
            o1[u] = eb_requant(acc[2 * u + 1], m, s, p->out_offset, p->act_min, p->act_max);
        }
    }
}

/* eb_conv_requant_tbl with eb_rq_mul2 on the doubled sums (table of
 * eb_requant_table2): 16 instructions per channel for both pixels, and the
 * loop's CMP/BNE once per two channels (an odd count runs one first; 25 with
 * eb_rq_mul's SMLAL form) */
#define EB_RQ2_CHAN                                       \
    "ldrd   %[m], %[hc], [%[t]], #12\n\t"                 \
    "ldr    %[e], [%[t], #-4]\n\t"                        \
    "ldr    %[a0], [%[a]], #8\n\t"                        \
    "ldr    %[a1], [%[a], #-4]\n\t"                       \
    "lsl    %[a0], %[a0], #1\n\t"                         \
    "add    %[h], %[hc], %[a0], asr #31\n\t"              \
    "smmlar %[h], %[a0], %[m], %[h]\n\t"                  \
    "asr    %[h], %[h], %[e]\n\t"                         \
    "ssat   %[h], #8, %[h]\n\t"                           \
    "strb   %[h], [%[o0]], #1\n\t"                        \
    "lsl    %[a1], %[a1], #1\n\t"                         \
    "add    %[h], %[hc], %[a1], asr #31\n\t"              \
    "smmlar %[h], %[a1], %[m], %[h]\n\t"                  \
    "asr    %[h], %[h], %[e]\n\t"                         \
    "ssat   %[h], #8, %[h]\n\t"                           \
    "strb   %[h], [%[o1]], #1\n\t"
#define EB_RQ2_OPERANDS                                                                                  \
    : [t] "+r"(tbl), [a] "+r"(acc), [o0] "+r"(o0), [o1] "+r"(o1), [m] "=&r"(m), [hc] "=&r"(hc),         \
      [e] "=&r"(e), [a0] "=&r"(a0), [a1] "=&r"(a1), [h] "=&r"(h)                                        \
    : [end] "r"(end)                                                                                     \
    : "cc", "memory"
EB_NOINLINE void eb_conv_requant_tbl2(const int32_t *acc, int32_t OC, const int32_t *tbl, int8_t *o0,
                                             int8_t *o1)
{
    const int32_t *const end = tbl + 3 * OC;
    int32_t m, hc, e, a0, a1, h;
    if (OC & 1) {
        __asm__ volatile(EB_RQ2_CHAN EB_RQ2_OPERANDS);
    }
    if (OC > 1) {
        __asm__ volatile(
            "1:\n\t"
            EB_RQ2_CHAN
            EB_RQ2_CHAN
            "cmp    %[t], %[end]\n\t"
            "bne    1b\n\t"
            EB_RQ2_OPERANDS);
    }
}
#undef EB_RQ2_CHAN
#undef EB_RQ2_OPERANDS
