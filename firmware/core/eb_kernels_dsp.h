/*
 * eb_kernels_dsp.h - CONV_2D and DEPTHWISE_CONV_2D kernels for cores with the
 * Armv7E-M DSP extension (Cortex-M4, M7, M33 ...): dual 16-bit multiply-
 * accumulate (SMLAD) on operands widened from int8 by SXTB16. Included by
 * eb_kernels_conv.c only, and only when __ARM_FEATURE_DSP is set; the portable
 * kernels there stay the reference (posix port, fuzzing, cores without DSP) and
 * these give the same integers: every sum is exact in int32 (modulo 2^32, as the
 * portable eb_acc), and the requantisation below is an exact rewrite of
 * eb_requant (proof in the comment of eb_rq_fast; tests/test_firmware_dsp.py
 * checks it, and the kernels, against LiteRT's reference).
 *
 * RAM: one static buffer of EB_DSP_SCRATCH_BYTES (default 4 KiB, a port may
 * override it with -D) in .bss, shared by all layers (one layer runs at a time).
 * A layer whose working set does not fit runs the portable kernel, so the
 * buffer bounds RAM use and never refuses a model. Working sets:
 *   CONV_2D: 4*K + 8*OC + max(K, OC) + 4 bytes, K = KH*KW*IC (two
 *            receptive fields widened to int16, the int32 sums of the two
 *            pixels, one gathered int8 field).
 *   DEPTHWISE_CONV_2D (depth multiplier 1, a 3-tap axis with stride 1 and
 *            dilation 1), for a band of B output lines: 4*Wp*rows + 4*Lp2*B
 *            bytes (two channels' planes, B lines of int32 sums), Wp = the
 *            output length along that axis + 4 rounded down to even, Lp2 =
 *            that length rounded up to even, rows = the input lines (padding
 *            included) of the band; B as large as fits, at least 1.
 * FULLY_CONNECTED keeps eb_matvec (SMLAD already; one input vector, so
 * widening it ahead would save little).
 */
#ifndef EB_KERNELS_DSP_H
#define EB_KERNELS_DSP_H

#ifndef EB_DSP_SCRATCH_BYTES
#define EB_DSP_SCRATCH_BYTES 4096u
#endif

static uint32_t eb_dsp_buf[EB_DSP_SCRATCH_BYTES / 4u];

#if defined(__GNUC__)
#define EB_COPY2(dst, src) __builtin_memcpy((dst), (src), 2)
#else
#define EB_COPY2(dst, src) memcpy((dst), (src), 2)
#endif

#if defined(__GNUC__)
#define EB_NOINLINE __attribute__((noinline))
#else
#define EB_NOINLINE
#endif


/* ---- requantisation ------------------------------------------------------
 * eb_requant(acc, m, shift, ...) computes v = rdbypot(srdhm(acc, m), e) for
 * shift = -e <= 0 (no left shift). With m > 0 and 2 <= e <= 31:
 *   srdhm(a, m) = floor((P + 2^30) / 2^31), P = a*m (no saturation: m != INT32_MIN)
 *   rdbypot(v, e) = floor((v + 2^(e-1) - [v < 0]) / 2^e)  (ties away from zero)
 * and floor((floor(X / 2^31) + N) / 2^e) = floor((X + N*2^31) / 2^(31+e)) for
 * integer N, so
 *   v = floor((P + 2^30 + 2^(30+e) - [v < 0]*2^31) / 2^(31+e)).
 * [v < 0] may be replaced by [P < 0] = [a < 0]: they differ only for
 * -2^30 <= P < 0, where both give 0 (the numerator is in [0, 2^(31+e)) for
 * e >= 1). The 64-bit numerator stays below 2^63 in magnitude, so one SMLAL
 * onto the constant hi:lo = 2^(e-2) : 2^30 (minus 2^31 when a < 0) and an
 * arithmetic shift of the high word by e - 1 give v exactly, |v| < 2^30. */
typedef struct {
    int32_t m, shift, chi, sh, fast;
} eb_rq;

static inline void eb_rq_init(eb_rq *q, int32_t m, int32_t shift)
{
    q->m = m;
    q->shift = shift;
    q->fast = m > 0 && shift <= -2 && shift >= -31;
    q->chi = q->fast ? (int32_t)(1u << (uint32_t)(-shift - 2)) : 0;
    q->sh = q->fast ? -shift - 1 : 0;
}

static inline int32_t eb_rq_mul(int32_t acc, int32_t m, int32_t chi, int32_t sh)
{
    const int32_t s = acc >> 31;
    uint32_t lo = ((uint32_t)s << 31) | 0x40000000u;
    int32_t hi = chi + s;
    __asm__("smlal %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"(acc), "r"(m));
    return hi >> sh;
}

/* eb_rq_mul on a doubled sum t = 2 * acc (|acc| < 2^30), the offset folded into
 * hc = 2^(e-1) + off * 2^e (see eb_dw_requant_lines): the doubled numerator's low
 * word is the constant 2^31, which is SMMLAR's rounding, so one SMMLAR onto
 * hc + (t >> 31) gives the high word. */
static inline int32_t eb_rq_mul2(int32_t t, int32_t m, int32_t hc, int32_t e)
{
    int32_t hi = hc + (t >> 31);
    __asm__("smmlar %0, %1, %2, %0" : "+r"(hi) : "r"(t), "r"(m));
    return hi >> e;
}

/* d[j * ls] = SSAT8(eb_rq_mul2(2 * a[j] + b2, ...)) for j < 2 * npairs: 16
 * instructions per pair */
static void eb_dw_rq_pairs(const int32_t *a, int32_t npairs, int8_t *d, int32_t ls, int32_t m, int32_t hc,
                           int32_t e, int32_t b2)
{
    const int32_t *const end = a + 2 * npairs;
    int32_t t0, t1, h;
    __asm__ volatile(
        "1:\n\t"
        "ldrd   %[t0], %[t1], [%[a]], #8\n\t"
        "add    %[t0], %[b2], %[t0], lsl #1\n\t"
        "add    %[h], %[hc], %[t0], asr #31\n\t"
        "smmlar %[h], %[t0], %[m], %[h]\n\t"
        "asr    %[h], %[h], %[e]\n\t"
        "ssat   %[h], #8, %[h]\n\t"
        "strb   %[h], [%[d]]\n\t"
        "add    %[t1], %[b2], %[t1], lsl #1\n\t"
        "add    %[h], %[hc], %[t1], asr #31\n\t"
        "smmlar %[h], %[t1], %[m], %[h]\n\t"
        "asr    %[h], %[h], %[e]\n\t"
        "ssat   %[h], #8, %[h]\n\t"
        "strb   %[h], [%[d], %[ls]]\n\t"
        "add    %[d], %[d], %[ls], lsl #1\n\t"
        "cmp    %[a], %[end]\n\t"
        "bne    1b\n\t"
        : [a] "+r"(a), [d] "+r"(d), [t0] "=&r"(t0), [t1] "=&r"(t1), [h] "=&r"(h)
        : [end] "r"(end), [ls] "r"(ls), [m] "r"(m), [hc] "r"(hc), [e] "r"(e), [b2] "r"(b2)
        : "cc", "memory");
}

static inline int8_t eb_rq_apply(const eb_rq *q, int32_t acc, int32_t out_offset, int32_t act_min,
                                 int32_t act_max)
{
    if (q->fast) {
        int32_t v = eb_rq_mul(acc, q->m, q->chi, q->sh) + out_offset;
        v = v < act_min ? act_min : v;
        v = v > act_max ? act_max : v;
        return (int8_t)v;
    }
    return eb_requant(acc, q->m, q->shift, out_offset, act_min, act_max);
}

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
 * block that r7 points to. */
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
    "smlad  %[a01], %[v], %[x1o], %[a01]\n\t"             \
    "cmp    %[x], %[end]\n\t"
#define EB_MM_PAIR_STORE                                  \
    "ldr    %[t], [%[c]]\n\t"                             \
    "strd   %[a00], %[a01], [%[t]], #8\n\t"               \
    "strd   %[a10], %[a11], [%[t]], #8\n\t"               \
    "str    %[t], [%[c]]\n\t"                             \
    "ldr    %[t], [%[c], #8]\n\t"                         \
    "sub    %[x], %[x], %[t]\n\t"
    __asm__ volatile(
        "2:\n\t"
        EB_MM_PAIR_INIT
        "1:\n\t"
        EB_MM_GROUP
        "bne    1b\n\t"
        EB_MM_PAIR_STORE
        "sub    %[w], %[w], %[t]\n\t"          /* row u+2: back to the block, 8 bytes in */
        "add    %[w], %[w], #8\n\t"
        EB_MM_PAIR_INIT
        "3:\n\t"
        EB_MM_GROUP
        "bne    3b\n\t"
        EB_MM_PAIR_STORE
        "sub    %[w], %[w], #8\n\t"            /* the next block */
        "ldr    %[t], [%[c], #12]\n\t"
        "subs   %[t], %[t], #1\n\t"
        "str    %[t], [%[c], #12]\n\t"
        "bne    2b\n\t"
        : [x] "+r"(rx), [w] "+r"(rw), [a00] "=&r"(a00), [a01] "=&r"(a01), [a10] "=&r"(a10), [a11] "=&r"(a11),
          [x0e] "=&r"(x0e), [x0o] "=&r"(x0o), [x1e] "=&r"(x1e), [x1o] "=&r"(x1o), [v] "=&r"(v), [t] "=&r"(t)
        : [end] "r"(rend), [c] "r"(rc)
        : "cc", "memory");
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

static void eb_im2col(const eb_conv_params *p, const int8_t *in_b, int32_t iy0, int32_t ix0,
                      int8_t pad, int8_t *col);

/* 1 when done, 0 when the working set does not fit EB_DSP_SCRATCH_BYTES */
static int eb_conv_s8_dsp(const eb_conv_params *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in.h, W = p->in.w, C = p->in.c;
    const int32_t OH = p->out.h, OW = p->out.w, OC = p->out.c;
    const int32_t K = p->kh * p->kw * C, G = K >> 2, R = K & 3;
    const int32_t npix = p->out.n * OH * OW;
    const int8_t pad = (int8_t)(0u - (uint32_t)p->in_offset);
    const int direct = eb_conv_direct(p);
    const uint8_t *const bias = p->chan;
    uint32_t *const xq = eb_dsp_buf;
    int16_t *const xt = (int16_t *)(void *)(xq + 4 * G);
    int32_t *const acc = (int32_t *)(void *)(xq + 4 * G + R);
    int8_t *const col = (int8_t *)(void *)(acc + 2 * OC);
    int32_t pi, b = 0, oy = 0, ox = 0;
    /* col also takes the unused second pixel's outputs when the count is odd */
    if ((size_t)K * 4u + 8u * (size_t)OC + (size_t)(K > OC ? K : OC) + 4u > EB_DSP_SCRATCH_BYTES) {
        return 0;
    }
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
            if (direct) {
                src = in_b + ((size_t)iy0 * W + ix0) * C;
            } else {
                eb_im2col(p, in_b, iy0, ix0, pad, col);
                src = col;
            }
            eb_widen_field(src, G, R, xq, xt, slot);
            if (slot == 0 && !o1) {
                eb_widen_field(src, G, R, xq, xt, 1);
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
        eb_conv_requant(acc, OC, p->chan + 4 * (size_t)OC, p->chan + 8 * (size_t)OC, p->out_offset,
                        p->act_min, p->act_max, o0, o1 ? o1 : col);
    }
    return 1;
}

/* ---- DEPTHWISE_CONV_2D -----------------------------------------------------
 * Depth multiplier 1 with a filter axis of three taps, stride 1 and dilation 1
 * (the "line" axis: W, or H when W does not qualify or H is the longer output
 * axis). One channel at a time: the channel's input plane (a band of lines at
 * a time) is widened to int16 with its padding, so along a line two adjacent
 * inputs are one word. Two adjacent outputs of a line, per cross-axis tap:
 *   out0 = SMLAD(x[j..j+1], (w0, w1)) + x[j+2] * w2
 *   out1 = x[j+1] * w0 + SMLAD(x[j+2..j+3], (w1, w2))
 * = 2 loads and 4 multiply-accumulates for 6 MACs; the channel's weights stay
 * in registers, the requantisation constants too. */

typedef struct {
    int32_t Li, Lo, Lp, Ls, OLs;          /* line axis: in/out length, padding, in/out strides */
    int32_t Ci, Co, Ck, Cs, Cd, Cp, CSs, OCs;   /* cross axis: in/out, taps, stride, dilation, pad,
                                                   in/out strides */
    int32_t wl, wc;                       /* weight strides (bytes) along line / cross taps */
} eb_dw_geom;

/* Line-to-line steps of eb_dw_lines3, read by its outer loop (one layer runs
 * at a time; its address goes into the asm as an immediate, so no register is
 * needed for it). */
static struct {
    int32_t row_delta;      /* bytes from the end of a line's pairs to the next line's rows */
    int32_t line_bytes;     /* bytes of accumulators per line */
    int32_t *final;         /* end of the last line's accumulators */
} eb_dw_ctl;

/* For n lines: acc[line][0..Lp2) = sum over three cross taps (rows r0, r1, r2
 * of the first line; each next line's rows are row_step bytes further), no
 * bias, Lp2 = Lo rounded up to even. Two outputs per pass: 6 loads, 12
 * multiply-accumulates and one store pair for 18 MACs; 11 instructions from
 * one line to the next. Hand-scheduled with pinned registers (all 14). */
static void eb_dw_lines3(const int16_t *r0, const int16_t *r1, const int16_t *r2, const uint32_t *w01,
                         const uint32_t *w12, int32_t Lo, int32_t n, int32_t row_step, int32_t *acc)
{
    const int32_t lp2 = (Lo + 1) & ~1;
    register const int16_t *x0 __asm__("r0") = r0;
    register const int16_t *x1 __asm__("r1") = r1;
    register const int16_t *x2 __asm__("r2") = r2;
    register int32_t *ap __asm__("r3") = acc;
    register int32_t *aend __asm__("r4") = acc + lp2;
    register uint32_t p0 __asm__("r5") = w01[0];
    register uint32_t q0 __asm__("r6") = w12[0];
    register uint32_t p1 __asm__("r7") = w01[1];
    register uint32_t q1 __asm__("r8") = w12[1];
    register uint32_t p2 __asm__("r9") = w01[2];
    register uint32_t q2 __asm__("r10") = w12[2];
    register int32_t a0 __asm__("r11");
    register int32_t a1 __asm__("r12");
    register uint32_t X __asm__("lr");
    if (Lo <= 0 || n <= 0) {
        return;
    }
    eb_dw_ctl.row_delta = row_step - 2 * lp2;
    eb_dw_ctl.line_bytes = 4 * lp2;
    eb_dw_ctl.final = acc + (size_t)n * lp2;
    __asm__ volatile(
        "1:\n\t"
        "ldr    %[X], [%[x0]], #4\n\t"
        "smuad  %[a0], %[X], %[p0]\n\t"
        "smultb %[a1], %[X], %[p0]\n\t"
        "ldr    %[X], [%[x0]]\n\t"
        "smlabt %[a0], %[X], %[q0], %[a0]\n\t"
        "smlad  %[a1], %[X], %[q0], %[a1]\n\t"
        "ldr    %[X], [%[x1]], #4\n\t"
        "smlad  %[a0], %[X], %[p1], %[a0]\n\t"
        "smlatb %[a1], %[X], %[p1], %[a1]\n\t"
        "ldr    %[X], [%[x1]]\n\t"
        "smlabt %[a0], %[X], %[q1], %[a0]\n\t"
        "smlad  %[a1], %[X], %[q1], %[a1]\n\t"
        "ldr    %[X], [%[x2]], #4\n\t"
        "smlad  %[a0], %[X], %[p2], %[a0]\n\t"
        "smlatb %[a1], %[X], %[p2], %[a1]\n\t"
        "ldr    %[X], [%[x2]]\n\t"
        "smlabt %[a0], %[X], %[q2], %[a0]\n\t"
        "smlad  %[a1], %[X], %[q2], %[a1]\n\t"
        "strd   %[a0], %[a1], [%[ap]], #8\n\t"
        "cmp    %[ap], %[end]\n\t"
        "bne    1b\n\t"
        "movw   %[X], #:lower16:%c[ctl]\n\t"
        "movt   %[X], #:upper16:%c[ctl]\n\t"
        "ldr    %[a0], [%[X]]\n\t"
        "ldr    %[a1], [%[X], #4]\n\t"
        "ldr    %[X], [%[X], #8]\n\t"
        "add    %[x0], %[x0], %[a0]\n\t"
        "add    %[x1], %[x1], %[a0]\n\t"
        "add    %[x2], %[x2], %[a0]\n\t"
        "add    %[end], %[end], %[a1]\n\t"
        "cmp    %[ap], %[X]\n\t"
        "bne    1b\n\t"
        : [x0] "+r"(x0), [x1] "+r"(x1), [x2] "+r"(x2), [ap] "+r"(ap), [end] "+r"(aend), [a0] "=&r"(a0),
          [a1] "=&r"(a1), [X] "=&r"(X)
        : [p0] "r"(p0), [q0] "r"(q0), [p1] "r"(p1), [q1] "r"(q1), [p2] "r"(p2), [q2] "r"(q2),
          [ctl] "i"(&eb_dw_ctl)
        : "cc", "memory");
}

/* the same for any number of cross taps, in C (accumulating into acc) */
static void eb_dw_line(const int16_t *const *rows, int32_t ck, const uint32_t *w01, const uint32_t *w12,
                       int32_t Lo, int32_t *acc)
{
    int32_t t, j;
    for (j = 0; j < Lo; j += 2) {
        acc[j] = 0;
        acc[j + 1] = 0;
    }
    for (t = 0; t < ck; t++) {
        const int16_t *r = rows[t];
        const int32_t pw = (int32_t)w01[t], qw = (int32_t)w12[t];
        for (j = 0; j < Lo; j += 2) {
            int32_t a0 = acc[j], a1 = acc[j + 1];
            uint32_t A, B;
            EB_COPY4(&A, r + j);
            EB_COPY4(&B, r + j + 2);
            a0 = __smlad((int32_t)A, pw, a0);
            a0 = __smlabt((int32_t)B, qw, a0);
            a1 = __smlatb((int32_t)A, pw, a1);
            a1 = __smlad((int32_t)B, qw, a1);
            acc[j] = a0;
            acc[j + 1] = a1;
        }
    }
}

/* Cross-axis taps the stack arrays hold; larger filters run the portable kernel. */
#define EB_DW_DSP_CK 16

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

/* eb_dw_requant for n_out lines: line o's accumulators at acc + o * lp2, its
 * outputs from dst + o * ocs */
static EB_NOINLINE void eb_dw_requant_lines(const int32_t *acc, int32_t n_out, int32_t Lo, int32_t bias,
                                            const eb_rq *q, int32_t off, int32_t lo, int32_t hi, int8_t *dst,
                                            int32_t ls, int32_t ocs)
{
    const int32_t lp2 = (Lo + 1) & ~1;
    int32_t o;
    if (q->fast && lo == -128 && hi == 127 && q->sh <= 21 && bias < (1 << 29) && bias > -(1 << 29)) {
        /* The common case, without per-line set-up, on doubled sums: t = 2 * (acc + bias)
         * fits int32 (|acc| <= taps * 2^14 < 2^20 here), so eb_rq_mul's numerator doubled,
         * 2P + 2C - [t < 0] * 2^32, has the constant 2^31 low word and the sign correction
         * in the high word only: hi = 2^(e-1) + off * 2^e + (t >> 31), v = hi >> e, the
         * output offset included (|hi| < 2^30 + 2^20 + 2^28 for e <= 21). */
        const int32_t m = q->m, e = q->sh + 1, b2 = (int32_t)((uint32_t)bias << 1);
        const int32_t hc = (int32_t)((1u << (uint32_t)(e - 1)) + ((uint32_t)off << e));
        for (o = 0; o < n_out; o++) {
            const int32_t *a = acc + (size_t)o * lp2;
            int8_t *d = dst + (size_t)o * ocs;
            if (Lo >= 2) {
                eb_dw_rq_pairs(a, Lo >> 1, d, ls, m, hc, e, b2);
            }
            if (Lo & 1) {
                d[(size_t)(Lo - 1) * ls] =
                    (int8_t)__ssat(eb_rq_mul2((int32_t)(((uint32_t)a[Lo - 1] << 1) + (uint32_t)b2), m, hc, e), 8);
            }
        }
        return;
    }
    for (o = 0; o < n_out; o++) {
        eb_dw_requant(acc, Lo, bias, q, off, lo, hi, dst, ls);
        acc += lp2;
        dst += ocs;
    }
}

/* d[j] = input position j - lp of the line at s (stride ls), or zp outside
 * [0, li); j < wp */
static EB_NOINLINE void eb_dw_widen(const int8_t *s, int32_t ls, int32_t lp, int32_t li, int32_t wp,
                                    int16_t zp, int16_t *d)
{
    int32_t j = 0;
    const int32_t jend = lp + li < wp ? lp + li : wp;
    for (; j < lp && j < wp; j++) {
        d[j] = zp;
    }
    s += (size_t)(j - lp) * ls;
    for (; j < jend; j++) {
        d[j] = *s;
        s += ls;
    }
    for (; j < wp; j++) {
        d[j] = zp;
    }
}

/* d0[j], d1[j] = input position j - lp of channels 0 and 1 of the line at s
 * (stride ls), or zp outside [0, li); j < wp; for nl lines (input lines ss
 * bytes apart, plane lines wp apart). Two channels per halfword load, split by
 * SXTB16. */
static EB_NOINLINE void eb_dw_widen2(const int8_t *s, int32_t ls, int32_t lp, int32_t li, int32_t wp,
                                     int16_t zp, int16_t *d0, int16_t *d1, int32_t nl, int32_t ss)
{
    const int32_t jend = lp + li < wp ? lp + li : wp;
    const int32_t j0 = lp < wp ? lp : wp;
    for (; nl > 0; nl--) {
        const int8_t *sp = s + (size_t)(j0 - lp) * ls;
        int32_t j;
        for (j = 0; j < j0; j++) {
            d0[j] = zp;
            d1[j] = zp;
        }
        if (j + 1 < jend) {
            /* pairs of positions: two halfword loads (channels 0 and 1 at positions j
             * and j + 1), SXTB16 splits them into a word of each plane; 10 instructions */
            const int32_t np = (jend - j) >> 1;
            int16_t *e0 = d0 + j, *e1 = d1 + j;
            int16_t *const stop = e0 + 2 * np;
            uint32_t h0, h1, v;
            __asm__ volatile(
                "1:\n\t"
                "ldrh   %[h1], [%[s], %[ls]]\n\t"
                "ldrh   %[h0], [%[s]]\n\t"
                "add    %[s], %[s], %[ls], lsl #1\n\t"
                "orr    %[v], %[h0], %[h1], lsl #16\n\t"
                "sxtb16 %[h0], %[v]\n\t"
                "sxtb16 %[v], %[v], ror #8\n\t"
                "str    %[h0], [%[e0]], #4\n\t"
                "str    %[v], [%[e1]], #4\n\t"
                "cmp    %[e0], %[stop]\n\t"
                "bne    1b\n\t"
                : [s] "+r"(sp), [e0] "+r"(e0), [e1] "+r"(e1), [h0] "=&r"(h0), [h1] "=&r"(h1), [v] "=&r"(v)
                : [ls] "r"(ls), [stop] "r"(stop)
                : "cc", "memory");
            j += 2 * np;
        }
        if (j < jend) {
            d0[j] = sp[0];
            d1[j] = sp[1];
            j++;
        }
        for (; j < wp; j++) {
            d0[j] = zp;
            d1[j] = zp;
        }
        s += ss;
        d0 += wp;
        d1 += wp;
    }
}

static int eb_depthwise_s8_dsp(const eb_conv_params *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in.h, W = p->in.w, C = p->in.c;
    const int line_w = p->kw == 3 && p->sw == 1 && p->dw == 1;
    const int line_h = p->kh == 3 && p->sh == 1 && p->dh == 1;
    const int16_t zp = (int8_t)(0u - (uint32_t)p->in_offset);
    const uint32_t zz = (uint16_t)zp | ((uint32_t)(uint16_t)zp << 16);
    eb_dw_geom g;
    int32_t Wp, band, b, c;
    size_t pstride;
    int16_t *plane;
    int32_t *acc;
    if (p->depth_mult != 1 || !(line_w || line_h)) {
        return 0;
    }
    if (line_w && (!line_h || p->out.w >= p->out.h)) {
        g.Li = W; g.Lo = p->out.w; g.Lp = p->pw; g.Ls = C; g.OLs = C;
        g.Ci = H; g.Co = p->out.h; g.Ck = p->kh; g.Cs = p->sh; g.Cd = p->dh; g.Cp = p->ph;
        g.CSs = W * C; g.OCs = p->out.w * C;
        g.wl = C; g.wc = 3 * C;
    } else {
        g.Li = H; g.Lo = p->out.h; g.Lp = p->ph; g.Ls = W * C; g.OLs = p->out.w * C;
        g.Ci = W; g.Co = p->out.w; g.Ck = p->kw; g.Cs = p->sw; g.Cd = p->dw; g.Cp = p->pw;
        g.CSs = C; g.OCs = C;
        g.wl = p->kw * C; g.wc = C;
    }
    if (g.Ck > EB_DW_DSP_CK) {
        return 0;
    }
    /* line j of the widened plane holds input positions j - Lp, j < Wp (even,
     * so every line starts word-aligned); the plane holds the band's input
     * lines, padding lines included (input zero points) */
    Wp = (g.Lo + 4) & ~1;
    {
        /* a band of B output lines: B accumulator lines of Lp2 int32 and two planes of
         * (B - 1) * Cs + need1 input lines of Wp int16 */
        const int32_t need1 = (g.Ck - 1) * g.Cd + 1;      /* input lines of one output line */
        const int32_t lp2 = (g.Lo + 1) & ~1;
        const int32_t room = (int32_t)EB_DSP_SCRATCH_BYTES - 4 * Wp * (need1 - g.Cs);
        band = room > 0 ? room / (4 * lp2 + 4 * Wp * g.Cs) : 0;
        if (band < 1) {
            return 0;
        }
        band = band > g.Co ? g.Co : band;
        acc = (int32_t *)(void *)eb_dsp_buf;
        plane = (int16_t *)(void *)(acc + (size_t)band * lp2);
    }
    pstride = (size_t)((band - 1) * g.Cs + (g.Ck - 1) * g.Cd + 1) * Wp;
    for (b = 0; b < p->out.n; b++) {
        const int8_t *in_b = in + (size_t)b * H * W * C;
        int8_t *out_b = out + (size_t)b * p->out.h * p->out.w * C;
        for (c = 0; c < C; c += 2) {
            /* channels c and c + 1 (when C is odd, the last one alone) */
            const int32_t cn = c + 1 < C ? 2 : 1;
            uint32_t w01[2][EB_DW_DSP_CK], w12[2][EB_DW_DSP_CK];
            int32_t bias[2];
            eb_rq q[2];
            int32_t t, k, o0;
            for (k = 0; k < cn; k++) {
                bias[k] = eb_ld32(p->chan + 4 * (c + k));
                eb_rq_init(&q[k], eb_ld32(p->chan + 4 * ((size_t)C + c + k)),
                           eb_ld32(p->chan + 4 * (2 * (size_t)C + c + k)));
                for (t = 0; t < g.Ck; t++) {
                    const int8_t *f = p->filter + (size_t)t * g.wc + c + k;
                    const uint32_t v0 = (uint16_t)(int16_t)f[0], v1 = (uint16_t)(int16_t)f[g.wl];
                    const uint32_t v2 = (uint16_t)(int16_t)f[2 * g.wl];
                    w01[k][t] = v0 | (v1 << 16);
                    w12[k][t] = v1 | (v2 << 16);
                }
            }
            for (o0 = 0; o0 < g.Co; o0 += band) {
                const int32_t n_out = g.Co - o0 < band ? g.Co - o0 : band;
                const int32_t ci0 = o0 * g.Cs - g.Cp;
                const int32_t n_in = (n_out - 1) * g.Cs + (g.Ck - 1) * g.Cd + 1;
                int32_t r, o;
                /* widen the band's input lines of the channels; padding lines hold zero
                 * points, written once per layer when the band is the whole plane */
                for (r = 0; r < n_in; r++) {
                    const int32_t ci = ci0 + r;
                    int16_t *d = plane + (size_t)r * Wp;
                    int32_t j;
                    if (ci < 0 || ci >= g.Ci) {
                        uint32_t *d0 = (uint32_t *)(void *)d, *d1 = (uint32_t *)(void *)(d + pstride);
                        if (band < g.Co || (b == 0 && c == 0)) {
                            for (j = 0; j < Wp; j += 2) {
                                *d0++ = zz;
                                *d1++ = zz;
                            }
                        }
                    } else if (cn == 2) {
                        /* the run of input lines inside the input, in one call */
                        int32_t r1 = r;
                        while (r1 + 1 < n_in && ci0 + r1 + 1 < g.Ci) {
                            r1++;
                        }
                        eb_dw_widen2(in_b + (size_t)ci * g.CSs + c, g.Ls, g.Lp, g.Li, Wp, zp, d, d + pstride,
                                     r1 - r + 1, g.CSs);
                        r = r1;
                    } else {
                        eb_dw_widen(in_b + (size_t)ci * g.CSs + c, g.Ls, g.Lp, g.Li, Wp, zp, d);
                    }
                }
                for (k = 0; k < cn; k++) {
                    const int16_t *base = plane + k * pstride;
                    if (g.Ck == 3) {
                        eb_dw_lines3(base, base + (size_t)g.Cd * Wp, base + (size_t)2 * g.Cd * Wp, w01[k], w12[k],
                                     g.Lo, n_out, 2 * g.Cs * Wp, acc);
                    } else {
                        for (o = 0; o < n_out; o++) {
                            const int16_t *rows[EB_DW_DSP_CK];
                            const int16_t *ob = base + (size_t)(o * g.Cs) * Wp;
                            for (t = 0; t < g.Ck; t++) {
                                rows[t] = ob + (size_t)(t * g.Cd) * Wp;
                            }
                            eb_dw_line(rows, g.Ck, w01[k], w12[k], g.Lo, acc + (size_t)o * ((g.Lo + 1) & ~1));
                        }
                    }
                    eb_dw_requant_lines(acc, n_out, g.Lo, bias[k], &q[k], p->out_offset, p->act_min, p->act_max,
                                        out_b + (size_t)o0 * g.OCs + c + k, g.OLs, g.OCs);
                }
            }
        }
    }
    return 1;
}

#endif /* EB_KERNELS_DSP_H */
