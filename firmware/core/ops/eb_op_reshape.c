/*
 * eb_op_reshape.c - RESHAPE (and SQUEEZE / EXPAND_DIMS, which the host writes as
 * RESHAPE): a byte copy; the planner normally lets the output share the input's
 * bytes, and then there is nothing to do.
 */
#include "eb_ops.h"

eb_status eb_reshape_check(const eb_view *v, const eb_layer *L, uint32_t k, eb_msg *msg)
{
    (void)v;
    if (dims_count(&L->din) != dims_count(&L->dout)) {
        return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent reshape", k);
    }
    return EB_OK;
}

void eb_reshape_run(eb_model *m, const eb_view *v, const eb_layer *L)
{
    const int8_t *in = tensor_data(m, v, L->in[0]);
    int8_t *out = tensor_data(m, v, L->out);
    if ((const int8_t *)out != in) {
        memmove(out, in, dims_count(&L->dout));
    }
}
