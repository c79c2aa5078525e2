/*
 * eb_kernels.h - INT8 kernels of the edgebench engine and their fixed-point
 * arithmetic, bit-exact with TFLite's reference kernels (reference_ops /
 * reference_integer_ops with gemmlowp fixed point; double rounding).
 *
 * Private to the engine's operators (ops/eb_op_<family>.c, one source per
 * operator family, each holding its kernels), the optimised kernel sets
 * (kernels/<set>/) and the unit tests (firmware/tests/test_kernels.c). Kernels never allocate and never read or
 * write outside the tensors described by their parameters; the engine checks
 * the parameters against the tensor sizes before the first call.
 */
#ifndef EB_KERNELS_H
#define EB_KERNELS_H

#include <stdint.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && \
    (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
#error "the edgebench engine reads little-endian int32 data in place"
#endif

/* Inlining a kernel's helper into it, or keeping one out of line. */
#if defined(__GNUC__)
#define EB_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define EB_ALWAYS_INLINE inline
#endif

#if defined(__GNUC__)
#define EB_NOINLINE __attribute__((noinline))
#else
#define EB_NOINLINE
#endif

/* ---- fixed-point helpers ------------------------------------------------ */

/* A 4-byte copy the compiler turns into one (unaligned-capable) load even
 * with -ffreestanding, where plain memcpy() stays a library call. */
#if defined(__GNUC__)
#define EB_COPY4(dst, src) __builtin_memcpy((dst), (src), 4)
#else
#define EB_COPY4(dst, src) memcpy((dst), (src), 4)
#endif

/* int32 load from any alignment (blob data is read in place). */
static inline int32_t eb_ld32(const void *p)
{
    int32_t v;
    EB_COPY4(&v, p);
    return v;
}

/* gemmlowp SaturatingRoundingDoublingHighMul: a * b / 2^31 rounded to
 * nearest with ties toward +infinity (the nudge is 2^30 for a non-negative
 * product, 1 - 2^30 for a negative one, then the quotient truncates), and the
 * single overflow case INT32_MIN * INT32_MIN saturated to INT32_MAX. */
static inline int32_t eb_srdhm(int32_t a, int32_t b)
{
    if (a == INT32_MIN && b == INT32_MIN) {
        return INT32_MAX;
    }
    /* gemmlowp: (ab + nudge) / 2^31 truncated toward zero. For ab < 0 the
     * nudge is 1 - 2^30 and truncation adds 2^31 - 1 before flooring, so
     * both signs reduce to one floor: (ab + 2^30) >> 31 (arithmetic). */
    return (int32_t)(((int64_t)a * (int64_t)b + ((int64_t)1 << 30)) >> 31);
}

/* gemmlowp RoundingDivideByPOT: x / 2^e rounded to nearest, ties away from
 * zero (e in 0..31). */
static inline int32_t eb_rdbypot(int32_t x, int32_t e)
{
    const int32_t mask = (int32_t)((1u << e) - 1u);
    const int32_t rem = x & mask;
    const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> e) + (rem > threshold ? 1 : 0);
}

/* TFLite MultiplyByQuantizedMultiplier (double rounding): x * m * 2^shift
 * with m a Q31 multiplier; shift > 0 shifts left before the multiply,
 * shift <= 0 divides (rounding) after it. shift in -31..30. */
static inline int32_t eb_mbqm(int32_t x, int32_t m, int32_t shift)
{
    const int32_t left = shift > 0 ? shift : 0;
    const int32_t right = shift > 0 ? 0 : -shift;
    return eb_rdbypot(eb_srdhm((int32_t)((uint32_t)x << left), m), right);
}

/* gemmlowp SaturatingRoundingMultiplyByPOT: x * 2^e, saturating for e > 0,
 * rounding (RoundingDivideByPOT) for e < 0. */
static inline int32_t eb_srmbypot(int32_t x, int32_t e)
{
    int32_t threshold;
    if (e == 0) {
        return x;
    }
    if (e < 0) {
        return eb_rdbypot(x, -e);
    }
    threshold = (int32_t)(((uint32_t)1 << (31 - e)) - 1u);
    if (x > threshold) {
        return INT32_MAX;
    }
    if (x < -threshold) {
        return INT32_MIN;
    }
    return (int32_t)((uint32_t)x << e);
}

/* Requantize an int32 accumulator to int8: multiplier, output offset and the
 * fused activation clamp. Clamped before the offset is added, so a result near
 * the int32 limits cannot overflow (TFLite adds first, undefined there; equal
 * wherever TFLite's sum fits). Needs |out_offset| and the clamp bounds small
 * (int8 zero points, checked by eb_model_init). */
static inline int8_t eb_requant(int32_t acc, int32_t m, int32_t shift, int32_t out_offset,
                                int32_t act_min, int32_t act_max)
{
    int32_t v = eb_mbqm(acc, m, shift);
    v = v < act_min - out_offset ? act_min - out_offset : v;
    v = v > act_max - out_offset ? act_max - out_offset : v;
    return (int8_t)(v + out_offset);
}

/* Clamp v to [lo, hi]. */
static inline int32_t eb_clamp(int32_t v, int32_t lo, int32_t hi)
{
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
}

/* int32 addition modulo 2^32: the reference's result wherever its sum is defined, and
 * defined (UBSan-clean) for any blob */
static inline int32_t eb_wadd(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* round(acc * S) as C computes it in IEEE-754 binary64: the product rounded
 * to 53 significant bits (to nearest, ties to even), then rounded to an
 * integer with ties away from zero; saturated to the int32 range. S is given
 * by its binary64 bit pattern (s_hi:s_lo) and must be a positive normal
 * number. Integer arithmetic only: this is how the engine reproduces
 * LiteRT's reference FULLY_CONNECTED, which rescales in double precision
 * (acc * (input_scale * filter_scale / output_scale)) instead of using a
 * fixed-point multiplier. */
int32_t eb_mul_round_f64_exact(int32_t acc, uint32_t s_lo, uint32_t s_hi);

/* eb_mul_round_f64: a fast path for the common case, exact by an interval
 * argument, and the exact 85-bit product of eb_rescale.c otherwise.
 *   With S = m * 2^e (m the 53-bit significand), a = |acc| <= 2^31, M = m >> 21
 *   (32 bits) and F = -(e + 21), the exact product in units of 2^-F is
 *   N = a * M + f, 0 <= f = a * (m mod 2^21) / 2^21 < a. The binary64 product
 *   differs from it by at most 2^-53 of itself, < 2^10 + 1 units (N < 2^63 + 2^31).
 *   round() of a positive x is floor(x + 1/2), so with H = 2^(F-1) the result lies
 *   between floor((a*M + H - 2^11) / 2^F) and floor((a*M + H + a + 2^11) / 2^F):
 *   when the two agree (and the result is far from saturation) it is that number,
 *   else the exact path decides. For 33 <= F <= 63 nothing overflows 64 bits, H is
 *   a high-word addition and the bounds are high words shifted by F - 32. The
 *   usual FULLY_CONNECTED factor (2^-20 < S < 2^-1) has F in that range, and the
 *   bounds disagree only within about (|acc| + 2^12) / 2^F of a tie. */
typedef struct {
    uint32_t M, hh, sh;   /* m >> 21, 2^(F-33), F - 32 */
} eb_f64_fast;

/* the fast path's constants of the factor s_hi:s_lo; 0 when F is out of its range */
static inline int eb_f64_fast_init(uint32_t s_lo, uint32_t s_hi, eb_f64_fast *q)
{
    const int32_t F = 1054 - (int32_t)((s_hi >> 20) & 0x7FFu);
    if ((uint32_t)(F - 33) > 30u) {
        return 0;
    }
    q->M = (((s_hi & 0xFFFFFu) | 0x100000u) << 11) | (s_lo >> 21);
    q->hh = 1u << (uint32_t)(F - 33);
    q->sh = (uint32_t)(F - 32);
    return 1;
}

/* the fast path: 1 and *r = round(acc * S) when the bounds agree, else 0 */
static inline int eb_f64_fast_mul(int32_t acc, const eb_f64_fast *q, int32_t *r)
{
    const uint32_t a = acc < 0 ? 0u - (uint32_t)acc : (uint32_t)acc;
    const uint64_t P = (uint64_t)a * q->M + ((uint64_t)q->hh << 32);
    const uint32_t lo = (uint32_t)((P - 2048u) >> 32) >> q->sh;
    const uint32_t hi = (uint32_t)((P + a + 2048u) >> 32) >> q->sh;
    if (lo != hi || lo >= 0x40000000u) {
        return 0;
    }
    *r = acc < 0 ? -(int32_t)lo : (int32_t)lo;
    return 1;
}

static inline int32_t eb_mul_round_f64(int32_t acc, uint32_t s_lo, uint32_t s_hi)
{
    eb_f64_fast q;
    int32_t r;
    if (eb_f64_fast_init(s_lo, s_hi, &q) && eb_f64_fast_mul(acc, &q, &r)) {
        return r;
    }
    return eb_mul_round_f64_exact(acc, s_lo, s_hi);
}

/* gemmlowp exp_on_negative_values for FixedPoint<int32, 5> input
 * (a <= 0, 26 fractional bits); result in Q0.31. */
int32_t eb_exp_on_negative_values(int32_t a);

/* gemmlowp one_over_one_plus_x_for_x_in_0_1, Q0.31 in and out. */
int32_t eb_one_over_one_plus_x(int32_t a);

/* ---- kernels ------------------------------------------------------------ */

typedef struct {
    int32_t n, h, w, c;   /* NHWC; lower-rank tensors are right-aligned */
} eb_dims;

/* CONV_2D and DEPTHWISE_CONV_2D. chan points at the per-channel arrays
 * i32 bias'[oc], i32 multiplier[oc], i32 shift[oc] (any alignment), where
 * bias' = bias + in_offset * (sum of the channel's weights): padded taps then
 * behave as inputs equal to the input zero point, as in the reference. */
typedef struct {
    eb_dims in, out;
    int32_t kh, kw;            /* filter */
    int32_t sh, sw, dh, dw;    /* stride, dilation */
    int32_t ph, pw;            /* padding before the first row/column */
    int32_t depth_mult;        /* depthwise only */
    int32_t in_offset, out_offset, act_min, act_max;
    const int8_t *filter;      /* conv [oc][kh][kw][ic] blocked by 4 output channels
                                  (eb_block_filter order); depthwise [kh][kw][oc] */
    const uint8_t *chan;
    int8_t *scratch;           /* conv: kh*kw*ic bytes unless eb_conv_direct();
                                  depthwise: ic bytes (a row of input zero points) */
} eb_conv_params;

/* Filters of CONV_2D and FULLY_CONNECTED as the blob stores them: rows of
 * `depth` weights, one per output channel, in blocks of four rows; inside a
 * block, for each group of four weights the four rows' bytes one after the
 * other, then the depth % 4 last weights of each row; the rows % 4 last rows
 * plain. eb_block_filter() writes that order from plain rows (the host
 * converter does the same; used by the unit tests). */
void eb_block_filter(const int8_t *plain, int32_t rows, int32_t depth, int8_t *blocked);

/* 1 when the convolution reads its input in place (1x1, no padding, every
 * window inside the input) and needs no scratch. */
int eb_conv_direct(const eb_conv_params *p);
/* 1 when the blob stores the convolution's filter BIASED (blob format 3: 1x1, no
 * padding, a multiple of four input channels; even input-channel positions
 * stored w ^ 0x80 and bias'' = bias' + 128 * sum(odd w), as FULLY_CONNECTED's:
 * firmware/BLOB.md). The converter applies the same rule
 * (edgebench/mcu/ops/conv.py); every kernel that takes such a layer reads it so. */
int eb_conv_biased(const eb_conv_params *p);
/* Gather one receptive field into col (kh*kw*c bytes, [ky][kx][c] order as the
 * filter), padded taps set to pad (eb_conv_util.c). */
void eb_im2col(const eb_conv_params *p, const int8_t *in_b, int32_t iy0, int32_t ix0, int8_t pad,
               int8_t *col);
void eb_conv_s8(const eb_conv_params *p, const int8_t *in, int8_t *out);
void eb_depthwise_s8(const eb_conv_params *p, const int8_t *in, int8_t *out);

/* FULLY_CONNECTED. chan: i32 bias'[units] as for convolutions (plus 128 times
 * the sum of the unit's odd-position weights, see eb_op_fully_connected.c), then the
 * binary64 rescale factor of each unit as two u32 arrays, low words[units]
 * and high words[units] (see eb_mul_round_f64). */
typedef struct {
    int32_t batches, depth, units;
    int32_t in_offset, out_offset, act_min, act_max;
    int32_t one_factor;        /* 1: every unit's factor is the same (blob p2, checked at init) */
    const int8_t *filter;      /* [units][depth] blocked as for CONV_2D, even depth
                                * positions biased (w ^ 0x80; firmware/BLOB.md) */
    const uint8_t *chan;
} eb_fc_params;

void eb_fc_s8(const eb_fc_params *p, const int8_t *in, int8_t *out);

/* Static RAM of the build's kernel set (kernels/<set>/): the DSP kernels'
 * scratch (EB_DSP_SCRATCH_BYTES, kernels/dsp/eb_dsp.h), 0 for the portable set.
 * Counted in eb-info's ram-bytes. */
size_t eb_kernels_ram_bytes(void);

typedef struct {
    eb_dims in, out;
    int32_t kh, kw, sh, sw, ph, pw;
    int32_t act_min, act_max;
} eb_pool_params;

void eb_avgpool_s8(const eb_pool_params *p, const int8_t *in, int8_t *out);
void eb_maxpool_s8(const eb_pool_params *p, const int8_t *in, int8_t *out);

typedef struct {
    eb_dims in1, in2, out;     /* in1/in2 dims equal out's or 1 (broadcast) */
    int32_t in1_offset, in2_offset, out_offset, left_shift;
    int32_t in1_mult, in1_shift, in2_mult, in2_shift, out_mult, out_shift;
    int32_t act_min, act_max;
} eb_add_params;

void eb_add_s8(const eb_add_params *p, const int8_t *in1, const int8_t *in2, int8_t *out);

typedef struct {
    int32_t rows, depth;       /* softmax over the last dimension */
    int32_t in_mult, in_left_shift, diff_min;
} eb_softmax_params;

void eb_softmax_s8(const eb_softmax_params *p, const int8_t *in, int8_t *out);

/* ---- operators of engine version 2 ------------------------------------- */

/* Element-wise binary operators with broadcasting (a dimension of 1 repeats),
 * using eb_add_params: ADD (eb_add_s8's broadcast path); SUB as TFLite's
 * reference (the ADD scheme, the scaled second input subtracted); MUL with in1/in2 offsets, out_mult/out_shift of
 * s1*s2/s_out; MAXIMUM/MINIMUM on the raw int8 values (TFLite does not
 * rescale them). */
enum { EB_BIN_ADD, EB_BIN_SUB, EB_BIN_MUL, EB_BIN_MAX, EB_BIN_MIN };
void eb_binary_s8(int kind, const eb_add_params *p, const int8_t *in1, const int8_t *in2,
                  int8_t *out);

/* QUANTIZE (int8 -> int8), RELU, RELU6, RELU_N1_TO_1, LEAKY_RELU:
 * out = clamp(out_zp + MultiplyByQuantizedMultiplier(x - in_zp, m, shift)),
 * with (m, shift) for x - in_zp >= 0 and (m_neg, shift_neg) below (equal
 * except for LEAKY_RELU, whose negative side carries alpha). */
typedef struct {
    int32_t count, in_zp, out_zp, mult, shift, mult_neg, shift_neg, act_min, act_max;
} eb_requant_params;

void eb_requant_s8(const eb_requant_params *p, const int8_t *in, int8_t *out);

/* MEAN over the dimensions in axis_mask (bit 0 N, 1 H, 2 W, 3 C of the
 * right-aligned 4-D shape); output in row-major order of the kept ones.
 * LiteRT's reference_ops::QuantizedMeanOrSum: the int32 sum of (x - in_zp)
 * (wrapping), out = clamp(MultiplyByQuantizedMultiplier(sum, mult, shift) +
 * out_zp), where (mult, shift) is in_scale / out_scale with 1/count folded in
 * as the reference does it (computed on the host). */
typedef struct {
    eb_dims in;
    int32_t axis_mask, in_zp, out_zp, mult, shift;
} eb_mean_params;

void eb_mean_s8(const eb_mean_params *p, const int8_t *in, int8_t *out);

/* LOGISTIC, TANH, HARD_SWISH: out = lut[x + 128], the 256-entry table computed on
 * the host exactly as LiteRT's reference computes the operator for each int8 input. */
void eb_lut_s8(const int8_t *lut, int32_t count, const int8_t *in, int8_t *out);

/* RESIZE_NEAREST_NEIGHBOR / RESIZE_BILINEAR (reference_ops::ResizeBilinearInteger):
 * map holds int32 lower[n], upper[n], fraction[n] (n = out.h + out.w: rows, then
 * columns; fraction in 1/1024, the reference's input_y - 1024*y0), any alignment.
 * Bilinear: the four taps weighted in 2^-20, rounded half away from zero
 * ((s +- 2^19) / 2^20 truncated). Nearest: out = in[lower_y][lower_x]. */
typedef struct {
    eb_dims in, out;
    const uint8_t *map;
    int32_t nearest;
} eb_resize_params;

void eb_resize_s8(const eb_resize_params *p, const int8_t *in, int8_t *out);

/* TRANSPOSE_CONV with eb_conv_params (dilation, depth multiplier and scratch unused):
 * filter [OC][KH][KW][IC] plain (not blocked), chan i32 bias[OC] (not folded: the
 * taps that reach an output vary), multiplier[OC], shift[OC]; ph/pw the padding
 * TFLite computes for the output size. */
void eb_transpose_conv_s8(const eb_conv_params *p, const int8_t *in, int8_t *out);

/* TRANSPOSE, SLICE, STRIDED_SLICE: out[n][h][w][c] = in[base + n*st[0] + h*st[1]
 * + w*st[2] + c*st[3]] (strides in elements, may be negative; checked to stay
 * inside the input before the first call). */
typedef struct {
    eb_dims out;
    int32_t base, st[4];
} eb_gather_params;

void eb_gather_s8(const eb_gather_params *p, const int8_t *in, int8_t *out);

/* PAD / PADV2: the input placed at `before` (N, H, W, C) inside the output,
 * every other byte `value`. */
typedef struct {
    eb_dims in, out;
    int32_t before[4];
    int32_t value;
} eb_pad_params;

void eb_pad_s8(const eb_pad_params *p, const int8_t *in, int8_t *out);

/* CONCATENATION of n inputs along one axis: outer = product of the dims
 * before the axis, inner[i] = bytes of input i from the axis on. */
void eb_concat_s8(int32_t n, const int8_t *const *in, const int32_t *inner, int32_t outer,
                  int8_t *out);

#endif /* EB_KERNELS_H */
