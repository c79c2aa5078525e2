/*
 * eb_depthwise_conv_dsp.c - DEPTHWISE_CONV_2D on cores with the DSP extension
 * (the kernel set of kernels/dsp/, see eb_dsp.c): depth multiplier 1 with a
 * three-tap axis of stride and dilation 1, or a 3x3 filter of stride 2 along W
 * (MobileNet's downsampling layers), a channel's plane widened to int16 a band of
 * lines at a time. eb_depthwise_s8_opt returns 0 (the portable kernel
 * runs) for any other layer or when not even one output line fits the scratch.
 */
#include "eb_depthwise_dsp.h"
#include "eb_kernels_opt.h"

/* ---- DEPTHWISE_CONV_2D -----------------------------------------------------
 * Depth multiplier 1 with a filter axis of three taps, stride 1 and dilation 1
 * (the "line" axis: W, or H when W does not qualify or H is the longer output
 * axis). One channel at a time: the channel's input plane (a band of lines at
 * a time) is widened to int16 with its padding, so along a line two adjacent
 * inputs are one word. Two adjacent outputs of a line, per cross-axis tap:
 *   out0 = SMLAD(x[j..j+1], (w0, w1)) + x[j+2] * w2
 *   out1 = x[j+1] * w0 + SMLAD(x[j+2..j+3], (w1, w2))
 * = 2 loads and 4 multiply-accumulates for 6 MACs; the channel's weights stay
 * in registers. With stride 1 the sums start from 2 * bias on doubled weights, so
 * they come out as the doubled sums t = 2 * (acc + bias) the requantisation takes
 * (eb_depthwise_rq_dsp.c: 4 instructions an output for shifts 3..9).
 *
 * Per layer: both planes filled with the input zero point once (padding columns and,
 * with one band, padding lines are never written again); per band: the line steps
 * of the kernels and the requantisation (eb_dw_ctl, eb_dw_rqctl); per pair of
 * channels: the inside positions widened (eb_dw_widen2), then per channel its
 * weights and constants, the sums and their requantisation, one asm call each.
 * Lines of up to 28 outputs with dilation 1 sit in lines of 32 positions and take
 * eb_dw_lines3_w32 (rows at immediate offsets, one LDRD per row: 18 instructions per
 * 18 MACs instead of 21). (Four channels per word - SXTB16 of an NHWC word, one
 * multiply per MAC and no pairing of horizontal taps - costs about 2.25 instructions
 * a MAC on paper against about 1.2 here; what remains per output is the
 * requantisation and the widening.) 3x3 layers of stride 2, and of stride 1 with
 * suitable widths, take the tiles of eb_depthwise_small_dsp.c first. */

typedef struct {
    int32_t Li, Lo, Lp, Ls, OLs;          /* line axis: in/out length, padding, in/out strides */
    int32_t Ci, Co, Ck, Cs, Cd, Cp, CSs, OCs;   /* cross axis: in/out, taps, stride, dilation, pad,
                                                   in/out strides */
    int32_t wl, wc;                       /* weight strides (bytes) along line / cross taps */
} eb_dw_geom;

/* Line-to-line steps of eb_dw_lines3 / eb_dw_lines3_s2, read by their outer loop,
 * set once per band (one layer runs at a time; its address goes into the asm as
 * an immediate, so no register is needed for it). */
static struct {
    int32_t row_delta;      /* bytes from the end of a line's pairs to the next line's rows */
    int32_t line_bytes;     /* bytes of accumulators per line */
    int32_t *final;         /* end of the last line's accumulators */
} eb_dw_ctl;

/* The end of a pass of eb_dw_lines3 / eb_dw_lines3_w32 / eb_dw_lines3_s2: store the
 * pair of sums, loop over the line, then step the row pointers (STEP: one ADD of a0
 * to each) and the line's end by eb_dw_ctl and loop over the lines (9 instructions
 * from one line to the next with one row pointer, 11 with three). */
#define EB_DW_LINE_END_STEP(STEP)                         \
    "strd   %[a0], %[a1], [%[ap]], #8\n\t"               \
    "cmp    %[ap], %[end]\n\t"                           \
    "bne    1b\n\t"                                      \
    "movw   %[X], #:lower16:%c[ctl]\n\t"                 \
    "movt   %[X], #:upper16:%c[ctl]\n\t"                 \
    "ldr    %[a0], [%[X]]\n\t"                           \
    "ldr    %[a1], [%[X], #4]\n\t"                       \
    "ldr    %[X], [%[X], #8]\n\t"                        \
    STEP                                                  \
    "add    %[end], %[end], %[a1]\n\t"                   \
    "cmp    %[ap], %[X]\n\t"                             \
    "bne    1b\n\t"
#define EB_DW_LINE_END                                    \
    EB_DW_LINE_END_STEP("add    %[x0], %[x0], %[a0]\n\t"  \
                        "add    %[x1], %[x1], %[a0]\n\t"  \
                        "add    %[x2], %[x2], %[a0]\n\t")
#define EB_DW_LINE_END1 EB_DW_LINE_END_STEP("add    %[x], %[x], %[a0]\n\t")

/* The registers eb_dw_lines3 and eb_dw_lines3_w32 pin alike: 2 * bias (r2), the
 * accumulators' pointer and the line's end (r3, r4), the taps' pairs (r5-r10), the
 * two sums (r11, r12) and the load word X (lr). */
#define EB_DW_LINES3_PINS(W, ACC, LP2)                          \
    register uint32_t b2 __asm__("r2") = (W)[6];                \
    register int32_t *ap __asm__("r3") = (ACC);                 \
    register int32_t *aend __asm__("r4") = (ACC) + (LP2);       \
    register uint32_t p0 __asm__("r5") = (W)[0];                \
    register uint32_t q0 __asm__("r6") = (W)[1];                \
    register uint32_t p1 __asm__("r7") = (W)[2];                \
    register uint32_t q1 __asm__("r8") = (W)[3];                \
    register uint32_t p2 __asm__("r9") = (W)[4];                \
    register uint32_t q2 __asm__("r10") = (W)[5];               \
    register int32_t a0 __asm__("r11");                         \
    register int32_t a1 __asm__("r12");                         \
    register uint32_t X __asm__("lr")

/* For the band's lines (eb_dw_ctl): acc[line][0..Lp2) = w[6] + the sum over three
 * cross taps (rows x, x + rs and x + 2 * rs bytes of the first line; each next
 * line's rows are Cs plane lines further), Lp2 = Lo rounded up to even; w[0..5] = the taps' pairs
 * (p0, q0, p1, q1, p2, q2: (w0, w1) and (w1, w2) of each cross tap). On doubled
 * weights from w[6] = 2 * bias the sums are the doubled sums with the bias that
 * eb_dw_rq_lines_t requantises. The three rows through one pointer and the
 * register rs (LDR [x, rs] and [x, rs, LSL #1]): that frees the register which
 * carries w[6] into the first multiply-accumulates. Two outputs per pass: 6 loads,
 * 12 multiply-accumulates and one store pair for 18 MACs; 9 instructions from
 * one line to the next. Hand-scheduled with pinned registers (all 14). */
static void eb_dw_lines3(const int16_t *x, const uint32_t *w, int32_t rs, int32_t lp2, int32_t *acc)
{
    register const int16_t *xp __asm__("r0") = x;
    register int32_t rr __asm__("r1") = rs;
    EB_DW_LINES3_PINS(w, acc, lp2);
    __asm__ volatile(
        "1:\n\t"
        "ldr    %[X], [%[x], %[rs]]\n\t"
        "smlad  %[a0], %[X], %[p1], %[b2]\n\t"
        "smlatb %[a1], %[X], %[p1], %[b2]\n\t"
        "ldr    %[X], [%[x], %[rs], lsl #1]\n\t"
        "smlad  %[a0], %[X], %[p2], %[a0]\n\t"
        "smlatb %[a1], %[X], %[p2], %[a1]\n\t"
        "ldr    %[X], [%[x]], #4\n\t"
        "smlad  %[a0], %[X], %[p0], %[a0]\n\t"
        "smlatb %[a1], %[X], %[p0], %[a1]\n\t"
        "ldr    %[X], [%[x]]\n\t"
        "smlabt %[a0], %[X], %[q0], %[a0]\n\t"
        "smlad  %[a1], %[X], %[q0], %[a1]\n\t"
        "ldr    %[X], [%[x], %[rs]]\n\t"
        "smlabt %[a0], %[X], %[q1], %[a0]\n\t"
        "smlad  %[a1], %[X], %[q1], %[a1]\n\t"
        "ldr    %[X], [%[x], %[rs], lsl #1]\n\t"
        "smlabt %[a0], %[X], %[q2], %[a0]\n\t"
        "smlad  %[a1], %[X], %[q2], %[a1]\n\t"
        EB_DW_LINE_END1
        : [x] "+r"(xp), [ap] "+r"(ap), [end] "+r"(aend), [a0] "=&r"(a0), [a1] "=&r"(a1), [X] "=&r"(X)
        : [rs] "r"(rr), [b2] "r"(b2), [p0] "r"(p0), [q0] "r"(q0), [p1] "r"(p1), [q1] "r"(q1), [p2] "r"(p2),
          [q2] "r"(q2), [ctl] "i"(&eb_dw_ctl)
        : "cc", "memory");
}

/* eb_dw_lines3 on planes of lines of EB_DW_W32 int16 (dilation 1): the three rows
 * are immediate offsets from one pointer (64 and 128 bytes), so the register of the
 * row stride holds a second load word and each row is one LDRD of x[j..j+3]:
 *   a0 += SMLAD(x[j..j+1], (w0, w1)) + x[j+2] * w2,  a1 += x[j+1] * w0 + SMLAD(x[j+2..j+3], (w1, w2))
 * 3 loads, 12 multiply-accumulates and one store pair per pass: 18 instructions for
 * 18 MACs instead of 21 (KWS's lines of 25 along H). Same register plan as
 * eb_dw_lines3 with Y (lr) in place of rs. */
#define EB_DW_W32 32
static void eb_dw_lines3_w32(const int16_t *x, const uint32_t *w, int32_t lp2, int32_t *acc)
{
    register const int16_t *xp __asm__("r0") = x;
    EB_DW_LINES3_PINS(w, acc, lp2);
    register uint32_t Y __asm__("r1");
    __asm__ volatile(
        "1:\n\t"
        EB_DW_ROW_LDRD("#64", "p1", "q1", "b2", "b2")
        EB_DW_ROW_LDRD("#128", "p2", "q2", "a0", "a1")
        "ldrd   %[X], %[Y], [%[x]], #4\n\t"
        "smlad  %[a0], %[X], %[p0], %[a0]\n\t"
        "smlatb %[a1], %[X], %[p0], %[a1]\n\t"
        "smlabt %[a0], %[Y], %[q0], %[a0]\n\t"
        "smlad  %[a1], %[Y], %[q0], %[a1]\n\t"
        EB_DW_LINE_END1
        : [x] "+r"(xp), [ap] "+r"(ap), [end] "+r"(aend), [a0] "=&r"(a0), [a1] "=&r"(a1), [X] "=&r"(X),
          [Y] "=&r"(Y)
        : [b2] "r"(b2), [p0] "r"(p0), [q0] "r"(q0), [p1] "r"(p1), [q1] "r"(q1), [p2] "r"(p2), [q2] "r"(q2),
          [ctl] "i"(&eb_dw_ctl)
        : "cc", "memory");
}

/* eb_dw_lines3 with stride 2 along the line: output j reads line positions 2j,
 * 2j + 1, 2j + 2, so x[2j..2j+1] is one word of the widened line:
 *   out0 = SMLAD(x[2j..2j+1], (w0, w1)) + x[2j+2] * w2
 *   out1 = SMLAD(x[2j+2..2j+3], (w0, w1)) + x[2j+4] * w2
 * per cross tap one LDRD, one LDR and four multiplies for 6 MACs: the same 21
 * instructions per 18 MACs as stride 1. The three w2 taps ride in two words (q01:
 * rows 0 and 1 in the low and high halves, q2: row 2 in the high half), which frees
 * the second load register. The plane's lines are 2 * Lp2 + 2 positions. */
static void eb_dw_lines3_s2(const int16_t *r0, const int16_t *r1, const int16_t *r2, const uint32_t *w01,
                            const uint32_t *w12, int32_t lp2, int32_t *acc)
{
    register const int16_t *x0 __asm__("r0") = r0;
    register const int16_t *x1 __asm__("r1") = r1;
    register const int16_t *x2 __asm__("r2") = r2;
    register int32_t *ap __asm__("r3") = acc;
    register int32_t *aend __asm__("r4") = acc + lp2;
    register uint32_t p0 __asm__("r5") = w01[0];
    register uint32_t p1 __asm__("r6") = w01[1];
    register uint32_t p2 __asm__("r7") = w01[2];
    register uint32_t q01 __asm__("r8") = (w12[0] >> 16) | (w12[1] & 0xFFFF0000u);
    register uint32_t q2 __asm__("r9") = w12[2];
    register int32_t a0 __asm__("r10");
    register int32_t a1 __asm__("r11");
    register uint32_t X __asm__("r12");
    register uint32_t Y __asm__("lr");
    __asm__ volatile(
        "1:\n\t"
        "ldrd   %[X], %[Y], [%[x0]], #8\n\t"
        "smuad  %[a0], %[X], %[p0]\n\t"
        "smlabb %[a0], %[Y], %[q01], %[a0]\n\t"
        "smuad  %[a1], %[Y], %[p0]\n\t"
        "ldr    %[X], [%[x0]]\n\t"
        "smlabb %[a1], %[X], %[q01], %[a1]\n\t"
        "ldrd   %[X], %[Y], [%[x1]], #8\n\t"
        "smlad  %[a0], %[X], %[p1], %[a0]\n\t"
        "smlabt %[a0], %[Y], %[q01], %[a0]\n\t"
        "smlad  %[a1], %[Y], %[p1], %[a1]\n\t"
        "ldr    %[X], [%[x1]]\n\t"
        "smlabt %[a1], %[X], %[q01], %[a1]\n\t"
        "ldrd   %[X], %[Y], [%[x2]], #8\n\t"
        "smlad  %[a0], %[X], %[p2], %[a0]\n\t"
        "smlabt %[a0], %[Y], %[q2], %[a0]\n\t"
        "smlad  %[a1], %[Y], %[p2], %[a1]\n\t"
        "ldr    %[X], [%[x2]]\n\t"
        "smlabt %[a1], %[X], %[q2], %[a1]\n\t"
        EB_DW_LINE_END
        : [x0] "+r"(x0), [x1] "+r"(x1), [x2] "+r"(x2), [ap] "+r"(ap), [end] "+r"(aend), [a0] "=&r"(a0),
          [a1] "=&r"(a1), [X] "=&r"(X), [Y] "=&r"(Y)
        : [p0] "r"(p0), [p1] "r"(p1), [p2] "r"(p2), [q01] "r"(q01), [q2] "r"(q2), [ctl] "i"(&eb_dw_ctl)
        : "cc", "memory");
}

/* the same for any number of cross taps, in C (accumulating into acc) */
static void eb_dw_line(const int16_t *const *rows, int32_t ck, const uint32_t *w01, const uint32_t *w12,
                       int32_t Lo, int32_t *acc)
{
    int32_t t, j;
    for (j = 0; j < Lo; j += 2) {
        acc[j] = 0;
        acc[j + 1] = 0;
    }
    for (t = 0; t < ck; t++) {
        const int16_t *r = rows[t];
        const int32_t pw = (int32_t)w01[t], qw = (int32_t)w12[t];
        for (j = 0; j < Lo; j += 2) {
            int32_t a0 = acc[j], a1 = acc[j + 1];
            uint32_t A, B;
            EB_COPY4(&A, r + j);
            EB_COPY4(&B, r + j + 2);
            a0 = __smlad((int32_t)A, pw, a0);
            a0 = __smlabt((int32_t)B, qw, a0);
            a1 = __smlatb((int32_t)A, pw, a1);
            a1 = __smlad((int32_t)B, qw, a1);
            acc[j] = a0;
            acc[j + 1] = a1;
        }
    }
}

/* Cross-axis taps the stack arrays hold; larger filters run the portable kernel. */
#define EB_DW_DSP_CK 16

/* d[j] = input position j - lp of the line at s (stride ls), or zp outside
 * [0, li); j < wp */
static EB_NOINLINE void eb_dw_widen(const int8_t *s, int32_t ls, int32_t lp, int32_t li, int32_t wp,
                                    int16_t zp, int16_t *d)
{
    int32_t j = 0;
    const int32_t jend = lp + li < wp ? lp + li : wp;
    for (; j < lp && j < wp; j++) {
        d[j] = zp;
    }
    s += (size_t)(j - lp) * ls;
    for (; j < jend; j++) {
        d[j] = *s;
        s += ls;
    }
    for (; j < wp; j++) {
        d[j] = zp;
    }
}

/* d0[j], d1[j] = channels 0 and 1 of input position j - j0 of the line at s
 * (stride ls), for j0 <= j < jend; for nl lines (input lines ss bytes apart,
 * plane lines wp apart). The padding columns (j < j0, j >= jend) are not
 * written: they hold zero points from the plane's fill (eb_depthwise_s8_opt).
 * Two channels per halfword load, split by SXTB16. */
static EB_NOINLINE void eb_dw_widen2(const int8_t *s, int32_t ls, int32_t j0, int32_t jend, int32_t wp,
                                     int16_t *d0, int16_t *d1, int32_t nl, int32_t ss)
{
    const int32_t np = (jend - j0) >> 1;
    d0 += j0;
    d1 += j0;
    for (; nl > 0; nl--) {
        const int8_t *sp = s;
        int16_t *e0 = d0, *e1 = d1;
        if (np > 0) {
            /* pairs of positions: two halfword loads (channels 0 and 1 at positions j
             * and j + 1), SXTB16 splits them into a word of each plane; 8 instructions,
             * then two pairs a pass (positions j..j + 3 at s, s + ls, s + 2 ls and
             * s + ls3, one pointer step): 17 instructions for 8 elements. An odd pair
             * count does one pair first. Single STRs: a plane line's inside may start
             * at an odd position (j0 = 1), and only LDR/STR take unaligned addresses. */
            int16_t *const stop = e0 + 2 * np;
            const int32_t ls3 = 3 * ls;
            uint32_t h0, h1, h2, h3;
            __asm__ volatile(
                "tst    %[np], #1\n\t"
                "beq    2f\n\t"
                "ldrh   %[h1], [%[s], %[ls]]\n\t"
                "ldrh   %[h0], [%[s]]\n\t"
                "add    %[s], %[s], %[ls], lsl #1\n\t"
                "orr    %[h0], %[h0], %[h1], lsl #16\n\t"
                "sxtb16 %[h1], %[h0]\n\t"
                "sxtb16 %[h0], %[h0], ror #8\n\t"
                "str    %[h1], [%[e0]], #4\n\t"
                "str    %[h0], [%[e1]], #4\n\t"
                "2:\n\t"
                "cmp    %[e0], %[stop]\n\t"
                "beq    3f\n\t"
                "1:\n\t"
                "ldrh   %[h1], [%[s], %[ls]]\n\t"
                "ldrh   %[h0], [%[s]]\n\t"
                "ldrh   %[h3], [%[s], %[ls3]]\n\t"
                "ldrh   %[h2], [%[s], %[ls], lsl #1]\n\t"
                "add    %[s], %[s], %[ls], lsl #2\n\t"
                "orr    %[h0], %[h0], %[h1], lsl #16\n\t"
                "orr    %[h2], %[h2], %[h3], lsl #16\n\t"
                "sxtb16 %[h1], %[h0]\n\t"
                "sxtb16 %[h0], %[h0], ror #8\n\t"
                "sxtb16 %[h3], %[h2]\n\t"
                "sxtb16 %[h2], %[h2], ror #8\n\t"
                "str    %[h1], [%[e0]], #4\n\t"
                "str    %[h0], [%[e1]], #4\n\t"
                "str    %[h3], [%[e0]], #4\n\t"
                "str    %[h2], [%[e1]], #4\n\t"
                "cmp    %[e0], %[stop]\n\t"
                "bne    1b\n\t"
                "3:\n\t"
                : [s] "+r"(sp), [e0] "+r"(e0), [e1] "+r"(e1), [h0] "=&r"(h0), [h1] "=&r"(h1), [h2] "=&r"(h2),
                  [h3] "=&r"(h3)
                : [ls] "r"(ls), [ls3] "r"(ls3), [stop] "r"(stop), [np] "r"(np)
                : "cc", "memory");
        }
        if ((jend - j0) & 1) {
            e0[0] = sp[0];
            e1[0] = sp[1];
        }
        s += ss;
        d0 += wp;
        d1 += wp;
    }
}

int eb_depthwise_s8_opt(const eb_conv_params *p, const int8_t *in, int8_t *out)
{
    const int32_t H = p->in.h, W = p->in.w, C = p->in.c;
    const int line_w = p->kw == 3 && p->sw == 1 && p->dw == 1;
    const int line_h = p->kh == 3 && p->sh == 1 && p->dh == 1;
    /* stride 2 along W: three taps across too (eb_dw_lines3_s2) */
    const int line_w2 = !line_w && !line_h && p->kw == 3 && p->sw == 2 && p->dw == 1 && p->kh == 3;
    const int16_t zp = (int8_t)(0u - (uint32_t)p->in_offset);
    const uint32_t zz = (uint16_t)zp | ((uint32_t)(uint16_t)zp << 16);
    eb_dw_geom g;
    int s1;       /* eb_dw_lines3: stride 1 along the line, three cross taps */
    int w32;      /* eb_dw_lines3_w32: s1 on lines of EB_DW_W32 */
    int32_t Wp, band, b, c, j0, jend, lp2, o0;
    int rq_layer;
    size_t pstride;
    int16_t *plane;
    int32_t *acc;
    if (p->depth_mult != 1 || !(line_w || line_h || line_w2)) {
        return 0;
    }
    if (eb_dw_small(p, in, out)) {
        return 1;
    }
    if (line_w2 || (line_w && (!line_h || p->out.w >= p->out.h))) {
        g.Li = W; g.Lo = p->out.w; g.Lp = p->pw; g.Ls = C; g.OLs = C;
        g.Ci = H; g.Co = p->out.h; g.Ck = p->kh; g.Cs = p->sh; g.Cd = p->dh; g.Cp = p->ph;
        g.CSs = W * C; g.OCs = p->out.w * C;
        g.wl = C; g.wc = 3 * C;
    } else {
        g.Li = H; g.Lo = p->out.h; g.Lp = p->ph; g.Ls = W * C; g.OLs = p->out.w * C;
        g.Ci = W; g.Co = p->out.w; g.Ck = p->kw; g.Cs = p->sw; g.Cd = p->dw; g.Cp = p->pw;
        g.CSs = C; g.OCs = C;
        g.wl = p->kw * C; g.wc = C;
    }
    if (g.Ck > EB_DW_DSP_CK) {
        return 0;
    }
    /* line j of the widened plane holds input positions j - Lp, j < Wp (even,
     * so every line starts word-aligned); the plane holds the band's input
     * lines, padding lines included (input zero points) */
    Wp = line_w2 ? 2 * ((g.Lo + 1) & ~1) + 2 : (g.Lo + 4) & ~1;
    s1 = !line_w2 && g.Ck == 3;
    /* lines of up to EB_DW_W32 - 4 outputs, dilation 1: lines of EB_DW_W32 (eb_dw_lines3_w32) */
    w32 = s1 && g.Cd == 1 && Wp <= EB_DW_W32;
    if (w32) {
        Wp = EB_DW_W32;
    }
    {
        /* a band of B output lines: B accumulator lines of Lp2 int32 and two planes of
         * (B - 1) * Cs + need1 input lines of Wp int16 */
        const int32_t need1 = (g.Ck - 1) * g.Cd + 1;      /* input lines of one output line */
        const int32_t lp2 = (g.Lo + 1) & ~1;
        const int32_t room = (int32_t)EB_DSP_SCRATCH_BYTES - 4 * Wp * (need1 - g.Cs);
        band = room > 0 ? room / (4 * lp2 + 4 * Wp * g.Cs) : 0;
        if (band < 1) {
            return 0;
        }
        band = band > g.Co ? g.Co : band;
        acc = (int32_t *)(void *)eb_dsp_buf;
        plane = (int16_t *)(void *)(acc + (size_t)band * lp2);
    }
    pstride = (size_t)((band - 1) * g.Cs + (g.Ck - 1) * g.Cd + 1) * Wp;
    /* Both planes hold zero points to begin with: the padding columns are never
     * written again (eb_dw_widen2 writes the inside positions only), nor are the
     * padding lines when the band is the whole plane (the same plane lines are
     * padding for every channel then). */
    {
        uint32_t *z = (uint32_t *)(void *)plane;
        uint32_t *const zend = z + pstride;        /* 2 * pstride halfwords */
        while (z < zend) {
            *z++ = zz;
        }
    }
    j0 = g.Lp < Wp ? g.Lp : Wp;
    jend = g.Lp + g.Li < Wp ? g.Lp + g.Li : Wp;
    lp2 = (g.Lo + 1) & ~1;
    /* the fast requantisation (eb_dw_rq_lines) for the whole layer: full int8 range, Lo >= 2 */
    rq_layer = g.Lo >= 2 && p->act_min == -128 && p->act_max == 127;
    for (b = 0; b < p->out.n; b++) {
        const int8_t *in_b = in + (size_t)b * H * W * C;
        int8_t *out_b = out + (size_t)b * p->out.h * p->out.w * C;
        for (o0 = 0; o0 < g.Co; o0 += band) {
            /* Bands outside, channels inside: the band's line steps are set once */
            const int32_t n_out = g.Co - o0 < band ? g.Co - o0 : band;
            const int32_t ci0 = o0 * g.Cs - g.Cp;
            const int32_t n_in = (n_out - 1) * g.Cs + (g.Ck - 1) * g.Cd + 1;
            /* plane lines [r_lo, r_hi) are input lines, the others padding */
            const int32_t r_lo = ci0 < 0 ? (-ci0 < n_in ? -ci0 : n_in) : 0;
            const int32_t r_hi = g.Ci - ci0 < n_in ? g.Ci - ci0 : n_in;
            const int32_t *const last = acc + (size_t)n_out * lp2;
            int8_t *const out_o = out_b + (size_t)o0 * g.OCs;
            int32_t r;
            if (band < g.Co) {
                /* padding lines of this band: a line may have held input in another band */
                for (r = 0; r < n_in; r++) {
                    if (r < r_lo || r >= r_hi) {
                        uint32_t *d0 = (uint32_t *)(void *)(plane + (size_t)r * Wp);
                        uint32_t *d1 = (uint32_t *)(void *)(plane + (size_t)r * Wp + pstride);
                        int32_t j;
                        for (j = 0; j < Wp; j += 2) {
                            *d0++ = zz;
                            *d1++ = zz;
                        }
                    }
                }
            }
            eb_dw_ctl.row_delta = 2 * g.Cs * Wp - (s1 ? 2 : 4) * lp2;
            eb_dw_ctl.line_bytes = 4 * lp2;
            eb_dw_ctl.final = (int32_t *)last;
            if (lp2 == g.Lo && g.OCs == g.Lo * g.OLs) {
                /* even lines whose outputs follow each other (line axis W): the band's
                 * accumulators and outputs are one run */
                eb_dw_rqctl.pair_bytes = 4 * n_out * g.Lo;
                eb_dw_rqctl.dstep = 0;
                eb_dw_rqctl.odd = 0;
            } else {
                eb_dw_rqctl.pair_bytes = 4 * (g.Lo & ~1);
                eb_dw_rqctl.dstep = g.OCs - (g.Lo & ~1) * g.OLs;
                eb_dw_rqctl.odd = g.Lo & 1;
            }
            for (c = 0; c < C; c += 2) {
                /* channels c and c + 1 (when C is odd, the last one alone) */
                const int32_t cn = c + 1 < C ? 2 : 1;
                int32_t k;
                if (r_hi > r_lo) {
                    const int8_t *src = in_b + (size_t)(ci0 + r_lo) * g.CSs + c;
                    int16_t *d = plane + (size_t)r_lo * Wp;
                    if (cn == 2) {
                        /* the run of input lines, in one call */
                        eb_dw_widen2(src + (size_t)(j0 - g.Lp) * g.Ls, g.Ls, j0, jend, Wp, d, d + pstride,
                                     r_hi - r_lo, g.CSs);
                    } else {
                        for (r = r_lo; r < r_hi; r++) {
                            eb_dw_widen(src, g.Ls, g.Lp, g.Li, Wp, zp, d);
                            src += g.CSs;
                            d += Wp;
                        }
                    }
                }
                for (k = 0; k < cn; k++) {
                    const int16_t *const base = plane + k * pstride;
                    const int32_t ch = c + k;
                    const int32_t bias = eb_ld32(p->chan + 4 * ch);
                    const int32_t m = eb_ld32(p->chan + 4 * ((size_t)C + ch));
                    const int32_t shift = eb_ld32(p->chan + 4 * (2 * (size_t)C + ch));
                    /* eb_rq_init's fast case with sh = -shift - 1 <= 21 (eb_dw_rq_lines) and a
                     * bias for which the doubled sums fit int32 */
                    const int fast = rq_layer && m > 0 && shift <= -2 && shift >= -22 && bias < (1 << 29) &&
                                     bias > -(1 << 29);
                    const int32_t mul = s1 && fast ? 2 : 1;     /* eb_dw_lines3's doubled weights */
                    uint32_t w01[EB_DW_DSP_CK], w12[EB_DW_DSP_CK];
                    int32_t t;
                    if (s1) {
                        /* w3 = (w0, w1) and (w1, w2) of the three cross taps, then 2 * bias */
                        uint32_t w3[7];
                        for (t = 0; t < 3; t++) {
                            const int8_t *f = p->filter + (size_t)t * g.wc + ch;
                            const uint32_t v0 = (uint16_t)(int16_t)(f[0] * mul);
                            const uint32_t v1 = (uint16_t)(int16_t)(f[g.wl] * mul);
                            const uint32_t v2 = (uint16_t)(int16_t)(f[2 * g.wl] * mul);
                            w3[2 * t] = v0 | (v1 << 16);
                            w3[2 * t + 1] = v1 | (v2 << 16);
                        }
                        w3[6] = fast ? (uint32_t)bias << 1 : 0u;
                        if (w32) {
                            eb_dw_lines3_w32(base, w3, lp2, acc);
                        } else {
                            eb_dw_lines3(base, w3, 2 * g.Cd * Wp, lp2, acc);
                        }
                        goto requant;
                    }
                    for (t = 0; t < g.Ck; t++) {
                        const int8_t *f = p->filter + (size_t)t * g.wc + ch;
                        const uint32_t v0 = (uint16_t)(int16_t)f[0], v1 = (uint16_t)(int16_t)f[g.wl];
                        const uint32_t v2 = (uint16_t)(int16_t)f[2 * g.wl];
                        w01[t] = v0 | (v1 << 16);
                        w12[t] = v1 | (v2 << 16);
                    }
                    if (g.Ck == 3) {
                        eb_dw_lines3_s2(base, base + (size_t)g.Cd * Wp, base + (size_t)2 * g.Cd * Wp, w01, w12, lp2,
                                        acc);
                    } else {
                        int32_t o;
                        for (o = 0; o < n_out; o++) {
                            const int16_t *rows[EB_DW_DSP_CK];
                            const int16_t *ob = base + (size_t)(o * g.Cs) * Wp;
                            for (t = 0; t < g.Ck; t++) {
                                rows[t] = ob + (size_t)(t * g.Cd) * Wp;
                            }
                            eb_dw_line(rows, g.Ck, w01, w12, g.Lo, acc + (size_t)o * lp2);
                        }
                    }
                requant:
                    if (fast) {
                        /* on doubled sums t = 2 * (acc + bias), which fit int32 (|acc| <= taps * 2^14
                         * < 2^20 here): eb_rq_mul's numerator doubled, 2P + 2C - [t < 0] * 2^32, has
                         * the constant 2^31 low word and the sign correction in the high word only:
                         * hi = 2^(e-1) + off * 2^e + (t >> 31), v = hi >> e, the output offset
                         * included (|hi| < 2^30 + 2^20 + 2^28 for e = -shift <= 22) */
                        const int32_t e = -shift;
                        const int32_t hc = (int32_t)((1u << (uint32_t)(e - 1)) + ((uint32_t)p->out_offset << e));
                        if (s1 && e >= EB_DW_RQE_MIN && e <= EB_DW_RQE_MAX) {
                            eb_dw_rq_e[e - EB_DW_RQE_MIN](acc, last, out_o + ch, g.OLs, m, hc);
                        } else if (s1) {
                            eb_dw_rq_lines_t(acc, last, out_o + ch, g.OLs, m, hc, e, 0);
                        } else {
                            eb_dw_rq_lines(acc, last, out_o + ch, g.OLs, m, hc, e, (int32_t)((uint32_t)bias << 1));
                        }
                    } else {
                        eb_rq q;
                        eb_rq_init(&q, m, shift);
                        eb_dw_requant_lines(acc, n_out, g.Lo, bias, &q, p->out_offset, p->act_min, p->act_max,
                                            out_o + ch, g.OLs, g.OCs);
                    }
                }
            }
        }
    }
    return 1;
}
