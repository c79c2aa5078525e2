/*
 * eb_engine.c - loads a model blob (firmware/BLOB.md) and runs its layers, each
 * with its operator from the table of eb_ops.def (eb_ops.c: ops/eb_op_<family>.c
 * validates and runs it). No heap: tensors live in the caller's
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
#include "eb_layer.h"
#include "eb_ops.h"

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
            return eb_layer_fail(msg, EB_ERR_INVALID, "bad tensor type or rank", EB_NO_LAYER);
        }
        for (k = 0; k < 4; k++) {
            const int32_t d = rd_i32(t + EB_T_DIMS + 4 * k);
            if (d < 1 || d > 0xFFFFFF) {
                return eb_layer_fail(msg, EB_ERR_INVALID, "bad tensor dimension", EB_NO_LAYER);
            }
            count *= (uint64_t)d;
            if (count > EB_NO_LAYER) {
                return eb_layer_fail(msg, EB_ERR_INVALID, "tensor too large", EB_NO_LAYER);
            }
        }
        if (count * esize != nbytes) {
            return eb_layer_fail(msg, EB_ERR_INVALID, "tensor size does not match its shape", EB_NO_LAYER);
        }
        if (flags & EB_TFLAG_CONST) {
            if (!in_range(off, nbytes, v->total)) {
                return eb_layer_fail(msg, EB_ERR_INVALID, "constant tensor outside the blob", EB_NO_LAYER);
            }
        } else if (dtype != EB_DTYPE_INT8 || !in_range(off, nbytes, v->arena_bytes)) {
            return eb_layer_fail(msg, EB_ERR_INVALID, "tensor outside the planned arena", EB_NO_LAYER);
        }
    }
    return EB_OK;
}


/* The layer's operator from the table (eb_ops.def), the checks every layer gets,
 * then its operator's own. */
static eb_status check_layer(const eb_view *v, uint32_t k, eb_msg *msg)
{
    eb_layer L;
    const eb_op *op;
    eb_layer_decode(v, k, &L);
    op = eb_op_find(L.op);
    if (op == 0) {
        eb_msg_str(msg, "unsupported operator code ");
        eb_msg_u32(msg, L.op);
        return eb_layer_fail(msg, EB_ERR_OP, "", k);
    }
    if (!is_act(v, L.out) || !is_int8(v, L.in[0])) {
        return eb_layer_fail(msg, EB_ERR_INVALID, "bad input or output tensor", k);
    }
    if (L.scratch_bytes && !in_range(L.scratch_off, L.scratch_bytes, v->arena_bytes)) {
        return eb_layer_fail(msg, EB_ERR_INVALID, "scratch outside the planned arena", k);
    }
    return op->check(v, &L, k, msg);
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
        return eb_layer_fail(&msg, EB_ERR_INVALID, "no model", EB_NO_LAYER);
    }
    memset(m, 0, sizeof *m);
    if (!blob || blob_len < 4 || blob[0] != EB_BLOB_MAGIC0 || blob[1] != EB_BLOB_MAGIC1 ||
        blob[2] != EB_BLOB_MAGIC2 || blob[3] != EB_BLOB_MAGIC3) {
        return eb_layer_fail(&msg, EB_ERR_MAGIC, "not an edgebench model blob (magic is not EBNN)", EB_NO_LAYER);
    }
    if (blob_len < EB_HDR_BYTES) {
        return eb_layer_fail(&msg, EB_ERR_TRUNCATED, "blob shorter than its header", EB_NO_LAYER);
    }
    if (rd_u16(blob + EB_HDR_VERSION) != EB_BLOB_VERSION) {
        eb_msg_str(&msg, "blob format version ");
        eb_msg_u32(&msg, rd_u16(blob + EB_HDR_VERSION));
        eb_msg_str(&msg, ", this engine reads version ");
        eb_msg_u32(&msg, EB_BLOB_VERSION);
        return EB_ERR_VERSION;
    }
    total = rd_u32(blob + EB_HDR_TOTAL_BYTES);
    hdr = rd_u16(blob + EB_HDR_HEADER_BYTES);
    if (total > blob_len) {
        eb_msg_str(&msg, "blob truncated: header says ");
        eb_msg_u32(&msg, total);
        eb_msg_str(&msg, " bytes, got ");
        eb_msg_u32(&msg, (uint32_t)blob_len);
        return EB_ERR_TRUNCATED;
    }
    if (hdr < EB_HDR_BYTES || total < hdr) {
        return eb_layer_fail(&msg, EB_ERR_INVALID, "bad header size", EB_NO_LAYER);
    }
    if (eb_crc32(blob + EB_HDR_CRC_START, total - EB_HDR_CRC_START) != rd_u32(blob + EB_HDR_CRC32)) {
        return eb_layer_fail(&msg, EB_ERR_CRC, "blob CRC-32 mismatch (corrupt or altered)", EB_NO_LAYER);
    }
    view_of(blob, &v);
    if (v.n_layers == 0 || v.n_tensors == 0 ||
        !in_range(v.tensors_off, v.n_tensors * EB_TENSOR_BYTES, total) ||
        !in_range(v.layers_off, v.n_layers * EB_LAYER_BYTES, total) ||
        !is_act(&v, v.input) || !is_act(&v, v.output)) {
        return eb_layer_fail(&msg, EB_ERR_INVALID, "bad tables or input/output tensor", EB_NO_LAYER);
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
        eb_msg_str(&msg, "arena too small: model needs ");
        eb_msg_u32(&msg, v.arena_bytes);
        eb_msg_str(&msg, " bytes, have ");
        eb_msg_u32(&msg, (uint32_t)arena_len);
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

/* The view of a loaded model, 0 when none is loaded: what every accessor below checks first. */
static const eb_view *loaded_view(const eb_model *m)
{
    return m && m->priv_header ? &m->priv_view : 0;
}

/* A u32 field of a loaded model's input or output tensor record (0 when no model is loaded). */
static uint32_t io_field(const eb_model *m, int output, uint32_t field)
{
    const eb_view *v = loaded_view(m);
    return v ? rd_u32(tensor_rec(v, output ? v->output : v->input) + field) : 0u;
}

/* The data of a loaded model's input or output tensor (0 when no model is loaded). */
static int8_t *io_data(const eb_model *m, int output)
{
    const eb_view *v = loaded_view(m);
    return v ? tensor_data(m, v, output ? v->output : v->input) : 0;
}

size_t eb_model_input_bytes(const eb_model *m) { return io_field(m, 0, EB_T_NBYTES); }
size_t eb_model_output_bytes(const eb_model *m) { return io_field(m, 1, EB_T_NBYTES); }
int8_t *eb_model_input(eb_model *m) { return io_data(m, 0); }
const int8_t *eb_model_output(const eb_model *m) { return io_data(m, 1); }

/* The quantization of a model's input or output tensor (0 when no model is loaded). */
static float io_scale(const eb_model *m, int output)
{
    const uint32_t u = io_field(m, output, EB_T_SCALE);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float eb_model_output_scale(const eb_model *m) { return io_scale(m, 1); }
int32_t eb_model_output_zero_point(const eb_model *m) { return (int32_t)io_field(m, 1, EB_T_ZERO_POINT); }
float eb_model_input_scale(const eb_model *m) { return io_scale(m, 0); }
int32_t eb_model_input_zero_point(const eb_model *m) { return (int32_t)io_field(m, 0, EB_T_ZERO_POINT); }

eb_status eb_model_invoke(eb_model *m, eb_layer_hook hook, void *hook_ctx)
{
    const eb_view *v = loaded_view(m);
    uint32_t k;
    if (!v) {
        return EB_ERR_INVALID;
    }
    for (k = 0; k < v->n_layers; k++) {
        eb_layer L;
        const eb_op *op;
        eb_layer_decode(v, k, &L);
        op = eb_op_find(L.op);
        if (op == 0) {
            return EB_ERR_OP;
        }
        op->run(m, v, &L);
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
