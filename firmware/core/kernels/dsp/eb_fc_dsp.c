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
 * m >> 22 (31 bits, positive) and F2 = -(e + 22) = 32 + sh, 2 <= sh <= 22. With
 * X = acc * M2 (signed), the exact |acc| * S in units of 2^-F2 is |X| + f,
 * 0 <= f < |acc|, and the binary64 product differs from it by E <= 2^9 units.
 * round() (ties away from zero) of the double then lies, for either sign of acc,
 * in floor(Z / 2^F2) for some Z in [Y - |acc| - E - 1, Y + |acc| + E], Y = X +
 * 2^(F2-1) (for acc < 0: -floor((-y) + 1/2) = floor(y + 2^(F2-1) - 1) in units).
 * That interval lies inside [(hY - 1) * 2^32, (hY + 2) * 2^32), hY = floor(Y /
 * 2^32). SMMLA gives h2 = hY - 1 + off * 2^sh in one instruction (the constant
 * hc = 2^(sh-1) + off * 2^sh - 1 accumulated on the high word; no overflow: |X| <
 * 2^62, |hc| < 2^30). When h2 mod 2^sh <= 2^sh - 3, hY - 1 .. hY + 1 share their
 * floor(/ 2^sh), so the result plus the output offset is h2 >> sh (arithmetic),
 * clamped by SSAT #8. The test: t = h2 << (32 - sh) = (h2 mod 2^sh) << k;
 * CMN t, 3 * 2^k - 1 carries exactly when it fails (about 3 in 2^sh outputs),
 * and such blocks are redone with eb_requant_chan (exact) from the sums.
 * 7 instructions per output (SMMLA, LSL, CMN, ADC, ASR, SSAT, STRB).
 *
 * eb_fc_s8_opt returns 0 (the portable kernel runs) when the filter is not
 * word-aligned, depth < 4, units < 4 or the P/Q streams (8 bytes per four
 * depth positions) do not fit the scratch (depth > EB_DSP_SCRATCH_BYTES).
 */
#include "eb_dsp.h"
#include "eb_kernels_opt.h"

/* the requantisation constants of a per-tensor factor (see above), in the
 * order the asm loads them */
typedef struct {
    int32_t m2, hc, k, c, sh;
} eb_fcq;

/* M2, sh from the factor's binary64 bits; 0 when sh is outside [2, 22] */
static int eb_fcq_init(uint32_t s_lo, uint32_t s_hi, int32_t off, eb_fcq *q)
{
    const int32_t sh = 1021 - (int32_t)((s_hi >> 20) & 0x7FFu);
    if (sh < 2 || sh > 22) {
        return 0;
    }
    q->m2 = (int32_t)((((s_hi & 0xFFFFFu) | 0x100000u) << 10) | (s_lo >> 22));
    q->sh = sh;
    q->k = 32 - sh;
    q->c = (int32_t)(3u * (1u << (uint32_t)(32 - sh)) - 1u);
    q->hc = (int32_t)((1u << (uint32_t)(sh - 1)) + (uint32_t)off * (1u << (uint32_t)sh) - 1u);
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

/* acc[j] += the biased dot product of row j over G >= 1 groups (w word-aligned,
 * at the block); returns w after the groups */
static const int8_t *eb_fc_block(const uint32_t *xq, int32_t G, const int8_t *w, int32_t *acc)
{
    const uint32_t *x = xq;
    const uint32_t *const xend = xq + 2 * G;
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    uint32_t p, q;
    register uint32_t w0 __asm__("r8");
    register uint32_t w1 __asm__("r9");
    register uint32_t w2 __asm__("r10");
    register uint32_t w3 __asm__("r11");
    if (G & 1) {
        __asm__ volatile(EB_FC_GROUP EB_FC_OPERANDS);
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
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
    return w;
}

#undef EB_FC_GROUP
#undef EB_FC_OPERANDS

/* o[0..3] from the four sums (see the header comment); 0 when an output's test
 * failed (the caller then redoes all four exactly) */
static int eb_fc_requant4(const int32_t *acc, const eb_fcq *cq, int8_t *o)
{
    uint32_t m2, hc, k, c, sh, h, t, bad;
#define EB_FC_RQ(J)                                    \
    "ldr    %[h], [%[a], #" #J "]\n\t"                 \
    "smmla  %[h], %[h], %[m2], %[hc]\n\t"              \
    "lsl    %[t], %[h], %[k]\n\t"                      \
    "cmn    %[t], %[c]\n\t"                            \
    "adc    %[bad], %[bad], #0\n\t"                    \
    "asr    %[h], %[h], %[sh]\n\t"                     \
    "ssat   %[h], #8, %[h]\n\t"
    __asm__ volatile(
        "ldrd   %[m2], %[hc], [%[cq]]\n\t"
        "ldrd   %[k], %[c], [%[cq], #8]\n\t"
        "ldr    %[sh], [%[cq], #16]\n\t"
        "movs   %[bad], #0\n\t"
        EB_FC_RQ(0)
        "strb   %[h], [%[o]]\n\t"
        EB_FC_RQ(4)
        "strb   %[h], [%[o], #1]\n\t"
        EB_FC_RQ(8)
        "strb   %[h], [%[o], #2]\n\t"
        EB_FC_RQ(12)
        "strb   %[h], [%[o], #3]\n\t"
        : [m2] "=&r"(m2), [hc] "=&r"(hc), [k] "=&r"(k), [c] "=&r"(c), [sh] "=&r"(sh), [h] "=&r"(h),
          [t] "=&r"(t), [bad] "=&r"(bad)
        : [a] "r"(acc), [cq] "r"(cq), [o] "r"(o)
        : "cc", "memory");
#undef EB_FC_RQ
    return bad == 0;
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
    if (G < 1 || units < 4 || ((uintptr_t)p->filter & 3u) != 0 || 2 * G > (int32_t)(EB_DSP_SCRATCH_BYTES / 4u)) {
        return 0;
    }
    /* one factor for every unit (a per-tensor filter scale) and the whole int8
     * range: the fast requantisation's constants once per layer */
    {
        const uint32_t lo0 = (uint32_t)eb_ld32(arr1), hi0 = (uint32_t)eb_ld32(arr2);
        int32_t u;
        fast = lo == -128 && hi == 127 && eb_fcq_init(lo0, hi0, off, &cq);
        for (u = 1; fast && u < units; u++) {
            fast = (uint32_t)eb_ld32(arr1 + 4 * u) == lo0 && (uint32_t)eb_ld32(arr2 + 4 * u) == hi0;
        }
    }
    for (b = 0; b < p->batches; b++) {
        const int8_t *const x = in + (size_t)b * depth;
        int8_t *const o = out + (size_t)b * units;
        const int8_t *w = p->filter;
        int32_t s = 0, g, u, j, i;
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
            for (j = 0; j < 4; j++) {
                a[j] = eb_acc(eb_ld32(bias + 4 * (size_t)(u + j)), s);
            }
            w = eb_fc_block(xq, G, w, a);
            for (i = 0; i < R; i++) {
                const int32_t xv = x[4 * G + i];
                for (j = 0; j < 4; j++) {
                    const int32_t wb = w[j * R + i];
                    a[j] = eb_acc(a[j], (i & 1) ? (xv - 128) * wb : xv * (wb & 0xFF));
                }
            }
            w += 4 * (size_t)R;
            if (!fast || !eb_fc_requant4(a, &cq, o + u)) {
                for (j = 0; j < 4; j++) {
                    o[u + j] = eb_requant_chan(a[j], arr1, arr2, u + j, 1, off, lo, hi);
                }
            }
        }
        /* the units % 4 plain rows */
        for (u = units4; u < units; u++) {
            int32_t a = eb_acc(eb_ld32(bias + 4 * (size_t)u), s);
            for (g = 0; g < 4 * G; g += 4, w += 4) {
                a = eb_acc(a, x[g] * (int32_t)(uint8_t)w[0] + (x[g + 1] - 128) * w[1] +
                                  x[g + 2] * (int32_t)(uint8_t)w[2] + (x[g + 3] - 128) * w[3]);
            }
            for (i = 0; i < R; i++, w++) {
                a = eb_acc(a, (i & 1) ? (x[4 * G + i] - 128) * w[0] : x[4 * G + i] * (w[0] & 0xFF));
            }
            o[u] = eb_requant_chan(a, arr1, arr2, u, 1, off, lo, hi);
        }
    }
    return 1;
}
