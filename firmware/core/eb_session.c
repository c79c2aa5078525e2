/*
 * eb_session.c - the state the commands share: the model blob, the tensor arena
 * and the input buffer (with the other modules' buffers, the whole RAM budget of
 * the core), the loaded model, its id and the MLPerf Tiny reference-firmware
 * behaviours chosen with `eb-model` options (PROTOCOL.md): the input encoding of
 * the buffer (int8 as is; uint8-offset, u - 128 on the device like the
 * image-classification and person-detection references; float32, quantized on
 * the device like the anomaly-detection reference) and the results (the
 * dequantized outputs, or the anomaly score). Also the checks and the timing
 * job that `infer` and `eb-infer` share.
 */
#include "eb_session.h"

#include <string.h>

#include "eb_crc32.h"
#include "eb_parse.h"
#include "eb_reply.h"

#if defined(__GNUC__)
#define EB_ALIGN16 __attribute__((aligned(16)))
#else
#define EB_ALIGN16
#endif

const char *const eb_in_names[EB_IN_COUNT] = {"int8", "uint8-offset", "float32"};
const char *const eb_res_names[EB_RES_COUNT] = {"outputs", "mse"};

uint8_t eb_model_buf[EB_MODEL_MAX_BYTES] EB_ALIGN16;
uint8_t eb_arena[EB_ARENA_BYTES] EB_ALIGN16;
uint8_t eb_input_buf[EB_INPUT_MAX_BYTES] EB_ALIGN16;
eb_session eb_s;

void eb_session_init(size_t parser_ram_bytes)
{
    memset(&eb_s, 0, sizeof eb_s);
    strcpy(eb_s.model_id, "none");
    eb_s.parser_ram_bytes = parser_ram_bytes;
    eb_s.model_src = eb_model_buf;
#if EB_FLASH_MODEL
    {
        char err[8];
        eb_s.model_src = eb_flash_model;
        eb_s.model_len = (size_t)(eb_flash_model_end - eb_flash_model);
        eb_s.model_crc = eb_crc32(eb_flash_model, eb_s.model_len);
        eb_s.model_loaded = eb_init_model(err, sizeof err) == EB_OK &&
                            eb_model_input_bytes(&eb_s.model) <= EB_INPUT_MAX_BYTES;
        if (eb_s.model_loaded) {
            eb_set_model_id(NULL);
        }
    }
#endif
}

eb_status eb_init_model(char *err, size_t err_len)
{
    eb_status st;
    err[0] = '\0';
    st = eb_model_init(&eb_s.model, eb_s.model_src, eb_s.model_len, eb_arena, sizeof eb_arena, err, err_len);
    err[err_len - 1u] = '\0';
    return st;
}

void eb_set_model_id(const char *id)
{
    static const char hex[] = "0123456789abcdef";
    size_t i;
    if (id != NULL) {
        strcpy(eb_s.model_id, id);
        return;
    }
    memcpy(eb_s.model_id, "eb-", 3u);
    for (i = 0; i < 8u; i++) {
        eb_s.model_id[3u + i] = hex[(eb_s.model_crc >> (28u - 4u * i)) & 0xFu];
    }
    eb_s.model_id[11] = '\0';
}

size_t eb_session_ram_bytes(void)
{
    return sizeof eb_model_buf + sizeof eb_arena + sizeof eb_input_buf + sizeof eb_s;
}

void eb_unload_model(void)
{
    eb_s.model_loaded = 0;
    eb_s.have_results = 0;
    eb_s.in_enc = EB_IN_INT8;
    eb_s.res_mode = EB_RES_OUTPUTS;
    strcpy(eb_s.model_id, "none");
}

/* Bytes of the input buffer per byte of the model's int8 input tensor. */
static size_t enc_bytes(int enc)
{
    return enc == EB_IN_FLOAT32 ? 4u : 1u;
}

/* Where a float32 input is quantized to: after the floats, 16-byte aligned. */
size_t eb_stage_offset(size_t n)
{
    return (4u * n + 15u) & ~(size_t)15u;
}

/* The MLPerf Tiny references' float -> int8: round half away from zero of
 * x / scale, plus the zero point, saturated. */
static int8_t quantize_f32(float x, float scale, int32_t zp)
{
    double r = (double)(x / scale);
    double t;
    int32_t q;
    if (!(r > -1.0e9 && r < 1.0e9)) {                    /* also NaN */
        return (int8_t)(r > 0.0 ? 127 : -128);
    }
    t = (double)(int32_t)r;                               /* toward zero */
    if (r - t >= 0.5) {
        t += 1.0;
    } else if (t - r >= 0.5) {
        t -= 1.0;
    }
    q = (int32_t)t + zp;
    return (int8_t)(q < -128 ? -128 : (q > 127 ? 127 : q));
}

/* The model's int8 input tensor from the input buffer, as the encoding says:
 * int8 as is; uint8-offset u - 128 (== u ^ 0x80) in place, undone by
 * eb_input_done(); float32 quantized into the staging area after the floats. */
static const uint8_t *input_tensor_bytes(void)
{
    size_t n = eb_model_input_bytes(&eb_s.model);
    size_t i;
    if (eb_s.in_enc == EB_IN_UINT8_OFFSET) {
        for (i = 0; i < n; i++) {
            eb_input_buf[i] ^= 0x80u;
        }
    } else if (eb_s.in_enc == EB_IN_FLOAT32) {
        uint8_t *q = eb_input_buf + eb_stage_offset(n);
        float scale = eb_model_input_scale(&eb_s.model);
        int32_t zp = eb_model_input_zero_point(&eb_s.model);
        for (i = 0; i < n; i++) {
            float x;
            memcpy(&x, eb_input_buf + 4u * i, sizeof x);
            q[i] = (uint8_t)quantize_f32(x, scale, zp);
        }
        return q;
    }
    return eb_input_buf;
}

void eb_input_done(void)
{
    size_t n = eb_model_input_bytes(&eb_s.model);
    size_t i;
    if (eb_s.in_enc == EB_IN_UINT8_OFFSET) {
        for (i = 0; i < n; i++) {
            eb_input_buf[i] ^= 0x80u; /* db print shows the bytes as loaded */
        }
    }
}

/* Print an error and return -1 unless a model and a complete input of the
 * model's input size are there. */
int eb_check_ready_to_infer(void)
{
    size_t need;
    if (!eb_s.model_loaded) {
        eb_out_line("e-[No model loaded: eb-upload model, then eb-model]");
        return -1;
    }
    need = eb_model_input_bytes(&eb_s.model) * enc_bytes(eb_s.in_enc);
    if (eb_s.in_pos < eb_s.in_size) {
        eb_out_str("e-[Input incomplete: ");
        eb_out_u64(eb_s.in_pos);
        eb_out_str(" of ");
        eb_out_u64(eb_s.in_size);
        eb_out_line(" bytes loaded]");
        return -1;
    }
    if (eb_s.in_pos != need) {
        eb_out_str("e-[Input has ");
        eb_out_u64(eb_s.in_pos);
        eb_out_str(" bytes, model expects ");
        eb_out_u64(need);
        if (eb_s.in_enc != EB_IN_INT8) {
            eb_out_str(" (");
            eb_out_str(eb_in_names[eb_s.in_enc]);
            eb_out_str(")");
        }
        eb_out_line("]");
        return -1;
    }
    return 0;
}

/* The timing harness's job: the model and its int8 input tensor bytes
 * (input_tensor_bytes(); call eb_input_done() after the run). */
eb_timing_job eb_job(void)
{
    eb_timing_job j;
    j.model = &eb_s.model;
    j.input = input_tensor_bytes();
    j.input_bytes = eb_model_input_bytes(&eb_s.model);
    return j;
}

/* One count of infer / eb-infer, at least min and at most EB_INFER_N_MAX; else
 * prints the reference's error about the <what> and returns -1. */
static int parse_count(const char *text, const char *what, uint32_t min, uint32_t *v)
{
    if (eb_parse_u32(text, v) != 0 || *v < min) {
        eb_out_str("e-[Inference ");
        eb_out_str(what);
        eb_out_line(min ? " must be >0]" : " must be >=0]");
        return -1;
    }
    if (*v > EB_INFER_N_MAX) {
        eb_out_str("e-[Inference ");
        eb_out_str(what);
        eb_out_str(" must be <=");
        eb_out_u32(EB_INFER_N_MAX);
        eb_out_line("]");
        return -1;
    }
    return 0;
}

/* Parse N (>0) and W (>=0) of infer / eb-infer; prints the reference's errors. */
int eb_parse_n_w(int argc, char **argv, uint32_t *n, uint32_t *w)
{
    if (argc >= 2 && parse_count(argv[1], "iterations", 1u, n) != 0) {
        return -1;
    }
    if (argc >= 3 && parse_count(argv[2], "warmup", 0u, w) != 0) {
        return -1;
    }
    return 0;
}
