/*
 * eb_kernels_elem.c - element-wise int8 operators of engine version 2: SUB,
 * MUL, MAXIMUM, MINIMUM (with broadcasting), requantization (QUANTIZE, RELU,
 * RELU6, RELU_N1_TO_1, LEAKY_RELU) and MEAN.
 *
 * Same integers as LiteRT's reference kernels (BUILTIN_REF):
 *  - Sub: both inputs offset and shifted left by left_shift (20), each
 *    rescaled by MultiplyByQuantizedMultiplierSmallerThanOneExp, the second
 *    subtracted from the first, rescaled to the output (the ADD scheme).
 *  - Mul: (x1 + off1) * (x2 + off2), MultiplyByQuantizedMultiplier with the
 *    multiplier of s1*s2/s_out, plus the output offset, clamped.
 *  - Maximum/Minimum: max/min of the raw int8 values.
 *  - Requantize/ReluX/QuantizeLeakyRelu: out_zp + MBQM(x - in_zp), clamped.
 *  - LOGISTIC/TANH/HARD_SWISH: a 256-entry table built on the host.
 *  - Mean: see eb_mean_params in eb_kernels.h (reference_ops::
 *    LiteRT's integer QuantizedMeanOrSum, the 1/count folded into the
 *    multiplier on the host).
 */
#include "eb_kernels.h"

static inline int32_t eb_clamp(int32_t v, int32_t lo, int32_t hi)
{
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
}

/* int32 addition modulo 2^32: the reference's result wherever its sum is defined, and
 * defined (UBSan-clean) for any blob */
static inline int32_t eb_wadd(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

static inline int8_t eb_bin1(int kind, const eb_add_params *p, int32_t a, int32_t b)
{
    int32_t v;
    switch (kind) {
    case EB_BIN_ADD:
    case EB_BIN_SUB: {
        const int32_t sa = eb_mbqm((int32_t)((uint32_t)(a + p->in1_offset) << p->left_shift),
                                   p->in1_mult, p->in1_shift);
        const int32_t sb = eb_mbqm((int32_t)((uint32_t)(b + p->in2_offset) << p->left_shift),
                                   p->in2_mult, p->in2_shift);
        const int32_t s = eb_wadd(sa, kind == EB_BIN_SUB ? (int32_t)(0u - (uint32_t)sb) : sb);
        v = eb_wadd(eb_mbqm(s, p->out_mult, p->out_shift), p->out_offset);
        break;
    }
    case EB_BIN_MUL:
        v = eb_wadd(eb_mbqm((a + p->in1_offset) * (b + p->in2_offset), p->out_mult, p->out_shift),
                    p->out_offset);
        break;
    case EB_BIN_MAX:
        return (int8_t)(a > b ? a : b);
    default:
        return (int8_t)(a < b ? a : b);
    }
    return (int8_t)eb_clamp(v, p->act_min, p->act_max);
}

void eb_binary_s8(int kind, const eb_add_params *params, const int8_t *in1, const int8_t *in2,
                  int8_t *out)
{
    const eb_add_params q = *params;   /* local: out stores may alias *params */
    const eb_add_params *const p = &q;
    const eb_dims *o = &p->out, *d1 = &p->in1, *d2 = &p->in2;
    const size_t s1c = d1->c == 1 ? 0 : 1, s2c = d2->c == 1 ? 0 : 1;
    const size_t s1w = d1->w == 1 ? 0 : (size_t)d1->c, s2w = d2->w == 1 ? 0 : (size_t)d2->c;
    const size_t s1h = d1->h == 1 ? 0 : (size_t)d1->w * d1->c;
    const size_t s2h = d2->h == 1 ? 0 : (size_t)d2->w * d2->c;
    const size_t s1n = d1->n == 1 ? 0 : (size_t)d1->h * d1->w * d1->c;
    const size_t s2n = d2->n == 1 ? 0 : (size_t)d2->h * d2->w * d2->c;
    int32_t n, y, x, c;
    for (n = 0; n < o->n; n++) {
        for (y = 0; y < o->h; y++) {
            for (x = 0; x < o->w; x++) {
                const int8_t *a = in1 + n * s1n + y * s1h + x * s1w;
                const int8_t *b = in2 + n * s2n + y * s2h + x * s2w;
                for (c = 0; c < o->c; c++) {
                    *out++ = eb_bin1(kind, p, a[c * s1c], b[c * s2c]);
                }
            }
        }
    }
}

void eb_requant_s8(const eb_requant_params *params, const int8_t *in, int8_t *out)
{
    const eb_requant_params q = *params;
    int32_t i;
    for (i = 0; i < q.count; i++) {
        const int32_t x = in[i] - q.in_zp;
        const int32_t v = x >= 0 ? eb_mbqm(x, q.mult, q.shift) : eb_mbqm(x, q.mult_neg, q.shift_neg);
        out[i] = (int8_t)eb_clamp(eb_wadd(v, q.out_zp), q.act_min, q.act_max);
    }
}

void eb_lut_s8(const int8_t *lut, int32_t count, const int8_t *in, int8_t *out)
{
    int32_t i;
    for (i = 0; i < count; i++) {
        out[i] = lut[in[i] + 128];
    }
}

void eb_mean_s8(const eb_mean_params *params, const int8_t *in, int8_t *out)
{
    const eb_mean_params q = *params;
    const int32_t dims[4] = {q.in.n, q.in.h, q.in.w, q.in.c};
    int32_t odims[4], rdims[4], ostride[4], rstride[4], i;
    int32_t o[4], r[4];
    int32_t stride = 1;
    for (i = 3; i >= 0; i--) {
        const int red = (q.axis_mask >> i) & 1;
        odims[i] = red ? 1 : dims[i];
        rdims[i] = red ? dims[i] : 1;
        ostride[i] = red ? 0 : stride;
        rstride[i] = red ? stride : 0;
        stride *= dims[i];
    }
    for (o[0] = 0; o[0] < odims[0]; o[0]++) {
        for (o[1] = 0; o[1] < odims[1]; o[1]++) {
            for (o[2] = 0; o[2] < odims[2]; o[2]++) {
                for (o[3] = 0; o[3] < odims[3]; o[3]++) {
                    const int8_t *base = in + o[0] * ostride[0] + o[1] * ostride[1] +
                                         o[2] * ostride[2] + o[3] * ostride[3];
                    int32_t sum = 0;   /* wraps modulo 2^32, as the reference's int32 sum */
                    for (r[0] = 0; r[0] < rdims[0]; r[0]++) {
                        for (r[1] = 0; r[1] < rdims[1]; r[1]++) {
                            for (r[2] = 0; r[2] < rdims[2]; r[2]++) {
                                const int8_t *row = base + r[0] * rstride[0] + r[1] * rstride[1] +
                                                    r[2] * rstride[2];
                                for (r[3] = 0; r[3] < rdims[3]; r[3]++) {
                                    sum = (int32_t)((uint32_t)sum + (uint32_t)(row[r[3] * rstride[3]] - q.in_zp));
                                }
                            }
                        }
                    }
                    *out++ = (int8_t)eb_clamp(eb_wadd(eb_mbqm(sum, q.mult, q.shift), q.out_zp), -128, 127);
                }
            }
        }
    }
}
