/*
 * eb_conv_stem_dsp.c - CONV_2D stems (first layers, C <= 4 input channels) on cores
 * with the DSP extension, two paths that eb_conv_s8_opt tries after the short fields
 * of eb_conv_small_dsp.c: eb_conv_stem_rows for kernel rows of whole groups of four
 * input bytes (KW*C % 4 == 0: KWS's 10x4 one-channel stem, a row of 4 bytes) whose
 * windows reach the padding along W, and eb_conv_stem3 for 3x3 three-channel stems
 * (VWW, ResNet-8; described before it below).
 *
 * eb_conv_s8_opt's general path widens a window from the input rows only when its
 * columns are inside the input; the others (KWS: the first and last of five output
 * columns, 40 % of the windows) go through eb_im2col and a second widening pass,
 * about 1,000 instructions a pixel against 2,560 MACs. Here the input rows a band of
 * output rows reads are copied once into a plane padded with the input zero point
 * (-in_offset) on every side a window reaches, so that every window is inside the
 * plane: its field is KH runs of KW*C bytes, `rs` bytes apart, widened straight into
 * the two-pixel layout of eb_conv_dsp.c (word 4g + 2*slot: (x0, x2), 4g + 2*slot + 1:
 * (x1, x3) of group g) with one LDR, two SXTB16 and two stores a group. Padded taps
 * read the zero point, which is what the reference's padding means (bias' already
 * holds in_offset * sum(w), firmware/core/eb_kernels.h), so the sums are exactly
 * those of eb_conv_s8. The channel loop is eb_mm_blocks on the blob's blocked filter
 * and eb_conv_requant_tbl2 (eb_conv_mm_dsp.c; doubled-sum table, no fix-up list), as
 * the general path, or, for fields of 10 groups (KWS), eb_stem10_pairs: the same
 * products with the requantisation inside the channel-pair loop.
 *
 * Scratch (EB_DSP_SCRATCH_BYTES): the two fields (4*K bytes), the requantisation table
 * (12*OC), the sums (8*OC) or eb_stem10_pairs' table (22*OC), the odd last pixel's
 * outputs (OC rounded up to 4, or 2*OC), then the plane: rows of Wp*C bytes, Wp =
 * (OW-1)*sw + KW, as many output rows a band as fit (KWS: 58 rows of 12 bytes, the
 * whole plane, 696 bytes; 3,160 in all).
 */
#include <string.h>
#include "eb_conv_dsp.h"

/* What eb_stem10_pairs and eb_stem3_pairs share: the registers both pin alike (r6 the
 * output, r7/r8 channel a's sums (px0, px1), r9/r10 channel b's, r2-r5 the four words
 * of x of a group, then m, hc, e, OC), and one output's requantisation into T: sum S,
 * constants m (x0e), hc (x0o), e (x1e). */
#define EB_STEM_PINS                                                                              \
    register int8_t *ro __asm__("r6") = out;                                                      \
    register int32_t a00 __asm__("r7"), a01 __asm__("r8"), a10 __asm__("r9"), a11 __asm__("r10"); \
    register uint32_t x0e __asm__("r2"), x0o __asm__("r3"), x1e __asm__("r4"), x1o __asm__("r5")
#define EB_STEM_RQ(T, S)                                   \
    "add    %[" T "], %[x0o], %[" S "], asr #31\n\t"      \
    "smmlar %[" T "], %[" S "], %[x0e], %[" T "]\n\t"     \
    "asr    %[" T "], %[" T "], %[x1e]\n\t"               \
    "ssat   %[" T "], #8, %[" T "]\n\t"
/* a channel's two outputs (sums S1 of px1, S0 of px0) into T, px1's at o + OC (x1o) */
#define EB_STEM_OUT2(T, S1, S0)                            \
    EB_STEM_RQ(T, S1)                                      \
    "strb   %[" T "], [%[o], %[x1o]]\n\t"                 \
    EB_STEM_RQ(T, S0)                                      \
    "strb   %[" T "], [%[o]], #1\n\t"
/* a channel pair's four sums started from its two doubled biases at TAB */
#define EB_STEM_START(TAB)                                 \
    "ldrd   %[a00], %[a10], [%[" TAB "]], #8\n\t"         \
    "mov    %[a01], %[a00]\n\t"                           \
    "mov    %[a11], %[a10]\n\t"

/* One field: KH runs of ngr groups (4*ngr bytes) at s, rs bytes apart, widened into
 * slot words d[0], d[1], d += 4 per group; with dbl, every int16 lane doubled (SADD16
 * of the word with itself: 2x in [-256, 254] is exact in a lane). */
static void eb_stem_field(const int8_t *s, int32_t rs, int32_t kh, int32_t ngr, int dbl, uint32_t *d)
{
    int32_t ky, g;
    if (ngr == 1 && dbl) {
        /* a one-channel row of four taps: one word a row */
        const int8_t *const end = s + (size_t)kh * rs;
        do {
            const uint32_t v = eb_ldw(s);
            const int32_t e = eb_sx02(v), o = eb_sx13(v);
            d[0] = (uint32_t)__sadd16(e, e);
            d[1] = (uint32_t)__sadd16(o, o);
            d += 4;
            s += rs;
        } while (s != end);
        return;
    }
    for (ky = 0; ky < kh; ky++) {
        const int8_t *r = s + (size_t)ky * rs;
        if (dbl) {
            for (g = 0; g < ngr; g++, r += 4, d += 4) {
                const uint32_t v = eb_ldw(r);
                const int32_t e = eb_sx02(v), o = eb_sx13(v);
                d[0] = (uint32_t)__sadd16(e, e);
                d[1] = (uint32_t)__sadd16(o, o);
            }
            continue;
        }
        for (g = 0; g < ngr; g++, r += 4, d += 4) {
            const uint32_t v = eb_ldw(r);
            d[0] = (uint32_t)eb_sx02(v);
            d[1] = (uint32_t)eb_sx13(v);
        }
    }
}

/* ---- the fused channel loop of 10-group fields (KWS's 10x4 one-channel stem) -------
 * Two pixels against one channel pair (a, b) = rows 2j, 2j + 1 of a block of the blob's
 * blocked filter per pass, the requantisation in the same asm loop. The fields are
 * widened doubled (2x) and the table holds the doubled biases, so a channel's sum is
 * 2*acc exactly (|acc| < 2^30: eb_requant_table2's bounds), eb_rq_mul2's operand:
 *   out = ssat8((hc + (2acc >> 31) + smmlar(2acc, m)) >> e).
 * Table (eb_stem10_table), 11 words a channel pair:
 *   {2*bias_a, 2*bias_b, m_a, hc_a, e_a, OC, m_b, hc_b, e_b | last, OC, wstep}
 * where OC is px1's output offset (STRB's register offset), last = 0x100 on the final
 * pair (ASR by register uses the register's low byte only, so e | 0x100 shifts by e,
 * and TST #0x100 ends the loop: no end pointer, one register fewer) and wstep brings
 * the filter pointer from the end of this pair's rows to the next pair's (-152 after
 * rows 0/1 of a block, -8 after rows 2/3).
 * Registers: r0 the fields, lr the filter, r1 the table, r6 the output, r7/r8 channel
 * a's sums (px0, px1), r9/r10 channel b's, r2-r5 a group's four words of x, then m,
 * hc, e, OC; r11/r12 a weight word and its halves, then wstep and the result.
 * Per channel pair (160 MACs): 3 to start the sums, 10 groups of 15 (LDM of x; per row
 * LDR, two SXTB16, four SMLAD), SUB rewinding x, 2 x (LDM + 2 x (ADD, SMMLAR, ASR, SSAT,
 * STRB)), ADD of wstep, TST/BEQ: 179 instructions, against 169 for eb_mm_blocks' pair
 * and 34 for eb_conv_requant_tbl2 (the sums stored and loaded again). */
static EB_NOINLINE void eb_stem10_pairs(const uint32_t *xq, const int8_t *w, const uint32_t *tab, int8_t *out)
{
    register const uint32_t *rx __asm__("r0") = xq;
    register const uint32_t *rt __asm__("r1") = tab;
    register const int8_t *rw __asm__("lr") = w;
    EB_STEM_PINS;
    register uint32_t v __asm__("r11"), t __asm__("r12");
    __asm__ volatile(
        "1:\n\t"
        EB_STEM_START("tab")
        ".rept 10\n\t"
        EB_MM_GROUP
        ".endr\n\t"
        "sub    %[x], %[x], #160\n\t"
        "ldmia  %[tab]!, {%[x0e], %[x0o], %[x1e], %[x1o]}\n\t"            /* m, hc, e, OC of a */
        EB_STEM_OUT2("t", "a01", "a00")
        "ldmia  %[tab]!, {%[x0e], %[x0o], %[x1e], %[x1o], %[v]}\n\t"      /* m, hc, e, OC of b, wstep */
        "add    %[w], %[w], %[v]\n\t"
        EB_STEM_OUT2("t", "a11", "a10")
        "tst    %[x1e], #256\n\t"
        "beq    1b\n\t"
        : [x] "+r"(rx), [tab] "+r"(rt), [w] "+r"(rw), [o] "+r"(ro), [a00] "=&r"(a00), [a01] "=&r"(a01),
          [a10] "=&r"(a10), [a11] "=&r"(a11), [x0e] "=&r"(x0e), [x0o] "=&r"(x0o), [x1e] "=&r"(x1e),
          [x1o] "=&r"(x1o), [v] "=&r"(v), [t] "=&r"(t)
        :
        : "cc", "memory");
}

/* eb_stem10_pairs' table from eb_requant_table2's {m, hc, e} (rq) for OC channels
 * (OC % 4 == 0) of 10-group fields */
static void eb_stem10_table(const eb_conv_params *p, int32_t OC, const int32_t *rq, uint32_t *tab)
{
    int32_t u, j;
    for (u = 0; u < OC; u += 2) {
        for (j = 0; j < 2; j++) {
            tab[j] = (uint32_t)eb_ld32(p->chan + 4 * (size_t)(u + j)) * 2u;
            tab[2 + 4 * j] = (uint32_t)rq[3 * (u + j)];
            tab[3 + 4 * j] = (uint32_t)rq[3 * (u + j) + 1];
            tab[4 + 4 * j] = (uint32_t)rq[3 * (u + j) + 2];
            tab[5 + 4 * j] = (uint32_t)OC;
        }
        tab[10] = (uint32_t)((u & 2) ? -8 : 8 - 160);
        if (u + 2 == OC) {
            tab[8] |= 0x100u;
        }
        tab += 11;
    }
}

/* Rows [iy0, iy0 + nrows) of input image in_b (H rows of W*C bytes) into the plane
 * (rows of Wp*C bytes): plane column j is input column j - pw, the zero point pad
 * outside the input. */
static void eb_stem_plane(const eb_conv_params *p, const int8_t *in_b, int32_t iy0, int32_t nrows,
                          int32_t Wp, int8_t pad, int8_t *plane)
{
    const int32_t H = p->in.h, W = p->in.w, C = p->in.c, pw = p->pw;
    const int32_t left = pw < Wp ? pw : Wp;
    const int32_t n = (Wp - left < W ? Wp - left : W);
    const size_t rb = (size_t)Wp * C;
    int32_t r;
    for (r = 0; r < nrows; r++, plane += rb) {
        const int32_t iy = iy0 + r;
        if (iy < 0 || iy >= H) {
            memset(plane, pad, rb);
            continue;
        }
        memset(plane, pad, (size_t)left * C);
        memcpy(plane + (size_t)left * C, in_b + (size_t)iy * W * C, (size_t)n * C);
        memset(plane + (size_t)(left + n) * C, pad, rb - (size_t)(left + n) * C);
    }
}

int eb_conv_stem_rows(const eb_conv_params *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in.h, W = p->in.w, C = p->in.c;
    const int32_t OH = p->out.h, OW = p->out.w, OC = p->out.c;
    const int32_t K = p->kh * p->kw * C, G = K >> 2, ngr = (p->kw * C) >> 2;
    const int32_t Wp = (OW - 1) * p->sw + p->kw;
    const size_t rb = (size_t)Wp * C;
    const int8_t pad = (int8_t)(0u - (uint32_t)p->in_offset);
    /* 10-group fields (KWS's 10x4 one-channel stem): the fused loop */
    const int fused = G == 10;
    uint32_t *const xq = eb_dsp_buf;
    int32_t *const tbl = (int32_t *)(void *)(xq + 4 * G);
    int32_t *const acc = tbl + 3 * OC;                       /* or the fused loop's table */
    uint32_t *const ftab = (uint32_t *)(void *)acc;
    int8_t *const col = (int8_t *)(void *)(acc + (fused ? 11 * (OC >> 1) : 2 * OC));
    int8_t *const plane = col + ((fused ? 2 * OC : OC + 3) & ~3);
    const size_t fixed = (size_t)(plane - (int8_t *)(void *)eb_dsp_buf);
    int32_t nb, b, oy0;
    /* stems only (C <= 4): with more channels a row is several groups, eb_conv_s8_opt's
     * asm widening from the input rows costs less than this plane's copies and loop (and
     * its few border windows less); ResNet-8's 3x3 layers of 16 and 32 channels ran
     * 4-7 % more instructions here */
    if (C > 4 || p->dh != 1 || p->dw != 1 || ((p->kw * C) & 3) != 0 || K <= 16 || (OC & 3) != 0 ||
        (p->pw == 0 && Wp <= W) || fixed >= EB_DSP_SCRATCH_BYTES) {
        return 0;
    }
    /* output rows a band: (nb - 1) * sh + KH plane rows must fit */
    nb = (int32_t)((EB_DSP_SCRATCH_BYTES - fixed) / rb);
    nb = nb < p->kh ? 0 : (nb - p->kh) / p->sh + 1;
    if (nb < 1) {
        return 0;
    }
    nb = nb < OH ? nb : OH;
    if (!eb_requant_table2(OC, p->chan, K, p->out_offset, p->act_min, p->act_max, tbl, p, NULL, 0)) {
        return 0;
    }
    if (fused) {
        eb_stem10_table(p, OC, tbl, ftab);
    }
    for (b = 0; b < p->out.n; b++) {
        const int8_t *const in_b = in + (size_t)b * H * W * C;
        for (oy0 = 0; oy0 < OH; oy0 += nb) {
            const int32_t rows = OH - oy0 < nb ? OH - oy0 : nb;
            const int32_t npix = rows * OW;
            int32_t pi, oy = 0, ox = 0;
            eb_stem_plane(p, in_b, oy0 * p->sh - p->ph, (rows - 1) * p->sh + p->kh, Wp, pad, plane);
            /* pixel pairs in the band's order; an odd last pixel widened twice, its
             * second outputs into col */
            for (pi = 0; pi < npix; pi += 2) {
                int8_t *const o0 = out + (size_t)pi * OC;
                int8_t *const o1 = pi + 1 < npix ? o0 + OC : col;
                int32_t slot;
                for (slot = 0; slot < 2; slot++) {
                    eb_stem_field(plane + (size_t)oy * p->sh * rb + (size_t)ox * p->sw * C, (int32_t)rb, p->kh,
                                  ngr, fused, xq + 2 * slot);
                    if (pi + 1 < npix && ++ox == OW) {
                        ox = 0;
                        oy++;
                    }
                }
                if (fused) {
                    /* px1's outputs at o0 + OC: the odd last pixel's through col */
                    eb_stem10_pairs(xq, p->filter, ftab, o1 == col ? col : o0);
                    if (o1 == col) {
                        memcpy(o0, col, (size_t)OC);
                    }
                    continue;
                }
                eb_mm_blocks(xq, G, p->filter, p->chan, OC >> 2, acc);
                eb_conv_requant_tbl2(acc, OC, tbl, o0, o1);
            }
            out += (size_t)npix * OC;
        }
    }
    return 1;
}

/* ---- 3x3 three-channel stems (VWW: 96x96x3 -> 48x48x8, ResNet-8: 32x32x3 -> 16) ---
 * K = 27. A pixel's field in the by-rows order of eb_conv_dsp.c's padded path: each
 * kernel row's first 8 values (columns 0-1 and channels 0-1 of column 2: two words
 * straight from the input row), then the three rows' ninth values in one more group
 * with a zero after them: 28 positions, 7 groups, widened into the two-pixel layout
 * (word 4g + 2*slot: (x0, x2), 4g + 2*slot + 1: (x1, x3)).
 *
 * The table, built once per layer, holds per channel pair (a, b) = (u, u + 1) 38 words
 *   {2*bias_a, 2*bias_b,
 *    7 x {a: 2(w0, w2), 2(w1, w3), b: 2(w0, w2), 2(w1, w3)}   (int16 pairs, field order)
 *    m_a, hc_a, e_a, OC,  m_b, hc_b, e_b, OC}
 * with the weights doubled (2w in [-256, 254] is still an int16 halfword) and the bias
 * doubled, so each channel's sum is 2*acc exactly (|acc| < 2^30: eb_requant_table2's
 * bounds for K = 28), the operand eb_rq_mul2 wants, and {m, hc, e} its constants:
 *   out = ssat8((hc + (2acc >> 31) + smmlar(2acc, m)) >> e).
 * The zero weight at position 27 makes that position's input byte irrelevant.
 *
 * eb_stem3_pairs (one asm loop over the channel pairs, registers: r0 the fields, r1 the
 * table's end, lr the table, r6 the output, r7/r8 channel a's sums (px0, px1), r9/r10
 * channel b's, r2-r5 the four words of x of a group, then m, hc, e, OC; r11/r12 a
 * weight pair, then the result): per channel pair 3 instructions to start both sums
 * from the doubled biases, 7 groups of 11 (one LDM of x, two LDRD of weights, eight
 * SMLAD: 16 MACs), one SUB that rewinds x, the requantisation of the four outputs
 * (one LDM of the constants a channel and ADD, SMMLAR, ASR, SSAT, STRB an output: 22)
 * and CMP/BNE: 105 instructions for 108 MACs, against eb_mm_pairs_wide's 95 and 34 of
 * eb_conv_requant_tbl2 (the four sums stored and loaded again) before. px1's outputs
 * go to o + OC (the table's OC word as STRB's register offset). */
static EB_NOINLINE void eb_stem3_pairs(const uint32_t *xq, const uint32_t *tab, const uint32_t *tend, int8_t *out)
{
    register const uint32_t *rx __asm__("r0") = xq;
    register const uint32_t *rend __asm__("r1") = tend;
    register const uint32_t *rt __asm__("lr") = tab;
    EB_STEM_PINS;
    register uint32_t wa __asm__("r11"), wb __asm__("r12");
    __asm__ volatile(
        "1:\n\t"
        EB_STEM_START("t")
        ".rept 7\n\t"
        "ldmia  %[x]!, {%[x0e], %[x0o], %[x1e], %[x1o]}\n\t"
        "ldrd   %[wa], %[wb], [%[t]], #8\n\t"
        "smlad  %[a00], %[wa], %[x0e], %[a00]\n\t"
        "smlad  %[a01], %[wa], %[x1e], %[a01]\n\t"
        "smlad  %[a00], %[wb], %[x0o], %[a00]\n\t"
        "smlad  %[a01], %[wb], %[x1o], %[a01]\n\t"
        "ldrd   %[wa], %[wb], [%[t]], #8\n\t"
        "smlad  %[a10], %[wa], %[x0e], %[a10]\n\t"
        "smlad  %[a11], %[wa], %[x1e], %[a11]\n\t"
        "smlad  %[a10], %[wb], %[x0o], %[a10]\n\t"
        "smlad  %[a11], %[wb], %[x1o], %[a11]\n\t"
        ".endr\n\t"
        "sub    %[x], %[x], #112\n\t"
        "ldmia  %[t]!, {%[x0e], %[x0o], %[x1e], %[x1o]}\n\t"     /* m, hc, e, OC of a */
        EB_STEM_OUT2("wa", "a01", "a00")
        "ldmia  %[t]!, {%[x0e], %[x0o], %[x1e], %[x1o]}\n\t"     /* m, hc, e, OC of b */
        EB_STEM_OUT2("wa", "a11", "a10")
        "cmp    %[t], %[end]\n\t"
        "bne    1b\n\t"
        : [x] "+r"(rx), [t] "+r"(rt), [o] "+r"(ro), [a00] "=&r"(a00), [a01] "=&r"(a01), [a10] "=&r"(a10),
          [a11] "=&r"(a11), [x0e] "=&r"(x0e), [x0o] "=&r"(x0o), [x1e] "=&r"(x1e), [x1o] "=&r"(x1o),
          [wa] "=&r"(wa), [wb] "=&r"(wb)
        : [end] "r"(rend)
        : "cc", "memory");
}

/* The field of a window that reaches the padding (at iy0, ix0): gathered in the by-rows
 * order with the zero point pad into col (28 bytes, col[27] == 0), then widened. */
static EB_NOINLINE void eb_stem3_border(const eb_conv_params *p, const int8_t *in_b, int32_t iy0, int32_t ix0,
                                        int8_t pad, int8_t *col, uint32_t *d)
{
    const int32_t H = p->in.h, W = p->in.w;
    int32_t ky, i;
    for (ky = 0; ky < 3; ky++) {
        const int32_t iy = iy0 + ky * p->dh;
        const int rowin = iy >= 0 && iy < H;
        int8_t t[12];
        int32_t kx;
        for (kx = 0; kx < 3; kx++) {
            const int32_t ix = ix0 + kx;
            if (rowin && ix >= 0 && ix < W) {
                const int8_t *const src = in_b + ((size_t)iy * W + ix) * 3;
                t[3 * kx] = src[0];
                t[3 * kx + 1] = src[1];
                t[3 * kx + 2] = src[2];
            } else {
                t[3 * kx] = t[3 * kx + 1] = t[3 * kx + 2] = pad;
            }
        }
        EB_COPY4(col + 8 * ky, t);
        EB_COPY4(col + 8 * ky + 4, t + 4);
        col[24 + ky] = t[8];
    }
    for (i = 0; i < 7; i++) {
        eb_widen_word(eb_ldw(col + 4 * i), d + 4 * i);
    }
}

/* The field position q (0..27) -> the im2col index of its element, -1 for none */
static int32_t eb_stem3_k(int32_t q)
{
    return q < 24 ? (q >> 3) * 9 + (q & 7) : q < 27 ? (q - 24) * 9 + 8 : -1;
}

/* Scratch: the two fields (112 bytes), the border gather (28, 32 reserved), the odd last
 * pixel's outputs (2*OC), the table (152 bytes a channel pair), eb_requant_table2's
 * constants while the table is built (12*OC): VWW 864 bytes, ResNet-8 1,584. */
int eb_conv_stem3(const eb_conv_params *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in.h, W = p->in.w, OH = p->out.h, OW = p->out.w, OC = p->out.c;
    const int8_t pad = (int8_t)(0u - (uint32_t)p->in_offset);
    uint32_t *const xq = eb_dsp_buf;
    int8_t *const col = (int8_t *)(void *)(xq + 28);
    int8_t *const ocol = col + 32;
    uint32_t *const tab = (uint32_t *)(void *)(ocol + ((2 * OC + 3) & ~3));
    uint32_t *const tend = tab + 19 * (size_t)OC;
    int32_t *const rq = (int32_t *)(void *)tend;
    const int32_t rs = 3 * W * p->dh;
    int8_t *o = out;
    int32_t u, g, j, i, b, oy, ox, slot = 0;
    if (p->in.c != 3 || p->kh != 3 || p->kw != 3 || p->dw != 1 || (OC & 1) != 0 || OC < 2 || W < 3 ||
        (size_t)((uint8_t *)(rq + 3 * OC) - (uint8_t *)eb_dsp_buf) > EB_DSP_SCRATCH_BYTES) {
        return 0;
    }
    if (!eb_requant_table2(OC, p->chan, 28, p->out_offset, p->act_min, p->act_max, rq, p, NULL, 0)) {
        return 0;
    }
    for (u = 0; u < OC; u += 2) {
        uint32_t *e = tab + 19 * (size_t)u;
        *e++ = (uint32_t)eb_ld32(p->chan + 4 * (size_t)u) * 2u;
        *e++ = (uint32_t)eb_ld32(p->chan + 4 * (size_t)(u + 1)) * 2u;
        for (g = 0; g < 7; g++) {
            for (j = 0; j < 2; j++) {
                int32_t w[4];
                for (i = 0; i < 4; i++) {
                    const int32_t k = eb_stem3_k(4 * g + i);
                    w[i] = k < 0 ? 0 : 2 * eb_conv_filter_at(p->filter, 27, OC, u + j, k);
                }
                *e++ = (uint32_t)(uint16_t)w[0] | ((uint32_t)(uint16_t)w[2] << 16);
                *e++ = (uint32_t)(uint16_t)w[1] | ((uint32_t)(uint16_t)w[3] << 16);
            }
        }
        for (j = 0; j < 2; j++) {
            *e++ = (uint32_t)rq[3 * (u + j)];
            *e++ = (uint32_t)rq[3 * (u + j) + 1];
            *e++ = (uint32_t)rq[3 * (u + j) + 2];
            *e++ = (uint32_t)OC;
        }
    }
    col[27] = 0;
    /* pixels in order, fields into slot 0 then 1; a pass per pair of pixels */
    for (b = 0; b < p->out.n; b++) {
        const int8_t *const in_b = in + (size_t)b * H * W * 3;
        for (oy = 0; oy < OH; oy++) {
            const int32_t iy0 = oy * p->sh - p->ph;
            const int rowin = iy0 >= 0 && iy0 + 2 * p->dh < H;
            /* the window's first input row (read only when rowin) and its first byte's column
             * offset 3 * ix0 */
            const int8_t *const row = in_b + (size_t)(rowin ? iy0 : 0) * W * 3;
            int32_t ix0 = -p->pw;
            for (ox = 0; ox < OW; ox++, ix0 += p->sw) {
                uint32_t *const d = xq + 2 * slot;
                if (rowin && (uint32_t)ix0 <= (uint32_t)(W - 3)) {       /* 0 <= ix0 <= W - 3 (W >= 3) */
                    eb_stem3_inside(row + 3 * ix0, rs, d);
                } else {
                    eb_stem3_border(p, in_b, iy0, ix0, pad, col, d);
                }
                if (slot) {
                    eb_stem3_pairs(xq, tab, tend, o);
                    o += 2 * OC;
                }
                slot ^= 1;
            }
        }
    }
    if (slot) {
        /* an odd pixel count: the last field twice, its outputs through ocol */
        for (g = 0; g < 7; g++) {
            xq[4 * g + 2] = xq[4 * g];
            xq[4 * g + 3] = xq[4 * g + 1];
        }
        eb_stem3_pairs(xq, tab, tend, ocol);
        memcpy(o, ocol, (size_t)OC);
    }
    return 1;
}
