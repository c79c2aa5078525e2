/*
 * eb_rescale.c - the binary64 rescale of FULLY_CONNECTED (LiteRT's reference
 * computes round(acc * S) in double precision, S = in_scale * filter_scale /
 * out_scale), in integer arithmetic: the exact product of eb_mul_round_f64, whose fast path
 * is inline in eb_kernels.h. Shared by the portable and the DSP kernels
 * (eb_dot.h's eb_requant_chan).
 */
#include "eb_kernels.h"

/* number of significant bits of v (v > 0) */
static inline int32_t eb_bitlen32(uint32_t v)
{
#if defined(__GNUC__)
    return 32 - __builtin_clz(v);
#else
    int32_t n = 0;
    while (v) {
        v >>= 1;
        n++;
    }
    return n;
#endif
}

/* eb_mul_round_f64 for any acc and factor: the exact 85-bit product, rounded as binary64
 * rounds it, then as round() does */
int32_t eb_mul_round_f64_exact(int32_t acc, uint32_t s_lo, uint32_t s_hi)
{
    /* S = m * 2^e with m = mh:s_lo the 53-bit significand (hidden bit set) */
    const uint32_t mh = (s_hi & 0xFFFFFu) | 0x100000u;
    const int32_t e = (int32_t)((s_hi >> 20) & 0x7FFu) - 1075;
    const uint32_t a = acc < 0 ? 0u - (uint32_t)acc : (uint32_t)acc;
    uint32_t w0, w1, w2, q0, q1, rem, half;
    uint64_t r;
    int32_t d, k;
    if (a == 0) {
        return 0;
    }
    /* exact product P = a * m = w2:w1:w0 (< 2^85, w2 < 2^21) */
    {
        const uint64_t u = (uint64_t)a * s_lo;
        const uint64_t v = (uint64_t)a * mh;
        const uint64_t mid = (u >> 32) + (uint32_t)v;
        w0 = (uint32_t)u;
        w1 = (uint32_t)mid;
        w2 = (uint32_t)(v >> 32) + (uint32_t)(mid >> 32);
    }
    /* the binary64 product keeps 53 significant bits: q = P >> d rounded to
     * nearest, ties to even (P >= 2^52, so 0 <= d <= 32) */
    d = (w2 ? 64 + eb_bitlen32(w2) : 32 + eb_bitlen32(w1)) - 53;
    if (d == 0) {
        q0 = w0;
        q1 = w1;
        rem = 0;
        half = 1;
    } else if (d == 32) {
        q0 = w1;
        q1 = w2;
        rem = w0;
        half = 0x80000000u;
    } else {
        q0 = (w0 >> d) | (w1 << (32 - d));
        q1 = (w1 >> d) | (w2 << (32 - d));
        rem = w0 & ((1u << d) - 1u);
        half = 1u << (d - 1);
    }
    if (rem > half || (rem == half && (q0 & 1u))) {
        q0++;
        q1 += q0 == 0 ? 1u : 0u;
    }
    /* the double is q * 2^k (q < 2^54); C's round(): ties away from zero */
    k = d + e;
    if (k >= 0) {
        r = (uint64_t)1 << 31;                      /* >= 2^52: saturate */
    } else if (k < -55) {
        r = 0;                                      /* below 1/4 */
    } else if (k <= -32) {
        const int32_t s = -k - 32;                  /* 0..23 */
        r = (uint64_t)(q1 >> s) + (s ? (q1 >> (s - 1)) & 1u : q0 >> 31);
    } else {
        const int32_t s = -k;                       /* 1..31 */
        r = (q1 >> s) ? ((uint64_t)1 << 31)
                      : (uint64_t)((q0 >> s) | (q1 << (32 - s))) + ((q0 >> (s - 1)) & 1u);
    }
    if (r > ((uint64_t)1 << 31)) {
        r = (uint64_t)1 << 31;
    }
    if (acc < 0) {
        return r == ((uint64_t)1 << 31) ? INT32_MIN : -(int32_t)r;
    }
    return r >= ((uint64_t)1 << 31) ? INT32_MAX : (int32_t)r;
}
