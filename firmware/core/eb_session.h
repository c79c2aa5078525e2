/*
 * eb_session.h - the state the commands share (eb_session.c): buffers, the
 * loaded model, its input encoding and results mode, and the helpers of the two
 * inference commands. Internal to the commands (eb_cmd_*.c, eb_commands.c).
 */
#ifndef EB_SESSION_H
#define EB_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "eb_config.h"
#include "eb_engine.h"
#include "eb_timing.h"

#define EB_MODEL_ID_MAX 16u      /* `eb-model <id>` length */

/* Input encodings of the input buffer (eb-model input=...). */
enum { EB_IN_INT8 = 0, EB_IN_UINT8_OFFSET = 1, EB_IN_FLOAT32 = 2, EB_IN_COUNT = 3 };
extern const char *const eb_in_names[EB_IN_COUNT];
/* What m-results reports (eb-model results=...). */
enum { EB_RES_OUTPUTS = 0, EB_RES_MSE = 1, EB_RES_COUNT = 2 };
extern const char *const eb_res_names[EB_RES_COUNT];

typedef struct {
    /* input buffer: declared size (db load / upload) and bytes loaded */
    size_t in_size;
    size_t in_pos;
    /* model blob and the model made from it */
    const uint8_t *model_src;  /* the blob: eb_model_buf, or the one linked into flash (EB_FLASH_MODEL) */
    size_t model_len;          /* bytes of a complete, CRC-checked upload (or the linked blob) */
    uint32_t model_crc;
    int model_loaded;          /* eb_model_init succeeded on it */
    eb_model model;
    char model_id[EB_MODEL_ID_MAX + 1u];
    int in_enc;                /* EB_IN_*: how the input buffer's bytes are read */
    int res_mode;              /* EB_RES_*: what m-results reports */
    int have_results;          /* the output tensor holds a finished inference */
    size_t parser_ram_bytes;   /* the command parser's static RAM (for eb-info) */
} eb_session;

extern eb_session eb_s;
extern uint8_t eb_model_buf[EB_MODEL_MAX_BYTES];
extern uint8_t eb_arena[EB_ARENA_BYTES];
extern uint8_t eb_input_buf[EB_INPUT_MAX_BYTES];

/* Reset the state (no model, empty input); parser_ram_bytes is the RAM of the
 * layer above (the command parser), which eb-info adds to the total. */
void eb_session_init(size_t parser_ram_bytes);
/* Static RAM of the buffers and the state. */
size_t eb_session_ram_bytes(void);

/* Forget the loaded model (and its options and results). */
void eb_unload_model(void);
/* The engine's model over the current blob (eb_s.model_src, uploaded or linked)
 * and the arena; err holds the engine's message on failure. */
eb_status eb_init_model(char *err, size_t err_len);
/* The model's id: `id`, or with NULL "eb-" and the blob's CRC32 in hex. */
void eb_set_model_id(const char *id);
#if EB_FLASH_MODEL
/* A model blob linked into the image (firmware/Makefile EB_MODEL_BLOB=): const,
 * 16-byte aligned, in flash on a microcontroller; the engine reads its weights
 * in place, so only the arena needs RAM. Loaded at start-up; an `eb-upload
 * model` into the RAM buffer replaces it until the next reset. */
extern const uint8_t eb_flash_model[];
extern const uint8_t eb_flash_model_end[];
#endif
/* Where a float32 input of n elements is quantized to: after the floats, 16-byte aligned. */
size_t eb_stage_offset(size_t n);
/* Print an error and return -1 unless a model and a complete input of the
 * model's input size are there. */
int eb_check_ready_to_infer(void);
/* The timing harness's job: the model and its int8 input tensor bytes (the
 * input buffer decoded as the encoding says); call eb_input_done() after the run. */
eb_timing_job eb_job(void);
void eb_input_done(void);
/* Parse N (>0) and W (>=0) of infer / eb-infer; prints the reference's errors. */
int eb_parse_n_w(int argc, char **argv, uint32_t *n, uint32_t *w);

#endif /* EB_SESSION_H */
