/*
 * eb_reply.h - the reply writer of the edgebench firmware core.
 *
 * Owns every byte the core sends: a small buffer flushed to eb_port_write()
 * at the end of a reply and whenever it fills, the number formats (no printf),
 * the sanitised echo of host text, the end of a line (with the " #<seq>.<k>:
 * <crc32>" suffix while a framed request is answered, PROTOCOL.md "Framed
 * requests and replies") and the closing m-ready.
 */
#ifndef EB_REPLY_H
#define EB_REPLY_H

#include <stddef.h>
#include <stdint.h>

/* Reset: empty buffer, framing off. No output. */
void eb_reply_init(void);

/* Send what is buffered now (between inferences, never inside a timed window). */
void eb_out_flush(void);

void eb_out_bytes(const void *data, size_t n);
void eb_out_str(const char *s);
void eb_out_u32(uint32_t v);
void eb_out_u64(uint64_t v);
/* v as exactly `digits` lower-case hex digits (at most 8). */
void eb_out_hex(uint32_t v, unsigned digits);
/* A real number with 3 decimals, rounded like printf("%.3f"). */
void eb_out_fixed3(double x);
/* Printable ASCII of s except ']' (else '?'), at most max bytes, then "...". */
void eb_out_text(const char *s, size_t max);
/* eb_out_text of host text, at most EB_ECHO_MAX (32) bytes. */
void eb_out_echo(const char *s);

/* End the line (CRLF, framed: the suffix first); eb_out_line = text + end. */
void eb_out_eol(void);
void eb_out_line(const char *s);
/* The closing "m-ready" line of every reply, flushed. */
void eb_out_ready(void);

/* Framing of the reply to a framed request with sequence number seq (1..65535):
 * the lines from here on carry " #<seq>.<k>:<crc32>", k counting from 0. */
void eb_reply_frame_begin(uint16_t seq);
void eb_reply_frame_end(void);
/* The seq of the reply being framed, 0 when replies are unframed. */
uint16_t eb_reply_frame_seq(void);

/* Static RAM of the reply writer (for eb-info's ram-bytes). */
size_t eb_reply_ram_bytes(void);

#endif /* EB_REPLY_H */
