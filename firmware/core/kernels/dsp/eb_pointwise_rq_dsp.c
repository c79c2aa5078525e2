/*
 * eb_pointwise_rq_dsp.c - the outputs of the pointwise CONV_2D kernel
 * (eb_pointwise_dsp.c, whose header comment has the arithmetic and the bounds): the
 * live channels' requantisation from the plan's entries, on doubled sums
 * (eb_pw_requant) or exactly on plain sums (eb_pw_requant_exact, with the test that
 * admits a channel to it, eb_pw_exact_ok), and the copy of the dead channels' constant
 * outputs (eb_pw_fill). Called by eb_pointwise_dsp.c only; they call nothing back.
 */
#include "eb_conv_dsp.h"

/* The live channels' requantisation from their {m, hc, e, u} entries (rq .. end), the
 * SMMLAR form on doubled sums of eb_conv_requant_tbl2 (eb_conv_mm_dsp.c; |acc| <
 * 2^30, see the header comment): o0[u], o1[u] from acc[2u], acc[2u + 1]. 17 instructions
 * a channel. */
EB_NOINLINE void eb_pw_requant(const uint32_t *rq, const uint32_t *end, const int32_t *acc, int8_t *o0,
                               int8_t *o1)
{
    register const uint32_t *rt __asm__("r0") = rq;
    register uint32_t m __asm__("r2"), hc __asm__("r3"), e __asm__("r4"), u __asm__("r5");
    uint32_t h, a0, a1;
    __asm__ volatile(
        "1:\n\t"
        "ldmia  %[t]!, {%[m], %[hc], %[e], %[u]}\n\t"
        "add    %[h], %[acc], %[u], lsl #3\n\t"
        "ldrd   %[a0], %[a1], [%[h]]\n\t"
        "lsl    %[a0], %[a0], #1\n\t"
        "add    %[h], %[hc], %[a0], asr #31\n\t"
        "smmlar %[h], %[a0], %[m], %[h]\n\t"
        "asr    %[h], %[h], %[e]\n\t"
        "ssat   %[h], #8, %[h]\n\t"
        "strb   %[h], [%[o0], %[u]]\n\t"
        "lsl    %[a1], %[a1], #1\n\t"
        "add    %[h], %[hc], %[a1], asr #31\n\t"
        "smmlar %[h], %[a1], %[m], %[h]\n\t"
        "asr    %[h], %[h], %[e]\n\t"
        "ssat   %[h], #8, %[h]\n\t"
        "strb   %[h], [%[o1], %[u]]\n\t"
        "cmp    %[t], %[end]\n\t"
        "bne    1b\n\t"
        : [t] "+r"(rt), [m] "=&r"(m), [hc] "=&r"(hc), [e] "=&r"(e), [u] "=&r"(u), [h] "=&r"(h), [a0] "=&r"(a0),
          [a1] "=&r"(a1)
        : [end] "r"(end), [acc] "r"(acc), [o0] "r"(o0), [o1] "r"(o1)
        : "cc", "memory");
}

/* The live channels outside the doubled-sum case whose requantisation is
 * eb_requant's with shift <= -1 (e = -shift in 1..31), m > 0 and the full int8 range,
 * from entries {m, hh = 2^(e-1), E = e | (off << 8), u} (rq .. end): exactly, on the
 * plain sums, 27 instructions a channel for both pixels (eb_pw_slow's C: about 60).
 *   srdhm:  x = (acc * m + 2^30) >> 31     SMULL, ADDS #2^30, ADC, LSL #1, ORR LSR #31
 *           (the 64-bit sum; x fits int32 as |acc * m| < 2^62)
 *   rdbypot: (x + 2^(e-1) - (x < 0)) >> e  (ties away from zero: gemmlowp's
 *           remainder > threshold test, exactly, for e >= 1) if that sum fits int32,
 *           which eb_pw_exact_ok vouches for at plan time
 *   + off (E asr 8: ASR by register uses E's low byte alone), SSAT 8, STRB. */
EB_NOINLINE void eb_pw_requant_exact(const uint32_t *rq, const uint32_t *end, const int32_t *acc, int8_t *o0,
                                     int8_t *o1)
{
    register const uint32_t *rt __asm__("r0") = rq;
    /* the LDM list ascending: m, hh, E, u in r2-r5 */
    register uint32_t m __asm__("r2"), hh __asm__("r3"), ee __asm__("r4"), u __asm__("r5");
    uint32_t a0, a1, lo, hi;
#define EB_PW_EXACT_ONE(A, O)                                   \
    "smull  %[lo], %[hi], " A ", %[m]\n\t"                      \
    "adds   %[lo], %[lo], #0x40000000\n\t"                      \
    "adc    %[hi], %[hi], #0\n\t"                               \
    "lsl    %[hi], %[hi], #1\n\t"                               \
    "orr    %[hi], %[hi], %[lo], lsr #31\n\t"                   \
    "add    %[lo], %[hh], %[hi], asr #31\n\t"                   \
    "add    %[hi], %[hi], %[lo]\n\t"                            \
    "asr    %[hi], %[hi], %[e]\n\t"                             \
    "add    %[hi], %[hi], %[e], asr #8\n\t"                     \
    "ssat   %[hi], #8, %[hi]\n\t"                               \
    "strb   %[hi], [" O ", %[u]]\n\t"
    __asm__ volatile(
        "1:\n\t"
        "ldmia  %[t]!, {%[m], %[hh], %[e], %[u]}\n\t"
        "add    %[lo], %[acc], %[u], lsl #3\n\t"
        "ldrd   %[a0], %[a1], [%[lo]]\n\t"
        EB_PW_EXACT_ONE("%[a0]", "%[o0]")
        EB_PW_EXACT_ONE("%[a1]", "%[o1]")
        "cmp    %[t], %[end]\n\t"
        "bne    1b\n\t"
        : [t] "+r"(rt), [m] "=&r"(m), [hh] "=&r"(hh), [e] "=&r"(ee), [u] "=&r"(u), [a0] "=&r"(a0),
          [a1] "=&r"(a1), [lo] "=&r"(lo), [hi] "=&r"(hi)
        : [end] "r"(end), [acc] "r"(acc), [o0] "r"(o0), [o1] "r"(o1)
        : "cc", "memory");
#undef EB_PW_EXACT_ONE
}

/* 1 when channel (bias'', m, shift) of a layer over C input channels with the full int8
 * range takes eb_pw_requant_exact: m > 0, 1 <= e = -shift <= 31, and |x| + 2^(e-1) + 1 <
 * 2^31 for every sum: |acc| <= |bias''| + 2^15 * C (|bias' - bias''| <= 2^13 * C, |w.x| <=
 * 2^14 * C) < 2^31 and |x| <= (|acc| * m + 2^30) / 2^31. */
int eb_pw_exact_ok(int32_t bias, int32_t m, int32_t sft, int32_t C)
{
    const int64_t amax = (bias < 0 ? -(int64_t)bias : (int64_t)bias) + ((int64_t)C << 15);
    const int32_t e = -sft;
    if (m <= 0 || e < 1 || e > 31 || amax >= ((int64_t)1 << 31)) {
        return 0;
    }
    return ((amax * m + ((int64_t)1 << 30)) >> 31) + ((int64_t)1 << (e - 1)) + 1 < ((int64_t)1 << 31);
}

/* n bytes of the word-aligned template t to o (any alignment: STR takes unaligned
 * addresses on Armv7-M): four words a pass, then words, then the n % 4 last bytes */
EB_NOINLINE void eb_pw_fill(const uint32_t *t, int32_t n, int8_t *o)
{
    int32_t i = 0;
    for (; i + 16 <= n; i += 16, t += 4) {
        const uint32_t v0 = t[0], v1 = t[1], v2 = t[2], v3 = t[3];
        EB_COPY4(o + i, &v0);
        EB_COPY4(o + i + 4, &v1);
        EB_COPY4(o + i + 8, &v2);
        EB_COPY4(o + i + 12, &v3);
    }
    for (; i + 4 <= n; i += 4, t++) {
        EB_COPY4(o + i, t);
    }
    for (; i < n; i++) {
        o[i] = ((const int8_t *)(const void *)t)[i & 3];
    }
}
