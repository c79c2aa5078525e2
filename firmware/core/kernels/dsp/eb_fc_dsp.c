/*
 * eb_fc_dsp.c - FULLY_CONNECTED on cores with the DSP extension (the kernel set
 * of kernels/dsp/, see eb_dsp.c): the input vector widened to int16 once into
 * the scratch, in the order SXTB16 gives four weight bytes (x0, x2), (x1, x3),
 * then every block of four rows of the blocked filter (firmware/BLOB.md) in one
 * asm loop of two groups of four elements: per 32 MACs two LDRD of x, four
 * LDRD of weights, 16 SXTB16 and 16 SMLAD (40 instructions with the loop's).
 * The portable eb_matvec re-widened x for every block (23 instructions per 16
 * MACs). With one rescale factor for all units (a per-tensor filter scale)
 * the constants of eb_mul_round_f64's fast path are derived once per layer.
 * The K % 4 tail, the units % 4 last rows and the exact rescale are
 * eb_matvec's (eb_dot.h). eb_fc_s8_opt returns 0 (eb_matvec runs) when the
 * filter is not word-aligned, the depth is below 8, or x does not fit the
 * scratch (depth > 2 * EB_DSP_SCRATCH_BYTES / 4).
 */
#include "eb_dsp.h"
#include "eb_kernels_opt.h"

/* four rows' sums over one group of four elements (x words xe, xo at [x], the
 * four rows' weight words at [w]); both pointers post-incremented */
#define EB_FC_GROUP                                       \
    "ldrd   %[xe], %[xo], [%[x]], #8\n\t"                 \
    "ldrd   %[wa], %[wb], [%[w]], #8\n\t"                 \
    "sxtb16 %[t], %[wa]\n\t"                              \
    "sxtb16 %[wa], %[wa], ror #8\n\t"                     \
    "smlad  %[a0], %[t], %[xe], %[a0]\n\t"                \
    "smlad  %[a0], %[wa], %[xo], %[a0]\n\t"               \
    "sxtb16 %[t], %[wb]\n\t"                              \
    "sxtb16 %[wb], %[wb], ror #8\n\t"                     \
    "smlad  %[a1], %[t], %[xe], %[a1]\n\t"                \
    "smlad  %[a1], %[wb], %[xo], %[a1]\n\t"               \
    "ldrd   %[wa], %[wb], [%[w]], #8\n\t"                 \
    "sxtb16 %[t], %[wa]\n\t"                              \
    "sxtb16 %[wa], %[wa], ror #8\n\t"                     \
    "smlad  %[a2], %[t], %[xe], %[a2]\n\t"                \
    "smlad  %[a2], %[wa], %[xo], %[a2]\n\t"               \
    "sxtb16 %[t], %[wb]\n\t"                              \
    "sxtb16 %[wb], %[wb], ror #8\n\t"                     \
    "smlad  %[a3], %[t], %[xe], %[a3]\n\t"                \
    "smlad  %[a3], %[wb], %[xo], %[a3]\n\t"

#define EB_FC_OPERANDS                                                                                   \
    : [x] "+r"(x), [w] "+r"(w), [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3),            \
      [xe] "=&r"(xe), [xo] "=&r"(xo), [wa] "=&r"(wa), [wb] "=&r"(wb), [t] "=&r"(t)                     \
    : [end] "r"(xend)                                                                                    \
    : "cc", "memory"

/* acc[j] += row j . x over G >= 1 groups of a block (w word-aligned, at the block) */
static void eb_fc_block(const uint32_t *xq, int32_t G, const int8_t *w, int32_t *acc)
{
    const uint32_t *x = xq;
    const uint32_t *const xend = xq + 2 * G;
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    uint32_t xe, xo, wa, wb, t;
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
}

#undef EB_FC_GROUP
#undef EB_FC_OPERANDS

/* o[j] for the sums acc[j] of units u0 + j, j < n: the fast path with the layer's
 * constants when the factor is one for all units, eb_requant_chan otherwise (and
 * wherever the fast path's bounds disagree) */
static EB_NOINLINE void eb_fc_requant(const int32_t *acc, int32_t n, const eb_f64_fast *uq, int32_t u0,
                                      const eb_fc_params *p, int8_t *o)
{
    const uint8_t *const arr1 = p->chan + 4 * (size_t)p->units;
    const uint8_t *const arr2 = p->chan + 8 * (size_t)p->units;
    const int32_t off = p->out_offset, lo = p->act_min, hi = p->act_max;
    int32_t j;
    if (uq && lo == -128 && hi == 127) {
        /* eb_f64_fast_mul in asm with the constants in registers, the sign applied by
         * mask and the clamp as two saturations (|r| < 2^31 saturated to 10 bits first
         * keeps r + off inside int32 and clamps as the int8 range does): 24 instructions
         * per output. The loop leaves at an output whose bounds disagree (acc then points
         * at it), which eb_requant_chan rescales. */
        const int32_t *a = acc;
        const int32_t *const end = acc + n;
        int8_t *d = o;
        while (a < end) {
            uint32_t v, m, l, h, x;
            __asm__ volatile(
                "1:\n\t"
                "ldr    %[v], [%[a]], #4\n\t"
                "eor    %[m], %[v], %[v], asr #31\n\t"
                "sub    %[m], %[m], %[v], asr #31\n\t"
                "movs   %[l], #0\n\t"
                "mov    %[h], %[hh]\n\t"
                "umlal  %[l], %[h], %[m], %[M]\n\t"
                "subs   %[x], %[l], #2048\n\t"
                "sbc    %[x], %[h], #0\n\t"
                "add    %[m], %[m], #2048\n\t"
                "adds   %[l], %[l], %[m]\n\t"
                "adc    %[h], %[h], #0\n\t"
                "lsr    %[x], %[x], %[sh]\n\t"
                "lsr    %[h], %[h], %[sh]\n\t"
                "cmp    %[x], %[h]\n\t"
                "bne    2f\n\t"
                "eor    %[x], %[x], %[v], asr #31\n\t"
                "sub    %[x], %[x], %[v], asr #31\n\t"
                "ssat   %[x], #10, %[x]\n\t"
                "add    %[x], %[x], %[off]\n\t"
                "ssat   %[x], #8, %[x]\n\t"
                "strb   %[x], [%[d]], #1\n\t"
                "cmp    %[a], %[end]\n\t"
                "bne    1b\n\t"
                "b      3f\n\t"
                "2:\n\t"
                "sub    %[a], %[a], #4\n\t"
                "3:\n\t"
                : [a] "+r"(a), [d] "+r"(d), [v] "=&r"(v), [m] "=&r"(m), [l] "=&r"(l), [h] "=&r"(h), [x] "=&r"(x)
                : [end] "r"(end), [M] "r"(uq->M), [hh] "r"(uq->hh), [sh] "r"(uq->sh), [off] "r"(off)
                : "cc", "memory");
            if (a < end) {
                *d++ = eb_requant_chan(*a, arr1, arr2, u0 + (int32_t)(a - acc), 1, off, lo, hi);
                a++;
            }
        }
        return;
    }
    if (uq) {
        const eb_f64_fast q = *uq;
        for (j = 0; j < n; j++) {
            int32_t v;
            o[j] = eb_f64_fast_mul(acc[j], &q, &v) ? eb_fc_clamp(v, off, lo, hi)
                                                   : eb_requant_chan(acc[j], arr1, arr2, u0 + j, 1, off, lo, hi);
        }
        return;
    }
    for (j = 0; j < n; j++) {
        o[j] = eb_requant_chan(acc[j], arr1, arr2, u0 + j, 1, off, lo, hi);
    }
}

int eb_fc_s8_opt(const eb_fc_params *p, const int8_t *in, int8_t *out)
{
    const int32_t depth = p->depth, units = p->units, G = depth >> 2, R = depth & 3;
    const int32_t units4 = units & ~3;
    const uint8_t *const bias = p->chan;
    uint32_t *const xq = eb_dsp_buf;
    int32_t *const acc = (int32_t *)(void *)(xq + 2 * G);
    /* the sums of up to `room` units (a multiple of four) after x in the scratch */
    const int32_t room = ((int32_t)(EB_DSP_SCRATCH_BYTES / 4u) - 2 * G) & ~3;
    eb_f64_fast q = {0u, 0u, 0u};
    int uniform;
    int32_t b;
    if (G < 2 || units < 4 || ((uintptr_t)p->filter & 3u) != 0 || room < 4) {
        return 0;
    }
    /* one factor for every unit (a per-tensor filter scale): the fast path's constants
     * once per layer */
    {
        const uint32_t lo0 = (uint32_t)eb_ld32(p->chan + 4 * (size_t)units);
        const uint32_t hi0 = (uint32_t)eb_ld32(p->chan + 8 * (size_t)units);
        int32_t u;
        uniform = eb_f64_fast_init(lo0, hi0, &q);
        for (u = 1; uniform && u < units; u++) {
            uniform = (uint32_t)eb_ld32(p->chan + 4 * ((size_t)units + u)) == lo0 &&
                      (uint32_t)eb_ld32(p->chan + 4 * (2 * (size_t)units + u)) == hi0;
        }
    }
    for (b = 0; b < p->batches; b++) {
        const int8_t *const x = in + (size_t)b * depth;
        int8_t *const o = out + (size_t)b * units;
        const int8_t *w = p->filter;
        int32_t g, u0, j, i;
        for (g = 0; g < G; g++) {
            const uint32_t v = eb_ldw(x + 4 * g);
            xq[2 * g] = (uint32_t)eb_sx02(v);
            xq[2 * g + 1] = (uint32_t)eb_sx13(v);
        }
        for (u0 = 0; u0 < units4; u0 += room) {
            const int32_t n = units4 - u0 < room ? units4 - u0 : room;
            int32_t u;
            for (u = 0; u < n; u += 4) {
                int32_t *const a = acc + u;
                for (j = 0; j < 4; j++) {
                    a[j] = eb_ld32(bias + 4 * (size_t)(u0 + u + j));
                }
                eb_fc_block(xq, G, w, a);
                w += 16 * (size_t)G;
                for (i = 0; i < R; i++) {
                    const int32_t xv = x[4 * G + i];
                    for (j = 0; j < 4; j++) {
                        a[j] = eb_mac(a[j], xv, w[j * R + i]);
                    }
                }
                w += 4 * (size_t)R;
            }
            eb_fc_requant(acc, n, uniform ? &q : NULL, u0, p, o + u0);
        }
        eb_matvec_last_rows(x, w, depth, units4, units, p->chan, 1, p->out_offset, p->act_min, p->act_max, o);
    }
    return 1;
}
