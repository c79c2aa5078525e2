/*
 * eb_conv_stem_dsp.c - CONV_2D stems on cores with the DSP extension: layers whose
 * kernel rows are whole groups of four input bytes (KW*C % 4 == 0: KWS's 10x4
 * one-channel stem, a row of 4 bytes) and whose windows reach the padding along W.
 *
 * eb_conv_s8_opt's general path widens a window from the input rows only when its
 * columns are inside the input; the others (KWS: the first and last of five output
 * columns, 40 % of the windows) go through eb_im2col and a second widening pass,
 * about 1,000 instructions a pixel against 2,560 MACs. Here the input rows a band of
 * output rows reads are copied once into a plane padded with the input zero point
 * (-in_offset) on every side a window reaches, so that every window is inside the
 * plane: its field is KH runs of KW*C bytes, `rs` bytes apart, widened straight into
 * the two-pixel layout of eb_conv_dsp.c (word 4g + 2*slot: (x0, x2), 4g + 2*slot + 1:
 * (x1, x3) of group g) with one LDR, two SXTB16 and two stores a group. Padded taps
 * read the zero point, which is what the reference's padding means (bias' already
 * holds in_offset * sum(w), firmware/core/eb_kernels.h), so the sums are exactly
 * those of eb_conv_s8. The channel loop is eb_mm_blocks on the blob's blocked filter
 * and eb_conv_requant_tbl2 (doubled-sum table, no fix-up list), as the general path.
 *
 * Scratch (EB_DSP_SCRATCH_BYTES): the two fields (4*K bytes), the sums (8*OC), the
 * requantisation table (12*OC), the odd last pixel's unused outputs (OC, rounded up
 * to 4), then the plane: rows of Wp*C bytes, Wp = (OW-1)*sw + KW, as many output rows
 * a band as fit (KWS: 58 rows of 12 bytes, the whole plane, 696 bytes; 2,216 in all).
 */
#include <string.h>
#include "eb_conv_dsp.h"

/* One field: KH runs of ngr groups (4*ngr bytes) at s, rs bytes apart, widened into
 * slot words d[0], d[1], d += 4 per group. */
static void eb_stem_field(const int8_t *s, int32_t rs, int32_t kh, int32_t ngr, uint32_t *d)
{
    int32_t ky, g;
    if (ngr == 1) {
        /* a one-channel row of four taps: one word a row */
        const int8_t *const end = s + (size_t)kh * rs;
        do {
            const uint32_t v = eb_ldw(s);
            d[0] = (uint32_t)eb_sx02(v);
            d[1] = (uint32_t)eb_sx13(v);
            d += 4;
            s += rs;
        } while (s != end);
        return;
    }
    for (ky = 0; ky < kh; ky++) {
        const int8_t *r = s + (size_t)ky * rs;
        for (g = 0; g < ngr; g++) {
            const uint32_t v = eb_ldw(r);
            d[0] = (uint32_t)eb_sx02(v);
            d[1] = (uint32_t)eb_sx13(v);
            d += 4;
            r += 4;
        }
    }
}

/* Rows [iy0, iy0 + nrows) of input image in_b (H rows of W*C bytes) into the plane
 * (rows of Wp*C bytes): plane column j is input column j - pw, the zero point pad
 * outside the input. */
static void eb_stem_plane(const eb_conv_params *p, const int8_t *in_b, int32_t iy0, int32_t nrows,
                          int32_t Wp, int8_t pad, int8_t *plane)
{
    const int32_t H = p->in.h, W = p->in.w, C = p->in.c, pw = p->pw;
    const int32_t left = pw < Wp ? pw : Wp;
    const int32_t n = (Wp - left < W ? Wp - left : W);
    const size_t rb = (size_t)Wp * C;
    int32_t r;
    for (r = 0; r < nrows; r++, plane += rb) {
        const int32_t iy = iy0 + r;
        if (iy < 0 || iy >= H) {
            memset(plane, pad, rb);
            continue;
        }
        memset(plane, pad, (size_t)left * C);
        memcpy(plane + (size_t)left * C, in_b + (size_t)iy * W * C, (size_t)n * C);
        memset(plane + (size_t)(left + n) * C, pad, rb - (size_t)(left + n) * C);
    }
}

int eb_conv_stem_rows(const eb_conv_params *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in.h, W = p->in.w, C = p->in.c;
    const int32_t OH = p->out.h, OW = p->out.w, OC = p->out.c;
    const int32_t K = p->kh * p->kw * C, G = K >> 2, ngr = (p->kw * C) >> 2;
    const int32_t Wp = (OW - 1) * p->sw + p->kw;
    const size_t rb = (size_t)Wp * C;
    const int8_t pad = (int8_t)(0u - (uint32_t)p->in_offset);
    uint32_t *const xq = eb_dsp_buf;
    int32_t *const acc = (int32_t *)(void *)(xq + 4 * G);
    int32_t *const tbl = acc + 2 * OC;
    int8_t *const col = (int8_t *)(void *)(tbl + 3 * OC);
    int8_t *const plane = col + ((OC + 3) & ~3);
    const size_t fixed = (size_t)(plane - (int8_t *)(void *)eb_dsp_buf);
    int32_t nb, b, oy0;
    if (p->dh != 1 || p->dw != 1 || ((p->kw * C) & 3) != 0 || K <= 16 || (OC & 3) != 0 ||
        (p->pw == 0 && Wp <= W) || fixed >= EB_DSP_SCRATCH_BYTES) {
        return 0;
    }
    /* output rows a band: (nb - 1) * sh + KH plane rows must fit */
    nb = (int32_t)((EB_DSP_SCRATCH_BYTES - fixed) / rb);
    nb = nb < p->kh ? 0 : (nb - p->kh) / p->sh + 1;
    if (nb < 1) {
        return 0;
    }
    nb = nb < OH ? nb : OH;
    if (!eb_requant_table2(OC, p->chan, K, p->out_offset, p->act_min, p->act_max, tbl, p, NULL, 0)) {
        return 0;
    }
    for (b = 0; b < p->out.n; b++) {
        const int8_t *const in_b = in + (size_t)b * H * W * C;
        for (oy0 = 0; oy0 < OH; oy0 += nb) {
            const int32_t rows = OH - oy0 < nb ? OH - oy0 : nb;
            const int32_t npix = rows * OW;
            int32_t pi, oy = 0, ox = 0;
            eb_stem_plane(p, in_b, oy0 * p->sh - p->ph, (rows - 1) * p->sh + p->kh, Wp, pad, plane);
            /* pixel pairs in the band's order; an odd last pixel widened twice, its
             * second outputs into col */
            for (pi = 0; pi < npix; pi += 2) {
                int8_t *const o0 = out + (size_t)pi * OC;
                int8_t *const o1 = pi + 1 < npix ? o0 + OC : col;
                int32_t slot;
                for (slot = 0; slot < 2; slot++) {
                    eb_stem_field(plane + (size_t)oy * p->sh * rb + (size_t)ox * p->sw * C, (int32_t)rb, p->kh,
                                  ngr, xq + 2 * slot);
                    if (pi + 1 < npix && ++ox == OW) {
                        ox = 0;
                        oy++;
                    }
                }
                eb_mm_blocks(xq, G, p->filter, p->chan, OC >> 2, acc);
                eb_conv_requant_tbl2(acc, OC, tbl, o0, o1);
            }
            out += (size_t)npix * OC;
        }
    }
    return 1;
}
