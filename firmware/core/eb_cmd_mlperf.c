/*
 * eb_cmd_mlperf.c - the commands of the MLPerf Tiny device-under-test dialect:
 * name, profile, timestamp, db, infer, results (help is the command table's own,
 * eb_commands.c). Written from the dialect's observable behaviour (reply strings
 * checked against the reference firmware in tests/test_firmware_protocol.py).
 */
#include "eb_cmds.h"

#include <string.h>

#include "eb_config.h"
#include "eb_parse.h"
#include "eb_port.h"
#include "eb_reply.h"
#include "eb_session.h"
#include "eb_timing.h"

/* Input element i as a real number: the float sent, or the dequantized byte. */
static float input_real(size_t i)
{
    float x;
    if (eb_s.in_enc == EB_IN_FLOAT32) {
        memcpy(&x, eb_input_buf + 4u * i, sizeof x);
        return x;
    }
    x = (float)((int32_t)(int8_t)(eb_s.in_enc == EB_IN_UINT8_OFFSET ? eb_input_buf[i] ^ 0x80u : eb_input_buf[i]) -
                eb_model_input_zero_point(&eb_s.model));
    return x * eb_model_input_scale(&eb_s.model);
}

/* The anomaly-detection reference's score: the mean over the elements of
 * (dequantized output - input)^2, in float, summed in element order. */
static float mse_score(void)
{
    size_t n = eb_model_output_bytes(&eb_s.model);
    const int8_t *q = eb_model_output(&eb_s.model);
    float scale = eb_model_output_scale(&eb_s.model);
    int32_t zp = eb_model_output_zero_point(&eb_s.model);
    float sum = 0.0f;
    size_t i;
    for (i = 0; i < n; i++) {
        float diff = (float)((int32_t)q[i] - zp) * scale - input_real(i);
        sum += diff * diff;
    }
    return n > 0u ? sum / (float)n : 0.0f;
}

void eb_cmd_name(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    eb_out_str("m-name-dut-[");
    eb_out_text(eb_port_name(), 32u);
    eb_out_line("]");
}

/* profile%: the reference's two lines (the MLCommons runner reads m-model-[..]
 * as the benchmark id: kws01, ic01, vww01, ad01); an emulated port says so
 * inside m-profile-[..], the one free text the runner prints; with a model
 * loaded, its input encoding and results as m-eb- lines (the runner skips them). */
void eb_cmd_profile(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    eb_out_line(eb_port_timing_is_real()
                    ? "m-profile-[" EB_FW_VERSION "]"
                    : "m-profile-[" EB_FW_VERSION " (EMULATED timing: QEMU instruction counts)]");
    eb_out_str("m-model-[");
    eb_out_str(eb_s.model_id);
    eb_out_line("]");
    if (eb_s.model_loaded) {
        eb_out_str("m-eb-input-[");
        eb_out_str(eb_in_names[eb_s.in_enc]);
        eb_out_line("]");
        eb_out_str("m-eb-results-[");
        eb_out_str(eb_res_names[eb_s.res_mode]);
        eb_out_line("]");
    }
}

void eb_cmd_timestamp(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    eb_timing_timestamp();
}

static void db_print(void)
{
    size_t i;
    for (i = 0; i < eb_s.in_size; i++) {
        if (i % 8u == 0u) {
            eb_out_str("m-buffer-");
        }
        eb_out_hex(eb_input_buf[i], 2u);
        if ((i + 1u) % 8u == 0u || i + 1u == eb_s.in_size) {
            eb_out_eol();
        } else {
            eb_out_bytes("-", 1u);
        }
    }
}

static void db_load(int argc, char **argv)
{
    uint32_t n = 0u;
    int r;
    if (argc < 3) {
        eb_out_line("e-[Command 'db load' requires the # of bytes]");
        return;
    }
    eb_s.in_size = 0u; /* a failed load leaves no stale input behind */
    eb_s.in_pos = 0u;
    r = eb_parse_u32(argv[2], &n);
    if (r == -1 || (r == 0 && n == 0u)) {
        eb_out_line("e-[Command 'db load' must be >0 bytes]");
        return;
    }
    if (r == -2 || n > EB_INPUT_MAX_BYTES) {
        eb_out_str("e-[Supplied buffer size ");
        eb_out_echo(argv[2]);
        eb_out_str(" exceeds maximum of ");
        eb_out_u32(EB_INPUT_MAX_BYTES);
        eb_out_line("]");
        return;
    }
    eb_s.in_size = n;
    eb_out_str("m-[Expecting ");
    eb_out_u32(n);
    eb_out_line(" bytes]");
}

static void db_hex(const char *hex)
{
    size_t digits = strlen(hex);
    size_t i;
    if (eb_s.in_size == 0u) {
        eb_out_line("e-[Command 'db' needs 'db load N' first]");
        return;
    }
    if (eb_s.in_pos >= eb_s.in_size) {
        eb_out_line("e-[Buffer already full: send 'db load N' to load again]");
        return;
    }
    if ((digits & 1u) != 0u) {
        eb_out_line("e-[Insufficent number of hex digits]"); /* reference spelling */
        return;
    }
    for (i = 0; i < digits; i += 2u) {
        if (eb_hex_digit(hex[i]) < 0 || eb_hex_digit(hex[i + 1u]) < 0) {
            char pair[3];
            pair[0] = hex[i];
            pair[1] = hex[i + 1u];
            pair[2] = '\0';
            eb_out_str("e-[Invalid hex digit '");
            eb_out_echo(pair);
            eb_out_line("']");
            return; /* nothing of a bad chunk is stored */
        }
    }
    for (i = 0; i < digits && eb_s.in_pos < eb_s.in_size; i += 2u) {
        eb_input_buf[eb_s.in_pos++] = (uint8_t)((eb_hex_digit(hex[i]) << 4) | eb_hex_digit(hex[i + 1u]));
    }
    if (eb_s.in_pos == eb_s.in_size) {
        eb_out_line("m-load-done"); /* surplus digits are ignored, like the reference */
    }
}

void eb_cmd_db(int argc, char **argv)
{
    if (argc < 2) {
        eb_out_line("e-[Command 'db' requires a subcommand]");
    } else if (strcmp(argv[1], "load") == 0) {
        db_load(argc, argv);
    } else if (strcmp(argv[1], "print") == 0) {
        db_print();
    } else {
        db_hex(argv[1]);
    }
}

static void print_results(void)
{
    size_t i;
    size_t n = eb_model_output_bytes(&eb_s.model);
    const int8_t *q = eb_model_output(&eb_s.model);
    double scale = (double)eb_model_output_scale(&eb_s.model);
    int32_t zp = eb_model_output_zero_point(&eb_s.model);
    if (eb_s.res_mode == EB_RES_MSE) {
        eb_out_str("m-results-[");
        eb_out_fixed3((double)mse_score());
        eb_out_line("]");
        return;
    }
    eb_out_str("m-results-[");
    for (i = 0; i < n; i++) {
        if (i > 0u) {
            eb_out_bytes(",", 1u);
        }
        eb_out_fixed3(scale * (double)((int32_t)q[i] - zp));
    }
    eb_out_line("]");
}

void eb_cmd_infer(int argc, char **argv)
{
    uint32_t n = 1u;
    uint32_t w = 10u; /* the reference's default */
    eb_timing_job j;
    if (argc > 3) {
        eb_out_line("e-[Usage: infer N [W]]");
        return;
    }
    if (eb_parse_n_w(argc, argv, &n, &w) != 0 || eb_check_ready_to_infer() != 0) {
        return;
    }
    j = eb_job();
    eb_s.have_results = eb_timing_infer(&j, n, w) == 0;
    eb_input_done();
    if (eb_s.have_results) {
        print_results();
    }
}

void eb_cmd_results(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    if (!eb_s.model_loaded || !eb_s.have_results) {
        eb_out_line("e-[No results: run infer first]");
        return;
    }
    print_results();
}
