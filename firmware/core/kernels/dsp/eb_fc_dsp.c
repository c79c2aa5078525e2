/*
 * eb_fc_dsp.c - FULLY_CONNECTED on cores with the DSP extension (the kernel set
 * of kernels/dsp/, see eb_dsp.c): one SXTB16 per weight word instead of two.
 *
 * The blob stores the weights blocked (four rows interleaved a word at a time,
 * firmware/BLOB.md) with the bytes of even depth positions biased: a weight word
 * of one row at depth k..k+3 holds b0 = w0 ^ 0x80, b1 = w1, b2 = w2 ^ 0x80,
 * b3 = w3, and the row's bias'' = bias' + 128 * sum(odd w). SMLAD on the RAW
 * word W sees the halfwords
 *   h0 = (uint8)b0 + 256 * b1 = w0 + 128 + 256 * w1,  h1 = w2 + 128 + 256 * w3.
 * The input vector is prepared once per layer (per batch) into two streams of
 * int16 pairs, for each group of four x:
 *   P = (x0, x2)                                  = SXTB16(v)
 *   Q = (x1 - 128 - 256 * x0, x3 - 128 - 256 * x2) = REV16(v) ^ 0xFF80FF80
 * (a Q lane as bytes: low (x1 - 128) mod 256 = x1 ^ 0x80, high -x0 - 1 = ~x0;
 * x0 in [-128, 127] and x1 - 128 in [-256, -1] put the lane in [-32768, 32767]
 * exactly). Then, with SXTB16(W, ror 8) = (w1, w3):
 *   SMLAD(W, P) + SMLAD(SXTB16(W, ror 8), Q)
 *     = x0 w0 + x1 w1 + x2 w2 + x3 w3 + 128 * (x0 + x2) - 128 * (w1 + w3)
 * exactly modulo 2^32 (SMLAD wraps; the intermediate wraps cancel). Summed over
 * the row, the -128 * sum(odd w) cancels against bias'' and 128 * sum(even x),
 * one number per layer, is subtracted from every row's starting value: acc =
 * bias' + sum(w x), the same integers as the portable kernel
 * (ops/eb_op_fully_connected.c, which reads the same layout).
 *
 * Inner loop, four rows: per group of four depth positions one LDRD of P, Q
 * (shared by the four rows), one LDM of the four rows' words, and per row SMLAD,
 * SXTB16, SMLAD: 14 instructions per 16 MACs (the two-SXTB16 form took 19).
 *
 * Requantisation (per-tensor factor, full int8 activation range; otherwise the
 * exact eb_requant_chan): the binary64 factor S = m * 2^e (m 53 bits) as M2 =
 * m >> 22 (31 bits, positive) and F2 = -(e + 22) = 32 + sh; this path takes
 * 0 <= sh <= 16 (S in [2^-18, 2^-1)) and scales the sum by 2^L, L = 16 - sh,
 * so that the result always sits at bit 48 of the product. With A = acc * 2^L
 * (exact when |acc| < 2^(15+sh), tested per block) and X = A * M2 (signed), the
 * exact |acc| * S in units of 2^-48 is |X| + f, 0 <= f < |acc| * 2^L, and the
 * binary64 product differs from it by E <= 2^(9+L) units. round() (ties away
 * from zero) of the double then is floor(Z / 2^48) for some Z in
 * [Y - (|acc| + 2^9 + 1) * 2^L, Y + (|acc| + 2^9) * 2^L], Y = X + 2^47 (for acc
 * < 0: -floor(-y + 1/2) = floor(y + 1/2 - 2^-F2)); both ends are within 2^32 of
 * Y, so inside [(hY - 1) * 2^32, (hY + 2) * 2^32), hY = floor(Y / 2^32). SMMLA
 * gives h2 = hY - 1 + off * 2^16 in one instruction (the high-word constant
 * hc = 2^15 - 1 + off * 2^16; no overflow: |X| < 2^62). When h2 mod 2^16 <=
 * 2^16 - 3, hY - 1 .. hY + 1 share floor(/ 2^16), so the result plus the
 * output offset is h2 >> 16, clamped: SSAT #8 with ASR #16. The test: CMN of
 * 3 * 2^16 - 1 and h2 << 16 carries exactly when it fails (3 in 2^16 outputs).
 * A block whose test fails, or with a |acc| >= 2^(15+sh) (an output saturated
 * by far: |acc * S| >= 2^13), is redone exactly by eb_requant_chan. 9
 * instructions per output (LDR, EOR, ORR for the range test, LSL, SMMLA, CMN,
 * ADC, SSAT, STRB), one fewer for the first, and 6 per block of four.
 *
 * The units % 4 last rows (and layers of fewer than four units, which then
 * build no streams) make their P, Q pairs from x on the way (eb_fc_rows2, two
 * rows at a time) and requantise exactly.
 *
 * eb_fc_s8_opt returns 0 (the portable kernel runs) when the filter is not
 * word-aligned, depth < 4 or the P/Q streams (8 bytes per four depth
 * positions, 2 * depth bytes) do not fit the scratch (depth > 2051 with 4 KiB).
 */
#include "eb_dsp.h"
#include "eb_kernels_opt.h"

/* the requantisation constants of a per-tensor factor (see above), in the
 * order the asm loads them */
typedef struct {
    int32_t m2, hc, c, l, lim;
} eb_fcq;

/* the constants of the factor's binary64 bits; 0 when sh is outside [0, 16] */
static int eb_fcq_init(uint32_t s_lo, uint32_t s_hi, int32_t off, eb_fcq *q)
{
    const int32_t sh = 1021 - (int32_t)((s_hi >> 20) & 0x7FFu);
    if (sh < 0 || sh > 16) {
        return 0;
    }
    q->m2 = (int32_t)((((s_hi & 0xFFFFFu) | 0x100000u) << 10) | (s_lo >> 22));
    q->hc = (int32_t)(0x7FFFu + (uint32_t)off * 0x10000u);
    q->c = 0x2FFFF;
    q->l = 16 - sh;
    q->lim = (int32_t)(1u << (uint32_t)(15 + sh));   /* 2^31 for sh = 16: no limit */
    return 1;
}

/* one group of four depth positions for four rows: P, Q at [x], the four rows'
 * words at [w] (LDM: w0..w3 are pinned to ascending registers) */
#define EB_FC_GROUP                                        \
    "ldrd   %[p], %[q], [%[x]], #8\n\t"                    \
    "ldmia  %[w]!, {%[w0], %[w1], %[w2], %[w3]}\n\t"       \
    "smlad  %[a0], %[w0], %[p], %[a0]\n\t"                 \
    "sxtb16 %[w0], %[w0], ror #8\n\t"                      \
    "smlad  %[a0], %[w0], %[q], %[a0]\n\t"                 \
    "smlad  %[a1], %[w1], %[p], %[a1]\n\t"                 \
    "sxtb16 %[w1], %[w1], ror #8\n\t"                      \
    "smlad  %[a1], %[w1], %[q], %[a1]\n\t"                 \
    "smlad  %[a2], %[w2], %[p], %[a2]\n\t"                 \
    "sxtb16 %[w2], %[w2], ror #8\n\t"                      \
    "smlad  %[a2], %[w2], %[q], %[a2]\n\t"                 \
    "smlad  %[a3], %[w3], %[p], %[a3]\n\t"                 \
    "sxtb16 %[w3], %[w3], ror #8\n\t"                      \
    "smlad  %[a3], %[w3], %[q], %[a3]\n\t"

#define EB_FC_OPERANDS                                                                                   \
    : [x] "+r"(x), [w] "+r"(w), [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3),            \
      [p] "=&r"(p), [q] "=&r"(q), [w0] "=&r"(w0), [w1] "=&r"(w1), [w2] "=&r"(w2), [w3] "=&r"(w3)        \
    : [end] "r"(xend)                                                                                    \
    : "cc", "memory"

/* acc[j] = bias[j] + s + the biased dot product of row j over G >= 1 groups (w
 * and bias word-aligned, w at the block); returns w after the groups. The
 * first asm loads the four starting values through p and q, which the groups
 * then take over. */
static const int8_t *eb_fc_block(const uint32_t *xq, int32_t G, const int8_t *w, const uint8_t *bias, int32_t s,
                                 int32_t *acc)
{
    const uint32_t *x = xq;
    const uint32_t *const xend = xq + 2 * G;
    int32_t a0, a1, a2, a3;
    uint32_t p = (uint32_t)(uintptr_t)bias, q = (uint32_t)s;
    register uint32_t w0 __asm__("r8");
    register uint32_t w1 __asm__("r9");
    register uint32_t w2 __asm__("r10");
    register uint32_t w3 __asm__("r11");
#define EB_FC_START                    \
    "ldrd   %[a0], %[a1], [%[p]]\n\t"    \
    "ldrd   %[a2], %[a3], [%[p], #8]\n\t" \
    "add    %[a0], %[a0], %[q]\n\t"      \
    "add    %[a1], %[a1], %[q]\n\t"      \
    "add    %[a2], %[a2], %[q]\n\t"      \
    "add    %[a3], %[a3], %[q]\n\t"
#define EB_FC_START_OPERANDS                                                                            \
    : [x] "+r"(x), [w] "+r"(w), [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3),        \
      [p] "+&r"(p), [q] "+&r"(q), [w0] "=&r"(w0), [w1] "=&r"(w1), [w2] "=&r"(w2), [w3] "=&r"(w3)        \
    : [end] "r"(xend)                                                                                    \
    : "cc", "memory"
    if (G & 1) {
        __asm__ volatile(EB_FC_START EB_FC_GROUP EB_FC_START_OPERANDS);
    } else {
        __asm__ volatile(EB_FC_START EB_FC_START_OPERANDS);
    }
    if (G > 1) {
        __asm__ volatile(
            "1:\n\t"
            EB_FC_GROUP
            EB_FC_GROUP
            "cmp    %[x], %[end]\n\t"
            "bne    1b\n\t"
            EB_FC_OPERANDS);
    }
#undef EB_FC_START
#undef EB_FC_START_OPERANDS
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
    return w;
}

#undef EB_FC_GROUP
#undef EB_FC_OPERANDS

/* o[0..3] from the four sums (see the header comment); 0 when a test failed
 * (the caller then redoes all four exactly) */
static int eb_fc_requant4(const int32_t *acc, const eb_fcq *cq, int8_t *o)
{
    uint32_t m2, hc, c, l, lim, h, t, v, bad;
#define EB_FC_RQ(J, RANGE)                             \
    "ldr    %[h], [%[a], #(4 * " #J ")]\n\t"           \
    RANGE                                              \
    "lsl    %[h], %[h], %[l]\n\t"                     \
    "smmla  %[h], %[h], %[m2], %[hc]\n\t"             \
    "cmn    %[c], %[h], lsl #16\n\t"                  \
    "adc    %[bad], %[bad], #0\n\t"                   \
    "ssat   %[h], #8, %[h], asr #16\n\t"              \
    "strb   %[h], [%[o], #" #J "]\n\t"
    /* v |= |acc| - [acc < 0]: below lim exactly when every acc is in [-lim, lim) */
#define EB_FC_RANGE "eor    %[t], %[h], %[h], asr #31\n\torr    %[v], %[v], %[t]\n\t"
    __asm__ volatile(
        "ldrd   %[m2], %[hc], [%[cq]]\n\t"
        "ldrd   %[c], %[l], [%[cq], #8]\n\t"
        "ldr    %[lim], [%[cq], #16]\n\t"
        "movs   %[bad], #0\n\t"
        EB_FC_RQ(0, "eor    %[v], %[h], %[h], asr #31\n\t")
        EB_FC_RQ(1, EB_FC_RANGE)
        EB_FC_RQ(2, EB_FC_RANGE)
        EB_FC_RQ(3, EB_FC_RANGE)
        "cmp    %[v], %[lim]\n\t"
        "adc    %[bad], %[bad], #0\n\t"
        : [m2] "=&r"(m2), [hc] "=&r"(hc), [c] "=&r"(c), [l] "=&r"(l), [lim] "=&r"(lim), [h] "=&r"(h),
          [t] "=&r"(t), [v] "=&r"(v), [bad] "=&r"(bad)
        : [a] "r"(acc), [cq] "r"(cq), [o] "r"(o)
        : "cc", "memory");
#undef EB_FC_RQ
#undef EB_FC_RANGE
    return bad == 0;
}

/* the depth % 4 last positions of a block's four rows (at w, R per row) */
static EB_NOINLINE void eb_fc_tail(const int8_t *xt, int32_t R, const int8_t *w, int32_t *a)
{
    int32_t i, j;
    for (i = 0; i < R; i++) {
        const int32_t xv = xt[i];
        for (j = 0; j < 4; j++) {
            const int32_t wb = w[j * R + i];
            a[j] = eb_acc(a[j], (i & 1) ? (xv - 128) * wb : xv * (wb & 0xFF));
        }
    }
}

/* the units % 4 plain rows, two at a time (w1 = w0 for one): d[j] = row j's
 * biased dot product, straight from x (the P, Q pairs made on the way, as the
 * stream loop makes them); returns sum(even x) */
static EB_NOINLINE int32_t eb_fc_rows2(const int8_t *x, int32_t depth, const int8_t *w0, const int8_t *w1,
                                       int32_t *d)
{
    const int32_t G = depth >> 2;
    int32_t d0 = 0, d1 = 0, se = 0, g, k;
    for (g = 0; g < G; g++) {
        const uint32_t v = eb_ldw(x + 4 * g), u0 = eb_ldw(w0 + 4 * g), u1 = eb_ldw(w1 + 4 * g);
        const int16x2_t pv = (int16x2_t)__sxtb16((int8x4_t)v);
        uint32_t r;
        __asm__("rev16 %0, %1" : "=r"(r) : "r"(v));
        r ^= 0xFF80FF80u;
        se = __smlad(pv, (int16x2_t)0x00010001, se);
        d0 = __smlad((int16x2_t)u0, pv, d0);
        d0 = __smlad((int16x2_t)eb_sx13(u0), (int16x2_t)r, d0);
        d1 = __smlad((int16x2_t)u1, pv, d1);
        d1 = __smlad((int16x2_t)eb_sx13(u1), (int16x2_t)r, d1);
    }
    for (k = 4 * G; k < depth; k++) {
        if (k & 1) {
            d0 = eb_acc(d0, (x[k] - 128) * w0[k]);
            d1 = eb_acc(d1, (x[k] - 128) * w1[k]);
        } else {
            se += x[k];
            d0 = eb_acc(d0, x[k] * (w0[k] & 0xFF));
            d1 = eb_acc(d1, x[k] * (w1[k] & 0xFF));
        }
    }
    d[0] = d0;
    d[1] = d1;
    return se;
}

int eb_fc_s8_opt(const eb_fc_params *p, const int8_t *in, int8_t *out)
{
    const int32_t depth = p->depth, units = p->units, G = depth >> 2, R = depth & 3;
    const int32_t units4 = units & ~3;
    const uint8_t *const bias = p->chan;
    const uint8_t *const arr1 = p->chan + 4 * (size_t)units;
    const uint8_t *const arr2 = p->chan + 8 * (size_t)units;
    const int32_t off = p->out_offset, lo = p->act_min, hi = p->act_max;
    uint32_t *const xq = eb_dsp_buf;
    eb_fcq cq;
    int fast;
    int32_t b;
    /* the blob's offsets are multiples of four: a word-aligned filter means
     * word-aligned per-channel arrays too (LDRD of the biases) */
    if (G < 1 || (((uintptr_t)p->filter | (uintptr_t)p->chan) & 3u) != 0 ||
        2 * G > (int32_t)(EB_DSP_SCRATCH_BYTES / 4u)) {
        return 0;
    }
    /* one factor for every unit (blob p2: a per-tensor filter scale) and the whole
     * int8 range: the fast requantisation's constants once per layer */
    fast = p->one_factor && lo == -128 && hi == 127 &&
           eb_fcq_init((uint32_t)eb_ld32(arr1), (uint32_t)eb_ld32(arr2), off, &cq);
    for (b = 0; b < p->batches; b++) {
        const int8_t *const x = in + (size_t)b * depth;
        int8_t *const o = out + (size_t)b * units;
        const int8_t *w = p->filter;
        int32_t s = 0, g, u, j, i;
        if (units4 == 0) {   /* no block: no streams, s from the plain rows */
            int32_t d[2];
            for (u = 0; u < units; u += 2, w += 2 * (size_t)depth) {
                s = eb_fc_rows2(x, depth, w, u + 1 < units ? w + depth : w, d);
                s = (int32_t)(0u - 128u * (uint32_t)s);
                for (j = 0; j < 2 && u + j < units; j++) {
                    o[u + j] = eb_requant_chan(eb_acc(eb_acc(eb_ld32(bias + 4 * (size_t)(u + j)), s), d[j]),
                                               arr1, arr2, u + j, 1, off, lo, hi);
                }
            }
            continue;
        }
        /* the P, Q streams and s = -128 * sum(even x) */
        for (g = 0; g < G; g++) {
            const uint32_t v = eb_ldw(x + 4 * g);
            const uint32_t pv = (uint32_t)__sxtb16((int8x4_t)v);
            uint32_t r;
            __asm__("rev16 %0, %1" : "=r"(r) : "r"(v));
            xq[2 * g] = pv;
            xq[2 * g + 1] = r ^ 0xFF80FF80u;
            s = __smlad((int16x2_t)pv, (int16x2_t)0x00010001, s);
        }
        for (i = 0; i < R; i += 2) {
            s += x[4 * G + i];
        }
        s = (int32_t)(0u - 128u * (uint32_t)s);
        for (u = 0; u < units4; u += 4) {
            int32_t a[4];
            w = eb_fc_block(xq, G, w, bias + 4 * (size_t)u, s, a);
            if (R) {
                eb_fc_tail(x + 4 * G, R, w, a);
                w += 4 * (size_t)R;
            }
            if (!fast || !eb_fc_requant4(a, &cq, o + u)) {
                for (j = 0; j < 4; j++) {
                    o[u + j] = eb_requant_chan(a[j], arr1, arr2, u + j, 1, off, lo, hi);
                }
            }
        }
        /* the units % 4 plain rows */
        for (u = units4; u < units; u += 2, w += 2 * (size_t)depth) {
            int32_t d[2];
            (void)eb_fc_rows2(x, depth, w, u + 1 < units ? w + depth : w, d);
            for (j = 0; j < 2 && u + j < units; j++) {
                o[u + j] = eb_requant_chan(eb_acc(eb_acc(eb_ld32(bias + 4 * (size_t)(u + j)), s), d[j]), arr1,
                                           arr2, u + j, 1, off, lo, hi);
            }
        }
    }
    return 1;
}
