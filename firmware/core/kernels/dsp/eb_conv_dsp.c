/*
 * eb_conv_dsp.c - CONV_2D on cores with the DSP extension (the kernel set of
 * kernels/dsp/, see eb_dsp.c): two output pixels at a time, their receptive
 * fields widened to int16 once, hand-scheduled SMLAD loops over the blocked
 * filter. eb_conv_s8_opt returns 0 (the portable kernel runs) when a layer's
 * working set does not fit the scratch: 4*K + 8*OC + max(K, OC) + 4 bytes,
 * K = KH*KW*IC.
 */
#include "eb_conv_dsp.h"

/* ---- CONV_2D --------------------------------------------------------------
 * Two output pixels at a time. Their receptive fields (K = KH*KW*IC int8
 * values each, gathered with padding as the portable kernel does) are widened
 * to int16 once, interleaved by groups of four elements:
 *   word 4g+0: px0 (x[4g], x[4g+2])   word 4g+1: px0 (x[4g+1], x[4g+3])
 *   word 4g+2: px1 (x[4g], x[4g+2])   word 4g+3: px1 (x[4g+1], x[4g+3])
 * which is the order SXTB16 and SXTB16 ROR 8 give for four weight bytes. The
 * K % 4 last elements follow as int16, px0's then px1's. Every output channel
 * pair then costs, per four elements: four words of x, two of weights, four
 * SXTB16 and eight SMLAD (16 MACs). */

static inline void eb_widen_field(const int8_t *src, int32_t G, int32_t R, uint32_t *q, int16_t *tail,
                                  int slot)
{
    uint32_t *d = q + 2 * slot;
    int32_t g, i;
    for (g = 0; g < G; g++) {
        const uint32_t v = eb_ldw(src);
        d[0] = (uint32_t)eb_sx02(v);
        d[1] = (uint32_t)eb_sx13(v);
        d += 4;
        src += 4;
    }
    for (i = 0; i < R; i++) {
        tail[slot * R + i] = src[i];
    }
}

/* ng >= 1 groups of four int8 at src widened into slot words d[0], d[1], then
 * d += 4 (eb_widen_field's layout, no tail): 6 instructions per group, two
 * groups a pass (an odd count runs one group first). */
static void eb_widen_run(const int8_t *src, int32_t ng, uint32_t *d)
{
    const int8_t *const end = src + 4 * ng;
    uint32_t v, e, o, v2;
    if (ng & 1) {
        v = eb_ldw(src);
        d[0] = (uint32_t)eb_sx02(v);
        d[1] = (uint32_t)eb_sx13(v);
        d += 4;
        src += 4;
    }
    if (src == end) {
        return;
    }
    __asm__ volatile(
        "1:\n\t"
        "ldr    %[v], [%[s]], #4\n\t"
        "ldr    %[v2], [%[s]], #4\n\t"
        "sxtb16 %[e], %[v]\n\t"
        "sxtb16 %[o], %[v], ror #8\n\t"
        "str    %[e], [%[d]]\n\t"
        "str    %[o], [%[d], #4]\n\t"
        "sxtb16 %[e], %[v2]\n\t"
        "sxtb16 %[o], %[v2], ror #8\n\t"
        "str    %[e], [%[d], #16]\n\t"
        "str    %[o], [%[d], #20]\n\t"
        "add    %[d], %[d], #32\n\t"
        "cmp    %[s], %[end]\n\t"
        "bne    1b\n\t"
        : [s] "+r"(src), [d] "+r"(d), [v] "=&r"(v), [v2] "=&r"(v2), [e] "=&r"(e), [o] "=&r"(o)
        : [end] "r"(end)
        : "cc", "memory");
}

/* The field of the pixel whose window starts at (iy0, ix0), when its columns
 * are inside the input (dilation 1 along W) and a kernel row is whole groups
 * (KW*C % 4 == 0): widened straight from the input rows, rows outside it as
 * the zero point's pair zz, no im2col copy. */
static void eb_widen_rows(const eb_conv_params *p, const int8_t *in_b, int32_t iy0, int32_t ix0, uint32_t zz,
                          uint32_t *q, int slot)
{
    const int32_t W = p->in.w, C = p->in.c, H = p->in.h;
    const int32_t ng = (p->kw * C) >> 2;
    uint32_t *d = q + 2 * slot;
    int32_t ky, g;
    for (ky = 0; ky < p->kh; ky++) {
        const int32_t iy = iy0 + ky * p->dh;
        if (iy < 0 || iy >= H) {
            for (g = 0; g < ng; g++) {
                d[0] = zz;
                d[1] = zz;
                d += 4;
            }
            continue;
        }
        eb_widen_run(in_b + ((size_t)iy * W + ix0) * C, ng, d);
        d += 4 * ng;
    }
}

/* The field of the output pixel whose window starts at (iy0, ix0) in the batch at
 * in_b, widened into slot `slot` of xq (and xt, R's tail): from the input rows
 * (eb_widen_rows) where `rows` and its columns are inside the input, else from the
 * pixel itself (`direct`, a 1x1 window without padding) or its im2col copy in col
 * (pad: the input zero point), by the asm run when K is whole groups (R == 0, G > 0);
 * W and C: the input's width and channels (p's, passed as the caller keeps them).
 * The two-pixel loops of eb_conv_wide (R == 0) and eb_conv_s8_opt, one call a slot;
 * an odd last pixel is widened into both (its im2col done twice, once a layer). One
 * inlined copy a loop instead of one a branch and slot: eb_conv_s8_opt 216 bytes
 * smaller (M4), ResNet-8 -0.06% instructions on M4, -0.20% on M7. */
static EB_ALWAYS_INLINE void eb_widen_pixel(const eb_conv_params *p, int32_t W, int32_t C, const int8_t *in_b,
                                            int32_t iy0, int32_t ix0, int rows, int direct, int8_t pad,
                                            uint32_t zz, int32_t G, int32_t R, int8_t *col, uint32_t *xq,
                                            int16_t *xt, int slot)
{
    const int8_t *src;
    if (rows && ix0 >= 0 && ix0 + p->kw <= W) {
        eb_widen_rows(p, in_b, iy0, ix0, zz, xq, slot);
        return;
    }
    if (direct) {
        src = in_b + ((size_t)iy0 * W + ix0) * C;
    } else {
        eb_im2col(p, in_b, iy0, ix0, pad, col);
        src = col;
    }
    if (R == 0 && G > 0) {
        /* the asm run: 6 instructions a group instead of 8 */
        eb_widen_run(src, G, xq + 2 * slot);
    } else {
        eb_widen_field(src, G, R, xq, xt, slot);
    }
}

/* a[0..3] += (row a . px0, row a . px1, row b . px0, row b . px1) over G
 * groups; row b's weight words are `boff` bytes after row a's, rows advance by
 * `step` bytes per group (16 in the blocked layout, 4 for plain rows). */
static EB_ALWAYS_INLINE void eb_mm2x2(const uint32_t *xq, int32_t G, const int8_t *wa, int32_t boff,
                                      int32_t step, int32_t *a)
{
    int32_t a00 = a[0], a01 = a[1], a10 = a[2], a11 = a[3];
    const uint32_t *const xend = xq + 4 * G;
    while (xq < xend) {
        const uint32_t x0e = xq[0], x0o = xq[1], x1e = xq[2], x1o = xq[3];
        const uint32_t va = eb_ldw(wa), vb = eb_ldw(wa + boff);
        int32_t e = eb_sx02(va), o = eb_sx13(va);
        a00 = __smlad(e, (int32_t)x0e, a00);
        a00 = __smlad(o, (int32_t)x0o, a00);
        a01 = __smlad(e, (int32_t)x1e, a01);
        a01 = __smlad(o, (int32_t)x1o, a01);
        e = eb_sx02(vb);
        o = eb_sx13(vb);
        a10 = __smlad(e, (int32_t)x0e, a10);
        a10 = __smlad(o, (int32_t)x0o, a10);
        a11 = __smlad(e, (int32_t)x1e, a11);
        a11 = __smlad(o, (int32_t)x1o, a11);
        xq += 4;
        wa += step;
    }
    a[0] = a00;
    a[1] = a01;
    a[2] = a10;
    a[3] = a11;
}

/* eb_mm2x2 for two rows of a block of the blocked layout (boff 4, step 16),
 * hand-scheduled: one LDM for the four words of x, 17 instructions per 16
 * MACs. Registers are pinned so that the LDM list is in ascending order. */
static void eb_mm2x2_blocked(const uint32_t *xq, int32_t G, const int8_t *wa, int32_t *acc)
{
    register const uint32_t *rx __asm__("r0") = xq;
    register const uint32_t *rend __asm__("r1") = xq + 4 * G;
    register const int8_t *rw __asm__("lr") = wa;
    register int32_t a00 __asm__("r6") = acc[0];
    register int32_t a01 __asm__("r8") = acc[1];
    register int32_t a10 __asm__("r9") = acc[2];
    register int32_t a11 __asm__("r10") = acc[3];
    register uint32_t x0e __asm__("r2"), x0o __asm__("r3"), x1e __asm__("r4"), x1o __asm__("r5");
    register uint32_t v __asm__("r11"), t __asm__("r12");
    if (G > 0) {
        __asm__ volatile(
            "1:\n\t"
            EB_MM_GROUP
            "cmp    %[x], %[end]\n\t"
            "bne    1b\n\t"
            : [x] "+r"(rx), [w] "+r"(rw), [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10),
              [a11] "+r"(a11), [x0e] "=&r"(x0e), [x0o] "=&r"(x0o), [x1e] "=&r"(x1e), [x1o] "=&r"(x1o),
              [v] "=&r"(v), [t] "=&r"(t)
            : [end] "r"(rend)
            : "cc", "memory");
    }
    acc[0] = a00;
    acc[1] = a01;
    acc[2] = a10;
    acc[3] = a11;
}

/* The K % 4 last products of rows a and b (tails ta, tb) for both pixels. */
static inline void eb_mm2x2_tail(const int16_t *xt, int32_t R, const int8_t *ta, const int8_t *tb,
                                 int32_t *a)
{
    int32_t i;
    for (i = 0; i < R; i++) {
        a[0] = eb_mac(a[0], xt[i], ta[i]);
        a[1] = eb_mac(a[1], xt[R + i], ta[i]);
        a[2] = eb_mac(a[2], xt[i], tb[i]);
        a[3] = eb_mac(a[3], xt[R + i], tb[i]);
    }
}

/* requantise acc[2*u] (px0) and acc[2*u+1] (px1) of every channel u into o0
 * and o1. The common case (no fused clamp inside int8, 2 <= e <= 21) folds the
 * output offset into the SMLAL constant as eb_dw_requant does. */
static EB_NOINLINE void eb_conv_requant(const int32_t *acc, int32_t OC, const uint8_t *mult,
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
static EB_NOINLINE void eb_conv_requant_tbl(const int32_t *acc, int32_t OC, const int32_t *tbl, int8_t *o0,
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
static EB_NOINLINE void eb_conv_requant_fix(const int32_t *acc, int8_t *o0, int8_t *o1)
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

/* Both pixels' outputs into o0 and o1 (o1 NULL: an odd last pixel, whose second
 * outputs go to the spare row col) from the sums acc of every channel, by the layer's
 * requantisation: use_tbl 2 the doubled-sum table of eb_requant_table2 (3: and its
 * fix-up list after it; fixes is 0, a constant, where the caller built the table
 * without a list and use_tbl is never 3), 1 the table of eb_requant_table, 0 the
 * per-channel multipliers and shifts. o1 ? o1 : col in each branch: computed once
 * before them, GCC spent one more instruction a pixel pair (ResNet-8 +0.009%). */
static EB_ALWAYS_INLINE void eb_conv_out_pair(const eb_conv_params *p, int32_t OC, const int32_t *acc,
                                              const int32_t *tbl, int use_tbl, int fixes, int8_t *o0, int8_t *o1,
                                              int8_t *col)
{
    if (fixes ? use_tbl >= 2 : use_tbl == 2) {
        eb_conv_requant_tbl2(acc, OC, tbl, o0, o1 ? o1 : col);
        if (fixes && use_tbl == 3) {
            eb_conv_requant_fix(acc, o0, o1 ? o1 : col);
        }
        return;
    }
    if (use_tbl) {
        eb_conv_requant_tbl(acc, OC, tbl, o0, o1 ? o1 : col);
        return;
    }
    eb_conv_requant(acc, OC, p->chan + 4 * (size_t)OC, p->chan + 8 * (size_t)OC, p->out_offset, p->act_min,
                    p->act_max, o0, o1 ? o1 : col);
}

/* The field order of eb_conv_padded. Plain: the K values of im2col, then zeros up to
 * Kp = K rounded up to four. By rows (KW*C = r = 4*gr + lft with 0 < lft and
 * KH*lft <= 4, a 3x3 three-channel stem: r = 9, gr = 2, lft = 1): each kernel row's
 * first 4*gr values (gr whole groups, which a window inside the input supplies as
 * words straight from its input row), then the rows' lft last values together in
 * one more group, zeros after them. Both orders have Kp / 4 groups. The position q
 * of the field holds element eb_field_k(q) of the im2col order, or nothing (-1). */
typedef struct {
    int32_t K, r, gr, lft, rows;
} eb_field_order;

static int32_t eb_field_k(const eb_field_order *f, int32_t q)
{
    const int32_t body = f->rows * 4 * f->gr;
    if (!f->lft) {
        return q < f->K ? q : -1;
    }
    if (q < body) {
        return (q / (4 * f->gr)) * f->r + q % (4 * f->gr);
    }
    q -= body;
    return q < f->rows * f->lft ? (q / f->lft) * f->r + 4 * f->gr + q % f->lft : -1;
}

/* The filter of a layer with K % 4 != 0 (a 3-channel stem: K = 27) and OC % 4 == 0
 * copied into the blocked layout of Gp groups in the field order f, zero weights
 * where the order has no element, so every block runs eb_mm_blocks' asm loop
 * instead of eb_mm2x2_blocked and a scalar tail. The products of the padded
 * weights are zero: the sums, and the outputs, are those of the unpadded filter. */
static void eb_pad_blocks(const int8_t *w, int32_t OC, const eb_field_order *f, int32_t Gp, int8_t *wp)
{
    const int32_t K = f->K, G = K >> 2, R = K & 3;
    int32_t b, g, j, i;
    for (b = 0; b < OC; b += 4) {
        for (g = 0; g < Gp; g++) {
            for (j = 0; j < 4; j++) {
                for (i = 0; i < 4; i++) {
                    const int32_t k = eb_field_k(f, 4 * g + i);
                    *wp++ = k < 0 ? 0 : k < 4 * G ? w[16 * (k >> 2) + 4 * j + (k & 3)] : w[16 * G + R * j + (k - 4 * G)];
                }
            }
        }
        w += 4 * (size_t)K;
    }
}

/* eb_im2col for a window wholly inside the input (dilation 1 along W): the KH rows'
 * runs of KW*C bytes copied a word at a time, no library call (a 3-channel stem's runs
 * are 9 bytes). 0 (nothing written) for a window that reaches the padding. */
static int eb_gather_inside(const eb_conv_params *p, const int8_t *in_b, int32_t iy0, int32_t ix0, int8_t *col)
{
    const int32_t W = p->in.w, C = p->in.c, run = p->kw * C;
    int32_t ky, i;
    if (p->dw != 1 || ix0 < 0 || ix0 + p->kw > W || iy0 < 0 || iy0 + (p->kh - 1) * p->dh >= p->in.h) {
        return 0;
    }
    for (ky = 0; ky < p->kh; ky++) {
        const int8_t *src = in_b + ((size_t)(iy0 + ky * p->dh) * W + ix0) * C;
        for (i = 0; i + 4 <= run; i += 4) {
            uint32_t v;
            EB_COPY4(&v, src + i);
            EB_COPY4(col + i, &v);
        }
        for (; i < run; i++) {
            col[i] = src[i];
        }
        col += run;
    }
    return 1;
}

/* eb_stem3_inside (eb_conv_dsp.h) as a function of its own: the field by rows of a 3x3
 * three-channel window inside the input (s: its first row, rs bytes apart) */
static void eb_widen_stem3(const int8_t *s, int32_t rs, uint32_t *d)
{
    eb_stem3_inside(s, rs, d);
}

/* One pixel's field in eb_conv_padded's order, widened into slot words d (the window
 * at iy0, ix0): by rows straight from the input when the order is by rows and the
 * window inside the input, else through im2col (col), reordered into col2 by the map
 * (Kp positions: the im2col index of each, or -1 for a zero) when by rows. */
static void eb_padded_field(const eb_conv_params *p, const int8_t *in_b, int32_t iy0, int32_t ix0,
                            const int16_t *map, int32_t Gp, int8_t *col, int8_t *col2, uint32_t *d)
{
    const int32_t W = p->in.w, C = p->in.c;
    int32_t q;
    if (map && ix0 >= 0 && ix0 + 3 <= W && iy0 >= 0 && iy0 + 2 * p->dh < p->in.h) {
        eb_widen_stem3(in_b + ((size_t)iy0 * W + ix0) * C, W * C * p->dh, d);
        return;
    }
    if (!eb_gather_inside(p, in_b, iy0, ix0, col)) {
        eb_im2col(p, in_b, iy0, ix0, (int8_t)(0u - (uint32_t)p->in_offset), col);
    }
    if (map) {
        for (q = 0; q < 4 * Gp; q++) {
            col2[q] = map[q] < 0 ? 0 : col[map[q]];
        }
        col = col2;
    }
    eb_widen_run(col, Gp, d);
}

/* Layers with K % 4 != 0: the zero-padded copy of the filter in the field order
 * (eb_pad_blocks) and fields of Kp = K rounded up; 1 when done, 0 when it does not
 * apply or does not fit. Working set: 4*Kp + 8*OC + OC*Kp + max(Kp, OC) + 3*Kp + 12*OC. */
static int eb_conv_padded(const eb_conv_params *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in.h, W = p->in.w, C = p->in.c;
    const int32_t OH = p->out.h, OW = p->out.w, OC = p->out.c;
    const int32_t K = p->kh * p->kw * C, Kp = (K + 3) & ~3, Gp = Kp >> 2;
    const int32_t npix = p->out.n * OH * OW, r = p->kw * C;
    const int32_t ncol = ((Kp > OC ? Kp : OC) + 3) & ~3;
    uint32_t *const xq = eb_dsp_buf;
    int32_t *const acc = (int32_t *)(void *)(xq + 4 * Gp);
    int8_t *const wp = (int8_t *)(void *)(acc + 2 * OC);
    int8_t *const col = wp + (size_t)OC * Kp;        /* Kp bytes, and OC for an odd last pixel */
    int8_t *const col2 = col + ncol;                 /* the field reordered by rows */
    int16_t *const map = (int16_t *)(void *)(col2 + Kp);   /* Kp entries */
    int32_t *const tbl = (int32_t *)(void *)(map + Kp);
    uint32_t *const wt = (uint32_t *)(void *)(tbl + 3 * OC);   /* the widened filter, when it fits */
    eb_field_order f;
    int use_tbl, wide;
    int32_t pi, b = 0, oy = 0, ox = 0;
    if ((K & 3) == 0 || (OC & 3) != 0 || eb_conv_direct(p) ||
        4u * (size_t)Kp + 8u * (size_t)OC + (size_t)OC * Kp + (size_t)ncol + 3u * (size_t)Kp > EB_DSP_SCRATCH_BYTES) {
        return 0;
    }
    f.K = K;
    f.r = r;
    f.gr = r >> 2;
    f.rows = p->kh;
    /* by rows: the 3x3 three-channel stems (eb_widen_stem3) */
    f.lft = p->dw == 1 && p->kw == 3 && C == 3 && p->kh == 3 ? 1 : 0;
    eb_pad_blocks(p->filter, OC, &f, Gp, wp);
    for (pi = 0; pi < Kp; pi++) {
        map[pi] = (int16_t)eb_field_k(&f, pi);
    }
    wide = (size_t)((uint8_t *)(wt + 2 * (size_t)Gp * OC) - (uint8_t *)eb_dsp_buf) <= EB_DSP_SCRATCH_BYTES;
    if (wide) {
        eb_widen_filter(wp, Gp, 0, OC, wt);
    }
    use_tbl = (size_t)((uint8_t *)(tbl + 3 * OC) - (uint8_t *)eb_dsp_buf) <= EB_DSP_SCRATCH_BYTES;
    use_tbl = !use_tbl ? 0
              : eb_requant_table2(OC, p->chan, Kp, p->out_offset, p->act_min, p->act_max, tbl, p, NULL, 0) ? 2
              : eb_requant_table(OC, p->chan + 4 * (size_t)OC, p->chan + 8 * (size_t)OC, p->out_offset,
                                 p->act_min, p->act_max, tbl);
    for (pi = K; pi < Kp; pi++) {
        col[pi] = 0;
    }
    for (pi = 0; pi < npix; pi += 2) {
        int8_t *const o0 = out + (size_t)pi * OC;
        int8_t *const o1 = pi + 1 < npix ? o0 + OC : NULL;
        int32_t slot;
        for (slot = 0; slot < 2; slot++) {
            const int8_t *const in_b = in + (size_t)b * H * W * C;
            const int32_t iy0 = oy * p->sh - p->ph, ix0 = ox * p->sw - p->pw;
            eb_padded_field(p, in_b, iy0, ix0, f.lft ? map : NULL, Gp, col, col2, xq + 2 * slot);
            if (slot == 0 && !o1) {
                eb_padded_field(p, in_b, iy0, ix0, f.lft ? map : NULL, Gp, col, col2, xq + 2);
                break;
            }
            EB_NEXT_PIXEL(b, oy, ox, OH, OW);
        }
        if (wide) {
            eb_mm_pairs_wide(xq, Gp, wt, p->chan, OC >> 1, acc);
        } else {
            eb_mm_blocks(xq, Gp, wp, p->chan, OC >> 2, acc);
        }
        eb_conv_out_pair(p, OC, acc, tbl, use_tbl, 0, o0, o1, col);
    }
    return 1;
}

/* Layers with R == 0 and OC % 4 == 0 whose filter widened to int16 pairs
 * (eb_widen_filter, 2*K*OC bytes) fits the scratch beside the two fields (4K bytes),
 * the im2col column, the requantisation table (12*OC) and the sums (8*OC), in
 * eb_requant_table2's case without fix-ups: every output runs eb_mm_pairs_wide (11
 * instructions per 16 MACs instead of eb_mm_blocks' 15; in the cycle model of
 * edgebench.mcu.cycles 19 cycles a group instead of 20). Only the whole filter at
 * once: in chunks of channels (the pixels once per chunk) the instructions went down
 * further but the cycle estimate up (widening the fields again costs more than the
 * one cycle a group saves). 1 when done, 0 when another path must run. */
static EB_NOINLINE int eb_conv_wide(const eb_conv_params *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in.h, W = p->in.w, C = p->in.c;
    const int32_t OH = p->out.h, OW = p->out.w, OC = p->out.c;
    const int32_t K = p->kh * p->kw * C, G = K >> 2;
    const int32_t npix = p->out.n * OH * OW;
    const int8_t pad = (int8_t)(0u - (uint32_t)p->in_offset);
    /* always 0 since blob format 3 (K % 4 == 0 here, and a direct layer over a multiple
     * of four channels is biased: eb_conv_s8_opt sends it elsewhere first). Kept: without
     * it eb_conv_wide is 64 bytes smaller (M4), the instructions the same within 0.001%,
     * but the code after it moves and the cycle estimate rose (KWS 39.48 -> 39.56 ms). */
    const int direct = eb_conv_direct(p);
    const int rows = !direct && p->dw == 1 && ((p->kw * C) & 3) == 0;
    const uint32_t zz = (uint32_t)(uint16_t)pad * 0x10001u;
    const int32_t ncol = ((K > OC ? K : OC) + 3) & ~3;
    const size_t fixed = 4u * (size_t)K + (size_t)ncol + 12u * (size_t)OC;
    uint32_t *const xq = eb_dsp_buf;
    int8_t *const col = (int8_t *)(void *)(xq + K);
    int32_t *const tbl = (int32_t *)(void *)(col + ncol);
    int32_t *const acc = tbl + 3 * OC;
    int32_t n, c0;
    if ((K & 3) != 0 || G == 0 || (OC & 3) != 0 || fixed >= EB_DSP_SCRATCH_BYTES) {
        return 0;
    }
    n = (int32_t)((EB_DSP_SCRATCH_BYTES - fixed) / (8u + 8u * (size_t)G)) & ~1;
    if (n < OC) {
        return 0;
    }
    n = OC;
    if (!eb_requant_table2(OC, p->chan, K, p->out_offset, p->act_min, p->act_max, tbl, p, NULL, 0)) {
        return 0;
    }
    for (c0 = 0; c0 < OC; c0 += n) {
        const int32_t nc = OC - c0 < n ? OC - c0 : n;
        uint32_t *const wt = (uint32_t *)(void *)(acc + 2 * n);
        int32_t pi, b = 0, oy = 0, ox = 0;
        eb_widen_filter(p->filter, G, c0, nc, wt);
        for (pi = 0; pi < npix; pi += 2) {
            int8_t *const o0 = out + (size_t)pi * OC;
            int8_t *const o1 = pi + 1 < npix ? o0 + OC : NULL;
            int32_t slot;
            for (slot = 0; slot < 2; slot++) {
                const int8_t *in_b = in + (size_t)b * H * W * C;
                const int32_t iy0 = oy * p->sh - p->ph, ix0 = ox * p->sw - p->pw;
                eb_widen_pixel(p, W, C, in_b, iy0, ix0, rows, direct, pad, zz, G, 0, col, xq, NULL, slot);
                if (o1) {   /* else (an odd last pixel) slot 1 widens the same one again */
                    EB_NEXT_PIXEL(b, oy, ox, OH, OW);
                }
            }
            eb_mm_pairs_wide(xq, G, wt, p->chan + 4 * (size_t)c0, nc >> 1, acc);
            eb_conv_requant_tbl2(acc, nc, tbl + 3 * c0, o0 + c0, o1 ? o1 + c0 : col);
        }
    }
    return 1;
}

/* 1 when done, 0 when the working set does not fit EB_DSP_SCRATCH_BYTES */
int eb_conv_s8_opt(const eb_conv_params *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in.h, W = p->in.w, C = p->in.c;
    const int32_t OH = p->out.h, OW = p->out.w, OC = p->out.c;
    const int32_t K = p->kh * p->kw * C, G = K >> 2, R = K & 3;
    const int32_t npix = p->out.n * OH * OW;
    const int8_t pad = (int8_t)(0u - (uint32_t)p->in_offset);
    const int direct = eb_conv_direct(p);
    /* fields widened from the input rows when a kernel row is whole groups */
    const int rows = !direct && p->dw == 1 && ((p->kw * C) & 3) == 0 && G > 0;
    const uint32_t zz = (uint32_t)(uint16_t)pad * 0x10001u;
    const uint8_t *const bias = p->chan;
    uint32_t *const xq = eb_dsp_buf;
    int16_t *const xt = (int16_t *)(void *)(xq + 4 * G);
    int32_t *const acc = (int32_t *)(void *)(xq + 4 * G + R);
    int8_t *const col = (int8_t *)(void *)(acc + 2 * OC);
    int32_t *const tbl = (int32_t *)(void *)(col + (((K > OC ? K : OC) + 3) & ~3));
    int use_tbl;
    uint32_t *fix;
    int32_t maxfix;
    int32_t pi, b = 0, oy = 0, ox = 0;
    /* col also takes the unused second pixel's outputs when the count is odd */
    if (eb_conv_biased(p)) {
        /* blob format 3: a biased filter, which none of the paths below reads;
         * eb_conv_small unbiases it into its table */
        return (K <= 16 && eb_conv_small(p, in, out)) || eb_pointwise_s8(p, in, out);
    }
    if (K <= 16 && eb_conv_small(p, in, out)) {
        return 1;
    }
    if (rows && eb_conv_stem_rows(p, in, out)) {
        return 1;
    }
    if (C == 3 && p->kh == 3 && p->kw == 3 && eb_conv_stem3(p, in, out)) {
        return 1;
    }
    if (R != 0 && eb_conv_padded(p, in, out)) {
        return 1;
    }
    if (R == 0 && eb_conv_wide(p, in, out)) {
        return 1;
    }
    if ((size_t)K * 4u + 8u * (size_t)OC + (size_t)(K > OC ? K : OC) + 4u > EB_DSP_SCRATCH_BYTES) {
        return 0;
    }
    /* the requantisation table when it fits after col */
    use_tbl = (size_t)((uint8_t *)(tbl + 3 * OC) - (uint8_t *)eb_dsp_buf) <= EB_DSP_SCRATCH_BYTES;
    /* the channels outside the table's case fixed up after it, listed after it */
    fix = (uint32_t *)(void *)(tbl + 3 * OC);
    maxfix = use_tbl ? (int32_t)(((uint8_t *)eb_dsp_buf + EB_DSP_SCRATCH_BYTES - (uint8_t *)fix) / 4) : 0;
    use_tbl = !use_tbl ? 0
              : eb_requant_table2(OC, p->chan, K, p->out_offset, p->act_min, p->act_max, tbl, p, fix, maxfix) ? 2 + (eb_conv_fix.n > 0)
              : eb_requant_table(OC, p->chan + 4 * (size_t)OC, p->chan + 8 * (size_t)OC, p->out_offset,
                                 p->act_min, p->act_max, tbl);
    for (pi = 0; pi < npix; pi += 2) {
        int8_t *const o0 = out + (size_t)pi * OC;
        int8_t *const o1 = pi + 1 < npix ? o0 + OC : NULL;
        const int8_t *w = p->filter;
        int32_t slot, u;
        /* gather and widen the two fields (the last odd pixel twice) */
        for (slot = 0; slot < 2; slot++) {
            const int8_t *in_b = in + (size_t)b * H * W * C;
            const int32_t iy0 = oy * p->sh - p->ph, ix0 = ox * p->sw - p->pw;
            eb_widen_pixel(p, W, C, in_b, iy0, ix0, rows, direct, pad, zz, G, R, col, xq, xt, slot);
            if (o1) {   /* else (an odd last pixel) slot 1 widens the same one again */
                EB_NEXT_PIXEL(b, oy, ox, OH, OW);
            }
        }
        /* blocks of four channels (blob's blocked layout): two pairs each */
        u = 0;
        if (R == 0 && G > 0 && OC >= 4) {
            eb_mm_blocks(xq, G, w, bias, OC >> 2, acc);
            u = OC & ~3;
            w += (size_t)u * K;
        }
        for (; u + 3 < OC; u += 4) {
            int32_t j;
            for (j = 0; j < 4; j += 2) {
                int32_t *a = acc + 2 * (u + j);
                a[0] = a[1] = eb_ld32(bias + 4 * (u + j));
                a[2] = a[3] = eb_ld32(bias + 4 * (u + j + 1));
                eb_mm2x2_blocked(xq, G, w + 4 * j, a);
                if (R) {
                    const int8_t *t = w + 16 * (size_t)G + (size_t)R * j;
                    eb_mm2x2_tail(xt, R, t, t + R, a);
                }
            }
            w += 4 * (size_t)K;
        }
        /* the OC % 4 last channels: plain rows, in pairs, then one */
        for (; u < OC; u += 2) {
            const int two = u + 1 < OC;
            const int32_t boff = two ? K : 0;
            int32_t a[4];
            a[0] = a[1] = eb_ld32(bias + 4 * u);
            a[2] = a[3] = two ? eb_ld32(bias + 4 * (u + 1)) : 0;
            eb_mm2x2(xq, G, w, boff, 4, a);
            if (R) {
                eb_mm2x2_tail(xt, R, w + 4 * (size_t)G, w + 4 * (size_t)G + boff, a);
            }
            acc[2 * u] = a[0];
            acc[2 * u + 1] = a[1];
            if (two) {
                acc[2 * u + 2] = a[2];
                acc[2 * u + 3] = a[3];
            }
            w += 2 * (size_t)K;
        }
        eb_conv_out_pair(p, OC, acc, tbl, use_tbl, 1, o0, o1, col);
    }
    return 1;
}
