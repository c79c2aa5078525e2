/*
 * eb_proto.h - the entry points of the edgebench firmware core's protocol.
 *
 * Speaks the MLPerf Tiny device-under-test dialect plus the edgebench
 * extensions (firmware/PROTOCOL.md). Byte driven: the run loop (eb_main.c)
 * hands every received byte to eb_proto_feed(); replies go out through
 * eb_port_write(). The core owns warm-up and timing; the port only supplies
 * the link and a counter (eb_port.h).
 *
 * Behind these entry points: the command parser (eb_proto.c) and its command
 * table (eb_commands.h: the commands of eb_cmd_*.c, their state in
 * eb_session.h), the reply writer (eb_reply.h), the timing harness
 * (eb_timing.h) and the upload receiver (eb_upload.h).
 */
#ifndef EB_PROTO_H
#define EB_PROTO_H

#include <stddef.h>
#include <stdint.h>

/* Reset all protocol state (buffers empty, no model, command mode). No output. */
void eb_proto_init(void);

/* The start-up lines of the reference firmware: m-timestamp-mode-..., a
 * timestamp, m-init-done, m-ready. */
void eb_proto_banner(void);

/* Process one received byte (a command character or upload frame byte). */
void eb_proto_feed(uint8_t byte);

/* Process n received bytes (same as n calls of eb_proto_feed). */
void eb_proto_feed_buf(const uint8_t *data, size_t n);

/* The run loop (eb_main.c): eb_port_init(), eb_proto_init(), the banner, then
 * eb_proto_feed() for every byte until eb_port_getc() reports a closed link.
 * eb_main.c also defines main() calling it, unless the port defines
 * EB_PORT_OWNS_MAIN (posix: its main() parses options first). */
int eb_main(void);

#endif /* EB_PROTO_H */
