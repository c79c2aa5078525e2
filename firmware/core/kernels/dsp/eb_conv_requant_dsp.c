/*
 * eb_conv_requant_dsp.c - the per-layer requantisation tables of the CONV_2D
 * kernels of the DSP set (eb_conv_dsp.c, eb_conv_small_dsp.c): the constants of
 * eb_rq_mul (plain sums) or eb_rq_mul2 (doubled sums) per output channel, and the
 * list of channels outside the doubled-sum case that eb_conv_dsp.c fixes up.
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

