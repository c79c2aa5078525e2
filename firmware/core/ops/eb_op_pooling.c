/*
 * eb_op_pooling.c - AVERAGE_POOL_2D and MAX_POOL_2D (int8).
 *
 * Same integers as TFLite's reference kernels:
 *  - AveragePool: sum over the window taps inside the input, divided by their
 *    count, rounding half away from zero; then the activation clamp.
 *  - MaxPool: max over the taps inside the input; then the clamp.
 */
#include "eb_kernels_opt.h"
#include "eb_ops.h"

/* One window pass for both pools (avg a constant in each caller, so the branch
 * folds away): the taps inside the input, averaged (rounding half away from
 * zero) or maximised, then the activation clamp. */
static EB_ALWAYS_INLINE void pool_s8(const eb_pool_params *params, const int8_t *in, int8_t *out, int avg)
{
    const eb_pool_params q = *params;   /* local: out stores may alias *params */
    const eb_pool_params *const p = &q;
    const int32_t H = p->in.h, W = p->in.w, C = p->in.c;
    int32_t b, oy, ox, c, y, x;
    for (b = 0; b < p->out.n; b++) {
        const int8_t *in_b = in + (size_t)b * H * W * C;
        for (oy = 0; oy < p->out.h; oy++) {
            const int32_t iy0 = oy * p->sh - p->ph;
            const int32_t y0 = iy0 < 0 ? 0 : iy0;
            const int32_t y1 = iy0 + p->kh > H ? H : iy0 + p->kh;
            for (ox = 0; ox < p->out.w; ox++) {
                const int32_t ix0 = ox * p->sw - p->pw;
                const int32_t x0 = ix0 < 0 ? 0 : ix0;
                const int32_t x1 = ix0 + p->kw > W ? W : ix0 + p->kw;
                const int32_t count = (y1 - y0) * (x1 - x0);
                for (c = 0; c < C; c++) {
                    int32_t acc = avg ? 0 : -128;
                    for (y = y0; y < y1; y++) {
                        const int8_t *row = in_b + ((size_t)y * W) * C + c;
                        for (x = x0; x < x1; x++) {
                            const int32_t v = row[(size_t)x * C];
                            acc = avg ? acc + v : (v > acc ? v : acc);
                        }
                    }
                    if (avg && count > 0) {
                        acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
                    }
                    *out++ = (int8_t)eb_clamp(acc, p->act_min, p->act_max);
                }
            }
        }
    }
}

void eb_avgpool_s8(const eb_pool_params *p, const int8_t *in, int8_t *out)
{
    if (eb_avgpool_s8_opt(p, in, out)) {   /* the kernel set's (kernels/dsp/eb_pool_dsp.c) */
        return;
    }
    pool_s8(p, in, out, 1);
}

void eb_maxpool_s8(const eb_pool_params *p, const int8_t *in, int8_t *out)
{
    pool_s8(p, in, out, 0);
}

eb_status eb_pooling_check(const eb_view *v, const eb_layer *L, uint32_t k, eb_msg *msg)
{
    (void)v;
    if (!act_ok(L) || L->din.n != L->dout.n || L->din.c != L->dout.c ||
        !eb_window_ok(L->din.h, L->dout.h, L->fh, L->sh, 1, L->ph) ||
        !eb_window_ok(L->din.w, L->dout.w, L->fw, L->sw, 1, L->pw)) {
        return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent pooling", k);
    }
    return EB_OK;
}

void eb_pooling_run(eb_model *m, const eb_view *v, const eb_layer *L)
{
    eb_pool_params p;
    p.in = L->din;
    p.out = L->dout;
    p.kh = L->fh;
    p.kw = L->fw;
    p.sh = L->sh;
    p.sw = L->sw;
    p.ph = L->ph;
    p.pw = L->pw;
    p.act_min = L->act_min;
    p.act_max = L->act_max;
    if (L->op == EB_OP_AVERAGE_POOL_2D) {
        eb_avgpool_s8(&p, tensor_data(m, v, L->in[0]), tensor_data(m, v, L->out));
    } else {
        eb_maxpool_s8(&p, tensor_data(m, v, L->in[0]), tensor_data(m, v, L->out));
    }
}
