/*
 * eb_op_resize.c - RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR
 * (reference_ops::ResizeBilinearInteger): the source rows and columns and the
 * bilinear fractions come precomputed in the layer's arrays (rows, then columns:
 * lower[n], upper[n], fraction[n], n = OH + OW).
 */
#include "eb_ops.h"

void eb_resize_s8(const eb_resize_params *params, const int8_t *in, int8_t *out)
{
    const eb_resize_params q = *params;
    const int32_t n = q.out.h + q.out.w, C = q.in.c;
    int32_t b, y, x, c;
    for (b = 0; b < q.out.n; b++) {
        const int8_t *in_b = in + (size_t)b * q.in.h * q.in.w * C;
        for (y = 0; y < q.out.h; y++) {
            const int32_t y0 = eb_ld32(q.map + 4 * y), y1 = eb_ld32(q.map + 4 * (n + y));
            const int64_t dy = eb_ld32(q.map + 4 * (2 * n + y));
            for (x = 0; x < q.out.w; x++) {
                const int32_t k = q.out.h + x;
                const int32_t x0 = eb_ld32(q.map + 4 * k), x1 = eb_ld32(q.map + 4 * (n + k));
                const int64_t dx = eb_ld32(q.map + 4 * (2 * n + k));
                const int8_t *p00 = in_b + ((size_t)y0 * q.in.w + (size_t)x0) * C;
                const int8_t *p10 = in_b + ((size_t)y1 * q.in.w + (size_t)x0) * C;
                const int8_t *p01 = in_b + ((size_t)y0 * q.in.w + (size_t)x1) * C;
                const int8_t *p11 = in_b + ((size_t)y1 * q.in.w + (size_t)x1) * C;
                if (q.nearest) {
                    memmove(out, p00, (size_t)C);
                    out += C;
                    continue;
                }
                for (c = 0; c < C; c++) {
                    const int64_t s = p00[c] * (1024 - dy) * (1024 - dx) + p10[c] * dy * (1024 - dx) +
                                      p01[c] * (1024 - dy) * dx + p11[c] * dy * dx;
                    *out++ = (int8_t)((s + (s > 0 ? (1 << 19) : -(1 << 19))) / (1 << 20));
                }
            }
        }
    }
}

eb_status eb_resize_check(const eb_view *v, const eb_layer *L, uint32_t k, eb_msg *msg)
{
    /* every index inside the input, every fraction within [-4096, 4096] */
    const uint32_t n = (uint32_t)L->dout.h + (uint32_t)L->dout.w;
    uint32_t i;
    if (L->din.n != L->dout.n || L->din.c != L->dout.c || L->n_chan != n ||
        !in_range(L->chan_off, 12u * n, v->total) || L->p[0] < 0 || L->p[0] > 1) {
        return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent resize", k);
    }
    for (i = 0; i < n; i++) {
        const int32_t size = i < (uint32_t)L->dout.h ? L->din.h : L->din.w;
        const int32_t lo = rd_i32(v->blob + L->chan_off + 4u * i);
        const int32_t hi = rd_i32(v->blob + L->chan_off + 4u * (n + i));
        const int32_t fr = rd_i32(v->blob + L->chan_off + 4u * (2u * n + i));
        if (lo < 0 || lo >= size || hi < 0 || hi >= size || fr < -4096 || fr > 4096) {
            return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent resize", k);
        }
    }
    return EB_OK;
}

void eb_resize_run(eb_model *m, const eb_view *v, const eb_layer *L)
{
    eb_resize_params p;
    p.in = L->din;
    p.out = L->dout;
    p.map = v->blob + L->chan_off;
    p.nearest = L->p[0];
    eb_resize_s8(&p, tensor_data(m, v, L->in[0]), tensor_data(m, v, L->out));
}
