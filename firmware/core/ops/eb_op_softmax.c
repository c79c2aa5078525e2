/*
 * eb_op_softmax.c - SOFTMAX (int8 -> int8, BUILTIN_REF) and the gemmlowp
 * fixed-point functions it needs: input differences to the row maximum scaled
 * to Q5.26, exp() in gemmlowp fixed point, sum in Q12.19, reciprocal by
 * Newton-Raphson, output scale 1/256 and zero point -128.
 */
#include "eb_ops.h"

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

eb_status eb_softmax_check(const eb_view *v, const eb_layer *L, uint32_t k, eb_msg *msg)
{
    (void)v;
    if (dims_count(&L->din) != dims_count(&L->dout) || L->din.c != L->dout.c ||
        L->p[1] < 0 || L->p[1] > 31 || L->p[2] > 0) {
        return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent softmax", k);
    }
    return EB_OK;
}

void eb_softmax_run(eb_model *m, const eb_view *v, const eb_layer *L)
{
    eb_softmax_params p;
    p.depth = L->dout.c;
    p.rows = (int32_t)(dims_count(&L->dout) / (uint32_t)p.depth);
    p.in_mult = L->p[0];
    p.in_left_shift = L->p[1];
    p.diff_min = L->p[2];
    eb_softmax_s8(&p, tensor_data(m, v, L->in[0]), tensor_data(m, v, L->out));
}
