/*
 * eb_conv_mm_dsp.c - the channel loops of CONV_2D on cores with the DSP extension,
 * shared by the paths of eb_conv_dsp.c and the stems of eb_conv_stem_dsp.c: two output
 * pixels' fields widened to int16 (eb_conv_dsp.c's layout: word 4g+0 px0 (x[4g],
 * x[4g+2]), 4g+1 px0 (x[4g+1], x[4g+3]), 4g+2 and 4g+3 the same of px1) against the
 * blob's blocked filter (eb_mm_blocks) or the filter widened into RAM (eb_widen_filter,
 * eb_mm_pairs_wide), and the two pixels' requantisation from eb_requant_table2's table
 * (eb_conv_requant_tbl2). Moved out of eb_conv_dsp.c unchanged so that the stem file and
 * eb_conv_dsp.c (which dispatches to it) do not need each other.
 */
#include "eb_conv_dsp.h"

/* What the two pair loops (eb_mm_blocks on the blob's blocked filter, eb_mm_pairs_wide
 * on the widened one) share: the state that does not fit the registers, in a block r7
 * points to (the accumulator and bias pointers, 16 * G, the blocks or pairs left); one
 * register plan (r0 x, r1 its end, lr the weights of type WT, r7 the control block,
 * r6/r8 row a's sums (px0, px1), r9/r10 row b's, r2-r5 the four words of x of a group,
 * r11/r12 a weight word and scratch: the LDM list in ascending order); a pair's start
 * (both rows' sums from the bias) and end (the four sums stored, x back to the fields'
 * start); the asm operands. Used inside those functions only (#undef after them). */
typedef struct {
    int32_t *acc;
    const uint8_t *bias;
    int32_t g16;
    int32_t left;
} eb_mm_ctl;
#define EB_MM_REGISTERS(WT, wptr)                                                                 \
    register const uint32_t *rx __asm__("r0") = xq;                                               \
    register const uint32_t *rend __asm__("r1") = xq + 4 * G;                                     \
    register WT rw __asm__("lr") = (wptr);                                                        \
    register void *rc __asm__("r7") = &ctl;                                                       \
    register int32_t a00 __asm__("r6"), a01 __asm__("r8"), a10 __asm__("r9"), a11 __asm__("r10"); \
    register uint32_t x0e __asm__("r2"), x0o __asm__("r3"), x1e __asm__("r4"), x1o __asm__("r5"); \
    register uint32_t v __asm__("r11"), t __asm__("r12")
#define EB_MM_CTL_SET(c, acc_, bias_, G_, n_) \
    do {                                      \
        (c).acc = (acc_);                     \
        (c).bias = (bias_);                   \
        (c).g16 = 16 * (G_);                  \
        (c).left = (n_);                      \
    } while (0)
#define EB_MM_PAIR_INIT                                   \
    "ldr    %[t], [%[c], #4]\n\t"                         \
    "ldr    %[a00], [%[t]], #4\n\t"                       \
    "ldr    %[a10], [%[t]], #4\n\t"                       \
    "str    %[t], [%[c], #4]\n\t"                         \
    "mov    %[a01], %[a00]\n\t"                           \
    "mov    %[a11], %[a10]\n\t"
#define EB_MM_PAIR_STORE                                  \
    "ldr    %[t], [%[c]]\n\t"                             \
    "strd   %[a00], %[a01], [%[t]], #8\n\t"               \
    "strd   %[a10], %[a11], [%[t]], #8\n\t"               \
    "str    %[t], [%[c]]\n\t"                             \
    "ldr    %[t], [%[c], #8]\n\t"                         \
    "sub    %[x], %[x], %[t]\n\t"
/* the inner loop at label L: REPT groups (GROUP), then one CMP/BNE; and the count of
 * pairs (or blocks) left, ctl.left, down by one, back to label 2 while some are left */
#define EB_MM_INNER(L, REPT, GROUP)                       \
    L ":\n\t"                                             \
    ".rept " #REPT "\n\t"                                 \
    GROUP                                                 \
    ".endr\n\t"                                           \
    "cmp    %[x], %[end]\n\t"                             \
    "bne    " L "b\n\t"
#define EB_MM_PAIRS_LEFT                                  \
    "ldr    %[t], [%[c], #12]\n\t"                        \
    "subs   %[t], %[t], #1\n\t"                           \
    "str    %[t], [%[c], #12]\n\t"                        \
    "bne    2b\n\t"
#define EB_MM_OPERANDS                                                                                    \
    : [x] "+r"(rx), [w] "+r"(rw), [a00] "=&r"(a00), [a01] "=&r"(a01), [a10] "=&r"(a10), [a11] "=&r"(a11), \
      [x0e] "=&r"(x0e), [x0o] "=&r"(x0o), [x1e] "=&r"(x1e), [x1o] "=&r"(x1o), [v] "=&r"(v), [t] "=&r"(t)   \
    : [end] "r"(rend), [c] "r"(rc)                                                                         \
    : "cc", "memory"

/* Every block of four channels of the blocked layout (K % 4 == 0), both
 * pairs of each, in one asm loop: acc[2u], acc[2u+1] = bias[u] + row u . px0,
 * px1 for u < 4 * nblocks. The inner loop is eb_mm2x2_blocked's; between
 * pairs (15 instructions) the state that does not fit the registers (the
 * accumulator and bias pointers, 16 * G, the blocks left) lives in a small
 * block that r7 points to (eb_mm_ctl; the register plan of EB_MM_REGISTERS, lr
 * the blocked filter). */
void eb_mm_blocks(const uint32_t *xq, int32_t G, const int8_t *w, const uint8_t *bias, int32_t nblocks,
                  int32_t *acc)
{
    eb_mm_ctl ctl;
    EB_MM_REGISTERS(const int8_t *, w);
    if (G <= 0 || nblocks <= 0) {
        return;
    }
    EB_MM_CTL_SET(ctl, acc, bias, G, nblocks);
/* the whole loop nest with the inner loop unrolled REPT times (G % REPT == 0):
 * REPT groups, then one CMP/BNE */
#define EB_MM_BLOCKS_ASM(REPT)                                                                                  \
    __asm__ volatile(                                                                                           \
        "2:\n\t"                                                                                                \
        EB_MM_PAIR_INIT                                                                                         \
        EB_MM_INNER("1", REPT, EB_MM_GROUP)                                                                     \
        EB_MM_PAIR_STORE                                                                                        \
        "sub    %[w], %[w], %[t]\n\t"          /* row u+2: back to the block, 8 bytes in */                     \
        "add    %[w], %[w], #8\n\t"                                                                             \
        EB_MM_PAIR_INIT                                                                                         \
        EB_MM_INNER("3", REPT, EB_MM_GROUP)                                                                     \
        EB_MM_PAIR_STORE                                                                                        \
        "sub    %[w], %[w], #8\n\t"            /* the next block */                                             \
        EB_MM_PAIRS_LEFT                                                                                        \
        EB_MM_OPERANDS)
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
}

/* The filter widened once per layer into RAM (when it fits the scratch): for each
 * pair of output channels (a, b) and group g of four elements, the four words
 *   (a: (w0, w2), (w1, w3)) (b: (w0, w2), (w1, w3))
 * as int16 pairs, the pairs one after another (2*K bytes a channel), for the n
 * channels from c0 (both even). From the blocked layout of G groups (the channels
 * in whole blocks of four). */
void eb_widen_filter(const int8_t *w, int32_t G, int32_t c0, int32_t n, uint32_t *wt)
{
    int32_t u, g, j;
    for (u = c0; u < c0 + n; u += 2) {
        const int8_t *const blk = w + 16 * (size_t)G * (size_t)(u >> 2);
        for (g = 0; g < G; g++) {
            for (j = u & 3; j < (u & 3) + 2; j++) {
                const uint32_t v = eb_ldw(blk + 16 * (size_t)g + 4 * j);
                *wt++ = (uint32_t)eb_sx02(v);
                *wt++ = (uint32_t)eb_sx13(v);
            }
        }
    }
}

/* eb_mm_blocks on the widened filter of eb_widen_filter: every pair of channels in
 * one asm loop, acc[2u], acc[2u+1] = bias[u] + row u . px0, px1. Per group of four
 * elements: one LDM of x, two LDRD of weights (no SXTB16), eight SMLAD: 11
 * instructions for 16 MACs instead of 15. Registers as EB_MM_REGISTERS (lr the
 * widened weights, r11/r12 a weight pair). */
void eb_mm_pairs_wide(const uint32_t *xq, int32_t G, const uint32_t *wt, const uint8_t *bias, int32_t npairs,
                      int32_t *acc)
{
    eb_mm_ctl ctl;
    EB_MM_REGISTERS(const uint32_t *, wt);
    if (G <= 0 || npairs <= 0) {
        return;
    }
    EB_MM_CTL_SET(ctl, acc, bias, G, npairs);
#define EB_MW_GROUP                                       \
    "ldmia  %[x]!, {%[x0e], %[x0o], %[x1e], %[x1o]}\n\t"  \
    "ldrd   %[t], %[v], [%[w], #8]\n\t"                   \
    "smlad  %[a10], %[t], %[x0e], %[a10]\n\t"             \
    "smlad  %[a11], %[t], %[x1e], %[a11]\n\t"             \
    "smlad  %[a10], %[v], %[x0o], %[a10]\n\t"             \
    "smlad  %[a11], %[v], %[x1o], %[a11]\n\t"             \
    "ldrd   %[t], %[v], [%[w]], #16\n\t"                  \
    "smlad  %[a00], %[t], %[x0e], %[a00]\n\t"             \
    "smlad  %[a01], %[t], %[x1e], %[a01]\n\t"             \
    "smlad  %[a00], %[v], %[x0o], %[a00]\n\t"             \
    "smlad  %[a01], %[v], %[x1o], %[a01]\n\t"
#define EB_MW_ASM(REPT)                                                                                         \
    __asm__ volatile(                                                                                           \
        "2:\n\t"                                                                                                \
        EB_MM_PAIR_INIT                                                                                         \
        EB_MM_INNER("1", REPT, EB_MW_GROUP)                                                                     \
        EB_MM_PAIR_STORE                                                                                        \
        EB_MM_PAIRS_LEFT                                                                                        \
        EB_MM_OPERANDS)
    /* unrolled by a divisor of G as eb_mm_blocks (7: a 3x3 three-channel stem padded to 28) */
    if ((G & 3) == 0) {
        EB_MW_ASM(4);
    } else if (G == 7) {
        EB_MW_ASM(7);
    } else if ((G & 1) == 0) {
        EB_MW_ASM(2);
    } else {
        EB_MW_ASM(1);
    }
#undef EB_MW_ASM
#undef EB_MW_GROUP
}
#undef EB_MM_REGISTERS
#undef EB_MM_CTL_SET
#undef EB_MM_PAIR_INIT
#undef EB_MM_PAIR_STORE
#undef EB_MM_OPERANDS
#undef EB_MM_INNER
#undef EB_MM_PAIRS_LEFT

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

