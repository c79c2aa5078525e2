/*
 * eb_op_pad.c - PAD, PADV2: the input placed at p0..p3 (before N, H, W, C)
 * inside the output, every other byte p4. Copies use memmove: the planner never
 * overlaps an operator's input and output, but a damaged blob may, and that must
 * stay defined behaviour.
 */
#include "eb_ops.h"

void eb_pad_s8(const eb_pad_params *params, const int8_t *in, int8_t *out)
{
    const eb_pad_params q = *params;
    const size_t total = (size_t)q.out.n * q.out.h * q.out.w * q.out.c;
    const size_t row = (size_t)q.in.c;
    int32_t n, y, x;
    memset(out, (int8_t)q.value, total);
    for (n = 0; n < q.in.n; n++) {
        for (y = 0; y < q.in.h; y++) {
            for (x = 0; x < q.in.w; x++) {
                const size_t dst = ((((size_t)(n + q.before[0]) * q.out.h + (size_t)(y + q.before[1])) *
                                     q.out.w + (size_t)(x + q.before[2])) * q.out.c) +
                                   (size_t)q.before[3];
                memmove(out + dst, in, row);
                in += row;
            }
        }
    }
}

eb_status eb_pad_check(const eb_view *v, const eb_layer *L, uint32_t k, eb_msg *msg)
{
    int d;
    (void)v;
    for (d = 0; d < 4; d++) {
        const int32_t b = L->p[d];
        if (b < 0 || (int64_t)b + eb_dim_at(&L->din, d) > eb_dim_at(&L->dout, d)) {
            return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent pad", k);
        }
    }
    if (L->p[4] < -128 || L->p[4] > 127) {
        return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent pad", k);
    }
    return EB_OK;
}

void eb_pad_run(eb_model *m, const eb_view *v, const eb_layer *L)
{
    eb_pad_params p;
    int d;
    p.in = L->din;
    p.out = L->dout;
    for (d = 0; d < 4; d++) {
        p.before[d] = L->p[d];
    }
    p.value = L->p[4];
    eb_pad_s8(&p, tensor_data(m, v, L->in[0]), tensor_data(m, v, L->out));
}
