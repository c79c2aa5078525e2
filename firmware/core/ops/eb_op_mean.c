/*
 * eb_op_mean.c - MEAN over the axes of p1's mask (LiteRT's integer
 * QuantizedMeanOrSum: the int32 sum of x - in_zp, the 1/count folded into the
 * multiplier on the host).
 */
#include "eb_ops.h"

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

eb_status eb_mean_check(const eb_view *v, const eb_layer *L, uint32_t k, eb_msg *msg)
{
    uint32_t kept = 1;
    int d;
    (void)v;
    for (d = 0; d < 4; d++) {
        kept *= ((L->p[1] >> d) & 1) ? 1u : (uint32_t)eb_dim_at(&L->din, d);
    }
    if (L->p[0] != 0 || L->p[1] < 0 || L->p[1] > 15 || kept != dims_count(&L->dout) ||
        !shift_ok(L->p[5]) || !off_ok(L->p[2]) || !off_ok(L->p[3])) {
        return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent mean", k);
    }
    return EB_OK;
}

void eb_mean_run(eb_model *m, const eb_view *v, const eb_layer *L)
{
    eb_mean_params p;
    p.in = L->din;
    p.axis_mask = L->p[1];
    p.in_zp = L->p[2];
    p.out_zp = L->p[3];
    p.mult = L->p[4];
    p.shift = L->p[5];
    eb_mean_s8(&p, tensor_data(m, v, L->in[0]), tensor_data(m, v, L->out));
}
