/*
 * eb_conv_small_dsp.c - CONV_2D on cores with the DSP extension, fields of at most
 * 16 elements (K = KH*KW*IC <= 16: MobileNet's 1x1 layers of 8 and 16 input
 * channels, ResNet-8's 16-channel 1x1 shortcut, tiny stems). One pixel's field
 * stays in registers as int16 pairs and the whole filter, widened once per layer,
 * is a table the channel loop walks with LDM: per output channel its bias, the
 * field's weights and the requantisation constants. Where the two-pixel kernel of
 * eb_conv_dsp.c spends about 28 instructions per output on a 16-element field (its
 * per-pair set-up and requantisation do not shrink with K), this spends 19.
 *
 * Doubled sums: when eb_requant_table2 accepts the layer (|bias| < 2^29 and
 * K * 2^14 < 2^29, so |acc| < 2^30), the table holds 2 * bias and the weights
 * doubled (2 * w in [-256, 254] is still an int16 halfword for SMLAD), so the
 * channel's sum is 2 * acc exactly, the operand eb_rq_mul2 wants, without the
 * LSL per output the other paths spend.
 *
 * A biased filter (blob format 3, eb_conv_biased: 1x1 over 4, 8 or 16 channels here)
 * is unbiased while the table is built: w = stored ^ 0x80 at even positions, bias' =
 * bias'' - 128 * sum(odd w) (|bias' - bias''| <= 2^17 for K <= 16, far inside the
 * doubled sums' margin).
 */
#include <string.h>
#include "eb_conv_dsp.h"

/* (lo, hi) as the int16 halfwords of one word */
static uint32_t eb_pair16(int32_t lo, int32_t hi)
{
    return (uint32_t)(uint16_t)lo | ((uint32_t)(uint16_t)hi << 16);
}

/* The table of ng groups: 4 + 2*ng words per output channel,
 *   {d*bias, d*(w0, w2), d*(w1, w3), ..., d*(w[4ng-3], w[4ng-1]), rq0, rq1, rq2}
 * with d = 2 when dbl (doubled sums, rq = eb_requant_table2's {m, hc, e}) else 1
 * (rq = eb_requant_table's {m, chi, sh}); weights after K are zeros. */
static void eb_small_table(const eb_conv_params *p, int32_t K, int32_t ng, int dbl, const int32_t *rq,
                           uint32_t *tab)
{
    const int32_t OC = p->out.c, d = dbl ? 2 : 1;
    const int biased = eb_conv_biased(p);
    int32_t u, g, i;
    for (u = 0; u < OC; u++) {
        uint32_t *const e = tab + (size_t)(4 + 2 * ng) * u;
        uint32_t bias = (uint32_t)eb_ld32(p->chan + 4 * (size_t)u);
        for (g = 0; g < ng; g++) {
            int32_t w[4];
            for (i = 0; i < 4; i++) {
                const int32_t k = 4 * g + i;
                int32_t v = k < K ? eb_conv_filter_at(p->filter, K, OC, u, k) : 0;
                /* a biased filter (blob format 3): w ^ 0x80 at even k, and the bias
                 * bias'' = bias' + 128 * sum(odd w) */
                if (biased && k < K) {
                    v = (k & 1) == 0 ? (int32_t)(int8_t)(uint8_t)((uint32_t)v ^ 0x80u) : v;
                    bias -= (k & 1) ? 128u * (uint32_t)v : 0u;
                }
                w[i] = d * v;
            }
            e[1 + 2 * g] = eb_pair16(w[0], w[2]);
            e[2 + 2 * g] = eb_pair16(w[1], w[3]);
        }
        e[0] = bias * (uint32_t)d;
        e[1 + 2 * ng] = (uint32_t)rq[3 * u];
        e[2 + 2 * ng] = (uint32_t)rq[3 * u + 1];
        e[3 + 2 * ng] = (uint32_t)rq[3 * u + 2];
    }
}

/* the channel loops' bodies, shared by the per-pixel kernels and the fused pixel loops:
 * EB_K8_SUMS the K <= 8 sum (bias and four SMLAD), EB_K8_DBL its requantisation on
 * doubled sums (doubled bias and weights): 13 instructions a channel; EB_K16_CHAN the
 * 8 < K <= 16 channel on doubled sums (see eb_small_k16) */
#define EB_K8_SUMS                                                        \
    "ldmia  %[t]!, {%[a], %[w0], %[w1], %[w2], %[w3]}\n\t"              \
    "smlad  %[a], %[w0], %[x0], %[a]\n\t"                               \
    "smlad  %[a], %[w1], %[x1], %[a]\n\t"                               \
    "smlad  %[a], %[w2], %[x2], %[a]\n\t"                               \
    "smlad  %[a], %[w3], %[x3], %[a]\n\t"
#define EB_K8_DBL                                                         \
    EB_K8_SUMS                                                            \
    "ldmia  %[t]!, {%[w0], %[w1], %[w2]}\n\t"     /* m, hc, e */         \
    "add    %[w1], %[w1], %[a], asr #31\n\t"                            \
    "smmlar %[w1], %[a], %[w0], %[w1]\n\t"                              \
    "asr    %[w1], %[w1], %[w2]\n\t"                                    \
    "ssat   %[w1], #8, %[w1]\n\t"                                       \
    "strb   %[w1], [%[o]], #1\n\t"
#define EB_K16_CHAN                                                       \
    "ldmia  %[t]!, {%[a], %[w0], %[w1]}\n\t"                            \
    "smlad  %[a], %[w0], %[x0], %[a]\n\t"                               \
    "smlad  %[a], %[w1], %[x1], %[a]\n\t"                               \
    "ldmia  %[t]!, {%[w0], %[w1]}\n\t"                                  \
    "smlad  %[a], %[w0], %[x2], %[a]\n\t"                               \
    "smlad  %[a], %[w1], %[x3], %[a]\n\t"                               \
    "ldmia  %[t]!, {%[w0], %[w1]}\n\t"                                  \
    "smlad  %[a], %[w0], %[x4], %[a]\n\t"                               \
    "smlad  %[a], %[w1], %[x5], %[a]\n\t"                               \
    "ldmia  %[t]!, {%[w0], %[w1]}\n\t"                                  \
    "smlad  %[a], %[w0], %[x6], %[a]\n\t"                               \
    "smlad  %[a], %[w1], %[x7], %[a]\n\t"                               \
    "ldmia  %[t]!, {%[w0], %[w1]}\n\t"            /* m, hc */          \
    "add    %[w1], %[w1], %[a], asr #31\n\t"                            \
    "smmlar %[w1], %[a], %[w0], %[w1]\n\t"                              \
    "ldr    %[w0], [%[t]], #4\n\t"                /* e */              \
    "asr    %[w1], %[w1], %[w0]\n\t"                                    \
    "ssat   %[w1], #8, %[w1]\n\t"                                       \
    "strb   %[w1], [%[o]], #1\n\t"

/* K <= 8: eight words a channel {bias, 4 pairs, rq}; one pixel's four words of x in
 * r8-r11; per channel two LDM, four SMLAD and the requantisation (13 instructions
 * on doubled sums, 15 with eb_requant_table's SMLAL form), two channels a pass when
 * OC is even. */
static void eb_small_k8(const uint32_t *tab, int32_t OC, int dbl, const int8_t *src, int8_t *out)
{
    const uint32_t v0 = eb_ldw(src), v1 = eb_ldw(src + 4);
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
#define EB_K8_OPERANDS                                                                             \
    : [t] "+r"(rt), [o] "+r"(ro), [a] "=&r"(a), [w0] "=&r"(w0), [w1] "=&r"(w1), [w2] "=&r"(w2),   \
      [w3] "=&r"(w3), [s] "=&r"(s)                                                                 \
    : [end] "r"(rend), [x0] "r"(x0), [x1] "r"(x1), [x2] "r"(x2), [x3] "r"(x3)                     \
    : "cc", "memory"
    if (dbl && (OC & 1) == 0) {
        __asm__ volatile("1:\n\t" EB_K8_DBL EB_K8_DBL "cmp    %[t], %[end]\n\t"
                         "bne    1b\n\t" EB_K8_OPERANDS);
        return;
    }
    if (dbl) {
        __asm__ volatile("1:\n\t" EB_K8_DBL "cmp    %[t], %[end]\n\t"
                         "bne    1b\n\t" EB_K8_OPERANDS);
        return;
    }
    /* eb_rq_mul's SMLAL form on the plain sums ({m, chi, sh}) */
    __asm__ volatile(
        "1:\n\t" EB_K8_SUMS
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
        EB_K8_OPERANDS);
#undef EB_K8_OPERANDS
}

/* 8 < K <= 16, doubled sums only: twelve words a channel {2*bias, 8 pairs, m, hc, e};
 * one pixel's eight words of x in r5-r12 (all 14 allocatable registers pinned: r0
 * table, r1 its end, lr out, r2 the sum, r3/r4 two weight words, then m/hc and e).
 * Per channel: five LDM, eight SMLAD, the requantisation (LDR of e, ADD, SMMLAR, ASR,
 * SSAT, STRB): 19 instructions for 16 MACs, and the loop's CMP/BNE once per two
 * channels when OC is even. */
static void eb_small_k16(const uint32_t *tab, int32_t OC, const int8_t *src, int8_t *out)
{
    const uint32_t v0 = eb_ldw(src), v1 = eb_ldw(src + 4), v2 = eb_ldw(src + 8), v3 = eb_ldw(src + 12);
    register const uint32_t *rt __asm__("r0") = tab;
    register const uint32_t *rend __asm__("r1") = tab + 12 * (size_t)OC;
    register int8_t *ro __asm__("lr") = out;
    register uint32_t x0 __asm__("r5") = (uint32_t)eb_sx02(v0);
    register uint32_t x1 __asm__("r6") = (uint32_t)eb_sx13(v0);
    register uint32_t x2 __asm__("r7") = (uint32_t)eb_sx02(v1);
    register uint32_t x3 __asm__("r8") = (uint32_t)eb_sx13(v1);
    register uint32_t x4 __asm__("r9") = (uint32_t)eb_sx02(v2);
    register uint32_t x5 __asm__("r10") = (uint32_t)eb_sx13(v2);
    register uint32_t x6 __asm__("r11") = (uint32_t)eb_sx02(v3);
    register uint32_t x7 __asm__("r12") = (uint32_t)eb_sx13(v3);
    register int32_t a __asm__("r2");
    register uint32_t w0 __asm__("r3"), w1 __asm__("r4");
#define EB_K16_OPERANDS                                                                            \
    : [t] "+r"(rt), [o] "+r"(ro), [a] "=&r"(a), [w0] "=&r"(w0), [w1] "=&r"(w1)                   \
    : [end] "r"(rend), [x0] "r"(x0), [x1] "r"(x1), [x2] "r"(x2), [x3] "r"(x3), [x4] "r"(x4),     \
      [x5] "r"(x5), [x6] "r"(x6), [x7] "r"(x7)                                                     \
    : "cc", "memory"
    if ((OC & 1) == 0) {
        __asm__ volatile("1:\n\t" EB_K16_CHAN EB_K16_CHAN "cmp    %[t], %[end]\n\t"
                         "bne    1b\n\t" EB_K16_OPERANDS);
        return;
    }
    __asm__ volatile("1:\n\t" EB_K16_CHAN "cmp    %[t], %[end]\n\t"
                     "bne    1b\n\t" EB_K16_OPERANDS);
#undef EB_K16_OPERANDS
}

/* The fused pixel loops (doubled sums, OC even, a 1x1 stride-1 layer without padding:
 * the pixels' fields are contiguous, C = K bytes apart, and the outputs OC bytes apart,
 * which the channel loop's post-incremented output pointer already walks). The whole
 * layer is one asm block: per pixel the field is loaded and widened inside the loop and
 * the table pointer reset from a word stored right after the table, instead of a C call
 * per pixel (its register pinning, prologue, epilogue and index arithmetic: about 50
 * instructions a pixel on K = 8, 100 on K = 16, now 9 and 19). The channel loop is
 * EB_K8_DBL / EB_K16_CHAN unchanged. ctl = tab + nw * OC (the table's end) holds
 * {table start, then for K = 16 the running field pointer, the fields' end}. */
static void eb_small_k8_all(const uint32_t *tab, int32_t OC, const int8_t *src, int32_t npix, int8_t *out)
{
    uint32_t *const ctl = (uint32_t *)(uintptr_t)(tab + 8 * (size_t)OC);
    const int8_t *const src_end = src + 8 * (size_t)npix;
    register const uint32_t *rt __asm__("r0") = tab;
    register const uint32_t *rend __asm__("r1") = ctl;
    register int8_t *ro __asm__("lr") = out;
    register const int8_t *rs __asm__("r12") = src;
    register uint32_t x0 __asm__("r8"), x1 __asm__("r9"), x2 __asm__("r10"), x3 __asm__("r11");
    register int32_t a __asm__("r2");
    register uint32_t w0 __asm__("r3"), w1 __asm__("r4"), w2 __asm__("r5"), w3 __asm__("r6");
    ctl[0] = (uint32_t)(uintptr_t)tab;
    ctl[1] = (uint32_t)(uintptr_t)src_end;
    __asm__ volatile(
        "2:\n\t"
        /* the pixel's eight x: (x0, x2), (x1, x3), (x4, x6), (x5, x7) */
        "ldr    %[w0], [%[s]], #4\n\t"
        "ldr    %[w1], [%[s]], #4\n\t"
        "sxtb16 %[x0], %[w0]\n\t"
        "sxtb16 %[x1], %[w0], ror #8\n\t"
        "sxtb16 %[x2], %[w1]\n\t"
        "sxtb16 %[x3], %[w1], ror #8\n\t"
        "1:\n\t" EB_K8_DBL EB_K8_DBL
        "cmp    %[t], %[end]\n\t"
        "bne    1b\n\t"
        /* t == ctl: the table's start and the fields' end */
        "ldrd   %[w0], %[w1], [%[end]]\n\t"
        "mov    %[t], %[w0]\n\t"
        "cmp    %[s], %[w1]\n\t"
        "bne    2b\n\t"
        : [t] "+r"(rt), [o] "+r"(ro), [s] "+r"(rs), [a] "=&r"(a), [w0] "=&r"(w0), [w1] "=&r"(w1),
          [w2] "=&r"(w2), [w3] "=&r"(w3), [x0] "=&r"(x0), [x1] "=&r"(x1), [x2] "=&r"(x2), [x3] "=&r"(x3)
        : [end] "r"(rend)
        : "cc", "memory");
}

/* K = 16: every allocatable register is taken by the channel loop (see eb_small_k16), so
 * the field pointer lives in ctl[1] between pixels (in a while the field is loaded) */
static void eb_small_k16_all(const uint32_t *tab, int32_t OC, const int8_t *src, int32_t npix, int8_t *out)
{
    uint32_t *const ctl = (uint32_t *)(uintptr_t)(tab + 12 * (size_t)OC);
    register const uint32_t *rt __asm__("r0") = tab;
    register const uint32_t *rend __asm__("r1") = ctl;
    register int8_t *ro __asm__("lr") = out;
    register uint32_t x0 __asm__("r5"), x1 __asm__("r6"), x2 __asm__("r7"), x3 __asm__("r8");
    register uint32_t x4 __asm__("r9"), x5 __asm__("r10"), x6 __asm__("r11"), x7 __asm__("r12");
    register int32_t a __asm__("r2") = (int32_t)(uintptr_t)src;
    register uint32_t w0 __asm__("r3"), w1 __asm__("r4");
    ctl[0] = (uint32_t)(uintptr_t)tab;
    ctl[2] = (uint32_t)(uintptr_t)(src + 16 * (size_t)npix);
    __asm__ volatile(
        "2:\n\t"
        /* a = the field pointer: x0..x7 = (x0, x2), (x1, x3), ... of its 16 bytes */
        "ldr    %[x1], [%[a]], #4\n\t"
        "sxtb16 %[x0], %[x1]\n\t"
        "sxtb16 %[x1], %[x1], ror #8\n\t"
        "ldr    %[x3], [%[a]], #4\n\t"
        "sxtb16 %[x2], %[x3]\n\t"
        "sxtb16 %[x3], %[x3], ror #8\n\t"
        "ldr    %[x5], [%[a]], #4\n\t"
        "sxtb16 %[x4], %[x5]\n\t"
        "sxtb16 %[x5], %[x5], ror #8\n\t"
        "ldr    %[x7], [%[a]], #4\n\t"
        "sxtb16 %[x6], %[x7]\n\t"
        "sxtb16 %[x7], %[x7], ror #8\n\t"
        "str    %[a], [%[end], #4]\n\t"
        "1:\n\t" EB_K16_CHAN EB_K16_CHAN
        "cmp    %[t], %[end]\n\t"
        "bne    1b\n\t"
        /* t == ctl: the table's start, the field pointer, the fields' end */
        "ldr    %[t], [%[end]]\n\t"
        "ldrd   %[a], %[w0], [%[end], #4]\n\t"
        "cmp    %[a], %[w0]\n\t"
        "bne    2b\n\t"
        : [t] "+r"(rt), [o] "+r"(ro), [a] "+r"(a), [w0] "=&r"(w0), [w1] "=&r"(w1), [x0] "=&r"(x0),
          [x1] "=&r"(x1), [x2] "=&r"(x2), [x3] "=&r"(x3), [x4] "=&r"(x4), [x5] "=&r"(x5), [x6] "=&r"(x6),
          [x7] "=&r"(x7)
        : [end] "r"(rend)
        : "cc", "memory");
}
#undef EB_K8_SUMS
#undef EB_K8_DBL
#undef EB_K16_CHAN

/* 1 when done; 0 (another path runs) when K > 16, the table does not fit the
 * scratch, or the requantisation is not the common case (for 8 < K: not the
 * doubled-sum case). Scratch: the table (4 + 2*ng words a channel), the
 * requantisation constants (3 words a channel), a 16-byte im2col field. */
int eb_conv_small(const eb_conv_params *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in.h, W = p->in.w, C = p->in.c;
    const int32_t OH = p->out.h, OW = p->out.w, OC = p->out.c;
    const int32_t K = p->kh * p->kw * C;
    const int32_t ng = K <= 8 ? 2 : 4, nw = 4 + 2 * ng;
    const int direct = K == 4 * ng && eb_conv_direct(p);
    const int8_t pad = (int8_t)(0u - (uint32_t)p->in_offset);
    uint32_t *const tab = eb_dsp_buf;
    int32_t *const rq = (int32_t *)(void *)(tab + (size_t)nw * OC);
    int8_t *const col = (int8_t *)(void *)(rq + 3 * (size_t)OC);
    int32_t k, b, oy, ox;
    int dbl;
    if (K > 16 || K < 1 || (size_t)OC * (size_t)(nw + 3) * 4u + 16u > EB_DSP_SCRATCH_BYTES) {
        return 0;
    }
    /* {m, hc, e} of eb_rq_mul2 on the doubled sums when every channel allows it, else
     * (K <= 8 only) eb_requant_table's {m, chi, sh} */
    dbl = eb_requant_table2(OC, p->chan, K, p->out_offset, p->act_min, p->act_max, rq, p, NULL, 0);
    if (!dbl && (ng == 4 || !eb_requant_table(OC, p->chan + 4 * (size_t)OC, p->chan + 8 * (size_t)OC,
                                               p->out_offset, p->act_min, p->act_max, rq))) {
        return 0;
    }
    eb_small_table(p, K, ng, dbl, rq, tab);
    /* a 1x1 stride-1 layer without padding on doubled sums and an even OC: the fused
     * pixel loop (its control words overwrite the start of rq, no longer needed) */
    if (dbl && (OC & 1) == 0 && K == 4 * ng && p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 &&
        p->ph == 0 && p->pw == 0 && OH == H && OW == W) {
        const int32_t npix = p->out.n * OH * OW;
        if (ng == 2) {
            eb_small_k8_all(tab, OC, in, npix, out);
        } else {
            eb_small_k16_all(tab, OC, in, npix, out);
        }
        return 1;
    }
    for (k = K; k < 4 * ng; k++) {
        col[k] = 0;
    }
    for (b = 0; b < p->out.n; b++) {
        const int8_t *const in_b = in + (size_t)b * H * W * C;
        for (oy = 0; oy < OH; oy++) {
            for (ox = 0; ox < OW; ox++) {
                const int32_t iy0 = oy * p->sh - p->ph, ix0 = ox * p->sw - p->pw;
                const int8_t *src = col;
                if (direct) {
                    src = in_b + ((size_t)iy0 * W + ix0) * C;
                } else {
                    eb_im2col(p, in_b, iy0, ix0, pad, col);
                }
                if (ng == 2) {
                    eb_small_k8(tab, OC, dbl, src, out);
                } else {
                    eb_small_k16(tab, OC, src, out);
                }
                out += OC;
            }
        }
    }
    return 1;
}
