/*
 * eb_depthwise_small_dsp.c - DEPTHWISE_CONV_2D in tiles of fixed geometry (the DSP
 * kernel set): a 3x3 filter, dilation 1, depth multiplier 1, no clamp inside int8,
 * and either stride 1 (planes of 3..6 outputs across and at most 8 lines: MobileNet's
 * 6x6 and 3x3 planes, one tile across; or tiles of 12 across and a last one of 3..6:
 * its 48x48, 24x24 and 12x12 planes) or stride 2 on any plane (tiles of up to 8
 * outputs across: MobileNet's downsampling layers). eb_dw_small returns 0 for any
 * other layer (the line kernel of eb_depthwise_conv_dsp.c takes it).
 *
 * What the line kernel pays per line and per channel is most of the work on small
 * planes (VWW's 6x6x128 layers: about 990 instructions a channel for 324 MACs), and
 * its pass (6 LDR, 12 multiplies, STRD, loop: 21 instructions per 18 MACs) is five
 * more than this one's; this plan removes most of it by construction:
 *
 *  - the geometry is fixed per kernel variant: a plane line is WP = 2 * NP + 2 int16
 *    (stride 1) or 4 * NP + 2 (stride 2) positions for NP pairs of outputs a line, so
 *    the three rows of a pass are immediate offsets from one pointer and a line's NP
 *    pairs are unrolled: the pointer moves once per line (one ADD), the row stride
 *    needs no register, and LDRD fetches four positions of a row at once (the row
 *    starts word-aligned and the pairs start at even positions);
 *  - tiles outside, groups of four channels inside: a group's inside positions are
 *    widened straight from the NHWC words (one LDR per position for four channels,
 *    SXTB16 splits channels 0/2 and 1/3, PKHBT/PKHTB pair two positions per plane
 *    word) into four planes whose padding (the input zero point) is written once per
 *    tile; a group's weights are packed at once the same way;
 *  - the sums start from 2 * bias on doubled weights for the channels the fast
 *    requantisation takes (eb_depthwise_rq_dsp.c: 4 instructions an output for
 *    shifts 3..9), one call per channel and tile for all its lines; the
 *    requantisation's line steps (eb_dw_rqctl) are set once per tile.
 *
 * The padding taps are multiplied like the others: the zero point times the weight,
 * which the folded bias' = bias + in_offset * sum(w) cancels exactly (eb_kernels.h).
 * Scratch: four planes of R * WP int16 and the tile's sums, at most EB_DSP_SCRATCH_BYTES
 * (the tile height is chosen so: stride 2, 8 across: 12 lines, 3,984 bytes; stride 1,
 * 12 across: 24 lines, 4,064 bytes).
 */
#include "eb_depthwise_dsp.h"

/* ---- the multiply-accumulate kernels ---------------------------------------
 * x: row 0 of the channel's plane (WP int16 a row, word-aligned), w: the packed
 * weights (below), acc: the sums, lines of 2 * NP int32 (the pairs of a line), end:
 * the end of the last line's sums. Register plan (all 14 pinned): x r0, ap r1,
 * end r2, b2 r3 (the sums' start: 2 * bias, or 0), six weight words r4..r9, the
 * pair's sums a0 a1 r10 r11, the loaded row words X Y r12 lr.
 *
 * Stride 1, outputs j and j + 1 (j even) of a line, per row t (X = x[j..j+1],
 * Y = x[j+2..j+3] from one LDRD; p = (w0, w1), q = (w1, w2) of row t):
 *   a0 += SMLAD(X, p) + Y.lo * q.hi = x[j] w0 + x[j+1] w1 + x[j+2] w2
 *   a1 += X.hi * p.lo + SMLAD(Y, q) = x[j+1] w0 + x[j+2] w1 + x[j+3] w2
 * 3 LDRD, 12 multiplies and one STRD: 16 instructions for 18 MACs; 3 per line
 * (ADD of the row stride, CMP, BNE). Words: w[2t] = p, w[2t + 1] = q. A row: EB_DW_ROW_LDRD
 * (eb_depthwise_dsp.h). */
#define EB_DWS_S1_PAIR(O, RS)                                 \
    EB_DW_ROW_LDRD("#" #O, "p0", "q0", "b2", "b2")            \
    EB_DW_ROW_LDRD("#" #O "+" #RS, "p1", "q1", "a0", "a1")    \
    EB_DW_ROW_LDRD("#" #O "+2*" #RS, "p2", "q2", "a0", "a1")  \
    "strd   %[a0], %[a1], [%[ap]], #8\n\t"

/* Stride 2, outputs j and j + 1 of a line read positions 2j..2j+4 (k = 2j):
 *   a0 += SMLAD(x[k..k+1], (w0, w1)) + x[k+2] w2
 *   a1 += SMLAD(x[k+2..k+3], (w0, w1)) + x[k+4] w2
 * per row an LDRD (x[k..k+3]), an LDR (x[k+4..k+5]) and four multiplies: 19
 * instructions for 18 MACs. Words: w[2t] = (w0, w1) of row t; w[1] = w2 of row 0
 * (low half) and of row 1 (high half), w[3] = w2 of row 2 (low half). */
#define EB_DWS_S2_ROW(O, OFS, P, Q, H, A0IN, A1IN)            \
    "ldrd   %[X], %[Y], [%[x], #" O OFS "]\n\t"               \
    "smlad  %[a0], %[X], %[" P "], %[" A0IN "]\n\t"          \
    "smlab" H " %[a0], %[Y], %[" Q "], %[a0]\n\t"            \
    "smlad  %[a1], %[Y], %[" P "], %[" A1IN "]\n\t"          \
    "ldr    %[X], [%[x], #" O "+8" OFS "]\n\t"                \
    "smlab" H " %[a1], %[X], %[" Q "], %[a1]\n\t"
#define EB_DWS_S2_PAIR(O, RS)                                 \
    EB_DWS_S2_ROW(#O, "", "p0", "q0", "b", "b2", "b2")        \
    EB_DWS_S2_ROW(#O, "+" #RS, "p1", "q0", "t", "a0", "a1")   \
    EB_DWS_S2_ROW(#O, "+2*" #RS, "p2", "q1", "b", "a0", "a1") \
    "strd   %[a0], %[a1], [%[ap]], #8\n\t"

/* the pinned registers and the loop around a line's unrolled pairs (PAIRS), the
 * pointer stepped by STEP bytes a line */
#define EB_DWS_KERNEL(NAME, PAIRS, STEP)                                                                  \
    static EB_NOINLINE void NAME(const int16_t *x, const uint32_t *w, int32_t *acc, int32_t *end)         \
    {                                                                                                      \
        register const int16_t *xp __asm__("r0") = x;                                                      \
        register int32_t *ap __asm__("r1") = acc;                                                          \
        register int32_t *ae __asm__("r2") = end;                                                          \
        register uint32_t b2 __asm__("r3") = w[6];                                                         \
        register uint32_t w0 __asm__("r4") = w[0];                                                         \
        register uint32_t w1 __asm__("r5") = w[1];                                                         \
        register uint32_t w2 __asm__("r6") = w[2];                                                         \
        register uint32_t w3 __asm__("r7") = w[3];                                                         \
        register uint32_t w4 __asm__("r8") = w[4];                                                         \
        register uint32_t w5 __asm__("r9") = w[5];                                                         \
        register int32_t a0 __asm__("r10");                                                                \
        register int32_t a1 __asm__("r11");                                                                \
        register uint32_t X __asm__("r12");                                                                \
        register uint32_t Y __asm__("lr");                                                                 \
        __asm__ volatile("1:\n\t" PAIRS "add    %[x], %[x], #" STEP "\n\t"                                   \
                         "cmp    %[ap], %[end]\n\t"                                                        \
                         "bne    1b\n\t"                                                                   \
                         : [x] "+r"(xp), [ap] "+r"(ap), [a0] "=&r"(a0), [a1] "=&r"(a1), [X] "=&r"(X),      \
                           [Y] "=&r"(Y)                                                                    \
                         : [end] "r"(ae), [b2] "r"(b2), [p0] "r"(w0), [q0] "r"(w1), [p1] "r"(w2),          \
                           [q1] "r"(w3), [p2] "r"(w4), [q2] "r"(w5)                         \
                         : "cc", "memory");                                                                \
    }

/* variants: NP pairs a line; stride 1 rows RS = 2 * WP = 4 * NP + 4 bytes apart, the
 * next line one row further; stride 2 rows 8 * NP + 4 bytes apart, the next line two
 * rows further */
EB_DWS_KERNEL(eb_dws_s1_np2, EB_DWS_S1_PAIR(0, 12) EB_DWS_S1_PAIR(4, 12), "12")
EB_DWS_KERNEL(eb_dws_s1_np3, EB_DWS_S1_PAIR(0, 16) EB_DWS_S1_PAIR(4, 16) EB_DWS_S1_PAIR(8, 16), "16")
EB_DWS_KERNEL(eb_dws_s1_np6, EB_DWS_S1_PAIR(0, 28) EB_DWS_S1_PAIR(4, 28) EB_DWS_S1_PAIR(8, 28)
                                 EB_DWS_S1_PAIR(12, 28) EB_DWS_S1_PAIR(16, 28) EB_DWS_S1_PAIR(20, 28), "28")
EB_DWS_KERNEL(eb_dws_s2_np1, EB_DWS_S2_PAIR(0, 12), "24")
EB_DWS_KERNEL(eb_dws_s2_np2, EB_DWS_S2_PAIR(0, 20) EB_DWS_S2_PAIR(8, 20), "40")
EB_DWS_KERNEL(eb_dws_s2_np3, EB_DWS_S2_PAIR(0, 28) EB_DWS_S2_PAIR(8, 28) EB_DWS_S2_PAIR(16, 28), "56")
EB_DWS_KERNEL(eb_dws_s2_np4, EB_DWS_S2_PAIR(0, 36) EB_DWS_S2_PAIR(8, 36) EB_DWS_S2_PAIR(16, 36)
                                 EB_DWS_S2_PAIR(24, 36), "72")
#undef EB_DWS_KERNEL
#undef EB_DWS_S1_PAIR
#undef EB_DWS_S2_PAIR
#undef EB_DWS_S2_ROW

/* kernel of a tile's lines of 2 NP sums: [stride - 1][NP - 1] (stride 1: tiles of 12
 * outputs across and a last one of 3..6, or one tile of 3..6; stride 2: tiles of up
 * to 8 outputs across) */
typedef void (*eb_dws_fn)(const int16_t *x, const uint32_t *w, int32_t *acc, int32_t *end);
#define EB_DWS_NP_MAX 6
static const eb_dws_fn eb_dws_fns[2][EB_DWS_NP_MAX] = {
    {0, eb_dws_s1_np2, eb_dws_s1_np3, 0, 0, eb_dws_s1_np6},
    {eb_dws_s2_np1, eb_dws_s2_np2, eb_dws_s2_np3, eb_dws_s2_np4, 0, 0},
};

/* (lo.bottom, hi.bottom) and (lo.top, hi.top) as one word: PKHBT, PKHTB */
static inline uint32_t eb_dws_bb(uint32_t lo, uint32_t hi)
{
    uint32_t r;
    __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(lo), "r"(hi));
    return r;
}
static inline uint32_t eb_dws_tt(uint32_t lo, uint32_t hi)
{
    uint32_t r;
    __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(r) : "r"(hi), "r"(lo));
    return r;
}

/* The row steps of eb_dws_widen4's loop (bytes): source and destination from the end
 * of a row's pairs to the next row's start, and a row's pairs in the destination; its
 * address goes into the asm as an immediate */
static struct {
    int32_t ds, de, pb;
} eb_dws_wctl;

/* The inside of four channels' planes (channels c..c+3 of the input words at s):
 * nr input rows (row stride rs bytes) of nc positions (position stride C bytes) to
 * d (plane row stride wp, planes psz int16 apart). Per two positions one LDR each,
 * SXTB16 of bytes 0/2 (A) and 1/3 (B), and the halves of the two paired per plane:
 *   plane 0: (A.lo, A'.lo)  plane 1: (B.lo, B'.lo)  plane 2: (A.hi, A'.hi)  plane 3: (B.hi, B'.hi)
 * (A', B' of the second word; PKHBT/PKHTB), four single STRs (a plane line's inside
 * may start at an odd position): 16 instructions per 8 elements with the loop, 10
 * from one row to the next (all rows in one asm loop; registers pinned, all 14). An
 * odd last position is widened afterwards, row by row. */
static EB_NOINLINE void eb_dws_widen4(const int8_t *s, int32_t C, int32_t rs, int32_t nr, int32_t nc, int16_t *d,
                                      int32_t wp, int32_t psz)
{
    const int32_t np = nc >> 1;
    if (np > 0 && nr > 0) {
        register const int8_t *sp __asm__("r0") = s;
        register int16_t *e __asm__("r1") = d;
        register int32_t cs __asm__("r2") = C;
        register int32_t p1 __asm__("r3") = 2 * psz;
        register int32_t p2 __asm__("r4") = 4 * psz;
        register int32_t p3 __asm__("r5") = 6 * psz;
        register int16_t *stop __asm__("r6") = d + 2 * np;
        register uint32_t v0 __asm__("r7");
        register uint32_t v1 __asm__("r8");
        register uint32_t a __asm__("r9");
        register uint32_t b __asm__("r10");
        register uint32_t t __asm__("r11");
        register int32_t n __asm__("r12") = nr;
        register uint32_t X __asm__("lr");
        eb_dws_wctl.ds = rs - 2 * np * C;
        eb_dws_wctl.de = 2 * wp - 4 * np;
        eb_dws_wctl.pb = 4 * np;
        __asm__ volatile(
            "1:\n\t"
            "ldr    %[v0], [%[s]]\n\t"
            "ldr    %[v1], [%[s], %[C]]\n\t"
            "add    %[s], %[s], %[C], lsl #1\n\t"
            "sxtb16 %[a], %[v0]\n\t"
            "sxtb16 %[b], %[v1]\n\t"
            "sxtb16 %[v0], %[v0], ror #8\n\t"
            "sxtb16 %[v1], %[v1], ror #8\n\t"
            "pkhbt  %[t], %[a], %[b], lsl #16\n\t"
            "pkhtb  %[a], %[b], %[a], asr #16\n\t"
            "pkhbt  %[b], %[v0], %[v1], lsl #16\n\t"
            "pkhtb  %[v0], %[v1], %[v0], asr #16\n\t"
            "str    %[b], [%[e], %[p1]]\n\t"
            "str    %[a], [%[e], %[p2]]\n\t"
            "str    %[v0], [%[e], %[p3]]\n\t"
            "str    %[t], [%[e]], #4\n\t"
            "cmp    %[e], %[stop]\n\t"
            "bne    1b\n\t"
            "movw   %[X], #:lower16:%c[ctl]\n\t"
            "movt   %[X], #:upper16:%c[ctl]\n\t"
            "ldr    %[t], [%[X]]\n\t"
            "add    %[s], %[s], %[t]\n\t"
            "ldr    %[t], [%[X], #4]\n\t"
            "add    %[e], %[e], %[t]\n\t"
            "ldr    %[t], [%[X], #8]\n\t"
            "add    %[stop], %[e], %[t]\n\t"
            "subs   %[n], %[n], #1\n\t"
            "bne    1b\n\t"
            : [s] "+r"(sp), [e] "+r"(e), [stop] "+r"(stop), [n] "+r"(n), [v0] "=&r"(v0), [v1] "=&r"(v1),
              [a] "=&r"(a), [b] "=&r"(b), [t] "=&r"(t), [X] "=&r"(X)
            : [C] "r"(cs), [p1] "r"(p1), [p2] "r"(p2), [p3] "r"(p3), [ctl] "i"(&eb_dws_wctl)
            : "cc", "memory");
    }
    if (nc & 1) {
        const int8_t *sp = s + (size_t)(nc - 1) * C;
        int16_t *e = d + nc - 1;
        for (; nr > 0; nr--) {
            e[0] = sp[0];
            e[psz] = sp[1];
            e[2 * psz] = sp[2];
            e[3 * psz] = sp[3];
            sp += rs;
            e += wp;
        }
    }
}

/* both int16 lanes doubled (SADD16) */
static inline uint32_t eb_dws_dbl(uint32_t v)
{
    return (uint32_t)__sadd16((int16x2_t)v, (int16x2_t)v);
}

/* The weight words of four channels (the taps' words at f, f + fs, ..., f + 8 fs:
 * [kh][kw] order, four channels a word), doubled (SADD16 of the SXTB16 lanes) for
 * the sums t = 2 * (acc + bias): w[k] for channel k in the kernel's order (stride 1:
 * (w0, w1), (w1, w2) per row; stride 2: (w0, w1) per row, w2 of rows 0 and 1, w2 of
 * row 2). Channels 0 and 2 come from the low and high lanes of SXTB16 of bytes 0/2,
 * 1 and 3 of bytes 1/3; a pair of taps is one PKHBT (low lanes) or PKHTB (high). */
static EB_NOINLINE void eb_dws_pack4(const int8_t *f, int32_t fs, int32_t st, uint32_t (*w)[8])
{
    int32_t r;
    if (st == 1) {
        /* row by row: the three taps' words, their lanes doubled, then (w0, w1) and
         * (w1, w2) of each channel */
        for (r = 0; r < 3; r++) {
            const uint32_t v0 = eb_ldw(f), v1 = eb_ldw(f + fs), v2 = eb_ldw(f + 2 * fs);
            const uint32_t a0 = eb_dws_dbl((uint32_t)eb_sx02(v0)), b0 = eb_dws_dbl((uint32_t)eb_sx13(v0));
            const uint32_t a1 = eb_dws_dbl((uint32_t)eb_sx02(v1)), b1 = eb_dws_dbl((uint32_t)eb_sx13(v1));
            const uint32_t a2 = eb_dws_dbl((uint32_t)eb_sx02(v2)), b2 = eb_dws_dbl((uint32_t)eb_sx13(v2));
            w[0][2 * r] = eb_dws_bb(a0, a1);
            w[0][2 * r + 1] = eb_dws_bb(a1, a2);
            w[1][2 * r] = eb_dws_bb(b0, b1);
            w[1][2 * r + 1] = eb_dws_bb(b1, b2);
            w[2][2 * r] = eb_dws_tt(a0, a1);
            w[2][2 * r + 1] = eb_dws_tt(a1, a2);
            w[3][2 * r] = eb_dws_tt(b0, b1);
            w[3][2 * r + 1] = eb_dws_tt(b1, b2);
            f += 3 * fs;
        }
    } else {
        /* (w0, w1) of each row, then w2 of rows 0 and 1 paired, w2 of row 2 */
        uint32_t a2[3], b2[3];
        for (r = 0; r < 3; r++) {
            const uint32_t v0 = eb_ldw(f), v1 = eb_ldw(f + fs), v2 = eb_ldw(f + 2 * fs);
            const uint32_t a0 = eb_dws_dbl((uint32_t)eb_sx02(v0)), b0 = eb_dws_dbl((uint32_t)eb_sx13(v0));
            const uint32_t a1 = eb_dws_dbl((uint32_t)eb_sx02(v1)), b1 = eb_dws_dbl((uint32_t)eb_sx13(v1));
            a2[r] = eb_dws_dbl((uint32_t)eb_sx02(v2));
            b2[r] = eb_dws_dbl((uint32_t)eb_sx13(v2));
            w[0][2 * r] = eb_dws_bb(a0, a1);
            w[1][2 * r] = eb_dws_bb(b0, b1);
            w[2][2 * r] = eb_dws_tt(a0, a1);
            w[3][2 * r] = eb_dws_tt(b0, b1);
            f += 3 * fs;
        }
        w[0][1] = eb_dws_bb(a2[0], a2[1]);
        w[1][1] = eb_dws_bb(b2[0], b2[1]);
        w[2][1] = eb_dws_tt(a2[0], a2[1]);
        w[3][1] = eb_dws_tt(b2[0], b2[1]);
        w[0][3] = a2[2];
        w[1][3] = b2[2];
        w[2][3] = a2[2] >> 16;
        w[3][3] = b2[2] >> 16;
        w[0][5] = w[1][5] = w[2][5] = w[3][5] = 0;
    }
}

/* the same for cn < 4 channels (the last channels when C % 4 != 0), one at a time */
static EB_NOINLINE void eb_dws_widen_tail(const int8_t *s, int32_t C, int32_t rs, int32_t nr, int32_t nc, int16_t *d,
                                          int32_t wp, int32_t psz, int32_t cn)
{
    int32_t k, r, j;
    for (k = 0; k < cn; k++) {
        for (r = 0; r < nr; r++) {
            for (j = 0; j < nc; j++) {
                d[(size_t)k * psz + (size_t)r * wp + j] = s[(size_t)r * rs + (size_t)j * C + k];
            }
        }
    }
}

/* The plane geometry of a tile of th lines of lines of np pairs: plane line WP int16
 * (the kernel variant's), R plane lines */
#define EB_DWS_WP(st, np) ((st) == 1 ? 2 * (np) + 2 : 4 * (np) + 2)
#define EB_DWS_R(st, th) ((st) == 1 ? (th) + 2 : 2 * (th) + 1)

/* One tile of outputs: lines y0..y0+th-1, columns x0..x0+tw-1, all channels. Plane
 * position (r, j) of the tile is input (iy0 + r, ix0 + j), iy0 = st * y0 - ph,
 * ix0 = st * x0 - pw; the plane positions outside the input hold the zero point
 * (written once per tile: the inside is rewritten for every group of channels). */
static EB_NOINLINE void eb_dws_tile(const eb_conv_params *p, const int8_t *in_b, int8_t *out_b, int32_t y0,
                                    int32_t th, int32_t x0, int32_t tw, uint32_t zz)
{
    const int32_t C = p->in.c, Hi = p->in.h, Wi = p->in.w, Wo = p->out.w, st = p->sw;
    const int32_t np = (tw + 1) >> 1, lp2 = 2 * np;
    const int32_t wp = EB_DWS_WP(st, np), R = EB_DWS_R(st, th), psz = R * wp;
    const int32_t iy0 = st * y0 - p->ph, ix0 = st * x0 - p->pw;
    /* the inside: plane lines [r0, r1), columns [j0, j1) */
    const int32_t r0 = iy0 < 0 ? -iy0 : 0, r1 = Hi - iy0 < R ? Hi - iy0 : R;
    const int32_t j0 = ix0 < 0 ? -ix0 : 0, j1 = Wi - ix0 < wp ? Wi - ix0 : wp;
    const eb_dws_fn fn = eb_dws_fns[st - 1][np - 1];
    int16_t *const plane = (int16_t *)(void *)eb_dsp_buf;
    int32_t *const acc = (int32_t *)(void *)(plane + 4 * psz);
    int32_t *const last = acc + (size_t)th * lp2;
    int8_t *const out_t = out_b + ((size_t)y0 * Wo + x0) * C;
    uint32_t w[4][8];
    int32_t c;
    if (r0 > 0 || j0 > 0 || r1 < R || j1 < wp) {
        uint32_t *z = (uint32_t *)(void *)plane;
        uint32_t *const zend = (uint32_t *)(void *)acc;
        while (z < zend) {
            *z++ = zz;
        }
    }
    /* the requantisation's line steps (eb_depthwise_rq_dsp.c): lines of tw outputs Wo * C
     * bytes apart (an odd line's last sum is followed by an unused one); when the tile
     * is the plane's width and even, its sums and outputs are one run */
    if (tw == Wo && !(tw & 1)) {
        eb_dw_rqctl.pair_bytes = 4 * th * tw;
        eb_dw_rqctl.dstep = 0;
        eb_dw_rqctl.odd = 0;
    } else {
        eb_dw_rqctl.pair_bytes = 4 * (tw & ~1);
        eb_dw_rqctl.dstep = (Wo - (tw & ~1)) * C;
        eb_dw_rqctl.odd = tw & 1;
    }
    for (c = 0; c < C; c += 4) {
        const int32_t cn = C - c < 4 ? C - c : 4;
        int32_t k;
        if (r1 > r0 && j1 > j0) {
            const int8_t *const src = in_b + ((size_t)(iy0 + r0) * Wi + ix0 + j0) * C + c;
            int16_t *const d = plane + (size_t)r0 * wp + j0;
            if (cn == 4) {
                eb_dws_widen4(src, C, Wi * C, r1 - r0, j1 - j0, d, wp, psz);
            } else {
                eb_dws_widen_tail(src, C, Wi * C, r1 - r0, j1 - j0, d, wp, psz, cn);
            }
        }
        if (cn == 4) {
            eb_dws_pack4(p->filter + c, C, st, w);
        } else {
            /* the last channels' taps, padded to words (no read past the filter) */
            int8_t ft[9][4] = {{0}};
            int32_t t;
            for (t = 0; t < 9; t++) {
                for (k = 0; k < cn; k++) {
                    ft[t][k] = p->filter[(size_t)t * C + c + k];
                }
            }
            eb_dws_pack4(&ft[0][0], 4, st, w);
        }
        for (k = 0; k < cn; k++) {
            const int32_t ch = c + k;
            const int32_t bias = eb_ld32(p->chan + 4 * ch);
            const int32_t m = eb_ld32(p->chan + 4 * ((size_t)C + ch));
            const int32_t shift = eb_ld32(p->chan + 4 * (2 * (size_t)C + ch));
            /* eb_dw_rq_lines_t's case (eb_depthwise_conv_dsp.c): the doubled sums
             * with the bias fit int32 */
            const int fast = m > 0 && shift <= -2 && shift >= -22 && bias < (1 << 29) && bias > -(1 << 29);
            w[k][6] = fast ? (uint32_t)bias << 1 : 0u;
            fn(plane + (size_t)k * psz, w[k], acc, last);
            if (fast) {
                /* doubled sums with the bias: hc = 2^(e-1) + out_offset * 2^e */
                const int32_t e = -shift;
                const int32_t hc = (int32_t)((1u << (uint32_t)(e - 1)) + ((uint32_t)p->out_offset << e));
                if (e >= EB_DW_RQE_MIN && e <= EB_DW_RQE_MAX) {
                    eb_dw_rq_e[e - EB_DW_RQE_MIN](acc, last, out_t + ch, C, m, hc);
                } else {
                    eb_dw_rq_lines_t(acc, last, out_t + ch, C, m, hc, e, 0);
                }
            } else {
                /* the doubled sums without the bias halved (exact: every product is
                 * even), then the C requantisation */
                eb_rq q;
                int32_t *a;
                for (a = acc; a < last; a++) {
                    *a >>= 1;
                }
                eb_rq_init(&q, m, shift);
                eb_dw_requant_lines(acc, th, tw, bias, &q, p->out_offset, p->act_min, p->act_max, out_t + ch, C,
                                    Wo * C);
            }
        }
    }
}

int eb_dw_small(const eb_conv_params *p, const int8_t *in, int8_t *out)
{
    const int32_t C = p->in.c, Hi = p->in.h, Wi = p->in.w, Ho = p->out.h, Wo = p->out.w;
    const int32_t st = p->sw;
    const int16_t zp = (int8_t)(0u - (uint32_t)p->in_offset);
    const uint32_t zz = (uint16_t)zp | ((uint32_t)(uint16_t)zp << 16);
    int32_t TW, np, wp, lp2, TH, nb, b, y0, x0;
    if (p->depth_mult != 1 || p->kh != 3 || p->kw != 3 || p->dh != 1 || p->dw != 1 || p->sh != st ||
        (st != 1 && st != 2) || p->act_min != -128 || p->act_max != 127) {
        return 0;
    }
    /* stride 1: one tile across of 3..6 outputs and at most 8 lines (longer columns of
     * short lines, e.g. KWS's 25x5, gain nothing), or tiles of 12 across and a last one
     * of 0 or 3..6; stride 2: tiles of 8 across (the last one narrower, not 1) */
    if (st == 1 ? (Wo <= 6 ? Wo < 3 || Ho > 8 : Wo % 12 != 0 && (Wo % 12 < 3 || Wo % 12 > 6)) : Wo < 2) {
        return 0;
    }
    TW = st == 1 ? (Wo <= 6 ? Wo : 12) : (Wo < 8 ? Wo : 8);
    np = (TW + 1) >> 1;
    lp2 = 2 * np;
    wp = EB_DWS_WP(st, np);
    /* tiles of TH lines: four planes of R(TH) lines of wp int16 and TH lines of lp2 sums
     * in the scratch; nb bands of equal height */
    TH = st == 1 ? ((int32_t)EB_DSP_SCRATCH_BYTES - 16 * wp) / (8 * wp + 4 * lp2)
                 : ((int32_t)EB_DSP_SCRATCH_BYTES - 8 * wp) / (16 * wp + 4 * lp2);
    if (TH < 1) {
        return 0;
    }
    nb = (Ho + TH - 1) / TH;
    TH = (Ho + nb - 1) / nb;
    for (b = 0; b < p->out.n; b++) {
        const int8_t *in_b = in + (size_t)b * Hi * Wi * C;
        int8_t *out_b = out + (size_t)b * Ho * Wo * C;
        for (y0 = 0; y0 < Ho; y0 += TH) {
            const int32_t th = Ho - y0 < TH ? Ho - y0 : TH;
            int32_t tw;
            for (x0 = 0; x0 < Wo; x0 += tw) {
                /* no tile of one output (the requantisation's lines hold a pair at least):
                 * a remainder of one takes one from the tile before it */
                tw = Wo - x0 < TW ? Wo - x0 : TW;
                tw -= Wo - x0 - tw == 1;
                eb_dws_tile(p, in_b, out_b, y0, th, x0, tw, zz);
            }
        }
    }
    return 1;
}
