/*
 * eb_op_lut.c - LOGISTIC, TANH, HARD_SWISH: out = table[x + 128], the 256-entry
 * table computed on the host exactly as LiteRT's reference computes the
 * operator for each int8 input (edgebench/mcu/ops/lut.py).
 */
#include "eb_ops.h"

void eb_lut_s8(const int8_t *lut, int32_t count, const int8_t *in, int8_t *out)
{
    int32_t i;
    for (i = 0; i < count; i++) {
        out[i] = lut[in[i] + 128];
    }
}

eb_status eb_lut_check(const eb_view *v, const eb_layer *L, uint32_t k, eb_msg *msg)
{
    if (dims_count(&L->din) != dims_count(&L->dout) || !in_range(L->chan_off, 256u, v->total)) {
        return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent table lookup", k);
    }
    return EB_OK;
}

void eb_lut_run(eb_model *m, const eb_view *v, const eb_layer *L)
{
    eb_lut_s8((const int8_t *)(uintptr_t)(v->blob + L->chan_off), (int32_t)dims_count(&L->dout),
              tensor_data(m, v, L->in[0]), tensor_data(m, v, L->out));
}
