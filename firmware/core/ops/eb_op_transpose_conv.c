/*
 * eb_op_transpose_conv.c - TRANSPOSE_CONV (int8, per-channel), engine version 2.
 *
 * Same integers as LiteRT's reference_integer_ops::TransposeConv: every input
 * pixel scatters (x + in_offset) * w into the output positions its filter
 * covers; the int32 sums get the bias, MultiplyByQuantizedMultiplier with the
 * channel's multiplier, the output offset and the clamp of the fused activation
 * (act_min/act_max; NONE is the int8 range). Computed here output by output (a
 * gather over the taps that reach it), which gives the same sums (integer
 * addition is exact and wraps identically in any order) and needs no int32
 * scratch the size of the output.
 */
#include "eb_ops.h"

/* The input row (or column) a tap reaches from t = output position + padding - tap
 * position: t / stride when t is a non-negative multiple of the stride and t / stride
 * < n, else -1 (no input pixel scatters into the output through this tap). */
static inline int32_t tap_source(int32_t t, int32_t stride, int32_t n)
{
    if (t < 0 || t % stride) {
        return -1;
    }
    t /= stride;
    return t < n ? t : -1;
}

void eb_transpose_conv_s8(const eb_conv_params *params, const int8_t *in, int8_t *out)
{
    const eb_conv_params q = *params;
    const int32_t IH = q.in.h, IW = q.in.w, IC = q.in.c, OC = q.out.c;
    int32_t b, oy, ox, oc, ky, kx, ic;
    for (b = 0; b < q.out.n; b++) {
        const int8_t *in_b = in + (size_t)b * IH * IW * IC;
        for (oy = 0; oy < q.out.h; oy++) {
            for (ox = 0; ox < q.out.w; ox++) {
                for (oc = 0; oc < OC; oc++) {
                    uint32_t acc = (uint32_t)eb_ld32(q.chan + 4 * oc);    /* bias, wrapping sum */
                    for (ky = 0; ky < q.kh; ky++) {
                        const int32_t iy = tap_source(oy + q.ph - ky, q.sh, IH);
                        if (iy < 0) {
                            continue;
                        }
                        for (kx = 0; kx < q.kw; kx++) {
                            const int32_t ix = tap_source(ox + q.pw - kx, q.sw, IW);
                            const int8_t *x, *w;
                            if (ix < 0) {
                                continue;
                            }
                            x = in_b + ((size_t)iy * IW + (size_t)ix) * IC;
                            w = q.filter + (((size_t)oc * q.kh + (size_t)ky) * q.kw + (size_t)kx) * IC;
                            for (ic = 0; ic < IC; ic++) {
                                acc += (uint32_t)((x[ic] + q.in_offset) * w[ic]);
                            }
                        }
                    }
                    *out++ = eb_requant((int32_t)acc, eb_ld32(q.chan + 4 * (OC + oc)),
                                        eb_ld32(q.chan + 4 * (2 * OC + oc)), q.out_offset, q.act_min,
                                        q.act_max);
                }
            }
        }
    }
}

eb_status eb_transpose_conv_check(const eb_view *v, const eb_layer *L, uint32_t k, eb_msg *msg)
{
    uint32_t c;
    const eb_dims *f = &L->dfilt;
    if (!is_const(v, L->in[1]) || !act_ok(L) || L->din.n != L->dout.n || f->n != L->dout.c ||
        f->c != L->din.c || f->h != L->fh || f->w != L->fw || L->sh < 1 || L->sw < 1 ||
        L->ph < 0 || L->pw < 0 || L->n_chan != (uint32_t)L->dout.c ||
        !off_ok(L->p[0]) || !off_ok(L->p[1]) ||
        !in_range(L->chan_off, 12u * L->n_chan, v->total)) {
        return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent transposed convolution", k);
    }
    for (c = 0; c < L->n_chan; c++) {
        if (!shift_ok(rd_i32(v->blob + L->chan_off + 4u * (2u * L->n_chan + c)))) {
            return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent transposed convolution", k);
        }
    }
    return EB_OK;
}

void eb_transpose_conv_run(eb_model *m, const eb_view *v, const eb_layer *L)
{
    eb_conv_params p;
    eb_conv_params_of(m, v, L, &p);
    eb_transpose_conv_s8(&p, tensor_data(m, v, L->in[0]), tensor_data(m, v, L->out));
}
