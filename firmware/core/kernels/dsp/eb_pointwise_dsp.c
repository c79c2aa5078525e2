/*
 * eb_pointwise_dsp.c - pointwise (1x1, no padding) CONV_2D on cores with the DSP
 * extension (the kernel set of kernels/dsp/, see eb_dsp.c), on the biased filter of
 * blob format 3 (firmware/BLOB.md; eb_conv_biased: kh == kw == 1, ph == pw == 0,
 * C % 4 == 0, any stride): FULLY_CONNECTED's identity (eb_fc_dsp.c) on two output
 * pixels and two output channels at a time.
 *
 * The filter. Rows = output channels, blocked as every CONV_2D filter (blocks of four
 * rows; inside a block, for each group of four input channels the four rows' words one
 * after the other; the OC % 4 last rows plain), C % 4 == 0 so no depth tail. A row's
 * word at input channels k..k+3 holds b0 = w0 ^ 0x80, b1 = w1, b2 = w2 ^ 0x80, b3 = w3,
 * and the row's bias'' = bias' + 128 * sum(odd w). SMLAD on the RAW word W sees the
 * halfwords h0 = w0 + 128 + 256 * w1, h1 = w2 + 128 + 256 * w3.
 *
 * The pixels. Per pair of output pixels (A, B; an odd last pixel pairs with itself),
 * each pixel's C input values are prepared once into the scratch, per group of four
 * x0..x3 (the pixel's input at (oy * sh, ox * sw): any stride):
 *   P = (x0, x2)                                  = SXTB16(v)
 *   Q = (x1 - 128 - 256 * x0, x3 - 128 - 256 * x2) = REV16(v) ^ 0xFF80FF80
 * (exact in int16: x0 in [-128, 127], x1 - 128 in [-256, -1]), interleaved
 * [PA QA PB QB] per group (16 bytes a group, 4 * C bytes in all), and
 * s = -128 * sum(even-position x) per pixel. With SXTB16(W, ror 8) = (w1, w3):
 *   SMLAD(W, P) + SMLAD(SXTB16(W, ror 8), Q)
 *     = x0 w0 + x1 w1 + x2 w2 + x3 w3 + 128 * (x0 + x2) - 128 * (w1 + w3)
 * exactly modulo 2^32 (SMLAD wraps; the intermediate wraps cancel). Summed over the
 * row: bias'' + s + that = bias' + sum(w x), the portable kernel's integer.
 *
 * The inner loop (eb_pw_blocks), two rows (a, b: rows 0-1, then 2-3 of a block) by
 * two pixels, per group of four input channels:
 *   LDM x!, {PA, QA, PB, QB}; LDRD Wa, Wb, [w], #16;
 *   4 SMLAD with the P's; SXTB16 ror 8 of Wa and Wb in place; 4 SMLAD with the Q's
 * = 12 instructions per 16 MACs (the unbiased pair loop of eb_conv_dsp.c takes 15: its
 * four SXTB16 widen both halves of both weight words). Cycle model of
 * edgebench.mcu.cycles: LDM 5, LDRD 3, 10 one-cycle ALU = 18 a group (20 before).
 * Register plan (all 14 allocatable registers): r0 x, r1 its end, r2-r5 PA QA PB QB
 * (the LDM list ascending), r6/r8 row a's sums (A, B), r9/r10 row b's, r11/r12 Wa/Wb,
 * lr the filter, r7 a control block in memory (the accumulator and bias pointers,
 * 16 * G, the blocks left, the two pixels' s).
 *
 * Requantisation: the two-pixel kernels' (eb_conv_requant_dsp.c), the same tables and
 * paths as eb_conv_s8_opt. Bounds: the sums are exact modulo 2^32 whatever the order;
 * eb_conv_requant_tbl2 needs |bias' + sum(w x)| < 2^30, which
 * eb_requant_table2 vouches for on bias'' (|bias''| < 2^29): |bias' - bias''| =
 * 128 * |sum(odd w)| <= 2^13 * C and |sum(w x)| <= 2^14 * C, so |acc| < 2^29 + 3 * 2^13
 * * C < 2^30 for C <= 1024, which the scratch bound below implies.
 *
 * eb_pointwise_s8 returns 0 (the portable kernel runs, which reads the same biased
 * layout) when the layer is not eb_conv_biased's, C < 4, the filter or the per-channel
 * arrays are not word-aligned, or the working set does not fit the scratch:
 * 4 * C (the P, Q streams) + 8 * OC (the sums) + OC rounded up to 4 (the odd last
 * pixel's discarded outputs) bytes; 12 * OC more for the requantisation table.
 */
#include "eb_conv_dsp.h"

/* The state of eb_pw_blocks that does not fit the registers (r7 points to it). */
typedef struct {
    int32_t *acc;           /* [c, #0]: where the next pair's four sums go */
    const uint8_t *bias;    /* [c, #4]: the next pair's two bias'' */
    int32_t g16;            /* [c, #8]: 16 * G, the bytes of the P, Q streams */
    int32_t left;           /* [c, #12]: blocks of four rows left */
    int32_t sa, sb;         /* [c, #16], [c, #20]: -128 * sum(even x) of pixels A, B */
} eb_pw_ctl;

/* Pixel slot (0: A, 1: B) of G >= 1 groups: P, Q of every group of four x at src into
 * d[0], d[1] (then d += 4 words); returns -128 * sum(even-position x). Two groups a
 * pass (an odd count runs one group first). */
static int32_t eb_pw_prep(const int8_t *src, int32_t G, uint32_t *d)
{
    const int8_t *const end = src + 4 * G;
    const uint32_t k = 0xFF80FF80u, one = 0x00010001u;
    uint32_t v, pv, qv;
    int32_t s = 0;
    if (G & 1) {
        v = eb_ldw(src);
        pv = (uint32_t)__sxtb16((int8x4_t)v);
        __asm__("rev16 %0, %1" : "=r"(qv) : "r"(v));
        d[0] = pv;
        d[1] = qv ^ k;
        s = __smlad((int16x2_t)pv, (int16x2_t)one, s);
        d += 4;
        src += 4;
    }
    if (src != end) {
        __asm__ volatile(
            "1:\n\t"
            "ldr    %[v], [%[s]], #4\n\t"
            "sxtb16 %[p], %[v]\n\t"
            "rev16  %[q], %[v]\n\t"
            "eor    %[q], %[q], %[k]\n\t"
            "strd   %[p], %[q], [%[d]], #16\n\t"
            "smlad  %[e], %[p], %[one], %[e]\n\t"
            "ldr    %[v], [%[s]], #4\n\t"
            "sxtb16 %[p], %[v]\n\t"
            "rev16  %[q], %[v]\n\t"
            "eor    %[q], %[q], %[k]\n\t"
            "strd   %[p], %[q], [%[d]], #16\n\t"
            "smlad  %[e], %[p], %[one], %[e]\n\t"
            "cmp    %[s], %[end]\n\t"
            "bne    1b\n\t"
            : [s] "+r"(src), [d] "+r"(d), [e] "+r"(s), [v] "=&r"(v), [p] "=&r"(pv), [q] "=&r"(qv)
            : [end] "r"(end), [k] "r"(k), [one] "r"(one)
            : "cc", "memory");
    }
    return (int32_t)(0u - 128u * (uint32_t)s);
}

/* Every block of four rows (nblocks >= 1), both pairs of each, for the two prepared
 * pixels: acc[2u], acc[2u + 1] = bias''[u] + s(A), s(B) + the biased dot products =
 * bias'[u] + row u . A, B, for u < 4 * nblocks (the accumulator order of the pair loops
 * of eb_conv_dsp.c, which eb_conv_requant_tbl2 reads). The loop nest of eb_mm_blocks
 * there, with the biased group. */
static void eb_pw_blocks(const uint32_t *xq, int32_t G, const int8_t *w, eb_pw_ctl *ctl)
{
    register const uint32_t *rx __asm__("r0") = xq;
    register const uint32_t *rend __asm__("r1") = xq + 4 * G;
    register const int8_t *rw __asm__("lr") = w;
    register eb_pw_ctl *rc __asm__("r7") = ctl;
    register int32_t a00 __asm__("r6"), a01 __asm__("r8"), a10 __asm__("r9"), a11 __asm__("r10");
    register uint32_t pa __asm__("r2"), qa __asm__("r3"), pb __asm__("r4"), qb __asm__("r5");
    register uint32_t wa __asm__("r11"), wb __asm__("r12");
/* a pair's start: both rows' bias'' plus each pixel's s (PA, QA serve as scratch) */
#define EB_PW_PAIR_INIT                                   \
    "ldr    %[wb], [%[c], #4]\n\t"                        \
    "ldr    %[a00], [%[wb]], #4\n\t"                      \
    "ldr    %[a10], [%[wb]], #4\n\t"                      \
    "str    %[wb], [%[c], #4]\n\t"                        \
    "ldrd   %[pa], %[qa], [%[c], #16]\n\t"                \
    "add    %[a01], %[a00], %[qa]\n\t"                    \
    "add    %[a00], %[a00], %[pa]\n\t"                    \
    "add    %[a11], %[a10], %[qa]\n\t"                    \
    "add    %[a10], %[a10], %[pa]\n\t"
/* a pair's end: the four sums stored, x back to the streams' start (wb = 16 * G) */
#define EB_PW_PAIR_STORE                                  \
    "ldr    %[wb], [%[c]]\n\t"                            \
    "strd   %[a00], %[a01], [%[wb]], #8\n\t"              \
    "strd   %[a10], %[a11], [%[wb]], #8\n\t"              \
    "str    %[wb], [%[c]]\n\t"                            \
    "ldr    %[wb], [%[c], #8]\n\t"                        \
    "sub    %[x], %[x], %[wb]\n\t"
/* one group of four input channels: 12 instructions for 16 MACs */
#define EB_PW_GROUP                                       \
    "ldmia  %[x]!, {%[pa], %[qa], %[pb], %[qb]}\n\t"      \
    "ldrd   %[wa], %[wb], [%[w]], #16\n\t"                \
    "smlad  %[a00], %[wa], %[pa], %[a00]\n\t"             \
    "smlad  %[a01], %[wa], %[pb], %[a01]\n\t"             \
    "smlad  %[a10], %[wb], %[pa], %[a10]\n\t"             \
    "smlad  %[a11], %[wb], %[pb], %[a11]\n\t"             \
    "sxtb16 %[wa], %[wa], ror #8\n\t"                     \
    "sxtb16 %[wb], %[wb], ror #8\n\t"                     \
    "smlad  %[a00], %[wa], %[qa], %[a00]\n\t"             \
    "smlad  %[a01], %[wa], %[qb], %[a01]\n\t"             \
    "smlad  %[a10], %[wb], %[qa], %[a10]\n\t"             \
    "smlad  %[a11], %[wb], %[qb], %[a11]\n\t"
/* the loop nest, the group loop unrolled REPT times (G % REPT == 0) */
#define EB_PW_BLOCKS_ASM(REPT)                                                                                  \
    __asm__ volatile(                                                                                           \
        "2:\n\t"                                                                                                \
        EB_PW_PAIR_INIT                                                                                         \
        "1:\n\t"                                                                                                \
        ".rept " #REPT "\n\t"                                                                                   \
        EB_PW_GROUP                                                                                             \
        ".endr\n\t"                                                                                             \
        "cmp    %[x], %[end]\n\t"                                                                               \
        "bne    1b\n\t"                                                                                         \
        EB_PW_PAIR_STORE                                                                                        \
        "sub    %[w], %[w], %[wb]\n\t"         /* rows 2, 3: back to the block, 8 bytes in */                   \
        "add    %[w], %[w], #8\n\t"                                                                             \
        EB_PW_PAIR_INIT                                                                                         \
        "3:\n\t"                                                                                                \
        ".rept " #REPT "\n\t"                                                                                   \
        EB_PW_GROUP                                                                                             \
        ".endr\n\t"                                                                                             \
        "cmp    %[x], %[end]\n\t"                                                                               \
        "bne    3b\n\t"                                                                                         \
        EB_PW_PAIR_STORE                                                                                        \
        "sub    %[w], %[w], #8\n\t"            /* the next block */                                             \
        "ldr    %[wb], [%[c], #12]\n\t"                                                                         \
        "subs   %[wb], %[wb], #1\n\t"                                                                           \
        "str    %[wb], [%[c], #12]\n\t"                                                                         \
        "bne    2b\n\t"                                                                                         \
        : [x] "+r"(rx), [w] "+r"(rw), [a00] "=&r"(a00), [a01] "=&r"(a01), [a10] "=&r"(a10),                    \
          [a11] "=&r"(a11), [pa] "=&r"(pa), [qa] "=&r"(qa), [pb] "=&r"(pb), [qb] "=&r"(qb), [wa] "=&r"(wa),    \
          [wb] "=&r"(wb)                                                                                        \
        : [end] "r"(rend), [c] "r"(rc)                                                                          \
        : "cc", "memory")
    if ((G & 3) == 0) {
        EB_PW_BLOCKS_ASM(4);
    } else if ((G & 1) == 0) {
        EB_PW_BLOCKS_ASM(2);
    } else {
        EB_PW_BLOCKS_ASM(1);
    }
#undef EB_PW_BLOCKS_ASM
#undef EB_PW_GROUP
#undef EB_PW_PAIR_STORE
#undef EB_PW_PAIR_INIT
}

/* One plain (biased) row of G groups against both prepared pixels: a[0], a[1] +=
 * the biased dot products (the OC % 4 last rows; a simple exact loop). */
static EB_NOINLINE void eb_pw_row(const uint32_t *xq, int32_t G, const int8_t *row, int32_t *a)
{
    int32_t a0 = a[0], a1 = a[1], g;
    for (g = 0; g < G; g++) {
        const uint32_t v = eb_ldw(row + 4 * g);
        const int16x2_t o = (int16x2_t)eb_sx13(v);
        a0 = __smlad((int16x2_t)v, (int16x2_t)xq[4 * g], a0);
        a0 = __smlad(o, (int16x2_t)xq[4 * g + 1], a0);
        a1 = __smlad((int16x2_t)v, (int16x2_t)xq[4 * g + 2], a1);
        a1 = __smlad(o, (int16x2_t)xq[4 * g + 3], a1);
    }
    a[0] = a0;
    a[1] = a1;
}

int eb_pointwise_s8(const eb_conv_params *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in.h, W = p->in.w, C = p->in.c;
    const int32_t OH = p->out.h, OW = p->out.w, OC = p->out.c;
    const int32_t G = C >> 2, OC4 = OC & ~3;
    const int32_t npix = p->out.n * OH * OW;
    const uint8_t *const bias = p->chan;
    uint32_t *const xq = eb_dsp_buf;
    int32_t *const acc = (int32_t *)(void *)(xq + 4 * G);
    int8_t *const col = (int8_t *)(void *)(acc + 2 * OC);
    int32_t *const tbl = (int32_t *)(void *)(col + ((OC + 3) & ~3));
    uint32_t *fix;
    int32_t maxfix, use_tbl;
    int32_t pi, b = 0, oy = 0, ox = 0;
    eb_pw_ctl ctl;
    if (!eb_conv_biased(p) || G < 1 || (((uintptr_t)p->filter | (uintptr_t)p->chan) & 3u) != 0 ||
        4u * (size_t)C + 8u * (size_t)OC + (size_t)((OC + 3) & ~3) > EB_DSP_SCRATCH_BYTES) {
        return 0;
    }
    /* the requantisation table (and its fix-up list) when it fits after col, as
     * eb_conv_s8_opt */
    use_tbl = (size_t)((uint8_t *)(tbl + 3 * OC) - (uint8_t *)eb_dsp_buf) <= EB_DSP_SCRATCH_BYTES;
    fix = (uint32_t *)(void *)(tbl + 3 * OC);
    maxfix = use_tbl ? (int32_t)(((uint8_t *)eb_dsp_buf + EB_DSP_SCRATCH_BYTES - (uint8_t *)fix) / 4) : 0;
    use_tbl = !use_tbl ? 0
              : eb_requant_table2(OC, p->chan, C, p->out_offset, p->act_min, p->act_max, tbl, p, fix, maxfix)
                  ? 2 + (eb_conv_fix.n > 0)
              : eb_requant_table(OC, p->chan + 4 * (size_t)OC, p->chan + 8 * (size_t)OC, p->out_offset,
                                 p->act_min, p->act_max, tbl);
    for (pi = 0; pi < npix; pi += 2) {
        int8_t *const o0 = out + (size_t)pi * OC;
        int8_t *const o1 = pi + 1 < npix ? o0 + OC : col;
        int32_t slot, u;
        /* the two pixels' P, Q streams (the odd last pixel twice) */
        for (slot = 0; slot < 2; slot++) {
            const int8_t *const src = in + (((size_t)b * H + (size_t)oy * p->sh) * W + (size_t)ox * p->sw) * C;
            int32_t s = eb_pw_prep(src, G, xq + 2 * slot);
            if (slot == 0) {
                ctl.sa = s;
                if (pi + 1 >= npix) {
                    ctl.sb = eb_pw_prep(src, G, xq + 2);
                    break;
                }
            } else {
                ctl.sb = s;
            }
            if (++ox == OW) {
                ox = 0;
                if (++oy == OH) {
                    oy = 0;
                    b++;
                }
            }
        }
        if (OC4 > 0) {
            ctl.acc = acc;
            ctl.bias = bias;
            ctl.g16 = 16 * G;
            ctl.left = OC4 >> 2;
            eb_pw_blocks(xq, G, p->filter, &ctl);
        }
        /* the OC % 4 last rows, plain */
        for (u = OC4; u < OC; u++) {
            int32_t *const a = acc + 2 * u;
            const int32_t bu = eb_ld32(bias + 4 * (size_t)u);
            a[0] = eb_acc(bu, ctl.sa);
            a[1] = eb_acc(bu, ctl.sb);
            eb_pw_row(xq, G, p->filter + (size_t)u * C, a);
        }
        if (use_tbl >= 2) {
            eb_conv_requant_tbl2(acc, OC, tbl, o0, o1);
            if (use_tbl == 3) {
                eb_conv_requant_fix(acc, o0, o1);
            }
        } else if (use_tbl) {
            eb_conv_requant_tbl(acc, OC, tbl, o0, o1);
        } else {
            eb_conv_requant(acc, OC, p->chan + 4 * (size_t)OC, p->chan + 8 * (size_t)OC, p->out_offset,
                            p->act_min, p->act_max, o0, o1);
        }
    }
    return 1;
}
