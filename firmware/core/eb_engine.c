/*
 * eb_engine.c - loads a model blob (firmware/BLOB.md) and runs its layers with
 * the INT8 kernels of eb_kernels*.c. No heap: tensors live in the caller's
 * arena at the offsets the host-side planner chose; weights and
 * requantization parameters are read from the blob in place.
 *
 * eb_model_init() checks everything a kernel relies on (indices, sizes,
 * shapes, offsets inside the blob and the arena), so a blob that passes it
 * cannot make eb_model_invoke() read or write out of bounds.
 */
#include "eb_engine.h"

#include "eb_blob.h"
#include "eb_crc32.h"
#include "eb_engine_int.h"
#include "eb_kernels.h"

/* ---- short error messages without printf -------------------------------- */

static void msg_str(eb_msg *m, const char *s)
{
    while (*s && m->pos + 1 < m->len) {
        m->buf[m->pos++] = *s++;
    }
    if (m->len) {
        m->buf[m->pos] = '\0';
    }
}

static void msg_u32(eb_msg *m, uint32_t v)
{
    char tmp[11];
    int i = 10;
    tmp[i] = '\0';
    do {
        tmp[--i] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v && i > 0);
    msg_str(m, tmp + i);
}

static eb_status fail(eb_msg *m, eb_status st, const char *what, uint32_t layer)
{
    msg_str(m, what);
    if (layer != 0xFFFFFFFFu) {
        msg_str(m, " (layer ");
        msg_u32(m, layer);
        msg_str(m, ")");
    }
    return st;
}

eb_status eb_layer_fail(eb_msg *m, eb_status st, const char *what, uint32_t layer)
{
    return fail(m, st, what, layer);
}

/* ---- validation ----------------------------------------------------------- */

static eb_status check_tensors(const eb_view *v, eb_msg *msg)
{
    uint32_t i;
    for (i = 0; i < v->n_tensors; i++) {
        const uint8_t *t = tensor_rec(v, i);
        const uint32_t dtype = t[EB_T_DTYPE], rank = t[EB_T_RANK], flags = t[EB_T_FLAGS];
        const uint32_t off = rd_u32(t + EB_T_OFFSET), nbytes = rd_u32(t + EB_T_NBYTES);
        const uint32_t esize = dtype == EB_DTYPE_INT32 ? 4u : 1u;
        uint64_t count = 1;
        int k;
        if ((dtype != EB_DTYPE_INT8 && dtype != EB_DTYPE_INT32) || rank < 1 || rank > 4) {
            return fail(msg, EB_ERR_INVALID, "bad tensor type or rank", 0xFFFFFFFFu);
        }
        for (k = 0; k < 4; k++) {
            const int32_t d = rd_i32(t + EB_T_DIMS + 4 * k);
            if (d < 1 || d > 0xFFFFFF) {
                return fail(msg, EB_ERR_INVALID, "bad tensor dimension", 0xFFFFFFFFu);
            }
            count *= (uint64_t)d;
            if (count > 0xFFFFFFFFu) {
                return fail(msg, EB_ERR_INVALID, "tensor too large", 0xFFFFFFFFu);
            }
        }
        if (count * esize != nbytes) {
            return fail(msg, EB_ERR_INVALID, "tensor size does not match its shape", 0xFFFFFFFFu);
        }
        if (flags & EB_TFLAG_CONST) {
            if (!in_range(off, nbytes, v->total)) {
                return fail(msg, EB_ERR_INVALID, "constant tensor outside the blob", 0xFFFFFFFFu);
            }
        } else if (dtype != EB_DTYPE_INT8 || !in_range(off, nbytes, v->arena_bytes)) {
            return fail(msg, EB_ERR_INVALID, "tensor outside the planned arena", 0xFFFFFFFFu);
        }
    }
    return EB_OK;
}


static void layer_of(const eb_view *v, uint32_t k, eb_layer *L)
{
    const uint8_t *r = layer_rec(v, k);
    int i;
    L->op = r[EB_L_OP];
    L->n_in = r[EB_L_N_INPUTS];
    L->out = rd_u16(r + EB_L_OUT);
    for (i = 0; i < 3; i++) {
        L->in[i] = rd_u16(r + EB_L_IN + 2 * i);
    }
    L->sh = (int32_t)rd_u16(r + EB_L_STRIDE_H);
    L->sw = (int32_t)rd_u16(r + EB_L_STRIDE_W);
    L->dh = (int32_t)rd_u16(r + EB_L_DIL_H);
    L->dw = (int32_t)rd_u16(r + EB_L_DIL_W);
    L->ph = (int32_t)rd_u16(r + EB_L_PAD_H);
    L->pw = (int32_t)rd_u16(r + EB_L_PAD_W);
    L->fh = (int32_t)rd_u16(r + EB_L_FILTER_H);
    L->fw = (int32_t)rd_u16(r + EB_L_FILTER_W);
    L->depth_mult = (int32_t)rd_u16(r + EB_L_DEPTH_MULT);
    L->act_min = rd_i32(r + EB_L_ACT_MIN);
    L->act_max = rd_i32(r + EB_L_ACT_MAX);
    L->chan_off = rd_u32(r + EB_L_CHAN_OFF);
    L->n_chan = rd_u32(r + EB_L_N_CHAN);
    L->scratch_off = rd_u32(r + EB_L_SCRATCH_OFF);
    L->scratch_bytes = rd_u32(r + EB_L_SCRATCH_BYTES);
    for (i = 0; i < (int)EB_L_N_P; i++) {
        L->p[i] = rd_i32(r + EB_L_P + 4 * i);
    }
    if (L->in[0] < v->n_tensors) {
        dims_of(tensor_rec(v, L->in[0]), &L->din);
    }
    if (L->in[1] < v->n_tensors) {
        dims_of(tensor_rec(v, L->in[1]), &L->dfilt);
    }
    if (L->out < v->n_tensors) {
        dims_of(tensor_rec(v, L->out), &L->dout);
    }
}

/* Output size of a window op, as TFLite computes it from the explicit padding. */
static int window_ok(int32_t in, int32_t out, int32_t k, int32_t s, int32_t d, int32_t pad)
{
    const int32_t span = (k - 1) * d + 1;
    if (k < 1 || s < 1 || d < 1 || pad < 0 || out < 1 || pad >= span) {
        return 0;
    }
    /* the first and the last window overlap the input (pooling divides by
     * the count of taps inside it) */
    return (int64_t)(out - 1) * s - pad < in;
}

/* Per-channel arrays inside the blob; shifts in range (convolutions) or
 * positive normal binary64 rescale factors (fully connected). */
static int chan_ok(const eb_view *v, const eb_layer *L, uint32_t channels, int fc)
{
    uint32_t c;
    if (L->n_chan != channels || !in_range(L->chan_off, 12u * channels, v->total)) {
        return 0;
    }
    for (c = 0; c < channels; c++) {
        const uint32_t w = rd_u32(v->blob + L->chan_off + 8u * channels + 4u * c);
        if (fc) {
            const uint32_t exp_field = (w >> 20) & 0x7FFu;
            if ((w & 0x80000000u) || exp_field == 0 || exp_field == 0x7FFu) {
                return 0;
            }
        } else if ((int32_t)w < -31 || (int32_t)w > 30) {
            return 0;
        }
    }
    return 1;
}


/* CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED: p0 = -(input zero point), p1 = output zero
 * point, both from int8 zero points (the kernels' arithmetic relies on these bounds). */
static int conv_offsets_ok(const eb_layer *L)
{
    return L->p[0] >= -127 && L->p[0] <= 128 && L->p[1] >= -128 && L->p[1] <= 127;
}

/* 1 if arena tensor i does not overlap [off, off + len) (a constant tensor never does). */
static int apart(const eb_view *v, uint32_t i, uint32_t off, uint32_t len)
{
    const uint8_t *t;
    uint32_t to, tn;
    if (!is_act(v, i) || len == 0u) {
        return 1;
    }
    t = tensor_rec(v, i);
    to = rd_u32(t + EB_T_OFFSET);
    tn = rd_u32(t + EB_T_NBYTES);
    return (uint64_t)off + len <= to || (uint64_t)to + tn <= off;
}

static eb_status check_layer(const eb_view *v, uint32_t k, eb_msg *msg)
{
    eb_layer L;
    layer_of(v, k, &L);
    if (L.op != EB_OP_CONV_2D && L.op != EB_OP_DEPTHWISE_CONV_2D && L.op != EB_OP_FULLY_CONNECTED &&
        L.op != EB_OP_AVERAGE_POOL_2D && L.op != EB_OP_MAX_POOL_2D && L.op != EB_OP_ADD &&
        L.op != EB_OP_RESHAPE && L.op != EB_OP_SOFTMAX && !eb_is_ext_op(L.op)) {
        msg_str(msg, "unsupported operator code ");
        msg_u32(msg, L.op);
        return fail(msg, EB_ERR_OP, "", k);
    }
    if (!is_act(v, L.out) || !is_int8(v, L.in[0])) {
        return fail(msg, EB_ERR_INVALID, "bad input or output tensor", k);
    }
    if (L.scratch_bytes && !in_range(L.scratch_off, L.scratch_bytes, v->arena_bytes)) {
        return fail(msg, EB_ERR_INVALID, "scratch outside the planned arena", k);
    }
    if (eb_is_ext_op(L.op)) {
        return eb_check_ext(v, &L, k, msg);
    }
    switch (L.op) {
    case EB_OP_CONV_2D:
    case EB_OP_DEPTHWISE_CONV_2D: {
        const int dw = L.op == EB_OP_DEPTHWISE_CONV_2D;
        const int32_t fh = L.dfilt.h, fw = L.dfilt.w;
        if (!is_const(v, L.in[1]) || L.din.n != L.dout.n || !act_ok(&L) || !conv_offsets_ok(&L) ||
            !apart(v, L.in[0], L.scratch_off, L.scratch_bytes) ||
            !apart(v, L.out, L.scratch_off, L.scratch_bytes) ||
            !window_ok(L.din.h, L.dout.h, fh, L.sh, L.dh, L.ph) ||
            !window_ok(L.din.w, L.dout.w, fw, L.sw, L.dw, L.pw) ||
            !chan_ok(v, &L, (uint32_t)L.dout.c, 0)) {
            return fail(msg, EB_ERR_INVALID, "inconsistent convolution", k);
        }
        if (dw) {
            if (L.dfilt.n != 1 || L.dfilt.c != L.dout.c || L.depth_mult < 1 ||
                L.din.c * L.depth_mult != L.dout.c) {
                return fail(msg, EB_ERR_INVALID, "inconsistent depthwise filter", k);
            }
            if (L.scratch_bytes < (uint32_t)L.din.c) {
                return fail(msg, EB_ERR_INVALID, "depthwise scratch too small", k);
            }
        } else {
            eb_conv_params cp;
            if (L.dfilt.n != L.dout.c || L.dfilt.c != L.din.c) {
                return fail(msg, EB_ERR_INVALID, "inconsistent convolution filter", k);
            }
            cp.kh = fh;
            cp.kw = fw;
            cp.ph = L.ph;
            cp.pw = L.pw;
            cp.sh = L.sh;
            cp.sw = L.sw;
            cp.in = L.din;
            cp.out = L.dout;
            if (!eb_conv_direct(&cp) && L.scratch_bytes < (uint32_t)(fh * fw * L.din.c)) {
                return fail(msg, EB_ERR_INVALID, "convolution scratch too small", k);
            }
        }
        break;
    }
    case EB_OP_FULLY_CONNECTED: {
        const uint32_t units = (uint32_t)L.dfilt.n * L.dfilt.h * L.dfilt.w;
        const uint32_t depth = (uint32_t)L.dfilt.c;
        const uint32_t n_in = dims_count(&L.din), n_out = dims_count(&L.dout);
        if (!is_const(v, L.in[1]) || !act_ok(&L) || !conv_offsets_ok(&L) || depth == 0 ||
            n_in % depth != 0 ||
            (n_in / depth) * units != n_out || !chan_ok(v, &L, units, 1)) {
            return fail(msg, EB_ERR_INVALID, "inconsistent fully connected layer", k);
        }
        break;
    }
    case EB_OP_AVERAGE_POOL_2D:
    case EB_OP_MAX_POOL_2D:
        if (!act_ok(&L) || L.din.n != L.dout.n || L.din.c != L.dout.c ||
            !window_ok(L.din.h, L.dout.h, L.fh, L.sh, 1, L.ph) ||
            !window_ok(L.din.w, L.dout.w, L.fw, L.sw, 1, L.pw)) {
            return fail(msg, EB_ERR_INVALID, "inconsistent pooling", k);
        }
        break;
    case EB_OP_ADD: {
        eb_dims a = L.din, b = L.dfilt, o = L.dout;
        if (!is_int8(v, L.in[1]) || !act_ok(&L) || L.p[3] < 0 || L.p[3] > 20 ||
            !off_ok(L.p[0]) || !off_ok(L.p[1]) || !off_ok(L.p[2]) ||
            L.p[5] > 0 || L.p[7] > 0 || L.p[9] > 0 ||     /* add.cc Prepare: multipliers < 1 */
            !shift_ok(L.p[5]) || !shift_ok(L.p[7]) || !shift_ok(L.p[9]) ||
            (a.n != o.n && a.n != 1) || (a.h != o.h && a.h != 1) || (a.w != o.w && a.w != 1) ||
            (a.c != o.c && a.c != 1) || (b.n != o.n && b.n != 1) || (b.h != o.h && b.h != 1) ||
            (b.w != o.w && b.w != 1) || (b.c != o.c && b.c != 1)) {
            return fail(msg, EB_ERR_INVALID, "inconsistent add", k);
        }
        break;
    }
    case EB_OP_RESHAPE:
        if (dims_count(&L.din) != dims_count(&L.dout)) {
            return fail(msg, EB_ERR_INVALID, "inconsistent reshape", k);
        }
        break;
    case EB_OP_SOFTMAX:
        if (dims_count(&L.din) != dims_count(&L.dout) || L.din.c != L.dout.c ||
            L.p[1] < 0 || L.p[1] > 31 || L.p[2] > 0) {
            return fail(msg, EB_ERR_INVALID, "inconsistent softmax", k);
        }
        break;
    default:
        break;
    }
    return EB_OK;
}

/* ---- public API ---------------------------------------------------------- */

eb_status eb_model_init(eb_model *m, const uint8_t *blob, size_t blob_len,
                        uint8_t *arena, size_t arena_len, char *err, size_t err_len)
{
    eb_msg msg;
    eb_view v;
    uint32_t k, total, hdr;
    eb_status st;
    msg.buf = err;
    msg.len = err ? err_len : 0;
    msg.pos = 0;
    if (msg.len) {
        err[0] = '\0';
    }
    if (!m) {
        return fail(&msg, EB_ERR_INVALID, "no model", 0xFFFFFFFFu);
    }
    memset(m, 0, sizeof *m);
    if (!blob || blob_len < 4 || blob[0] != EB_BLOB_MAGIC0 || blob[1] != EB_BLOB_MAGIC1 ||
        blob[2] != EB_BLOB_MAGIC2 || blob[3] != EB_BLOB_MAGIC3) {
        return fail(&msg, EB_ERR_MAGIC, "not an edgebench model blob (magic is not EBNN)", 0xFFFFFFFFu);
    }
    if (blob_len < EB_HDR_BYTES) {
        return fail(&msg, EB_ERR_TRUNCATED, "blob shorter than its header", 0xFFFFFFFFu);
    }
    if (rd_u16(blob + EB_HDR_VERSION) != EB_BLOB_VERSION) {
        msg_str(&msg, "blob format version ");
        msg_u32(&msg, rd_u16(blob + EB_HDR_VERSION));
        msg_str(&msg, ", this engine reads version ");
        msg_u32(&msg, EB_BLOB_VERSION);
        return EB_ERR_VERSION;
    }
    total = rd_u32(blob + EB_HDR_TOTAL_BYTES);
    hdr = rd_u16(blob + EB_HDR_HEADER_BYTES);
    if (total > blob_len) {
        msg_str(&msg, "blob truncated: header says ");
        msg_u32(&msg, total);
        msg_str(&msg, " bytes, got ");
        msg_u32(&msg, (uint32_t)blob_len);
        return EB_ERR_TRUNCATED;
    }
    if (hdr < EB_HDR_BYTES || total < hdr) {
        return fail(&msg, EB_ERR_INVALID, "bad header size", 0xFFFFFFFFu);
    }
    if (eb_crc32(blob + EB_HDR_CRC_START, total - EB_HDR_CRC_START) != rd_u32(blob + EB_HDR_CRC32)) {
        return fail(&msg, EB_ERR_CRC, "blob CRC-32 mismatch (corrupt or altered)", 0xFFFFFFFFu);
    }
    view_of(blob, &v);
    if (v.n_layers == 0 || v.n_tensors == 0 ||
        !in_range(v.tensors_off, v.n_tensors * EB_TENSOR_BYTES, total) ||
        !in_range(v.layers_off, v.n_layers * EB_LAYER_BYTES, total) ||
        !is_act(&v, v.input) || !is_act(&v, v.output)) {
        return fail(&msg, EB_ERR_INVALID, "bad tables or input/output tensor", 0xFFFFFFFFu);
    }
    st = check_tensors(&v, &msg);
    if (st != EB_OK) {
        return st;
    }
    for (k = 0; k < v.n_layers; k++) {
        st = check_layer(&v, k, &msg);
        if (st != EB_OK) {
            return st;
        }
    }
    if (v.arena_bytes > arena_len || (v.arena_bytes && !arena)) {
        msg_str(&msg, "arena too small: model needs ");
        msg_u32(&msg, v.arena_bytes);
        msg_str(&msg, " bytes, have ");
        msg_u32(&msg, (uint32_t)arena_len);
        return EB_ERR_ARENA;
    }
    m->blob = blob;
    m->blob_len = blob_len;
    m->arena = arena;
    m->arena_len = arena_len;
    m->arena_used = v.arena_bytes;
    m->n_layers = v.n_layers;
    m->priv_header = blob;
    m->priv_view = v;
    return EB_OK;
}

size_t eb_model_input_bytes(const eb_model *m)
{
    const eb_view *v;
    if (!m || !m->priv_header) {
        return 0;
    }
    v = &m->priv_view;
    return rd_u32(tensor_rec(v, v->input) + EB_T_NBYTES);
}

size_t eb_model_output_bytes(const eb_model *m)
{
    const eb_view *v;
    if (!m || !m->priv_header) {
        return 0;
    }
    v = &m->priv_view;
    return rd_u32(tensor_rec(v, v->output) + EB_T_NBYTES);
}

int8_t *eb_model_input(eb_model *m)
{
    const eb_view *v;
    if (!m || !m->priv_header) {
        return 0;
    }
    v = &m->priv_view;
    return tensor_data(m, v, v->input);
}

const int8_t *eb_model_output(const eb_model *m)
{
    const eb_view *v;
    if (!m || !m->priv_header) {
        return 0;
    }
    v = &m->priv_view;
    return tensor_data(m, v, v->output);
}

/* The quantization of a model's input or output tensor (0 when no model is loaded). */
static float io_scale(const eb_model *m, int output)
{
    const eb_view *v;
    float f;
    uint32_t u;
    if (!m || !m->priv_header) {
        return 0.0f;
    }
    v = &m->priv_view;
    u = rd_u32(tensor_rec(v, output ? v->output : v->input) + EB_T_SCALE);
    memcpy(&f, &u, sizeof f);
    return f;
}

static int32_t io_zero_point(const eb_model *m, int output)
{
    const eb_view *v;
    if (!m || !m->priv_header) {
        return 0;
    }
    v = &m->priv_view;
    return rd_i32(tensor_rec(v, output ? v->output : v->input) + EB_T_ZERO_POINT);
}

float eb_model_output_scale(const eb_model *m) { return io_scale(m, 1); }
int32_t eb_model_output_zero_point(const eb_model *m) { return io_zero_point(m, 1); }
float eb_model_input_scale(const eb_model *m) { return io_scale(m, 0); }
int32_t eb_model_input_zero_point(const eb_model *m) { return io_zero_point(m, 0); }

void eb_conv_params_of(const eb_model *m, const eb_view *v, const eb_layer *L, eb_conv_params *p)
{
    p->in = L->din;
    p->out = L->dout;
    p->kh = L->dfilt.h;
    p->kw = L->dfilt.w;
    p->sh = L->sh;
    p->sw = L->sw;
    p->dh = L->dh;
    p->dw = L->dw;
    p->ph = L->ph;
    p->pw = L->pw;
    p->depth_mult = L->depth_mult;
    p->in_offset = L->p[0];
    p->out_offset = L->p[1];
    p->act_min = L->act_min;
    p->act_max = L->act_max;
    p->filter = tensor_data(m, v, L->in[1]);
    p->chan = v->blob + L->chan_off;
    p->scratch = (int8_t *)(m->arena + L->scratch_off);
}

static void run_conv(const eb_model *m, const eb_view *v, const eb_layer *L)
{
    eb_conv_params p;
    eb_conv_params_of(m, v, L, &p);
    if (L->op == EB_OP_CONV_2D) {
        eb_conv_s8(&p, tensor_data(m, v, L->in[0]), tensor_data(m, v, L->out));
    } else {
        eb_depthwise_s8(&p, tensor_data(m, v, L->in[0]), tensor_data(m, v, L->out));
    }
}

eb_status eb_model_invoke(eb_model *m, eb_layer_hook hook, void *hook_ctx)
{
    const eb_view *v;
    uint32_t k;
    if (!m || !m->priv_header) {
        return EB_ERR_INVALID;
    }
    v = &m->priv_view;
    for (k = 0; k < v->n_layers; k++) {
        eb_layer L;
        const int8_t *in;
        int8_t *out;
        layer_of(v, k, &L);
        in = tensor_data(m, v, L.in[0]);
        out = tensor_data(m, v, L.out);
        switch (L.op) {
        case EB_OP_CONV_2D:
        case EB_OP_DEPTHWISE_CONV_2D:
            run_conv(m, v, &L);
            break;
        case EB_OP_FULLY_CONNECTED: {
            eb_fc_params p;
            p.depth = L.dfilt.c;
            p.units = L.dfilt.n * L.dfilt.h * L.dfilt.w;
            p.batches = (int32_t)(dims_count(&L.din) / (uint32_t)p.depth);
            p.in_offset = L.p[0];
            p.out_offset = L.p[1];
            p.act_min = L.act_min;
            p.act_max = L.act_max;
            p.filter = tensor_data(m, v, L.in[1]);
            p.chan = v->blob + L.chan_off;
            eb_fc_s8(&p, in, out);
            break;
        }
        case EB_OP_AVERAGE_POOL_2D:
        case EB_OP_MAX_POOL_2D: {
            eb_pool_params p;
            p.in = L.din;
            p.out = L.dout;
            p.kh = L.fh;
            p.kw = L.fw;
            p.sh = L.sh;
            p.sw = L.sw;
            p.ph = L.ph;
            p.pw = L.pw;
            p.act_min = L.act_min;
            p.act_max = L.act_max;
            if (L.op == EB_OP_AVERAGE_POOL_2D) {
                eb_avgpool_s8(&p, in, out);
            } else {
                eb_maxpool_s8(&p, in, out);
            }
            break;
        }
        case EB_OP_ADD: {
            eb_add_params p;
            p.in1 = L.din;
            p.in2 = L.dfilt;
            p.out = L.dout;
            p.in1_offset = L.p[0];
            p.in2_offset = L.p[1];
            p.out_offset = L.p[2];
            p.left_shift = L.p[3];
            p.in1_mult = L.p[4];
            p.in1_shift = L.p[5];
            p.in2_mult = L.p[6];
            p.in2_shift = L.p[7];
            p.out_mult = L.p[8];
            p.out_shift = L.p[9];
            p.act_min = L.act_min;
            p.act_max = L.act_max;
            eb_add_s8(&p, in, tensor_data(m, v, L.in[1]), out);
            break;
        }
        case EB_OP_RESHAPE:
            if ((const int8_t *)out != in) {
                memmove(out, in, dims_count(&L.dout));
            }
            break;
        case EB_OP_SOFTMAX: {
            eb_softmax_params p;
            p.depth = L.dout.c;
            p.rows = (int32_t)(dims_count(&L.dout) / (uint32_t)p.depth);
            p.in_mult = L.p[0];
            p.in_left_shift = L.p[1];
            p.diff_min = L.p[2];
            eb_softmax_s8(&p, in, out);
            break;
        }
        default:
            if (!eb_is_ext_op(L.op)) {
                return EB_ERR_OP;
            }
            eb_run_ext(m, v, &L);
            break;
        }
        if (hook) {
            hook(hook_ctx, k, L.op);
        }
    }
    return EB_OK;
}

const char *eb_status_name(eb_status s)
{
    switch (s) {
    case EB_OK: return "ok";
    case EB_ERR_MAGIC: return "bad-magic";
    case EB_ERR_VERSION: return "bad-version";
    case EB_ERR_CRC: return "bad-crc";
    case EB_ERR_TRUNCATED: return "truncated";
    case EB_ERR_ARENA: return "arena-too-small";
    case EB_ERR_OP: return "unsupported-op";
    case EB_ERR_INVALID: return "invalid";
    }
    return "unknown";
}
