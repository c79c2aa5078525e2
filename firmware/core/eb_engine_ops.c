/*
 * eb_engine_ops.c - validation and dispatch of the operators added in engine
 * version 2 (firmware/BLOB.md, "Operators"): SUB, MUL, MAXIMUM, MINIMUM,
 * QUANTIZE, RELU, RELU6, RELU_N1_TO_1, LEAKY_RELU, MEAN, PAD, PADV2,
 * CONCATENATION, LOGISTIC, TANH, HARD_SWISH, RESIZE_NEAREST_NEIGHBOR,
 * RESIZE_BILINEAR, TRANSPOSE_CONV, TRANSPOSE, SLICE, STRIDED_SLICE. Like eb_engine.c, every check a kernel relies on is made
 * here before the first invoke.
 */
#include "eb_engine_int.h"

int eb_is_ext_op(uint32_t op)
{
    switch (op) {
    case EB_OP_SUB: case EB_OP_MUL: case EB_OP_MAXIMUM: case EB_OP_MINIMUM:
    case EB_OP_QUANTIZE: case EB_OP_RELU: case EB_OP_RELU6: case EB_OP_RELU_N1_TO_1:
    case EB_OP_LEAKY_RELU: case EB_OP_MEAN: case EB_OP_PAD: case EB_OP_PADV2:
    case EB_OP_CONCATENATION: case EB_OP_LOGISTIC: case EB_OP_TANH: case EB_OP_HARD_SWISH:
    case EB_OP_RESIZE_BILINEAR: case EB_OP_RESIZE_NEAREST_NEIGHBOR: case EB_OP_TRANSPOSE_CONV:
    case EB_OP_TRANSPOSE: case EB_OP_SLICE: case EB_OP_STRIDED_SLICE:
        return 1;
    default:
        return 0;
    }
}

static int bcast_ok(const eb_dims *a, const eb_dims *o)
{
    return (a->n == o->n || a->n == 1) && (a->h == o->h || a->h == 1) &&
           (a->w == o->w || a->w == 1) && (a->c == o->c || a->c == 1);
}

static int32_t dim_at(const eb_dims *d, int i)
{
    return i == 0 ? d->n : i == 1 ? d->h : i == 2 ? d->w : d->c;
}

/* CONCATENATION's input i: in[0..2], then p[1..9] (up to 12 inputs). */
static uint32_t concat_input(const eb_layer *L, uint32_t i)
{
    return i < 3u ? L->in[i] : (uint32_t)L->p[1u + i - 3u];
}

static eb_status check_concat(const eb_view *v, const eb_layer *L, uint32_t k, eb_msg *msg)
{
    const uint32_t n = L->n_in;
    const int32_t axis = L->p[0];
    int64_t along = 0;
    uint32_t i;
    int d;
    if (n < 1 || n > EB_CONCAT_MAX || axis < 0 || axis > 3) {
        return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent concatenation", k);
    }
    for (i = 0; i < n; i++) {
        eb_dims di;
        if (!is_int8(v, concat_input(L, i))) {
            return eb_layer_fail(msg, EB_ERR_INVALID, "bad concatenation input", k);
        }
        dims_of(tensor_rec(v, concat_input(L, i)), &di);
        for (d = 0; d < 4; d++) {
            if (d != axis && dim_at(&di, d) != dim_at(&L->dout, d)) {
                return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent concatenation", k);
            }
        }
        along += dim_at(&di, axis);
    }
    if (along != dim_at(&L->dout, axis)) {
        return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent concatenation", k);
    }
    return EB_OK;
}

/* RESIZE_*: rows then columns, lower[n], upper[n], fraction[n] with n = OH + OW;
 * every index inside the input, every fraction within [-4096, 4096]. */
static int resize_ok(const eb_view *v, const eb_layer *L)
{
    const uint32_t n = (uint32_t)L->dout.h + (uint32_t)L->dout.w;
    uint32_t i;
    if (L->din.n != L->dout.n || L->din.c != L->dout.c || L->n_chan != n ||
        !in_range(L->chan_off, 12u * n, v->total) || L->p[0] < 0 || L->p[0] > 1) {
        return 0;
    }
    for (i = 0; i < n; i++) {
        const int32_t size = i < (uint32_t)L->dout.h ? L->din.h : L->din.w;
        const int32_t lo = rd_i32(v->blob + L->chan_off + 4u * i);
        const int32_t hi = rd_i32(v->blob + L->chan_off + 4u * (n + i));
        const int32_t fr = rd_i32(v->blob + L->chan_off + 4u * (2u * n + i));
        if (lo < 0 || lo >= size || hi < 0 || hi >= size || fr < -4096 || fr > 4096) {
            return 0;
        }
    }
    return 1;
}

/* The gather's lowest and highest element offsets stay inside the input. */
static int gather_ok(const eb_layer *L)
{
    int64_t lo = L->p[0], hi = L->p[0];
    int d;
    for (d = 0; d < 4; d++) {
        const int64_t span = (int64_t)L->p[1 + d] * (dim_at(&L->dout, d) - 1);
        lo += span < 0 ? span : 0;
        hi += span > 0 ? span : 0;
    }
    return lo >= 0 && hi < (int64_t)dims_count(&L->din);
}

static int tconv_ok(const eb_view *v, const eb_layer *L)
{
    uint32_t c;
    const eb_dims *f = &L->dfilt;
    if (!is_const(v, L->in[1]) || !act_ok(L) || L->din.n != L->dout.n || f->n != L->dout.c ||
        f->c != L->din.c || f->h != L->fh || f->w != L->fw || L->sh < 1 || L->sw < 1 ||
        L->ph < 0 || L->pw < 0 || L->n_chan != (uint32_t)L->dout.c ||
        !off_ok(L->p[0]) || !off_ok(L->p[1]) ||
        !in_range(L->chan_off, 12u * L->n_chan, v->total)) {
        return 0;
    }
    for (c = 0; c < L->n_chan; c++) {
        if (!shift_ok(rd_i32(v->blob + L->chan_off + 4u * (2u * L->n_chan + c)))) {
            return 0;
        }
    }
    return 1;
}

eb_status eb_check_ext(const eb_view *v, const eb_layer *L, uint32_t k, eb_msg *msg)
{
    const uint32_t n_in = dims_count(&L->din), n_out = dims_count(&L->dout);
    int d;
    switch (L->op) {
    case EB_OP_SUB: case EB_OP_MUL: case EB_OP_MAXIMUM: case EB_OP_MINIMUM:
        if (!is_int8(v, L->in[1]) || !act_ok(L) || !bcast_ok(&L->din, &L->dout) ||
            !bcast_ok(&L->dfilt, &L->dout) || L->p[3] < 0 || L->p[3] > 20 ||
            !off_ok(L->p[0]) || !off_ok(L->p[1]) || !off_ok(L->p[2]) ||
            (L->op == EB_OP_SUB && (L->p[5] > 0 || L->p[7] > 0)) ||   /* Prepare: multipliers < 1 */
            !shift_ok(L->p[5]) || !shift_ok(L->p[7]) || !shift_ok(L->p[9])) {
            return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent element-wise operator", k);
        }
        return EB_OK;
    case EB_OP_QUANTIZE: case EB_OP_RELU: case EB_OP_RELU6: case EB_OP_RELU_N1_TO_1:
    case EB_OP_LEAKY_RELU:
        if (n_in != n_out || !act_ok(L) || !shift_ok(L->p[3]) || !shift_ok(L->p[5]) ||
            !off_ok(L->p[0]) || !off_ok(L->p[1])) {
            return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent requantization", k);
        }
        return EB_OK;
    case EB_OP_MEAN: {
        uint32_t kept = 1;
        for (d = 0; d < 4; d++) {
            kept *= ((L->p[1] >> d) & 1) ? 1u : (uint32_t)dim_at(&L->din, d);
        }
        if (L->p[0] != 0 || L->p[1] < 0 || L->p[1] > 15 || kept != n_out ||
            !shift_ok(L->p[5]) || !off_ok(L->p[2]) || !off_ok(L->p[3])) {
            return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent mean", k);
        }
        return EB_OK;
    }
    case EB_OP_PAD: case EB_OP_PADV2:
        for (d = 0; d < 4; d++) {
            const int32_t b = L->p[d];
            if (b < 0 || (int64_t)b + dim_at(&L->din, d) > dim_at(&L->dout, d)) {
                return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent pad", k);
            }
        }
        if (L->p[4] < -128 || L->p[4] > 127) {
            return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent pad", k);
        }
        return EB_OK;
    case EB_OP_CONCATENATION:
        return check_concat(v, L, k, msg);
    case EB_OP_TRANSPOSE: case EB_OP_SLICE: case EB_OP_STRIDED_SLICE:
        if (!gather_ok(L)) {
            return eb_layer_fail(msg, EB_ERR_INVALID, "slice or transpose outside its input", k);
        }
        return EB_OK;
    case EB_OP_TRANSPOSE_CONV:
        if (!tconv_ok(v, L)) {
            return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent transposed convolution", k);
        }
        return EB_OK;
    case EB_OP_RESIZE_BILINEAR: case EB_OP_RESIZE_NEAREST_NEIGHBOR:
        if (!resize_ok(v, L)) {
            return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent resize", k);
        }
        return EB_OK;
    case EB_OP_LOGISTIC: case EB_OP_TANH: case EB_OP_HARD_SWISH:   /* a 256-byte table */
        if (n_in != n_out || !in_range(L->chan_off, 256u, v->total)) {
            return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent table lookup", k);
        }
        return EB_OK;
    default:
        return eb_layer_fail(msg, EB_ERR_OP, "unsupported operator", k);
    }
}

static void binary_params(const eb_layer *L, eb_add_params *p)
{
    p->in1 = L->din;
    p->in2 = L->dfilt;
    p->out = L->dout;
    p->in1_offset = L->p[0];
    p->in2_offset = L->p[1];
    p->out_offset = L->p[2];
    p->left_shift = L->p[3];
    p->in1_mult = L->p[4];
    p->in1_shift = L->p[5];
    p->in2_mult = L->p[6];
    p->in2_shift = L->p[7];
    p->out_mult = L->p[8];
    p->out_shift = L->p[9];
    p->act_min = L->act_min;
    p->act_max = L->act_max;
}

void eb_run_ext(eb_model *m, const eb_view *v, const eb_layer *L)
{
    const int8_t *in = tensor_data(m, v, L->in[0]);
    int8_t *out = tensor_data(m, v, L->out);
    switch (L->op) {
    case EB_OP_SUB: case EB_OP_MUL: case EB_OP_MAXIMUM: case EB_OP_MINIMUM: {
        eb_add_params p;
        const int kind = L->op == EB_OP_SUB ? EB_BIN_SUB : L->op == EB_OP_MUL ? EB_BIN_MUL
                         : L->op == EB_OP_MAXIMUM ? EB_BIN_MAX : EB_BIN_MIN;
        binary_params(L, &p);
        eb_binary_s8(kind, &p, in, tensor_data(m, v, L->in[1]), out);
        break;
    }
    case EB_OP_MEAN: {
        eb_mean_params p;
        p.in = L->din;
        p.axis_mask = L->p[1];
        p.in_zp = L->p[2];
        p.out_zp = L->p[3];
        p.mult = L->p[4];
        p.shift = L->p[5];
        eb_mean_s8(&p, in, out);
        break;
    }
    case EB_OP_PAD: case EB_OP_PADV2: {
        eb_pad_params p;
        int d;
        p.in = L->din;
        p.out = L->dout;
        for (d = 0; d < 4; d++) {
            p.before[d] = L->p[d];
        }
        p.value = L->p[4];
        eb_pad_s8(&p, in, out);
        break;
    }
    case EB_OP_CONCATENATION: {
        const int8_t *ins[EB_CONCAT_MAX];
        int32_t inner[EB_CONCAT_MAX], outer = 1;
        uint32_t i;
        int d;
        for (d = 0; d < L->p[0]; d++) {
            outer *= dim_at(&L->dout, d);
        }
        for (i = 0; i < L->n_in; i++) {
            eb_dims di;
            dims_of(tensor_rec(v, concat_input(L, i)), &di);
            ins[i] = tensor_data(m, v, concat_input(L, i));
            inner[i] = (int32_t)(dims_count(&di) / (uint32_t)outer);
        }
        eb_concat_s8((int32_t)L->n_in, ins, inner, outer, out);
        break;
    }
    case EB_OP_TRANSPOSE: case EB_OP_SLICE: case EB_OP_STRIDED_SLICE: {
        eb_gather_params p;
        int d;
        p.out = L->dout;
        p.base = L->p[0];
        for (d = 0; d < 4; d++) {
            p.st[d] = L->p[1 + d];
        }
        eb_gather_s8(&p, in, out);
        break;
    }
    case EB_OP_TRANSPOSE_CONV: {
        eb_conv_params p;
        eb_conv_params_of(m, v, L, &p);
        eb_transpose_conv_s8(&p, in, out);
        break;
    }
    case EB_OP_RESIZE_BILINEAR: case EB_OP_RESIZE_NEAREST_NEIGHBOR: {
        eb_resize_params p;
        p.in = L->din;
        p.out = L->dout;
        p.map = v->blob + L->chan_off;
        p.nearest = L->p[0];
        eb_resize_s8(&p, in, out);
        break;
    }
    case EB_OP_LOGISTIC: case EB_OP_TANH: case EB_OP_HARD_SWISH:
        eb_lut_s8((const int8_t *)(uintptr_t)(v->blob + L->chan_off), (int32_t)dims_count(&L->dout),
                  in, out);
        break;
    default: {   /* QUANTIZE and the activations */
        eb_requant_params p;
        p.count = (int32_t)dims_count(&L->dout);
        p.in_zp = L->p[0];
        p.out_zp = L->p[1];
        p.mult = L->p[2];
        p.shift = L->p[3];
        p.mult_neg = L->p[4];
        p.shift_neg = L->p[5];
        p.act_min = L->act_min;
        p.act_max = L->act_max;
        eb_requant_s8(&p, in, out);
        break;
    }
    }
}
