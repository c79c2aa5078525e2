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
 * The inner loop (eb_pw_pairs), two rows (a, b: rows 0-1 or 2-3 of a block) by two
 * pixels, per group of four input channels:
 *   LDM x!, {PA, QA, PB, QB}; LDRD Wa, Wb, [w], #16;
 *   4 SMLAD with the P's; SXTB16 ror 8 of Wa and Wb in place; 4 SMLAD with the Q's
 * = 12 instructions per 16 MACs (the unbiased pair loop, eb_mm_blocks of eb_conv_mm_dsp.c,
 * takes 15: its four SXTB16 widen both halves of both weight words). Cycle model of
 * edgebench.mcu.cycles: LDM 5, LDRD 3, 10 one-cycle ALU = 18 a group (20 before).
 * Register plan (all 14 allocatable registers): r0 x, r1 its end, r2-r5 PA QA PB QB
 * (the LDM list ascending), r6/r8 row a's sums (A, B), r9/r10 row b's, r11/r12 Wa/Wb,
 * lr the filter, r7 a control block in memory (the live pairs' list, where the sums
 * go, 16 * G, the two pixels' s).
 *
 * Dead channels. A channel whose weights are all zero has the sum bias'' (= bias')
 * whatever the input, so its output is one constant: the layer's plan (eb_pw_make_plan,
 * once per call) lists only the pairs of rows with a live row and keeps a template of
 * the outputs with the dead channels' constants;
 * per pixel the template is copied (a word per instruction pair) and only the live
 * channels requantised. MobileNet v1 (VWW) has many such channels: its 1x1 layers
 * 14-26 have 71-234 dead output channels of 128-256 (zero weights, a tiny scale, bias
 * near 2^30). The outputs are the same bytes; the MACs of the model are counted as
 * they are.
 *
 * Requantisation of the live channels: eb_conv_requant_tbl2's SMMLAR form on the
 * doubled sums (eb_conv_mm_dsp.c) from per-channel entries {m, hc, e, u} of
 * eb_requant_table2's case, 17 instructions a channel for both pixels; any other live
 * channel exactly: eb_pw_requant_exact's asm on the plain sums when shift <= -1 and no
 * int32 overflow can occur (VWW's zero-weight channels in the --all-rows build: bias
 * 2^30, outside the doubled sums), else eb_requant. Bounds: the sums are exact modulo 2^32 whatever the
 * order; the doubled-sum form needs |bias' + sum(w x)| < 2^30, vouched for on bias''
 * (|bias''| < 2^29): |bias' - bias''| = 128 * |sum(odd w)| <= 2^13 * C and
 * |sum(w x)| <= 2^14 * C, so |acc| < 2^29 + 3 * 2^13 * C < 2^30 for C <= 1024, which
 * the scratch bound implies.
 *
 * eb_pointwise_s8 returns 0 (the portable kernel runs, which reads the same biased
 * layout) when the layer is not eb_conv_biased's, the filter or the per-channel arrays
 * are not word-aligned, or the working set does not fit the scratch: 4 * C (the P, Q
 * streams) + 8 * OC (the sums) + OC rounded up to 4 (the template) + 8 per live pair
 * + 4 + 16 per live channel (4 for one outside the doubled-sum case, and for those
 * that would not fit) bytes: KWS's 64 -> 64 2,116; VWW's 128 -> 128 (57 live channels)
 * 3,036, 64 -> 128 3,636, 128 -> 256 3,588, 256 -> 256 3,860. Without dead channels a
 * 128 -> 128 layer fits (a few channels the exact way), a 256 -> 256 one does not.
 */
#include "eb_conv_dsp.h"

/* The state of eb_pw_pairs that does not fit the registers (r7 points to it). */
typedef struct {
    const uint32_t *list;   /* [c, #0]: the next live pair's entry {bias'' pointer, filter pointer} */
    uint32_t acck;          /* [c, #4]: acc - 2 * chan: a pair's sums go to acck + 2 * its bias'' pointer */
    int32_t g16;            /* [c, #8]: 16 * G, the bytes of the P, Q streams */
    uint32_t bcur;          /* [c, #12]: the running pair's bias'' pointer */
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
/* one word of the field: its two slot words stored, its sum into e (two a pass) */
#define EB_PW_WORD                                      \
    "ldr    %[v], [%[s]], #4\n\t"                      \
    "sxtb16 %[p], %[v]\n\t"                            \
    "rev16  %[q], %[v]\n\t"                            \
    "eor    %[q], %[q], %[k]\n\t"                      \
    "strd   %[p], %[q], [%[d]], #16\n\t"               \
    "smlad  %[e], %[p], %[one], %[e]\n\t"
        __asm__ volatile(
            "1:\n\t"
            EB_PW_WORD EB_PW_WORD
            "cmp    %[s], %[end]\n\t"
            "bne    1b\n\t"
            : [s] "+r"(src), [d] "+r"(d), [e] "+r"(s), [v] "=&r"(v), [p] "=&r"(pv), [q] "=&r"(qv)
            : [end] "r"(end), [k] "r"(k), [one] "r"(one)
            : "cc", "memory");
#undef EB_PW_WORD
    }
    return (int32_t)(0u - 128u * (uint32_t)s);
}

/* Every live pair of rows (rows 0-1 or 2-3 of a block whose four-byte words are not all
 * the biased zero 0x00800080: eb_pointwise_s8's list, ended by a zero bias'' pointer) for
 * the two prepared pixels: acc[2u], acc[2u + 1] = bias''[u] + s(A), s(B) + the biased dot
 * products = bias'[u] + row u . A, B for both rows u of the pair (the accumulator order
 * of the two-pixel kernels of eb_conv_dsp.c). Per pair: its entry loaded with one LDM
 * into the bias'' pointer and the filter register, the four sums started from the two
 * bias'' and s(A), s(B) (13 instructions), the group loop, the sums stored (6 and the
 * branch back): as many as the block walk of eb_mm_blocks, and a dead pair costs nothing. */
static void eb_pw_pairs(const uint32_t *xq, int32_t G, eb_pw_ctl *ctl)
{
    register const uint32_t *rx __asm__("r0") = xq;
    register const uint32_t *rend __asm__("r1") = xq + 4 * G;
    register const int8_t *rw __asm__("lr");
    register eb_pw_ctl *rc __asm__("r7") = ctl;
    register int32_t a00 __asm__("r6"), a01 __asm__("r8"), a10 __asm__("r9"), a11 __asm__("r10");
    register uint32_t pa __asm__("r2"), qa __asm__("r3"), pb __asm__("r4"), qb __asm__("r5");
    register uint32_t wa __asm__("r11"), wb __asm__("r12");
/* a pair's start: its entry (qa = the bias'' pointer, w = the rows' first words), the end
 * test, both rows' bias'' plus each pixel's s (PA, QA serve as scratch) */
#define EB_PW_PAIR_INIT                                   \
    "ldr    %[wb], [%[c]]\n\t"                           \
    "ldmia  %[wb]!, {%[qa], %[w]}\n\t"                   \
    "cmp    %[qa], #0\n\t"                               \
    "beq    9f\n\t"                                      \
    "str    %[wb], [%[c]]\n\t"                           \
    "str    %[qa], [%[c], #12]\n\t"                      \
    "ldrd   %[a00], %[a10], [%[qa]]\n\t"                 \
    "ldrd   %[pa], %[qa], [%[c], #16]\n\t"               \
    "add    %[a01], %[a00], %[qa]\n\t"                   \
    "add    %[a00], %[a00], %[pa]\n\t"                   \
    "add    %[a11], %[a10], %[qa]\n\t"                   \
    "add    %[a10], %[a10], %[pa]\n\t"
/* a pair's end: the four sums stored at acck + 2 * bcur, x back to the streams' start */
#define EB_PW_PAIR_STORE                                  \
    "ldrd   %[wa], %[wb], [%[c], #8]\n\t"                \
    "sub    %[x], %[x], %[wa]\n\t"                       \
    "ldr    %[wa], [%[c], #4]\n\t"                       \
    "add    %[wb], %[wa], %[wb], lsl #1\n\t"             \
    "strd   %[a00], %[a01], [%[wb]]\n\t"                 \
    "strd   %[a10], %[a11], [%[wb], #8]\n\t"
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
/* the loop over the pairs, the group loop unrolled REPT times (G % REPT == 0) */
#define EB_PW_PAIRS_ASM(REPT)                                                                                   \
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
        "b      2b\n\t"                                                                                         \
        "9:\n\t"                                                                                                \
        : [x] "+r"(rx), [w] "=&r"(rw), [a00] "=&r"(a00), [a01] "=&r"(a01), [a10] "=&r"(a10),                   \
          [a11] "=&r"(a11), [pa] "=&r"(pa), [qa] "=&r"(qa), [pb] "=&r"(pb), [qb] "=&r"(qb), [wa] "=&r"(wa),    \
          [wb] "=&r"(wb)                                                                                        \
        : [end] "r"(rend), [c] "r"(rc)                                                                          \
        : "cc", "memory")
    if ((G & 7) == 0) {
        EB_PW_PAIRS_ASM(8);
    } else if ((G & 3) == 0) {
        EB_PW_PAIRS_ASM(4);
    } else if ((G & 1) == 0) {
        EB_PW_PAIRS_ASM(2);
    } else {
        EB_PW_PAIRS_ASM(1);
    }
#undef EB_PW_PAIRS_ASM
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

/* EB_PW_ALL_ROWS=1: a measurement build (benchmarks/engine_instructions.py --all-rows) in
 * which no channel counts as dead, so that every MAC of a model is executed */
#ifndef EB_PW_ALL_ROWS
#define EB_PW_ALL_ROWS 0
#endif

/* 1 when every weight of output channel u is zero: each of its four-byte words the
 * biased zero 0x00800080 (w0 = w2 = 0 stored as 0x80); rows of the blocks (u < OC4)
 * at 16 * g + 4 * (u & 3) of their block, the plain last rows whole (G >= 1). A live
 * row usually stops at its first word; a dead one is read whole. */
static int eb_pw_zero(const int8_t *filter, int32_t G, int32_t OC4, int32_t u)
{
    const int8_t *w = filter + (size_t)u * 4 * (size_t)G;
    int32_t step = 4, g;
    if (EB_PW_ALL_ROWS) {
        return 0;
    }
    if (u < OC4) {
        w = filter + (size_t)(u & ~3) * 4 * (size_t)G + 4 * (u & 3);
        step = 16;
    }
    /* the first word alone (a live row's usual exit), then two words a test (about 4
     * instructions a word on a dead row) */
    if (eb_ldw(w) != 0x00800080u) {
        return 0;
    }
    for (g = 1, w += step; g + 2 <= G; g += 2, w += 2 * step) {
        if ((eb_ldw(w) ^ 0x00800080u) | (eb_ldw(w + step) ^ 0x00800080u)) {
            return 0;
        }
    }
    return g == G || eb_ldw(w) == 0x00800080u;
}

/* The layer's plan in the scratch, after the P, Q streams (4 * C bytes) and the sums
 * (8 * OC bytes): the template of the outputs (OC bytes rounded up to four: the dead
 * channels' constant outputs), the live pairs' list (two words a pair {bias'' pointer,
 * filter pointer}, then a zero), the live channels' requantisation entries ({m, hc, e,
 * u} of eb_requant_table2's case: m > 0, 2 <= e <= 21, |bias''| < 2^29, no clamp inside
 * int8) and the other live channels (u; eb_requant, exact). A channel whose weights are
 * all zero is dead: its sum is bias'' (= bias': sum(odd w) = 0) whatever the input, its
 * output a constant of the template; a pair of dead rows is skipped. 0 when the plan
 * does not fit the scratch. */
typedef struct {
    const uint32_t *pairs, *rq, *rq_end, *ex_end, *slow, *slow_end;   /* ex: rq_end .. ex_end */
    int32_t ndead;
    int32_t extra;   /* 1 when eb_pw_slow has channels (exact or slow entries) */
} eb_pw_plan;

static EB_NOINLINE int eb_pw_make_plan(const eb_conv_params *p, int32_t c0, int32_t c1, uint32_t *tmpl,
                                       eb_pw_plan *pl)
{
    const int32_t C = p->in.c, OC = p->out.c, G = C >> 2, OC4 = OC & ~3, n = c1 - c0;
    const uint8_t *const chan = p->chan;
    const int32_t off = p->out_offset, lo = p->act_min, hi = p->act_max;
    const uint32_t *const lim = eb_dsp_buf + EB_DSP_SCRATCH_BYTES / 4u;
    const int full = lo == -128 && hi == 127;
    uint32_t *q = tmpl + ((n + 3) >> 2);
    uint32_t *slow;
    int8_t *const t8 = (int8_t *)(void *)tmpl;
    int32_t u;
    if (q > lim) {
        return 0;
    }
    /* which channels are dead (t8[u - c0] = 1 for now) */
    for (u = c0; u < c1; u++) {
        t8[u - c0] = (int8_t)eb_pw_zero(p->filter, G, OC4, u);
    }
    /* the live pairs of the blocks (a dead pair's sums are never read: its outputs are
     * the template's) */
    pl->pairs = q;
    for (u = c0; u < c1 && u < OC4; u += 2) {
        if (t8[u - c0] && t8[u + 1 - c0]) {
            continue;
        }
        if (q + 3 > lim) {
            return 0;
        }
        *q++ = (uint32_t)(uintptr_t)(chan + 4 * (size_t)u);
        *q++ = (uint32_t)(uintptr_t)(p->filter + (size_t)(u >> 2) * 16 * (size_t)G + 4 * (u & 3));
    }
    if (q + 1 > lim) {
        return 0;
    }
    *q++ = 0;
    /* the channels: dead (their constant into the template), live in the doubled-sum
     * case (entries from q up), other live (from the end of the scratch down); u - c0 in both */
    pl->rq = q;
    slow = (uint32_t *)(uintptr_t)lim;
    pl->ndead = 0;
    for (u = c0; u < c1; u++) {
        const int32_t bias = eb_ld32(chan + 4 * (size_t)u);
        const int32_t m = eb_ld32(chan + 4 * ((size_t)OC + u)), sft = eb_ld32(chan + 4 * (2 * (size_t)OC + u));
        if (t8[u - c0]) {
            t8[u - c0] = eb_requant(bias, m, sft, off, lo, hi);
            pl->ndead++;
            continue;
        }
        /* (when the entries would outgrow the scratch, the last channels go the exact way) */
        if (full && m > 0 && (uint32_t)(-sft - 2) <= 19u && bias < (1 << 29) && bias > -(1 << 29) &&
            q + 4 <= slow - (c1 - 1 - u)) {
            const int32_t e = -sft;
            *q++ = (uint32_t)m;
            *q++ = (1u << (uint32_t)(e - 1)) + ((uint32_t)off << e);
            *q++ = (uint32_t)e;
            *q++ = (uint32_t)(u - c0);
            continue;
        }
        if (q + 1 > slow) {
            return 0;
        }
        *--slow = (uint32_t)(u - c0);
    }
    pl->rq_end = q;
    /* the other live channels that eb_pw_requant_exact takes, as long as their entries
     * fit between the doubled-sum entries and the slow list (which is compacted
     * upwards from slow: its kept entries are never above the one being read) */
    if (full) {
        uint32_t *r, *w = slow;
        for (r = slow; r < lim; r++) {
            const uint32_t v = *r, uu = (uint32_t)c0 + v;
            const int32_t bias = eb_ld32(chan + 4 * (size_t)uu);
            const int32_t m = eb_ld32(chan + 4 * ((size_t)OC + uu)), sft = eb_ld32(chan + 4 * (2 * (size_t)OC + uu));
            if (q + 4 <= slow && eb_pw_exact_ok(bias, m, sft, C)) {
                *q++ = (uint32_t)m;
                *q++ = 1u << (uint32_t)(-sft - 1);
                *q++ = (uint32_t)(-sft) | ((uint32_t)off << 8);
                *q++ = v;
            } else {
                *w++ = v;
            }
        }
        pl->slow_end = w;
    } else {
        pl->slow_end = lim;
    }
    pl->ex_end = q;
    pl->slow = slow;
    pl->extra = pl->rq_end != pl->ex_end || pl->slow != pl->slow_end;
    return 1;
}

/* The plain rows u0 <= u < n (from c0) of the chunk for the prepared pixels (sums at acc) */
static EB_NOINLINE void eb_pw_tail(const eb_conv_params *p, int32_t c0, int32_t u0, int32_t n, const eb_pw_ctl *ctl,
                                   int32_t *acc)
{
    const int32_t C = p->in.c;
    int32_t u;
    for (u = u0; u < n; u++) {
        int32_t *const a = acc + 2 * u;
        const int32_t bu = eb_ld32(p->chan + 4 * (size_t)(c0 + u));
        a[0] = eb_acc(bu, ctl->sa);
        a[1] = eb_acc(bu, ctl->sb);
        eb_pw_row(eb_dsp_buf, C >> 2, p->filter + (size_t)(c0 + u) * C, a);
    }
}

/* The live channels outside the doubled-sum case, exactly: eb_pw_requant_exact's entries,
 * then the slow list (u from c0) by eb_requant */
static EB_NOINLINE void eb_pw_slow(const eb_conv_params *p, int32_t c0, const eb_pw_plan *pl, const int32_t *acc,
                                   int8_t *o0, int8_t *o1)
{
    const int32_t OC = p->out.c;
    const uint8_t *const mult = p->chan + 4 * ((size_t)OC + c0), *const shift = mult + 4 * (size_t)OC;
    const uint32_t *e;
    if (pl->rq_end != pl->ex_end) {
        eb_pw_requant_exact(pl->rq_end, pl->ex_end, acc, o0, o1);
    }
    for (e = pl->slow; e < pl->slow_end; e++) {
        const int32_t m = eb_ld32(mult + 4 * *e), sft = eb_ld32(shift + 4 * *e);
        o0[*e] = eb_requant(acc[2 * *e], m, sft, p->out_offset, p->act_min, p->act_max);
        o1[*e] = eb_requant(acc[2 * *e + 1], m, sft, p->out_offset, p->act_min, p->act_max);
    }
}

/* The channels [c0, c1) of every output pixel with the plan pl (sums at acc, acc[0] the
 * pair (A, B) of channel c0). */
static EB_NOINLINE void eb_pw_run(const eb_conv_params *p, const int8_t *in, int8_t *out, int32_t c0, int32_t c1,
                                  const eb_pw_plan *pl, int32_t *acc, const uint32_t *tmpl)
{
    const int32_t H = p->in.h, W = p->in.w, C = p->in.c;
    const int32_t OH = p->out.h, OW = p->out.w, OC = p->out.c;
    const int32_t G = C >> 2, OC4 = OC & ~3, n = c1 - c0;
    const int32_t tail = (c0 > OC4 ? c0 : OC4) - c0;   /* the first plain row, from c0 */
    const int32_t npix = p->out.n * OH * OW;
    const uint8_t *const chan = p->chan + 4 * (size_t)c0;   /* the chunk's bias'' */
    uint32_t *const xq = eb_dsp_buf;
    eb_pw_ctl ctl;
    int32_t pi, b = 0, oy = 0, ox = 0;
    ctl.acck = (uint32_t)(uintptr_t)acc - 2u * (uint32_t)(uintptr_t)chan;
    ctl.g16 = 16 * G;
    out += c0;   /* the chunk's outputs; u below counts from c0 */
    for (pi = 0; pi < npix; pi += 2) {
        int8_t *const o0 = out + (size_t)pi * OC;
        /* an odd last pixel pairs with itself: both halves write the same bytes */
        int8_t *const o1 = pi + 1 < npix ? o0 + OC : o0;
        int32_t slot;
        /* the two pixels' P, Q streams (the odd last pixel twice) */
        for (slot = 0; slot < 2; slot++) {
            const int8_t *const src = in + (((size_t)b * H + (size_t)oy * p->sh) * W + (size_t)ox * p->sw) * C;
            const int32_t s = eb_pw_prep(src, G, xq + 2 * slot);
            if (slot == 0) {
                ctl.sa = s;
                if (pi + 1 >= npix) {
                    ctl.sb = eb_pw_prep(src, G, xq + 2);
                    break;
                }
            } else {
                ctl.sb = s;
            }
            EB_NEXT_PIXEL(b, oy, ox, OH, OW);
        }
        ctl.list = pl->pairs;
        eb_pw_pairs(xq, G, &ctl);
        /* the OC % 4 last rows, plain */
        if (tail < n) {
            eb_pw_tail(p, c0, tail, n, &ctl, acc);
        }
        /* the dead channels' constants, then the live channels */
        if (pl->ndead) {
            eb_pw_fill(tmpl, n, o0);
            if (o1 != o0) {
                eb_pw_fill(tmpl, n, o1);
            }
        }
        if (pl->rq != pl->rq_end) {
            eb_pw_requant(pl->rq, pl->rq_end, acc, o0, o1);
        }
        if (pl->extra) {
            eb_pw_slow(p, c0, pl, acc, o0, o1);
        }
    }
}

/* The output channels in chunks whose plan fits the scratch (all at once when it does:
 * every layer of the four MLPerf Tiny models); the P, Q streams are prepared again for
 * every chunk. 0 (the portable kernel runs) when the layer is not this kernel's or not
 * even four channels fit (4 * C + 29 * 4 + 4 > 4096: C > 993). */
int eb_pointwise_s8(const eb_conv_params *p, const int8_t *in, int8_t *out)
{
    const int32_t C = p->in.c, OC = p->out.c, G = C >> 2;
    int32_t *const acc = (int32_t *)(void *)(eb_dsp_buf + 4 * G);
    int32_t c0 = 0, n = OC;
    eb_pw_plan pl;
    if (!eb_conv_biased(p) || G < 1 || (((uintptr_t)p->filter | (uintptr_t)p->chan) & 3u) != 0 ||
        4u * (size_t)C >= EB_DSP_SCRATCH_BYTES) {
        return 0;
    }
    while (c0 < OC) {
        /* [c0, c1): n channels, whole blocks unless it reaches the plain last rows */
        const int32_t c1 = OC - c0 <= n ? OC : c0 + n;
        uint32_t *const tmpl = (uint32_t *)(void *)(acc + 2 * (c1 - c0));
        if ((size_t)((uint8_t *)tmpl - (uint8_t *)eb_dsp_buf) >= EB_DSP_SCRATCH_BYTES ||
            !eb_pw_make_plan(p, c0, c1, tmpl, &pl)) {
            n = ((c1 - c0) >> 1) & ~3;
            if (n < 4) {
                return 0;   /* the portable kernel redoes the layer (outputs written so far too) */
            }
            continue;
        }
        eb_pw_run(p, in, out, c0, c1, &pl, acc, tmpl);
        c0 = c1;
    }
    return 1;
}
