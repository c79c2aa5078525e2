/*
 * eb_conv_util.c - what the portable and the DSP convolution kernels share: the
 * blob's blocked filter order, the tests for a convolution that reads its input in
 * place and for one whose filter is stored biased, and the gathering of one
 * receptive field with its padding.
 */
#include "eb_kernels.h"

#include <string.h>

void eb_block_filter(const int8_t *plain, int32_t rows, int32_t depth, int8_t *blocked)
{
    const int32_t r = depth & 3;
    int32_t b, k, j, i;
    for (b = 0; b + 3 < rows; b += 4) {
        for (k = 0; k + 3 < depth; k += 4) {
            for (j = 0; j < 4; j++) {
                for (i = 0; i < 4; i++) {
                    *blocked++ = plain[(size_t)(b + j) * depth + k + i];
                }
            }
        }
        for (j = 0; j < 4; j++) {
            for (i = 0; i < r; i++) {
                *blocked++ = plain[(size_t)(b + j) * depth + (depth - r) + i];
            }
        }
    }
    for (; b < rows; b++) {
        memcpy(blocked, plain + (size_t)b * depth, (size_t)depth);
        blocked += depth;
    }
}

int eb_conv_direct(const eb_conv_params *p)
{
    return p->kh == 1 && p->kw == 1 && p->ph == 0 && p->pw == 0 &&
           (p->out.h - 1) * p->sh < p->in.h && (p->out.w - 1) * p->sw < p->in.w;
}

int eb_conv_biased(const eb_conv_params *p)
{
    return p->kh == 1 && p->kw == 1 && p->ph == 0 && p->pw == 0 && (p->in.c & 3) == 0;
}

/* Gather one receptive field into col (kh*kw*c bytes, [ky][kx][c] order as the
 * filter), padded taps set to pad. */
void eb_im2col(const eb_conv_params *p, const int8_t *in_b, int32_t iy0, int32_t ix0,
                      int8_t pad, int8_t *col)
{
    const int32_t H = p->in.h, W = p->in.w, C = p->in.c;
    const int32_t row_run = p->kw * C;
    int32_t ky, kx;
    for (ky = 0; ky < p->kh; ky++) {
        const int32_t iy = iy0 + ky * p->dh;
        const int8_t *row;
        if (iy < 0 || iy >= H) {
            memset(col, pad, (size_t)row_run);
            col += row_run;
            continue;
        }
        row = in_b + (size_t)iy * W * C;
        if (p->dw == 1 && ix0 >= 0 && ix0 + p->kw <= W) {
            memcpy(col, row + (size_t)ix0 * C, (size_t)row_run);
            col += row_run;
            continue;
        }
        for (kx = 0; kx < p->kw; kx++) {
            const int32_t ix = ix0 + kx * p->dw;
            if (ix < 0 || ix >= W) {
                memset(col, pad, (size_t)C);
            } else {
                memcpy(col, row + (size_t)ix * C, (size_t)C);
            }
            col += C;
        }
    }
}
