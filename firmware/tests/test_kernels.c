/*
 * test_kernels.c - unit tests of the INT8 engine's fixed-point helpers and
 * kernels (host build: make -C firmware/tests check).
 *
 * Expected values are derived by hand from TFLite's reference definitions
 * (gemmlowp fixed point, reference_integer_ops) or, for randomised shapes,
 * from a naive transcription of the reference loops kept in this file
 * (ref_conv, ref_depthwise, ref_fc): the optimised kernels must give the
 * same bytes. Prints `N passed, M failed`; exit status 1 on any failure.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eb_kernels.h"
#ifdef EB_TEST_PORT
#include "eb_port.h"   /* built for a board or QEMU: firmware/tests/qemu.mk */
#define EB_TEST_REPEAT 1
#else
#define EB_TEST_REPEAT 10
#endif

static int g_pass, g_fail;

#define CHECK_EQ(got, want)                                                         \
    do {                                                                            \
        long g_ = (long)(got), w_ = (long)(want);                                   \
        if (g_ == w_) {                                                             \
            g_pass++;                                                               \
        } else {                                                                    \
            g_fail++;                                                               \
            printf("FAIL %s:%d: %s = %ld, want %ld\n", __FILE__, __LINE__, #got,    \
                   g_, w_);                                                         \
        }                                                                           \
    } while (0)

#define CHECK_BYTES(got, want, n, what)                                             \
    do {                                                                            \
        if (memcmp((got), (want), (n)) == 0) {                                      \
            g_pass++;                                                               \
        } else {                                                                    \
            size_t i_;                                                              \
            g_fail++;                                                               \
            for (i_ = 0; i_ < (size_t)(n); i_++) {                                  \
                if ((got)[i_] != (want)[i_]) break;                                 \
            }                                                                       \
            printf("FAIL %s:%d: %s: byte %lu is %d, want %d\n", __FILE__, __LINE__, \
                   (what), (unsigned long)i_, (int)(got)[i_], (int)(want)[i_]);     \
        }                                                                           \
    } while (0)

/* ---- deterministic pseudo-random numbers -------------------------------- */

static uint32_t g_rng = 12345u;

static uint32_t rnd(void)
{
    g_rng = g_rng * 1664525u + 1013904223u;
    return g_rng >> 8;
}

static int32_t rnd_range(int32_t lo, int32_t hi) /* inclusive */
{
    return lo + (int32_t)(rnd() % (uint32_t)(hi - lo + 1));
}

static void rnd_fill(int8_t *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        p[i] = (int8_t)rnd_range(-128, 127);
    }
}

static void put32(uint8_t *p, int32_t v) { memcpy(p, &v, 4); }
static int32_t get32(const uint8_t *p) { int32_t v; memcpy(&v, p, 4); return v; }

/* ---- fixed point --------------------------------------------------------- */

static void test_fixed_point(void)
{
    /* SaturatingRoundingDoublingHighMul */
    CHECK_EQ(eb_srdhm(INT32_MIN, INT32_MIN), INT32_MAX);
    CHECK_EQ(eb_srdhm(INT32_MAX, INT32_MAX), INT32_MAX - 1);   /* (2^31-1)^2/2^31 = 2^31-2+tiny */
    CHECK_EQ(eb_srdhm(INT32_MIN, INT32_MAX), -INT32_MAX);
    CHECK_EQ(eb_srdhm(1 << 30, 1 << 30), 1 << 29);
    CHECK_EQ(eb_srdhm(-(1 << 30), 1 << 30), -(1 << 29));
    CHECK_EQ(eb_srdhm(3, 1 << 30), 2);     /* 1.5 -> 2 */
    CHECK_EQ(eb_srdhm(5, 1 << 30), 3);     /* 2.5 -> 3 */
    CHECK_EQ(eb_srdhm(-3, 1 << 30), -1);   /* -1.5 -> -1: ties toward +inf */
    CHECK_EQ(eb_srdhm(-5, 1 << 30), -2);   /* -2.5 -> -2 */
    CHECK_EQ(eb_srdhm(-7, 1 << 29), -2);   /* -1.75 -> -2 */
    CHECK_EQ(eb_srdhm(-5, 1 << 29), -1);   /* -1.25 -> -1 */
    CHECK_EQ(eb_srdhm(0, INT32_MIN), 0);
    CHECK_EQ(eb_srdhm(1, 1), 0);

    /* RoundingDivideByPOT: ties away from zero */
    CHECK_EQ(eb_rdbypot(-5, 1), -3);
    CHECK_EQ(eb_rdbypot(5, 1), 3);
    CHECK_EQ(eb_rdbypot(-4, 1), -2);
    CHECK_EQ(eb_rdbypot(-6, 2), -2);   /* -1.5 */
    CHECK_EQ(eb_rdbypot(6, 2), 2);     /* 1.5 */
    CHECK_EQ(eb_rdbypot(-7, 2), -2);   /* -1.75 */
    CHECK_EQ(eb_rdbypot(-5, 2), -1);   /* -1.25 */
    CHECK_EQ(eb_rdbypot(7, 0), 7);
    CHECK_EQ(eb_rdbypot(INT32_MIN, 31), -1);
    CHECK_EQ(eb_rdbypot(INT32_MAX, 31), 1);
    CHECK_EQ(eb_rdbypot(1 << 30, 31), 1);       /* 0.5 */
    CHECK_EQ(eb_rdbypot(-(1 << 30), 31), -1);   /* -0.5 */
    CHECK_EQ(eb_rdbypot((1 << 30) - 1, 31), 0);

    /* MultiplyByQuantizedMultiplier (double rounding) */
    CHECK_EQ(eb_mbqm(3, 1 << 30, 0), 2);
    CHECK_EQ(eb_mbqm(100, 1 << 30, -1), 25);
    CHECK_EQ(eb_mbqm(100, 1 << 30, 1), 100);
    CHECK_EQ(eb_mbqm(-100, 1 << 30, 1), -100);
    CHECK_EQ(eb_mbqm(INT32_MIN, INT32_MIN, 0), INT32_MAX);
    CHECK_EQ(eb_mbqm(1 << 20, 1 << 30, -31), 0);
    CHECK_EQ(eb_mbqm(-1, 1 << 30, 0), 0);      /* -0.5 -> 0 (ties toward +inf) */
    CHECK_EQ(eb_mbqm(-3, 1 << 30, -1), -1);    /* -1.5 -> -1 -> -0.5 -> -1 */
    /* 11 * 0.75 = 8.25 -> 8, / 4 = 2 */
    CHECK_EQ(eb_mbqm(11, 3 << 29, -2), 2);
    /* 13 * 0.75 = 9.75 -> 10 -> 10/4 = 2.5 -> 3 (exact 2.4375 would be 2) */
    CHECK_EQ(eb_mbqm(13, 3 << 29, -2), 3);

    /* SaturatingRoundingMultiplyByPOT */
    CHECK_EQ(eb_srmbypot(1 << 29, 1), 1 << 30);
    CHECK_EQ(eb_srmbypot(1 << 30, 1), INT32_MAX);
    CHECK_EQ(eb_srmbypot(-(1 << 30), 1), INT32_MIN);
    CHECK_EQ(eb_srmbypot(-(1 << 30) + 1, 1), -(1 << 30) * 2 + 2);
    CHECK_EQ(eb_srmbypot(5, -1), 3);
    CHECK_EQ(eb_srmbypot(-5, -1), -3);
    CHECK_EQ(eb_srmbypot(123, 0), 123);
    CHECK_EQ(eb_srmbypot(1 << 25, 5), 1 << 30);     /* 2^25 <= 2^26 - 1 */
    CHECK_EQ(eb_srmbypot(1 << 26, 5), INT32_MAX);   /* 2^26 > 2^26 - 1 */

    /* requantization with offset and clamp */
    CHECK_EQ(eb_requant(1000, 1 << 30, 0, -128, -128, 127), 127);
    CHECK_EQ(eb_requant(-1000, 1 << 30, 0, 10, -128, 127), -128);
    CHECK_EQ(eb_requant(20, 1 << 30, 0, 5, 0, 127), 15);
    CHECK_EQ(eb_requant(-40, 1 << 30, 0, 5, 0, 127), 0);   /* ReLU clamp */

    /* gemmlowp exp_on_negative_values (Q5.26 -> Q0.31) and reciprocal;
     * values from the reference definitions (exact integers). */
    CHECK_EQ(eb_exp_on_negative_values(0), INT32_MAX);
    CHECK_EQ(eb_exp_on_negative_values(-(1 << 26)), 790015308);     /* exp(-1) */
    CHECK_EQ(eb_exp_on_negative_values(-(1 << 24)), 1672462419);    /* exp(-1/4) */
    CHECK_EQ(eb_exp_on_negative_values(-(3 << 25)), 479168506);     /* exp(-1.5) */
    CHECK_EQ(eb_exp_on_negative_values(-(5 << 22)), 1571132588);    /* exp(-0.3125) */
    CHECK_EQ(eb_exp_on_negative_values(-1), 2147483124);
    CHECK_EQ(eb_exp_on_negative_values(-(31 << 26)), 0);
    CHECK_EQ(eb_exp_on_negative_values(INT32_MIN), 0);
    CHECK_EQ(eb_one_over_one_plus_x(0), INT32_MAX);               /* 1/1 saturates */
    CHECK_EQ(eb_one_over_one_plus_x(1 << 30), 1431655762);       /* 1/1.5 */
    CHECK_EQ(eb_one_over_one_plus_x(INT32_MAX), 1073741820);     /* ~1/2 */
    CHECK_EQ(eb_one_over_one_plus_x(12345678), 2135208542);
}

/* ---- the double-precision rescale of FULLY_CONNECTED -------------------- */

static uint32_t lo_word(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return (uint32_t)u;
}

static uint32_t hi_word(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return (uint32_t)(u >> 32);
}

/* what C computes: round() of the binary64 product, saturated to int32 */
static int32_t native_mul_round(int32_t acc, double s)
{
    const double r = round((double)acc * s);
    if (r >= 2147483647.0) {
        return INT32_MAX;
    }
    if (r <= -2147483648.0) {
        return INT32_MIN;
    }
    return (int32_t)r;
}

static void check_mul_round(int32_t acc, double s)
{
    const int32_t got = eb_mul_round_f64(acc, lo_word(s), hi_word(s));
    const int32_t want = native_mul_round(acc, s);
    if (got == want) {
        g_pass++;
    } else {
        g_fail++;
        printf("FAIL eb_mul_round_f64(%ld, %.17g) = %ld, want %ld\n", (long)acc, s, (long)got,
               (long)want);
    }
}

static double rnd_unit(void) /* [0, 1) with 48 random bits */
{
    return ((double)rnd() * 16777216.0 + (double)rnd()) / 281474976710656.0;
}

static void test_mul_round_f64(void)
{
    int i, k;
    /* hand cases: ties go away from zero */
    CHECK_EQ(eb_mul_round_f64(3, lo_word(0.5), hi_word(0.5)), 2);
    CHECK_EQ(eb_mul_round_f64(-3, lo_word(0.5), hi_word(0.5)), -2);
    CHECK_EQ(eb_mul_round_f64(-1, lo_word(0.5), hi_word(0.5)), -1);
    CHECK_EQ(eb_mul_round_f64(1, lo_word(0.25), hi_word(0.25)), 0);
    CHECK_EQ(eb_mul_round_f64(0, lo_word(0.75), hi_word(0.75)), 0);
    CHECK_EQ(eb_mul_round_f64(100, lo_word(1.0), hi_word(1.0)), 100);
    CHECK_EQ(eb_mul_round_f64(INT32_MIN, lo_word(1.0), hi_word(1.0)), INT32_MIN);
    CHECK_EQ(eb_mul_round_f64(INT32_MAX, lo_word(4.0), hi_word(4.0)), INT32_MAX);
    CHECK_EQ(eb_mul_round_f64(-7, lo_word(1e-300), hi_word(1e-300)), 0);
    /* the widest products (d = 32: |acc| = 2^31 times a significand near 2^53) */
    check_mul_round(INT32_MIN, 0.9999999999999999);
    check_mul_round(INT32_MIN, 1.9999999999999998e-9);
    check_mul_round(INT32_MIN + 1, 1.9999999999999998e-9);
    check_mul_round(INT32_MAX, 3.7252902984619136e-09);
    for (i = 0; i < 20000; i++) {
        check_mul_round(INT32_MIN + rnd_range(0, 1000), ldexp(1.0 + rnd_unit(), -rnd_range(20, 40)));
        check_mul_round(INT32_MAX - rnd_range(0, 1000), ldexp(1.0 + rnd_unit(), -rnd_range(20, 40)));
    }
    /* factors just below 1/2: exact products just below a tie, which the
     * binary64 product may round onto it */
    for (i = 1; i < 2000; i += 2) {
        check_mul_round(i * 4099, 0.5 - 5.551115123125783e-17);
        check_mul_round(-i * 4099, 0.5 - 5.551115123125783e-17);
    }
    /* random factors and accumulators */
    for (i = 0; i < 20000 * EB_TEST_REPEAT; i++) {
        const double s = ldexp(1.0 + rnd_unit(), -rnd_range(0, 40));
        const int32_t acc = (int32_t)(rnd() ^ (rnd() << 16)) >> rnd_range(0, 30);
        check_mul_round(acc, s);
    }
    /* the same below-a-tie products with the factors of the fast path (2^-20 < s < 2^-1):
     * (2k+1) * 2^j times (1/2 - 2^-54) * 2^-j is k + 1/2 less (2k+1) * 2^-54, which the
     * binary64 product rounds onto the tie (so round() gives k + 1): the fast path's bounds
     * straddle it and the exact path decides */
    for (k = 1; k < 20; k++) {
        for (i = 1; i < 1000; i += 2) {
            check_mul_round(i << k, ldexp(0.5 - 5.551115123125783e-17, -k));
            check_mul_round(-(i << k), ldexp(0.5 - 5.551115123125783e-17, -k));
        }
    }
    /* near ties: acc * s close to k + 1/2 */
    for (i = 0; i < 20000 * EB_TEST_REPEAT; i++) {
        const double s = ldexp(1.0 + rnd_unit(), -rnd_range(2, 21));
        const double target = (double)rnd_range(-300, 300) + 0.5;
        const int32_t acc0 = (int32_t)(target / s);
        for (k = -1; k <= 1; k++) {
            check_mul_round(acc0 + k, s);
        }
    }
}

/* ---- naive references (transcriptions of the reference loops) ----------- */

static void ref_conv(const eb_conv_params *p, const int8_t *in, const int32_t *bias,
                     const int32_t *mult, const int32_t *shift, int8_t *out, int depthwise)
{
    int32_t b, oy, ox, oc, ky, kx, ic;
    for (b = 0; b < p->out.n; b++)
        for (oy = 0; oy < p->out.h; oy++)
            for (ox = 0; ox < p->out.w; ox++)
                for (oc = 0; oc < p->out.c; oc++) {
                    int32_t acc = 0;
                    for (ky = 0; ky < p->kh; ky++)
                        for (kx = 0; kx < p->kw; kx++) {
                            const int32_t iy = oy * p->sh - p->ph + ky * p->dh;
                            const int32_t ix = ox * p->sw - p->pw + kx * p->dw;
                            if (iy < 0 || iy >= p->in.h || ix < 0 || ix >= p->in.w) {
                                continue;
                            }
                            if (depthwise) {
                                const int32_t c = oc / p->depth_mult;
                                const int32_t x = in[((b * p->in.h + iy) * p->in.w + ix) * p->in.c + c];
                                const int32_t w = p->filter[(ky * p->kw + kx) * p->out.c + oc];
                                acc += w * (x + p->in_offset);
                            } else {
                                for (ic = 0; ic < p->in.c; ic++) {
                                    const int32_t x =
                                        in[((b * p->in.h + iy) * p->in.w + ix) * p->in.c + ic];
                                    const int32_t w =
                                        p->filter[((oc * p->kh + ky) * p->kw + kx) * p->in.c + ic];
                                    acc += w * (x + p->in_offset);
                                }
                            }
                        }
                    acc += bias[oc];
                    out[((b * p->out.h + oy) * p->out.w + ox) * p->out.c + oc] =
                        eb_requant(acc, mult[oc], shift[oc], p->out_offset, p->act_min, p->act_max);
                }
}

/* Per-channel arrays as the converter writes them: bias' = bias + in_offset *
 * sum(weights of the channel). */
static void make_chan(uint8_t *chan, int32_t channels, const int32_t *bias, const int32_t *mult,
                      const int32_t *shift, const int8_t *filter, int32_t per_chan,
                      int32_t stride, int32_t step, int32_t in_offset)
{
    int32_t c, i;
    for (c = 0; c < channels; c++) {
        int32_t sum = 0;
        for (i = 0; i < per_chan; i++) {
            sum += filter[c * stride + i * step];
        }
        put32(chan + 4 * c, bias[c] + in_offset * sum);
        put32(chan + 4 * (channels + c), mult[c]);
        put32(chan + 4 * (2 * channels + c), shift[c]);
    }
}

static int32_t out_size(int32_t in, int32_t k, int32_t s, int32_t d, int same, int32_t *pad)
{
    const int32_t eff = (k - 1) * d + 1;
    int32_t out = same ? (in + s - 1) / s : (in + s - eff) / s;
    int32_t total = (out - 1) * s + eff - in;
    *pad = total > 0 ? total / 2 : 0;
    return out;
}

#define MAXB 8192
static int8_t g_in[MAXB], g_filter[MAXB], g_out[MAXB], g_want[MAXB], g_scratch[MAXB];
static int8_t g_blocked[MAXB];
static int32_t g_bias[256], g_mult[256], g_shift[256];
static uint8_t g_chan[12 * 256];

static void random_requant(int32_t channels)
{
    int32_t c;
    for (c = 0; c < channels; c++) {
        g_bias[c] = rnd_range(-3000, 3000);
        g_mult[c] = rnd_range(1 << 30, INT32_MAX);
        g_shift[c] = rnd_range(-12, 1);
    }
}

/* blob formats 2 and 3: the even-position weights of plain [units][depth] stored w ^ 0x80
 * (FULLY_CONNECTED; 1x1 CONV_2D when eb_conv_biased) */
static void bias_filter(const int8_t *plain, int32_t units, int32_t depth, int8_t *biased)
{
    int32_t i;
    for (i = 0; i < units * depth; i++) {
        biased[i] = (int8_t)((i % depth) & 1 ? plain[i] : plain[i] ^ (int8_t)0x80);
    }
}

/* blob format 3: a 1x1 CONV_2D's filter (plain [oc][ic], in place) and bias' as the
 * converter stores them when eb_conv_biased(): even input channels w ^ 0x80, bias''
 * = bias' + 128 * sum(odd w) */
static void bias_conv_layer(const eb_conv_params *p, int8_t *filter, uint8_t *chan)
{
    const int32_t K = p->in.c;
    int32_t o, k;
    for (o = 0; o < p->out.c; o++) {
        int32_t odd = 0;
        for (k = 1; k < K; k += 2) {
            odd += filter[o * K + k];
        }
        put32(chan + 4 * o, get32(chan + 4 * o) + 128 * odd);
    }
    bias_filter(filter, p->out.c, K, filter);
}

static void test_conv_random(int trials, int depthwise)
{
    int t;
    for (t = 0; t < trials; t++) {
        eb_conv_params p;
        const int same = rnd_range(0, 1);
        int32_t k_count;
        memset(&p, 0, sizeof p);
        p.in.n = rnd_range(1, 2);
        p.in.h = rnd_range(1, 9);
        p.in.w = rnd_range(1, 9);
        p.in.c = rnd_range(1, depthwise ? 9 : 7);
        p.kh = rnd_range(1, 4);
        p.kw = rnd_range(1, 4);
        if (depthwise && rnd_range(0, 5) == 0) {   /* more taps than the tap list holds */
            p.kh = rnd_range(5, 7);
            p.kw = rnd_range(6, 7);
        }
        p.sh = rnd_range(1, 3);
        p.sw = rnd_range(1, 3);
        p.dh = rnd_range(0, 3) == 0 ? 2 : 1;
        p.dw = rnd_range(0, 3) == 0 ? 2 : 1;
        p.depth_mult = depthwise ? rnd_range(1, 2) : 1;
        if (!same && ((p.kh - 1) * p.dh + 1 > p.in.h || (p.kw - 1) * p.dw + 1 > p.in.w)) {
            t--;
            continue;
        }
        p.out.n = p.in.n;
        p.out.h = out_size(p.in.h, p.kh, p.sh, p.dh, same, &p.ph);
        p.out.w = out_size(p.in.w, p.kw, p.sw, p.dw, same, &p.pw);
        p.out.c = depthwise ? p.in.c * p.depth_mult : rnd_range(1, 9);
        p.in_offset = rnd_range(-127, 128);
        p.out_offset = rnd_range(-128, 127);
        p.act_min = rnd_range(0, 1) ? -128 : p.out_offset;
        p.act_max = rnd_range(0, 1) ? 127 : (p.act_min > 100 ? p.act_min : 100);
        k_count = depthwise ? p.kh * p.kw * p.out.c : p.out.c * p.kh * p.kw * p.in.c;
        rnd_fill(g_in, (size_t)(p.in.n * p.in.h * p.in.w * p.in.c));
        rnd_fill(g_filter, (size_t)k_count);
        random_requant(p.out.c);
        if (depthwise) {
            make_chan(g_chan, p.out.c, g_bias, g_mult, g_shift, g_filter, p.kh * p.kw, 1, p.out.c,
                      p.in_offset);
        } else {
            const int32_t K = p.kh * p.kw * p.in.c;
            make_chan(g_chan, p.out.c, g_bias, g_mult, g_shift, g_filter, K, K, 1, p.in_offset);
        }
        p.filter = g_filter;
        p.chan = g_chan;
        p.scratch = g_scratch;
        ref_conv(&p, g_in, g_bias, g_mult, g_shift, g_want, depthwise);
        memset(g_out, 0x5A, sizeof g_out);
        if (depthwise) {
            eb_depthwise_s8(&p, g_in, g_out);
        } else {
            if (eb_conv_biased(&p)) {
                bias_conv_layer(&p, g_filter, g_chan);
            }
            eb_block_filter(g_filter, p.out.c, p.kh * p.kw * p.in.c, g_blocked);
            p.filter = g_blocked;
            eb_conv_s8(&p, g_in, g_out);
        }
        CHECK_BYTES(g_out, g_want, (size_t)(p.out.n * p.out.h * p.out.w * p.out.c),
                    depthwise ? "random depthwise" : "random conv");
        /* nothing written past the output */
        CHECK_EQ(g_out[p.out.n * p.out.h * p.out.w * p.out.c], 0x5A);
    }
}

static void test_conv_hand(void)
{
    /* 3x3 input 1..9, 2x2 filter of ones, SAME, stride 1: padding 0 before,
     * 1 after; multiplier 1.0 (2^30, shift 1). */
    eb_conv_params p;
    static const int8_t want[9] = {12, 16, 9, 24, 28, 15, 15, 17, 9};
    static const int8_t want_zp[9] = {24, 28, 15, 36, 40, 21, 21, 23, 12};
    int32_t i;
    memset(&p, 0, sizeof p);
    p.in.n = p.out.n = 1;
    p.in.h = p.in.w = p.out.h = p.out.w = 3;
    p.in.c = p.out.c = 1;
    p.kh = p.kw = 2;
    p.sh = p.sw = p.dh = p.dw = 1;
    p.act_min = -128;
    p.act_max = 127;
    for (i = 0; i < 9; i++) {
        g_in[i] = (int8_t)(i + 1);
    }
    for (i = 0; i < 4; i++) {
        g_filter[i] = 1;
    }
    g_bias[0] = 0;
    g_mult[0] = 1 << 30;
    g_shift[0] = 1;
    make_chan(g_chan, 1, g_bias, g_mult, g_shift, g_filter, 4, 4, 1, 0);
    p.filter = g_filter;
    p.chan = g_chan;
    p.scratch = g_scratch;
    eb_conv_s8(&p, g_in, g_out);
    CHECK_BYTES(g_out, want, 9, "conv 2x2 SAME");
    /* input zero point -3 (offset 3): each valid tap adds 3, padded taps 0 */
    p.in_offset = 3;
    make_chan(g_chan, 1, g_bias, g_mult, g_shift, g_filter, 4, 4, 1, 3);
    eb_conv_s8(&p, g_in, g_out);
    CHECK_BYTES(g_out, want_zp, 9, "conv 2x2 SAME input offset");
    /* same as a depthwise convolution with one channel */
    p.depth_mult = 1;
    eb_depthwise_s8(&p, g_in, g_out);
    CHECK_BYTES(g_out, want_zp, 9, "depthwise 2x2 SAME input offset");
}

/* FULLY_CONNECTED channel arrays: bias', binary64 factor low and high words */
static void make_fc_chan(uint8_t *chan, int32_t units, int32_t depth, const int32_t *bias,
                         const double *factor, const int8_t *filter, int32_t in_offset)
{
    int32_t u, i;
    for (u = 0; u < units; u++) {
        int32_t sum = 0, odd = 0;
        for (i = 0; i < depth; i++) {
            sum += filter[u * depth + i];
            odd += (i & 1) ? filter[u * depth + i] : 0;
        }
        /* blob format 2: bias'' = bias' + 128 * sum(odd-position weights) */
        put32(chan + 4 * u, bias[u] + in_offset * sum + 128 * odd);
        put32(chan + 4 * (units + u), (int32_t)lo_word(factor[u]));
        put32(chan + 4 * (2 * units + u), (int32_t)hi_word(factor[u]));
    }
}

static void ref_fc(const eb_fc_params *p, const int8_t *in, const int32_t *bias,
                   const double *factor, int8_t *out)
{
    int32_t b, u, d;
    for (b = 0; b < p->batches; b++) {
        for (u = 0; u < p->units; u++) {
            int32_t acc = bias[u], v;
            for (d = 0; d < p->depth; d++) {
                acc += p->filter[u * p->depth + d] * (in[b * p->depth + d] + p->in_offset);
            }
            v = native_mul_round(acc, factor[u]) + p->out_offset;
            v = v < p->act_min ? p->act_min : (v > p->act_max ? p->act_max : v);
            out[b * p->units + u] = (int8_t)v;
        }
    }
}

static void test_block_filter(void)
{
    /* 5 rows of depth 6: one block of rows 0..3 (groups of 4 bytes, then the
     * 2 last bytes of each row), then row 4 plain */
    int8_t plain[30], blocked[30];
    static const int8_t want[30] = {0, 1, 2, 3, 6, 7, 8, 9, 12, 13, 14, 15, 18, 19, 20, 21,
                                    4, 5, 10, 11, 16, 17, 22, 23, 24, 25, 26, 27, 28, 29};
    int i;
    for (i = 0; i < 30; i++) {
        plain[i] = (int8_t)i;
    }
    eb_block_filter(plain, 5, 6, blocked);
    CHECK_BYTES(blocked, want, 30, "blocked filter layout");
}

static void test_fc(void)
{
    /* weights [[1,2,3],[-1,0,1]], bias [10,-5], x [1,2,3], input zero point -1:
     * acc = [30, -3]; * 0.5 -> [15, -2] (-1.5 rounds away from zero); + 5 */
    static const int8_t w[6] = {1, 2, 3, -1, 0, 1};
    static int8_t wb[6];
    static const int8_t x[3] = {1, 2, 3};
    static const int8_t want[2] = {20, 3};
    static double factor[256];
    eb_fc_params p;
    int t, u;
    memset(&p, 0, sizeof p);
    p.batches = 1;
    p.depth = 3;
    p.units = 2;
    p.in_offset = 1;
    p.out_offset = 5;
    p.act_min = -128;
    p.act_max = 127;
    g_bias[0] = 10;
    g_bias[1] = -5;
    factor[0] = factor[1] = 0.5;
    make_fc_chan(g_chan, 2, 3, g_bias, factor, w, 1);
    bias_filter(w, 2, 3, wb);
    p.filter = wb;
    p.chan = g_chan;
    eb_fc_s8(&p, x, g_out);
    CHECK_BYTES(g_out, want, 2, "fully connected");

    /* random shapes against the naive reference */
    for (t = 0; t < 60; t++) {
        p.batches = rnd_range(1, 3);
        p.depth = rnd_range(1, 70);
        p.units = rnd_range(1, 11);
        p.in_offset = rnd_range(-127, 128);
        p.out_offset = rnd_range(-128, 127);
        p.act_min = rnd_range(0, 1) ? -128 : p.out_offset;
        p.act_max = rnd_range(0, 1) ? 127 : (p.act_min > 90 ? p.act_min : 90);
        rnd_fill(g_in, (size_t)(p.batches * p.depth));
        rnd_fill(g_filter, (size_t)(p.units * p.depth));
        for (u = 0; u < p.units; u++) {
            g_bias[u] = rnd_range(-3000, 3000);
            factor[u] = ldexp(1.0 + rnd_unit(), -rnd_range(8, 14));
        }
        p.filter = g_filter;
        make_fc_chan(g_chan, p.units, p.depth, g_bias, factor, g_filter, p.in_offset);
        p.chan = g_chan;
        ref_fc(&p, g_in, g_bias, factor, g_want);
        bias_filter(g_filter, p.units, p.depth, g_filter);
        eb_block_filter(g_filter, p.units, p.depth, g_blocked);
        p.filter = g_blocked;
        eb_fc_s8(&p, g_in, g_out);
        CHECK_BYTES(g_out, g_want, (size_t)(p.batches * p.units), "random fully connected");
    }
}

static void test_pool(void)
{
    eb_pool_params p;
    static const int8_t in1[4] = {1, 2, 3, 4};
    static const int8_t in2[4] = {-1, -2, -3, -4};
    static const int8_t in3[9] = {1, 2, 2, 0, 0, 0, 0, 0, 0};
    memset(&p, 0, sizeof p);
    p.in.n = p.out.n = 1;
    p.in.h = p.in.w = 2;
    p.in.c = p.out.c = 1;
    p.out.h = p.out.w = 1;
    p.kh = p.kw = p.sh = p.sw = 2;
    p.act_min = -128;
    p.act_max = 127;
    eb_avgpool_s8(&p, in1, g_out);
    CHECK_EQ(g_out[0], 3);    /* 10/4 = 2.5 -> 3 */
    eb_avgpool_s8(&p, in2, g_out);
    CHECK_EQ(g_out[0], -3);   /* -2.5 -> -3 */
    eb_maxpool_s8(&p, in2, g_out);
    CHECK_EQ(g_out[0], -1);
    p.act_min = 0;
    eb_maxpool_s8(&p, in2, g_out);
    CHECK_EQ(g_out[0], 0);    /* ReLU */
    p.act_min = -128;
    p.act_max = 2;
    eb_maxpool_s8(&p, in1, g_out);
    CHECK_EQ(g_out[0], 2);
    /* 3x3 input, 2x2 window, stride 2, SAME (padding 0 before, 1 after): the
     * first window averages {1,2,0,0} = 0.75 -> 1, the second {2,0} = 1, the
     * corner {0} = 0 */
    p.in.h = p.in.w = 3;
    p.out.h = p.out.w = 2;
    p.act_max = 127;
    eb_avgpool_s8(&p, in3, g_out);
    CHECK_EQ(g_out[0], 1);
    CHECK_EQ(g_out[1], 1);
    CHECK_EQ(g_out[3], 0);
    /* padding before: 1 row and column; the first window sees only in3[0] */
    p.ph = p.pw = 1;
    eb_avgpool_s8(&p, in3, g_out);
    CHECK_EQ(g_out[0], 1);
    CHECK_EQ(g_out[1], 2);    /* {2,2} */
    /* windows clipped to the input: the divisor is the count of valid taps */
    {
        static const int8_t in4[4] = {1, 2, 2, 0};
        p.in.h = p.in.w = 2;
        p.out.h = p.out.w = 1;
        p.kh = p.kw = 3;
        p.ph = p.pw = 0;
        eb_avgpool_s8(&p, in4, g_out);
        CHECK_EQ(g_out[0], 1);   /* 5/4 = 1.25 -> 1 (window 3x3 clipped to 2x2) */
        p.ph = p.pw = 1;
        p.kh = p.kw = 2;
        p.sh = p.sw = 1;
        p.out.h = p.out.w = 2;
        eb_avgpool_s8(&p, in4, g_out);
        CHECK_EQ(g_out[0], 1);   /* {1} */
        CHECK_EQ(g_out[3], 1);   /* {1,2,2,0} = 1.25 -> 1 */
        CHECK_EQ(g_out[1], 2);   /* {1,2} = 1.5 -> 2 */
    }
}

static void test_add(void)
{
    /* equal input and output scales s: input multipliers 0.5 (2^30, 0), output
     * 2s / (2^20 s) = 2^-19 (2^30, -18): out = a + b (+ offsets). */
    eb_add_params p;
    static const int8_t a[4] = {10, -10, 100, -100};
    static const int8_t b[4] = {20, -21, 100, -100};
    static const int8_t want[4] = {30, -31, 127, -128};
    static const int8_t bc[2] = {1, -1};
    static const int8_t want_bc[4] = {11, -11, 101, -101};
    memset(&p, 0, sizeof p);
    p.in1.n = p.in1.h = p.in1.w = 1;
    p.in1.c = 4;
    p.in2 = p.out = p.in1;
    p.left_shift = 20;
    p.in1_mult = p.in2_mult = p.out_mult = 1 << 30;
    p.in1_shift = p.in2_shift = 0;
    p.out_shift = -18;
    p.act_min = -128;
    p.act_max = 127;
    eb_add_s8(&p, a, b, g_out);
    CHECK_BYTES(g_out, want, 4, "add");
    /* offsets: input zero points 5 and -5 (offsets -5, 5), output zero point 3 */
    {
        static const int8_t want_off[4] = {33, -28, 127, -128};
        p.in1_offset = -5;
        p.in2_offset = 5;
        p.out_offset = 3;
        eb_add_s8(&p, a, b, g_out);
        CHECK_BYTES(g_out, want_off, 4, "add with offsets");
        p.in1_offset = p.in2_offset = p.out_offset = 0;
    }
    /* broadcast [2,2] + [1,2] (in2 repeats over the rows) */
    p.in1.w = 2;
    p.in1.c = 2;
    p.out = p.in1;
    p.in2.n = p.in2.h = p.in2.w = 1;
    p.in2.c = 2;
    eb_add_s8(&p, a, bc, g_out);
    CHECK_BYTES(g_out, want_bc, 4, "add broadcast");
    /* ReLU6-style clamp */
    p.act_min = 0;
    p.act_max = 50;
    eb_add_s8(&p, a, bc, g_out);
    CHECK_EQ(g_out[0], 11);
    CHECK_EQ(g_out[1], 0);
    CHECK_EQ(g_out[2], 50);
}

static void test_softmax(void)
{
    /* input scale 0.1 (as a double), beta 1: multiplier/shift of beta*scale*2^26 and
     * diff_min from the reference's PreprocessSoftmaxScaling and
     * CalculateInputRadius; expected bytes from the reference definition. */
    eb_softmax_params p;
    static const int8_t eq[4] = {0, 0, 0, 0};
    static const int8_t dom[3] = {100, -100, 0};
    static const int8_t mix[5] = {10, 20, 30, 40, -128};
    static const int8_t want_eq[4] = {-64, -64, -64, -64};
    static const int8_t want_dom[3] = {127, -128, -128};
    static const int8_t want_mix[5] = {-116, -100, -63, 24, -128};
    p.rows = 1;
    p.depth = 4;
    p.in_mult = 1717986918;   /* 0.1 * 2^26 = 0.8 * 2^23 */
    p.in_left_shift = 23;
    /* CalculateInputRadius(5, 23) = floor(31 * 2^26 / 2^23) = 248 */
    p.diff_min = -248;
    eb_softmax_s8(&p, eq, g_out);
    CHECK_BYTES(g_out, want_eq, 4, "softmax equal inputs");
    p.depth = 3;
    eb_softmax_s8(&p, dom, g_out);
    CHECK_BYTES(g_out, want_dom, 3, "softmax dominant input");
    /* scale 0.05, beta 1.7: 0.085 * 2^26 -> (1460288881, 23) */
    p.depth = 5;
    p.in_mult = 1460288881;
    p.in_left_shift = 23;
    p.diff_min = -248;
    eb_softmax_s8(&p, mix, g_out);
    CHECK_BYTES(g_out, want_mix, 5, "softmax beta 1.7");
    /* two rows at once */
    {
        int8_t two[8];
        memcpy(two, eq, 4);
        memcpy(two + 4, eq, 4);
        p.rows = 2;
        p.depth = 4;
        p.in_mult = 1717986918;
        eb_softmax_s8(&p, two, g_out);
        CHECK_BYTES(g_out, want_eq, 4, "softmax row 0");
        CHECK_BYTES(g_out + 4, want_eq, 4, "softmax row 1");
    }
}

int main(void)
{
#ifdef EB_TEST_PORT
    eb_port_init();
    printf("test_kernels on %s\n", eb_port_name());
#endif
    test_fixed_point();
    test_mul_round_f64();
    test_conv_hand();
    test_conv_random(300, 0);
    test_conv_random(300, 1);
    test_block_filter();
    test_fc();
    test_pool();
    test_add();
    test_softmax();
    printf("%d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
