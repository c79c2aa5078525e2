/*
 * eb_conv_dsp.c - CONV_2D on cores with the DSP extension (the kernel set of
 * kernels/dsp/, see eb_dsp.c): two output pixels at a time, their receptive
 * fields widened to int16 once, hand-scheduled SMLAD loops over the blocked
 * filter. eb_conv_s8_opt returns 0 (the portable kernel runs) when a layer's
 * working set does not fit the scratch: 4*K + 8*OC + max(K, OC) + 4 bytes,
 * K = KH*KW*IC.
 */
#include "eb_dsp.h"
#include "eb_kernels_opt.h"

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
            "ldmia  %[x]!, {%[x0e], %[x0o], %[x1e], %[x1o]}\n\t"
            "ldr    %[v], [%[w], #4]\n\t"
            "sxtb16 %[t], %[v]\n\t"
            "sxtb16 %[v], %[v], ror #8\n\t"
            "smlad  %[a10], %[t], %[x0e], %[a10]\n\t"
            "smlad  %[a11], %[t], %[x1e], %[a11]\n\t"
            "smlad  %[a10], %[v], %[x0o], %[a10]\n\t"
            "smlad  %[a11], %[v], %[x1o], %[a11]\n\t"
            "ldr    %[v], [%[w]], #16\n\t"
            "sxtb16 %[t], %[v]\n\t"
            "sxtb16 %[v], %[v], ror #8\n\t"
            "smlad  %[a00], %[t], %[x0e], %[a00]\n\t"
            "smlad  %[a01], %[t], %[x1e], %[a01]\n\t"
            "smlad  %[a00], %[v], %[x0o], %[a00]\n\t"
            "smlad  %[a01], %[v], %[x1o], %[a01]\n\t"
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

/* Every block of four channels of the blocked layout (K % 4 == 0), both
 * pairs of each, in one asm loop: acc[2u], acc[2u+1] = bias[u] + row u . px0,
 * px1 for u < 4 * nblocks. The inner loop is eb_mm2x2_blocked's; between
 * pairs (15 instructions) the state that does not fit the registers (the
 * accumulator and bias pointers, 16 * G, the blocks left) lives in a small
 * block that r7 points to. Register map: r0 x (the widened fields), r1 their
 * end, lr w, r7 the control block, r6/r8 row a's sums (px0, px1), r9/r10 row
 * b's, r2-r5 the four words of x of a group, r11/r12 weight word and scratch. */
static void eb_mm_blocks(const uint32_t *xq, int32_t G, const int8_t *w, const uint8_t *bias, int32_t nblocks,
                         int32_t *acc)
{
    struct {
        int32_t *acc;
        const uint8_t *bias;
        int32_t g16;
        int32_t left;
    } ctl;
    register const uint32_t *rx __asm__("r0") = xq;
    register const uint32_t *rend __asm__("r1") = xq + 4 * G;
    register const int8_t *rw __asm__("lr") = w;
    register void *rc __asm__("r7") = &ctl;
    register int32_t a00 __asm__("r6"), a01 __asm__("r8"), a10 __asm__("r9"), a11 __asm__("r10");
    register uint32_t x0e __asm__("r2"), x0o __asm__("r3"), x1e __asm__("r4"), x1o __asm__("r5");
    register uint32_t v __asm__("r11"), t __asm__("r12");
    if (G <= 0 || nblocks <= 0) {
        return;
    }
    ctl.acc = acc;
    ctl.bias = bias;
    ctl.g16 = 16 * G;
    ctl.left = nblocks;
#define EB_MM_PAIR_INIT                                   \
    "ldr    %[t], [%[c], #4]\n\t"                         \
    "ldr    %[a00], [%[t]], #4\n\t"                       \
    "ldr    %[a10], [%[t]], #4\n\t"                       \
    "str    %[t], [%[c], #4]\n\t"                         \
    "mov    %[a01], %[a00]\n\t"                           \
    "mov    %[a11], %[a10]\n\t"
/* one group of four elements: 15 instructions for 16 MACs (the loop's CMP/BNE
 * come once per EB_MM_REPT groups) */
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
#define EB_MM_PAIR_STORE                                  \
    "ldr    %[t], [%[c]]\n\t"                             \
    "strd   %[a00], %[a01], [%[t]], #8\n\t"               \
    "strd   %[a10], %[a11], [%[t]], #8\n\t"               \
    "str    %[t], [%[c]]\n\t"                             \
    "ldr    %[t], [%[c], #8]\n\t"                         \
    "sub    %[x], %[x], %[t]\n\t"
/* the whole loop nest with the inner loop unrolled REPT times (G % REPT == 0):
 * REPT groups, then one CMP/BNE */
#define EB_MM_BLOCKS_ASM(REPT)                                                                                  \
    __asm__ volatile(                                                                                           \
        "2:\n\t"                                                                                                \
        EB_MM_PAIR_INIT                                                                                         \
        "1:\n\t"                                                                                                \
        ".rept " #REPT "\n\t"                                                                                   \
        EB_MM_GROUP                                                                                             \
        ".endr\n\t"                                                                                             \
        "cmp    %[x], %[end]\n\t"                                                                               \
        "bne    1b\n\t"                                                                                         \
        EB_MM_PAIR_STORE                                                                                        \
        "sub    %[w], %[w], %[t]\n\t"          /* row u+2: back to the block, 8 bytes in */                     \
        "add    %[w], %[w], #8\n\t"                                                                             \
        EB_MM_PAIR_INIT                                                                                         \
        "3:\n\t"                                                                                                \
        ".rept " #REPT "\n\t"                                                                                   \
        EB_MM_GROUP                                                                                             \
        ".endr\n\t"                                                                                             \
        "cmp    %[x], %[end]\n\t"                                                                               \
        "bne    3b\n\t"                                                                                         \
        EB_MM_PAIR_STORE                                                                                        \
        "sub    %[w], %[w], #8\n\t"            /* the next block */                                             \
        "ldr    %[t], [%[c], #12]\n\t"                                                                          \
        "subs   %[t], %[t], #1\n\t"                                                                             \
        "str    %[t], [%[c], #12]\n\t"                                                                          \
        "bne    2b\n\t"                                                                                         \
        : [x] "+r"(rx), [w] "+r"(rw), [a00] "=&r"(a00), [a01] "=&r"(a01), [a10] "=&r"(a10), [a11] "=&r"(a11), \
          [x0e] "=&r"(x0e), [x0o] "=&r"(x0o), [x1e] "=&r"(x1e), [x1o] "=&r"(x1o), [v] "=&r"(v), [t] "=&r"(t)   \
        : [end] "r"(rend), [c] "r"(rc)                                                                         \
        : "cc", "memory")
    /* unrolled by a divisor of G (4, 5 - a 10x4 one-channel stem -, 7 - a 3x3
     * three-channel stem padded to 28 - or 2): 15 instructions per 16 MACs plus the
     * loop's CMP/BNE once per REPT groups, instead of 17. Not by 8: the two loops
     * would take most of the 1 KiB instruction cache of an STM32L4 (ART), and the
     * cycle model (edgebench.mcu.cycles) estimates more cycles for 1x1 layers. */
    if ((G & 3) == 0) {
        EB_MM_BLOCKS_ASM(4);
    } else if (G % 5 == 0) {
        EB_MM_BLOCKS_ASM(5);
    } else if (G == 7) {
        EB_MM_BLOCKS_ASM(7);
    } else if ((G & 1) == 0) {
        EB_MM_BLOCKS_ASM(2);
    } else {
        EB_MM_BLOCKS_ASM(1);
    }
#undef EB_MM_BLOCKS_ASM
#undef EB_MM_PAIR_INIT
#undef EB_MM_GROUP
#undef EB_MM_PAIR_STORE
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

/* The per-channel constants of eb_conv_requant's common case, once per layer:
 * {m, chi (output offset folded in), sh} of every channel into tbl (3 * OC words).
 * 1 when every channel is in that case (no clamp inside int8, m > 0,
 * 2 <= e <= 21), else 0 and eb_conv_requant runs. */
static int eb_requant_table(int32_t OC, const uint8_t *mult, const uint8_t *shift, int32_t off, int32_t lo,
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

/* The fix-up list of the layer that runs (one at a time), set by eb_requant_table2:
 * n entries, none when the table covers every channel. */
static struct {
    const uint32_t *list;
    int32_t n;
    const eb_conv_params *p;
} eb_conv_fix;

/* 1 when every weight of output channel u is zero (blocked filter order of
 * firmware/BLOB.md): its sum is its bias whatever the input. */
static int eb_row_zero(const int8_t *w, int32_t K, int32_t OC, int32_t u)
{
    const int32_t G = K >> 2, R = K & 3, j = u & 3;
    uint32_t any = 0;
    int32_t g, i;
    if (u >= (OC & ~3)) {
        const int8_t *const row = w + (size_t)u * K;
        for (i = 0; i < K; i++) {
            any |= (uint32_t)(uint8_t)row[i];
        }
        return any == 0;
    }
    w += (size_t)(u & ~3) * K;
    for (g = 0; g < G; g++) {
        any |= eb_ldw(w + 16 * (size_t)g + 4 * j);
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
static int eb_requant_table2(int32_t OC, const uint8_t *chan, int32_t K, int32_t off, int32_t lo, int32_t hi,
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
            if (eb_row_zero(p->filter, K, OC, u)) {
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
static EB_NOINLINE void eb_conv_requant_tbl2(const int32_t *acc, int32_t OC, const int32_t *tbl, int8_t *o0,
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

/* The filter of a layer with K % 4 != 0 (a 3-channel stem: K = 27) and OC % 4 == 0
 * copied into the blocked layout of K rounded up to a multiple of four, the rows'
 * tails (firmware/BLOB.md: R bytes of row 0, 1, 2, 3 after the groups) padded with
 * zero weights into one more group, so every block runs eb_mm_blocks' asm loop
 * instead of eb_mm2x2_blocked and a scalar tail. The products of the padded
 * weights are zero: the sums, and the outputs, are those of the unpadded filter. */
static void eb_pad_blocks(const int8_t *w, int32_t K, int32_t OC, int8_t *wp)
{
    const int32_t G = K >> 2, R = K & 3;
    int32_t b, j, i;
    for (b = 0; b < OC; b += 4) {
        memcpy(wp, w, 16u * (size_t)G);
        for (j = 0; j < 4; j++) {
            for (i = 0; i < 4; i++) {
                wp[16 * G + 4 * j + i] = i < R ? w[16 * G + R * j + i] : 0;
            }
        }
        w += 4 * (size_t)K;
        wp += 16 * (size_t)(G + 1);
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

/* Layers with K % 4 != 0 gathered through im2col: the zero-padded copy of the filter
 * (eb_pad_blocks) and fields of K rounded up (zeros after the K values); 1 when done,
 * 0 when it does not apply or does not fit. Working set: 4*Kp + 8*OC + Kp + OC*Kp. */
static int eb_conv_padded(const eb_conv_params *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in.h, W = p->in.w, C = p->in.c;
    const int32_t OH = p->out.h, OW = p->out.w, OC = p->out.c;
    const int32_t K = p->kh * p->kw * C, Kp = (K + 3) & ~3, Gp = Kp >> 2;
    const int32_t npix = p->out.n * OH * OW;
    const int8_t pad = (int8_t)(0u - (uint32_t)p->in_offset);
    uint32_t *const xq = eb_dsp_buf;
    int32_t *const acc = (int32_t *)(void *)(xq + 4 * Gp);
    int8_t *const wp = (int8_t *)(void *)(acc + 2 * OC);
    int8_t *const col = wp + (size_t)OC * Kp;        /* Kp bytes, and OC for an odd last pixel */
    int32_t *const tbl = (int32_t *)(void *)(col + (((Kp > OC ? Kp : OC) + 3) & ~3));
    int use_tbl;
    int32_t pi, b = 0, oy = 0, ox = 0;
    if ((K & 3) == 0 || (OC & 3) != 0 || eb_conv_direct(p) ||
        4u * (size_t)Kp + 8u * (size_t)OC + (size_t)OC * Kp + (size_t)(Kp > OC ? Kp : OC) > EB_DSP_SCRATCH_BYTES) {
        return 0;
    }
    eb_pad_blocks(p->filter, K, OC, wp);
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
            if (!eb_gather_inside(p, in_b, iy0, ix0, col)) {
                eb_im2col(p, in_b, iy0, ix0, pad, col);
            }
            eb_widen_run(col, Gp, xq + 2 * slot);
            if (slot == 0 && !o1) {
                eb_widen_run(col, Gp, xq + 2);
                break;
            }
            if (++ox == OW) {
                ox = 0;
                if (++oy == OH) {
                    oy = 0;
                    b++;
                }
            }
        }
        eb_mm_blocks(xq, Gp, wp, p->chan, OC >> 2, acc);
        if (use_tbl == 2) {
            eb_conv_requant_tbl2(acc, OC, tbl, o0, o1 ? o1 : col);
            continue;
        }
        if (use_tbl) {
            eb_conv_requant_tbl(acc, OC, tbl, o0, o1 ? o1 : col);
            continue;
        }
        eb_conv_requant(acc, OC, p->chan + 4 * (size_t)OC, p->chan + 8 * (size_t)OC, p->out_offset,
                        p->act_min, p->act_max, o0, o1 ? o1 : col);
    }
    return 1;
}

/* Weight k of output channel oc in the blob's blocked filter order (firmware/BLOB.md) */
static int8_t eb_filter_at(const int8_t *w, int32_t K, int32_t OC, int32_t oc, int32_t k)
{
    const int32_t G = K >> 2, R = K & 3, j = oc & 3;
    const int8_t *b = w + (size_t)(oc & ~3) * K;
    if (oc >= (OC & ~3)) {
        return w[(size_t)oc * K + k];
    }
    return k < 4 * G ? b[16 * (k >> 2) + 4 * j + (k & 3)] : b[16 * G + R * j + (k - 4 * G)];
}

/* Fields of at most 8 elements (K <= 8: the 1x1 convolutions of 8 input channels in
 * MobileNet, tiny stems): the whole filter widened once per layer into a table of
 * eight words per output channel, {bias, (w0, w2), (w1, w3), (w4, w6), (w5, w7),
 * m, chi, sh} (zero weights after K, eb_requant_table's constants), so one pixel's
 * four words of x stay in registers and each output channel costs two LDM, four
 * SMLAD and the requantisation: 16 instructions for up to 8 MACs, where the
 * two-pixel kernel spends about 25 per channel and pixel on so short a field.
 * 1 when done; 0 (another path runs) when K > 8, the table does not fit or the
 * requantisation is not eb_requant_table's common case. */
static int eb_conv_k8(const eb_conv_params *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in.h, W = p->in.w, C = p->in.c;
    const int32_t OH = p->out.h, OW = p->out.w, OC = p->out.c;
    const int32_t K = p->kh * p->kw * C;
    const int direct = K == 8 && eb_conv_direct(p);
    const int8_t pad = (int8_t)(0u - (uint32_t)p->in_offset);
    uint32_t *const tab = eb_dsp_buf;
    int32_t *const rq = (int32_t *)(void *)(tab + 8 * (size_t)OC);
    int8_t *const col = (int8_t *)(void *)(rq + 3 * (size_t)OC);
    int32_t u, k, b, oy, ox;
    int dbl;
    if (K > 8 || (size_t)OC * 44u + 8u > EB_DSP_SCRATCH_BYTES) {
        return 0;
    }
    /* {m, hc, e} of eb_rq_mul2 on the doubled sums when every channel allows it, else
     * eb_requant_table's {m, chi, sh} */
    dbl = eb_requant_table2(OC, p->chan, K, p->out_offset, p->act_min, p->act_max, rq, p, NULL, 0);
    if (!dbl && !eb_requant_table(OC, p->chan + 4 * (size_t)OC, p->chan + 8 * (size_t)OC, p->out_offset,
                                  p->act_min, p->act_max, rq)) {
        return 0;
    }
    for (u = 0; u < OC; u++) {
        uint32_t *const e = tab + 8 * (size_t)u;
        int8_t row[8];
        uint32_t v0, v1;
        for (k = 0; k < 8; k++) {
            row[k] = k < K ? eb_filter_at(p->filter, K, OC, u, k) : 0;
        }
        memcpy(&v0, row, 4);
        memcpy(&v1, row + 4, 4);
        e[0] = (uint32_t)eb_ld32(p->chan + 4 * (size_t)u);
        e[1] = (uint32_t)eb_sx02(v0);
        e[2] = (uint32_t)eb_sx13(v0);
        e[3] = (uint32_t)eb_sx02(v1);
        e[4] = (uint32_t)eb_sx13(v1);
        e[5] = (uint32_t)rq[3 * u];
        e[6] = (uint32_t)rq[3 * u + 1];
        e[7] = (uint32_t)rq[3 * u + 2];
    }
    for (k = K; k < 8; k++) {
        col[k] = 0;
    }
    for (b = 0; b < p->out.n; b++) {
        const int8_t *const in_b = in + (size_t)b * H * W * C;
        for (oy = 0; oy < OH; oy++) {
            for (ox = 0; ox < OW; ox++) {
                const int32_t iy0 = oy * p->sh - p->ph, ix0 = ox * p->sw - p->pw;
                const int8_t *src = col;
                uint32_t v0, v1;
                if (direct) {
                    src = in_b + ((size_t)iy0 * W + ix0) * C;
                } else {
                    eb_im2col(p, in_b, iy0, ix0, pad, col);
                }
                v0 = eb_ldw(src);
                v1 = eb_ldw(src + 4);
                {
                    register const uint32_t *rt __asm__("r0") = tab;
                    register const uint32_t *rend __asm__("r1") = tab + 8 * (size_t)OC;
                    register int8_t *ro __asm__("lr") = out;
                    register uint32_t x0 __asm__("r8") = (uint32_t)eb_sx02(v0);
                    register uint32_t x1 __asm__("r9") = (uint32_t)eb_sx13(v0);
                    register uint32_t x2 __asm__("r10") = (uint32_t)eb_sx02(v1);
                    register uint32_t x3 __asm__("r11") = (uint32_t)eb_sx13(v1);
                    register int32_t a __asm__("r2");
                    register uint32_t w0 __asm__("r3"), w1 __asm__("r4"), w2 __asm__("r5"), w3 __asm__("r6");
                    register int32_t s __asm__("r12");
                    /* doubled sums: 14 instructions a channel, two channels a pass when OC
                     * is even */
#define EB_K8_DBL                                                         \
    "ldmia  %[t]!, {%[a], %[w0], %[w1], %[w2], %[w3]}\n\t"              \
    "smlad  %[a], %[w0], %[x0], %[a]\n\t"                               \
    "smlad  %[a], %[w1], %[x1], %[a]\n\t"                               \
    "smlad  %[a], %[w2], %[x2], %[a]\n\t"                               \
    "smlad  %[a], %[w3], %[x3], %[a]\n\t"                               \
    "ldmia  %[t]!, {%[w0], %[w1], %[w2]}\n\t"     /* m, hc, e */         \
    "lsl    %[a], %[a], #1\n\t"                                         \
    "add    %[w1], %[w1], %[a], asr #31\n\t"                            \
    "smmlar %[w1], %[a], %[w0], %[w1]\n\t"                              \
    "asr    %[w1], %[w1], %[w2]\n\t"                                    \
    "ssat   %[w1], #8, %[w1]\n\t"                                       \
    "strb   %[w1], [%[o]], #1\n\t"
#define EB_K8_OPERANDS                                                                             \
    : [t] "+r"(rt), [o] "+r"(ro), [a] "=&r"(a), [w0] "=&r"(w0), [w1] "=&r"(w1), [w2] "=&r"(w2),   \
      [w3] "=&r"(w3), [s] "=&r"(s)                                                                 \
    : [end] "r"(rend), [x0] "r"(x0), [x1] "r"(x1), [x2] "r"(x2), [x3] "r"(x3)                     \
    : "cc", "memory"
                    if (dbl && (OC & 1) == 0) {
                        __asm__ volatile("1:\n\t" EB_K8_DBL EB_K8_DBL "cmp    %[t], %[end]\n\t"
                                         "bne    1b\n\t" EB_K8_OPERANDS);
                        out = ro;
                        continue;
                    }
                    if (dbl) {
                        __asm__ volatile("1:\n\t" EB_K8_DBL "cmp    %[t], %[end]\n\t"
                                         "bne    1b\n\t" EB_K8_OPERANDS);
                        out = ro;
                        continue;
                    }
#undef EB_K8_DBL
#undef EB_K8_OPERANDS
                    __asm__ volatile(
                        "1:\n\t"
                        "ldmia  %[t]!, {%[a], %[w0], %[w1], %[w2], %[w3]}\n\t"
                        "smlad  %[a], %[w0], %[x0], %[a]\n\t"
                        "smlad  %[a], %[w1], %[x1], %[a]\n\t"
                        "smlad  %[a], %[w2], %[x2], %[a]\n\t"
                        "smlad  %[a], %[w3], %[x3], %[a]\n\t"
                        "ldmia  %[t]!, {%[w0], %[w1], %[w2]}\n\t"     /* m, chi, sh */
                        "asr    %[s], %[a], #31\n\t"
                        "mov    %[w3], #0x40000000\n\t"
                        "orr    %[w3], %[w3], %[s], lsl #31\n\t"
                        "add    %[w1], %[w1], %[s]\n\t"
                        "smlal  %[w3], %[w1], %[a], %[w0]\n\t"
                        "asr    %[w1], %[w1], %[w2]\n\t"
                        "ssat   %[w1], #8, %[w1]\n\t"
                        "strb   %[w1], [%[o]], #1\n\t"
                        "cmp    %[t], %[end]\n\t"
                        "bne    1b\n\t"
                        : [t] "+r"(rt), [o] "+r"(ro), [a] "=&r"(a), [w0] "=&r"(w0), [w1] "=&r"(w1),
                          [w2] "=&r"(w2), [w3] "=&r"(w3), [s] "=&r"(s)
                        : [end] "r"(rend), [x0] "r"(x0), [x1] "r"(x1), [x2] "r"(x2), [x3] "r"(x3)
                        : "cc", "memory");
                    out = ro;
                }
            }
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
    if (K <= 8 && eb_conv_k8(p, in, out)) {
        return 1;
    }
    if (R != 0 && eb_conv_padded(p, in, out)) {
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
            const int8_t *src;
            if (rows && ix0 >= 0 && ix0 + p->kw <= W) {
                eb_widen_rows(p, in_b, iy0, ix0, zz, xq, slot);
                if (slot == 0 && !o1) {
                    eb_widen_rows(p, in_b, iy0, ix0, zz, xq, 1);
                    break;
                }
                goto next;
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
                if (slot == 0 && !o1) {
                    eb_widen_run(src, G, xq + 2);
                    break;
                }
                goto next;
            }
            eb_widen_field(src, G, R, xq, xt, slot);
            if (slot == 0 && !o1) {
                eb_widen_field(src, G, R, xq, xt, 1);
                break;
            }
        next:
            if (++ox == OW) {
                ox = 0;
                if (++oy == OH) {
                    oy = 0;
                    b++;
                }
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
        if (use_tbl >= 2) {
            eb_conv_requant_tbl2(acc, OC, tbl, o0, o1 ? o1 : col);
            if (use_tbl == 3) {
                eb_conv_requant_fix(acc, o0, o1 ? o1 : col);
            }
            continue;
        }
        if (use_tbl) {
            eb_conv_requant_tbl(acc, OC, tbl, o0, o1 ? o1 : col);
            continue;
        }
        eb_conv_requant(acc, OC, p->chan + 4 * (size_t)OC, p->chan + 8 * (size_t)OC, p->out_offset,
                        p->act_min, p->act_max, o0, o1 ? o1 : col);
    }
    return 1;
}
