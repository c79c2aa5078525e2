/*
 * eb_matvec.c - the portable matrix-vector product over a BIASED blocked filter
 * (blob format 2 for FULLY_CONNECTED, format 3 also for 1x1 CONV_2D without
 * padding over a multiple of four input channels: firmware/BLOB.md, "Filter
 * layouts"). The bytes of even depth positions are stored b_k = w_k ^ 0x80, so
 * (uint8)b_k = w_k + 128 for even k, and b_k = w_k for odd k; the blob's
 * bias'' = bias' + 128 * sum(odd w). For any x (summing over all k):
 *   sum(even k) x_k * (uint8)b_k + sum(odd k) (x_k - 128) * (int8)b_k
 *     = sum x_k w_k + 128 * sum(even k) x_k - 128 * sum(odd k) w_k
 * so acc = bias'' - 128 * sum(even k) x_k + that sum, exactly (modulo 2^32,
 * as every accumulation here: firmware/BLOB.md, "Integer overflow"). The layout
 * exists for the DSP kernels (kernels/dsp/eb_fc_dsp.c, eb_pointwise_dsp.c), whose
 * SMLAD reads the raw weight word; this is the reference they must match.
 */
#include "eb_dot.h"

/* acc + the sum above over one row's n weights: whole groups of four at w, w +
 * step, ...; the n % 4 last ones at tail (depth positions from 0) */
static int32_t eb_biased_row(int32_t acc, const int8_t *x, const int8_t *w, int32_t step, const int8_t *tail,
                             int32_t n)
{
    const int32_t g4 = n & ~3;
    int32_t k;
    for (k = 0; k < g4; k += 4, w += step) {
        acc = eb_acc(acc, x[k] * (int32_t)(uint8_t)w[0] + (x[k + 1] - 128) * w[1] +
                              x[k + 2] * (int32_t)(uint8_t)w[2] + (x[k + 3] - 128) * w[3]);
    }
    for (; k < n; k++) {
        const int32_t b = *tail++;
        acc = eb_acc(acc, (k & 1) ? (x[k] - 128) * b : x[k] * (b & 0xFF));
    }
    return acc;
}

void eb_matvec_biased(const int8_t *x, const int8_t *filter, int32_t depth, int32_t units, const uint8_t *chan,
                      int fc, int32_t out_offset, int32_t act_min, int32_t act_max, int8_t *out)
{
    const int32_t g4 = depth & ~3;
    const uint8_t *const arr1 = chan + 4 * (size_t)units;
    const uint8_t *const arr2 = chan + 8 * (size_t)units;
    int32_t s = 0, k, u;
    for (k = 0; k < depth; k += 2) {
        s += x[k];
    }
    s = (int32_t)(0u - 128u * (uint32_t)s);  /* -128 * sum(even x), |sum| < 2^23 */
    for (u = 0; u < units; u++) {
        const int32_t j = u & 3;
        int32_t acc = eb_acc(eb_ld32(chan + 4 * (size_t)u), s);
        if (u < (units & ~3)) {
            const int8_t *const blk = filter + (size_t)(u - j) * depth;
            acc = eb_biased_row(acc, x, blk + 4 * j, 16, blk + 4 * (size_t)g4 + j * (size_t)(depth - g4), depth);
        } else {
            const int8_t *const w = filter + (size_t)u * depth;
            acc = eb_biased_row(acc, x, w, 4, w + g4, depth);
        }
        out[u] = eb_requant_chan(acc, arr1, arr2, u, fc, out_offset, act_min, act_max);
    }
}
