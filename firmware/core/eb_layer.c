/*
 * eb_layer.c - what the engine (eb_engine.c) and its operators (ops/eb_op_*.c)
 * share: error messages without printf, the decoding of a layer record, the
 * checks of more than one operator, and the kernel parameters of the
 * convolution-shaped and the binary element-wise layers.
 */
#include "eb_layer.h"

#include "eb_decimal.h"

void eb_msg_str(eb_msg *m, const char *s)
{
    while (*s && m->pos + 1 < m->len) {
        m->buf[m->pos++] = *s++;
    }
    if (m->len) {
        m->buf[m->pos] = '\0';
    }
}

void eb_msg_u32(eb_msg *m, uint32_t v)
{
    char tmp[EB_DEC_U32_MAX + 1];
    tmp[EB_DEC_U32_MAX] = '\0';
    eb_msg_str(m, eb_dec_u32(v, tmp + EB_DEC_U32_MAX));
}

eb_status eb_layer_fail(eb_msg *m, eb_status st, const char *what, uint32_t layer)
{
    eb_msg_str(m, what);
    if (layer != EB_NO_LAYER) {
        eb_msg_str(m, " (layer ");
        eb_msg_u32(m, layer);
        eb_msg_str(m, ")");
    }
    return st;
}

void eb_layer_decode(const eb_view *v, uint32_t k, eb_layer *L)
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

int eb_window_ok(int32_t in, int32_t out, int32_t k, int32_t s, int32_t d, int32_t pad)
{
    const int32_t span = (k - 1) * d + 1;
    if (k < 1 || s < 1 || d < 1 || pad < 0 || out < 1 || pad >= span) {
        return 0;
    }
    /* the first and the last window overlap the input (pooling divides by
     * the count of taps inside it) */
    return (int64_t)(out - 1) * s - pad < in;
}

int eb_chan_ok(const eb_view *v, const eb_layer *L, uint32_t channels, int fc)
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

int eb_apart(const eb_view *v, uint32_t i, uint32_t off, uint32_t len)
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

void eb_conv_shape_of(const eb_layer *L, eb_conv_params *p)
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
}

void eb_conv_params_of(const eb_model *m, const eb_view *v, const eb_layer *L, eb_conv_params *p)
{
    eb_conv_shape_of(L, p);
    p->filter = tensor_data(m, v, L->in[1]);
    p->chan = v->blob + L->chan_off;
    p->scratch = (int8_t *)(m->arena + L->scratch_off);
}

void eb_binary_params_of(const eb_layer *L, eb_add_params *p)
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
