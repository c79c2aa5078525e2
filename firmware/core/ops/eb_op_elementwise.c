/*
 * eb_op_elementwise.c - ADD, SUB, MUL, MAXIMUM, MINIMUM (int8, broadcasting a
 * dimension of 1).
 *
 * Same integers as LiteRT's reference kernels (BUILTIN_REF):
 *  - Add: both inputs offset, shifted left by left_shift (20 for int8),
 *    rescaled to a common scale, summed and rescaled to the output.
 *  - Sub: the Add scheme, the scaled second input subtracted from the first.
 *  - Mul: (x1 + off1) * (x2 + off2), MultiplyByQuantizedMultiplier with the
 *    multiplier of s1*s2/s_out, plus the output offset.
 *  - Maximum/Minimum: max/min of the raw int8 values.
 * ADD, SUB and MUL clamp to the fused activation's range after requantisation.
 */
#include "eb_ops.h"

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

/* Tensors of at least this many elements add through eb_add_lut. */
#define EB_ADD_LUT_MIN 1024u

/* eb_add1 over count elements through two tables: each input's rescaled value
 * (offset, left shift, its multiplier) depends on its int8 value only, so the
 * 256 values of each are computed once (512 eb_mbqm instead of 2 per element;
 * 2 KiB of stack) and every element costs two loads, one add and the output
 * requantisation: the same integers as eb_add1. */
static EB_NOINLINE void eb_add_lut(const eb_add_params *p, const int8_t *in1, const int8_t *in2,
                                   int8_t *out, size_t count)
{
    int32_t ta[256], tb[256];
    const int32_t om = p->out_mult, os = p->out_shift, oo = p->out_offset;
    const int32_t lo = p->act_min, hi = p->act_max;
    size_t i;
    int32_t a;
    for (a = -128; a < 128; a++) {
        ta[a & 255] = eb_mbqm((int32_t)((uint32_t)(a + p->in1_offset) << p->left_shift), p->in1_mult,
                              p->in1_shift);
        tb[a & 255] = eb_mbqm((int32_t)((uint32_t)(a + p->in2_offset) << p->left_shift), p->in2_mult,
                              p->in2_shift);
    }
    if (om > 0 && os <= -2 && os >= -31) {
        /* eb_mbqm(s, om, os) as one 64-bit multiply-add and a shift of its high word, the exact
         * rewrite of kernels/dsp/eb_dsp.h (eb_rq_mul; proof there, checked by
         * tests/test_firmware_dsp.py::test_requantisation_rewrite_is_exact) */
        const int32_t chi = (int32_t)(1u << (uint32_t)(-os - 2)), sh = -os - 1;
        for (i = 0; i < count; i++) {
            const int32_t s = (int32_t)((uint32_t)ta[(uint8_t)in1[i]] + (uint32_t)tb[(uint8_t)in2[i]]);
            const int32_t neg = s >> 31;
            const uint64_t c = ((uint64_t)(uint32_t)(chi + neg) << 32) |
                               (((uint32_t)neg << 31) | 0x40000000u);
            const int64_t prod = (int64_t)((uint64_t)((int64_t)s * om) + c);
            int32_t v = ((int32_t)(prod >> 32) >> sh) + oo;
            v = v < lo ? lo : v;
            v = v > hi ? hi : v;
            out[i] = (int8_t)v;
        }
        return;
    }
    for (i = 0; i < count; i++) {
        const uint32_t s = (uint32_t)ta[(uint8_t)in1[i]] + (uint32_t)tb[(uint8_t)in2[i]];
        int32_t v = (int32_t)((uint32_t)eb_mbqm((int32_t)s, om, os) + (uint32_t)oo);
        v = v < lo ? lo : v;
        v = v > hi ? hi : v;
        out[i] = (int8_t)v;
    }
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
        if (count >= EB_ADD_LUT_MIN) {
            eb_add_lut(p, in1, in2, out, count);
            return;
        }
        for (i = 0; i < count; i++) {
            out[i] = eb_add1(p, in1[i], in2[i]);
        }
        return;
    }
    eb_binary_s8(EB_BIN_ADD, p, in1, in2, out);   /* broadcast: a dimension of 1 repeats */
}

eb_status eb_elementwise_check(const eb_view *v, const eb_layer *L, uint32_t k, eb_msg *msg)
{
    /* add.cc / sub.cc Prepare: multipliers < 1 */
    const int smaller_than_one = L->op == EB_OP_ADD || L->op == EB_OP_SUB;
    if (!is_int8(v, L->in[1]) || !act_ok(L) || !eb_bcast_ok(&L->din, &L->dout) ||
        !eb_bcast_ok(&L->dfilt, &L->dout) || L->p[3] < 0 || L->p[3] > 20 ||
        !off_ok(L->p[0]) || !off_ok(L->p[1]) || !off_ok(L->p[2]) ||
        (smaller_than_one && (L->p[5] > 0 || L->p[7] > 0)) || (L->op == EB_OP_ADD && L->p[9] > 0) ||
        !shift_ok(L->p[5]) || !shift_ok(L->p[7]) || !shift_ok(L->p[9])) {
        return eb_layer_fail(msg, EB_ERR_INVALID,
                             L->op == EB_OP_ADD ? "inconsistent add" : "inconsistent element-wise operator", k);
    }
    return EB_OK;
}

void eb_elementwise_run(eb_model *m, const eb_view *v, const eb_layer *L)
{
    eb_add_params p;
    const int8_t *in1 = tensor_data(m, v, L->in[0]), *in2 = tensor_data(m, v, L->in[1]);
    int8_t *out = tensor_data(m, v, L->out);
    eb_binary_params_of(L, &p);
    switch (L->op) {
    case EB_OP_ADD:
        eb_add_s8(&p, in1, in2, out);
        break;
    case EB_OP_SUB:
        eb_binary_s8(EB_BIN_SUB, &p, in1, in2, out);
        break;
    case EB_OP_MUL:
        eb_binary_s8(EB_BIN_MUL, &p, in1, in2, out);
        break;
    case EB_OP_MAXIMUM:
        eb_binary_s8(EB_BIN_MAX, &p, in1, in2, out);
        break;
    default:
        eb_binary_s8(EB_BIN_MIN, &p, in1, in2, out);
        break;
    }
}
