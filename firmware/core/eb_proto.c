/*
 * eb_proto.c - command parser of the edgebench firmware core: the MLPerf Tiny
 * device-under-test dialect plus the edgebench extensions (firmware/PROTOCOL.md).
 *
 * Written from the dialect's observable behaviour (reply strings checked
 * against the MLPerf Tiny reference firmware in tests/test_firmware_protocol.py);
 * unlike the reference, every length is checked before a buffer is written.
 *
 * Protocol 2: a request ending in the word "#<seq>:<crc32>" is framed: it
 * runs only if its CRC-32 holds, and every line of its reply ends with
 * " #<seq>.<k>:<crc32>" (out_eol). Uploads carry a session id (the request's
 * seq) in their frames' CRC seed and end on completion, abort, a new framed
 * command, or EB_UPLOAD_IDLE_MS without a byte; stray frames in command mode
 * are skipped (feed_stray). Unframed commands are answered as before.
 *
 * No heap, no printf: numbers are formatted by hand so every port links the
 * same small code. All state lives in the statics below; eb_proto_init()
 * resets it (the fuzz target calls it before every input).
 */
#include "eb_proto.h"

#include <string.h>

#include "eb_config.h"
#include "eb_crc32.h"
#include "eb_engine.h"
#include "eb_port.h"

#if defined(__GNUC__)
#define EB_ALIGN16 __attribute__((aligned(16)))
#else
#define EB_ALIGN16
#endif

#define EB_ARGV_MAX 8            /* tokens per command line */
#define EB_SAMPLES_PER_LINE 32u  /* tick samples per m-eb-t-[...] line */
#define EB_ECHO_MAX 32u          /* bytes of user text echoed in an error */
#define EB_MODEL_ID_MAX 16u      /* `eb-model <id>` length */
#define EB_ABORT_SEQ 0xFFFFu     /* seq of the abort frame (len 0) */
#define EB_NONCE_MAX 32u         /* `eb-sync <nonce>` echo */

/* An upload with no byte for this long is over: the next byte is a command byte
 * (checked when that byte arrives; the port API has no receive timeout). */
#ifndef EB_UPLOAD_IDLE_MS
#define EB_UPLOAD_IDLE_MS 5000u
#endif

#if EB_FRAME_PAYLOAD_MAX > 65535u || EB_FRAME_PAYLOAD_MAX < 1u
#error "EB_FRAME_PAYLOAD_MAX must be 1..65535 (u16 length field)"
#endif

/* ------------------------------------------------------------------------ */
/* Static buffers: the whole RAM budget of the core.                         */

static uint8_t g_model_buf[EB_MODEL_MAX_BYTES] EB_ALIGN16;
static uint8_t g_arena[EB_ARENA_BYTES] EB_ALIGN16;
static uint8_t g_input[EB_INPUT_MAX_BYTES] EB_ALIGN16;
static char g_line[EB_CMD_MAX_BYTES + 1u];
static uint8_t g_out[EB_OUT_BYTES];
static uint32_t g_samples[EB_SAMPLES_PER_LINE];
static struct {
    uint32_t index[EB_LAYERS_MAX];
    uint32_t op[EB_LAYERS_MAX];
    uint32_t ticks[EB_LAYERS_MAX];
} g_layers;

enum { UP_OFF = 0, UP_SYNC0, UP_SYNC1, UP_HEADER, UP_PAYLOAD, UP_CRC };
enum { TARGET_MODEL = 0, TARGET_INPUT = 1 };
/* A stray upload frame met in command mode (a late retransmission): skipped. */
enum { STRAY_OFF = 0, STRAY_SYNC1, STRAY_HEADER, STRAY_SKIP };

static struct {
    /* command line being received */
    size_t line_len;
    int line_overflow;
    /* reply buffer fill */
    size_t out_len;
    /* input buffer: declared size (db load / upload) and bytes loaded */
    size_t in_size;
    size_t in_pos;
    /* model blob and the model made from it */
    size_t model_len;          /* bytes of a complete, CRC-checked upload */
    uint32_t model_crc;
    int model_loaded;          /* eb_model_init succeeded on it */
    eb_model model;
    char model_id[EB_MODEL_ID_MAX + 1u];
    int have_results;          /* the output tensor holds a finished inference */
    /* 64-bit extension of the port counter */
    uint64_t ticks64;
    uint32_t last_counter;
    /* per-layer timing of one inference */
    uint32_t layer_prev;
    uint32_t layer_n;
    uint32_t layer_dropped;
    /* reply framing of a framed request (PROTOCOL.md, "Framed requests and replies") */
    struct {
        int on;                /* reply lines get " #<seq>.<k>:<crc32>" */
        int suspended;         /* writing the ":<crc32>" part itself */
        uint16_t seq;          /* the request's sequence number */
        uint32_t k;            /* index of the next line of this reply */
        uint32_t crc;          /* CRC-32 of the current line so far */
    } fr;
    /* a stray upload frame being skipped in command mode */
    struct {
        int state;
        uint8_t hdr[4];
        uint32_t n;
        uint32_t skip;
    } stray;
    /* binary upload */
    struct {
        int state;
        int framed;            /* the eb-upload request was framed: its lines stay framed */
        uint16_t sid;          /* upload session id (the request's seq; 0 if unframed): frame CRC seed */
        uint32_t last_rx;      /* counter at the last upload byte (idle timeout) */
        int target;
        uint8_t *dest;
        uint32_t total;        /* announced length */
        uint32_t pos;          /* bytes committed (acknowledged) */
        uint32_t crc_announced;
        uint16_t expect;       /* sequence number of the next frame */
        int nak_sent;          /* a NAK for `expect` is outstanding */
        uint8_t hdr[4];
        uint32_t hdr_n;
        uint16_t seq;
        uint16_t len;
        uint32_t got;          /* payload bytes of this frame so far */
        int in_place;          /* payload is written straight to dest+pos */
        uint32_t crc;          /* running CRC of seq, len, payload */
        uint32_t crc_rx;
        uint32_t crc_n;
    } up;
} S;

/* ------------------------------------------------------------------------ */
/* Replies: buffered, flushed at the end of each reply and when full.        */

static void out_flush(void)
{
    if (S.out_len > 0u) {
        eb_port_write(g_out, S.out_len);
        S.out_len = 0u;
    }
}

static void out_bytes(const void *data, size_t n)
{
    const uint8_t *p = (const uint8_t *)data;
    if (S.fr.on && !S.fr.suspended) {
        S.fr.crc = eb_crc32_update(S.fr.crc, p, n);
    }
    while (n > 0u) {
        size_t room = sizeof g_out - S.out_len;
        size_t k = n < room ? n : room;
        memcpy(g_out + S.out_len, p, k);
        S.out_len += k;
        p += k;
        n -= k;
        if (S.out_len == sizeof g_out) {
            out_flush();
        }
    }
}

static void out_str(const char *s)
{
    out_bytes(s, strlen(s));
}

static void out_u32(uint32_t v);
static void out_hex(uint32_t v, unsigned digits);

/* End a reply line; in a framed reply append " #<seq>.<k>:<crc32 hex>", the
 * CRC-32 covering the line text up to and including <k>. */
static void out_eol(void)
{
    if (S.fr.on) {
        uint32_t crc;
        out_bytes(" #", 2u);
        out_u32(S.fr.seq);
        out_bytes(".", 1u);
        out_u32(S.fr.k);
        crc = S.fr.crc;
        S.fr.suspended = 1;
        out_bytes(":", 1u);
        out_hex(crc, 8u);
        S.fr.k++;
    }
    out_bytes("\r\n", 2u);
    S.fr.suspended = 0;
    S.fr.crc = 0u;
}

static void out_line(const char *s)
{
    out_str(s);
    out_eol();
}

static void out_u64(uint64_t v)
{
    char t[21];
    size_t i = sizeof t;
    do {
        t[--i] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v != 0u);
    out_bytes(t + i, sizeof t - i);
}

static void out_u32(uint32_t v)
{
    out_u64(v);
}

static void out_hex(uint32_t v, unsigned digits)
{
    static const char hex[] = "0123456789abcdef";
    char t[8];
    unsigned i;
    if (digits > 8u) {
        digits = 8u;
    }
    for (i = 0; i < digits; i++) {
        t[digits - 1u - i] = hex[(v >> (4u * i)) & 0xFu];
    }
    out_bytes(t, digits);
}

/* Echo text safely: printable ASCII only, no ']' (it would end the e-[...]
 * field), at most max bytes. */
static void out_text(const char *s, size_t max)
{
    size_t i;
    for (i = 0; s[i] != '\0'; i++) {
        char c = s[i];
        if (i == max) {
            out_str("...");
            return;
        }
        if ((unsigned char)c < 0x20u || (unsigned char)c > 0x7Eu || c == ']') {
            c = '?';
        }
        out_bytes(&c, 1u);
    }
}

/* Echo text received from the host (EB_ECHO_MAX bytes at most). */
static void out_echo(const char *s)
{
    out_text(s, EB_ECHO_MAX);
}

/* A real number with 3 decimals, rounded to nearest with ties to even, like
 * printf("%.3f") (the reference prints scores with 3 decimals). */
static void out_fixed3(double x)
{
    double scaled = x * 1000.0;
    double frac;
    uint64_t milli;
    int negative = scaled < 0.0;
    if (negative) {
        scaled = -scaled;
    }
    if (!(scaled <= 1.8e19)) {
        scaled = 1.8e19; /* saturate (and NaN); scores never get here */
    }
    milli = (uint64_t)scaled;
    frac = scaled - (double)milli;
    if (frac > 0.5 || (frac == 0.5 && (milli & 1u) != 0u)) {
        milli++;
    }
    if (negative && milli != 0u) {
        out_bytes("-", 1u);
    }
    out_u64(milli / 1000u);
    out_bytes(".", 1u);
    out_u64((milli / 100u) % 10u);
    out_u64((milli / 10u) % 10u);
    out_u64(milli % 10u);
}

static void reply_ready(void)
{
    out_line("m-ready");
    out_flush();
}

/* ------------------------------------------------------------------------ */
/* Numbers.                                                                  */

/* Strict unsigned decimal: 0 ok, -1 not a number, -2 larger than 2^32-1. */
static int parse_u32(const char *s, uint32_t *value)
{
    uint32_t v = 0u;
    int overflow = 0;
    if (*s == '\0') {
        return -1;
    }
    for (; *s != '\0'; s++) {
        uint32_t d;
        if (*s < '0' || *s > '9') {
            return -1;
        }
        d = (uint32_t)(*s - '0');
        if (v > (0xFFFFFFFFu - d) / 10u) {
            overflow = 1;
        } else {
            v = v * 10u + d;
        }
    }
    if (overflow) {
        return -2;
    }
    *value = v;
    return 0;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/* 1 to 8 hex digits. */
static int parse_hex32(const char *s, uint32_t *value)
{
    uint32_t v = 0u;
    size_t n = 0u;
    for (; *s != '\0'; s++, n++) {
        int d = hex_value(*s);
        if (d < 0 || n == 8u) {
            return -1;
        }
        v = (v << 4) | (uint32_t)d;
    }
    if (n == 0u) {
        return -1;
    }
    *value = v;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Time: the port's counter, differences modulo 2^counter_bits.              */

static uint32_t counter_mask(void)
{
    uint32_t bits = eb_port_counter_bits();
    return (bits == 0u || bits >= 32u) ? 0xFFFFFFFFu : ((1u << bits) - 1u);
}

static uint32_t ticks_between(uint32_t t0, uint32_t t1)
{
    return (t1 - t0) & counter_mask();
}

/* Ticks since start-up, extended to 64 bits. Exact as long as it is called at
 * least once per counter wrap; the core calls it after every inference. */
static uint64_t now_ticks64(void)
{
    uint32_t c = eb_port_counter();
    S.ticks64 += ticks_between(S.last_counter, c);
    S.last_counter = c;
    return S.ticks64;
}

#if !EB_CFG_ENERGY_MODE
static uint64_t ticks_to_us(uint64_t ticks)
{
    uint64_t hz = eb_port_counter_hz();
    if (hz == 0u) {
        hz = 1u;
    }
    return (ticks / hz) * 1000000u + ((ticks % hz) * 1000000u) / hz;
}
#endif

/* `timestamp`: m-lap-us-<µs> in performance mode; in energy mode a falling
 * edge on the marker line for the external monitor, like the reference. */
static void timestamp(void)
{
#if EB_CFG_ENERGY_MODE
    volatile uint32_t spin;
    eb_port_marker(0);
    for (spin = 0; spin < 10000u; spin++) {
    }
    eb_port_marker(1);
#else
    uint64_t us = ticks_to_us(now_ticks64());
    out_str("m-lap-us-");
    out_u64(us);
    out_eol();
#endif
}

/* ------------------------------------------------------------------------ */
/* Model and input.                                                          */

static void unload_model(void)
{
    S.model_loaded = 0;
    S.have_results = 0;
    strcpy(S.model_id, "none");
}

/* Print an error and return -1 unless a model and a complete input of the
 * model's input size are there. */
static int check_ready_to_infer(void)
{
    size_t need;
    if (!S.model_loaded) {
        out_line("e-[No model loaded: eb-upload model, then eb-model]");
        return -1;
    }
    need = eb_model_input_bytes(&S.model);
    if (S.in_pos < S.in_size) {
        out_str("e-[Input incomplete: ");
        out_u64(S.in_pos);
        out_str(" of ");
        out_u64(S.in_size);
        out_line(" bytes loaded]");
        return -1;
    }
    if (S.in_pos != need) {
        out_str("e-[Input has ");
        out_u64(S.in_pos);
        out_str(" bytes, model expects ");
        out_u64(need);
        out_line("]");
        return -1;
    }
    return 0;
}

/* Copy the loaded input into the input tensor (the engine may reuse that
 * memory during inference, so it is reloaded before every run). */
static void load_input(void)
{
    memcpy(eb_model_input(&S.model), g_input, S.in_pos);
}

static int report_invoke(eb_status st)
{
    if (st == EB_OK) {
        return 0;
    }
    S.have_results = 0;
    out_str("e-[Inference failed: ");
    out_text(eb_status_name(st) != NULL ? eb_status_name(st) : "error", 32u);
    out_line("]");
    return -1;
}

static void layer_hook(void *ctx, uint32_t layer_index, uint32_t op_code)
{
    uint32_t now = eb_port_counter();
    (void)ctx;
    if (S.layer_n < EB_LAYERS_MAX) {
        g_layers.index[S.layer_n] = layer_index;
        g_layers.op[S.layer_n] = op_code;
        g_layers.ticks[S.layer_n] = ticks_between(S.layer_prev, now);
        S.layer_n++;
    } else {
        S.layer_dropped++;
    }
    S.layer_prev = eb_port_counter(); /* the hook's own time is not counted */
}

/* ------------------------------------------------------------------------ */
/* MLPerf Tiny commands.                                                     */

static void cmd_name(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    out_str("m-name-dut-[");
    out_text(eb_port_name(), 32u);
    out_line("]");
}

static void cmd_profile(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    out_line("m-profile-[" EB_FW_VERSION "]");
    out_str("m-model-[");
    out_str(S.model_id);
    out_line("]");
}

static void cmd_help(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    out_line(EB_FW_VERSION " (MLPerf Tiny DUT dialect + edgebench protocol 2)");
    out_line("");
    out_line("help          : Print this information");
    out_line("name          : Print the name of the device");
    out_line("timestamp     : Print m-lap-us-<us> (energy mode: GPIO edge)");
    out_line("profile       : Print firmware and model identification");
    out_line("db SUBCMD     : Manipulate the input byte buffer");
    out_line("  load N      : Expect N bytes");
    out_line("  db HH[HH]*  : Load 8-bit hex byte(s) until N bytes");
    out_line("  print       : Print the N bytes as hex");
    out_line("infer N [W=10]: Execute N inferences after W warmup loops");
    out_line("results       : Return the result fp32 vector");
    out_line("eb-info       : Device, counter and buffer sizes");
    out_line("eb-upload model|input LEN CRC32 : Binary upload in CRC-checked frames");
    out_line("eb-model [ID] : Load the uploaded model blob");
    out_line("eb-infer N [W=0] [layers] : N inferences timed one by one");
    out_line("eb-output     : Raw int8 output of the last inference");
    out_line("eb-temp       : Die temperature");
    out_line("eb-sync NONCE : Echo NONCE (link resynchronisation)");
    out_line("eb-... #SEQ:CRC32 : Framed request: every reply line carries SEQ and a CRC");
}

static void cmd_timestamp(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    timestamp();
}

static void db_print(void)
{
    size_t i;
    for (i = 0; i < S.in_size; i++) {
        if (i % 8u == 0u) {
            out_str("m-buffer-");
        }
        out_hex(g_input[i], 2u);
        if ((i + 1u) % 8u == 0u || i + 1u == S.in_size) {
            out_eol();
        } else {
            out_bytes("-", 1u);
        }
    }
}

static void db_load(int argc, char **argv)
{
    uint32_t n = 0u;
    int r;
    if (argc < 3) {
        out_line("e-[Command 'db load' requires the # of bytes]");
        return;
    }
    S.in_size = 0u; /* a failed load leaves no stale input behind */
    S.in_pos = 0u;
    r = parse_u32(argv[2], &n);
    if (r == -1 || (r == 0 && n == 0u)) {
        out_line("e-[Command 'db load' must be >0 bytes]");
        return;
    }
    if (r == -2 || n > EB_INPUT_MAX_BYTES) {
        out_str("e-[Supplied buffer size ");
        out_echo(argv[2]);
        out_str(" exceeds maximum of ");
        out_u32(EB_INPUT_MAX_BYTES);
        out_line("]");
        return;
    }
    S.in_size = n;
    out_str("m-[Expecting ");
    out_u32(n);
    out_line(" bytes]");
}

static void db_hex(const char *hex)
{
    size_t digits = strlen(hex);
    size_t i;
    if (S.in_size == 0u) {
        out_line("e-[Command 'db' needs 'db load N' first]");
        return;
    }
    if (S.in_pos >= S.in_size) {
        out_line("e-[Buffer already full: send 'db load N' to load again]");
        return;
    }
    if ((digits & 1u) != 0u) {
        out_line("e-[Insufficent number of hex digits]"); /* reference spelling */
        return;
    }
    for (i = 0; i < digits; i += 2u) {
        if (hex_value(hex[i]) < 0 || hex_value(hex[i + 1u]) < 0) {
            char pair[3];
            pair[0] = hex[i];
            pair[1] = hex[i + 1u];
            pair[2] = '\0';
            out_str("e-[Invalid hex digit '");
            out_echo(pair);
            out_line("']");
            return; /* nothing of a bad chunk is stored */
        }
    }
    for (i = 0; i < digits && S.in_pos < S.in_size; i += 2u) {
        g_input[S.in_pos++] = (uint8_t)((hex_value(hex[i]) << 4) | hex_value(hex[i + 1u]));
    }
    if (S.in_pos == S.in_size) {
        out_line("m-load-done"); /* surplus digits are ignored, like the reference */
    }
}

static void cmd_db(int argc, char **argv)
{
    if (argc < 2) {
        out_line("e-[Command 'db' requires a subcommand]");
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
    out_str("m-results-[");
    for (i = 0; i < n; i++) {
        if (i > 0u) {
            out_bytes(",", 1u);
        }
        out_fixed3(scale * (double)((int32_t)q[i] - zp));
    }
    out_line("]");
}

/* Parse N (>0) and W (>=0) of infer / eb-infer; prints the reference's errors. */
static int parse_n_w(int argc, char **argv, uint32_t *n, uint32_t *w)
{
    if (argc >= 2) {
        if (parse_u32(argv[1], n) != 0 || *n == 0u) {
            out_line("e-[Inference iterations must be >0]");
            return -1;
        }
        if (*n > EB_INFER_N_MAX) {
            out_str("e-[Inference iterations must be <=");
            out_u32(EB_INFER_N_MAX);
            out_line("]");
            return -1;
        }
    }
    if (argc >= 3) {
        if (parse_u32(argv[2], w) != 0) {
            out_line("e-[Inference warmup must be >=0]");
            return -1;
        }
        if (*w > EB_INFER_N_MAX) {
            out_str("e-[Inference warmup must be <=");
            out_u32(EB_INFER_N_MAX);
            out_line("]");
            return -1;
        }
    }
    return 0;
}

static void cmd_infer(int argc, char **argv)
{
    uint32_t n = 1u;
    uint32_t w = 10u; /* the reference's default */
    uint32_t i;
    if (argc > 3) {
        out_line("e-[Usage: infer N [W]]");
        return;
    }
    if (parse_n_w(argc, argv, &n, &w) != 0 || check_ready_to_infer() != 0) {
        return;
    }
    out_str("m-warmup-start-");
    out_u32(w);
    out_eol();
    out_flush();
    for (i = 0; i < w; i++) {
        load_input();
        if (report_invoke(eb_model_invoke(&S.model, NULL, NULL)) != 0) {
            return;
        }
        (void)now_ticks64();
    }
    out_line("m-warmup-done");
    out_str("m-infer-start-");
    out_u32(n);
    out_eol();
    out_flush();
    /* Both m-lap-us lines stay in the reply buffer until the window closes,
     * so the link's transmit time is not part of the measurement. */
    timestamp();
    for (i = 0; i < n; i++) {
        load_input();
        if (report_invoke(eb_model_invoke(&S.model, NULL, NULL)) != 0) {
            return;
        }
        (void)now_ticks64();
    }
    timestamp();
    S.have_results = 1;
    out_line("m-infer-done");
    print_results();
}

static void cmd_results(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    if (!S.model_loaded || !S.have_results) {
        out_line("e-[No results: run infer first]");
        return;
    }
    print_results();
}

/* ------------------------------------------------------------------------ */
/* edgebench extensions.                                                     */

static void info_u32(const char *key, uint32_t v)
{
    out_str("m-eb-");
    out_str(key);
    out_str("-[");
    out_u32(v);
    out_line("]");
}

static void info_str(const char *key, const char *v)
{
    out_str("m-eb-");
    out_str(key);
    out_str("-[");
    out_text(v, 32u);
    out_line("]");
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
    info_u32("ram-bytes", (uint32_t)(sizeof g_model_buf + sizeof g_arena + sizeof g_input +
                                     sizeof g_line + sizeof g_out + sizeof g_samples +
                                     sizeof g_layers + sizeof S));
    info_u32("arena-bytes", EB_ARENA_BYTES);
    info_u32("model-max-bytes", EB_MODEL_MAX_BYTES);
    info_u32("input-max-bytes", EB_INPUT_MAX_BYTES);
    info_u32("frame-max-bytes", EB_FRAME_PAYLOAD_MAX);
    info_u32("cmd-max-bytes", EB_CMD_MAX_BYTES);
    info_str("mode", EB_CFG_ENERGY_MODE ? "energy" : "performance");
    info_str("temp", eb_port_temp_mc(&mc) == 0 ? "yes" : "no");
    out_str("m-eb-loaded-[");
    if (S.model_loaded) {
        out_str("crc32=");
        out_hex(S.model_crc, 8u);
        out_str(",bytes=");
        out_u64(S.model_len);
        out_str(",layers=");
        out_u32(S.model.n_layers);
        out_str(",id=");
        out_str(S.model_id);
    } else {
        out_str("none");
    }
    out_line("]");
}

static void cmd_eb_upload(int argc, char **argv)
{
    uint32_t len = 0u;
    uint32_t crc = 0u;
    uint32_t max;
    int target;
    int r;
    if (argc != 4) {
        out_line("e-[eb-upload-usage: eb-upload model|input LEN CRC32HEX]");
        return;
    }
    if (strcmp(argv[1], "model") == 0) {
        target = TARGET_MODEL;
        max = EB_MODEL_MAX_BYTES;
    } else if (strcmp(argv[1], "input") == 0) {
        target = TARGET_INPUT;
        max = EB_INPUT_MAX_BYTES;
    } else {
        out_str("e-[eb-upload-target: '");
        out_echo(argv[1]);
        out_line("' is neither model nor input]");
        return;
    }
    r = parse_u32(argv[2], &len);
    if (r == -1 || (r == 0 && len == 0u)) {
        out_line("e-[eb-upload-length: LEN must be a decimal number >0]");
        return;
    }
    if (r == -2 || len > max) {
        out_str("e-[eb-upload-too-large: ");
        out_echo(argv[2]);
        out_str(" bytes > ");
        out_str(argv[1]);
        out_str(" buffer of ");
        out_u32(max);
        out_line(" bytes]");
        return;
    }
    if (parse_hex32(argv[3], &crc) != 0) {
        out_line("e-[eb-upload-crc: CRC32 must be 1 to 8 hex digits]");
        return;
    }
    /* The old contents are invalid from the first byte on. */
    if (target == TARGET_MODEL) {
        S.model_len = 0u;
        unload_model();
        S.up.dest = g_model_buf;
    } else {
        S.in_size = 0u;
        S.in_pos = 0u;
        S.up.dest = g_input;
    }
    S.up.target = target;
    S.up.framed = S.fr.on;
    S.up.sid = S.fr.on ? S.fr.seq : 0u;
    S.up.last_rx = eb_port_counter();
    S.up.total = len;
    S.up.pos = 0u;
    S.up.crc_announced = crc;
    S.up.expect = 0u;
    S.up.nak_sent = 0;
    S.up.state = UP_SYNC0;
    out_str("m-eb-upload-ready-[");
    out_u32(EB_FRAME_PAYLOAD_MAX);
    out_line("]");
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

static void cmd_eb_model(int argc, char **argv)
{
    char err[96];
    eb_status st;
    if (argc > 2) {
        out_line("e-[eb-model-usage: eb-model [ID]]");
        return;
    }
    if (argc == 2 && !valid_model_id(argv[1])) {
        out_line("e-[eb-model-id: 1 to 16 characters of A-Z a-z 0-9 _ - .]");
        return;
    }
    unload_model();
    if (S.model_len == 0u) {
        out_line("e-[eb-model-none: no model uploaded (eb-upload model LEN CRC32)]");
        return;
    }
    err[0] = '\0';
    st = eb_model_init(&S.model, g_model_buf, S.model_len, g_arena, sizeof g_arena, err,
                       sizeof err);
    err[sizeof err - 1u] = '\0';
    if (st != EB_OK) {
        out_str("e-[eb-model-");
        out_str(status_word(st));
        if (err[0] != '\0') {
            out_str(": ");
            out_text(err, sizeof err);
        }
        out_line("]");
        return;
    }
    if (eb_model_input_bytes(&S.model) > EB_INPUT_MAX_BYTES) {
        out_str("e-[eb-model-input: model input of ");
        out_u64(eb_model_input_bytes(&S.model));
        out_str(" bytes > input buffer of ");
        out_u32(EB_INPUT_MAX_BYTES);
        out_line(" bytes]");
        return;
    }
    S.model_loaded = 1;
    if (argc == 2) {
        strcpy(S.model_id, argv[1]);
    } else {
        size_t i;
        static const char hex[] = "0123456789abcdef";
        memcpy(S.model_id, "eb-", 3u);
        for (i = 0; i < 8u; i++) {
            S.model_id[3u + i] = hex[(S.model_crc >> (28u - 4u * i)) & 0xFu];
        }
        S.model_id[11] = '\0';
    }
    out_str("m-eb-model-[layers=");
    out_u32(S.model.n_layers);
    out_str(",arena=");
    out_u64(S.model.arena_used);
    out_str(",in=");
    out_u64(eb_model_input_bytes(&S.model));
    out_str(",out=");
    out_u64(eb_model_output_bytes(&S.model));
    out_line("]");
}

static void flush_samples(const char *prefix, uint32_t n)
{
    uint32_t i;
    out_str(prefix);
    for (i = 0; i < n; i++) {
        if (i > 0u) {
            out_bytes(",", 1u);
        }
        out_u32(g_samples[i]);
    }
    out_line("]");
    out_flush(); /* between inferences, never inside a timed window */
}

/* Run `count` inferences, each timed on its own; prints m-eb-w-/m-eb-t- lines. */
static int timed_runs(uint32_t count, const char *prefix)
{
    uint32_t i;
    uint32_t k = 0u;
    for (i = 0; i < count; i++) {
        uint32_t t0;
        uint32_t t1;
        eb_status st;
        load_input();
        t0 = eb_port_counter();
        st = eb_model_invoke(&S.model, NULL, NULL);
        t1 = eb_port_counter();
        (void)now_ticks64();
        if (report_invoke(st) != 0) {
            return -1;
        }
        g_samples[k++] = ticks_between(t0, t1);
        if (k == EB_SAMPLES_PER_LINE) {
            flush_samples(prefix, k);
            k = 0u;
        }
    }
    if (k > 0u) {
        flush_samples(prefix, k);
    }
    return 0;
}

static void cmd_eb_infer(int argc, char **argv)
{
    uint32_t n = 1u;
    uint32_t w = 0u;
    uint32_t i;
    int layers = 0;
    if (argc < 2 || argc > 4) {
        out_line("e-[eb-infer-usage: eb-infer N [W] [layers]]");
        return;
    }
    if (strcmp(argv[argc - 1], "layers") == 0 && argc >= 3) {
        layers = 1;
        argc--;
    }
    if (argc == 4) {
        out_line("e-[eb-infer-usage: eb-infer N [W] [layers]]");
        return;
    }
    if (parse_n_w(argc, argv, &n, &w) != 0 || check_ready_to_infer() != 0) {
        return;
    }
    out_flush();
    if (timed_runs(w, "m-eb-w-[") != 0) {
        return;
    }
    eb_port_marker(0);
    if (timed_runs(n, "m-eb-t-[") != 0) {
        eb_port_marker(1);
        return;
    }
    eb_port_marker(1);
    S.have_results = 1;
    if (layers) {
        S.layer_n = 0u;
        S.layer_dropped = 0u;
        load_input();
        S.layer_prev = eb_port_counter();
        if (report_invoke(eb_model_invoke(&S.model, layer_hook, NULL)) != 0) {
            return;
        }
        (void)now_ticks64();
        for (i = 0; i < S.layer_n; i++) {
            out_str("m-eb-layer-");
            out_u32(g_layers.index[i]);
            out_str("-[");
            out_u32(g_layers.op[i]);
            out_bytes(",", 1u);
            out_u32(g_layers.ticks[i]);
            out_line("]");
        }
        if (S.layer_dropped > 0u) {
            out_str("m-eb-layers-dropped-");
            out_u32(S.layer_dropped);
            out_eol();
        }
    }
    out_line("m-eb-infer-done");
}

static void cmd_eb_output(int argc, char **argv)
{
    size_t i;
    size_t n;
    const int8_t *q;
    (void)argc;
    (void)argv;
    if (!S.model_loaded || !S.have_results) {
        out_line("e-[eb-output-none: run infer or eb-infer first]");
        return;
    }
    n = eb_model_output_bytes(&S.model);
    q = eb_model_output(&S.model);
    out_str("m-eb-output-[");
    for (i = 0; i < n; i++) {
        out_hex((uint8_t)q[i], 2u);
    }
    out_line("]");
}

static void cmd_eb_temp(int argc, char **argv)
{
    int32_t mc = 0;
    (void)argc;
    (void)argv;
    if (eb_port_temp_mc(&mc) != 0) {
        out_line("e-[eb-temp-unavailable]");
        return;
    }
    out_str("m-eb-temp-mc-[");
    if (mc < 0) {
        out_bytes("-", 1u);
        out_u64((uint64_t)(-(int64_t)mc));
    } else {
        out_u64((uint64_t)mc);
    }
    out_line("]");
}

/* `eb-sync <nonce>`: echo the nonce; a host framing it knows, from the
 * sequence number and the nonce, that every older reply has been read. */
static void cmd_eb_sync(int argc, char **argv)
{
    if (argc != 2) {
        out_line("e-[eb-sync-usage: eb-sync NONCE]");
        return;
    }
    out_str("m-eb-sync-[");
    out_text(argv[1], EB_NONCE_MAX);
    out_line("]");
}

/* ------------------------------------------------------------------------ */
/* Command lines.                                                            */

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

/* Split the line in place at whitespace and control bytes; -1: too many. */
static int tokenize(char *line, size_t len, char **argv)
{
    int argc = 0;
    size_t i = 0u;
    line[len] = '\0';
    while (i < len) {
        while (i < len && (unsigned char)line[i] <= 0x20u) {
            line[i++] = '\0';
        }
        if (i == len) {
            break;
        }
        if (argc == EB_ARGV_MAX) {
            return -1;
        }
        argv[argc++] = &line[i];
        while (i < len && (unsigned char)line[i] > 0x20u) {
            i++;
        }
    }
    return argc;
}

/* A framed request ends with the word "#<seq>:<crc32 hex>" (seq 1..65535, 8 hex
 * digits; the CRC-32 covers the line from its first word up to and including
 * <seq>). Returns 0 for an unframed line, 1 for an intact framed one (*cut =
 * where the frame word starts), -1 for a framed one that fails its CRC (*seq
 * as read, may be damaged) and -2 for a frame word that does not parse. */
static int frame_token(const char *line, size_t len, uint16_t *seq, size_t *cut)
{
    size_t end = len;
    size_t start = 0u;
    size_t h;
    size_t i;
    uint32_t v = 0u;
    uint32_t crc = 0u;
    while (end > 0u && (unsigned char)line[end - 1u] <= 0x20u) {
        end--;
    }
    for (h = end; h > 0u && line[h - 1u] != '#'; h--) {
        if ((unsigned char)line[h - 1u] <= 0x20u) {
            return 0; /* the last word has no '#' */
        }
    }
    if (h == 0u) {
        return 0;
    }
    h--; /* line[h] == '#' */
    if (h == 0u || (unsigned char)line[h - 1u] > 0x20u) {
        return 0; /* '#' inside a word */
    }
    for (i = h + 1u; i < end && line[i] >= '0' && line[i] <= '9' && i < h + 6u; i++) {
        v = v * 10u + (uint32_t)(line[i] - '0');
    }
    if (i == h + 1u || v == 0u || v > 0xFFFFu || i + 9u != end || line[i] != ':') {
        return -2;
    }
    *seq = (uint16_t)v;
    {
        char hex[9];
        memcpy(hex, &line[i + 1u], 8u);
        hex[8] = '\0';
        if (parse_hex32(hex, &crc) != 0) {
            return -2;
        }
    }
    while (start < h && (unsigned char)line[start] <= 0x20u) {
        start++;
    }
    *cut = h;
    return eb_crc32((const uint8_t *)line + start, i - start) == crc ? 1 : -1;
}

static void run_line(void)
{
    char *argv[EB_ARGV_MAX];
    size_t i;
    int argc;
    uint16_t seq = 0u;
    size_t cut = 0u;
    int framed = frame_token(g_line, S.line_len, &seq, &cut);
    if (framed == 1 || framed == -1) {
        S.fr.on = 1;
        S.fr.seq = seq;
        S.fr.k = 0u;
        S.fr.crc = 0u;
    }
    if (framed == -1 || framed == -2) {
        /* not executed: the host resends it (a request damaged on the way in) */
        out_line(framed == -1 ? "e-[eb-request-damaged: CRC mismatch, not executed]"
                              : "e-[eb-request-damaged: bad frame word, not executed]");
        reply_ready();
        S.fr.on = 0;
        return;
    }
    if (framed == 1) {
        S.line_len = cut;
    }
    argc = tokenize(g_line, S.line_len, argv);
    if (argc < 0) {
        out_line("e-[Too many arguments]");
    } else if (argc > 0) {
        for (i = 0; i < sizeof g_commands / sizeof g_commands[0]; i++) {
            if (strcmp(argv[0], g_commands[i].name) == 0) {
                g_commands[i].fn(argc, argv);
                break;
            }
        }
        if (i == sizeof g_commands / sizeof g_commands[0]) {
            out_str("e-[Unknown command: ");
            out_echo(argv[0]);
            out_line("]");
        }
    }
    /* argc == 0: an empty command only answers m-ready (a cheap resync). */
    reply_ready();
    if (S.up.state == UP_OFF) {
        S.fr.on = 0; /* an upload keeps framing its lines until it ends */
    }
}

static void end_line(void)
{
    if (S.line_overflow) {
        out_str("e-[Command too long: more than ");
        out_u32(EB_CMD_MAX_BYTES);
        out_line(" bytes]");
        reply_ready();
    } else {
        run_line();
    }
    S.line_len = 0u;
    S.line_overflow = 0;
}

/* Command mode meets "EB 5A": an upload frame that came after its upload
 * ended (a late retransmission, or the resynchronising abort frame). The
 * partial line before it is dropped, the frame is skipped unanswered. */
static int feed_stray(uint8_t c)
{
    switch (S.stray.state) {
    case STRAY_SYNC1:
        if (c == 0x5Au) {
            S.stray.state = STRAY_HEADER;
            S.stray.n = 0u;
            S.line_len = 0u;
            S.line_overflow = 0;
            return 1;
        }
        S.stray.state = STRAY_OFF;
        return 0; /* not a frame: the byte is a command byte (the 0xEB is dropped) */
    case STRAY_HEADER:
        S.stray.hdr[S.stray.n++] = c;
        if (S.stray.n == 4u) {
            uint32_t len = (uint32_t)S.stray.hdr[2] | ((uint32_t)S.stray.hdr[3] << 8);
            if (len > EB_FRAME_PAYLOAD_MAX) {
                S.stray.state = STRAY_OFF; /* not a frame header */
            } else {
                S.stray.skip = len + 4u; /* payload and CRC */
                S.stray.state = STRAY_SKIP;
            }
        }
        return 1;
    case STRAY_SKIP:
        if (--S.stray.skip == 0u) {
            S.stray.state = STRAY_OFF;
        }
        return 1;
    default:
        S.stray.state = STRAY_OFF;
        return 0;
    }
}

static void feed_command(uint8_t c)
{
    if (S.stray.state != STRAY_OFF && feed_stray(c)) {
        return;
    }
    if (c == 0xEBu) {
        S.stray.state = STRAY_SYNC1;
        return;
    }
    if (c == (uint8_t)'%') {
        end_line();
    } else if (S.line_len < EB_CMD_MAX_BYTES) {
        g_line[S.line_len++] = (char)c;
    } else {
        S.line_overflow = 1;
    }
}

/* ------------------------------------------------------------------------ */
/* Binary upload frames: EB 5A seq:u16le len:u16le payload crc32(seq,len,payload):u32le */

static void up_finish(void)
{
    S.up.state = UP_OFF;
    reply_ready();
    S.fr.on = 0;
    S.line_len = 0u;
    S.line_overflow = 0;
}

/* As up_finish, but the command line collected between frames survives. */
static void up_finish_keep_line(void)
{
    size_t keep = S.line_len;
    up_finish();
    S.line_len = keep;
}

static void up_nak(void)
{
    if (!S.up.nak_sent) { /* one NAK per missing frame; the host's timeout covers the rest */
        S.up.nak_sent = 1;
        out_str("e-[eb-nak-");
        out_u32(S.up.expect);
        out_line("]");
        out_flush();
    }
    S.up.state = UP_SYNC0;
}

static void up_ack(uint16_t seq)
{
    out_str("m-eb-ack-");
    out_u32(seq);
    out_eol();
    out_flush();
}

static void up_complete(void)
{
    uint32_t crc = eb_crc32(S.up.dest, S.up.total);
    if (crc != S.up.crc_announced) {
        out_str("e-[eb-upload-crc-mismatch: received ");
        out_hex(crc, 8u);
        out_str(", announced ");
        out_hex(S.up.crc_announced, 8u);
        out_line("]");
        up_finish();
        return;
    }
    if (S.up.target == TARGET_MODEL) {
        S.model_len = S.up.total;
        S.model_crc = crc;
    } else {
        S.in_size = S.up.total;
        S.in_pos = S.up.total;
    }
    out_str("m-eb-upload-ok-[");
    out_hex(crc, 8u);
    out_line("]");
    up_finish();
}

static void up_frame_done(void)
{
    uint16_t behind;
    if (S.up.len == 0u && S.up.seq == EB_ABORT_SEQ &&
        (S.up.crc_rx == S.up.crc || S.up.crc_rx == eb_crc32(S.up.hdr, 4u))) {
        /* the abort frame, of this session or of session 0 (a host resynchronising) */
        out_line("e-[eb-upload-aborted]");
        up_finish();
        return;
    }
    if (S.up.crc_rx != S.up.crc) {
        up_nak(); /* damaged, or a frame of another session (its CRC has another seed) */
        return;
    }
    if (S.up.seq == S.up.expect) {
        if (!S.up.in_place) { /* longer than what is left of the announced length */
            out_str("e-[eb-upload-overrun: frame ");
            out_u32(S.up.seq);
            out_str(" goes past the announced ");
            out_u32(S.up.total);
            out_line(" bytes]");
            up_finish();
            return;
        }
        S.up.pos += S.up.len;
        S.up.expect++;
        S.up.nak_sent = 0;
        up_ack(S.up.seq);
        S.up.state = UP_SYNC0;
        if (S.up.pos == S.up.total) {
            up_complete();
        }
        return;
    }
    behind = (uint16_t)(S.up.expect - S.up.seq);
    if (behind < 0x8000u) {
        up_ack(S.up.seq); /* a retransmitted frame we already have: ack again */
        S.up.state = UP_SYNC0;
    } else {
        up_nak(); /* ahead of the next expected frame: one was lost */
    }
}

/* Between frames the device also watches for a command line: an intact framed
 * request ends the upload (the host that started it is gone) and then runs. */
static void hunt_line(uint8_t c)
{
    uint16_t seq;
    size_t cut;
    if (c == (uint8_t)'%') {
        if (S.line_len > 0u && frame_token(g_line, S.line_len, &seq, &cut) == 1) {
            out_line("e-[eb-upload-aborted: a new command arrived]");
            up_finish_keep_line();
            end_line();
            return;
        }
        S.line_len = 0u;
    } else if (c >= 0x20u && c < 0x7Fu && S.line_len < EB_CMD_MAX_BYTES) {
        g_line[S.line_len++] = (char)c;
    } else {
        S.line_len = 0u;
    }
}

static void feed_upload(uint8_t c)
{
    switch (S.up.state) {
    case UP_SYNC0:
        if (c == 0xEBu) {
            S.up.state = UP_SYNC1;
            S.line_len = 0u;
        } else {
            hunt_line(c);
        }
        break;
    case UP_SYNC1:
        if (c == 0x5Au) {
            S.up.state = UP_HEADER;
            S.up.hdr_n = 0u;
        } else if (c != 0xEBu) {
            S.up.state = UP_SYNC0;
        }
        break;
    case UP_HEADER:
        S.up.hdr[S.up.hdr_n++] = c;
        if (S.up.hdr_n == 4u) {
            S.up.seq = (uint16_t)(S.up.hdr[0] | (S.up.hdr[1] << 8));
            S.up.len = (uint16_t)(S.up.hdr[2] | (S.up.hdr[3] << 8));
            S.up.crc = eb_crc32_update(S.up.sid, S.up.hdr, 4u); /* seeded with the session id */
            S.up.got = 0u;
            S.up.crc_rx = 0u;
            S.up.crc_n = 0u;
            if (S.up.len > EB_FRAME_PAYLOAD_MAX ||
                (S.up.len == 0u && S.up.seq != EB_ABORT_SEQ)) {
                up_nak(); /* a corrupted header: resynchronise on the next EB 5A */
                break;
            }
            S.up.in_place = S.up.seq == S.up.expect && S.up.len <= S.up.total - S.up.pos;
            S.up.state = S.up.len > 0u ? UP_PAYLOAD : UP_CRC;
        }
        break;
    case UP_PAYLOAD:
        /* Written in place; only an acknowledged frame advances pos, so a
         * frame that fails its CRC is simply overwritten by its resend. */
        if (S.up.in_place) {
            S.up.dest[S.up.pos + S.up.got] = c;
        }
        S.up.crc = eb_crc32_update(S.up.crc, &c, 1u);
        if (++S.up.got == S.up.len) {
            S.up.state = UP_CRC;
        }
        break;
    case UP_CRC:
        S.up.crc_rx |= (uint32_t)c << (8u * S.up.crc_n);
        if (++S.up.crc_n == 4u) {
            up_frame_done();
        }
        break;
    default:
        S.up.state = UP_OFF;
        break;
    }
}

/* ------------------------------------------------------------------------ */
/* Entry points.                                                             */

void eb_proto_init(void)
{
    memset(&S, 0, sizeof S);
    strcpy(S.model_id, "none");
    S.last_counter = eb_port_counter();
}

void eb_proto_banner(void)
{
#if EB_CFG_ENERGY_MODE
    out_line("m-timestamp-mode-energy");
#else
    out_line("m-timestamp-mode-performance");
#endif
    timestamp();
    out_line("m-init-done");
    reply_ready();
}

/* An upload idle for EB_UPLOAD_IDLE_MS is over; seen when the next byte comes
 * (a counter that wraps within the idle time can hide one wrap: then the next
 * framed command still ends the upload). */
static int upload_idle(void)
{
    uint32_t now = eb_port_counter();
    uint64_t limit = (uint64_t)eb_port_counter_hz() * EB_UPLOAD_IDLE_MS / 1000u;
    uint32_t idle = ticks_between(S.up.last_rx, now);
    S.up.last_rx = now;
    if (limit > counter_mask() / 2u) {
        limit = counter_mask() / 2u;
    }
    return (uint64_t)idle > limit;
}

void eb_proto_feed(uint8_t byte)
{
    if (S.up.state != UP_OFF && upload_idle()) {
        out_str("e-[eb-upload-timeout: no upload byte for ");
        out_u32(EB_UPLOAD_IDLE_MS);
        out_line(" ms, back in command mode]");
        up_finish();
    }
    if (S.up.state != UP_OFF) {
        feed_upload(byte);
    } else {
        feed_command(byte);
    }
}

void eb_proto_feed_buf(const uint8_t *data, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        eb_proto_feed(data[i]);
    }
}
