/*
 * eb_kernels_shape.c - int8 operators of engine version 2 that move bytes
 * without arithmetic: PAD/PADV2 and CONCATENATION (TFLite requires equal
 * input and output quantization for both in int8, so the reference copies
 * the values unchanged; the converter checks that).
 */
#include "eb_kernels.h"

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
                memcpy(out + dst, in, row);
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
            memcpy(out, in[i] + (size_t)o * inner[i], (size_t)inner[i]);
            out += inner[i];
        }
    }
}
