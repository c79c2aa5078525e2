/*
 * eb_kernels_conv.c - CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED (int8).
 *
 * Same integers as TFLite's reference_integer_ops ConvPerChannel,
 * DepthwiseConvPerChannel and FullyConnected(PerChannel): acc = bias +
 * sum(w * (x + in_offset)) over the taps inside the input, requantized with
 * MultiplyByQuantizedMultiplier (convolutions) or, for FULLY_CONNECTED, with
 * LiteRT's double-precision rescale (eb_mul_round_f64). Rearranged (exactly,
 * in integers) as
 * acc = bias' + sum(w * x') with bias' = bias + in_offset * sum(w) and
 * x' = x inside the input, x' = -in_offset (the input zero point) outside, so
 * the inner loops are plain dot products with no per-MAC branch and no
 * per-MAC offset add.
 *
 * Inner loops: on cores with the DSP extension (Cortex-M4/M7/M33) CONV_2D and
 * DEPTHWISE_CONV_2D run the kernels of eb_kernels_dsp.h (int16-widened
 * operands, SMLAD, a static 4 KiB scratch; the functions below when a layer
 * does not fit it), and the dot products below use four int8 pairs per
 * SXTB16/SMLAD pair, four output channels per pass over the input (filters
 * stored blocked, see eb_block_filter); elsewhere portable C. All give
 * identical integers (the sums are exact in int32). Under QEMU (-icount,
 * Cortex-M4 build) CONV_2D runs at 1.5 to 1.8 emulated instructions per MAC
 * and DEPTHWISE_CONV_2D at 2.97 on the reference models
 * (benchmarks/engine_instructions.py, docs/firmware-ports.md).
 */
#include "eb_kernels.h"

#if defined(__ARM_FEATURE_DSP) && (__ARM_FEATURE_DSP == 1)
#include <arm_acle.h>
#define EB_DSP 1
#else
#define EB_DSP 0
#endif

#if defined(__GNUC__)
#define EB_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define EB_ALWAYS_INLINE inline
#endif

/* Integer overflow (firmware/BLOB.md): every accumulation below is modulo 2^32
 * (two's complement) and goes through eb_acc or eb_mac, never a plain signed +=.
 * A blob whose bias is near the int32 limits makes the sum overflow; TFLite's
 * reference kernels overflow there too, which is undefined in C. Here the sum
 * wraps, as the DSP path's SMLAD/SMLABB do in hardware, so UBSan is clean and the
 * result is defined; wherever the true sum fits in int32 it is exactly that sum,
 * whatever the order of the additions (so the engine stays bit-exact with
 * TFLite). The int8 products and four-product sums themselves cannot overflow.
 * (uint32 -> int32 above INT32_MAX is modulo 2^32 on GCC and Clang.) */

/* acc + v modulo 2^32 */
static inline int32_t eb_acc(int32_t acc, int32_t v)
{
    return (int32_t)((uint32_t)acc + (uint32_t)v);
}

/* acc + x * w modulo 2^32 for int8 x and w (SMLABB on DSP cores: what GCC emitted
 * for the signed += before, so the emulated instruction counts barely move) */
static inline int32_t eb_mac(int32_t acc, int32_t x, int32_t w)
{
#if EB_DSP
    return __smlabb(x, w, acc);
#else
    return eb_acc(acc, x * w);
#endif
}

static inline uint32_t eb_ldw(const int8_t *p)
{
    uint32_t v;
    EB_COPY4(&v, p);
    return v;
}

#if EB_DSP
/* bytes 0 and 2 of v sign-extended into two int16 lanes */
static inline int32_t eb_sx02(uint32_t v)
{
    return __sxtb16((int8x4_t)v);
}

/* bytes 1 and 3: SXTB16 with its rotate operand (ACLE has no form for it) */
static inline int32_t eb_sx13(uint32_t v)
{
    int32_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
    return r;
}
#endif

/* acc[j] += x . w_j, j < 4, over n elements, with the four filter rows
 * stored interleaved (the blob's blocked layout, firmware/BLOB.md): for each
 * group of four elements, four bytes of row 0, of row 1, of row 2, of row 3;
 * then the n % 4 last elements of row 0, 1, 2, 3. One pointer walks all four
 * rows and every load of x feeds four channels. */
static inline void eb_dot4(const int8_t *x, const int8_t *w, int32_t n, int32_t *acc)
{
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    const int32_t r = n & 3;
    const int8_t *const xend = x + (n - r);
    int32_t j;
#if EB_DSP
    while (x < xend) {
        const uint32_t xv = eb_ldw(x);
        const int32_t xe = eb_sx02(xv), xo = eb_sx13(xv);
        uint32_t wv = eb_ldw(w);
        a0 = __smlad(eb_sx02(wv), xe, a0);
        a0 = __smlad(eb_sx13(wv), xo, a0);
        wv = eb_ldw(w + 4);
        a1 = __smlad(eb_sx02(wv), xe, a1);
        a1 = __smlad(eb_sx13(wv), xo, a1);
        wv = eb_ldw(w + 8);
        a2 = __smlad(eb_sx02(wv), xe, a2);
        a2 = __smlad(eb_sx13(wv), xo, a2);
        wv = eb_ldw(w + 12);
        a3 = __smlad(eb_sx02(wv), xe, a3);
        a3 = __smlad(eb_sx13(wv), xo, a3);
        x += 4;
        w += 16;
    }
#else
    while (x < xend) {
        const int32_t x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];
        a0 = eb_acc(a0, x0 * w[0] + x1 * w[1] + x2 * w[2] + x3 * w[3]);
        a1 = eb_acc(a1, x0 * w[4] + x1 * w[5] + x2 * w[6] + x3 * w[7]);
        a2 = eb_acc(a2, x0 * w[8] + x1 * w[9] + x2 * w[10] + x3 * w[11]);
        a3 = eb_acc(a3, x0 * w[12] + x1 * w[13] + x2 * w[14] + x3 * w[15]);
        x += 4;
        w += 16;
    }
#endif
    for (j = 0; j < r; j++) {
        const int32_t xv = x[j];
        a0 = eb_mac(a0, xv, w[j]);
        a1 = eb_mac(a1, xv, w[r + j]);
        a2 = eb_mac(a2, xv, w[2 * r + j]);
        a3 = eb_mac(a3, xv, w[3 * r + j]);
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
}

/* *a0 += x . w0 and *a1 += x . w1 over n elements (plain rows). */
static inline void eb_dot2(const int8_t *x, const int8_t *w0, const int8_t *w1, int32_t n,
                           int32_t *pa0, int32_t *pa1)
{
    int32_t a0 = *pa0, a1 = *pa1;
    const int8_t *const xend = x + (n & ~3);
#if EB_DSP
    while (x < xend) {
        const uint32_t xv = eb_ldw(x);
        const int32_t xe = eb_sx02(xv), xo = eb_sx13(xv);
        uint32_t wv = eb_ldw(w0);
        a0 = __smlad(eb_sx02(wv), xe, a0);
        a0 = __smlad(eb_sx13(wv), xo, a0);
        wv = eb_ldw(w1);
        a1 = __smlad(eb_sx02(wv), xe, a1);
        a1 = __smlad(eb_sx13(wv), xo, a1);
        x += 4;
        w0 += 4;
        w1 += 4;
    }
#else
    while (x < xend) {
        const int32_t x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];
        a0 = eb_acc(a0, x0 * w0[0] + x1 * w0[1] + x2 * w0[2] + x3 * w0[3]);
        a1 = eb_acc(a1, x0 * w1[0] + x1 * w1[1] + x2 * w1[2] + x3 * w1[3]);
        x += 4;
        w0 += 4;
        w1 += 4;
    }
#endif
    for (n &= 3; n > 0; n--) {
        const int32_t xv = *x++;
        a0 = eb_mac(a0, xv, *w0++);
        a1 = eb_mac(a1, xv, *w1++);
    }
    *pa0 = a0;
    *pa1 = a1;
}

/* *a0 += x . w0 over n elements. */
static inline void eb_dot1(const int8_t *x, const int8_t *w0, int32_t n, int32_t *pa0)
{
    int32_t a0 = *pa0;
#if EB_DSP
    for (; n >= 4; n -= 4) {
        const uint32_t xv = eb_ldw(x);
        const uint32_t wv = eb_ldw(w0);
        a0 = __smlad(eb_sx02(wv), eb_sx02(xv), a0);
        a0 = __smlad(eb_sx13(wv), eb_sx13(xv), a0);
        x += 4;
        w0 += 4;
    }
#else
    for (; n >= 4; n -= 4) {
        a0 = eb_acc(a0, x[0] * w0[0] + x[1] * w0[1] + x[2] * w0[2] + x[3] * w0[3]);
        x += 4;
        w0 += 4;
    }
#endif
    for (; n > 0; n--) {
        a0 = eb_mac(a0, *x++, *w0++);
    }
    *pa0 = a0;
}

/* number of significant bits of v (v > 0) */
static inline int32_t eb_bitlen32(uint32_t v)
{
#if defined(__GNUC__)
    return 32 - __builtin_clz(v);
#else
    int32_t n = 0;
    while (v) {
        v >>= 1;
        n++;
    }
    return n;
#endif
}

int32_t eb_mul_round_f64(int32_t acc, uint32_t s_lo, uint32_t s_hi)
{
    /* S = m * 2^e with m = mh:s_lo the 53-bit significand (hidden bit set) */
    const uint32_t mh = (s_hi & 0xFFFFFu) | 0x100000u;
    const int32_t e = (int32_t)((s_hi >> 20) & 0x7FFu) - 1075;
    const uint32_t a = acc < 0 ? 0u - (uint32_t)acc : (uint32_t)acc;
    uint32_t w0, w1, w2, q0, q1, rem, half;
    uint64_t r;
    int32_t d, k;
    if (a == 0) {
        return 0;
    }
    /* exact product P = a * m = w2:w1:w0 (< 2^85, w2 < 2^21) */
    {
        const uint64_t u = (uint64_t)a * s_lo;
        const uint64_t v = (uint64_t)a * mh;
        const uint64_t mid = (u >> 32) + (uint32_t)v;
        w0 = (uint32_t)u;
        w1 = (uint32_t)mid;
        w2 = (uint32_t)(v >> 32) + (uint32_t)(mid >> 32);
    }
    /* the binary64 product keeps 53 significant bits: q = P >> d rounded to
     * nearest, ties to even (P >= 2^52, so 0 <= d <= 32) */
    d = (w2 ? 64 + eb_bitlen32(w2) : 32 + eb_bitlen32(w1)) - 53;
    if (d == 0) {
        q0 = w0;
        q1 = w1;
        rem = 0;
        half = 1;
    } else if (d == 32) {
        q0 = w1;
        q1 = w2;
        rem = w0;
        half = 0x80000000u;
    } else {
        q0 = (w0 >> d) | (w1 << (32 - d));
        q1 = (w1 >> d) | (w2 << (32 - d));
        rem = w0 & ((1u << d) - 1u);
        half = 1u << (d - 1);
    }
    if (rem > half || (rem == half && (q0 & 1u))) {
        q0++;
        q1 += q0 == 0 ? 1u : 0u;
    }
    /* the double is q * 2^k (q < 2^54); C's round(): ties away from zero */
    k = d + e;
    if (k >= 0) {
        r = (uint64_t)1 << 31;                      /* >= 2^52: saturate */
    } else if (k < -55) {
        r = 0;                                      /* below 1/4 */
    } else if (k <= -32) {
        const int32_t s = -k - 32;                  /* 0..23 */
        r = (uint64_t)(q1 >> s) + (s ? (q1 >> (s - 1)) & 1u : q0 >> 31);
    } else {
        const int32_t s = -k;                       /* 1..31 */
        r = (q1 >> s) ? ((uint64_t)1 << 31)
                      : (uint64_t)((q0 >> s) | (q1 << (32 - s))) + ((q0 >> (s - 1)) & 1u);
    }
    if (r > ((uint64_t)1 << 31)) {
        r = (uint64_t)1 << 31;
    }
    if (acc < 0) {
        return r == ((uint64_t)1 << 31) ? INT32_MIN : -(int32_t)r;
    }
    return r >= ((uint64_t)1 << 31) ? INT32_MAX : (int32_t)r;
}

/* Requantize the accumulator of channel u: fixed-point multiplier and shift
 * (convolutions), or the binary64 rescale factor (fully connected). */
static inline int8_t eb_requant_chan(int32_t acc, const uint8_t *arr1, const uint8_t *arr2,
                                     int32_t u, int fc, int32_t out_offset, int32_t act_min,
                                     int32_t act_max)
{
    int32_t v;
    if (!fc) {
        return eb_requant(acc, eb_ld32(arr1 + 4 * u), eb_ld32(arr2 + 4 * u), out_offset,
                          act_min, act_max);
    }
    v = eb_mul_round_f64(acc, (uint32_t)eb_ld32(arr1 + 4 * u), (uint32_t)eb_ld32(arr2 + 4 * u));
    /* saturating add: v may be near the int32 limits */
    v = v > act_max - out_offset ? act_max - out_offset : v;
    v = v < act_min - out_offset ? act_min - out_offset : v;
    return (int8_t)(v + out_offset);
}

/* out[0..units) for one input vector x of length depth: filter rows of
 * length depth, one per output channel, in the blocked layout (groups of four
 * rows interleaved, see eb_dot4; the units % 4 last rows plain). Inlined into
 * its two callers, so `fc` is a constant in each. */
static EB_ALWAYS_INLINE void eb_matvec(const int8_t *x, const int8_t *filter, int32_t depth,
                                       int32_t units, const uint8_t *chan, int fc,
                                       int32_t out_offset, int32_t act_min, int32_t act_max,
                                       int8_t *out)
{
    const uint8_t *bias = chan;
    const uint8_t *arr1 = chan + 4 * (size_t)units;
    const uint8_t *arr2 = chan + 8 * (size_t)units;
    const int8_t *w = filter;
    int32_t u = 0, j;
    for (; u + 3 < units; u += 4) {
        int32_t a[4];
        for (j = 0; j < 4; j++) {
            a[j] = eb_ld32(bias + 4 * (u + j));
        }
        eb_dot4(x, w, depth, a);
        for (j = 0; j < 4; j++) {
            out[u + j] = eb_requant_chan(a[j], arr1, arr2, u + j, fc, out_offset, act_min, act_max);
        }
        w += 4 * (size_t)depth;
    }
    if (u + 1 < units) {
        int32_t a0 = eb_ld32(bias + 4 * u), a1 = eb_ld32(bias + 4 * u + 4);
        eb_dot2(x, w, w + depth, depth, &a0, &a1);
        out[u] = eb_requant_chan(a0, arr1, arr2, u, fc, out_offset, act_min, act_max);
        out[u + 1] = eb_requant_chan(a1, arr1, arr2, u + 1, fc, out_offset, act_min, act_max);
        w += 2 * (size_t)depth;
        u += 2;
    }
    if (u < units) {
        int32_t a0 = eb_ld32(bias + 4 * u);
        eb_dot1(x, w, depth, &a0);
        out[u] = eb_requant_chan(a0, arr1, arr2, u, fc, out_offset, act_min, act_max);
    }
}

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

/* Gather one receptive field into col (kh*kw*c bytes, [ky][kx][c] order as the
 * filter), padded taps set to pad. */
static void eb_im2col(const eb_conv_params *p, const int8_t *in_b, int32_t iy0, int32_t ix0,
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

/* The kernels of eb_kernels_dsp.h pin all 14 allocatable registers (r7
 * included) in their inner loops: they need an optimised build without a frame
 * pointer (the ports' -O2). -DEB_NO_DSP_KERNELS leaves them out (e.g. for a
 * debug build with -fno-omit-frame-pointer). */
#if EB_DSP && defined(__OPTIMIZE__) && !defined(EB_NO_DSP_KERNELS)
#define EB_DSP_KERNELS 1
#include "eb_kernels_dsp.h"
#else
#define EB_DSP_KERNELS 0
#endif

size_t eb_kernels_ram_bytes(void)
{
#if EB_DSP_KERNELS
    return sizeof eb_dsp_buf;
#else
    return 0;
#endif
}

void eb_conv_s8(const eb_conv_params *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in.h, W = p->in.w, C = p->in.c;
    const int32_t OH = p->out.h, OW = p->out.w, OC = p->out.c;
    const int32_t K = p->kh * p->kw * C;
    const int8_t pad = (int8_t)(0u - (uint32_t)p->in_offset);   /* the input zero point */
    const int direct = eb_conv_direct(p);
    int32_t b, oy, ox;
#if EB_DSP_KERNELS
    if (eb_conv_s8_dsp(p, in, out)) {
        return;
    }
#endif
    for (b = 0; b < p->out.n; b++) {
        const int8_t *in_b = in + (size_t)b * H * W * C;
        for (oy = 0; oy < OH; oy++) {
            const int32_t iy0 = oy * p->sh - p->ph;
            for (ox = 0; ox < OW; ox++) {
                const int32_t ix0 = ox * p->sw - p->pw;
                const int8_t *col;
                if (direct) {
                    col = in_b + ((size_t)iy0 * W + ix0) * C;
                } else {
                    eb_im2col(p, in_b, iy0, ix0, pad, p->scratch);
                    col = p->scratch;
                }
                eb_matvec(col, p->filter, K, OC, p->chan, 0, p->out_offset, p->act_min,
                          p->act_max, out);
                out += OC;
            }
        }
    }
}

/* Depthwise, one output pixel, depth multiplier 1: channels in blocks of four
 * kept in registers, taps inner. tap[t] is the input pixel under tap t, or a
 * row of input zero points for a padded tap. */
static void eb_dw_pixel_m1(const eb_conv_params *p, const int8_t *const *tap, int32_t taps,
                           int8_t *out)
{
    /* locals: stores through int8_t *out may alias anything, so fields read
     * through p would be reloaded after every output byte */
    const int32_t C = p->out.c, out_offset = p->out_offset;
    const int32_t act_min = p->act_min, act_max = p->act_max;
    const int8_t *const filter = p->filter;
    const uint8_t *bias = p->chan, *mult = p->chan + 4 * (size_t)C, *shift = p->chan + 8 * (size_t)C;
    int32_t c = 0, t, j;
    for (; c + 3 < C; c += 4) {
        int32_t a[4];
        const int8_t *w = filter + c;
        int32_t a0 = eb_ld32(bias + 4 * c), a1 = eb_ld32(bias + 4 * c + 4);
        int32_t a2 = eb_ld32(bias + 4 * c + 8), a3 = eb_ld32(bias + 4 * c + 12);
        for (t = 0; t < taps; t++) {
            const int8_t *xp = tap[t] + c;
#if EB_DSP
            const uint32_t xv = eb_ldw(xp), wv = eb_ldw(w);
            const int32_t xe = eb_sx02(xv), we = eb_sx02(wv);
            const int32_t xo = eb_sx13(xv), wo = eb_sx13(wv);
            a0 = __smlabb(xe, we, a0);
            a2 = __smlatt(xe, we, a2);
            a1 = __smlabb(xo, wo, a1);
            a3 = __smlatt(xo, wo, a3);
#else
            a0 = eb_mac(a0, xp[0], w[0]);
            a1 = eb_mac(a1, xp[1], w[1]);
            a2 = eb_mac(a2, xp[2], w[2]);
            a3 = eb_mac(a3, xp[3], w[3]);
#endif
            w += C;
        }
        a[0] = a0;
        a[1] = a1;
        a[2] = a2;
        a[3] = a3;
        for (j = 0; j < 4; j++) {
            out[c + j] = eb_requant(a[j], eb_ld32(mult + 4 * (c + j)), eb_ld32(shift + 4 * (c + j)),
                                    out_offset, act_min, act_max);
        }
    }
    for (; c < C; c++) {
        int32_t acc = eb_ld32(bias + 4 * c);
        const int8_t *w = filter + c;
        for (t = 0; t < taps; t++) {
            acc = eb_mac(acc, tap[t][c], *w);
            w += C;
        }
        out[c] = eb_requant(acc, eb_ld32(mult + 4 * c), eb_ld32(shift + 4 * c), out_offset, act_min,
                            act_max);
    }
}

/* Depthwise, one output pixel, any depth multiplier: output channel
 * oc = ic * M + m reads input channel ic. */
static void eb_dw_pixel(const eb_conv_params *p, const int8_t *const *tap, int32_t taps,
                        int8_t *out)
{
    const int32_t OC = p->out.c, M = p->depth_mult;
    const uint8_t *bias = p->chan, *mult = p->chan + 4 * (size_t)OC, *shift = p->chan + 8 * (size_t)OC;
    int32_t oc, t;
    for (oc = 0; oc < OC; oc++) {
        const int32_t ic = oc / M;
        int32_t acc = eb_ld32(bias + 4 * oc);
        const int8_t *w = p->filter + oc;
        for (t = 0; t < taps; t++) {
            acc = eb_mac(acc, tap[t][ic], *w);
            w += OC;
        }
        out[oc] = eb_requant(acc, eb_ld32(mult + 4 * oc), eb_ld32(shift + 4 * oc), p->out_offset,
                             p->act_min, p->act_max);
    }
}

/* Taps per block of the tap-pointer list (kept on the stack). */
#define EB_DW_TAPS 32

void eb_depthwise_s8(const eb_conv_params *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in.h, W = p->in.w, C = p->in.c;
    const int32_t OC = p->out.c, taps = p->kh * p->kw;
    const int8_t *tap[EB_DW_TAPS];
    int8_t *zrow = p->scratch;
    int32_t b, oy, ox, ky, kx;
#if EB_DSP_KERNELS
    if (eb_depthwise_s8_dsp(p, in, out)) {
        return;
    }
#endif
    /* padded taps read a row of input zero points (x' = zero point) */
    memset(zrow, (int8_t)(0u - (uint32_t)p->in_offset), (size_t)C);
    for (b = 0; b < p->out.n; b++) {
        const int8_t *in_b = in + (size_t)b * H * W * C;
        for (oy = 0; oy < p->out.h; oy++) {
            const int32_t iy0 = oy * p->sh - p->ph;
            for (ox = 0; ox < p->out.w; ox++) {
                const int32_t ix0 = ox * p->sw - p->pw;
                if (taps <= EB_DW_TAPS) {
                    int32_t t = 0;
                    for (ky = 0; ky < p->kh; ky++) {
                        const int32_t iy = iy0 + ky * p->dh;
                        const int row_ok = iy >= 0 && iy < H;
                        for (kx = 0; kx < p->kw; kx++) {
                            const int32_t ix = ix0 + kx * p->dw;
                            tap[t++] = (row_ok && ix >= 0 && ix < W)
                                           ? in_b + ((size_t)iy * W + ix) * C : zrow;
                        }
                    }
                    if (p->depth_mult == 1) {
                        eb_dw_pixel_m1(p, tap, taps, out);
                    } else {
                        eb_dw_pixel(p, tap, taps, out);
                    }
                } else {
                    /* large filters: accumulate rows of taps, one row at a time */
                    int32_t oc;
                    const uint8_t *bias = p->chan, *mult = p->chan + 4 * (size_t)OC;
                    const uint8_t *shift = p->chan + 8 * (size_t)OC;
                    for (oc = 0; oc < OC; oc++) {
                        const int32_t ic = oc / p->depth_mult;
                        int32_t acc = eb_ld32(bias + 4 * oc);
                        for (ky = 0; ky < p->kh; ky++) {
                            const int32_t iy = iy0 + ky * p->dh;
                            const int row_ok = iy >= 0 && iy < H;
                            const int8_t *w = p->filter + (size_t)ky * p->kw * OC + oc;
                            for (kx = 0; kx < p->kw; kx++) {
                                const int32_t ix = ix0 + kx * p->dw;
                                const int8_t *xp = (row_ok && ix >= 0 && ix < W)
                                                       ? in_b + ((size_t)iy * W + ix) * C : zrow;
                                acc = eb_mac(acc, xp[ic], w[(size_t)kx * OC]);
                            }
                        }
                        out[oc] = eb_requant(acc, eb_ld32(mult + 4 * oc), eb_ld32(shift + 4 * oc),
                                             p->out_offset, p->act_min, p->act_max);
                    }
                }
                out += OC;
            }
        }
    }
}

void eb_fc_s8(const eb_fc_params *p, const int8_t *in, int8_t *out)
{
    int32_t b;
    for (b = 0; b < p->batches; b++) {
        eb_matvec(in + (size_t)b * p->depth, p->filter, p->depth, p->units, p->chan, 1,
                  p->out_offset, p->act_min, p->act_max, out + (size_t)b * p->units);
    }
}
