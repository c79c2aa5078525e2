/*
 * eb_op_concatenation.c - CONCATENATION of up to EB_CONCAT_MAX inputs along
 * the axis p0 (0 N .. 3 C): in[0..2], then the tensor indices in p1..p9.
 */
#include "eb_ops.h"

void eb_concat_s8(int32_t n, const int8_t *const *in, const int32_t *inner, int32_t outer,
                  int8_t *out)
{
    int32_t o, i;
    for (o = 0; o < outer; o++) {
        for (i = 0; i < n; i++) {
            memmove(out, in[i] + (size_t)o * inner[i], (size_t)inner[i]);
            out += inner[i];
        }
    }
}

/* Input i: in[0..2], then p[1..9] (up to 12 inputs). */
static uint32_t concat_input(const eb_layer *L, uint32_t i)
{
    return i < 3u ? L->in[i] : (uint32_t)L->p[1u + i - 3u];
}

eb_status eb_concatenation_check(const eb_view *v, const eb_layer *L, uint32_t k, eb_msg *msg)
{
    const uint32_t n = L->n_in;
    const int32_t axis = L->p[0];
    int64_t along = 0;
    uint32_t i;
    int d;
    if (n < 1 || n > EB_CONCAT_MAX || axis < 0 || axis > 3) {
        return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent concatenation", k);
    }
    for (i = 0; i < n; i++) {
        eb_dims di;
        if (!is_int8(v, concat_input(L, i))) {
            return eb_layer_fail(msg, EB_ERR_INVALID, "bad concatenation input", k);
        }
        dims_of(tensor_rec(v, concat_input(L, i)), &di);
        for (d = 0; d < 4; d++) {
            if (d != axis && eb_dim_at(&di, d) != eb_dim_at(&L->dout, d)) {
                return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent concatenation", k);
            }
        }
        along += eb_dim_at(&di, axis);
    }
    if (along != eb_dim_at(&L->dout, axis)) {
        return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent concatenation", k);
    }
    return EB_OK;
}

void eb_concatenation_run(eb_model *m, const eb_view *v, const eb_layer *L)
{
    const int8_t *ins[EB_CONCAT_MAX];
    int32_t inner[EB_CONCAT_MAX], outer = 1;
    uint32_t i;
    int d;
    for (d = 0; d < L->p[0]; d++) {
        outer *= eb_dim_at(&L->dout, d);
    }
    for (i = 0; i < L->n_in; i++) {
        eb_dims di;
        dims_of(tensor_rec(v, concat_input(L, i)), &di);
        ins[i] = tensor_data(m, v, concat_input(L, i));
        inner[i] = (int32_t)(dims_count(&di) / (uint32_t)outer);
    }
    eb_concat_s8((int32_t)L->n_in, ins, inner, outer, tensor_data(m, v, L->out));
}
