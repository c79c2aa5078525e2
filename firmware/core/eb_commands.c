/*
 * eb_commands.c - the commands of the command parser (eb_proto.c): the MLPerf
 * Tiny dialect (name, profile, help, timestamp, db, infer, results) and the
 * edgebench extensions (eb-info, eb-upload, eb-model, eb-infer, eb-output,
 * eb-temp, eb-sync), with the model and input state they share. Timed runs are
 * the timing harness's (eb_timing.h), uploads the receiver's (eb_upload.h).
 *
 * MLPerf Tiny reference-firmware behaviours chosen with `eb-model` options
 * (PROTOCOL.md): the input encoding of the buffer (int8 as is; uint8-offset,
 * u - 128 on the device like the image-classification and person-detection
 * references; float32, quantized on the device like the anomaly-detection
 * reference) and the results (the dequantized outputs, or the anomaly score:
 * mean squared error between the input and the output, one number).
 */
#include <string.h>

#include "eb_config.h"
#include "eb_crc32.h"
#include "eb_engine.h"
#include "eb_kernels.h"   /* eb_kernels_ram_bytes */
#include "eb_port.h"
#include "eb_proto_int.h"
#include "eb_reply.h"
#include "eb_timing.h"
#include "eb_upload.h"

#if defined(__GNUC__)
#define EB_ALIGN16 __attribute__((aligned(16)))
#else
#define EB_ALIGN16
#endif

#define EB_MODEL_ID_MAX 16u      /* `eb-model <id>` length */
#define EB_NONCE_MAX 32u         /* `eb-sync <nonce>` echo */

/* Input encodings of the input buffer (eb-model input=...). */
enum { EB_IN_INT8 = 0, EB_IN_UINT8_OFFSET = 1, EB_IN_FLOAT32 = 2, EB_IN_COUNT = 3 };
static const char *const g_in_names[EB_IN_COUNT] = {"int8", "uint8-offset", "float32"};
/* What m-results reports (eb-model results=...). */
enum { EB_RES_OUTPUTS = 0, EB_RES_MSE = 1, EB_RES_COUNT = 2 };
static const char *const g_res_names[EB_RES_COUNT] = {"outputs", "mse"};

/* Static buffers: with the other modules' (eb-info ram-bytes), the whole RAM
 * budget of the core. */
static uint8_t g_model_buf[EB_MODEL_MAX_BYTES] EB_ALIGN16;
static uint8_t g_arena[EB_ARENA_BYTES] EB_ALIGN16;
static uint8_t g_input[EB_INPUT_MAX_BYTES] EB_ALIGN16;

#if EB_FLASH_MODEL
/* A model blob linked into the image (firmware/Makefile EB_MODEL_BLOB=): const,
 * 16-byte aligned, in flash on a microcontroller; the engine reads its weights
 * in place, so only the arena needs RAM. Loaded at start-up; an `eb-upload
 * model` into the RAM buffer replaces it until the next reset. */
extern const uint8_t eb_flash_model[];
extern const uint8_t eb_flash_model_end[];
#endif

static struct {
    /* input buffer: declared size (db load / upload) and bytes loaded */
    size_t in_size;
    size_t in_pos;
    /* model blob and the model made from it */
    const uint8_t *model_src;  /* the blob: g_model_buf, or the one linked into flash */
    size_t model_len;          /* bytes of a complete, CRC-checked upload (or the linked blob) */
    uint32_t model_crc;
    int model_loaded;          /* eb_model_init succeeded on it */
    eb_model model;
    char model_id[EB_MODEL_ID_MAX + 1u];
    int in_enc;                /* EB_IN_*: how the input buffer's bytes are read */
    int res_mode;              /* EB_RES_*: what m-results reports */
    int have_results;          /* the output tensor holds a finished inference */
} S;

static eb_status init_model(char *err, size_t err_len);
static void set_model_id(const char *id);

void eb_commands_init(void)
{
    memset(&S, 0, sizeof S);
    strcpy(S.model_id, "none");
    S.model_src = g_model_buf;
#if EB_FLASH_MODEL
    {
        char err[8];
        S.model_src = eb_flash_model;
        S.model_len = (size_t)(eb_flash_model_end - eb_flash_model);
        S.model_crc = eb_crc32(eb_flash_model, S.model_len);
        S.model_loaded = init_model(err, sizeof err) == EB_OK &&
                         eb_model_input_bytes(&S.model) <= EB_INPUT_MAX_BYTES;
        if (S.model_loaded) {
            set_model_id(NULL);
        }
    }
#endif
}

size_t eb_commands_ram_bytes(void)
{
    return sizeof g_model_buf + sizeof g_arena + sizeof g_input + sizeof S;
}

/* ------------------------------------------------------------------------ */
/* Model and input.                                                          */

static void unload_model(void)
{
    S.model_loaded = 0;
    S.have_results = 0;
    S.in_enc = EB_IN_INT8;
    S.res_mode = EB_RES_OUTPUTS;
    strcpy(S.model_id, "none");
}

/* Bytes of the input buffer per byte of the model's int8 input tensor. */
static size_t enc_bytes(int enc)
{
    return enc == EB_IN_FLOAT32 ? 4u : 1u;
}

/* Where a float32 input is quantized to: after the floats, 16-byte aligned. */
static size_t stage_offset(size_t n)
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
 * input_done(); float32 quantized into the staging area after the floats. */
static const uint8_t *input_tensor_bytes(void)
{
    size_t n = eb_model_input_bytes(&S.model);
    size_t i;
    if (S.in_enc == EB_IN_UINT8_OFFSET) {
        for (i = 0; i < n; i++) {
            g_input[i] ^= 0x80u;
        }
    } else if (S.in_enc == EB_IN_FLOAT32) {
        uint8_t *q = g_input + stage_offset(n);
        float scale = eb_model_input_scale(&S.model);
        int32_t zp = eb_model_input_zero_point(&S.model);
        for (i = 0; i < n; i++) {
            float x;
            memcpy(&x, g_input + 4u * i, sizeof x);
            q[i] = (uint8_t)quantize_f32(x, scale, zp);
        }
        return q;
    }
    return g_input;
}

static void input_done(void)
{
    size_t n = eb_model_input_bytes(&S.model);
    size_t i;
    if (S.in_enc == EB_IN_UINT8_OFFSET) {
        for (i = 0; i < n; i++) {
            g_input[i] ^= 0x80u; /* db print shows the bytes as loaded */
        }
    }
}

/* Input element i as a real number: the float sent, or the dequantized byte. */
static float input_real(size_t i)
{
    float x;
    if (S.in_enc == EB_IN_FLOAT32) {
        memcpy(&x, g_input + 4u * i, sizeof x);
        return x;
    }
    x = (float)((int32_t)(int8_t)(S.in_enc == EB_IN_UINT8_OFFSET ? g_input[i] ^ 0x80u : g_input[i]) -
                eb_model_input_zero_point(&S.model));
    return x * eb_model_input_scale(&S.model);
}

/* The anomaly-detection reference's score: the mean over the elements of
 * (dequantized output - input)^2, in float, summed in element order. */
static float mse_score(void)
{
    size_t n = eb_model_output_bytes(&S.model);
    const int8_t *q = eb_model_output(&S.model);
    float scale = eb_model_output_scale(&S.model);
    int32_t zp = eb_model_output_zero_point(&S.model);
    float sum = 0.0f;
    size_t i;
    for (i = 0; i < n; i++) {
        float diff = (float)((int32_t)q[i] - zp) * scale - input_real(i);
        sum += diff * diff;
    }
    return n > 0u ? sum / (float)n : 0.0f;
}

/* Print an error and return -1 unless a model and a complete input of the
 * model's input size are there. */
static int check_ready_to_infer(void)
{
    size_t need;
    if (!S.model_loaded) {
        eb_out_line("e-[No model loaded: eb-upload model, then eb-model]");
        return -1;
    }
    need = eb_model_input_bytes(&S.model) * enc_bytes(S.in_enc);
    if (S.in_pos < S.in_size) {
        eb_out_str("e-[Input incomplete: ");
        eb_out_u64(S.in_pos);
        eb_out_str(" of ");
        eb_out_u64(S.in_size);
        eb_out_line(" bytes loaded]");
        return -1;
    }
    if (S.in_pos != need) {
        eb_out_str("e-[Input has ");
        eb_out_u64(S.in_pos);
        eb_out_str(" bytes, model expects ");
        eb_out_u64(need);
        if (S.in_enc != EB_IN_INT8) {
            eb_out_str(" (");
            eb_out_str(g_in_names[S.in_enc]);
            eb_out_str(")");
        }
        eb_out_line("]");
        return -1;
    }
    return 0;
}

/* The timing harness's job: the model and its int8 input tensor bytes
 * (input_tensor_bytes(); call input_done() after the run). */
static eb_timing_job job(void)
{
    eb_timing_job j;
    j.model = &S.model;
    j.input = input_tensor_bytes();
    j.input_bytes = eb_model_input_bytes(&S.model);
    return j;
}

/* Parse N (>0) and W (>=0) of infer / eb-infer; prints the reference's errors. */
static int parse_n_w(int argc, char **argv, uint32_t *n, uint32_t *w)
{
    if (argc >= 2) {
        if (eb_parse_u32(argv[1], n) != 0 || *n == 0u) {
            eb_out_line("e-[Inference iterations must be >0]");
            return -1;
        }
        if (*n > EB_INFER_N_MAX) {
            eb_out_str("e-[Inference iterations must be <=");
            eb_out_u32(EB_INFER_N_MAX);
            eb_out_line("]");
            return -1;
        }
    }
    if (argc >= 3) {
        if (eb_parse_u32(argv[2], w) != 0) {
            eb_out_line("e-[Inference warmup must be >=0]");
            return -1;
        }
        if (*w > EB_INFER_N_MAX) {
            eb_out_str("e-[Inference warmup must be <=");
            eb_out_u32(EB_INFER_N_MAX);
            eb_out_line("]");
            return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* MLPerf Tiny commands.                                                     */

static void cmd_name(int argc, char **argv)
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
static void cmd_profile(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    eb_out_line(eb_port_timing_is_real()
                    ? "m-profile-[" EB_FW_VERSION "]"
                    : "m-profile-[" EB_FW_VERSION " (EMULATED timing: QEMU instruction counts)]");
    eb_out_str("m-model-[");
    eb_out_str(S.model_id);
    eb_out_line("]");
    if (S.model_loaded) {
        eb_out_str("m-eb-input-[");
        eb_out_str(g_in_names[S.in_enc]);
        eb_out_line("]");
        eb_out_str("m-eb-results-[");
        eb_out_str(g_res_names[S.res_mode]);
        eb_out_line("]");
    }
}

static void cmd_help(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    eb_out_line(EB_FW_VERSION " (MLPerf Tiny DUT dialect + edgebench protocol 2)");
    eb_out_line("");
    eb_out_line("help          : Print this information");
    eb_out_line("name          : Print the name of the device");
    eb_out_line("timestamp     : Print m-lap-us-<us> (energy mode: GPIO edge)");
    eb_out_line("profile       : Print firmware and model identification");
    eb_out_line("db SUBCMD     : Manipulate the input byte buffer");
    eb_out_line("  load N      : Expect N bytes");
    eb_out_line("  db HH[HH]*  : Load 8-bit hex byte(s) until N bytes");
    eb_out_line("  print       : Print the N bytes as hex");
    eb_out_line("infer N [W=10]: Execute N inferences after W warmup loops");
    eb_out_line("results       : Return the result fp32 vector");
    eb_out_line("eb-info       : Device, counter and buffer sizes");
    eb_out_line("eb-upload model|input LEN CRC32 : Binary upload in CRC-checked frames");
    eb_out_line("eb-model [ID] [input=E] [results=R] : Load the uploaded model blob");
    eb_out_line("  input=int8|uint8-offset|float32, results=outputs|mse");
    eb_out_line("eb-infer N [W=0] [layers] : N inferences timed one by one");
    eb_out_line("eb-output     : Raw int8 output of the last inference");
    eb_out_line("eb-temp       : Die temperature");
    eb_out_line("eb-sync NONCE : Echo NONCE (link resynchronisation)");
    eb_out_line("eb-... #SEQ:CRC32 : Framed request: every reply line carries SEQ and a CRC");
}

static void cmd_timestamp(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    eb_timing_timestamp();
}

static void db_print(void)
{
    size_t i;
    for (i = 0; i < S.in_size; i++) {
        if (i % 8u == 0u) {
            eb_out_str("m-buffer-");
        }
        eb_out_hex(g_input[i], 2u);
        if ((i + 1u) % 8u == 0u || i + 1u == S.in_size) {
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
    S.in_size = 0u; /* a failed load leaves no stale input behind */
    S.in_pos = 0u;
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
    S.in_size = n;
    eb_out_str("m-[Expecting ");
    eb_out_u32(n);
    eb_out_line(" bytes]");
}

static void db_hex(const char *hex)
{
    size_t digits = strlen(hex);
    size_t i;
    if (S.in_size == 0u) {
        eb_out_line("e-[Command 'db' needs 'db load N' first]");
        return;
    }
    if (S.in_pos >= S.in_size) {
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
    for (i = 0; i < digits && S.in_pos < S.in_size; i += 2u) {
        g_input[S.in_pos++] = (uint8_t)((eb_hex_digit(hex[i]) << 4) | eb_hex_digit(hex[i + 1u]));
    }
    if (S.in_pos == S.in_size) {
        eb_out_line("m-load-done"); /* surplus digits are ignored, like the reference */
    }
}

static void cmd_db(int argc, char **argv)
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
    size_t n = eb_model_output_bytes(&S.model);
    const int8_t *q = eb_model_output(&S.model);
    double scale = (double)eb_model_output_scale(&S.model);
    int32_t zp = eb_model_output_zero_point(&S.model);
    if (S.res_mode == EB_RES_MSE) {
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

static void cmd_infer(int argc, char **argv)
{
    uint32_t n = 1u;
    uint32_t w = 10u; /* the reference's default */
    eb_timing_job j;
    if (argc > 3) {
        eb_out_line("e-[Usage: infer N [W]]");
        return;
    }
    if (parse_n_w(argc, argv, &n, &w) != 0 || check_ready_to_infer() != 0) {
        return;
    }
    j = job();
    S.have_results = eb_timing_infer(&j, n, w) == 0;
    input_done();
    if (S.have_results) {
        print_results();
    }
}

static void cmd_results(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    if (!S.model_loaded || !S.have_results) {
        eb_out_line("e-[No results: run infer first]");
        return;
    }
    print_results();
}

/* ------------------------------------------------------------------------ */
/* edgebench extensions.                                                     */

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

static void cmd_eb_info(int argc, char **argv)
{
    int32_t mc;
    (void)argc;
    (void)argv;
    info_u32("engine", EB_ENGINE_VERSION);
    info_u32("proto", EB_PROTO_VERSION);
    info_str("port", eb_port_name());
    info_str("timing", eb_port_timing_is_real() ? "real" : "emulated");
    info_u32("counter-hz", eb_port_counter_hz());
    info_u32("counter-bits", eb_port_counter_bits());
    info_u32("ram-bytes", (uint32_t)(eb_commands_ram_bytes() + eb_proto_ram_bytes() +
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
    if (S.model_loaded) {
        eb_out_str("crc32=");
        eb_out_hex(S.model_crc, 8u);
        eb_out_str(",bytes=");
        eb_out_u64(S.model_len);
        eb_out_str(",layers=");
        eb_out_u32(S.model.n_layers);
        eb_out_str(",id=");
        eb_out_str(S.model_id);
    } else {
        eb_out_str("none");
    }
    eb_out_line("]");
}

static void model_uploaded(uint32_t len, uint32_t crc)
{
    S.model_len = len;
    S.model_crc = crc;
}

static void input_uploaded(uint32_t len, uint32_t crc)
{
    (void)crc;
    S.in_size = len;
    S.in_pos = len;
}

static void cmd_eb_upload(int argc, char **argv)
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
        S.model_len = 0u;
        S.model_src = g_model_buf;
        unload_model();
        eb_upload_begin(g_model_buf, len, crc, model_uploaded);
    } else {
        S.in_size = 0u;
        S.in_pos = 0u;
        eb_upload_begin(g_input, len, crc, input_uploaded);
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
static void set_model_id(const char *id)
{
    static const char hex[] = "0123456789abcdef";
    size_t i;
    if (id != NULL) {
        strcpy(S.model_id, id);
        return;
    }
    memcpy(S.model_id, "eb-", 3u);
    for (i = 0; i < 8u; i++) {
        S.model_id[3u + i] = hex[(S.model_crc >> (28u - 4u * i)) & 0xFu];
    }
    S.model_id[11] = '\0';
}

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
            k = name_index(eq + 1, g_in_names, EB_IN_COUNT);
            *in_enc = k >= 0 ? k : *in_enc;
        } else if (strncmp(argv[a], "results=", 8u) == 0) {
            k = name_index(eq + 1, g_res_names, EB_RES_COUNT);
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
    size_t n = eb_model_input_bytes(&S.model);
    size_t need = in_enc == EB_IN_FLOAT32 ? stage_offset(n) + n : n;
    if (need > EB_INPUT_MAX_BYTES) {
        eb_out_str("e-[eb-model-input: model input of ");
        eb_out_u64(n);
        eb_out_str(" bytes needs ");
        eb_out_u64(need);
        eb_out_str(" bytes as ");
        eb_out_str(g_in_names[in_enc]);
        eb_out_str(" > input buffer of ");
        eb_out_u32(EB_INPUT_MAX_BYTES);
        eb_out_line(" bytes]");
        return -1;
    }
    if (res_mode == EB_RES_MSE && eb_model_output_bytes(&S.model) != n) {
        eb_out_str("e-[eb-model-results: mse compares output and input element by element; the model has ");
        eb_out_u64(n);
        eb_out_str(" inputs, ");
        eb_out_u64(eb_model_output_bytes(&S.model));
        eb_out_line(" outputs]");
        return -1;
    }
    return 0;
}

/* The engine's model over the current blob (uploaded or linked) and the arena. */
static eb_status init_model(char *err, size_t err_len)
{
    eb_status st;
    err[0] = '\0';
    st = eb_model_init(&S.model, S.model_src, S.model_len, g_arena, sizeof g_arena, err, err_len);
    err[err_len - 1u] = '\0';
    return st;
}

static void cmd_eb_model(int argc, char **argv)
{
    char err[96];
    eb_status st;
    const char *id;
    int in_enc;
    int res_mode;
    if (parse_model_args(argc, argv, &id, &in_enc, &res_mode) != 0) {
        return;
    }
    unload_model();
    if (S.model_len == 0u) {
        eb_out_line("e-[eb-model-none: no model uploaded (eb-upload model LEN CRC32)]");
        return;
    }
    st = init_model(err, sizeof err);
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
    if (eb_model_input_bytes(&S.model) > EB_INPUT_MAX_BYTES) {
        eb_out_str("e-[eb-model-input: model input of ");
        eb_out_u64(eb_model_input_bytes(&S.model));
        eb_out_str(" bytes > input buffer of ");
        eb_out_u32(EB_INPUT_MAX_BYTES);
        eb_out_line(" bytes]");
        return;
    }
    if (check_model_options(in_enc, res_mode) != 0) {
        return;
    }
    S.model_loaded = 1;
    S.in_enc = in_enc;
    S.res_mode = res_mode;
    set_model_id(id);
    eb_out_str("m-eb-model-[layers=");
    eb_out_u32(S.model.n_layers);
    eb_out_str(",arena=");
    eb_out_u64(S.model.arena_used);
    eb_out_str(",in=");
    eb_out_u64(eb_model_input_bytes(&S.model));
    eb_out_str(",out=");
    eb_out_u64(eb_model_output_bytes(&S.model));
    eb_out_line("]");
}

static void cmd_eb_infer(int argc, char **argv)
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
    if (parse_n_w(argc, argv, &n, &w) != 0 || check_ready_to_infer() != 0) {
        return;
    }
    j = job();
    S.have_results = eb_timing_eb_infer(&j, n, w, layers) == 0;
    input_done();
}

static void cmd_eb_output(int argc, char **argv)
{
    size_t i;
    size_t n;
    const int8_t *q;
    (void)argc;
    (void)argv;
    if (!S.model_loaded || !S.have_results) {
        eb_out_line("e-[eb-output-none: run infer or eb-infer first]");
        return;
    }
    n = eb_model_output_bytes(&S.model);
    q = eb_model_output(&S.model);
    eb_out_str("m-eb-output-[");
    for (i = 0; i < n; i++) {
        eb_out_hex((uint8_t)q[i], 2u);
    }
    eb_out_line("]");
}

static void cmd_eb_temp(int argc, char **argv)
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
static void cmd_eb_sync(int argc, char **argv)
{
    if (argc != 2) {
        eb_out_line("e-[eb-sync-usage: eb-sync NONCE]");
        return;
    }
    eb_out_str("m-eb-sync-[");
    eb_out_text(argv[1], EB_NONCE_MAX);
    eb_out_line("]");
}

/* ------------------------------------------------------------------------ */
/* The command table.                                                        */

typedef void (*eb_cmd_fn)(int argc, char **argv);

static const struct {
    const char *name;
    eb_cmd_fn fn;
} g_commands[] = {
    {"name", cmd_name},         {"profile", cmd_profile},     {"help", cmd_help},
    {"timestamp", cmd_timestamp}, {"db", cmd_db},             {"infer", cmd_infer},
    {"results", cmd_results},   {"eb-info", cmd_eb_info},     {"eb-upload", cmd_eb_upload},
    {"eb-model", cmd_eb_model}, {"eb-infer", cmd_eb_infer},   {"eb-output", cmd_eb_output},
    {"eb-temp", cmd_eb_temp},   {"eb-sync", cmd_eb_sync},
};

int eb_commands_run(int argc, char **argv)
{
    size_t i;
    for (i = 0; i < sizeof g_commands / sizeof g_commands[0]; i++) {
        if (strcmp(argv[0], g_commands[i].name) == 0) {
            g_commands[i].fn(argc, argv);
            return 0;
        }
    }
    return -1;
}
