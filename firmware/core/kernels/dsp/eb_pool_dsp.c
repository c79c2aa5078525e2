/*
 * eb_pool_dsp.c - AVERAGE_POOL_2D on the DSP extension: four channels per word,
 * the window's sums in 16-bit lanes (SXTB16 + SADD16).
 *
 * The portable kernel (ops/eb_op_pooling.c) walks one channel at a time with a
 * stride of C bytes: about 8 instructions per input element (KWS's global pool,
 * 25x5 over 64 channels, took 63k). Here one word of the input holds four
 * channels of one tap; SXTB16 splits it into lanes (c0, c2) and, with ROR #8,
 * (c1, c3), and SADD16 adds each into a pair of 16-bit sums: 2 + 2 instructions
 * per 4 elements and one load, eight channels (four sum registers) per pass
 * over the window.
 *
 * Exactness: a window of count <= 256 taps sums at most 256 * 127 = 32512 and at
 * least 256 * -128 = -32768, so every lane sum is the exact int16 sum (SADD16
 * wraps, but never here). Then the portable kernel's own division: rounding half
 * away from zero, then the activation clamp - the same integers as TFLite's
 * reference AveragePool. Layers outside the case (C % 8 != 0 or a window over
 * 256 taps) return 0: the portable kernel runs them. No scratch: an output
 * pixel's eight channels are summed over the whole window in registers.
 */
#include "eb_dsp.h"
#include "eb_kernels_opt.h"

static inline int8_t pool_out(int32_t acc, int32_t count, int32_t lo, int32_t hi)
{
    acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
    return (int8_t)eb_clamp(acc, lo, hi);
}

/* One output pixel's eight channels at p (the window's first tap): the sums of
 * rows x taps taps (stride C along a row, row_step between rows) in four registers
 * of 16-bit lanes, then divided and clamped into out[0..7]. */
static void pool_block8(const int8_t *p, int32_t rows, int32_t taps, int32_t C, int32_t row_step,
                        int32_t count, int32_t lo, int32_t hi, int8_t *out)
{
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;   /* (c0,c2) (c1,c3) (c4,c6) (c5,c7) */
    int32_t y, t, k;
    for (y = 0; y < rows; y++) {
        const int8_t *q = p;
        for (t = 0; t < taps; t++) {
            const uint32_t w0 = eb_ldw(q), w1 = eb_ldw(q + 4);
            s0 = __sadd16(s0, eb_sx02(w0));
            s1 = __sadd16(s1, eb_sx13(w0));
            s2 = __sadd16(s2, eb_sx02(w1));
            s3 = __sadd16(s3, eb_sx13(w1));
            q += C;
        }
        p += row_step;
    }
    if (count == 0) {   /* no tap inside the input: the portable kernel's 0, clamped */
        for (k = 0; k < 8; k++) {
            out[k] = (int8_t)eb_clamp(0, lo, hi);
        }
        return;
    }
    out[0] = pool_out((int16_t)s0, count, lo, hi);
    out[1] = pool_out((int16_t)s1, count, lo, hi);
    out[2] = pool_out(s0 >> 16, count, lo, hi);
    out[3] = pool_out(s1 >> 16, count, lo, hi);
    out[4] = pool_out((int16_t)s2, count, lo, hi);
    out[5] = pool_out((int16_t)s3, count, lo, hi);
    out[6] = pool_out(s2 >> 16, count, lo, hi);
    out[7] = pool_out(s3 >> 16, count, lo, hi);
}

int eb_avgpool_s8_opt(const eb_pool_params *params, const int8_t *in, int8_t *out)
{
    const eb_pool_params p = *params;   /* local: out stores may alias *params */
    const int32_t H = p.in.h, W = p.in.w, C = p.in.c;
    int32_t b, oy, ox, c;
    if (C % 8 != 0 || p.kh * p.kw > 256) {
        return 0;
    }
    for (b = 0; b < p.out.n; b++) {
        const int8_t *in_b = in + (size_t)b * H * W * C;
        for (oy = 0; oy < p.out.h; oy++) {
            const int32_t iy0 = oy * p.sh - p.ph;
            const int32_t y0 = iy0 < 0 ? 0 : iy0;
            const int32_t y1 = iy0 + p.kh > H ? H : iy0 + p.kh;
            for (ox = 0; ox < p.out.w; ox++) {
                const int32_t ix0 = ox * p.sw - p.pw;
                const int32_t x0 = ix0 < 0 ? 0 : ix0;
                const int32_t x1 = ix0 + p.kw > W ? W : ix0 + p.kw;
                const int32_t count = (y1 - y0) * (x1 - x0);
                const int8_t *first = in_b + ((size_t)y0 * W + (size_t)x0) * C;
                for (c = 0; c < C; c += 8) {
                    pool_block8(first + c, y1 - y0, x1 - x0, C, W * C, count, p.act_min, p.act_max, out);
                    out += 8;
                }
            }
        }
    }
    return 1;
}
