/*
 * eb_proto_int.h - internal to the command parser (eb_proto.c, the line, the
 * frame word and the dispatch) and its commands (eb_commands.c). Not for ports.
 */
#ifndef EB_PROTO_INT_H
#define EB_PROTO_INT_H

#include <stddef.h>
#include <stdint.h>

/* Strict unsigned decimal: 0 ok, -1 not a number, -2 larger than 2^32-1. */
int eb_parse_u32(const char *s, uint32_t *value);
/* 1 to 8 hex digits: 0 ok, -1 not. */
int eb_parse_hex32(const char *s, uint32_t *value);
/* The value of one hex digit, -1 if c is none. */
int eb_hex_digit(char c);

/* Static RAM of the parser's line buffer and state (for eb-info's ram-bytes). */
size_t eb_proto_ram_bytes(void);

/* eb_commands.c: reset the model and input state; run the command argv[0]
 * (0), or return -1 without output when there is no such command; the static
 * RAM of the commands' buffers (model blob, arena, input). */
void eb_commands_init(void);
int eb_commands_run(int argc, char **argv);
size_t eb_commands_ram_bytes(void);

#endif /* EB_PROTO_INT_H */
