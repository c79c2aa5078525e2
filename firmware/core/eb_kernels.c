/*
 * eb_kernels.c - AVERAGE_POOL_2D, MAX_POOL_2D, ADD, SOFTMAX (int8) and the
 * gemmlowp fixed-point functions SOFTMAX needs.
 *
 * Same integers as TFLite's reference kernels:
 *  - AveragePool: sum over the window taps inside the input, divided by their
 *    count, rounding half away from zero; then the activation clamp.
 *  - MaxPool: max over the taps inside the input; then the clamp.
 *  - Add: both inputs offset, shifted left by left_shift (20 for int8),
 *    rescaled to a common scale, summed and rescaled to the output.
 *  - Softmax (int8 -> int8, BUILTIN_REF): input differences to the row maximum
 *    scaled to Q5.26, exp() in gemmlowp fixed point, sum in Q12.19, reciprocal
 *    by Newton-Raphson, output scale 1/256 and zero point -128.
 */
#include "eb_kernels.h"

/* ---- gemmlowp fixed point ---------------------------------------------- */

/* exp(x) for x in [-1/4, 0), Q0.31 in and out: Taylor series around -1/8. */
static int32_t eb_exp_quarter(int32_t a)
{
    const int32_t exp_minus_1_8 = 1895147668;   /* exp(-1/8) in Q0.31 */
    const int32_t one_third = 715827883;        /* 1/3 in Q0.31 */
    const int32_t x = a + (1 << 28);            /* a + 1/8 */
    const int32_t x2 = eb_srdhm(x, x);
    const int32_t x3 = eb_srdhm(x2, x);
    const int32_t x4 = eb_srdhm(x2, x2);
    const int32_t x4_over_4 = eb_srmbypot(x4, -2);
    const int32_t poly = eb_srmbypot(eb_srdhm(x4_over_4 + x3, one_third) + x2, -1);
    return exp_minus_1_8 + eb_srdhm(exp_minus_1_8, x + poly);
}

int32_t eb_exp_on_negative_values(int32_t a)
{
    /* Q5.26 input: 1/4 is 1 << 24. Split a into a remainder in [-1/4, 0)
     * and multiples of 1/4, 1/2, 1, 2, 4, 8, 16 (a barrel of exp(-2^k)). */
    static const int32_t barrel[7] = {
        1672461947,  /* exp(-1/4) */
        1302514674,  /* exp(-1/2) */
        790015084,   /* exp(-1) */
        290630308,   /* exp(-2) */
        39332535,    /* exp(-4) */
        720401,      /* exp(-8) */
        242          /* exp(-16) */
    };
    const int32_t quarter = 1 << 24;
    const int32_t a_mod = (a & (quarter - 1)) - quarter;
    const int32_t remainder = a_mod - a;
    int32_t result = eb_exp_quarter(eb_srmbypot(a_mod, 5));   /* Q5.26 -> Q0.31 */
    int32_t k;
    for (k = 0; k < 7; k++) {
        if (remainder & (1 << (24 + k))) {
            result = eb_srdhm(result, barrel[k]);
        }
    }
    /* 5 integer bits: no clamp below -32 is needed (gemmlowp adds one only
     * for more integer bits). */
    if (a == 0) {
        result = INT32_MAX;
    }
    return result;
}

int32_t eb_one_over_one_plus_x(int32_t a)
{
    /* half_denominator = (a + 1) / 2 in Q0.31, rounded (RoundingHalfSum). */
    const int64_t sum = (int64_t)a + INT32_MAX;
    const int32_t half_den = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
    const int32_t c48_17 = 1515870810;      /* 48/17 in Q2.29 */
    const int32_t cm32_17 = -1010580540;    /* -32/17 in Q2.29 */
    const int32_t one_q2 = 1 << 29;
    int32_t x = c48_17 + eb_srdhm(half_den, cm32_17);
    int i;
    for (i = 0; i < 3; i++) {
        const int32_t hdx = eb_srdhm(half_den, x);
        const int32_t one_minus = one_q2 - hdx;
        x = x + eb_srmbypot(eb_srdhm(x, one_minus), 2);
    }
    /* x / 2 as Q1.30 -> Q0.31 */
    return eb_srmbypot(x, 1);
}

static int32_t eb_clz32(uint32_t v)
{
    int32_t n = 0;
    if (v == 0) {
        return 32;
    }
    while (!(v & 0x80000000u)) {
        v <<= 1;
        n++;
    }
    return n;
}

void eb_softmax_s8(const eb_softmax_params *p, const int8_t *in, int8_t *out)
{
    const int32_t D = p->depth;
    int32_t r, c;
    for (r = 0; r < p->rows; r++) {
        int32_t maxv = -128;
        int32_t sum = 0;   /* Q12.19 */
        int32_t headroom, bits_over_unit, scale, shift;
        for (c = 0; c < D; c++) {
            maxv = in[c] > maxv ? in[c] : maxv;
        }
        for (c = 0; c < D; c++) {
            const int32_t diff = in[c] - maxv;
            if (diff >= p->diff_min) {
                const int32_t scaled = eb_srdhm((int32_t)((uint32_t)diff << p->in_left_shift),
                                                p->in_mult);
                sum += eb_rdbypot(eb_exp_on_negative_values(scaled), 12);
            }
        }
        headroom = eb_clz32((uint32_t)sum);
        bits_over_unit = 12 - headroom;
        scale = eb_one_over_one_plus_x(
            (int32_t)(((uint32_t)sum << headroom) - ((uint32_t)1 << 31)));
        shift = bits_over_unit + 31 - 8;
        for (c = 0; c < D; c++) {
            const int32_t diff = in[c] - maxv;
            int32_t v = -128;
            if (diff >= p->diff_min) {
                const int32_t scaled = eb_srdhm((int32_t)((uint32_t)diff << p->in_left_shift),
                                                p->in_mult);
                const int32_t e = eb_exp_on_negative_values(scaled);
                v = eb_rdbypot(eb_srdhm(scale, e), shift) - 128;
                v = v > 127 ? 127 : (v < -128 ? -128 : v);
            }
            out[c] = (int8_t)v;
        }
        in += D;
        out += D;
    }
}

/* ---- pooling ------------------------------------------------------------ */

void eb_avgpool_s8(const eb_pool_params *params, const int8_t *in, int8_t *out)
{
    const eb_pool_params q = *params;   /* local: out stores may alias *params */
    const eb_pool_params *const p = &q;
    const int32_t H = p->in.h, W = p->in.w, C = p->in.c;
    int32_t b, oy, ox, c, y, x;
    for (b = 0; b < p->out.n; b++) {
        const int8_t *in_b = in + (size_t)b * H * W * C;
        for (oy = 0; oy < p->out.h; oy++) {
            const int32_t iy0 = oy * p->sh - p->ph;
            const int32_t y0 = iy0 < 0 ? 0 : iy0;
            const int32_t y1 = iy0 + p->kh > H ? H : iy0 + p->kh;
            for (ox = 0; ox < p->out.w; ox++) {
                const int32_t ix0 = ox * p->sw - p->pw;
                const int32_t x0 = ix0 < 0 ? 0 : ix0;
                const int32_t x1 = ix0 + p->kw > W ? W : ix0 + p->kw;
                const int32_t count = (y1 - y0) * (x1 - x0);
                for (c = 0; c < C; c++) {
                    int32_t acc = 0;
                    for (y = y0; y < y1; y++) {
                        const int8_t *row = in_b + ((size_t)y * W) * C + c;
                        for (x = x0; x < x1; x++) {
                            acc += row[(size_t)x * C];
                        }
                    }
                    if (count > 0) {
                        acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
                    }
                    acc = acc < p->act_min ? p->act_min : acc;
                    acc = acc > p->act_max ? p->act_max : acc;
                    *out++ = (int8_t)acc;
                }
            }
        }
    }
}

void eb_maxpool_s8(const eb_pool_params *params, const int8_t *in, int8_t *out)
{
    const eb_pool_params q = *params;   /* local: out stores may alias *params */
    const eb_pool_params *const p = &q;
    const int32_t H = p->in.h, W = p->in.w, C = p->in.c;
    int32_t b, oy, ox, c, y, x;
    for (b = 0; b < p->out.n; b++) {
        const int8_t *in_b = in + (size_t)b * H * W * C;
        for (oy = 0; oy < p->out.h; oy++) {
            const int32_t iy0 = oy * p->sh - p->ph;
            const int32_t y0 = iy0 < 0 ? 0 : iy0;
            const int32_t y1 = iy0 + p->kh > H ? H : iy0 + p->kh;
            for (ox = 0; ox < p->out.w; ox++) {
                const int32_t ix0 = ox * p->sw - p->pw;
                const int32_t x0 = ix0 < 0 ? 0 : ix0;
                const int32_t x1 = ix0 + p->kw > W ? W : ix0 + p->kw;
                for (c = 0; c < C; c++) {
                    int32_t m = -128;
                    for (y = y0; y < y1; y++) {
                        const int8_t *row = in_b + ((size_t)y * W) * C + c;
                        for (x = x0; x < x1; x++) {
                            const int32_t v = row[(size_t)x * C];
                            m = v > m ? v : m;
                        }
                    }
                    m = m < p->act_min ? p->act_min : m;
                    m = m > p->act_max ? p->act_max : m;
                    *out++ = (int8_t)m;
                }
            }
        }
    }
}

/* ---- add ---------------------------------------------------------------- */

static inline int8_t eb_add1(const eb_add_params *p, int32_t a, int32_t b)
{
    const int32_t sa = eb_mbqm((int32_t)((uint32_t)(a + p->in1_offset) << p->left_shift),
                               p->in1_mult, p->in1_shift);
    const int32_t sb = eb_mbqm((int32_t)((uint32_t)(b + p->in2_offset) << p->left_shift),
                               p->in2_mult, p->in2_shift);
    /* modulo-2^32 adds: the reference's result wherever its sums are defined, and
     * defined (UBSan-clean) for any blob */
    int32_t v = (int32_t)((uint32_t)eb_mbqm((int32_t)((uint32_t)sa + (uint32_t)sb), p->out_mult,
                                            p->out_shift) + (uint32_t)p->out_offset);
    v = v < p->act_min ? p->act_min : v;
    v = v > p->act_max ? p->act_max : v;
    return (int8_t)v;
}

static int eb_same_dims(const eb_dims *a, const eb_dims *b)
{
    return a->n == b->n && a->h == b->h && a->w == b->w && a->c == b->c;
}

void eb_add_s8(const eb_add_params *params, const int8_t *in1, const int8_t *in2, int8_t *out)
{
    /* a local copy: stores through int8_t *out may alias *params, which would
     * otherwise be reloaded for every element */
    const eb_add_params q = *params;
    const eb_add_params *const p = &q;
    const eb_dims *o = &p->out, *d1 = &p->in1, *d2 = &p->in2;
    if (eb_same_dims(d1, o) && eb_same_dims(d2, o)) {
        const size_t count = (size_t)o->n * o->h * o->w * o->c;
        size_t i;
        for (i = 0; i < count; i++) {
            out[i] = eb_add1(p, in1[i], in2[i]);
        }
        return;
    }
    eb_binary_s8(EB_BIN_ADD, p, in1, in2, out);   /* broadcast: a dimension of 1 repeats */
}
