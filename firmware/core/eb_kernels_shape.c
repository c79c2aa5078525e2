/*
 * eb_kernels_shape.c - int8 operators of engine version 2 that move bytes:
 * PAD/PADV2, CONCATENATION, RESIZE_NEAREST_NEIGHBOR / RESIZE_BILINEAR,
 * TRANSPOSE, SLICE and STRIDED_SLICE (none rescales: TFLite requires equal input
 * and output quantization for them in int8, or copies the bytes regardless).
 * Copies use memmove: the planner never overlaps an operator's input and
 * output, but a damaged blob may, and that must stay defined behaviour.
 */
#include "eb_kernels.h"

#include <stddef.h>

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
