/*
 * eb_layer.h - private to the engine (eb_engine.c) and its operators (ops/eb_op_*.c):
 * blob field access, views of the tensor and layer tables, the decoded layer record
 * shared by the validation and the dispatch of every operator, and the checks more
 * than one operator makes (eb_layer.c).
 */
#ifndef EB_LAYER_H
#define EB_LAYER_H

#include "eb_blob.h"
#include "eb_engine.h"
#include "eb_kernels.h"

/* ---- little-endian field access ----------------------------------------- */

/* Unaligned-safe loads (one LDR/LDRH on Cortex-M3 and up); the blob is
 * little-endian like every target (eb_kernels.h checks). */
static inline uint32_t rd_u16(const uint8_t *p)
{
    uint16_t v;
#if defined(__GNUC__)
    __builtin_memcpy(&v, p, 2);
#else
    memcpy(&v, p, 2);
#endif
    return v;
}

static inline uint32_t rd_u32(const uint8_t *p)
{
    uint32_t v;
    EB_COPY4(&v, p);
    return v;
}

static inline int32_t rd_i32(const uint8_t *p) { return (int32_t)rd_u32(p); }

typedef struct {
    char *buf;
    size_t len, pos;
} eb_msg;

/* ---- blob views ---------------------------------------------------------- */

static inline void view_of(const uint8_t *blob, eb_view *v)
{
    v->blob = blob;
    v->total = rd_u32(blob + EB_HDR_TOTAL_BYTES);
    v->n_tensors = rd_u16(blob + EB_HDR_N_TENSORS);
    v->n_layers = rd_u16(blob + EB_HDR_N_LAYERS);
    v->tensors_off = rd_u32(blob + EB_HDR_TENSORS_OFF);
    v->layers_off = rd_u32(blob + EB_HDR_LAYERS_OFF);
    v->arena_bytes = rd_u32(blob + EB_HDR_ARENA_BYTES);
    v->input = rd_u16(blob + EB_HDR_INPUT);
    v->output = rd_u16(blob + EB_HDR_OUTPUT);
}

static inline const uint8_t *tensor_rec(const eb_view *v, uint32_t i)
{
    return v->blob + v->tensors_off + (size_t)i * EB_TENSOR_BYTES;
}

static inline const uint8_t *layer_rec(const eb_view *v, uint32_t i)
{
    return v->blob + v->layers_off + (size_t)i * EB_LAYER_BYTES;
}

static inline void dims_of(const uint8_t *t, eb_dims *d)
{
    d->n = rd_i32(t + EB_T_DIMS);
    d->h = rd_i32(t + EB_T_DIMS + 4);
    d->w = rd_i32(t + EB_T_DIMS + 8);
    d->c = rd_i32(t + EB_T_DIMS + 12);
}

static inline uint32_t dims_count(const eb_dims *d)
{
    return (uint32_t)d->n * (uint32_t)d->h * (uint32_t)d->w * (uint32_t)d->c;
}

/* Data of tensor i: in the blob (constant) or in the arena. */
static inline int8_t *tensor_data(const eb_model *m, const eb_view *v, uint32_t i)
{
    const uint8_t *t = tensor_rec(v, i);
    const uint32_t off = rd_u32(t + EB_T_OFFSET);
    if (t[EB_T_FLAGS] & EB_TFLAG_CONST) {
        return (int8_t *)(uintptr_t)(v->blob + off);
    }
    return (int8_t *)(m->arena + off);
}

static inline int in_range(uint32_t off, uint32_t len, uint32_t limit)
{
    return off <= limit && len <= limit - off;
}

static inline int is_int8(const eb_view *v, uint32_t i)
{
    return i < v->n_tensors && tensor_rec(v, i)[EB_T_DTYPE] == EB_DTYPE_INT8;
}

static inline int is_act(const eb_view *v, uint32_t i)   /* int8 tensor in the arena */
{
    return is_int8(v, i) && !(tensor_rec(v, i)[EB_T_FLAGS] & EB_TFLAG_CONST);
}

static inline int is_const(const eb_view *v, uint32_t i)
{
    return is_int8(v, i) && (tensor_rec(v, i)[EB_T_FLAGS] & EB_TFLAG_CONST);
}

/* One layer record, decoded (eb_layer_decode): what its operator's check and run read. */
typedef struct {
    uint32_t op, n_in, in[3], out;
    eb_dims din, dout, dfilt;
    int32_t sh, sw, dh, dw, ph, pw, fh, fw, depth_mult, act_min, act_max;
    uint32_t chan_off, n_chan, scratch_off, scratch_bytes;
    int32_t p[EB_L_N_P];
} eb_layer;

static inline int act_ok(const eb_layer *L)
{
    return L->act_min >= -128 && L->act_max <= 127 && L->act_min <= L->act_max;
}

static inline int shift_ok(int32_t s) { return s >= -31 && s <= 30; }

/* CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED: p0 = -(input zero point), p1 = output zero
 * point, both from int8 zero points (the kernels' arithmetic relies on these bounds). */
static inline int conv_offsets_ok(const eb_layer *L)
{
    return L->p[0] >= -127 && L->p[0] <= 128 && L->p[1] >= -128 && L->p[1] <= 127;
}

/* Zero points and offsets of int8 tensors: |v| <= 256 keeps every sum and product of the
 * kernels inside int32 whatever else a blob holds. */
static inline int off_ok(int32_t v) { return v >= -256 && v <= 256; }

#define EB_NO_LAYER 0xFFFFFFFFu

/* ---- eb_layer.c ------------------------------------------------------------ */

/* Short error messages without printf: append a string / a decimal number. */
void eb_msg_str(eb_msg *m, const char *s);
void eb_msg_u32(eb_msg *m, uint32_t v);

/* Write what (and " (layer k)" unless layer is EB_NO_LAYER) to the message; returns st. */
eb_status eb_layer_fail(eb_msg *m, eb_status st, const char *what, uint32_t layer);

/* Decode layer record k (dimensions of the tensors it names, when they exist). */
void eb_layer_decode(const eb_view *v, uint32_t k, eb_layer *L);

/* Output size of a window operator, as TFLite computes it from the explicit padding. */
int eb_window_ok(int32_t in, int32_t out, int32_t k, int32_t s, int32_t d, int32_t pad);

/* Per-channel arrays of `channels` entries inside the blob; shifts in range
 * (convolutions) or positive normal binary64 rescale factors (fc != 0). */
int eb_chan_ok(const eb_view *v, const eb_layer *L, uint32_t channels, int fc);

/* 1 if arena tensor i does not overlap [off, off + len) (a constant tensor never does). */
int eb_apart(const eb_view *v, uint32_t i, uint32_t off, uint32_t len);

/* Dimension i (0 N .. 3 C) of d. */
static inline int32_t eb_dim_at(const eb_dims *d, int i)
{
    return i == 0 ? d->n : i == 1 ? d->h : i == 2 ? d->w : d->c;
}

/* a equals o, or is 1, in every dimension (broadcast to o). */
static inline int eb_bcast_ok(const eb_dims *a, const eb_dims *o)
{
    return (a->n == o->n || a->n == 1) && (a->h == o->h || a->h == 1) &&
           (a->w == o->w || a->w == 1) && (a->c == o->c || a->c == 1);
}

/* The kernel parameters of a convolution-shaped layer (CONV_2D, DEPTHWISE_CONV_2D,
 * TRANSPOSE_CONV) from its record: eb_conv_shape_of sets those the record alone
 * gives (all but the filter, chan and scratch pointers; what a check needs),
 * eb_conv_params_of all of them. */
void eb_conv_shape_of(const eb_layer *L, eb_conv_params *p);
void eb_conv_params_of(const eb_model *m, const eb_view *v, const eb_layer *L, eb_conv_params *p);

/* The parameters of a binary element-wise layer (ADD, SUB, MUL, MAXIMUM, MINIMUM). */
void eb_binary_params_of(const eb_layer *L, eb_add_params *p);

#endif /* EB_LAYER_H */
