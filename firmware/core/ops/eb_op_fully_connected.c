/*
 * eb_op_fully_connected.c - FULLY_CONNECTED (int8, per tensor or per channel).
 *
 * acc = bias' + sum(w * x), then LiteRT's reference rescale: it no longer
 * uses a fixed-point multiplier for int8 but round(acc * (in_scale *
 * filter_scale / out_scale)) in IEEE binary64, reproduced in integers by
 * eb_mul_round_f64 (eb_rescale.c), then the fused activation's clamp.
 *
 * The weights are stored blocked (firmware/BLOB.md) with the bytes of even
 * depth positions biased (b_k = w_k ^ 0x80, bias'' = bias' + 128 * sum(odd w));
 * the portable kernel is eb_matvec_biased (eb_matvec.c, which has the identity
 * and which 1x1 CONV_2D's portable kernel shares), the reference the DSP kernel
 * (kernels/dsp/eb_fc_dsp.c) must match.
 */
#include "eb_dot.h"
#include "eb_kernels_opt.h"
#include "eb_ops.h"

void eb_fc_s8(const eb_fc_params *p, const int8_t *in, int8_t *out)
{
    int32_t b;
    if (eb_fc_s8_opt(p, in, out)) {
        return;
    }
    for (b = 0; b < p->batches; b++) {
        eb_matvec_biased(in + (size_t)b * p->depth, p->filter, p->depth, p->units, p->chan, 1, p->out_offset,
                         p->act_min, p->act_max, out + (size_t)b * p->units);
    }
}

eb_status eb_fully_connected_check(const eb_view *v, const eb_layer *L, uint32_t k, eb_msg *msg)
{
    const uint32_t units = (uint32_t)L->dfilt.n * L->dfilt.h * L->dfilt.w;
    const uint32_t depth = (uint32_t)L->dfilt.c;
    const uint32_t n_in = dims_count(&L->din), n_out = dims_count(&L->dout);
    uint32_t u;
    if (!is_const(v, L->in[1]) || !act_ok(L) || !conv_offsets_ok(L) || depth == 0 || n_in % depth != 0 ||
        (n_in / depth) * units != n_out || !eb_chan_ok(v, L, units, 1) || (L->p[2] & ~1) != 0) {
        return eb_layer_fail(msg, EB_ERR_INVALID, "inconsistent fully connected layer", k);
    }
    /* p2 = 1: one rescale factor for all units (checked here once, so the kernels
     * need not compare the arrays at every inference) */
    for (u = 1; L->p[2] && u < units; u++) {
        const uint8_t *const f = v->blob + L->chan_off + 4u * units;
        if (rd_u32(f + 4u * u) != rd_u32(f) || rd_u32(f + 4u * (units + u)) != rd_u32(f + 4u * units)) {
            return eb_layer_fail(msg, EB_ERR_INVALID, "fully connected factors differ but p2 says one", k);
        }
    }
    return EB_OK;
}

void eb_fully_connected_run(eb_model *m, const eb_view *v, const eb_layer *L)
{
    eb_fc_params p;
    p.depth = L->dfilt.c;
    p.units = L->dfilt.n * L->dfilt.h * L->dfilt.w;
    p.batches = (int32_t)(dims_count(&L->din) / (uint32_t)p.depth);
    p.in_offset = L->p[0];
    p.out_offset = L->p[1];
    p.act_min = L->act_min;
    p.act_max = L->act_max;
    p.one_factor = L->p[2];
    p.filter = tensor_data(m, v, L->in[1]);
    p.chan = v->blob + L->chan_off;
    eb_fc_s8(&p, tensor_data(m, v, L->in[0]), tensor_data(m, v, L->out));
}
