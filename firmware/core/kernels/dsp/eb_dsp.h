/*
 * eb_dsp.h - shared by the DSP kernels (kernels/dsp/): the static scratch they
 * work in (eb_dsp.c) and the exact requantisation rewrite their inner loops use.
 * Only for cores with the Armv7E-M DSP extension; see eb_dsp.c for what the set
 * is and how the build selects it.
 */
#ifndef EB_DSP_H
#define EB_DSP_H

#include "eb_dot.h"

#if !EB_DSP
#error "kernels/dsp/ needs a core with the Armv7E-M DSP extension (__ARM_FEATURE_DSP); build with EB_KERNELS=portable"
#endif
#if !defined(__OPTIMIZE__)
#error "the DSP kernels pin all 14 allocatable registers: build them optimised (-O2), or with EB_KERNELS=portable"
#endif

#ifndef EB_DSP_SCRATCH_BYTES
#define EB_DSP_SCRATCH_BYTES 4096u
#endif

/* One static buffer shared by the layers (one layer runs at a time), in .bss. */
extern uint32_t eb_dsp_buf[EB_DSP_SCRATCH_BYTES / 4u];

#if defined(__GNUC__)
#define EB_COPY2(dst, src) __builtin_memcpy((dst), (src), 2)
#else
#define EB_COPY2(dst, src) memcpy((dst), (src), 2)
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


#endif /* EB_DSP_H */
