/*
 * eb_cmd_edgebench.c - edgebench's extensions of the dialect (PROTOCOL.md):
 * eb-info, eb-upload, eb-model, eb-infer, eb-output, eb-temp, eb-sync. Timed
 * runs are the timing harness's (eb_timing.h), uploads the receiver's
 * (eb_upload.h), the model and input state the session's (eb_session.h).
 */
#include "eb_cmds.h"

#include <string.h>

#include "eb_config.h"
#include "eb_kernels.h"   /* eb_kernels_ram_bytes */
#include "eb_parse.h"
#include "eb_port.h"
#include "eb_reply.h"
#include "eb_session.h"
#include "eb_timing.h"
#include "eb_upload.h"

#define EB_NONCE_MAX 32u         /* `eb-sync <nonce>` echo */

static void info_u32(const char *key, uint32_t v)
{
    eb_out_str("m-eb-");
    eb_out_str(key);
    eb_out_str("-[");
    eb_out_u32(v);
    eb_out_line("]");
}

static void info_str(const char *key, const char *v)
{
    eb_out_str("m-eb-");
    eb_out_str(key);
    eb_out_str("-[");
    eb_out_text(v, 32u);
    eb_out_line("]");
}

void eb_cmd_eb_info(int argc, char **argv)
{
    int32_t mc;
    uint32_t clock_ppm = 0u;
    const char *clock_fallback = "none";
    const char *clock = eb_port_clock(&clock_ppm, &clock_fallback);
    (void)argc;
    (void)argv;
    info_u32("engine", EB_ENGINE_VERSION);
    info_u32("proto", EB_PROTO_VERSION);
    info_str("port", eb_port_name());
    info_str("timing", eb_port_timing_is_real() ? "real" : "emulated");
    info_u32("counter-hz", eb_port_counter_hz());
    info_u32("counter-bits", eb_port_counter_bits());
    info_str("clock", clock);
    info_u32("clock-ppm", clock_ppm);
    info_str("clock-fallback", clock_fallback);
    info_u32("ram-bytes", (uint32_t)(eb_session_ram_bytes() + eb_s.parser_ram_bytes +
                                     eb_reply_ram_bytes() + eb_timing_ram_bytes() +
                                     eb_upload_ram_bytes() + eb_kernels_ram_bytes()));
    info_u32("arena-bytes", EB_ARENA_BYTES);
    info_u32("model-max-bytes", EB_MODEL_MAX_BYTES);
    info_u32("input-max-bytes", EB_INPUT_MAX_BYTES);
    info_u32("frame-max-bytes", EB_FRAME_PAYLOAD_MAX);
    info_u32("cmd-max-bytes", EB_CMD_MAX_BYTES);
    info_str("mode", EB_CFG_ENERGY_MODE ? "energy" : "performance");
    info_str("temp", eb_port_temp_mc(&mc) == 0 ? "yes" : "no");
#if EB_FLASH_MODEL
    info_u32("flash-model-bytes", (uint32_t)(eb_flash_model_end - eb_flash_model));
#else
    info_u32("flash-model-bytes", 0u);
#endif
    eb_out_str("m-eb-loaded-[");
    if (eb_s.model_loaded) {
        eb_out_str("crc32=");
        eb_out_hex(eb_s.model_crc, 8u);
        eb_out_str(",bytes=");
        eb_out_u64(eb_s.model_len);
        eb_out_str(",layers=");
        eb_out_u32(eb_s.model.n_layers);
        eb_out_str(",id=");
        eb_out_str(eb_s.model_id);
    } else {
        eb_out_str("none");
    }
    eb_out_line("]");
}

static void model_uploaded(uint32_t len, uint32_t crc)
{
    eb_s.model_len = len;
    eb_s.model_crc = crc;
}

static void input_uploaded(uint32_t len, uint32_t crc)
{
    (void)crc;
    eb_s.in_size = len;
    eb_s.in_pos = len;
}

void eb_cmd_eb_upload(int argc, char **argv)
{
    uint32_t len = 0u;
    uint32_t crc = 0u;
    uint32_t max;
    int model;
    int r;
    if (argc != 4) {
        eb_out_line("e-[eb-upload-usage: eb-upload model|input LEN CRC32HEX]");
        return;
    }
    model = strcmp(argv[1], "model") == 0;
    if (!model && strcmp(argv[1], "input") != 0) {
        eb_out_str("e-[eb-upload-target: '");
        eb_out_echo(argv[1]);
        eb_out_line("' is neither model nor input]");
        return;
    }
    max = model ? EB_MODEL_MAX_BYTES : EB_INPUT_MAX_BYTES;
    r = eb_parse_u32(argv[2], &len);
    if (r == -1 || (r == 0 && len == 0u)) {
        eb_out_line("e-[eb-upload-length: LEN must be a decimal number >0]");
        return;
    }
    if (r == -2 || len > max) {
        eb_out_str("e-[eb-upload-too-large: ");
        eb_out_echo(argv[2]);
        eb_out_str(" bytes > ");
        eb_out_str(argv[1]);
        eb_out_str(" buffer of ");
        eb_out_u32(max);
        eb_out_line(" bytes]");
        return;
    }
    if (eb_parse_hex32(argv[3], &crc) != 0) {
        eb_out_line("e-[eb-upload-crc: CRC32 must be 1 to 8 hex digits]");
        return;
    }
    /* The old contents are invalid from the first byte on. */
    if (model) {
        eb_s.model_len = 0u;
        eb_s.model_src = eb_model_buf;
        eb_unload_model();
        eb_upload_begin(eb_model_buf, len, crc, model_uploaded);
    } else {
        eb_s.in_size = 0u;
        eb_s.in_pos = 0u;
        eb_upload_begin(eb_input_buf, len, crc, input_uploaded);
    }
}

static const char *status_word(eb_status st)
{
    switch (st) {
    case EB_ERR_MAGIC: return "magic";
    case EB_ERR_VERSION: return "version";
    case EB_ERR_CRC: return "crc";
    case EB_ERR_TRUNCATED: return "truncated";
    case EB_ERR_ARENA: return "arena";
    case EB_ERR_OP: return "op";
    case EB_ERR_INVALID: return "invalid";
    default: return "error";
    }
}

static int valid_model_id(const char *id)
{
    size_t n = 0u;
    for (; *id != '\0'; id++, n++) {
        char c = *id;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '-' || c == '.';
        if (!ok || n == EB_MODEL_ID_MAX) {
            return 0;
        }
    }
    return n > 0u;
}

/* The model's id: the one given, else "eb-" and the blob's CRC-32 in hex. */
/* The index of `value` in names[0..count), or -1. */
static int name_index(const char *value, const char *const *names, int count)
{
    int i;
    for (i = 0; i < count; i++) {
        if (strcmp(value, names[i]) == 0) {
            return i;
        }
    }
    return -1;
}

/* eb-model's words after the command: at most one ID and key=value options,
 * any order. 0 with the choices, or -1 after printing the error. */
static int parse_model_args(int argc, char **argv, const char **id, int *in_enc, int *res_mode)
{
    int a;
    *id = NULL;
    *in_enc = EB_IN_INT8;
    *res_mode = EB_RES_OUTPUTS;
    for (a = 1; a < argc; a++) {
        const char *eq = strchr(argv[a], '=');
        int k = -1;
        if (eq == NULL) {
            if (*id != NULL) {
                eb_out_line("e-[eb-model-usage: eb-model [ID] [input=ENC] [results=RES]]");
                return -1;
            }
            if (!valid_model_id(argv[a])) {
                eb_out_line("e-[eb-model-id: 1 to 16 characters of A-Z a-z 0-9 _ - .]");
                return -1;
            }
            *id = argv[a];
            continue;
        }
        if (strncmp(argv[a], "input=", 6u) == 0) {
            k = name_index(eq + 1, eb_in_names, EB_IN_COUNT);
            *in_enc = k >= 0 ? k : *in_enc;
        } else if (strncmp(argv[a], "results=", 8u) == 0) {
            k = name_index(eq + 1, eb_res_names, EB_RES_COUNT);
            *res_mode = k >= 0 ? k : *res_mode;
        }
        if (k < 0) {
            eb_out_str("e-[eb-model-option: '");
            eb_out_echo(argv[a]);
            eb_out_line("' is not input=int8|uint8-offset|float32 or results=outputs|mse]");
            return -1;
        }
    }
    return 0;
}

/* The model fits the chosen input encoding and results; else prints why. */
static int check_model_options(int in_enc, int res_mode)
{
    size_t n = eb_model_input_bytes(&eb_s.model);
    size_t need = in_enc == EB_IN_FLOAT32 ? eb_stage_offset(n) + n : n;
    if (need > EB_INPUT_MAX_BYTES) {
        eb_out_str("e-[eb-model-input: model input of ");
        eb_out_u64(n);
        eb_out_str(" bytes needs ");
        eb_out_u64(need);
        eb_out_str(" bytes as ");
        eb_out_str(eb_in_names[in_enc]);
        eb_out_str(" > input buffer of ");
        eb_out_u32(EB_INPUT_MAX_BYTES);
        eb_out_line(" bytes]");
        return -1;
    }
    if (res_mode == EB_RES_MSE && eb_model_output_bytes(&eb_s.model) != n) {
        eb_out_str("e-[eb-model-results: mse compares output and input element by element; the model has ");
        eb_out_u64(n);
        eb_out_str(" inputs, ");
        eb_out_u64(eb_model_output_bytes(&eb_s.model));
        eb_out_line(" outputs]");
        return -1;
    }
    return 0;
}

void eb_cmd_eb_model(int argc, char **argv)
{
    char err[96];
    eb_status st;
    const char *id;
    int in_enc;
    int res_mode;
    if (parse_model_args(argc, argv, &id, &in_enc, &res_mode) != 0) {
        return;
    }
    eb_unload_model();
    if (eb_s.model_len == 0u) {
        eb_out_line("e-[eb-model-none: no model uploaded (eb-upload model LEN CRC32)]");
        return;
    }
    st = eb_init_model(err, sizeof err);
    if (st != EB_OK) {
        eb_out_str("e-[eb-model-");
        eb_out_str(status_word(st));
        if (err[0] != '\0') {
            eb_out_str(": ");
            eb_out_text(err, sizeof err);
        }
        eb_out_line("]");
        return;
    }
    if (eb_model_input_bytes(&eb_s.model) > EB_INPUT_MAX_BYTES) {
        eb_out_str("e-[eb-model-input: model input of ");
        eb_out_u64(eb_model_input_bytes(&eb_s.model));
        eb_out_str(" bytes > input buffer of ");
        eb_out_u32(EB_INPUT_MAX_BYTES);
        eb_out_line(" bytes]");
        return;
    }
    if (check_model_options(in_enc, res_mode) != 0) {
        return;
    }
    eb_s.model_loaded = 1;
    eb_s.in_enc = in_enc;
    eb_s.res_mode = res_mode;
    eb_set_model_id(id);
    eb_out_str("m-eb-model-[layers=");
    eb_out_u32(eb_s.model.n_layers);
    eb_out_str(",arena=");
    eb_out_u64(eb_s.model.arena_used);
    eb_out_str(",in=");
    eb_out_u64(eb_model_input_bytes(&eb_s.model));
    eb_out_str(",out=");
    eb_out_u64(eb_model_output_bytes(&eb_s.model));
    eb_out_line("]");
}

void eb_cmd_eb_infer(int argc, char **argv)
{
    uint32_t n = 1u;
    uint32_t w = 0u;
    int layers = 0;
    eb_timing_job j;
    if (argc < 2 || argc > 4) {
        eb_out_line("e-[eb-infer-usage: eb-infer N [W] [layers]]");
        return;
    }
    if (strcmp(argv[argc - 1], "layers") == 0 && argc >= 3) {
        layers = 1;
        argc--;
    }
    if (argc == 4) {
        eb_out_line("e-[eb-infer-usage: eb-infer N [W] [layers]]");
        return;
    }
    if (eb_parse_n_w(argc, argv, &n, &w) != 0 || eb_check_ready_to_infer() != 0) {
        return;
    }
    j = eb_job();
    eb_s.have_results = eb_timing_eb_infer(&j, n, w, layers) == 0;
    eb_input_done();
}

void eb_cmd_eb_output(int argc, char **argv)
{
    size_t i;
    size_t n;
    const int8_t *q;
    (void)argc;
    (void)argv;
    if (!eb_s.model_loaded || !eb_s.have_results) {
        eb_out_line("e-[eb-output-none: run infer or eb-infer first]");
        return;
    }
    n = eb_model_output_bytes(&eb_s.model);
    q = eb_model_output(&eb_s.model);
    eb_out_str("m-eb-output-[");
    for (i = 0; i < n; i++) {
        eb_out_hex((uint8_t)q[i], 2u);
    }
    eb_out_line("]");
}

void eb_cmd_eb_temp(int argc, char **argv)
{
    int32_t mc = 0;
    (void)argc;
    (void)argv;
    if (eb_port_temp_mc(&mc) != 0) {
        eb_out_line("e-[eb-temp-unavailable]");
        return;
    }
    eb_out_str("m-eb-temp-mc-[");
    if (mc < 0) {
        eb_out_bytes("-", 1u);
        eb_out_u64((uint64_t)(-(int64_t)mc));
    } else {
        eb_out_u64((uint64_t)mc);
    }
    eb_out_line("]");
}

/* `eb-sync <nonce>`: echo the nonce; a host framing it knows, from the
 * sequence number and the nonce, that every older reply has been read. */
void eb_cmd_eb_sync(int argc, char **argv)
{
    if (argc != 2) {
        eb_out_line("e-[eb-sync-usage: eb-sync NONCE]");
        return;
    }
    eb_out_str("m-eb-sync-[");
    eb_out_text(argv[1], EB_NONCE_MAX);
    eb_out_line("]");
}
