/*
 * eb_reply.c - the reply writer: buffered output, number formats, the framed
 * line suffix and m-ready (eb_reply.h). No heap, no printf: numbers are
 * formatted by hand so every port links the same small code.
 */
#include "eb_reply.h"

#include <string.h>

#include "eb_config.h"
#include "eb_crc32.h"
#include "eb_port.h"

#define EB_ECHO_MAX 32u /* bytes of user text echoed in an error */

static uint8_t g_out[EB_OUT_BYTES];

static struct {
    size_t out_len;            /* bytes in g_out */
    int on;                    /* reply lines get " #<seq>.<k>:<crc32>" */
    int suspended;             /* writing the ":<crc32>" part itself */
    uint16_t seq;              /* the request's sequence number */
    uint32_t k;                /* index of the next line of this reply */
    uint32_t crc;              /* CRC-32 of the current line so far */
} R;

void eb_reply_init(void)
{
    memset(&R, 0, sizeof R);
}

size_t eb_reply_ram_bytes(void)
{
    return sizeof g_out + sizeof R;
}

void eb_reply_frame_begin(uint16_t seq)
{
    R.on = 1;
    R.seq = seq;
    R.k = 0u;
    R.crc = 0u;
}

void eb_reply_frame_end(void)
{
    R.on = 0;
}

uint16_t eb_reply_frame_seq(void)
{
    return R.on ? R.seq : 0u;
}

void eb_out_flush(void)
{
    if (R.out_len > 0u) {
        eb_port_write(g_out, R.out_len);
        R.out_len = 0u;
    }
}

void eb_out_bytes(const void *data, size_t n)
{
    const uint8_t *p = (const uint8_t *)data;
    if (R.on && !R.suspended) {
        R.crc = eb_crc32_update(R.crc, p, n);
    }
    while (n > 0u) {
        size_t room = sizeof g_out - R.out_len;
        size_t k = n < room ? n : room;
        memcpy(g_out + R.out_len, p, k);
        R.out_len += k;
        p += k;
        n -= k;
        if (R.out_len == sizeof g_out) {
            eb_out_flush();
        }
    }
}

void eb_out_str(const char *s)
{
    eb_out_bytes(s, strlen(s));
}

/* End a reply line; in a framed reply append " #<seq>.<k>:<crc32 hex>", the
 * CRC-32 covering the line text up to and including <k>. */
void eb_out_eol(void)
{
    if (R.on) {
        uint32_t crc;
        eb_out_bytes(" #", 2u);
        eb_out_u32(R.seq);
        eb_out_bytes(".", 1u);
        eb_out_u32(R.k);
        crc = R.crc;
        R.suspended = 1;
        eb_out_bytes(":", 1u);
        eb_out_hex(crc, 8u);
        R.k++;
    }
    eb_out_bytes("\r\n", 2u);
    R.suspended = 0;
    R.crc = 0u;
}

void eb_out_line(const char *s)
{
    eb_out_str(s);
    eb_out_eol();
}

void eb_out_u64(uint64_t v)
{
    char t[21];
    size_t i = sizeof t;
    do {
        t[--i] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v != 0u);
    eb_out_bytes(t + i, sizeof t - i);
}

void eb_out_u32(uint32_t v)
{
    eb_out_u64(v);
}

void eb_out_hex(uint32_t v, unsigned digits)
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
    eb_out_bytes(t, digits);
}

/* Echo text safely: printable ASCII only, no ']' (it would end the e-[...]
 * field), at most max bytes. */
void eb_out_text(const char *s, size_t max)
{
    size_t i;
    for (i = 0; s[i] != '\0'; i++) {
        char c = s[i];
        if (i == max) {
            eb_out_str("...");
            return;
        }
        if ((unsigned char)c < 0x20u || (unsigned char)c > 0x7Eu || c == ']') {
            c = '?';
        }
        eb_out_bytes(&c, 1u);
    }
}

void eb_out_echo(const char *s)
{
    eb_out_text(s, EB_ECHO_MAX);
}

/* Rounded to nearest with ties to even, like printf("%.3f") (the reference
 * prints scores with 3 decimals). */
void eb_out_fixed3(double x)
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
        eb_out_bytes("-", 1u);
    }
    eb_out_u64(milli / 1000u);
    eb_out_bytes(".", 1u);
    eb_out_u64((milli / 100u) % 10u);
    eb_out_u64((milli / 10u) % 10u);
    eb_out_u64(milli % 10u);
}

void eb_out_ready(void)
{
    eb_out_line("m-ready");
    eb_out_flush();
}
