/*
 * eb_op_requantize.c - QUANTIZE (int8 -> int8), RELU, RELU6, RELU_N1_TO_1,
 * LEAKY_RELU: out = clamp(out_zp + MultiplyByQuantizedMultiplier(x - in_zp)),
 * one multiplier each side of the input zero point (LiteRT's Requantize,
 * ReluX, QuantizeLeakyRelu).
 */
#include "eb_ops.h"

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

eb_status eb_requantize_check(const eb_view *v, const eb_layer *L, uint32_t k, eb_msg *msg)
{
    (void)v;
    if (dims_count(&L->din) != dims_count(&L->dout) || !act_ok(L) || !shift_ok(L->p[3]) ||
        !shift_ok(L->p[5]) || !off_ok(L->p[0]) || !off_ok(L->p[1])) {
        return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent requantization", k);
    }
    return EB_OK;
}

void eb_requantize_run(eb_model *m, const eb_view *v, const eb_layer *L)
{
    eb_requant_params p;
    p.count = (int32_t)dims_count(&L->dout);
    p.in_zp = L->p[0];
    p.out_zp = L->p[1];
    p.mult = L->p[2];
    p.shift = L->p[3];
    p.mult_neg = L->p[4];
    p.shift_neg = L->p[5];
    p.act_min = L->act_min;
    p.act_max = L->act_max;
    eb_requant_s8(&p, tensor_data(m, v, L->in[0]), tensor_data(m, v, L->out));
}
