/*
 * eb_op_gather.c - TRANSPOSE, SLICE, STRIDED_SLICE (and SPLIT / SPLIT_V, which
 * the host writes as SLICEs): one strided gather, out[i] = in[p0 + sum i_k p(k+1)]
 * over the right-aligned 4-D output, strides in elements (may be negative).
 */
#include "eb_ops.h"

#include <stddef.h>

void eb_gather_s8(const eb_gather_params *params, const int8_t *in, int8_t *out)
{
    const eb_gather_params q = *params;
    int32_t n, y, x, c;
    for (n = 0; n < q.out.n; n++) {
        for (y = 0; y < q.out.h; y++) {
            for (x = 0; x < q.out.w; x++) {
                const int8_t *row = in + ((ptrdiff_t)q.base + (ptrdiff_t)n * q.st[0] +
                                          (ptrdiff_t)y * q.st[1] + (ptrdiff_t)x * q.st[2]);
                if (q.st[3] == 1) {
                    memmove(out, row, (size_t)q.out.c);
                    out += q.out.c;
                    continue;
                }
                for (c = 0; c < q.out.c; c++) {
                    *out++ = row[(ptrdiff_t)c * q.st[3]];
                }
            }
        }
    }
}

eb_status eb_gather_check(const eb_view *v, const eb_layer *L, uint32_t k, eb_msg *msg)
{
    /* the gather's lowest and highest element offsets stay inside the input */
    int64_t lo = L->p[0], hi = L->p[0];
    int d;
    (void)v;
    for (d = 0; d < 4; d++) {
        const int64_t span = (int64_t)L->p[1 + d] * (eb_dim_at(&L->dout, d) - 1);
        lo += span < 0 ? span : 0;
        hi += span > 0 ? span : 0;
    }
    if (lo < 0 || hi >= (int64_t)dims_count(&L->din)) {
        return eb_layer_fail(msg, EB_ERR_INVALID, "slice or transpose outside its input", k);
    }
    return EB_OK;
}

void eb_gather_run(eb_model *m, const eb_view *v, const eb_layer *L)
{
    eb_gather_params p;
    int d;
    p.out = L->dout;
    p.base = L->p[0];
    for (d = 0; d < 4; d++) {
        p.st[d] = L->p[1 + d];
    }
    eb_gather_s8(&p, tensor_data(m, v, L->in[0]), tensor_data(m, v, L->out));
}
