/*
 * eb_proto.c - the command parser of the edgebench firmware core: bytes into
 * command lines ending in '%', the frame word of protocol 2, tokens, and the
 * dispatch to the command table (eb_commands.c); the entry points of eb_proto.h.
 *
 * The core's protocol side is four modules: this parser (with the command table
 * eb_commands.c, the commands eb_cmd_*.c, their shared state eb_session.c and
 * the number parsing of eb_parse.c), the reply writer
 * (eb_reply.c), the timing harness (eb_timing.c) and the upload receiver
 * (eb_upload.c). Written from the MLPerf Tiny dialect's observable behaviour
 * (reply strings checked against the reference firmware in
 * tests/test_firmware_protocol.py); unlike the reference, every length is
 * checked before a buffer is written.
 *
 * Protocol 2: a request ending in the word "#<seq>:<crc32>" is framed: it
 * runs only if its CRC-32 holds, and every line of its reply is framed
 * (eb_reply.h). Unframed commands are answered as before. While an upload
 * runs, bytes go to the upload receiver; between its frames an intact framed
 * request ends the upload and runs (hunt_line).
 *
 * No heap, no printf. All state lives in statics; eb_proto_init() resets
 * every module (the fuzz target calls it before every input).
 */
#include "eb_proto.h"

#include <string.h>

#include "eb_commands.h"
#include "eb_config.h"
#include "eb_crc32.h"
#include "eb_parse.h"
#include "eb_reply.h"
#include "eb_timing.h"
#include "eb_upload.h"

#define EB_ARGV_MAX 8 /* tokens per command line */

static char g_line[EB_CMD_MAX_BYTES + 1u];

static struct {
    size_t line_len;           /* bytes of the command line being received */
    int line_overflow;         /* it had more than EB_CMD_MAX_BYTES */
} P;

/* Static RAM of the line buffer and the parser's state (eb-info adds it). */
static size_t eb_proto_ram_bytes(void)
{
    return sizeof g_line + sizeof P;
}

/* ------------------------------------------------------------------------ */
/* Command lines.                                                            */

static void drop_line(void)
{
    P.line_len = 0u;
    P.line_overflow = 0;
}

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
        if (eb_parse_hex32(hex, &crc) != 0) {
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
    int argc;
    uint16_t seq = 0u;
    size_t cut = 0u;
    int framed = frame_token(g_line, P.line_len, &seq, &cut);
    if (framed == 1 || framed == -1) {
        eb_reply_frame_begin(seq);
    }
    if (framed == -1 || framed == -2) {
        /* not executed: the host resends it (a request damaged on the way in) */
        eb_out_line(framed == -1 ? "e-[eb-request-damaged: CRC mismatch, not executed]"
                                 : "e-[eb-request-damaged: bad frame word, not executed]");
        eb_out_ready();
        eb_reply_frame_end();
        return;
    }
    if (framed == 1) {
        P.line_len = cut;
    }
    argc = tokenize(g_line, P.line_len, argv);
    if (argc < 0) {
        eb_out_line("e-[Too many arguments]");
    } else if (argc > 0 && eb_commands_run(argc, argv) != 0) {
        eb_out_str("e-[Unknown command: ");
        eb_out_echo(argv[0]);
        eb_out_line("]");
    }
    /* argc == 0: an empty command only answers m-ready (a cheap resync). */
    eb_out_ready();
    if (!eb_upload_active()) {
        eb_reply_frame_end(); /* an upload keeps framing its lines until it ends */
    }
}

static void end_line(void)
{
    if (P.line_overflow) {
        eb_out_str("e-[Command too long: more than ");
        eb_out_u32(EB_CMD_MAX_BYTES);
        eb_out_line(" bytes]");
        eb_out_ready();
    } else {
        run_line();
    }
    drop_line();
}

static void feed_command(uint8_t c)
{
    switch (eb_upload_stray(c)) {
    case EB_UPLOAD_COMMAND_BYTE:
        break;
    case EB_UPLOAD_LINE_DROP:
        drop_line();
        return;
    default:
        return;
    }
    if (c == (uint8_t)'%') {
        end_line();
    } else if (P.line_len < EB_CMD_MAX_BYTES) {
        g_line[P.line_len++] = (char)c;
    } else {
        P.line_overflow = 1;
    }
}

/* Between upload frames the device also watches for a command line: an intact
 * framed request ends the upload (the host that started it is gone) and runs. */
static void hunt_line(uint8_t c)
{
    uint16_t seq;
    size_t cut;
    if (c == (uint8_t)'%') {
        if (P.line_len > 0u && frame_token(g_line, P.line_len, &seq, &cut) == 1) {
            eb_out_line("e-[eb-upload-aborted: a new command arrived]");
            eb_upload_end(); /* the line collected between frames survives */
            end_line();
            return;
        }
        P.line_len = 0u;
    } else if (c >= 0x20u && c < 0x7Fu && P.line_len < EB_CMD_MAX_BYTES) {
        g_line[P.line_len++] = (char)c;
    } else {
        P.line_len = 0u;
    }
}

static void feed_upload(uint8_t c)
{
    switch (eb_upload_feed(c)) {
    case EB_UPLOAD_COMMAND_BYTE:
        hunt_line(c);
        break;
    case EB_UPLOAD_LINE_DROP:
        P.line_len = 0u;
        break;
    case EB_UPLOAD_ENDED:
        drop_line();
        break;
    default:
        break;
    }
}

/* ------------------------------------------------------------------------ */
/* Entry points.                                                             */

void eb_proto_init(void)
{
    memset(&P, 0, sizeof P);
    eb_reply_init();
    eb_upload_init();
    eb_commands_init(eb_proto_ram_bytes());
    eb_timing_init();
}

void eb_proto_banner(void)
{
#if EB_CFG_ENERGY_MODE
    eb_out_line("m-timestamp-mode-energy");
#else
    eb_out_line("m-timestamp-mode-performance");
#endif
    eb_timing_timestamp();
    eb_out_line("m-init-done");
    eb_out_ready();
}

void eb_proto_feed(uint8_t byte)
{
    if (eb_upload_active() && eb_upload_check_idle() == EB_UPLOAD_ENDED) {
        drop_line();
    }
    if (eb_upload_active()) {
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
