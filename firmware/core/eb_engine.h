/*
 * eb_engine.h - the INT8 inference engine of the edgebench firmware core.
 *
 * Executes a model blob produced on the host by `edgebench deploy` / the blob
 * converter (format: firmware/BLOB.md). Outputs are bit-exact with TFLite's
 * reference kernels (LiteRT OpResolverType.BUILTIN_REF, equivalently the
 * tflite-micro Python interpreter).
 *
 * No heap: all tensors live in a caller-provided arena. The blob itself (weights,
 * requantization multipliers/shifts) is read in place and must stay valid and
 * unmodified while the model is in use.
 */
#ifndef EB_ENGINE_H
#define EB_ENGINE_H

#include <stddef.h>
#include <stdint.h>

/* 1: eight operators; 2: adds more (same blob format); the version column of eb_ops.def */
#define EB_ENGINE_VERSION 2u

typedef enum {
    EB_OK = 0,
    EB_ERR_MAGIC,        /* not an edgebench model blob */
    EB_ERR_VERSION,      /* blob format version not supported by this engine */
    EB_ERR_CRC,          /* blob CRC-32 mismatch */
    EB_ERR_TRUNCATED,    /* blob shorter than its header says */
    EB_ERR_ARENA,        /* model needs more arena than given */
    EB_ERR_OP,           /* unknown or unsupported operator in the blob */
    EB_ERR_INVALID       /* inconsistent blob contents (bad tensor index, shape...) */
} eb_status;

/* Called after each layer when per-layer timing is requested (NULL otherwise). */
typedef void (*eb_layer_hook)(void *ctx, uint32_t layer_index, uint32_t op_code);

/* The blob header's fields, read once by eb_model_init (private to the engine). */
typedef struct {
    const uint8_t *blob;
    uint32_t total, n_tensors, n_layers, tensors_off, layers_off, arena_bytes;
    uint32_t input, output;
} eb_view;

typedef struct {
    const uint8_t *blob;
    size_t blob_len;
    uint8_t *arena;
    size_t arena_len;
    size_t arena_used;        /* peak bytes the model needs (after eb_model_init) */
    uint32_t n_layers;
    /* private to the engine */
    const void *priv_header;  /* non-NULL once eb_model_init succeeded */
    eb_view priv_view;        /* the blob's header fields, cached by eb_model_init */
} eb_model;

/* Validate the blob (magic, version, CRC, sizes, ops) and plan tensors in the arena.
 * On failure, writes a short NUL-terminated reason to err (if err_len > 0). */
eb_status eb_model_init(eb_model *m, const uint8_t *blob, size_t blob_len,
                        uint8_t *arena, size_t arena_len, char *err, size_t err_len);

size_t eb_model_input_bytes(const eb_model *m);   /* int8 input tensor size */
size_t eb_model_output_bytes(const eb_model *m);  /* int8 output tensor size */
int8_t *eb_model_input(eb_model *m);              /* write the quantized input here */
const int8_t *eb_model_output(const eb_model *m); /* read the int8 output here */
/* Output quantization, for dequantized scores: real = scale * (q - zero_point). */
float eb_model_output_scale(const eb_model *m);
int32_t eb_model_output_zero_point(const eb_model *m);
/* Input quantization (device-side input encodings, firmware/PROTOCOL.md eb-model). */
float eb_model_input_scale(const eb_model *m);
int32_t eb_model_input_zero_point(const eb_model *m);

/* Run all layers once. hook may be NULL. */
eb_status eb_model_invoke(eb_model *m, eb_layer_hook hook, void *hook_ctx);

const char *eb_status_name(eb_status s);

#endif /* EB_ENGINE_H */
