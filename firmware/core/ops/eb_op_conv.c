/*
 * eb_op_conv.c - CONV_2D and DEPTHWISE_CONV_2D (int8, per channel).
 *
 * Same integers as TFLite's reference_integer_ops ConvPerChannel and
 * DepthwiseConvPerChannel: acc = bias + sum(w * (x + in_offset)) over the taps
 * inside the input, requantized with MultiplyByQuantizedMultiplier, clamped to
 * the fused activation's range. Rearranged (exactly, in integers) as
 * acc = bias' + sum(w * x') with bias' = bias + in_offset * sum(w) and
 * x' = x inside the input, x' = -in_offset (the input zero point) outside, so
 * the inner loops are plain dot products (eb_dot.h) with no per-MAC branch and
 * no per-MAC offset add.
 *
 * The kernels below are the portable ones. A build with an optimised kernel set
 * (core/kernels/<set>/, chosen by core.mk: the DSP kernels on Cortex-M cores
 * with the DSP extension) tries eb_conv_s8_opt / eb_depthwise_s8_opt first; they
 * give identical integers and hand a layer they do not handle back. Under QEMU
 * (-icount, Cortex-M4 build) CONV_2D runs at 1.5 to 1.8 emulated instructions per
 * MAC and DEPTHWISE_CONV_2D at 2.97 on the reference models
 * (benchmarks/engine_instructions.py, docs/firmware-ports.md).
 */
#include "eb_dot.h"
#include "eb_kernels_opt.h"
#include "eb_ops.h"

/* The portable kernels, out of line: their frames and the optimised kernel's
 * are never on the stack together (eb_conv_s8 and eb_depthwise_s8 call one or
 * the other). */
static EB_NOINLINE void conv_s8_portable(const eb_conv_params *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in.h, W = p->in.w, C = p->in.c;
    const int32_t OH = p->out.h, OW = p->out.w, OC = p->out.c;
    const int32_t K = p->kh * p->kw * C;
    const int8_t pad = (int8_t)(0u - (uint32_t)p->in_offset);   /* the input zero point */
    const int direct = eb_conv_direct(p);
    const int biased = eb_conv_biased(p);   /* blob format 3: then direct too */
    int32_t b, oy, ox;
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
                if (biased) {
                    eb_matvec_biased(col, p->filter, K, OC, p->chan, 0, p->out_offset, p->act_min,
                                     p->act_max, out);
                } else {
                    eb_matvec(col, p->filter, K, OC, p->chan, p->out_offset, p->act_min, p->act_max,
                              out);
                }
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

static EB_NOINLINE void depthwise_s8_portable(const eb_conv_params *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in.h, W = p->in.w, C = p->in.c;
    const int32_t OC = p->out.c, taps = p->kh * p->kw;
    const int8_t *tap[EB_DW_TAPS];
    int8_t *zrow = p->scratch;
    int32_t b, oy, ox, ky, kx;
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

void eb_conv_s8(const eb_conv_params *p, const int8_t *in, int8_t *out)
{
    if (!eb_conv_s8_opt(p, in, out)) {
        conv_s8_portable(p, in, out);
    }
}

void eb_depthwise_s8(const eb_conv_params *p, const int8_t *in, int8_t *out)
{
    if (!eb_depthwise_s8_opt(p, in, out)) {
        depthwise_s8_portable(p, in, out);
    }
}

eb_status eb_conv_check(const eb_view *v, const eb_layer *L, uint32_t k, eb_msg *msg)
{
    const int32_t fh = L->dfilt.h, fw = L->dfilt.w;
    if (!is_const(v, L->in[1]) || L->din.n != L->dout.n || !act_ok(L) || !conv_offsets_ok(L) ||
        !eb_apart(v, L->in[0], L->scratch_off, L->scratch_bytes) ||
        !eb_apart(v, L->out, L->scratch_off, L->scratch_bytes) ||
        !eb_window_ok(L->din.h, L->dout.h, fh, L->sh, L->dh, L->ph) ||
        !eb_window_ok(L->din.w, L->dout.w, fw, L->sw, L->dw, L->pw) ||
        !eb_chan_ok(v, L, (uint32_t)L->dout.c, 0)) {
        return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent convolution", k);
    }
    if (L->op == EB_OP_DEPTHWISE_CONV_2D) {
        if (L->dfilt.n != 1 || L->dfilt.c != L->dout.c || L->depth_mult < 1 ||
            L->din.c * L->depth_mult != L->dout.c) {
            return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent depthwise filter", k);
        }
        if (L->scratch_bytes < (uint32_t)L->din.c) {
            return eb_layer_fail(msg, EB_ERR_INVALID, "depthwise scratch too small", k);
        }
    } else {
        eb_conv_params cp;
        if (L->dfilt.n != L->dout.c || L->dfilt.c != L->din.c) {
            return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent convolution filter", k);
        }
        eb_conv_shape_of(L, &cp);
        if (!eb_conv_direct(&cp) && L->scratch_bytes < (uint32_t)(fh * fw * L->din.c)) {
            return eb_layer_fail(msg, EB_ERR_INVALID, "convolution scratch too small", k);
        }
    }
    return EB_OK;
}

void eb_conv_run(eb_model *m, const eb_view *v, const eb_layer *L)
{
    eb_conv_params p;
    eb_conv_params_of(m, v, L, &p);
    if (L->op == EB_OP_CONV_2D) {
        eb_conv_s8(&p, tensor_data(m, v, L->in[0]), tensor_data(m, v, L->out));
    } else {
        eb_depthwise_s8(&p, tensor_data(m, v, L->in[0]), tensor_data(m, v, L->out));
    }
}
